// The group-member mode of the group scenarios (`fjord-compat-go BOOTSTRAP group-member JSON`): one member
// process. A member is a kgo client with ConsumerGroup (kgo's default balancer: cooperative-sticky; with
// "protocol": "consumer", kgo.ServerSideBalancer: KIP-848, the broker's uniform assignor and its session settings),
// BlockRebalanceOnPoll, and a commit of everything polled when partitions are revoked; it prints one JSON event
// a line and closes when it reads "close" on stdin:
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
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

type memberOpts struct {
	Name       string `json:"name"`
	Topic      string `json:"topic"`
	Group      string `json:"group"`
	SessionMs  int    `json:"sessionMs"`
	InstanceID string `json:"instanceId,omitempty"`
	Protocol   string `json:"protocol,omitempty"` // "classic" (the default) or "consumer"
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
		seeds(bootstrap), kgo.ClientID("fjord-compat-go-" + o.Name), kgo.MetadataMinAge(100 * time.Millisecond),
		kgo.ConsumerGroup(o.Group), kgo.ConsumeTopics(o.Topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.RebalanceTimeout(rebalanceTimeoutMs * time.Millisecond), kgo.AutoCommitInterval(commitIntervalMs * time.Millisecond),
		kgo.FetchMaxWait(250 * time.Millisecond), kgo.BlockRebalanceOnPoll(),
		kgo.OnPartitionsAssigned(callback("assigned")), kgo.OnPartitionsRevoked(callback("revoked")), kgo.OnPartitionsLost(callback("lost")),
	}
	if o.InstanceID != "" {
		opts = append(opts, kgo.InstanceID(o.InstanceID))
	}
	if o.Protocol == "consumer" {
		opts = append(opts, kgo.ServerSideBalancer()) // the session timeout and heartbeat interval are the broker's
	} else {
		opts = append(opts, kgo.SessionTimeout(time.Duration(o.SessionMs)*time.Millisecond), kgo.HeartbeatInterval(heartbeatMs*time.Millisecond))
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
