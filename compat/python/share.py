"""share-queue and share-dlq with confluent-kafka's ShareConsumer (librdkafka 2.16, KIP-932): 10,000 records on a 1-partition
topic, three consumers in one share group acknowledging each record explicitly (share.acknowledgement.mode=explicit,
acknowledge + commit_sync): two threads and a victim process (`confluent_client.py BOOTSTRAP share-member TOPIC GROUP
HOLD_AFTER`) that accepts HOLD_AFTER records, then holds its next batch without acknowledging it and is SIGKILLed.
Pass: every record accepted exactly once, the victim's held records redelivered to the others with delivery count 2,
no other redelivery unless a lock expired or the victim's client had acquired the record when it was killed. The same
checks as java/.../Share.java and go/share.go."""
import subprocess
import sys
import threading
import time

from confluent_kafka import AcknowledgeType, ShareConsumer
from confluent_kafka.admin import AlterConfigOpType, ConfigEntry, ConfigResource, NewTopic, ResourceType

import data
from common import REPLICATION_FACTOR, check

QUEUE_RECORDS = 10000
VICTIM_HOLDS_AFTER = 1000
LOCK_MS = 15000  # share.record.lock.duration.ms: group.share.min.record.lock.duration.ms, Kafka's minimum


def set_group_configs(admin, group, configs):
    """A share group's configs: IncrementalAlterConfigs on a GROUP resource."""
    resource = ConfigResource(ResourceType.GROUP, group,
                              incremental_configs=[ConfigEntry(k, v, incremental_operation=AlterConfigOpType.SET) for k, v in configs.items()])
    for f in admin.incremental_alter_configs([resource]).values():
        f.result(timeout=30)


def share_consumer(bootstrap, group, client_id):
    return ShareConsumer({"bootstrap.servers": bootstrap, "group.id": group, "client.id": client_id,
                          "share.acknowledgement.mode": "explicit"})


def commit_error(results):
    """The first per-partition error of commit_sync's answer, else None."""
    return next((e for e in (results or {}).values() if e is not None), None)


def poll(consumer, timeout):
    msgs = [m for m in consumer.poll(timeout)]
    for m in msgs:
        if m.error():
            raise RuntimeError(f"poll: {m.error()}")
    return msgs


class Ledger:
    def __init__(self):
        self.lock = threading.Lock()
        self.accepted_by, self.first_delivered, self.redelivered_held = {}, {}, {}
        self.double_accepted, self.bad, self.commit_errors = [], [], []
        self.held, self.killed_at, self.first_held_redelivery = set(), None, None
        self.lock_expiry = self.victim_prefetched = 0

    def delivered(self, offset, count, now):
        with self.lock:
            first = self.first_delivered.setdefault(offset, now)
            seen = first != now
            if not seen and count == 1:
                return
            if offset in self.held and self.killed_at is not None:
                self.redelivered_held[offset] = count
                self.first_held_redelivery = self.first_held_redelivery or now
            elif not seen and count == 2 and self.killed_at is not None:
                self.victim_prefetched += 1  # acquired by the victim's client but not yet polled when it was killed
            elif seen and count > 1 and (now - first) * 1000 >= LOCK_MS:
                self.lock_expiry += 1
            else:
                self.bad.append(f"offset {offset} delivered (seen before: {seen}) with delivery count {count}")

    def accepted(self, offset, by):
        with self.lock:
            if offset in self.accepted_by:
                self.double_accepted.append(offset)
            else:
                self.accepted_by[offset] = by


