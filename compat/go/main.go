// Fjord compatibility client: franz-go (kgo + kadm).
// Usage: fjord-compat-go BOOTSTRAP SCENARIO   (exit 0 = pass)
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

var scenarios = map[string]func(ctx context.Context, bootstrap string, adm *kadm.Client) error{
	"connect":          connect,
	"admin-topics":     adminTopics,
	"produce-consume":  produceConsume,
	"compression":      compression,
	"large-records":    largeRecords,
	"keyed-partitions": keyedPartitions,
	"offsets-by-time":  offsetsByTime,
	"idempotent":       idempotent,
	"group-consume":    groupScenario(groupConsume, "classic"),
	"group-rebalance":  groupScenario(groupRebalance, "classic"),
	"group-static":     groupScenario(groupStatic, "classic"),

	"group-consume-consumer":   groupScenario(groupConsume, "consumer"),
	"group-rebalance-consumer": groupScenario(groupRebalance, "consumer"),
	"group-static-consumer":    groupScenario(groupStatic, "consumer"),

	"txn-consume-transform-produce": txnConsumeTransformProduce,
	"txn-zombie-fenced":             txnZombieFenced,

	"compaction": compaction,
	"retention":  retention,

	"cluster-admin-partitions": clusterAdminPartitions,

	"secure-produce-consume": secureProduceConsume,
	"acl-denials":            aclDenials,
	"quota-throttle":         quotaThrottle,

	"share-queue": shareQueue,
	"share-dlq":   shareDlq,
}

// scenarioTimeout: the bound of each scenario, 50 s unless longer here.
var scenarioTimeout = map[string]time.Duration{"cluster-admin-partitions": clusterAdminPartitionsTimeout}

// metadataTimeout: how long a topic's creation or deletion may take to show in the metadata.
const metadataTimeout = 10 * time.Second

func connect(ctx context.Context, bootstrap string, adm *kadm.Client) error {
	host, portStr, _ := net.SplitHostPort(bootstrap)
	port, _ := strconv.Atoi(portStr)
	versions, err := adm.ApiVersions(ctx)
	if err != nil {
		return fmt.Errorf("ApiVersions: %w", err)
	}
	for _, v := range versions {
		if v.Err != nil {
			return fmt.Errorf("ApiVersions from broker %d: %w", v.NodeID, v.Err)
		}
	}
	md, err := adm.BrokerMetadata(ctx)
	if err != nil {
		return fmt.Errorf("Metadata: %w", err)
	}
	if len(md.Brokers) != 1 {
		return fmt.Errorf("expected 1 broker, got %d: %v", len(md.Brokers), md.Brokers)
	}
	b := md.Brokers[0]
	if b.Host != host || int(b.Port) != port {
		return fmt.Errorf("expected broker %s:%d, got %s:%d", host, port, b.Host, b.Port)
	}
	if md.Cluster == "" {
		return fmt.Errorf("metadata has no cluster id")
	}
	return nil
}

func adminTopics(ctx context.Context, _ string, adm *kadm.Client) error {
	name := fmt.Sprintf("compat-go-%d", time.Now().UnixNano())
	created, err := adm.CreateTopics(ctx, 3, 1, nil, name)
	if err != nil {
		return fmt.Errorf("CreateTopics: %w", err)
	}
	if r, _ := created.On(name, nil); r.Err != nil {
		return fmt.Errorf("CreateTopics %s: %w (%s)", name, r.Err, r.ErrMessage)
	}
	err = retry(metadataTimeout, func() error {
		topics, err := adm.ListTopics(ctx)
		if err != nil {
			return fmt.Errorf("ListTopics: %w", err)
		}
		t, ok := topics[name]
		if !ok {
			return fmt.Errorf("created topic %s not listed", name)
		}
		if len(t.Partitions) != 3 {
			return fmt.Errorf("topic %s has %d partitions, expected 3", name, len(t.Partitions))
		}
		return nil
	})
	if err != nil {
		return err
	}
	deleted, err := adm.DeleteTopics(ctx, name)
	if err != nil {
		return fmt.Errorf("DeleteTopics: %w", err)
	}
	if r, _ := deleted.On(name, nil); r.Err != nil {
		return fmt.Errorf("DeleteTopics %s: %w (%s)", name, r.Err, r.ErrMessage)
	}
	return retry(metadataTimeout, func() error {
		topics, err := adm.ListTopics(ctx)
		if err != nil {
			return fmt.Errorf("ListTopics: %w", err)
		}
		if topics.Has(name) {
			return fmt.Errorf("deleted topic %s still listed", name)
		}
		return nil
	})
}

// ----- data path: kgo producing (defaults: acks=all, idempotent, sticky-key murmur2 partitioner) and
// kgo.ConsumePartitions (no group) -----

