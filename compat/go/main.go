// Fjord compatibility client: franz-go (kgo + kadm).
// Usage: fjord-compat-go BOOTSTRAP SCENARIO   (exit 0 = pass)
package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

var scenarios = map[string]func(ctx context.Context, bootstrap string, adm *kadm.Client) error{
	"connect":      connect,
	"admin-topics": adminTopics,
}

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
	err = retry(func() error {
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
	return retry(func() error {
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

// retry runs f until it succeeds or 10 s pass (metadata propagation).
func retry(f func() error) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := f()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func main() {
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
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.MetadataMinAge(100*time.Millisecond))
	if err != nil {
		fmt.Fprintln(os.Stderr, "kgo.NewClient:", err)
		os.Exit(1)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Second)
	defer cancel()
	if err := scenario(ctx, bootstrap, kadm.NewClient(cl)); err != nil {
		fmt.Fprintln(os.Stderr, "FAIL:", err)
		cl.Close()
		os.Exit(1)
	}
}
