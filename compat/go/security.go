// The security rows (compat/security/rows.js): the broker's endpoints and certificate files come in FJORD_SEC_*
// variables; users are admin, alice and bob, each with password NAME-secret.
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/oauth"
	saslplain "github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// securityTransports: SSL, mutual TLS, then each SASL mechanism over SASL_SSL.
var securityTransports = []string{"SSL", "MTLS", "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER"}

func secEnv(name string) string {
	v := os.Getenv(name)
	if v == "" {
		panic(name + " is not set (the security rows run under compat/run.js)")
	}
	return v
}

// unsecuredJws is an unsecured JWS (alg none) as Kafka's OAuthBearerUnsecuredLoginCallbackHandler makes: sub, iat, exp.
func unsecuredJws(sub string) string {
	b64 := func(v any) string {
		b, _ := json.Marshal(v)
		return base64.RawURLEncoding.EncodeToString(b)
	}
	now := time.Now().Unix()
	return b64(map[string]string{"alg": "none"}) + "." + b64(map[string]any{"sub": sub, "iat": now, "exp": now + 3600}) + "."
}

// securityOpts: the client options of a transport as user; SASL over SASL_SSL, or SASL_PLAINTEXT if !useTLS.
func securityOpts(transport, user string, useTLS bool) ([]kgo.Opt, error) {
	endpoint := secEnv("FJORD_SEC_SASL_PLAINTEXT")
	switch {
	case transport == "SSL" || transport == "MTLS":
		endpoint = secEnv("FJORD_SEC_" + transport)
	case useTLS:
		endpoint = secEnv("FJORD_SEC_SASL_SSL")
	}
	opts := []kgo.Opt{kgo.SeedBrokers(endpoint), kgo.MetadataMinAge(100 * time.Millisecond)}
	if useTLS {
		ca, err := os.ReadFile(secEnv("FJORD_SEC_CA"))
		if err != nil {
			return nil, err
		}
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(ca)
		cfg := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
		if transport == "MTLS" {
			cert, err := tls.LoadX509KeyPair(secEnv("FJORD_SEC_CLIENT_CERT"), secEnv("FJORD_SEC_CLIENT_KEY"))
			if err != nil {
				return nil, err
			}
			cfg.Certificates = []tls.Certificate{cert}
		}
		opts = append(opts, kgo.DialTLSConfig(cfg))
	}
	password := user + "-secret"
	switch transport {
	case "PLAIN":
		opts = append(opts, kgo.SASL(saslplain.Auth{User: user, Pass: password}.AsMechanism()))
	case "SCRAM-SHA-256":
		opts = append(opts, kgo.SASL(scram.Auth{User: user, Pass: password}.AsSha256Mechanism()))
	case "SCRAM-SHA-512":
		opts = append(opts, kgo.SASL(scram.Auth{User: user, Pass: password}.AsSha512Mechanism()))
	case "OAUTHBEARER":
		opts = append(opts, kgo.SASL(oauth.Auth{Token: unsecuredJws(user)}.AsMechanism()))
	}
	return opts, nil
}

// pollValues polls until n values or ctx ends; the values and the first fetch error.
func pollValues(ctx context.Context, cl *kgo.Client, n int) ([]string, error) {
	var values []string
	for len(values) < n && ctx.Err() == nil {
		fetches := cl.PollFetches(ctx)
		for _, e := range fetches.Errors() {
			if !errors.Is(e.Err, context.DeadlineExceeded) && !errors.Is(e.Err, context.Canceled) {
				return values, e.Err
			}
		}
		fetches.EachRecord(func(r *kgo.Record) { values = append(values, string(r.Value)) })
	}
	return values, nil
}

func securityClient(transport, user string, useTLS bool, extra ...kgo.Opt) (*kgo.Client, error) {
	opts, err := securityOpts(transport, user, useTLS)
	if err != nil {
		return nil, err
	}
	return kgo.NewClient(append(opts, extra...)...)
}

func fromStart(topic string) kgo.Opt {
	return kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}})
}

// secureProduceConsume: per transport, 20 records produced and read back exactly as alice (SSL: anonymous).
func secureProduceConsume(ctx context.Context, _ string, adm *kadm.Client) error {
	for _, t := range securityTransports {
		topic := "secure-franz-go-" + strings.ToLower(t)
		if _, err := adm.CreateTopic(ctx, 1, 1, nil, topic); err != nil {
			return fmt.Errorf("CreateTopic %s: %w", topic, err)
		}
		cl, err := securityClient(t, "alice", true, fromStart(topic))
		if err != nil {
			return fmt.Errorf("%s: %w", t, err)
		}
		var sent []string
		var records []*kgo.Record
		for i := 0; i < 20; i++ {
			v := fmt.Sprintf("%s record %d \u00e9", t, i)
			sent = append(sent, v)
			records = append(records, &kgo.Record{Topic: topic, Key: []byte("k" + strconv.Itoa(i)), Value: []byte(v)})
		}
		if err := cl.ProduceSync(ctx, records...).FirstErr(); err != nil {
			cl.Close()
			return fmt.Errorf("%s: produce: %w", t, err)
		}
		pollCtx, cancel := context.WithTimeout(ctx, 20*time.Second)
		got, err := pollValues(pollCtx, cl, 20)
		cancel()
		cl.Close()
		if err != nil || strings.Join(got, "|") != strings.Join(sent, "|") {
			return fmt.Errorf("%s: read back %q (error %v), expected %q", t, got, err, sent)
		}
		fmt.Printf("%s: 20 records produced and read back\n", t) // progress, shown if a later transport times out
	}
	fmt.Printf("produced and consumed 20 records over %s\n", strings.Join(securityTransports, ", "))
	return nil
}