def share_queue(bootstrap, admin, create_topic, produce):
    topic = create_topic(admin, "share-queue", 1)
    group = f"{topic}-group"
    set_group_configs(admin, group, {"share.auto.offset.reset": "earliest", "share.record.lock.duration.ms": str(LOCK_MS)})
    produce(bootstrap, topic, [(data.key(i), data.value(i), None, None) for i in range(QUEUE_RECORDS)], partition=0)
    ledger = Ledger()
    started, killed = threading.Event(), threading.Event()
    victim = subprocess.Popen([sys.executable, sys.argv[0], bootstrap, "share-member", topic, group, str(VICTIM_HOLDS_AFTER)],
                              stdout=subprocess.PIPE, text=True)
    victim_accepted = [0]

    def read_victim():
        for line in victim.stdout:
            word, _, rest = line.strip().partition(" ")
            now = time.monotonic()
            if word == "accepted":
                for o in map(int, rest.split(",")):
                    with ledger.lock:
                        ledger.first_delivered[o] = now
                    ledger.accepted(o, "victim")
                    victim_accepted[0] += 1
                started.set()
            elif word == "held":
                with ledger.lock:
                    ledger.held = set(map(int, rest.split(",")))
                    for o in ledger.held:
                        ledger.first_delivered[o] = now
                    ledger.killed_at = time.monotonic()
                victim.kill()  # SIGKILL: no acknowledgement, no leave; its connections just close
                victim.wait()
                killed.set()
                started.set()
                return
            else:
                print(f"victim: {line.strip()}")
    threading.Thread(target=read_victim, daemon=True).start()
    try:
        check(started.wait(40), "the victim process accepted nothing in 40 s")
        done, errors = threading.Event(), []

        def survive(name):
            consumer = share_consumer(bootstrap, group, f"compat-confluent-{name}")
            try:
                consumer.subscribe([topic])
                while not done.is_set():
                    msgs = poll(consumer, 0.2)
                    if not msgs:
                        continue
                    for m in msgs:
                        ledger.delivered(m.offset(), m.delivery_count(), time.monotonic())
                        consumer.acknowledge(m, AcknowledgeType.ACCEPT)
                    error = commit_error(consumer.commit_sync(30))
                    if error is not None:
                        with ledger.lock:
                            ledger.commit_errors.append(f"{name}: {error} for offsets {msgs[0].offset()}..{msgs[-1].offset()}")
                    else:
                        for m in msgs:
                            ledger.accepted(m.offset(), name)
                    time.sleep(0.005)  # some processing time, so that the other consumers get batches too
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append(f"{name}: {type(e).__name__}: {e}")
            finally:
                consumer.close()
        survivors = [threading.Thread(target=survive, args=(f"survivor-{i}",)) for i in range(2)]
        for t in survivors:
            t.start()
        deadline = time.monotonic() + 40
        while time.monotonic() < deadline and not errors and not (killed.is_set() and len(ledger.accepted_by) >= QUEUE_RECORDS):
            time.sleep(0.1)
        done.set()
        for t in survivors:
            t.join(30)
    finally:
        victim.kill()
    check(not errors, f"a survivor failed: {errors}")
    check(killed.is_set(), f"the victim never held a batch (it accepted {victim_accepted[0]})")
    missing = [o for o in range(QUEUE_RECORDS) if o not in ledger.accepted_by]
    check(not missing, f"{len(missing)} records never accepted in 40 s, e.g. {missing[:10]}")
    check(not ledger.double_accepted, f"records accepted twice: {ledger.double_accepted[:10]}")
    check(not ledger.bad, f"redeliveries with no lock expiry nor kill behind them: {ledger.bad[:10]}")
    check(not ledger.commit_errors, f"acknowledgements failed: {ledger.commit_errors[:10]}")
    check(set(ledger.redelivered_held) == ledger.held, f"held by the victim {len(ledger.held)} records, redelivered to a survivor {len(ledger.redelivered_held)}")
    counts = set(ledger.redelivered_held.values())
    check(counts == {2}, f"the victim's records came back with delivery counts {counts}, expected 2")
    by = {}
    for name in ledger.accepted_by.values():
        by[name] = by.get(name, 0) + 1
    return (f"{QUEUE_RECORDS} records accepted exactly once: {dict(sorted(by.items()))}; the victim SIGKILLed holding {len(ledger.held)} records "
            f"(offsets {min(ledger.held)}..{max(ledger.held)}), redelivered with delivery count 2, the first "
            f"{(ledger.first_held_redelivery - ledger.killed_at) * 1000:.0f} ms after the kill; {ledger.victim_prefetched} more acquired by "
            f"the victim's client but not yet polled, delivered with count 2 after the kill; other redeliveries (lock expiry): {ledger.lock_expiry}")


def share_member(bootstrap, topic, group, hold_after):
    """The victim: accepts what it polls (printing "accepted o,o,..." once committed) until it has accepted hold_after
    records, then prints "held o,o,..." for its next batch and waits, without acknowledging, to be killed."""
    consumer = share_consumer(bootstrap, group, "compat-confluent-victim")
    consumer.subscribe([topic])
    accepted = 0
    while True:
        msgs = poll(consumer, 0.2)
        if not msgs:
            continue
        offsets = ",".join(str(m.offset()) for m in msgs)
        if accepted >= hold_after:
            print(f"held {offsets}", flush=True)
            while True:
                time.sleep(60)  # until SIGKILL
        for m in msgs:
            consumer.acknowledge(m, AcknowledgeType.ACCEPT)
        error = commit_error(consumer.commit_sync(30))
        if error is not None:
            print(f"commit failed for offsets {msgs[0].offset()}..{msgs[-1].offset()}: {error}", flush=True)
        else:
            print(f"accepted {offsets}", flush=True)
            accepted += len(msgs)
        time.sleep(0.02)  # slower than the survivors, so that all three take part



DLQ_RECORDS = 20
DLQ_HEADERS = ["__dlq.errors.topic", "__dlq.errors.partition", "__dlq.errors.offset", "__dlq.errors.group", "__dlq.errors.delivery.count",
               "__dlq.errors.message"]


