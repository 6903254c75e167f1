// The consumer-group scenarios for franz-go: the same steps and checks as compat/lib/group.js (group-consume,
// group-rebalance, group-static; read the description there).
//
// Each member is this program in group-member mode (`fjord-compat-go BOOTSTRAP group-member JSON`), a process of
// its own, so that group-rebalance can SIGKILL it (kgo's Close leaves the group). A member is a kgo client with
// ConsumerGroup (kgo's default balancer: cooperative-sticky), BlockRebalanceOnPoll, and a commit of everything
// polled when partitions are revoked; it prints one JSON event a line and closes when it reads "close" on stdin:
//
//	{"ev": "assigned"|"revoked"|"lost", "partitions": [...], "generation": G}
//	{"ev": "generation", "generation": G}    when kgo's GroupMetadata shows a new generation
//	{"ev": "rec", "p": partition, "o": offset, "k": key}, {"ev": "error", "error": text}, {"ev": "closed"}
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
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

type memberOpts struct {
	Name       string `json:"name"`
	Topic      string `json:"topic"`
	Group      string `json:"group"`
	SessionMs  int    `json:"sessionMs"`
	InstanceID string `json:"instanceId,omitempty"`
}

type event struct {
	Ev         string  `json:"ev"`
	Partitions []int32 `json:"partitions,omitempty"`
	Generation *int32  `json:"generation,omitempty"`
	P          int32   `json:"p,omitempty"`
	O          int64   `json:"o,omitempty"`
	K          string  `json:"k,omitempty"`
	Error      string  `json:"error,omitempty"`
}

// groupMember is the group-member mode: one kgo group consumer until "close" on stdin.
func groupMember(bootstrap string, o memberOpts) error {
	var mu sync.Mutex
	enc := json.NewEncoder(os.Stdout)
	emit := func(e event) {
		mu.Lock()
		defer mu.Unlock()
		enc.Encode(e)
	}
	callback := func(ev string) func(context.Context, *kgo.Client, map[string][]int32) {
		return func(ctx context.Context, cl *kgo.Client, m map[string][]int32) {
			if ev == "revoked" {
				// What the default OnPartitionsRevoked does, but for every polled record: this member has
				// handled (printed) a record once PollFetches returned it.
				if err := cl.CommitUncommittedOffsets(ctx); err != nil {
					emit(event{Ev: "error", Error: fmt.Sprintf("commit on revoke: %v", err)})
				}
			}
			_, gen := cl.GroupMetadata()
			emit(event{Ev: ev, Partitions: append([]int32{}, m[o.Topic]...), Generation: &gen})
		}
	}
	opts := []kgo.Opt{
		kgo.SeedBrokers(bootstrap), kgo.ClientID("fjord-compat-go-" + o.Name), kgo.MetadataMinAge(100 * time.Millisecond),
		kgo.ConsumerGroup(o.Group), kgo.ConsumeTopics(o.Topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.SessionTimeout(time.Duration(o.SessionMs) * time.Millisecond), kgo.HeartbeatInterval(heartbeatMs * time.Millisecond),
		kgo.RebalanceTimeout(rebalanceTimeoutMs * time.Millisecond), kgo.AutoCommitInterval(commitIntervalMs * time.Millisecond),
		kgo.FetchMaxWait(250 * time.Millisecond), kgo.BlockRebalanceOnPoll(),
		kgo.OnPartitionsAssigned(callback("assigned")), kgo.OnPartitionsRevoked(callback("revoked")), kgo.OnPartitionsLost(callback("lost")),
	}
	if o.InstanceID != "" {
		opts = append(opts, kgo.InstanceID(o.InstanceID))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return err
	}
	closing := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() && !strings.Contains(sc.Text(), "close") {
		}
		close(closing) // "close", or the orchestrator went away
	}()
	lastGen := int32(-1)
	for {
		if _, gen := cl.GroupMetadata(); gen != lastGen {
			lastGen = gen
			emit(event{Ev: "generation", Generation: &gen})
		}
		select {
		case <-closing:
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			if err := cl.CommitUncommittedOffsets(ctx); err != nil {
				emit(event{Ev: "error", Error: fmt.Sprintf("commit: %v", err)})
			}
			cancel()
			cl.CloseAllowingRebalance() // LeaveGroup unless static
			emit(event{Ev: "closed"})
			return nil
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		fetches := cl.PollFetches(ctx)
		cancel()
		fetches.EachError(func(t string, p int32, err error) {
			if err != context.DeadlineExceeded {
				emit(event{Ev: "error", Error: fmt.Sprintf("fetch %s[%d]: %v", t, p, err)})
			}
		})
		fetches.EachRecord(func(r *kgo.Record) { emit(event{Ev: "rec", P: r.Partition, O: r.Offset, K: string(r.Key)}) })
		cl.AllowRebalance()
	}
}

// ----- the orchestrator side -----

type rec struct {
	p      int32
	o      int64
	i      int
	member string
}

type member struct {
	name       string
	cmd        *exec.Cmd
	stdin      interface{ Write([]byte) (int, error) }
	mu         sync.Mutex
	assignment map[int32]bool
	events     []string // "ev [partitions] at time"
	eventTimes []time.Time
	records    []rec
	errors     []string
	generation *int32
	lastEvent  time.Time
	done       chan struct{}
	exitErr    error
}

var keyRe = regexp.MustCompile(`^key-(\d+)$`)

func startMember(bootstrap string, o memberOpts) (*member, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	js, _ := json.Marshal(o)
	m := &member{name: o.Name, assignment: map[int32]bool{}, lastEvent: time.Now(), done: make(chan struct{})}
	m.cmd = exec.Command(self, bootstrap, "group-member", string(js))
	stdin, _ := m.cmd.StdinPipe()
	m.stdin = stdin
	stdout, _ := m.cmd.StdoutPipe()
	stderr, _ := m.cmd.StderrPipe()
	if err := m.cmd.Start(); err != nil {
		return nil, err
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			var e event
			if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
				m.addError(sc.Text())
				continue
			}
			m.event(e)
		}
	}()
	go func() {
		defer wg.Done()
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if strings.TrimSpace(sc.Text()) != "" {
				m.addError(sc.Text())
			}
		}
	}()
	go func() {
		wg.Wait()
		m.exitErr = m.cmd.Wait()
		close(m.done)
	}()
	return m, nil
}

