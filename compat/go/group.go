// The consumer-group scenarios for franz-go: the same steps and checks as compat/lib/group.js (group-consume,
// group-rebalance, group-static; read the description there).
//
// Each member is this program in group-member mode (group_member.go), a process of its own, so that
// group-rebalance can SIGKILL it (kgo's Close leaves the group). group_orchestrator.go follows the member
// processes through the events they print, and holds the waits and checks over them.
package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

const (
	groupPartitions    = 6
	heartbeatMs        = 500
	rebalanceSessionMs = 6000 // group.min.session.timeout.ms's default: the shortest a broker allows
	sessionMs          = 10000
	rebalanceTimeoutMs = 20000
	commitIntervalMs   = 500
)

type groupEnv struct {
	ctx       context.Context
	bootstrap string
	adm       *kadm.Client
	protocol  string // the members' group protocol: "classic", or "consumer" (KIP-848, kgo.ServerSideBalancer)
}

func (g *groupEnv) produce(topic string, lo, hi int) error {
	records := make([]*kgo.Record, 0, hi-lo)
	for i := lo; i < hi; i++ {
		records = append(records, &kgo.Record{Topic: topic, Key: key(i), Value: value(i), Headers: headers(i)})
	}
	return produce(g.ctx, g.bootstrap, records)
}

func (g *groupEnv) start(ms *[]*member, o memberOpts) (*member, error) {
	o.Protocol = g.protocol
	m, err := startMember(g.bootstrap, o)
	if err == nil {
		*ms = append(*ms, m)
	}
	return m, err
}

func killAll(ms *[]*member) {
	for _, m := range *ms {
		m.kill()
	}
}

// checkGroupType: with the consumer protocol, the group is a consumer group (kgo falls back to the classic
// protocol where the broker lacks ConsumerGroupHeartbeat v1: that is no pass).
func (g *groupEnv) checkGroupType(group string) error {
	if g.protocol != "consumer" {
		return nil
	}
	listed, err := g.adm.ListGroups(g.ctx)
	if err != nil {
		return fmt.Errorf("ListGroups: %w", err)
	}
	if kind := listed[group].GroupType; kind != "consumer" {
		return fmt.Errorf("group %s is of type %q, expected \"consumer\" (the consumer protocol)", group, kind)
	}
	return nil
}

// groupScenario runs a group scenario with the members on the group protocol given ("classic" or "consumer": the
// -consumer rows, where the broker assigns and its group.consumer.* session timeout and heartbeat interval apply).
func groupScenario(run func(g *groupEnv) (string, error), protocol string) func(ctx context.Context, bootstrap string, adm *kadm.Client) error {
	return func(ctx context.Context, bootstrap string, adm *kadm.Client) error {
		summary, err := run(&groupEnv{ctx, bootstrap, adm, protocol})
		if err == nil {
			fmt.Println(summary)
		}
		return err
	}
}

func groupConsume(g *groupEnv) (string, error) {
	topic, err := createTopic(g.ctx, g.adm, "gc", groupPartitions, nil)
	if err != nil {
		return "", err
	}
	if err := g.produce(topic, 0, 600); err != nil {
		return "", err
	}
	group := topic + "-group"
	var ms []*member
	defer killAll(&ms)
	for _, n := range []string{"m0", "m1", "m2"} {
		if _, err := g.start(&ms, memberOpts{Name: n, Topic: topic, Group: group, SessionMs: sessionMs}); err != nil {
			return "", err
		}
	}
	if err := waitFor(func() bool { return len(read(ms, 0, 600)) == 600 }, 30*time.Second, "the three members did not read all 600 records", ms); err != nil {
		return "", err
	}
	if err := waitSettled(ms, 20*time.Second, "the group did not settle with three members owning all 6 partitions"); err != nil {
		return "", err
	}
	if err := g.checkGroupType(group); err != nil {
		return "", err
	}
	if err := noErrors(ms); err != nil {
		return "", err
	}
	if err := noDuplicates(ms, 0, 600); err != nil {
		return "", err
	}
	assignments := owned(ms)
	for _, m := range ms {
		if err := m.close(); err != nil {
			return "", fmt.Errorf("%s did not close cleanly: %v: %s", m.name, err, m.show())
		}
	}
	if err := checkCommittedAtEnd(g.ctx, g.adm, group, topic); err != nil {
		return "", err
	}
	return "600 records read once each; assignments " + assignments + "; committed offsets = end offsets", nil
}

