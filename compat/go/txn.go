// The transaction scenarios with franz-go: the same steps and checks as compat/lib/txn.js
// (txn-consume-transform-produce, txn-zombie-fenced; read the description there). The loop is a
// kgo.GroupTransactSession (read_committed, stable offset fetches): Begin, ProduceSync (so the records are in
// the log before an abort), End(TryCommit / TryAbort), which sends the consumed offsets with a commit and, after
// an abort, rewinds the consumer to the offsets last committed. End may abort a transaction asked to commit
// (after a rebalance): the loop records what End reports.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

const (
	txnInputRecords = 120
	txnPartitions   = 6
	recordsPerTxn   = 10
	abortEvery      = 3 // transaction t is aborted when t % abortEvery == 0
	endKey          = "end"
	txnLoopTimeout  = 30 * time.Second
)

var outputPattern = regexp.MustCompile(`^out-(\d+):txn-(\d+)$`)

func outputValue(i, t int) []byte { return []byte(fmt.Sprintf("out-%d:txn-%d", i, t)) }

func index(key []byte) int {
	i, _ := strconv.Atoi(string(key[len("key-"):]))
	return i
}

// transactions is what the transactional loop did: the input indexes each committed or aborted transaction wrote.
type transactions struct {
	committed, aborted map[int][]int
}

func (x *transactions) complete() bool {
	done := map[int]bool{}
	for _, ids := range x.committed {
		for _, i := range ids {
			done[i] = true
		}
	}
	return len(done) == txnInputRecords
}

func count(m map[int][]int) int {
	n := 0
	for _, ids := range m {
		n += len(ids)
	}
	return n
}

func (x *transactions) show() string {
	return fmt.Sprintf("%d transactions committed (%d records), %d aborted (%d records)", len(x.committed), count(x.committed), len(x.aborted), count(x.aborted))
}

// transform runs the consume-transform-produce loop until every input record was written by a committed transaction.
func transform(ctx context.Context, sess *kgo.GroupTransactSession, output string) (*transactions, error) {
	txns := &transactions{committed: map[int][]int{}, aborted: map[int][]int{}}
	deadline := time.Now().Add(txnLoopTimeout)
	for t := 1; !txns.complete(); {
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("the transactional loop did not write every input record in %v: %s", txnLoopTimeout, txns.show())
		}
		pollCtx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		fetches := sess.PollRecords(pollCtx, recordsPerTxn)
		cancel()
		var ferr error
		fetches.EachError(func(topic string, p int32, err error) {
			if !errors.Is(err, context.DeadlineExceeded) {
				ferr = fmt.Errorf("fetch %s[%d]: %w", topic, p, err)
			}
		})
		if ferr != nil {
			return nil, ferr
		}
		records := fetches.Records()
		if len(records) == 0 {
			continue
		}
		if err := sess.Begin(); err != nil {
			return nil, fmt.Errorf("Begin: %w", err)
		}
		var ids []int
		var out []*kgo.Record
		for _, r := range records {
			ids = append(ids, index(r.Key))
			out = append(out, &kgo.Record{Topic: output, Key: r.Key, Value: outputValue(index(r.Key), t)})
		}
		if err := sess.ProduceSync(ctx, out...).FirstErr(); err != nil {
			return nil, fmt.Errorf("produce in transaction %d: %w", t, err)
		}
		committed, err := sess.End(ctx, kgo.TransactionEndTry(t%abortEvery != 0))
		if err != nil {
			return nil, fmt.Errorf("End of transaction %d: %w", t, err)
		}
		if committed {
			txns.committed[t] = ids
			time.Sleep(txnPause)
		} else {
			txns.aborted[t] = ids
		}
		t++
	}
	return txns, nil
}

// writeEnd writes one "end" record on each partition, outside any transaction: a consumer that reads it got past
// every transaction.
func writeEnd(ctx context.Context, bootstrap, topic string, partitions int32) error {
	var ends []*kgo.Record
	for p := int32(0); p < partitions; p++ {
		ends = append(ends, &kgo.Record{Topic: topic, Partition: p, Key: []byte(endKey), Value: []byte(endKey)})
	}
	return produce(ctx, bootstrap, ends, kgo.RecordPartitioner(kgo.ManualPartitioner()))
}

// readIsolated reads the whole topic read_committed or read_uncommitted, and drops the "end" records after
// checking that every partition had one.
func readIsolated(ctx context.Context, bootstrap string, adm *kadm.Client, topic string, partitions int32, level kgo.IsolationLevel, what string) ([]*kgo.Record, error) {
	records, err := consumeAll(ctx, bootstrap, adm, topic, partitions, kgo.FetchIsolationLevel(level))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	ends := map[int32]bool{}
	var rest []*kgo.Record
	for _, r := range records {
		if string(r.Key) == endKey {
			ends[r.Partition] = true
		} else {
			rest = append(rest, r)
		}
	}
	for p := int32(0); p < partitions; p++ {
		if !ends[p] {
			return nil, fmt.Errorf(`%s: no "end" record read on output partition %d: the consumer did not get past the transactions there`, what, p)
		}
	}
	return rest, nil
}

