package main

// The cluster-admin-partitions row (compat/cluster/partitions-test.js starts a 3-broker cluster): partition
// management through kadm alone, brokers a, b, c the cluster's three ids in order. The steps and checks are
// Partitions.java's:
//  1. a 1-partition topic on [a, b] with 3 MiB of records;
//  2. AlterBrokerConfigs / AlterTopicConfigs (IncrementalAlterConfigs): the replication throttles at 1 B/s on
//     every broker and on the partition's replicas (leader 0:a,0:b, follower 0:c), as kafka-reassign-partitions
//     --throttle sets them; DescribeBrokerConfigs shows them;
//  3. AlterPartitionAssignments to [b, c]: ListPartitionReassignments shows it (adding c, removing a) and, 2 s
//     later, still (the throttle holds it); DescribeAllLogDirs: c's copy is smaller than a's log;
//  4. the throttles deleted: the move completes, replicas [b, c] in sync, a without the partition's log;
//  5. AlterPartitionAssignments to [c, b] (a reorder): the leader stays; ElectLeaders (preferred) moves it to c;
//     a second ElectLeaders answers ELECTION_NOT_NEEDED.

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"slices"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

const (
	adminRecordBytes = 10240
	adminRecords     = 300
)

var throttleRates = []string{"leader.replication.throttled.rate", "follower.replication.throttled.rate"}

// clusterAdminPartitionsTimeout: the move waits for the throttle; the default scenario bound is too short.
const clusterAdminPartitionsTimeout = 120 * time.Second