func (m *member) addError(s string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(s) > 300 {
		s = s[:300]
	}
	m.errors = append(m.errors, s)
}

func (m *member) event(e event) {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch e.Ev {
	case "rec":
		k := keyRe.FindStringSubmatch(e.K)
		if k == nil {
			m.errors = append(m.errors, fmt.Sprintf("unexpected key %q at %d/%d", e.K, e.P, e.O))
			return
		}
		i, _ := strconv.Atoi(k[1])
		m.records = append(m.records, rec{e.P, e.O, i, m.name})
		return
	case "error":
		m.errors = append(m.errors, e.Error)
		return
	case "closed":
		return
	case "generation":
		m.generation = e.Generation
		return
	case "assigned":
		for _, p := range e.Partitions {
			m.assignment[p] = true
		}
	case "revoked", "lost":
		for _, p := range e.Partitions {
			delete(m.assignment, p)
		}
	default:
		m.errors = append(m.errors, fmt.Sprintf("unknown event %+v", e))
		return
	}
	if e.Generation != nil {
		m.generation = e.Generation
	}
	m.events = append(m.events, fmt.Sprintf("%s %v", e.Ev, e.Partitions))
	m.eventTimes = append(m.eventTimes, time.Now())
	m.lastEvent = time.Now()
}

func (m *member) alive() bool {
	select {
	case <-m.done:
		return false
	default:
		return true
	}
}

func (m *member) kill() {
	if m.alive() {
		m.cmd.Process.Kill()
	}
	<-m.done
}

// close asks the member to close (commit; LeaveGroup unless static) and waits; its exit error.
func (m *member) close() error {
	if m.alive() {
		m.stdin.Write([]byte("close\n"))
		select {
		case <-m.done:
		case <-time.After(20 * time.Second):
			m.kill()
			return fmt.Errorf("did not close within 20 s")
		}
	}
	return m.exitErr
}

func (m *member) owned() []int32 {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := []int32{}
	for p := range m.assignment {
		out = append(out, p)
	}
	sort.Slice(out, func(a, b int) bool { return out[a] < out[b] })
	return out
}