func createTopic(ctx context.Context, adm *kadm.Client, prefix string, partitions int32, configs map[string]*string) (string, error) {
	name := fmt.Sprintf("compat-go-%s-%d", prefix, time.Now().UnixNano())
	created, err := adm.CreateTopics(ctx, partitions, replicationFactor(), configs, name)
	if err == nil {
		if r, _ := created.On(name, nil); r.Err != nil {
			err = fmt.Errorf("%w (%s)", r.Err, r.ErrMessage)
		}
	}
	if err != nil {
		return "", fmt.Errorf("CreateTopics %s: %w", name, err)
	}
	return name, nil
}

// produce sends every record with a fresh client and waits for every acknowledgement.
func produce(ctx context.Context, bootstrap string, records []*kgo.Record, opts ...kgo.Opt) error {
	cl, err := kgo.NewClient(append([]kgo.Opt{seeds(bootstrap), kgo.MetadataMinAge(100 * time.Millisecond), kgo.ProducerLinger(5 * time.Millisecond)}, opts...)...)
	if err != nil {
		return err
	}
	defer cl.Close()
	if err := cl.ProduceSync(ctx, records...).FirstErr(); err != nil {
		return fmt.Errorf("produce: %w", err)
	}
	return nil
}

// consumeAll reads every partition from the start to its end offset, without a consumer group (opts: more client options).
func consumeAll(ctx context.Context, bootstrap string, adm *kadm.Client, topic string, partitions int32, opts ...kgo.Opt) ([]*kgo.Record, error) {
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		return nil, fmt.Errorf("ListEndOffsets: %w", err)
	}
	offsets := map[int32]kgo.Offset{}
	left := map[int32]int64{} // partition -> end offset not reached yet
	for p := int32(0); p < partitions; p++ {
		offsets[p] = kgo.NewOffset().AtStart()
		if end, _ := ends.Lookup(topic, p); end.Offset > 0 {
			left[p] = end.Offset
		}
	}
	cl, err := kgo.NewClient(append([]kgo.Opt{seeds(bootstrap), kgo.MetadataMinAge(100 * time.Millisecond), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: offsets})}, opts...)...)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var out []*kgo.Record
	for len(left) > 0 {
		fetches := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return nil, fmt.Errorf("end offsets not reached (timed out): partitions left %v", left)
		}
		var ferr error
		fetches.EachError(func(t string, p int32, err error) { ferr = fmt.Errorf("fetch %s[%d]: %w", t, p, err) })
		if ferr != nil {
			return nil, ferr
		}
		fetches.EachRecord(func(r *kgo.Record) {
			out = append(out, r)
			if r.Offset+1 >= left[r.Partition] {
				delete(left, r.Partition)
			}
		})
	}
	return out, nil
}

func plain(topic string, n int) []*kgo.Record {
	out := make([]*kgo.Record, n)
	for i := range out {
		out[i] = &kgo.Record{Topic: topic, Key: key(i), Value: value(i), Headers: headers(i)}
	}
	return out
}

// roundTrip creates a topic, produces records, reads them all back and hands them to verify.
func roundTrip(ctx context.Context, bootstrap string, adm *kadm.Client, prefix string, partitions int32, configs map[string]*string,
	records func(topic string) []*kgo.Record, verify func([]*kgo.Record) error, opts ...kgo.Opt) error {
	topic, err := createTopic(ctx, adm, prefix, partitions, configs)
	if err != nil {
		return err
	}
	if err := produce(ctx, bootstrap, records(topic), opts...); err != nil {
		return err
	}
	got, err := consumeAll(ctx, bootstrap, adm, topic, partitions)
	if err != nil {
		return err
	}
	return verify(got)
}

func produceConsume(ctx context.Context, bootstrap string, adm *kadm.Client) error {
	return roundTrip(ctx, bootstrap, adm, "pc", 3, nil, func(t string) []*kgo.Record { return plain(t, 1000) },
		func(r []*kgo.Record) error { return verifyRecords(r, 1000) })
}

func compression(ctx context.Context, bootstrap string, adm *kadm.Client) error {
	codec := map[string]kgo.CompressionCodec{"none": kgo.NoCompression(), "gzip": kgo.GzipCompression(),
		"snappy": kgo.SnappyCompression(), "lz4": kgo.Lz4Compression(), "zstd": kgo.ZstdCompression()}
	for _, c := range codecs {
		err := roundTrip(ctx, bootstrap, adm, c, 3, nil, func(t string) []*kgo.Record { return plain(t, 200) },
			func(r []*kgo.Record) error { return verifyRecords(r, 200) }, kgo.ProducerBatchCompression(codec[c]))
		if err != nil {
			return fmt.Errorf("%s: %w", c, err)
		}
	}
	return nil
}

func largeRecords(ctx context.Context, bootstrap string, adm *kadm.Client) error {
	max := "2097152"
	records := func(t string) []*kgo.Record {
		out := make([]*kgo.Record, 5)
		for i := range out {
			out[i] = &kgo.Record{Topic: t, Key: []byte(fmt.Sprintf("large-%d", i)), Value: large(i)}
		}
		return out
	}
	return roundTrip(ctx, bootstrap, adm, "large", 1, map[string]*string{"max.message.bytes": &max}, records, verifyLarge,
		kgo.ProducerBatchMaxBytes(2097152))
}

