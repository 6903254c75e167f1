"""Fjord crash test, client side: confluent-kafka (librdkafka) idempotent producer and group-less reader.

  crash_client.py create  BOOTSTRAP TOPIC PARTITIONS
  crash_client.py produce BOOTSTRAP TOPIC SESSION COUNT ACKFILE
      Sends key "seq-<n>", value "<SESSION>:<n>" for n in 0..COUNT-1, skipping every n that ACKFILE already
      lists as acknowledged, at about 1000 records/s; appends "<SESSION> <n> <partition> <offset>" to ACKFILE
      as each acknowledgement arrives (line-buffered: a SIGKILL loses none that were written). Exits 0 once
      every record is acknowledged, 1 if any delivery failed.
  crash_client.py txn-produce BOOTSTRAP TOPIC PARTITIONS COUNT LOGFILE
      A transactional producer (transactional.id TOPIC-txn) runs transactions t = 1..COUNT, each writing
      key "txn-<t>-<j>", value "<t>:<j>" for j in 0..TXN_RECORDS-1 round the partitions; every ABORT_EVERY-th
      is aborted (after a flush: its records are in the log), the others committed: a commit that fails with a
      retriable error is retried, one that fails with an abortable error is aborted. Appends "committed <t>" or
      "aborted <t>" to LOGFILE (line-buffered) once the outcome is known. Exits 0 after the last transaction.
  crash_client.py end     BOOTSTRAP TOPIC PARTITIONS
      Writes one record with key "end" on each partition, outside any transaction.
  crash_client.py dump    BOOTSTRAP TOPIC PARTITIONS [ISOLATION]
      Prints "<partition> <offset> <key> <value>" for every record, from the beginning to the end offsets
      (ISOLATION: read_uncommitted, the default, or read_committed).
"""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

from confluent_kafka import KafkaException, Producer  # noqa: E402
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402

from confluent_client import consume_all, produce as produce_records  # noqa: E402

TXN_RECORDS = 10
ABORT_EVERY = 5
TXN_TIMEOUT_S = 60  # for each transactional call


def create(bootstrap, topic, partitions):
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, num_partitions=int(partitions), replication_factor=1)], operation_timeout=15)[topic].result(timeout=30)


def produce(bootstrap, topic, session, count, ack_path):
    acked = set()
    if os.path.exists(ack_path):
        with open(ack_path) as f:
            acked = {int(line.split()[1]) for line in f if len(line.split()) == 4}
    producer = Producer({
        "bootstrap.servers": bootstrap, "enable.idempotence": True, "acks": "all", "linger.ms": 5,
        "message.timeout.ms": 60000, "reconnect.backoff.ms": 100, "reconnect.backoff.max.ms": 500, "retry.backoff.ms": 100,
    })
    out = open(ack_path, "a", buffering=1)
    failed = []

    def report(err, msg):
        if err:
            failed.append(f"{msg.key().decode()}: {err}")
        else:
            out.write(f"{session} {msg.key().decode()[4:]} {msg.partition()} {msg.offset()}\n")
    sent = 0
    for n in range(int(count)):
        if n in acked:
            continue
        producer.produce(topic, f"{session}:{n}".encode(), f"seq-{n}".encode(), on_delivery=report)
        producer.poll(0)
        sent += 1
        if sent % 20 == 0:
            time.sleep(0.02)
    left = producer.flush(90)
    if failed or left:
        print(f"FAIL: {len(failed)} deliveries failed, {left} undelivered: {failed[:5]}", file=sys.stderr)
        sys.exit(1)


def commit(producer):
    """Commits the transaction; True if committed, False if it had to be aborted."""
    while True:
        try:
            producer.commit_transaction(TXN_TIMEOUT_S)
            return True
        except KafkaException as e:
            if e.args[0].retriable():
                continue
            if e.args[0].txn_requires_abort():
                producer.abort_transaction(TXN_TIMEOUT_S)
                return False
            raise


def txn_produce(bootstrap, topic, partitions, count, log_path):
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": f"{topic}-txn", "linger.ms": 5,
                         "reconnect.backoff.ms": 100, "reconnect.backoff.max.ms": 500, "retry.backoff.ms": 100})
    producer.init_transactions(TXN_TIMEOUT_S)
    out = open(log_path, "a", buffering=1)
    for t in range(1, int(count) + 1):
        producer.begin_transaction()
        for j in range(TXN_RECORDS):
            producer.produce(topic, f"{t}:{j}".encode(), f"txn-{t}-{j}".encode(), partition=j % int(partitions))
        if t % ABORT_EVERY == 0:
            producer.flush(TXN_TIMEOUT_S)
            producer.abort_transaction(TXN_TIMEOUT_S)
            out.write(f"aborted {t}\n")
        else:
            out.write(f"{'committed' if commit(producer) else 'aborted'} {t}\n")
        time.sleep(0.02)


def end(bootstrap, topic, partitions):
    for p in range(int(partitions)):
        produce_records(bootstrap, topic, [(b"end", b"end", None, None)], partition=p)


def dump(bootstrap, topic, partitions, isolation="read_uncommitted"):
    for p, o, k, v, _ in consume_all(bootstrap, topic, int(partitions), **{"isolation.level": isolation}):
        print(p, o, k.decode(), v.decode())


if __name__ == "__main__":
    modes = {"create": create, "produce": produce, "txn-produce": txn_produce, "end": end, "dump": dump}
    if len(sys.argv) < 2 or sys.argv[1] not in modes:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    try:
        modes[sys.argv[1]](*sys.argv[2:])
    except Exception as e:  # noqa: BLE001
        print(f"FAIL: {type(e).__name__}: {e}", file=sys.stderr)
        sys.exit(1)
