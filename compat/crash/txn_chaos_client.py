"""Fjord transaction chaos test, client side: a confluent-kafka (librdkafka) consume-transform-produce loop.

  txn_chaos_client.py setup BOOTSTRAP IN OUT PARTITIONS COUNT
      Creates IN and OUT (PARTITIONS each) and writes COUNT records to IN, value "<n>", round the partitions.
  txn_chaos_client.py run BOOTSTRAP IN OUT GROUP STOPFILE LOGFILE
      One read_committed group member and a transactional producer (transactional.id GROUP-txn): each
      transaction reads up to 10 records, writes each to OUT (key "<partition>-<offset>" of the input), sends
      the consumed offsets with send_offsets_to_transaction and commits. An abortable error aborts and rewinds
      the consumer to the committed offsets; a retriable one retries the call. Every transactional call is
      timed: LOGFILE gets a JSON line as each call begins ({"call", "begin"}: epoch seconds) and one as it ends
      ({"call", "ms", "error"}). Stops after the transaction in progress once STOPFILE exists. Exits 0, or 1 on
      a fatal error. TXN_CHAOS_PRODUCER_CONF='{"key": "value"}' adds librdkafka settings to the producer's;
      TXN_CHAOS_DEBUG=eos,... sets its `debug` (logged on stderr).
  txn_chaos_client.py verify BOOTSTRAP IN OUT GROUP PARTITIONS
      Prints a JSON summary: the group's committed offsets on IN, and the check that read_committed OUT holds
      each input record below those offsets exactly once and nothing else.
"""
import json
import os
import sys
import time

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

CALL_TIMEOUT_S = 300  # long on purpose: the test measures how long each call blocks
RECONNECT = {"reconnect.backoff.ms": 100, "reconnect.backoff.max.ms": 1000}


def setup(bootstrap, topic_in, topic_out, partitions, count):
    admin = AdminClient({"bootstrap.servers": bootstrap})
    futures = admin.create_topics([NewTopic(t, num_partitions=int(partitions), replication_factor=1) for t in (topic_in, topic_out)])
    for f in futures.values():
        f.result(timeout=30)
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    for n in range(int(count)):
        while True:
            try:
                producer.produce(topic_in, value=str(n).encode(), partition=n % int(partitions))
                break
            except BufferError:  # the local queue is full: wait for deliveries
                producer.poll(0.1)
    if producer.flush(30) != 0:
        raise RuntimeError("input records not delivered")


def run(bootstrap, topic_in, topic_out, group, stop_file, log_file):
    log = open(log_file, "a", buffering=1)
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "isolation.level": "read_committed",
                         "enable.auto.commit": False, "auto.offset.reset": "earliest", **RECONNECT})
    extra = json.loads(os.environ.get("TXN_CHAOS_PRODUCER_CONF", "{}"))
    if os.environ.get("TXN_CHAOS_DEBUG"):
        extra["debug"] = os.environ["TXN_CHAOS_DEBUG"]
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": f"{group}-txn", "linger.ms": 5, **RECONNECT, **extra})

    def timed(call, fn, *args):
        """Runs one transactional call, retrying it while its error is retriable; logs every attempt."""
        while True:
            start = time.monotonic()
            log.write(json.dumps({"call": call, "begin": time.time()}) + "\n")
            try:
                fn(*args)
                log.write(json.dumps({"call": call, "ms": round((time.monotonic() - start) * 1000), "error": None}) + "\n")
                return
            except KafkaException as e:
                err = e.args[0]
                log.write(json.dumps({"call": call, "ms": round((time.monotonic() - start) * 1000), "error": str(err)}) + "\n")
                if err.fatal():
                    raise
                if not err.retriable() or err.txn_requires_abort():
                    raise

    def rewind():
        assignment = consumer.assignment()
        if assignment:
            for tp in consumer.committed(assignment, timeout=CALL_TIMEOUT_S):
                consumer.seek(TopicPartition(tp.topic, tp.partition, tp.offset if tp.offset >= 0 else 0))

    timed("init_transactions", producer.init_transactions, CALL_TIMEOUT_S)
    consumer.subscribe([topic_in])
    while not os.path.exists(stop_file):
        msgs = [m for m in consumer.consume(10, 0.5) if not m.error()]
        if not msgs:
            continue
        try:
            producer.begin_transaction()
            for m in msgs:
                producer.produce(topic_out, key=f"{m.partition()}-{m.offset()}".encode(), value=m.value())
            positions = consumer.position(consumer.assignment())
            timed("send_offsets_to_transaction", producer.send_offsets_to_transaction, positions,
                  consumer.consumer_group_metadata(), CALL_TIMEOUT_S)
            timed("commit_transaction", producer.commit_transaction, CALL_TIMEOUT_S)
        except KafkaException as e:
            if e.args[0].fatal() or not e.args[0].txn_requires_abort():
                raise
            timed("abort_transaction", producer.abort_transaction, CALL_TIMEOUT_S)
            rewind()
        time.sleep(0.02)
    consumer.close()


def read_committed_keys(bootstrap, topic, partitions):
    """Every key of TOPIC at read_committed, up to the last stable offsets (the position passes the markers)."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "txn-chaos-verify", "enable.auto.commit": False,
                         "isolation.level": "read_committed"})
    try:
        tps = [TopicPartition(topic, p) for p in range(partitions)]
        ends = {p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1] for p in range(partitions)}
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(partitions)])
        keys, deadline = [], time.monotonic() + 60
        while time.monotonic() < deadline:
            keys += [m.key().decode() for m in consumer.consume(500, timeout=0.5) if not m.error()]
            if all(tp.offset >= ends[tp.partition] for tp in consumer.position(tps)):
                return keys
        raise RuntimeError(f"read_committed reached {consumer.position(tps)}, end offsets {ends} (timed out)")
    finally:
        consumer.close()


def verify(bootstrap, topic_in, topic_out, group, partitions):
    partitions = int(partitions)
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False})
    committed = {tp.partition: max(tp.offset, 0) for tp in consumer.committed(
        [TopicPartition(topic_in, p) for p in range(partitions)], timeout=30)}
    consumer.close()
    seen = {}
    for k in read_committed_keys(bootstrap, topic_out, partitions):
        seen[k] = seen.get(k, 0) + 1
    expected = {f"{p}-{o}" for p in range(partitions) for o in range(committed[p])}
    problems = [f"{k} read {seen.get(k, 0)} times" for k in sorted(expected) if seen.get(k, 0) != 1]
    problems += [f"{k} read but beyond the committed offsets" for k in sorted(set(seen) - expected)]
    print(json.dumps({"committed": committed, "records": sum(committed.values()), "problems": problems[:10]}))


if __name__ == "__main__":
    modes = {"setup": setup, "run": run, "verify": verify}
    if len(sys.argv) < 2 or sys.argv[1] not in modes:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    try:
        modes[sys.argv[1]](*sys.argv[2:])
    except Exception as e:  # noqa: BLE001
        print(f"FAIL: {type(e).__name__}: {e}", file=sys.stderr)
        sys.exit(1)
