// The data-path scenarios' records and checks (the same in every client program; see compat/lib/data.js).
package main

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

var codecs = []string{"none", "gzip", "snappy", "lz4", "zstd"}

var tag = []byte("fjørd")

func key(i int) []byte { return []byte(fmt.Sprintf("key-%d", i)) }

func value(i int) []byte {
	v := []byte(fmt.Sprintf("value-%d:", i))
	v = append(v, 0x00, 0xff, 0x0a)
	return append(v, strings.Repeat("fjord-compat ", 8)...)
}

func headers(i int) []kgo.RecordHeader {
	return []kgo.RecordHeader{{Key: "idx", Value: []byte(strconv.Itoa(i))}, {Key: "tag", Value: tag}}
}

func large(i int) []byte {
	v := make([]byte, 256*4096)
	for j := range v {
		v[j] = byte(j + i)
	}
	return v
}

// murmur2 is Kafka's (Utils.murmur2), written out here so that the check does not trust kgo's own copy.
func murmur2(data []byte) int32 {
	const m = uint32(0x5bd1e995)
	length := len(data)
	h := uint32(0x9747b28c) ^ uint32(length)
	n4 := length / 4
	for i := 0; i < n4; i++ {
		o := i * 4
		k := uint32(data[o]) | uint32(data[o+1])<<8 | uint32(data[o+2])<<16 | uint32(data[o+3])<<24
		k *= m
		k ^= k >> 24
		k *= m
		h *= m
		h ^= k
	}
	t := data[n4*4:]
	switch len(t) {
	case 3:
		h ^= uint32(t[2]) << 16
		fallthrough
	case 2:
		h ^= uint32(t[1]) << 8
		fallthrough
	case 1:
		h ^= uint32(t[0])
		h *= m
	}
	h ^= h >> 13
	h *= m
	h ^= h >> 15
	return int32(h)
}

func keyPartition(k []byte, partitions int) int32 {
	return (murmur2(k) & 0x7fffffff) % int32(partitions)
}

func showHeaders(hs []kgo.RecordHeader) string {
	parts := make([]string, len(hs))
	for i, h := range hs {
		parts[i] = fmt.Sprintf("%s=%q", h.Key, h.Value)
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// verifyRecords: exactly records 0..n-1, bytes intact, offsets and produce order increasing per partition.
func verifyRecords(records []*kgo.Record, n int) error {
	seen := map[int]bool{}
	type pos struct {
		offset int64
		i      int
	}
	last := map[int32]pos{}
	for _, r := range records {
		var i int
		if _, err := fmt.Sscanf(string(r.Key), "key-%d", &i); err != nil || string(key(i)) != string(r.Key) || i >= n {
			return fmt.Errorf("unexpected key %q at partition %d offset %d", r.Key, r.Partition, r.Offset)
		}
		if seen[i] {
			return fmt.Errorf("duplicate record key-%d (partition %d offset %d)", i, r.Partition, r.Offset)
		}
		seen[i] = true
		if !bytes.Equal(r.Value, value(i)) {
			return fmt.Errorf("key-%d: value %q, expected %q", i, r.Value, value(i))
		}
		if showHeaders(r.Headers) != showHeaders(headers(i)) {
			return fmt.Errorf("key-%d: headers %s, expected %s", i, showHeaders(r.Headers), showHeaders(headers(i)))
		}
		if p, ok := last[r.Partition]; ok && (r.Offset <= p.offset || i <= p.i) {
			return fmt.Errorf("partition %d out of order: key-%d at offset %d after key-%d at %d", r.Partition, i, r.Offset, p.i, p.offset)
		}
		last[r.Partition] = pos{r.Offset, i}
	}
	if len(records) != n {
		return fmt.Errorf("consumed %d records, expected %d (%d missing)", len(records), n, n-len(seen))
	}
	return nil
}

func verifyKeyed(records []*kgo.Record, n, partitions int) error {
	where := map[string]int32{}
	for _, r := range records {
		if p, ok := where[string(r.Key)]; ok && p != r.Partition {
			return fmt.Errorf("key %s on partitions %d and %d", r.Key, p, r.Partition)
		}
		where[string(r.Key)] = r.Partition
		if want := keyPartition(r.Key, partitions); r.Partition != want {
			return fmt.Errorf("key %s on partition %d, murmur2 says %d", r.Key, r.Partition, want)
		}
	}
	if len(records) != n {
		return fmt.Errorf("consumed %d records, expected %d", len(records), n)
	}
	return nil
}

func verifyLarge(records []*kgo.Record) error {
	if len(records) != 5 {
		return fmt.Errorf("consumed %d records, expected 5", len(records))
	}
	for i, r := range records {
		if string(r.Key) != fmt.Sprintf("large-%d", i) || !bytes.Equal(r.Value, large(i)) {
			return fmt.Errorf("record %d (key %s) differs: %d bytes", i, r.Key, len(r.Value))
		}
	}
	return nil
}

// timeQueries: T and the lookups {target timestamp, expected offset, -1 = after the last record}.
func timeQueries(count int) (int64, [][2]int64) {
	t := (time.Now().Unix() - 60) * 1000
	c := int64(count)
	return t, [][2]int64{{t - 500, 0}, {t, 0}, {t + 4000, 4}, {t + 4500, 5}, {t + (c-1)*1000, c - 1}, {t + c*1000, -1}}
}

func init() {
	if murmur2([]byte("21")) != -973932308 || murmur2([]byte("foobar")) != -790332482 {
		panic("murmur2 self-test failed")
	}
}
