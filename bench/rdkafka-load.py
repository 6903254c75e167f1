"""librdkafka (confluent-kafka) as the benchmark's second opinion; bench/run.ts runs it with
compat/python/.venv's interpreter and reads the one JSON line it prints.

  rdkafka-load.py produce BOOTSTRAP TOPIC RECORDS SIZE ACKS COMPRESSION
      RECORDS values of SIZE bytes as fast as the client allows; per-record latency is librdkafka's
      own (Message.latency(): produce() to delivery report), so Python's overhead is not in it.
  rdkafka-load.py consume BOOTSTRAP TOPIC RECORDS
      reads RECORDS from the start of every partition (assign, no group), MB/s from the first record.
  rdkafka-load.py e2e BOOTSTRAP TOPIC RATE SECONDS SIZE
      one record every 1/RATE s for SECONDS, each carrying its send time; a consumer on the same topic
      (assigned at the end) measures send to receive.

Producer settings mirror the Java client's defaults (linger.ms=5, batch.size=16384, 5 in flight,
idempotent with acks=all), so that both load generators send comparable requests.
"""
import json
import sys
import time

from confluent_kafka import Consumer, Producer, TopicPartition

MIB = 1 << 20


def percentiles(xs, ps):
    xs = sorted(xs)
    return {name: xs[min(len(xs) - 1, int(p * len(xs)))] if xs else None for name, p in ps.items()}


def producer(bootstrap, acks, compression, linger_ms=5):
    return Producer({
        "bootstrap.servers": bootstrap,
        "acks": acks,
        "enable.idempotence": acks == "all",
        "compression.type": compression,
        "linger.ms": linger_ms,
        "batch.size": 16384,
        "max.in.flight.requests.per.connection": 5,
        "queue.buffering.max.kbytes": 32 * 1024,
    })


def partitions_of(client, topic):
    md = client.list_topics(topic, timeout=10)
    return sorted(md.topics[topic].partitions)


def produce(bootstrap, topic, records, size, acks, compression):
    p = producer(bootstrap, acks, compression)
    value = b"x" * size
    latencies = []
    failed = [0]

    def report(err, msg):
        if err is not None:
            failed[0] += 1
        else:
            latencies.append(msg.latency())

    t0 = time.monotonic()
    for _ in range(records):
        while True:
            try:
                p.produce(topic, value, on_delivery=report)
                break
            except BufferError:  # the local queue is full: wait for deliveries
                p.poll(0.005)
        p.poll(0)
    p.flush(120)
    seconds = time.monotonic() - t0
    ms = {k: v * 1000 for k, v in percentiles(latencies, {"p50": 0.5, "p99": 0.99, "p999": 0.999}).items()}
    return {"type": "produce", "records": len(latencies), "failed": failed[0], "seconds": seconds,
            "recordsPerSec": len(latencies) / seconds, "mbPerSec": len(latencies) * size / MIB / seconds, "latencyMs": ms}


def consume(bootstrap, topic, records):
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "bench-rdkafka", "enable.auto.commit": False,
                  "fetch.wait.max.ms": 500})
    c.assign([TopicPartition(topic, p, 0) for p in partitions_of(c, topic)])  # OFFSET 0: the beginning
    n = nbytes = 0
    t0 = None
    deadline = time.monotonic() + 300
    while n < records and time.monotonic() < deadline:
        for m in c.consume(10000, 1.0):
            if m.error():
                continue
            if t0 is None:
                t0 = time.monotonic()
            n += 1
            nbytes += len(m.value())
    seconds = time.monotonic() - (t0 or time.monotonic())
    c.close()
    return {"type": "consume", "records": n, "bytes": nbytes, "seconds": seconds,
            "mbPerSec": nbytes / MIB / seconds if seconds else 0}


def e2e(bootstrap, topic, rate, seconds, size):
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "bench-rdkafka-e2e", "enable.auto.commit": False,
                  "fetch.wait.max.ms": 500})
    c.assign([TopicPartition(topic, p, -1) for p in partitions_of(c, topic)])  # OFFSET_END
    p = producer(bootstrap, "1", "none", linger_ms=0)
    pad = b"x" * max(0, size - 20)
    # Warm-up: the first records pay for connections and the consumer's first fetch.
    for _ in range(20):
        p.produce(topic, b"warmup")
        p.flush(10)
    latencies = []
    start = time.monotonic()
    sent = 0
    interval = 1.0 / rate
    while time.monotonic() - start < seconds:
        due = start + sent * interval
        now = time.monotonic()
        if now >= due:
            p.produce(topic, b"%020d" % time.monotonic_ns() + pad)
            sent += 1
            p.poll(0)
        for m in c.consume(100, max(0.0, min(interval, due - now))):
            if not m.error() and m.value() != b"warmup":
                latencies.append((time.monotonic_ns() - int(m.value()[:20])) / 1e6)
    p.flush(10)
    deadline = time.monotonic() + 5
    while len(latencies) < sent and time.monotonic() < deadline:
        for m in c.consume(100, 0.1):
            if not m.error() and m.value() != b"warmup":
                latencies.append((time.monotonic_ns() - int(m.value()[:20])) / 1e6)
    c.close()
    return {"type": "e2e", "sent": sent, "received": len(latencies),
            "latencyMs": percentiles(latencies, {"p50": 0.5, "p99": 0.99, "p999": 0.999})}


def main():
    mode, args = sys.argv[1], sys.argv[2:]
    if mode == "produce":
        out = produce(args[0], args[1], int(args[2]), int(args[3]), args[4], args[5])
    elif mode == "consume":
        out = consume(args[0], args[1], int(args[2]))
    elif mode == "e2e":
        out = e2e(args[0], args[1], float(args[2]), float(args[3]), int(args[4]))
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
