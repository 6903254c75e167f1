// The cluster rows' side of franz-go (compat/cluster/cluster-test.js drives them against a 3-broker cluster):
// the bootstrap list, the replication factor of the topics a scenario creates, and the cluster-produce mode.
package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// seeds is the client option for BOOTSTRAP, one host:port or a comma-separated list (a cluster).
func seeds(bootstrap string) kgo.Opt {
	return kgo.SeedBrokers(strings.Split(bootstrap, ",")...)
}

// replicationFactor of the topics a scenario creates: 3 when the cluster rows run it, else 1.
func replicationFactor() int16 {
	if rf, err := strconv.Atoi(os.Getenv("FJORD_COMPAT_REPLICATION_FACTOR")); err == nil {
		return int16(rf)
	}
	return 1
}

// txnPause is a pause after each committed transaction: the cluster rows (FJORD_COMPAT_TXN_PAUSE_MS) stretch
// the transactional loop so that the harness can kill the transaction coordinator's broker mid-run.
var txnPause = func() time.Duration {
	ms, _ := strconv.Atoi(os.Getenv("FJORD_COMPAT_TXN_PAUSE_MS"))
	return time.Duration(ms) * time.Millisecond
}()

// clusterProduce is the cluster-produce mode: an idempotent acks=all producer (kgo's defaults) sends count
// records key "seq-<n>" at about 500/s through a partition leader's death and prints "ack <n> <partition>
// <offset>" for each acknowledgement.
func clusterProduce(bootstrap, topic string, count int) error {
	cl, err := kgo.NewClient(seeds(bootstrap), kgo.MetadataMinAge(100*time.Millisecond), kgo.ProducerLinger(5*time.Millisecond),
		kgo.RequiredAcks(kgo.AllISRAcks()), kgo.RecordDeliveryTimeout(60*time.Second))
	if err != nil {
		return err
	}
	defer cl.Close()
	var mu sync.Mutex
	var failed []string
	var wg sync.WaitGroup
	for n := 0; n < count; n++ {
		wg.Add(1)
		record := &kgo.Record{Topic: topic, Key: []byte(fmt.Sprintf("seq-%d", n)), Value: []byte(strconv.Itoa(n))}
		cl.Produce(context.Background(), record, func(r *kgo.Record, err error) {
			defer wg.Done()
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				failed = append(failed, fmt.Sprintf("%s: %v", r.Key, err))
				return
			}
			fmt.Printf("ack %s %d %d\n", r.Value, r.Partition, r.Offset)
		})
		if n%10 == 9 {
			time.Sleep(20 * time.Millisecond)
		}
	}
	wg.Wait()
	if len(failed) > 0 {
		return fmt.Errorf("%d deliveries failed: %v", len(failed), failed[:min(5, len(failed))])
	}
	return nil
}
