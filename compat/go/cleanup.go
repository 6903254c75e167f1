// The log-cleanup scenarios with franz-go: the same steps and checks as compat/lib/cleanup.js (compaction,
// retention; read the description there). kgo produces (a nil Value is a tombstone, Timestamp sets a record's
// time); consumeAll reads group-less, kadm.ListStartOffsets gives the earliest offset, and the consumer that is
// behind starts at an offset below the log start with kgo.ConsumeResetOffset(AtStart): auto.offset.reset=earliest.
package main

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

const (
	cleanupKeys       = 10
	cleanupRounds     = 3
	segmentMs         = 500
	deleteRetentionMs = 1000
	cleaningTimeout   = 20 * time.Second
)

var deletedKeys = []int{0, 1} // keys that get a tombstone

func ck(k int) string { return fmt.Sprintf("ck-%d", k) }

// nullable is a record's value as the checks compare it: nil for a tombstone.
func nullable(v []byte) *string {
	if v == nil {
		return nil
	}
	s := string(v)
	return &s
}

func showRecords(records []*kgo.Record) string {
	var b bytes.Buffer
	for _, r := range records {
		v := "null"
		if r.Value != nil {
			v = strconv.Quote(string(r.Value))
		}
		fmt.Fprintf(&b, "[%d %q %s]", r.Offset, r.Key, v)
	}
	return b.String()
}

// showValues shows key -> value (nil: a tombstone) sorted by key, so that two of them compare as strings.
func showValues(values map[string]*string) string {
	var b bytes.Buffer
	for _, k := range slices.Sorted(maps.Keys(values)) {
		v := "null"
		if values[k] != nil {
			v = strconv.Quote(*values[k])
		}
		fmt.Fprintf(&b, "[%q %s]", k, v)
	}
	return b.String()
}

// verifyCompacted checks the records: the last is the sentinel (in the active segment), the others exactly the
// latest value of each key in expected (key -> value, nil for a tombstone), one each, nothing else.
func verifyCompacted(all []*kgo.Record, expected map[string]*string, sentinel string) error {
	if len(all) == 0 || string(all[len(all)-1].Value) != sentinel {
		return fmt.Errorf("the last record is not the sentinel %s: %s", sentinel, showRecords(all))
	}
	records := all[:len(all)-1]
	for i := 1; i < len(records); i++ {
		if records[i].Offset <= records[i-1].Offset {
			return fmt.Errorf("offsets not increasing: %s", showRecords(records))
		}
	}
	seen := map[string]*string{}
	for _, r := range records {
		if _, twice := seen[string(r.Key)]; twice {
			return fmt.Errorf("key %s read twice: %s", r.Key, showRecords(records))
		}
		seen[string(r.Key)] = nullable(r.Value)
	}
	if showValues(seen) != showValues(expected) {
		return fmt.Errorf("read %s, expected one record per key: %s", showRecords(records), showValues(expected))
	}
	return nil
}