// checkCommittedAtEnd: the group's committed offsets on the topic's groupPartitions partitions are their end offsets.
func checkCommittedAtEnd(ctx context.Context, adm *kadm.Client, group, topic string) error {
	committed, err := adm.FetchOffsets(ctx, group)
	if err == nil {
		err = committed.Error()
	}
	if err != nil {
		return fmt.Errorf("OffsetFetch: %w", err)
	}
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		return fmt.Errorf("ListEndOffsets: %w", err)
	}
	for p := int32(0); p < groupPartitions; p++ {
		c, _ := committed.Lookup(topic, p)
		e, _ := ends.Lookup(topic, p)
		if c.At != e.Offset {
			return fmt.Errorf("partition %d: committed offset %d, expected the end offset %d (committed: %v)", p, c.At, e.Offset, committed)
		}
	}
	return nil
}

func groupRebalance(g *groupEnv) (string, error) {
	topic, err := createTopic(g.ctx, g.adm, "gr", groupPartitions, nil)
	if err != nil {
		return "", err
	}
	group := topic + "-group"
	var ms []*member
	defer killAll(&ms)
	for _, n := range []string{"m0", "m1", "m2"} {
		if _, err := g.start(&ms, memberOpts{Name: n, Topic: topic, Group: group, SessionMs: rebalanceSessionMs}); err != nil {
			return "", err
		}
	}
	if err := waitSettled(ms, 30*time.Second, "the group did not settle with three members owning all 6 partitions"); err != nil {
		return "", err
	}
	if err := g.checkGroupType(group); err != nil {
		return "", err
	}
	if err := g.produce(topic, 0, 300); err != nil {
		return "", err
	}
	if err := waitFor(func() bool { return len(read(ms, 0, 300)) == 300 }, 20*time.Second, "records 0..299 not all read before the kill", ms); err != nil {
		return "", err
	}
	victim, survivors := ms[2], ms[:2]
	victimHad := victim.owned()
	t0 := time.Now()
	victim.kill()
	if err := g.produce(topic, 300, 600); err != nil {
		return "", err
	}
	if err := waitFor(func() bool { return settled(survivors) }, (rebalanceSessionMs+20000)*time.Millisecond,
		fmt.Sprintf("%s's partitions %v did not move to the survivors", victim.name, victimHad), survivors); err != nil {
		return "", err
	}
	moved := time.Since(t0).Milliseconds()
	low, high := int64(rebalanceSessionMs-heartbeatMs-1000), int64(rebalanceSessionMs+2*heartbeatMs+2500)
	if moved < low {
		return "", fmt.Errorf("the partitions moved %d ms after the kill, before the %d ms session could expire (the member process got SIGKILL)", moved, rebalanceSessionMs)
	}
	if moved > high {
		return "", fmt.Errorf("the partitions moved %d ms after the kill, later than session timeout %d ms + rejoin (%d ms)", moved, rebalanceSessionMs, high)
	}
	if err := waitFor(func() bool { return len(read(survivors, 300, 600)) == 300 }, 20*time.Second, "records 300..599 (produced after the kill) not all read by the survivors", survivors); err != nil {
		return "", err
	}
	if err := noErrors(survivors); err != nil {
		return "", err
	}
	if err := noDuplicates(survivors, 300, 600); err != nil {
		return "", err
	}
	after := owned(survivors)
	for _, m := range survivors {
		m.close()
	}
	return fmt.Sprintf("%s %v killed (the member process got SIGKILL); %s %d ms later; records 300..599 all read", victim.name, victimHad, after, moved), nil
}

