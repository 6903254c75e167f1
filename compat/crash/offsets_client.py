"""Fjord group-offsets restart test, client side: confluent-kafka (librdkafka) in a consumer group.

  offsets_client.py setup   BOOTSTRAP TOPIC PARTITIONS COUNT
      Creates the topic and produces records key-<i> for i in 0..COUNT-1 (acks=all).
  offsets_client.py consume BOOTSTRAP TOPIC GROUP PARTITIONS LIMIT
      Reads the group's committed offsets (OffsetFetch, with their metadata), then subscribes in GROUP and reads
      LIMIT records, or every record up to the end offsets if LIMIT is "all"; commits, synchronously, the offset
      after the last record read on each partition, with metadata "compat:<partition>:<offset>"; closes.
      Prints one JSON line: {"before": {p: [offset, metadata]}, "first": {p: offset}, "keys": [i, ...],
      "committed": {p: offset}, "ends": {p: offset}}  (offset -1001: nothing committed)
"""
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition  # noqa: E402
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402


def setup(bootstrap, topic, partitions, count):
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, num_partitions=int(partitions), replication_factor=1)], operation_timeout=15)[topic].result(timeout=30)
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 5})
    errors = []
    for i in range(int(count)):
        producer.produce(topic, b"value", f"key-{i}".encode(), on_delivery=lambda err, msg: err and errors.append(err))
        producer.poll(0)
    left = producer.flush(30)
    if errors or left:
        raise RuntimeError(f"produce failed: {errors[:3]}, {left} undelivered")


def consume(bootstrap, topic, group, partitions, limit):
    partitions = int(partitions)
    tps = [TopicPartition(topic, p) for p in range(partitions)]
    consumer = Consumer({
        "bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False, "auto.offset.reset": "earliest",
        "session.timeout.ms": 10000, "heartbeat.interval.ms": 500,
    })
    try:
        before = {tp.partition: [tp.offset, tp.metadata] for tp in fetch_committed(consumer, tps)}
        ends = {p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1] for p in range(partitions)}
        consumer.subscribe([topic])
        first, last, keys = {}, {}, []
        deadline = time.monotonic() + 45
        while time.monotonic() < deadline:
            if limit == "all":
                if all((last[p] + 1 if p in last else max(before[p][0], 0)) >= ends[p] for p in range(partitions)):
                    break
            elif len(keys) >= int(limit):
                break
            for msg in consume_some(consumer):
                p = msg.partition()
                first.setdefault(p, msg.offset())
                last[p] = msg.offset()
                keys.append(int(msg.key().decode()[4:]))
        else:
            raise RuntimeError(f"timed out: read {len(keys)} records, limit {limit}, positions {last}, ends {ends}")
        commits = [TopicPartition(topic, p, o + 1, metadata=f"compat:{p}:{o + 1}") for p, o in sorted(last.items())]
        committed = {}
        if commits:
            for tp in consumer.commit(offsets=commits, asynchronous=False):
                if tp.error:
                    raise KafkaException(tp.error)
                committed[tp.partition] = tp.offset
        print(json.dumps({"before": before, "first": first, "keys": keys, "committed": committed, "ends": ends}))
    finally:
        consumer.close()


def fetch_committed(consumer, tps):
    """consumer.committed(), retried while the coordinator is not ready: librdkafka's committed() does not retry
    NOT_COORDINATOR / COORDINATOR_LOAD_IN_PROGRESS (a broker that just started, or creating __consumer_offsets)."""
    deadline = time.monotonic() + 30
    while True:
        try:
            return consumer.committed(tps, timeout=10)
        except KafkaException as e:
            if not e.args[0].retriable() and e.args[0].code() not in (KafkaError.NOT_COORDINATOR, KafkaError.COORDINATOR_LOAD_IN_PROGRESS,
                                                                       KafkaError.COORDINATOR_NOT_AVAILABLE) or time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def consume_some(consumer):
    msgs = consumer.consume(100, timeout=0.2)
    for msg in msgs:
        if msg.error():
            raise KafkaException(msg.error())
    return msgs


if __name__ == "__main__":
    {"setup": setup, "consume": consume}[sys.argv[1]](*sys.argv[2:])
