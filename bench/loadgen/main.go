// fjord-loadgen: the produce/consume load generator behind `npm run bench` (bench/run.ts builds and
// drives it). One invocation is one workload against one broker:
//
//  1. create the topic (kadm, replication factor 1) and wait until metadata lists all its partitions;
//  2. produce -records records of -size bytes as fast as the client allows (async Produce, one promise
//     per record), then Flush; per-record latency is the time from the Produce call to its promise;
//  3. consume the whole topic from offset 0 of every partition (kgo.ConsumePartitions, no group) until
//     every acknowledged record has been read, checking that offsets are contiguous.
//
// Each phase prints one JSON line on stdout ({"type":"topic"|"produce"|"consume"|"error",...});
// franz-go's own warnings and errors go to stderr.
//
// Producer defaults mirror the Java client's (Kafka 4.x), so that a later side-by-side run against
// Apache Kafka means what a Java user would see:
//
//	linger.ms=5                         -> -linger 5ms            (franz-go default: 10ms)
//	batch.size=16384                    -> -batch-bytes 16384     (franz-go default: ~1 MB)
//	max.in.flight.requests.per.conn.=5  -> -max-inflight 5        (franz-go default without idempotence: 1)
//	buffer.memory=32 MiB                -> -buffer-bytes 32 MiB   (franz-go default: unbounded bytes)
//	                                       -buffer-records 50000  (franz-go's default cap, kept)
//	compression.type=none               -> -compression none      (franz-go default: snappy!)
//	enable.idempotence=true (acks=all)  -> idempotent with acks=all, disabled with acks=1 (required)
//	partitioner: sticky per batch.size  -> UniformBytesPartitioner(batch-bytes)
//
// Consumer: fetch.max.wait.ms=500 (franz-go default 5s), fetch.min.bytes=1, fetch.max.bytes=50 MiB,
// max.partition.fetch.bytes=1 MiB (the same in both clients).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

const mib = 1 << 20

type opts struct {
	brokers       string
	topic         string
	partitions    int
	records       int
	size          int
	acks          string
	compression   string
	linger        time.Duration
	batchBytes    int
	maxInflight   int
	bufferBytes   int
	bufferRecords int
	producers     int
	consume       bool
	consumeFrom   string
	timeout       time.Duration
}

func main() {
	var o opts
	flag.StringVar(&o.brokers, "brokers", "127.0.0.1:9092", "bootstrap host:port (comma separated)")
	flag.StringVar(&o.topic, "topic", "", "topic to create (default bench-<unix nanos>)")
	flag.IntVar(&o.partitions, "partitions", 1, "partitions of the topic")
	flag.IntVar(&o.records, "records", 100000, "records to produce")
	flag.IntVar(&o.size, "size", 100, "value size in bytes (no key)")
	flag.StringVar(&o.acks, "acks", "1", "1 or all (all also enables idempotence, as the Java client's default)")
	flag.StringVar(&o.compression, "compression", "none", "none, gzip, snappy, lz4, zstd")
	flag.DurationVar(&o.linger, "linger", 5*time.Millisecond, "producer linger (Java linger.ms)")
	flag.IntVar(&o.batchBytes, "batch-bytes", 16384, "max bytes of one partition's batch (Java batch.size)")
	flag.IntVar(&o.maxInflight, "max-inflight", 5, "produce requests in flight per broker when not idempotent")
	flag.IntVar(&o.bufferBytes, "buffer-bytes", 32*mib, "max bytes buffered in the client (Java buffer.memory)")
	flag.IntVar(&o.bufferRecords, "buffer-records", 50000, "max records buffered in the client")
	flag.IntVar(&o.producers, "producers", 1, "goroutines calling Produce on the one client")
	flag.BoolVar(&o.consume, "consume", true, "consume the topic after producing")
	flag.StringVar(&o.consumeFrom, "consume-from", "start", "start: AtStart() (ListOffsets, then Fetch); zero: exact offset 0 (no ListOffsets)")
	flag.DurationVar(&o.timeout, "timeout", 5*time.Minute, "limit for each phase")
	flag.Parse()
	if o.topic == "" {
		o.topic = fmt.Sprintf("bench-%d", time.Now().UnixNano())
	}
	if err := run(o); err != nil {
		emit(map[string]any{"type": "error", "message": err.Error()})
		fmt.Fprintln(os.Stderr, "fjord-loadgen:", err)
		os.Exit(1)
	}
}