func clusterAdminPartitions(ctx context.Context, bootstrap string, adm *kadm.Client) error {
	md, err := adm.BrokerMetadata(ctx)
	if err != nil {
		return fmt.Errorf("Metadata: %w", err)
	}
	ids := md.Brokers.NodeIDs()
	slices.Sort(ids)
	if len(ids) != 3 {
		return fmt.Errorf("expected 3 brokers, got %v", ids)
	}
	a, b, c := ids[0], ids[1], ids[2]
	topic := fmt.Sprintf("compat-go-adminp-%d", time.Now().UnixNano())
	set := kadm.TopicsSet{}
	set.Add(topic, 0)

	create := kmsg.NewPtrCreateTopicsRequest()
	create.TimeoutMillis = 30000
	ct := kmsg.NewCreateTopicsRequestTopic()
	ct.Topic, ct.NumPartitions, ct.ReplicationFactor = topic, -1, -1
	assignment := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
	assignment.Partition, assignment.Replicas = 0, []int32{a, b}
	ct.ReplicaAssignment = append(ct.ReplicaAssignment, assignment)
	create.Topics = append(create.Topics, ct)
	// kadm creates topics by partition count only: the assignment goes in a CreateTopics request of our own.
	kc, err := kgo.NewClient(seeds(bootstrap))
	if err != nil {
		return err
	}
	defer kc.Close()
	resp, err := create.RequestWith(ctx, kc)
	if err == nil {
		err = kerr.ErrorForCode(resp.Topics[0].ErrorCode)
	}
	if err != nil {
		return fmt.Errorf("CreateTopics %s on [%d %d]: %w", topic, a, b, err)
	}
	random := rand.New(rand.NewSource(15))
	var records []*kgo.Record
	for i := 0; i < adminRecords; i++ {
		value := make([]byte, adminRecordBytes)
		random.Read(value)
		records = append(records, &kgo.Record{Topic: topic, Partition: 0, Key: key(i), Value: value})
	}
	if err := retry(metadataTimeout, func() error { return produce(ctx, bootstrap, records, kgo.RecordPartitioner(kgo.ManualPartitioner())) }); err != nil {
		return err
	}

	if err := alterThrottles(ctx, adm, ids, topic, a, b, c, kadm.SetConfig); err != nil {
		return err
	}
	err = retry(metadataTimeout, func() error {
		described, err := adm.DescribeBrokerConfigs(ctx, c)
		if err != nil {
			return err
		}
		for _, rc := range described {
			for _, cfg := range rc.Configs {
				if cfg.Key == "follower.replication.throttled.rate" && cfg.Value != nil && *cfg.Value == "1" && cfg.Source == kmsg.ConfigSourceDynamicBrokerConfig {
					return nil
				}
			}
		}
		return fmt.Errorf("DescribeBrokerConfigs of broker %d: no dynamic follower.replication.throttled.rate=1: %+v", c, described)
	})
	if err != nil {
		return err
	}

	var move kadm.AlterPartitionAssignmentsReq
	move.Assign(topic, 0, []int32{b, c})
	if err := alterAssignments(ctx, adm, move); err != nil {
		return err
	}
	listed, err := moveListed(ctx, adm, set, topic, a, c)
	if err != nil {
		return err
	}
	time.Sleep(2 * time.Second)
	if _, err := moveListed(ctx, adm, set, topic, a, c); err != nil {
		return err
	}
	sizes, err := logSizes(ctx, adm, set, topic)
	if err != nil {
		return err
	}
	if copied, ok := sizes[c]; !ok || copied >= sizes[a] {
		return fmt.Errorf("DescribeAllLogDirs under the throttle: %s-0 sizes by broker %v (the copy on %d should be smaller than the log on %d)", topic, sizes, c, a)
	}

	if err := alterThrottles(ctx, adm, ids, topic, a, b, c, kadm.DeleteConfig); err != nil {
		return err
	}
	err = retry(60*time.Second, func() error {
		listed, err := adm.ListPartitionReassignments(ctx, set)
		if err != nil {
			return err
		}
		if _, ok := listed[topic][0]; ok {
			return fmt.Errorf("the move of %s-0 still listed after the throttle was removed: %+v", topic, listed[topic][0])
		}
		p, err := partitionDetail(ctx, adm, topic)
		if err != nil {
			return err
		}
		if !slices.Equal(p.Replicas, []int32{b, c}) || len(p.ISR) != 2 {
			return fmt.Errorf("after the move: replicas %v, isr %v", p.Replicas, p.ISR)
		}
		return nil
	})
	if err != nil {
		return err
	}
	err = retry(30*time.Second, func() error {
		sizes, err := logSizes(ctx, adm, set, topic)
		if err != nil {
			return err
		}
		if _, ok := sizes[a]; ok {
			return fmt.Errorf("broker %d still has %s-0's log (DescribeAllLogDirs: %v)", a, topic, sizes)
		}
		return nil
	})
	if err != nil {
		return err
	}

	var reorder kadm.AlterPartitionAssignmentsReq
	reorder.Assign(topic, 0, []int32{c, b})
	if err := alterAssignments(ctx, adm, reorder); err != nil {
		return err
	}
	var reordered kadm.PartitionDetail
	err = retry(30*time.Second, func() error {
		reordered, err = partitionDetail(ctx, adm, topic)
		if err == nil && !slices.Equal(reordered.Replicas, []int32{c, b}) {
			err = fmt.Errorf("after the reorder: replicas %v", reordered.Replicas)
		}
		return err
	})
	if err != nil {
		return err
	}
	if reordered.Leader != b {
		return fmt.Errorf("after the reorder to [%d %d] the leader changed from %d to %d", c, b, b, reordered.Leader)
	}
	elected, err := adm.ElectLeaders(ctx, kadm.ElectPreferredReplica, set)
	if err != nil {
		return fmt.Errorf("ElectLeaders: %w", err)
	}
	if r, ok := elected[topic][0]; !ok || r.Err != nil {
		return fmt.Errorf("ElectLeaders preferred: %+v", elected)
	}
	err = retry(metadataTimeout, func() error {
		p, err := partitionDetail(ctx, adm, topic)
		if err == nil && p.Leader != c {
			err = fmt.Errorf("after ElectLeaders preferred: leader %d, replicas %v", p.Leader, p.Replicas)
		}
		return err
	})
	if err != nil {
		return err
	}
	again, err := adm.ElectLeaders(ctx, kadm.ElectPreferredReplica, set)
	if err != nil {
		return fmt.Errorf("ElectLeaders: %w", err)
	}
	if r, ok := again[topic][0]; !ok || !errors.Is(r.Err, kerr.ElectionNotNeeded) {
		return fmt.Errorf("a second ElectLeaders preferred: %+v", again)
	}
	final, err := logSizes(ctx, adm, set, topic)
	if err != nil {
		return err
	}
	holders := make([]int32, 0, len(final))
	for id := range final {
		holders = append(holders, id)
	}
	slices.Sort(holders)
	if !slices.Equal(holders, []int32{b, c}) {
		return fmt.Errorf("DescribeAllLogDirs: %s-0 on brokers %v", topic, holders)
	}
	fmt.Printf("moved %s-0 from [%d %d] to [%d %d] under a throttle (listed: %s; copy %d of %d bytes), throttle deleted, move completed; "+
		"reordered to [%d %d] and elected %d (then ELECTION_NOT_NEEDED); logs on %v\n", topic, a, b, b, c, listed, sizes[c], sizes[a], c, b, c, holders)
	return nil
}

