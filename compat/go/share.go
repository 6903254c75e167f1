// share-queue with kgo's share consumer (kgo.ShareGroup, KIP-932): 10,000 records on a 1-partition topic, three
// consumers in one share group acknowledging each record explicitly (Record.Ack, FlushAcks): two goroutines and a
// victim process (`fjord-compat-go BOOTSTRAP share-member TOPIC GROUP HOLD_AFTER`) that accepts HOLD_AFTER records,
// then holds its next batch without acknowledging it and is SIGKILLed. Pass: every record accepted exactly once, the
// victim's held records redelivered to the others with delivery count 2, no other redelivery unless a lock expired
// or the victim's client had acquired the record (kgo fetches ahead of PollRecords) when it was killed.
// The same checks as java/.../Share.java.
package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

const (
	shareQueueRecords = 10000
	victimHoldsAfter  = 1000
	shareLockMs       = 15000 // share.record.lock.duration.ms: group.share.min.record.lock.duration.ms, Kafka's minimum
)

// setGroupConfigs sets a share group's configs (IncrementalAlterConfigs on a GROUP resource; kadm has no helper for it).
func setGroupConfigs(ctx context.Context, cl *kgo.Client, group string, configs map[string]string) error {
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	res := kmsg.NewIncrementalAlterConfigsRequestResource()
	res.ResourceType = kmsg.ConfigResourceTypeGroupConfig
	res.ResourceName = group
	for k, v := range configs {
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		c.Name, c.Value = k, kmsg.StringPtr(v)
		c.Op = kmsg.IncrementalAlterConfigOpSet
		res.Configs = append(res.Configs, c)
	}
	req.Resources = append(req.Resources, res)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return fmt.Errorf("IncrementalAlterConfigs GROUP %s: %w", group, err)
	}
	for _, r := range resp.Resources {
		if r.ErrorCode != 0 {
			msg := ""
			if r.ErrorMessage != nil {
				msg = *r.ErrorMessage
			}
			return fmt.Errorf("IncrementalAlterConfigs GROUP %s: error code %d: %s", group, r.ErrorCode, msg)
		}
	}
	return nil
}

func shareClient(bootstrap, group, clientID string, ackErrors func(kgo.ShareAckResults)) (*kgo.Client, error) {
	return kgo.NewClient(seeds(bootstrap), kgo.MetadataMinAge(100*time.Millisecond), kgo.ClientID(clientID), kgo.ShareGroup(group),
		kgo.ShareMaxRecords(100), kgo.ShareAckCallback(func(_ *kgo.Client, rs kgo.ShareAckResults) { ackErrors(rs) }))
}

type shareLedger struct {
	mu               sync.Mutex
	acceptedBy       map[int64]string
	firstDelivered   map[int64]time.Time
	doubleAccepted   []int64
	bad              []string
	lockExpiry       int
	victimPrefetched int
	held             map[int64]bool
	killedAt         time.Time
	redeliveredHeld  map[int64]int32
	firstHeldRedeliv time.Time
	ackErrors        []string
}

func (l *shareLedger) delivered(offset int64, count int32, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	first, seen := l.firstDelivered[offset]
	if !seen {
		l.firstDelivered[offset] = now
		if count == 1 {
			return
		}
	}
	switch {
	case l.held[offset] && !l.killedAt.IsZero():
		l.redeliveredHeld[offset] = count
		if l.firstHeldRedeliv.IsZero() {
			l.firstHeldRedeliv = now
		}
	case !seen && count == 2 && !l.killedAt.IsZero():
		l.victimPrefetched++ // acquired by the victim's client but not yet polled by it when it was killed
	case seen && count > 1 && now.Sub(first) >= shareLockMs*time.Millisecond:
		l.lockExpiry++
	default:
		l.bad = append(l.bad, fmt.Sprintf("offset %d delivered (seen before: %v) with delivery count %d", offset, seen, count))
	}
}

func (l *shareLedger) accepted(offset int64, by string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.acceptedBy[offset]; ok {
		l.doubleAccepted = append(l.doubleAccepted, offset)
		return
	}
	l.acceptedBy[offset] = by
}