// parseOutput: i and t of an output record key-<i> / out-<i>:txn-<t>.
func parseOutput(r *kgo.Record, what string) (int, int, error) {
	m := outputPattern.FindStringSubmatch(string(r.Value))
	if m == nil || string(r.Key) != "key-"+m[1] {
		return 0, 0, fmt.Errorf("%s: unexpected record %q / %q at %d/%d", what, r.Key, r.Value, r.Partition, r.Offset)
	}
	i, _ := strconv.Atoi(m[1])
	t, _ := strconv.Atoi(m[2])
	return i, t, nil
}

// checkEpochs: which transaction protocol the producer used, from the producer epoch of a new transactional id
// after its transactions (DescribeTransactions): transaction version 2 (KIP-890) bumps it at every transaction's
// end, version 1 keeps the epoch of its InitProducerId, 0. The harness says which version the broker finalizes
// (FJORD_COMPAT_TXN_VERSION), and kgo uses version 2 when it is finalized: the epoch must show it. Without the
// variable, only reported.
func checkEpochs(ctx context.Context, adm *kadm.Client, txnID string, transactions int) (string, error) {
	// After a coordinator was killed (the cluster row), kgo may still dial the dead one: a request error is
	// retried, and kgo looks the coordinator up again.
	var described kadm.DescribedTransactions
	var err error
	for attempt := 0; attempt < 20; attempt++ {
		if described, err = adm.DescribeTransactions(ctx, txnID); err == nil {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	if err != nil {
		return "", fmt.Errorf("DescribeTransactions: %w", err)
	}
	d, ok := described[txnID]
	if !ok || d.Err != nil {
		return "", fmt.Errorf("DescribeTransactions %s: %v", txnID, d.Err)
	}
	seen := fmt.Sprintf("producer epoch %d after %d transactions", d.ProducerEpoch, transactions)
	finalized := os.Getenv("FJORD_COMPAT_TXN_VERSION")
	if finalized == "" {
		return seen, nil
	}
	level, err := strconv.Atoi(finalized)
	if err != nil {
		return "", fmt.Errorf("FJORD_COMPAT_TXN_VERSION=%q: %w", finalized, err)
	}
	v2 := level >= 2
	if v2 && int(d.ProducerEpoch) != transactions || !v2 && d.ProducerEpoch != 0 {
		return "", fmt.Errorf("%s: expected %s", seen, map[bool]string{true: "one epoch bump per transaction (transaction version 2 finalized)", false: "epoch 0, no bump (transaction version " + finalized + ")"}[v2])
	}
	return fmt.Sprintf("%s (transaction version %d)", seen, map[bool]int{true: 2, false: 1}[v2]), nil
}

func txnConsumeTransformProduce(ctx context.Context, bootstrap string, adm *kadm.Client) error {
	input, err := createTopic(ctx, adm, "txn-in", txnPartitions, nil)
	if err != nil {
		return err
	}
	output, err := createTopic(ctx, adm, "txn-out", txnPartitions, nil)
	if err != nil {
		return err
	}
	if err := produce(ctx, bootstrap, plain(input, txnInputRecords)); err != nil {
		return err
	}
	group := input + "-group"
	sess, err := kgo.NewGroupTransactSession(seeds(bootstrap), kgo.MetadataMinAge(100*time.Millisecond),
		kgo.TransactionalID(input+"-txn"), kgo.ConsumerGroup(group), kgo.ConsumeTopics(input),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.RequireStableFetchOffsets(), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.ProducerLinger(5*time.Millisecond))
	if err != nil {
		return err
	}
	txns, err := transform(ctx, sess, output)
	sess.Close()
	if err != nil {
		return err
	}
	if len(txns.aborted) == 0 {
		return fmt.Errorf("no transaction was aborted: %s", txns.show())
	}
	epochs, err := checkEpochs(ctx, adm, input+"-txn", len(txns.committed)+len(txns.aborted))
	if err != nil {
		return err
	}
	if err := writeEnd(ctx, bootstrap, output, txnPartitions); err != nil {
		return err
	}

	committedRead, err := readIsolated(ctx, bootstrap, adm, output, txnPartitions, kgo.ReadCommitted(), "read_committed")
	if err != nil {
		return err
	}
	seen := map[int]int{} // i -> t
	for _, r := range committedRead {
		i, t, err := parseOutput(r, "read_committed")
		if err != nil {
			return err
		}
		if _, aborted := txns.aborted[t]; aborted {
			return fmt.Errorf("read_committed returned out-%d of aborted transaction %d (at %d/%d)", i, t, r.Partition, r.Offset)
		}
		if !slices.Contains(txns.committed[t], i) {
			return fmt.Errorf("read_committed returned out-%d of transaction %d, which the client did not commit with it", i, t)
		}
		if before, twice := seen[i]; twice {
			return fmt.Errorf("read_committed returned input record %d twice: by transactions %d and %d", i, before, t)
		}
		seen[i] = t
	}
	var missing []int
	for i := 0; i < txnInputRecords; i++ {
		if _, ok := seen[i]; !ok {
			missing = append(missing, i)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("read_committed: %d input records not in the output: %v", len(missing), missing[:min(10, len(missing))])
	}

	uncommittedRead, err := readIsolated(ctx, bootstrap, adm, output, txnPartitions, kgo.ReadUncommitted(), "read_uncommitted")
	if err != nil {
		return err
	}
	written := map[[2]int]int{} // {i, t} -> times read
	for _, r := range uncommittedRead {
		i, t, err := parseOutput(r, "read_uncommitted")
		if err != nil {
			return err
		}
		written[[2]int{i, t}]++
	}
	for kind, m := range map[string]map[int][]int{"committed": txns.committed, "aborted": txns.aborted} {
		for t, ids := range m {
			for _, i := range ids {
				if n := written[[2]int{i, t}]; n != 1 {
					return fmt.Errorf("read_uncommitted: out-%d of %s transaction %d read %d times, expected once", i, kind, t, n)
				}
			}
		}
	}
	expected := count(txns.committed) + count(txns.aborted)
	if len(uncommittedRead) != expected {
		return fmt.Errorf("read_uncommitted returned %d output records, the transactions wrote %d", len(uncommittedRead), expected)
	}

	if err := checkCommittedAtEnd(ctx, adm, group, input); err != nil {
		return err
	}
	fmt.Printf("%s; read_committed: each of %d records once, none aborted; read_uncommitted: all %d; committed offsets = end offsets; %s\n", txns.show(), txnInputRecords, expected, epochs)
	return nil
}

func txnProducer(bootstrap, transactionalID string) (*kgo.Client, error) {
	cl, err := kgo.NewClient(seeds(bootstrap), kgo.MetadataMinAge(100*time.Millisecond), kgo.TransactionalID(transactionalID),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		return nil, err
	}
	if err := cl.BeginTransaction(); err != nil { // kgo initializes the producer id (InitProducerId) on the first produce
		cl.Close()
		return nil, err
	}
	return cl, nil
}

func isFencing(err error) bool {
	return errors.Is(err, kerr.ProducerFenced) || errors.Is(err, kerr.InvalidProducerEpoch)
}

func values(records []*kgo.Record) []string {
	var out []string
	for _, r := range records {
		out = append(out, string(r.Value))
	}
	return out
}

func txnZombieFenced(ctx context.Context, bootstrap string, adm *kadm.Client) error {
	topic, err := createTopic(ctx, adm, "zombie", 1, nil)
	if err != nil {
		return err
	}
	first, err := txnProducer(bootstrap, topic+"-txn")
	if err != nil {
		return err
	}
	defer first.Close()
	if err := first.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte("a-0")}).FirstErr(); err != nil {
		return fmt.Errorf("A's a-0: %w", err)
	}
	second, err := txnProducer(bootstrap, topic+"-txn")
	if err != nil {
		return err
	}
	defer second.Close()
	if err := second.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte("b-0")}).FirstErr(); err != nil { // InitProducerId: fences A
		return fmt.Errorf("B's b-0: %w", err)
	}
	if err := second.EndTransaction(ctx, kgo.TryCommit); err != nil {
		return fmt.Errorf("B's commit: %w", err)
	}
	fenceErr := first.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte("a-1")}).FirstErr()
	commitErr := first.EndTransaction(ctx, kgo.TryCommit)
	if fenceErr == nil {
		fenceErr = commitErr
	}
	if err := writeEnd(ctx, bootstrap, topic, 1); err != nil {
		return err
	}
	switch {
	case fenceErr == nil:
		return fmt.Errorf("the fenced producer A wrote and committed after B initialized with the same transactional.id: no error")
	case !isFencing(fenceErr):
		return fmt.Errorf("producer A failed with %v, not with a fencing error (PRODUCER_FENCED / INVALID_PRODUCER_EPOCH)", fenceErr)
	case commitErr == nil:
		return fmt.Errorf("producer A's commit succeeded after it was fenced (the send failed with %v)", fenceErr)
	}
	committedRead, err := readIsolated(ctx, bootstrap, adm, topic, 1, kgo.ReadCommitted(), "read_committed")
	if err != nil {
		return err
	}
	if got := values(committedRead); !slices.Equal(got, []string{"b-0"}) {
		return fmt.Errorf("read_committed returned %q, expected [b-0]: nothing of the fenced producer", got)
	}
	uncommittedRead, err := readIsolated(ctx, bootstrap, adm, topic, 1, kgo.ReadUncommitted(), "read_uncommitted")
	if err != nil {
		return err
	}
	if got := values(uncommittedRead); !slices.Equal(got, []string{"a-0", "b-0"}) {
		return fmt.Errorf("read_uncommitted returned %q, expected [a-0 b-0] (A's first record, aborted by the fencing, then B's)", got)
	}
	fmt.Printf("A fenced: %v; read_committed [b-0], read_uncommitted [a-0, b-0]\n", fenceErr)
	return nil
}