// alterThrottles sets or deletes the throttles kafka-reassign-partitions --throttle sets: both rates on every broker,
// the partition's current replicas as leader-throttled and the new one (c) as follower-throttled.
func alterThrottles(ctx context.Context, adm *kadm.Client, ids []int32, topic string, a, b, c int32, op kadm.IncrementalOp) error {
	one := "1"
	var rates []kadm.AlterConfig
	for _, name := range throttleRates {
		rates = append(rates, kadm.AlterConfig{Op: op, Name: name, Value: &one})
	}
	altered, err := adm.AlterBrokerConfigs(ctx, rates, ids...)
	if err == nil {
		err = firstAlterError(altered)
	}
	if err != nil {
		return fmt.Errorf("AlterBrokerConfigs (op %d): %w", op, err)
	}
	leaders := fmt.Sprintf("0:%d,0:%d", a, b)
	followers := "0:" + strconv.Itoa(int(c))
	altered, err = adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{
		{Op: op, Name: "leader.replication.throttled.replicas", Value: &leaders},
		{Op: op, Name: "follower.replication.throttled.replicas", Value: &followers},
	}, topic)
	if err == nil {
		err = firstAlterError(altered)
	}
	if err != nil {
		return fmt.Errorf("AlterTopicConfigs (op %d): %w", op, err)
	}
	return nil
}

func firstAlterError(altered kadm.AlterConfigsResponses) error {
	for _, r := range altered {
		if r.Err != nil {
			return fmt.Errorf("%s: %w (%s)", r.Name, r.Err, r.ErrMessage)
		}
	}
	return nil
}

func alterAssignments(ctx context.Context, adm *kadm.Client, req kadm.AlterPartitionAssignmentsReq) error {
	altered, err := adm.AlterPartitionAssignments(ctx, req)
	if err == nil {
		err = altered.Error()
	}
	if err != nil {
		return fmt.Errorf("AlterPartitionAssignments %v: %w", req, err)
	}
	return nil
}

// moveListed checks that ListPartitionReassignments shows the move of the partition (adding c, removing a).
func moveListed(ctx context.Context, adm *kadm.Client, set kadm.TopicsSet, topic string, a, c int32) (string, error) {
	var text string
	err := retry(metadataTimeout, func() error {
		listed, err := adm.ListPartitionReassignments(ctx, set)
		if err != nil {
			return err
		}
		r, ok := listed[topic][0]
		if !ok || !slices.Equal(r.AddingReplicas, []int32{c}) || !slices.Equal(r.RemovingReplicas, []int32{a}) || len(r.Replicas) != 3 {
			return fmt.Errorf("ListPartitionReassignments for %s-0: %+v", topic, listed)
		}
		text = fmt.Sprintf("replicas %v adding %v removing %v", r.Replicas, r.AddingReplicas, r.RemovingReplicas)
		return nil
	})
	return text, err
}

// logSizes: the partition's log size on each broker that has one (DescribeAllLogDirs).
func logSizes(ctx context.Context, adm *kadm.Client, set kadm.TopicsSet, topic string) (map[int32]int64, error) {
	all, err := adm.DescribeAllLogDirs(ctx, set)
	if err != nil {
		return nil, fmt.Errorf("DescribeAllLogDirs: %w", err)
	}
	sizes := map[int32]int64{}
	for id, dirs := range all {
		if p, ok := dirs.LookupPartition(topic, 0); ok {
			sizes[id] = p.Size
		}
	}
	return sizes, nil
}

func partitionDetail(ctx context.Context, adm *kadm.Client, topic string) (kadm.PartitionDetail, error) {
	md, err := adm.Metadata(ctx, topic)
	if err != nil {
		return kadm.PartitionDetail{}, err
	}
	p, ok := md.Topics[topic].Partitions[0]
	if !ok {
		return kadm.PartitionDetail{}, fmt.Errorf("no partition 0 of %s in the metadata", topic)
	}
	return p, nil
}