func joinOffsets(offsets []int64) string {
	s := make([]string, len(offsets))
	for i, o := range offsets {
		s[i] = strconv.FormatInt(o, 10)
	}
	return strings.Join(s, ",")
}

func parseOffsets(s string) []int64 {
	var out []int64
	for _, f := range strings.Split(s, ",") {
		o, _ := strconv.ParseInt(f, 10, 64)
		out = append(out, o)
	}
	return out
}

func shareQueue(ctx context.Context, bootstrap string, adm *kadm.Client) error {
	topic, err := createTopic(ctx, adm, "share-queue", 1, nil)
	if err != nil {
		return err
	}
	group := topic + "-group"
	admin, err := kgo.NewClient(seeds(bootstrap))
	if err != nil {
		return err
	}
	defer admin.Close()
	if err := setGroupConfigs(ctx, admin, group, map[string]string{"share.auto.offset.reset": "earliest", "share.record.lock.duration.ms": strconv.Itoa(shareLockMs)}); err != nil {
		return err
	}
	records := make([]*kgo.Record, shareQueueRecords)
	for i := range records {
		records[i] = &kgo.Record{Topic: topic, Key: key(i), Value: value(i)}
	}
	if err := produce(ctx, bootstrap, records); err != nil {
		return err
	}
	l := &shareLedger{acceptedBy: map[int64]string{}, firstDelivered: map[int64]time.Time{}, held: map[int64]bool{}, redeliveredHeld: map[int64]int32{}}

	victim := exec.Command(os.Args[0], bootstrap, "share-member", topic, group, strconv.Itoa(victimHoldsAfter))
	victim.Stderr = os.Stderr
	out, err := victim.StdoutPipe()
	if err != nil {
		return err
	}
	if err := victim.Start(); err != nil {
		return err
	}
	defer victim.Process.Kill()
	started, killed := make(chan struct{}), make(chan struct{})
	var startOnce sync.Once
	victimAccepted := 0
	go func() {
		in := bufio.NewScanner(out)
		in.Buffer(make([]byte, 1<<20), 1<<20)
		for in.Scan() {
			word, rest, _ := strings.Cut(in.Text(), " ")
			switch word {
			case "accepted":
				now := time.Now()
				for _, o := range parseOffsets(rest) {
					l.mu.Lock()
					l.firstDelivered[o] = now
					l.mu.Unlock()
					l.accepted(o, "victim")
					victimAccepted++
				}
				startOnce.Do(func() { close(started) })
			case "held":
				l.mu.Lock()
				for _, o := range parseOffsets(rest) {
					l.held[o] = true
					l.firstDelivered[o] = time.Now()
				}
				l.killedAt = time.Now()
				l.mu.Unlock()
				victim.Process.Kill() // SIGKILL: no acknowledgement, no leave; its connections just close
				victim.Wait()
				close(killed)
				startOnce.Do(func() { close(started) })
				return
			default:
				fmt.Println("victim:", in.Text())
			}
		}
	}()
	select {
	case <-started:
	case <-time.After(40 * time.Second):
		return fmt.Errorf("the victim process accepted nothing in 40 s")
	}

	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for i := 0; i < 2; i++ {
		name := fmt.Sprintf("survivor-%d", i)
		wg.Add(1)
		go func() {
			defer wg.Done()
			cl, err := shareClient(bootstrap, group, "compat-go-"+name, func(rs kgo.ShareAckResults) {
				if err := rs.Error(); err != nil {
					l.mu.Lock()
					l.ackErrors = append(l.ackErrors, fmt.Sprintf("%s: %v", name, err))
					l.mu.Unlock()
				}
			})
			if err != nil {
				errs <- err
				return
			}
			defer cl.Close()
			cl.AddConsumeTopics(topic)
			for runCtx.Err() == nil {
				pollCtx, cancel := context.WithTimeout(runCtx, 200*time.Millisecond)
				fetches := cl.PollRecords(pollCtx, 100)
				cancel()
				var polled []int64
				fetches.EachRecord(func(r *kgo.Record) {
					l.delivered(r.Offset, r.DeliveryCount(), time.Now())
					r.Ack(kgo.AckAccept)
					polled = append(polled, r.Offset)
				})
				if len(polled) == 0 {
					continue
				}
				if err := cl.FlushAcks(ctx); err != nil {
					errs <- fmt.Errorf("%s: FlushAcks: %w", name, err)
					return
				}
				for _, o := range polled {
					l.accepted(o, name)
				}
				time.Sleep(5 * time.Millisecond) // some processing time, so that the other consumers get batches too
			}
		}()
	}
	deadline := time.Now().Add(40 * time.Second)
	for time.Now().Before(deadline) && len(errs) == 0 {
		l.mu.Lock()
		n := len(l.acceptedBy)
		l.mu.Unlock()
		select {
		case <-killed:
			if n >= shareQueueRecords {
				deadline = time.Now()
			}
		default:
		}
		time.Sleep(100 * time.Millisecond)
	}
	stop()
	wg.Wait()
	close(errs)
	for err := range errs {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	select {
	case <-killed:
	default:
		return fmt.Errorf("the victim never held a batch (it accepted %d)", victimAccepted)
	}
	var missing []int64
	for o := int64(0); o < shareQueueRecords; o++ {
		if _, ok := l.acceptedBy[o]; !ok {
			missing = append(missing, o)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%d records never accepted, e.g. %v", len(missing), missing[:min(10, len(missing))])
	}
	if len(l.doubleAccepted) > 0 {
		return fmt.Errorf("records accepted twice: %v", l.doubleAccepted)
	}
	if len(l.bad) > 0 {
		return fmt.Errorf("redeliveries with no lock expiry nor kill behind them: %v", l.bad[:min(10, len(l.bad))])
	}
	if len(l.ackErrors) > 0 {
		return fmt.Errorf("acknowledgements failed: %v", l.ackErrors)
	}
	if len(l.redeliveredHeld) != len(l.held) {
		return fmt.Errorf("held by the victim %d records, redelivered to a survivor %d", len(l.held), len(l.redeliveredHeld))
	}
	heldOffsets := make([]int64, 0, len(l.held))
	for o := range l.held {
		heldOffsets = append(heldOffsets, o)
		if c := l.redeliveredHeld[o]; c != 2 {
			return fmt.Errorf("held offset %d came back with delivery count %d, expected 2", o, c)
		}
	}
	sort.Slice(heldOffsets, func(i, j int) bool { return heldOffsets[i] < heldOffsets[j] })
	by := map[string]int{}
	for _, n := range l.acceptedBy {
		by[n]++
	}
	fmt.Printf("%d records accepted exactly once: %v; the victim SIGKILLed holding %d records (offsets %d..%d), redelivered with delivery count 2, the first %d ms after the kill; "+
		"%d more acquired by the victim's client but not yet polled, delivered with count 2 after the kill; other redeliveries (lock expiry): %d\n",
		shareQueueRecords, by, len(heldOffsets), heldOffsets[0], heldOffsets[len(heldOffsets)-1], l.firstHeldRedeliv.Sub(l.killedAt).Milliseconds(), l.victimPrefetched, l.lockExpiry)
	return nil
}

// shareMember is the victim: it accepts what it polls (printing "accepted o,o,..." once flushed) until it has
// accepted holdAfter records, then prints "held o,o,..." for its next batch and waits, without acknowledging, to be killed.
func shareMember(bootstrap, topic, group string, holdAfter int) error {
	var ackErr error
	var mu sync.Mutex
	cl, err := shareClient(bootstrap, group, "compat-go-victim", func(rs kgo.ShareAckResults) {
		mu.Lock()
		defer mu.Unlock()
		if err := rs.Error(); err != nil {
			ackErr = err
		}
	})
	if err != nil {
		return err
	}
	defer cl.Close()
	cl.AddConsumeTopics(topic)
	accepted := 0
	ctx := context.Background()
	for {
		fetches := cl.PollRecords(ctx, 100)
		if err := fetches.Err0(); err != nil {
			fmt.Println("poll error:", err)
		}
		var polled []int64
		fetches.EachRecord(func(r *kgo.Record) { polled = append(polled, r.Offset) })
		if len(polled) == 0 {
			continue
		}
		if accepted >= holdAfter {
			fmt.Println("held", joinOffsets(polled))
			select {} // until SIGKILL
		}
		fetches.EachRecord(func(r *kgo.Record) { r.Ack(kgo.AckAccept) })
		if err := cl.FlushAcks(ctx); err != nil {
			return err
		}
		mu.Lock()
		failed := ackErr
		ackErr = nil
		mu.Unlock()
		if failed != nil {
			fmt.Printf("ack failed for offsets %d..%d: %v\n", polled[0], polled[len(polled)-1], failed)
		} else {
			fmt.Println("accepted", joinOffsets(polled))
			accepted += len(polled)
		}
		time.Sleep(20 * time.Millisecond) // slower than the survivors, so that all three take part
	}
}

// share-dlq (as java/.../Share.java's): 20 records; a group with share.delivery.count.limit=2 and
// errors.deadletterqueue.topic.name rejects 0..9 and releases 10..19 at each delivery; all 20 must land on the DLQ
// topic with Kafka 4.4's headers, without then with errors.deadletterqueue.copy.record.enable.
const dlqRecords = 20

var dlqHeaders = []string{"__dlq.errors.topic", "__dlq.errors.partition", "__dlq.errors.offset", "__dlq.errors.group", "__dlq.errors.delivery.count", "__dlq.errors.message"}

func shareDlq(ctx context.Context, bootstrap string, adm *kadm.Client) error {
	topic, err := createTopic(ctx, adm, "share-dlq", 1, nil)
	if err != nil {
		return err
	}
	admin, err := kgo.NewClient(seeds(bootstrap))
	if err != nil {
		return err
	}
	defer admin.Close()
	records := make([]*kgo.Record, dlqRecords)
	for i := range records {
		records[i] = &kgo.Record{Topic: topic, Key: []byte(fmt.Sprintf("k%d", i)), Value: []byte(fmt.Sprintf("v%d", i)), Headers: headers(i)}
	}
	if err := produce(ctx, bootstrap, records); err != nil {
		return err
	}
	var summary []string
	for _, copyRecord := range []bool{false, true} {
		group, dlq := topic+"-headers", "dlq."+topic // Kafka 4.4's errors.deadletterqueue.topic.name.prefix: "dlq."
		if copyRecord {
			group, dlq = topic+"-copy", dlq+"-copy"
		}
		enable := "true"
		created, err := adm.CreateTopics(ctx, 1, replicationFactor(), map[string]*string{"errors.deadletterqueue.group.enable": &enable}, dlq)
		if err == nil {
			err = created.Error()
		}
		if err != nil {
			return fmt.Errorf("CreateTopics %s: %w", dlq, err)
		}
		if err := setGroupConfigs(ctx, admin, group, map[string]string{"share.auto.offset.reset": "earliest", "share.delivery.count.limit": "2",
			"errors.deadletterqueue.topic.name": dlq, "errors.deadletterqueue.copy.record.enable": strconv.FormatBool(copyRecord)}); err != nil {
			return err
		}
		if err := rejectAndRelease(ctx, bootstrap, topic, group); err != nil {
			return fmt.Errorf("group %s: %w", group, err)
		}
		if err := retry(20*time.Second, func() error {
			ends, err := adm.ListEndOffsets(ctx, dlq)
			if err != nil {
				return err
			}
			if end, _ := ends.Lookup(dlq, 0); end.Offset < dlqRecords {
				return fmt.Errorf("the DLQ topic's end offset is %d, expected %d", end.Offset, dlqRecords)
			}
			return nil
		}); err != nil {
			return err
		}
		got, err := consumeAll(ctx, bootstrap, adm, dlq, 1)
		if err != nil {
			return err
		}
		if err := checkDlq(got, topic, group, copyRecord); err != nil {
			return fmt.Errorf("group %s: %w", group, err)
		}
		summary = append(summary, fmt.Sprintf("%s (copy.record.enable=%v): %d DLQ records, first %s", group, copyRecord, len(got), showHeaders(got[0].Headers)))
	}
	fmt.Println(strings.Join(summary, "\n"))
	return nil
}

// rejectAndRelease: one share consumer REJECTs offsets 0..9 and RELEASEs 10..19 until their second delivery.
func rejectAndRelease(ctx context.Context, bootstrap, topic, group string) error {
	var mu sync.Mutex
	var ackErr error
	cl, err := shareClient(bootstrap, group, "compat-go-dlq", func(rs kgo.ShareAckResults) {
		mu.Lock()
		defer mu.Unlock()
		if err := rs.Error(); err != nil {
			ackErr = err
		}
	})
	if err != nil {
		return err
	}
	defer cl.Close()
	cl.AddConsumeTopics(topic)
	finished := map[int64]bool{}
	deadline := time.Now().Add(30 * time.Second)
	for len(finished) < dlqRecords && time.Now().Before(deadline) {
		pollCtx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		fetches := cl.PollRecords(pollCtx, 100)
		cancel()
		var again error
		fetches.EachRecord(func(r *kgo.Record) {
			if finished[r.Offset] {
				again = fmt.Errorf("offset %d delivered again (delivery count %d) after it was rejected or released at the limit", r.Offset, r.DeliveryCount())
			}
			if r.Offset < dlqRecords/2 {
				r.Ack(kgo.AckReject)
				finished[r.Offset] = true
			} else {
				r.Ack(kgo.AckRelease)
				if r.DeliveryCount() >= 2 {
					finished[r.Offset] = true
				}
			}
		})
		if again != nil {
			return again
		}
		if err := cl.FlushAcks(ctx); err != nil {
			return err
		}
		mu.Lock()
		failed := ackErr
		mu.Unlock()
		if failed != nil {
			return fmt.Errorf("acknowledgement failed: %w", failed)
		}
	}
	if len(finished) < dlqRecords {
		return fmt.Errorf("only %d of %d records rejected or released to the limit in 30 s", len(finished), dlqRecords)
	}
	return nil
}

func checkDlq(got []*kgo.Record, topic, group string, copyRecord bool) error {
	if len(got) != dlqRecords {
		return fmt.Errorf("the DLQ has %d records, expected %d", len(got), dlqRecords)
	}
	seen := map[int64]bool{}
	for _, r := range got {
		h := map[string]string{}
		var names []string
		for _, x := range r.Headers {
			h[x.Key] = string(x.Value)
			names = append(names, x.Key)
		}
		where := fmt.Sprintf("DLQ record %d (%s): ", r.Offset, showHeaders(r.Headers))
		if strings.Join(names, ",") != strings.Join(dlqHeaders, ",") {
			return fmt.Errorf("%sheaders %v, expected %v", where, names, dlqHeaders)
		}
		offset, err := strconv.ParseInt(h["__dlq.errors.offset"], 10, 64)
		if err != nil || offset < 0 || offset >= dlqRecords || seen[offset] {
			return fmt.Errorf("%sunexpected or repeated __dlq.errors.offset", where)
		}
		seen[offset] = true
		count, message := "1", "Offset rejected by client."
		if offset >= dlqRecords/2 {
			count, message = "2", "Offset delivery count exceeded the threshold."
		}
		want := map[string]string{"__dlq.errors.topic": topic, "__dlq.errors.partition": "0", "__dlq.errors.group": group,
			"__dlq.errors.delivery.count": count, "__dlq.errors.message": message}
		for k, v := range want {
			if h[k] != v {
				return fmt.Errorf("%s%s %q, expected %q", where, k, h[k], v)
			}
		}
		if copyRecord && (string(r.Key) != fmt.Sprintf("k%d", offset) || string(r.Value) != fmt.Sprintf("v%d", offset)) {
			return fmt.Errorf("%scopy.record.enable: key %q value %q, expected the original's", where, r.Key, r.Value)
		}
		if !copyRecord && (r.Key != nil || r.Value != nil) {
			return fmt.Errorf("%scopy.record.enable=false: key %q value %q, expected none", where, r.Key, r.Value)
		}
	}
	return nil
}
