// Produces the fixture message set with franz-go (kgo), used by capture-fixtures.ts:
//
//	go run . BOOTSTRAP TOPIC CODEC BIGVALUE_FILE
package main

import (
	"context"
	"os"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

func main() {
	boot, topic, codec, bigFile := os.Args[1], os.Args[2], os.Args[3], os.Args[4]
	big, err := os.ReadFile(bigFile)
	if err != nil {
		panic(err)
	}
	codecs := map[string]kgo.CompressionCodec{
		"none": kgo.NoCompression(), "gzip": kgo.GzipCompression(), "snappy": kgo.SnappyCompression(),
		"lz4": kgo.Lz4Compression(), "zstd": kgo.ZstdCompression(),
	}
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(boot),
		kgo.ProducerBatchCompression(codecs[codec]),
		kgo.ProducerLinger(200*time.Millisecond),
		kgo.ProducerBatchMaxBytes(1000000),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.AllowAutoTopicCreation(),
	)
	if err != nil {
		panic(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	recs := []*kgo.Record{
		{Topic: topic, Key: []byte("k1"), Value: []byte("hello"), Headers: []kgo.RecordHeader{{Key: "h1", Value: []byte("v1")}}},
		{Topic: topic, Value: []byte("no-key")},
		{Topic: topic, Key: []byte("big"), Value: big},
		{Topic: topic, Key: []byte("k4")},
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		panic(err)
	}
}