func groupStatic(g *groupEnv) (string, error) {
	topic, err := createTopic(g.ctx, g.adm, "gs", groupPartitions, nil)
	if err != nil {
		return "", err
	}
	group := topic + "-group"
	opts := func(name, id string) memberOpts {
		return memberOpts{Name: name, Topic: topic, Group: group, SessionMs: sessionMs, InstanceID: group + "-" + id}
	}
	var ms []*member
	defer killAll(&ms)
	first, err := g.start(&ms, opts("a", "a"))
	if err != nil {
		return "", err
	}
	if err := waitFor(func() bool { return len(first.owned()) == groupPartitions }, 30*time.Second, "the first static member did not get all 6 partitions", ms); err != nil {
		return "", err
	}
	second, err := g.start(&ms, opts("b", "b"))
	if err != nil {
		return "", err
	}
	if err := waitSettled([]*member{first, second}, 30*time.Second, "the group did not settle with two static members"); err != nil {
		return "", err
	}
	if err := g.checkGroupType(group); err != nil {
		return "", err
	}
	if err := g.produce(topic, 0, 200); err != nil {
		return "", err
	}
	if err := waitFor(func() bool { return len(read(ms, 0, 200)) == 200 }, 20*time.Second, "records 0..199 not all read", ms); err != nil {
		return "", err
	}
	first.mu.Lock()
	eventsBefore, genBefore := len(first.events), first.generation
	first.mu.Unlock()
	assignmentBefore, secondHad := fmt.Sprint(first.owned()), fmt.Sprint(second.owned())
	if err := second.close(); err != nil {
		return "", fmt.Errorf("%s did not close cleanly: %v: %s", second.name, err, second.show())
	}
	t0 := time.Now()
	again, err := g.start(&ms, opts("b2", "b"))
	if err != nil {
		return "", err
	}
	if err := waitFor(func() bool { return len(again.owned()) > 0 }, sessionMs*time.Millisecond,
		fmt.Sprintf("the restarted static member got no partitions within the %d ms session timeout", sessionMs), ms); err != nil {
		return "", err
	}
	rejoin := time.Since(t0)
	if err := g.produce(topic, 200, 400); err != nil {
		return "", err
	}
	if err := waitFor(func() bool { return len(read([]*member{first, again}, 200, 400)) == 200 }, 20*time.Second, "records 200..399 not all read after the restart", ms); err != nil {
		return "", err
	}
	if left := 2*time.Second - (time.Since(t0) - rejoin); left > 0 {
		time.Sleep(left)
	}
	first.mu.Lock()
	var extra []string
	for j := eventsBefore; j < len(first.events); j++ {
		extra = append(extra, fmt.Sprintf("%s at +%d ms", first.events[j], first.eventTimes[j].Sub(t0).Milliseconds()))
	}
	genAfter := first.generation
	first.mu.Unlock()
	if len(extra) > 0 {
		return "", fmt.Errorf("the restart of static member b rebalanced the group: member a saw %s", strings.Join(extra, ", "))
	}
	if got := fmt.Sprint(first.owned()); got != assignmentBefore {
		return "", fmt.Errorf("member a's assignment changed: %s -> %s", assignmentBefore, got)
	}
	if genBefore != nil && genAfter != nil && *genBefore != *genAfter {
		return "", fmt.Errorf("member a's generation changed: %d -> %d", *genBefore, *genAfter)
	}
	if got := fmt.Sprint(again.owned()); got != secondHad {
		return "", fmt.Errorf("the restarted member got %s, it had %s", got, secondHad)
	}
	if err := noErrors([]*member{first, again}); err != nil {
		return "", err
	}
	if err := noDuplicates(ms, 0, 400); err != nil {
		return "", err
	}
	first.close()
	again.close()
	gen := ""
	if genBefore != nil {
		gen = fmt.Sprintf(" generation %d", *genBefore)
	}
	return fmt.Sprintf("static member b %s restarted and rejoined in %d ms; member a %s%s saw no rebalance", secondHad, rejoin.Milliseconds(), assignmentBefore, gen), nil
}