func keyedPartitions(ctx context.Context, bootstrap string, adm *kadm.Client) error {
	records := func(t string) []*kgo.Record {
		out := make([]*kgo.Record, 600)
		for i := range out {
			out[i] = &kgo.Record{Topic: t, Key: []byte(fmt.Sprintf("key-%d", i%20)), Value: value(i)}
		}
		return out
	}
	return roundTrip(ctx, bootstrap, adm, "keyed", 6, nil, records, func(r []*kgo.Record) error { return verifyKeyed(r, 600, 6) })
}

func offsetsByTime(ctx context.Context, bootstrap string, adm *kadm.Client) error {
	topic, err := createTopic(ctx, adm, "time", 1, nil)
	if err != nil {
		return err
	}
	t, lookups := timeQueries(10)
	records := make([]*kgo.Record, 10)
	for i := range records {
		records[i] = &kgo.Record{Topic: topic, Key: key(i), Value: value(i), Timestamp: time.UnixMilli(t + int64(i)*1000)}
	}
	if err := produce(ctx, bootstrap, records); err != nil {
		return err
	}
	for _, q := range lookups {
		listed, err := adm.ListOffsetsAfterMilli(ctx, q[0], topic)
		if err != nil {
			return fmt.Errorf("ListOffsetsAfterMilli: %w", err)
		}
		got, _ := listed.Lookup(topic, 0)
		want := q[1]
		if want < 0 {
			want = 10 // kadm answers "no record at or after ts" with the end offset
		}
		if got.Err != nil || got.Offset != want {
			return fmt.Errorf("offset for timestamp T%+d: %d (err %v), expected %d", q[0]-t, got.Offset, got.Err, want)
		}
	}
	return nil
}

func idempotent(ctx context.Context, bootstrap string, adm *kadm.Client) error {
	// kgo is idempotent unless DisableIdempotentWrite is given; acks=all is its default.
	return roundTrip(ctx, bootstrap, adm, "idem", 3, nil, func(t string) []*kgo.Record { return plain(t, 2000) },
		func(r []*kgo.Record) error { return verifyRecords(r, 2000) }, kgo.RequiredAcks(kgo.AllISRAcks()))
}

// retry runs f until it succeeds or timeout passes.
func retry(timeout time.Duration, f func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		err := f()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func main() {
	if len(os.Args) == 5 && os.Args[2] == "cluster-produce" { // the cluster-failover row's producer (cluster.go)
		count, _ := strconv.Atoi(os.Args[4])
		if err := clusterProduce(os.Args[1], os.Args[3], count); err != nil {
			fmt.Fprintln(os.Stderr, "FAIL:", err)
			os.Exit(1)
		}
		return
	}
	if len(os.Args) == 4 && os.Args[2] == "group-member" { // a member process of a group scenario (group_member.go)
		var o memberOpts
		if err := json.Unmarshal([]byte(os.Args[3]), &o); err != nil {
			fmt.Fprintln(os.Stderr, "group-member:", err)
			os.Exit(2)
		}
		if err := groupMember(os.Args[1], o); err != nil {
			fmt.Fprintln(os.Stderr, "group-member:", err)
			os.Exit(1)
		}
		return
	}
	if len(os.Args) == 6 && os.Args[2] == "share-member" { // share-queue's victim process (share.go)
		holdAfter, _ := strconv.Atoi(os.Args[5])
		if err := shareMember(os.Args[1], os.Args[3], os.Args[4], holdAfter); err != nil {
			fmt.Fprintln(os.Stderr, "share-member:", err)
			os.Exit(1)
		}
		return
	}
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: fjord-compat-go BOOTSTRAP SCENARIO")
		os.Exit(2)
	}
	bootstrap, name := os.Args[1], os.Args[2]
	scenario, ok := scenarios[name]
	if !ok {
		fmt.Fprintf(os.Stderr, "unknown scenario %q\n", name)
		os.Exit(3) // "not applicable" to the harness
	}
	// A short metadata min age: the default 5 s makes each metadata-refreshing retry wait 5 s.
	cl, err := kgo.NewClient(seeds(bootstrap), kgo.MetadataMinAge(100*time.Millisecond))
	if err != nil {
		fmt.Fprintln(os.Stderr, "kgo.NewClient:", err)
		os.Exit(1)
	}
	defer cl.Close()
	timeout, ok := scenarioTimeout[name]
	if !ok {
		timeout = 50 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := scenario(ctx, bootstrap, kadm.NewClient(cl)); err != nil {
		fmt.Fprintln(os.Stderr, "FAIL:", err)
		cl.Close()
		os.Exit(1)
	}
}