func emit(v map[string]any) {
	b, _ := json.Marshal(v)
	os.Stdout.Write(append(b, '\n'))
}

func run(o opts) error {
	codec, err := parseCodec(o.compression)
	if err != nil {
		return err
	}
	if o.acks != "1" && o.acks != "all" {
		return fmt.Errorf("-acks must be 1 or all, not %q", o.acks)
	}
	if o.records <= 0 || o.size <= 0 || o.partitions <= 0 {
		return errors.New("-records, -size and -partitions must be positive")
	}
	seeds := strings.Split(o.brokers, ",")
	logger := kgo.BasicLogger(os.Stderr, kgo.LogLevelWarn, func() string { return "franz-go " })

	// ---- topic
	ph := &rttHook{}
	popts := []kgo.Opt{
		kgo.SeedBrokers(seeds...),
		kgo.WithLogger(logger),
		kgo.WithHooks(ph),
		kgo.DefaultProduceTopic(o.topic),
		kgo.ProducerLinger(o.linger),
		kgo.ProducerBatchMaxBytes(int32(o.batchBytes)),
		kgo.MaxBufferedBytes(o.bufferBytes),
		kgo.MaxBufferedRecords(o.bufferRecords),
		kgo.ProducerBatchCompression(codec),
		kgo.RecordPartitioner(kgo.UniformBytesPartitioner(o.batchBytes, true, true, nil)),
		kgo.ProduceRequestTimeout(30 * time.Second),
	}
	if o.acks == "1" {
		popts = append(popts, kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite(),
			kgo.MaxProduceRequestsInflightPerBroker(o.maxInflight))
	} else {
		popts = append(popts, kgo.RequiredAcks(kgo.AllISRAcks()))
	}
	pcl, err := kgo.NewClient(popts...)
	if err != nil {
		return fmt.Errorf("producer client: %w", err)
	}
	defer pcl.Close()

	ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
	defer cancel()
	t := time.Now()
	if err := createTopic(ctx, kadm.NewClient(pcl), o.topic, o.partitions); err != nil {
		return err
	}
	emit(map[string]any{"type": "topic", "topic": o.topic, "partitions": o.partitions, "ms": ms(time.Since(t))})

	// ---- produce
	payload := makePayload(4*mib + o.size)
	stride := 997                      // a prime, so consecutive records differ and compress like real events do
	lat := make([]int32, 0, o.records) // microseconds
	perPartition := make([]int64, o.partitions)
	var acked, failed atomic.Int64
	var firstErr atomic.Pointer[string]
	var partMu sync.Mutex
	var lastAck time.Time
	var maxAckGap time.Duration // the longest time without any acknowledgement: a stall shows here
	ph.reset()
	cpu0 := cpuSeconds()
	start := time.Now()
	lastAck = start
	// One callback for every record; t0 is taken just before Produce, so latency includes any wait
	// for room in the client buffer (as the Java client's send() blocks when buffer.memory is full).
	promise := func(r *kgo.Record, err error) {
		now := time.Now()
		us := int32(now.Sub((*timedRecord)(unsafe.Pointer(r)).t0) / time.Microsecond)
		if err != nil {
			failed.Add(1)
			msg := err.Error()
			firstErr.CompareAndSwap(nil, &msg)
		} else {
			acked.Add(1)
		}
		partMu.Lock()
		lat = append(lat, us)
		if err == nil {
			perPartition[r.Partition]++
			if gap := now.Sub(lastAck); gap > maxAckGap {
				maxAckGap = gap
			}
			lastAck = now
		}
		partMu.Unlock()
	}
	var producers sync.WaitGroup
	for g := 0; g < o.producers; g++ {
		producers.Add(1)
		go func(g int) {
			defer producers.Done()
			for i := g; i < o.records; i += o.producers {
				off := (i * stride) % (len(payload) - o.size)
				tr := &timedRecord{Record: kgo.Record{Value: payload[off : off+o.size]}, t0: time.Now()}
				pcl.Produce(ctx, &tr.Record, promise)
			}
		}(g)
	}
	producers.Wait()
	flushErr := pcl.Flush(ctx)
	elapsed := time.Since(start)
	cpuProduce := cpuSeconds() - cpu0
	sec := elapsed.Seconds()
	bytes := float64(acked.Load()) * float64(o.size)
	prod := map[string]any{
		"type": "produce", "records": acked.Load(), "failed": failed.Load(), "bytes": int64(bytes),
		"seconds": sec, "recordsPerSec": float64(acked.Load()) / sec, "mbPerSec": bytes / sec / mib,
		"latencyMs": percentilesUs(lat), "requests": ph.summary(0), "perPartition": perPartition,
		"maxAckGapMs":       ms(maxAckGap),
		"loadgenCpuSeconds": cpuProduce,
	}
	if p := firstErr.Load(); p != nil {
		prod["firstError"] = *p
	}
	if flushErr != nil {
		prod["flushError"] = flushErr.Error()
	}
	emit(prod)
	if flushErr != nil || failed.Load() > 0 {
		return fmt.Errorf("produce: %d of %d records failed (first error: %v; flush: %v)", failed.Load(), o.records, deref(firstErr.Load()), flushErr)
	}
	pcl.Close()
	if !o.consume {
		return nil
	}

	// ---- consume
	ch := &rttHook{}
	offsets := map[int32]kgo.Offset{}
	for p := 0; p < o.partitions; p++ {
		if o.consumeFrom == "start" {
			offsets[int32(p)] = kgo.NewOffset().AtStart()
		} else {
			offsets[int32(p)] = kgo.NewOffset().At(0)
		}
	}
	ctx2, cancel2 := context.WithTimeout(context.Background(), o.timeout)
	defer cancel2()
	ccl, err := kgo.NewClient(
		kgo.SeedBrokers(seeds...),
		kgo.WithLogger(logger),
		kgo.WithHooks(ch),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{o.topic: offsets}),
		kgo.FetchMaxWait(500*time.Millisecond),
	)
	if err != nil {
		return fmt.Errorf("consumer client: %w", err)
	}
	defer ccl.Close()
	want := acked.Load()
	next := make([]int64, o.partitions)
	var got, gotBytes, anomalies, fetchErrors int64
	var firstFetchErr string
	cpu0 = cpuSeconds()
	start = time.Now()
	var firstRecord time.Duration = -1
	var lastRecords time.Time
	var maxGap time.Duration
	for got < want {
		fs := ccl.PollFetches(ctx2)
		if ctx2.Err() != nil {
			break
		}
		fs.EachError(func(topic string, p int32, err error) {
			fetchErrors++
			if firstFetchErr == "" {
				firstFetchErr = fmt.Sprintf("%s[%d]: %v", topic, p, err)
				fmt.Fprintln(os.Stderr, "fjord-loadgen: fetch error:", firstFetchErr)
			}
		})
		if n := fs.NumRecords(); n > 0 {
			now := time.Now()
			if !lastRecords.IsZero() && now.Sub(lastRecords) > maxGap {
				maxGap = now.Sub(lastRecords)
			}
			lastRecords = now
		}
		fs.EachRecord(func(r *kgo.Record) {
			if firstRecord < 0 {
				firstRecord = time.Since(start)
			}
			if r.Offset != next[r.Partition] {
				anomalies++
			}
			next[r.Partition] = r.Offset + 1
			got++
			gotBytes += int64(len(r.Value))
		})
	}
	end := time.Now()
	// Throughput counts from the first Fetch written (after connecting, Metadata and ListOffsets),
	// as Kafka's consumer perf tool leaves out the group join; setupMs is the part before it.
	fetchStart := ch.firstWrite(1)
	if fetchStart.IsZero() || fetchStart.Before(start) {
		fetchStart = start
	}
	sec = end.Sub(fetchStart).Seconds()
	cons := map[string]any{
		"type": "consume", "records": got, "bytes": gotBytes, "seconds": sec, "totalSeconds": end.Sub(start).Seconds(),
		"setupMs": ms(fetchStart.Sub(start)), "recordsPerSec": float64(got) / sec, "mbPerSec": float64(gotBytes) / sec / mib,
		"firstRecordMs": ms(firstRecord), "maxGapMs": ms(maxGap), "offsetAnomalies": anomalies, "fetchErrors": fetchErrors,
		"requests": ch.summary(1), "loadgenCpuSeconds": cpuSeconds() - cpu0,
	}
	if firstFetchErr != "" {
		cons["firstError"] = firstFetchErr
	}
	emit(cons)
	if got < want {
		return fmt.Errorf("consume: read %d of %d records before the %s timeout (first fetch error: %q)", got, want, o.timeout, firstFetchErr)
	}
	if anomalies > 0 {
		return fmt.Errorf("consume: %d offset gaps or repeats", anomalies)
	}
	return nil
}