func (m *member) show() string {
	m.mu.Lock()
	n, errs, gen := len(m.records), m.errors, m.generation
	m.mu.Unlock()
	s := fmt.Sprintf("%s: %v %d records", m.name, m.owned(), n)
	if gen != nil {
		s += fmt.Sprintf(" gen %d", *gen)
	}
	if !m.alive() {
		s += fmt.Sprintf(" exited (%v)", m.exitErr)
	}
	if len(errs) > 0 {
		if len(errs) > 3 {
			errs = errs[len(errs)-3:]
		}
		s += " errors: " + strings.Join(errs, " | ")
	}
	return s
}

func showAll(ms []*member) string {
	parts := make([]string, len(ms))
	for i, m := range ms {
		parts[i] = m.show()
	}
	return strings.Join(parts, "; ")
}

func owned(ms []*member) string {
	parts := make([]string, len(ms))
	for i, m := range ms {
		parts[i] = fmt.Sprintf("%s %v", m.name, m.owned())
	}
	return strings.Join(parts, ", ")
}

func waitFor(cond func() bool, d time.Duration, what string, ms []*member) error {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return fmt.Errorf("%s (after %v): %s", what, d, showAll(ms))
		}
		time.Sleep(25 * time.Millisecond)
	}
	return nil
}

func settled(ms []*member) bool {
	all := map[int32]bool{}
	for _, m := range ms {
		o := m.owned()
		if !m.alive() || len(o) == 0 {
			return false
		}
		for _, p := range o {
			if all[p] {
				return false
			}
			all[p] = true
		}
	}
	return len(all) == groupPartitions
}

func waitSettled(ms []*member, d time.Duration, what string) error {
	return waitFor(func() bool {
		if !settled(ms) {
			return false
		}
		for _, m := range ms {
			m.mu.Lock()
			quiet := time.Since(m.lastEvent) >= time.Second
			m.mu.Unlock()
			if !quiet {
				return false
			}
		}
		return true
	}, d, what, ms)
}

// read: the distinct record indexes in [lo, hi) the members read.
func read(ms []*member, lo, hi int) map[int]bool {
	seen := map[int]bool{}
	for _, m := range ms {
		m.mu.Lock()
		for _, r := range m.records {
			if r.i >= lo && r.i < hi {
				seen[r.i] = true
			}
		}
		m.mu.Unlock()
	}
	return seen
}

func noDuplicates(ms []*member, lo, hi int) error {
	where := map[int]rec{}
	for _, m := range ms {
		m.mu.Lock()
		records := append([]rec{}, m.records...)
		m.mu.Unlock()
		for _, r := range records {
			if r.i < lo || r.i >= hi {
				continue
			}
			if prev, ok := where[r.i]; ok {
				return fmt.Errorf("record key-%d read twice: by %s at %d/%d and by %s at %d/%d", r.i, prev.member, prev.p, prev.o, r.member, r.p, r.o)
			}
			where[r.i] = r
		}
	}
	return nil
}

func noErrors(ms []*member) error {
	for _, m := range ms {
		m.mu.Lock()
		errs := m.errors
		m.mu.Unlock()
		if len(errs) > 0 {
			if len(errs) > 5 {
				errs = errs[:5]
			}
			return fmt.Errorf("%s reported errors: %s", m.name, strings.Join(errs, " | "))
		}
	}
	return nil
}

type groupEnv struct {
	ctx       context.Context
	bootstrap string
	adm       *kadm.Client
}

func (g *groupEnv) produce(topic string, lo, hi int) error {
	records := make([]*kgo.Record, 0, hi-lo)
	for i := lo; i < hi; i++ {
		records = append(records, &kgo.Record{Topic: topic, Key: key(i), Value: value(i), Headers: headers(i)})
	}
	return produce(g.ctx, g.bootstrap, records)
}

func (g *groupEnv) start(ms *[]*member, o memberOpts) (*member, error) {
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

func groupScenario(run func(g *groupEnv) (string, error)) func(ctx context.Context, bootstrap string, adm *kadm.Client) error {
	return func(ctx context.Context, bootstrap string, adm *kadm.Client) error {
		summary, err := run(&groupEnv{ctx, bootstrap, adm})
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