func compaction(ctx context.Context, bootstrap string, adm *kadm.Client) error {
	configs := map[string]*string{"cleanup.policy": kadm.StringPtr("compact"), "segment.ms": kadm.StringPtr(strconv.Itoa(segmentMs)),
		"min.cleanable.dirty.ratio": kadm.StringPtr("0.01"), "delete.retention.ms": kadm.StringPtr(strconv.Itoa(deleteRetentionMs))}
	topic, err := createTopic(ctx, adm, "compaction", 1, configs)
	if err != nil {
		return err
	}
	var records []*kgo.Record
	for round := 0; round < cleanupRounds; round++ {
		for k := 0; k < cleanupKeys; k++ {
			records = append(records, &kgo.Record{Topic: topic, Key: []byte(ck(k)), Value: []byte(fmt.Sprintf("%s@%d", ck(k), round))})
		}
	}
	for _, k := range deletedKeys {
		records = append(records, &kgo.Record{Topic: topic, Key: []byte(ck(k))})
	}
	latest := map[string]*string{}
	for _, r := range records {
		latest[string(r.Key)] = nullable(r.Value)
	}
	if err := produce(ctx, bootstrap, records); err != nil {
		return err
	}
	verify := func(sentinel string) error {
		return retry(cleaningTimeout, func() error {
			all, err := consumeAll(ctx, bootstrap, adm, topic, 1)
			if err != nil {
				return err
			}
			return verifyCompacted(all, latest, sentinel)
		})
	}
	time.Sleep((segmentMs + 200) * time.Millisecond)
	if err := produce(ctx, bootstrap, []*kgo.Record{{Topic: topic, Key: []byte("end"), Value: []byte("end-1")}}); err != nil {
		return err
	}
	if err := verify("end-1"); err != nil {
		return err
	}

	time.Sleep((max(deleteRetentionMs, segmentMs) + 200) * time.Millisecond)
	if err := produce(ctx, bootstrap, []*kgo.Record{{Topic: topic, Key: []byte("end"), Value: []byte("end-2")}}); err != nil {
		return err
	}
	latest["end"] = kadm.StringPtr("end-1")
	for _, k := range deletedKeys {
		delete(latest, ck(k))
	}
	return verify("end-2")
}

func retention(ctx context.Context, bootstrap string, adm *kadm.Client) error {
	topic, err := createTopic(ctx, adm, "retention", 1, map[string]*string{"retention.ms": kadm.StringPtr("60000")})
	if err != nil {
		return err
	}
	old := time.Now().Add(-time.Hour)
	records := make([]*kgo.Record, 20)
	for i := range records {
		records[i] = &kgo.Record{Topic: topic, Key: key(i), Value: value(i), Timestamp: old}
	}
	if err := produce(ctx, bootstrap, records); err != nil {
		return err
	}
	err = retry(15*time.Second, func() error {
		starts, err := adm.ListStartOffsets(ctx, topic)
		if err != nil {
			return fmt.Errorf("ListStartOffsets: %w", err)
		}
		start, _ := starts.Lookup(topic, 0)
		if start.Err != nil || start.Offset != 20 {
			return fmt.Errorf("earliest offset %d (err %v), expected 20 once retention deleted the old segments", start.Offset, start.Err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	records = make([]*kgo.Record, 10)
	for i := range records {
		records[i] = &kgo.Record{Topic: topic, Key: key(20 + i), Value: value(20 + i)}
	}
	if err := produce(ctx, bootstrap, records); err != nil {
		return err
	}
	read, err := readBehind(ctx, bootstrap, topic, 5, 10)
	if err != nil {
		return err
	}
	ok := len(read) == 10
	for i := 0; ok && i < 10; i++ {
		ok = read[i].Offset == int64(20+i) && bytes.Equal(read[i].Key, key(20+i)) && bytes.Equal(read[i].Value, value(20+i))
	}
	if !ok {
		return fmt.Errorf("a consumer at offset 5 read %s, expected records 20..29 (reset to the earliest)", showRecords(read))
	}
	return nil
}

// readBehind returns the first n records a consumer reads when it starts at offset with auto.offset.reset=earliest.
func readBehind(ctx context.Context, bootstrap, topic string, offset int64, n int) ([]*kgo.Record, error) {
	cl, err := kgo.NewClient(seeds(bootstrap), kgo.MetadataMinAge(100*time.Millisecond),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().At(offset)}}),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	var read []*kgo.Record
	for len(read) < n && ctx.Err() == nil {
		fetches := cl.PollRecords(ctx, n-len(read))
		var ferr error
		fetches.EachError(func(t string, p int32, err error) {
			if ctx.Err() == nil {
				ferr = fmt.Errorf("fetch %s[%d]: %w", t, p, err)
			}
		})
		if ferr != nil {
			return nil, ferr
		}
		read = append(read, fetches.Records()...)
	}
	return read, nil
}