// aclDenials (FJORD_SEC_PHASE denied, then allowed): alice over SASL_PLAINTEXT with PLAIN.
func aclDenials(ctx context.Context, _ string, _ *kadm.Client) error {
	topic := "acl-franz-go"
	pollCtx := func() (context.Context, context.CancelFunc) { return context.WithTimeout(ctx, 15*time.Second) }
	if secEnv("FJORD_SEC_PHASE") == "allowed" {
		cl, err := securityClient("PLAIN", "alice", false, fromStart(topic))
		if err != nil {
			return err
		}
		defer cl.Close()
		c, cancel := pollCtx()
		defer cancel()
		got, err := pollValues(c, cl, 5)
		if err != nil || len(got) < 5 || strings.Join(got[:5], ",") != "r0,r1,r2,r3,r4" {
			return fmt.Errorf("read %q (error %v) after the READ grant", got, err)
		}
		fmt.Println("after the READ grant: " + topic + " read group-less")
		return nil
	}
	expect := func(what string, want error, opts ...kgo.Opt) error {
		cl, err := securityClient("PLAIN", "alice", false, opts...)
		if err != nil {
			return err
		}
		defer cl.Close()
		c, cancel := pollCtx()
		defer cancel()
		got, err := pollValues(c, cl, 1)
		if !errors.Is(err, want) {
			return fmt.Errorf("%s: read %q, error %v, expected %v", what, got, err, want)
		}
		return nil
	}
	if err := expect("group-less read without READ", kerr.TopicAuthorizationFailed, fromStart(topic)); err != nil {
		return err
	}
	if err := expect("group acl-denied-franz-go", kerr.GroupAuthorizationFailed, kgo.ConsumerGroup("acl-denied-franz-go"), kgo.ConsumeTopics(topic)); err != nil {
		return err
	}
	cl, err := securityClient("PLAIN", "alice", false, kgo.TransactionalID("acl-txn-franz-go"))
	if err != nil {
		return err
	}
	defer cl.Close()
	err = cl.BeginTransaction()
	if err == nil {
		err = cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte("txn")}).FirstErr()
	}
	if !errors.Is(err, kerr.TransactionalIDAuthorizationFailed) {
		return fmt.Errorf("transactional produce with id acl-txn-franz-go: %v, expected %v", err, kerr.TransactionalIDAuthorizationFailed)
	}
	fmt.Println("fetch: TOPIC_AUTHORIZATION_FAILED; group: GROUP_AUTHORIZATION_FAILED; transactional id: TRANSACTIONAL_ID_AUTHORIZATION_FAILED")
	return nil
}

// throttleHook records the throttle times the broker answers with (kgo's OnBrokerThrottle).
type throttleHook struct {
	mu    sync.Mutex
	count int
	max   time.Duration
}

func (h *throttleHook) OnBrokerThrottle(_ kgo.BrokerMetadata, d time.Duration, _ bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if d > 0 {
		h.count++
		h.max = max(h.max, d)
	}
}

// quotaThrottle: a producer (client id quota-franz-go, over PLAINTEXT) sends 10 KiB records as fast as it can for
// 26 s; over the last 20 s (after the first burst the broker lets through and its pay-back) its acknowledged bytes
// per second must be within 10% of producer_byte_rate, and the broker must have answered with throttle times.
func quotaThrottle(ctx context.Context, bootstrap string, adm *kadm.Client) error {
	quota, _ := strconv.ParseFloat(secEnv("FJORD_SEC_QUOTA_BYTE_RATE"), 64)
	topic := "quota-franz-go"
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, topic); err != nil {
		return fmt.Errorf("CreateTopic %s: %w", topic, err)
	}
	hook := &throttleHook{}
	cl, err := kgo.NewClient(seeds(bootstrap), kgo.ClientID("quota-franz-go"), kgo.WithHooks(hook), kgo.MaxBufferedBytes(1<<20),
		kgo.ProducerLinger(5*time.Millisecond), kgo.DefaultProduceTopic(topic), kgo.ProducerBatchMaxBytes(64<<10), // as Java's batch.size here
		kgo.ProducerBatchCompression(kgo.NoCompression())) // the quota counts bytes on the wire: kgo compresses (snappy) by default
	if err != nil {
		return err
	}
	defer cl.Close()
	var acked atomic.Int64
	var failed atomic.Value
	value := make([]byte, 10*1024)
	start := time.Now()
	var measureStart time.Time
	var ackedAtMeasureStart int64 = -1
	for time.Since(start) < 26*time.Second && failed.Load() == nil {
		if ackedAtMeasureStart < 0 && time.Since(start) >= 6*time.Second {
			measureStart, ackedAtMeasureStart = time.Now(), acked.Load()
		}
		cl.Produce(ctx, &kgo.Record{Value: value}, func(_ *kgo.Record, err error) {
			if err != nil {
				failed.CompareAndSwap(nil, err)
			} else {
				acked.Add(int64(len(value)))
			}
		})
	}
	rate := float64(acked.Load()-ackedAtMeasureStart) / time.Since(measureStart).Seconds()
	if e := failed.Load(); e != nil {
		return fmt.Errorf("produce: %v", e)
	}
	hook.mu.Lock()
	summary := fmt.Sprintf("%.0f bytes/s acknowledged over the last 20 s under producer_byte_rate=%.0f (%.1f%%); %d throttled responses, at most %v",
		rate, quota, 100*rate/quota, hook.count, hook.max)
	hook.mu.Unlock()
	if rate < 0.9*quota || rate > 1.1*quota {
		return errors.New("not within 10% of the quota: " + summary)
	}
	if hook.count == 0 {
		return errors.New("no throttle time in any response: " + summary)
	}
	fmt.Println(summary)
	return nil
}