// timedRecord carries the time of its Produce call; Record is the first field, so the promise can
// get from the *kgo.Record it is given back to the timedRecord (franz-go truncates Record.Timestamp
// to milliseconds and drops its monotonic reading, so that field cannot serve).
type timedRecord struct {
	kgo.Record
	t0 time.Time
}

func createTopic(ctx context.Context, adm *kadm.Client, topic string, partitions int) error {
	res, err := adm.CreateTopics(ctx, int32(partitions), 1, nil, topic)
	if err != nil {
		return fmt.Errorf("CreateTopics: %w", err)
	}
	if r, _ := res.On(topic, nil); r.Err != nil {
		return fmt.Errorf("CreateTopics %s: %w (%s)", topic, r.Err, r.ErrMessage)
	}
	for {
		topics, err := adm.ListTopics(ctx, topic)
		if err == nil {
			if td, ok := topics[topic]; ok && td.Err == nil && len(td.Partitions) == partitions {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("topic %s not listed with %d partitions: %v", topic, partitions, err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func parseCodec(s string) (kgo.CompressionCodec, error) {
	switch s {
	case "none":
		return kgo.NoCompression(), nil
	case "gzip":
		return kgo.GzipCompression(), nil
	case "snappy":
		return kgo.SnappyCompression(), nil
	case "lz4":
		return kgo.Lz4Compression(), nil
	case "zstd":
		return kgo.ZstdCompression(), nil
	}
	return kgo.CompressionCodec{}, fmt.Errorf("unknown -compression %q", s)
}

// makePayload returns ~n bytes of JSON events (ids, users, amounts, pages, a user agent), the same
// shape as bench/records-bench.ts uses: it compresses 4-7x, as real event streams do. Deterministic.
func makePayload(n int) []byte {
	s := uint32(42)
	rnd := func() float64 {
		s = (s*1103515245 + 12345) & 0x7fffffff
		return float64(s) / 0x7fffffff
	}
	events := []string{"click", "view", "purchase", "signup", "logout", "search"}
	b := make([]byte, 0, n+512)
	for i := 0; len(b) < n; i++ {
		b = append(b, `{"id":"evt-`...)
		b = strconv.AppendInt(b, int64(rnd()*1e9), 10)
		b = append(b, `","user":"user_`...)
		b = strconv.AppendInt(b, int64(rnd()*50000), 10)
		b = append(b, `","event":"`...)
		b = append(b, events[int(rnd()*6)%6]...)
		b = append(b, `","ts":`...)
		b = strconv.AppendInt(b, 1700000000000+int64(i)*13, 10)
		b = append(b, `,"session":"`...)
		b = strconv.AppendUint(b, uint64(rnd()*0xffffffff), 16)
		b = append(b, `","amount":`...)
		b = strconv.AppendFloat(b, float64(int(rnd()*100000))/100, 'f', 2, 64)
		b = append(b, `,"page":"/products/`...)
		b = strconv.AppendInt(b, int64(rnd()*3000), 10)
		b = append(b, `","ua":"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36","ok":`...)
		b = strconv.AppendBool(b, rnd() > 0.1)
		b = append(b, '}')
	}
	return b[:n]
}

// rttHook records the client-side round trip (write start to response fully read) of every request.
type rttHook struct {
	mu    sync.Mutex
	rtt   map[int16][]time.Duration
	bytes map[int16]int64
	errs  map[int16]int64
	first map[int16]time.Time // when the first request of each API started to be written
}

func (h *rttHook) OnBrokerWrite(_ kgo.BrokerMetadata, key int16, _ int, _, timeToWrite time.Duration, _ error) {
	started := time.Now().Add(-timeToWrite)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.first == nil {
		h.first = map[int16]time.Time{}
	}
	if _, ok := h.first[key]; !ok {
		h.first[key] = started
	}
}

func (h *rttHook) firstWrite(key int16) time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.first[key]
}

func (h *rttHook) reset() {
	h.mu.Lock()
	h.rtt, h.bytes, h.errs = map[int16][]time.Duration{}, map[int16]int64{}, map[int16]int64{}
	h.first = map[int16]time.Time{}
	h.mu.Unlock()
}

func (h *rttHook) OnBrokerE2E(_ kgo.BrokerMetadata, key int16, e kgo.BrokerE2E) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.rtt == nil {
		h.rtt, h.bytes, h.errs = map[int16][]time.Duration{}, map[int16]int64{}, map[int16]int64{}
	}
	if e.Err() != nil {
		h.errs[key]++
		return
	}
	h.rtt[key] = append(h.rtt[key], e.DurationE2E())
	if key == 0 {
		h.bytes[key] += int64(e.BytesWritten)
	} else {
		h.bytes[key] += int64(e.BytesRead)
	}
}

// summary of one API's requests: count, round-trip percentiles, average request (Produce) or
// response (Fetch) size.
func (h *rttHook) summary(key int16) map[string]any {
	h.mu.Lock()
	defer h.mu.Unlock()
	d := append([]time.Duration(nil), h.rtt[key]...)
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	out := map[string]any{"count": len(d), "errors": h.errs[key]}
	if len(d) > 0 {
		out["avgBytes"] = h.bytes[key] / int64(len(d))
		out["rttMs"] = map[string]float64{
			"p50": ms(d[pidx(len(d), 0.50)]), "p99": ms(d[pidx(len(d), 0.99)]), "max": ms(d[len(d)-1]),
		}
	}
	return out
}

func percentilesUs(us []int32) map[string]float64 {
	s := append([]int32(nil), us...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	if len(s) == 0 {
		return map[string]float64{}
	}
	at := func(q float64) float64 { return float64(s[pidx(len(s), q)]) / 1000 }
	var sum float64
	for _, v := range s {
		sum += float64(v)
	}
	return map[string]float64{"p50": at(0.50), "p99": at(0.99), "p999": at(0.999), "max": float64(s[len(s)-1]) / 1000,
		"mean": sum / float64(len(s)) / 1000}
}

// pidx: nearest-rank percentile index.
func pidx(n int, q float64) int {
	i := int(q*float64(n)+0.999999) - 1
	if i < 0 {
		i = 0
	}
	if i >= n {
		i = n - 1
	}
	return i
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return tv(ru.Utime) + tv(ru.Stime)
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