def share_dlq(bootstrap, admin, create_topic, produce, consume_all):
    """share-dlq (as java/.../Share.java's): 20 records; a group with share.delivery.count.limit=2 and
    errors.deadletterqueue.topic.name rejects 0..9 and releases 10..19 at each delivery; all 20 must land on the DLQ
    topic with Kafka 4.4's headers, without then with errors.deadletterqueue.copy.record.enable."""
    topic = create_topic(admin, "share-dlq", 1)
    produce(bootstrap, topic, [(f"k{i}".encode(), f"v{i}".encode(), data.headers(i), None) for i in range(DLQ_RECORDS)], partition=0)
    summary = []
    for copy in (False, True):
        group, dlq = (f"{topic}-copy", f"dlq.{topic}-copy") if copy else (f"{topic}-headers", f"dlq.{topic}")  # Kafka's prefix: "dlq."
        admin.create_topics([NewTopic(dlq, num_partitions=1, replication_factor=REPLICATION_FACTOR,
                                      config={"errors.deadletterqueue.group.enable": "true"})], operation_timeout=15)[dlq].result(timeout=30)
        set_group_configs(admin, group, {"share.auto.offset.reset": "earliest", "share.delivery.count.limit": "2",
                                         "errors.deadletterqueue.topic.name": dlq, "errors.deadletterqueue.copy.record.enable": str(copy).lower()})
        reject_and_release(bootstrap, topic, group)
        got = []
        deadline = time.monotonic() + 20
        while len(got) < DLQ_RECORDS and time.monotonic() < deadline:
            got = consume_all(bootstrap, dlq, 1)
            time.sleep(0.2)
        check_dlq(got, topic, group, copy)
        summary.append(f"{group} (copy.record.enable={copy}): {len(got)} DLQ records, first {got[0][4]}")
    return "\n".join(summary)


def reject_and_release(bootstrap, topic, group):
    """One share consumer REJECTs offsets 0..9 and RELEASEs 10..19 until their second delivery."""
    consumer = share_consumer(bootstrap, group, "compat-confluent-dlq")
    try:
        consumer.subscribe([topic])
        finished = set()
        deadline = time.monotonic() + 30
        while len(finished) < DLQ_RECORDS and time.monotonic() < deadline:
            msgs = poll(consumer, 0.2)
            if not msgs:
                continue
            for m in msgs:
                check(m.offset() not in finished, f"offset {m.offset()} delivered again (delivery count {m.delivery_count()}) after it was rejected or released at the limit")
                if m.offset() < DLQ_RECORDS // 2:
                    consumer.acknowledge(m, AcknowledgeType.REJECT)
                    finished.add(m.offset())
                else:
                    consumer.acknowledge(m, AcknowledgeType.RELEASE)
                    if m.delivery_count() >= 2:
                        finished.add(m.offset())
            error = commit_error(consumer.commit_sync(30))
            check(error is None, f"acknowledgement failed: {error}")
        check(len(finished) == DLQ_RECORDS, f"only {len(finished)} of {DLQ_RECORDS} records rejected or released to the limit in 30 s")
    finally:
        consumer.close()


def check_dlq(got, topic, group, copy):
    """got: consume_all's (partition, offset, key, value, headers) of the DLQ topic."""
    check(len(got) == DLQ_RECORDS, f"the DLQ has {len(got)} records, expected {DLQ_RECORDS}")
    seen = set()
    for _, dlq_offset, key, value, headers in got:
        headers = headers or []
        h = {k: v.decode() for k, v in headers}
        where = f"DLQ record {dlq_offset} ({headers}): "
        check([k for k, _ in headers] == DLQ_HEADERS, f"{where}headers, expected {DLQ_HEADERS}")
        offset = int(h["__dlq.errors.offset"])
        check(0 <= offset < DLQ_RECORDS and offset not in seen, f"{where}unexpected or repeated __dlq.errors.offset")
        seen.add(offset)
        rejected = offset < DLQ_RECORDS // 2
        want = {"__dlq.errors.topic": topic, "__dlq.errors.partition": "0", "__dlq.errors.group": group,
                "__dlq.errors.delivery.count": "1" if rejected else "2",
                "__dlq.errors.message": "Offset rejected by client." if rejected else "Offset delivery count exceeded the threshold."}
        for k, v in want.items():
            check(h[k] == v, f"{where}{k} {h[k]!r}, expected {v!r}")
        if copy:
            check(key == f"k{offset}".encode() and value == f"v{offset}".encode(), f"{where}copy.record.enable: key {key!r} value {value!r}, expected the original's")
        else:
            check(key is None and value is None, f"{where}copy.record.enable=false: key {key!r} value {value!r}, expected none")
