// The orchestrator side of the group scenarios: each member process as the scenarios see it (its assignment,
// records, events and errors, from the JSON events it prints; see group_member.go), and the waits and checks
// over the members.
package main

import (
	"bufio"
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
)

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
