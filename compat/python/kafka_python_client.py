"""Fjord compatibility client: kafka-python. Usage: kafka_python_client.py BOOTSTRAP SCENARIO."""
import json
import sys
import time

from kafka import ConsumerRebalanceListener, KafkaConsumer, KafkaProducer, OffsetAndMetadata, TopicPartition
import kafka.errors as kafka_errors
from kafka.errors import ElectionNotNeededError, InvalidProducerEpochError, NoError, ProducerFencedError
from kafka.admin import KafkaAdminClient, NewTopic
from kafka.protocol.admin import DescribeLogDirsRequest, DescribeLogDirsResponse

import cleanup
import data
import group
import partitions
import security
import txn
from common import REPLICATION_FACTOR, check, main, retry, run_mode


def connect(bootstrap, admin):
    cluster = admin.describe_cluster()
    brokers = cluster["brokers"]
    check(len(brokers) == 1, f"expected 1 broker, got {brokers}")
    check(f"{brokers[0]['host']}:{brokers[0]['port']}" == bootstrap, f"expected broker {bootstrap}, got {brokers[0]}")
    check(cluster.get("cluster_id"), f"no cluster id in {cluster}")


def admin_topics(bootstrap, admin):
    name = f"compat-kafka-python-{time.time_ns()}"
    response = admin.create_topics([NewTopic(name, num_partitions=3, replication_factor=1)])
    errors = [t for t in response.topic_errors if t[1] != 0]
    check(not errors, f"CreateTopics errors: {errors}")

    def listed():
        check(name in admin.list_topics(), f"created topic {name} not listed")
        partitions = admin.describe_topics([name])[0]["partitions"]
        check(len(partitions) == 3, f"topic {name} has {len(partitions)} partitions, expected 3")
    retry(listed)
    response = admin.delete_topics([name])
    errors = [t for t in response.topic_error_codes if t[1] != 0]
    check(not errors, f"DeleteTopics errors: {errors}")

    def gone():
        check(name not in admin.list_topics(), f"deleted topic {name} still listed")
    retry(gone)


def create_topic(admin, prefix, partitions, config=None):
    name = data.topic_name("kafka-python", prefix)
    response = admin.create_topics([NewTopic(name, num_partitions=partitions, replication_factor=REPLICATION_FACTOR, topic_configs=config or {})])
    errors = [t for t in response.topic_errors if t[1] != 0]
    check(not errors, f"CreateTopics errors: {errors}")
    return name


def produce(bootstrap, topic, records, partition=None, **conf):
    """records: [(key, value, headers, timestamp_ms or None)], to one partition if given (else the partitioner's);
    waits for every acknowledgement."""
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=5, **conf)
    try:
        futures = [producer.send(topic, value=v, key=k, headers=hs, timestamp_ms=ts, partition=partition) for k, v, hs, ts in records]
        producer.flush(30)
        for f in futures:
            f.get(timeout=30)
    finally:
        producer.close(5)


def consume_all(bootstrap, topic, partitions, **conf):
    """assign() every partition, no group_id, from the beginning up to the end offsets."""
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=None, enable_auto_commit=False, **conf)
    try:
        tps = [TopicPartition(topic, p) for p in range(partitions)]
        consumer.assign(tps)
        consumer.seek_to_beginning(*tps)
        ends = consumer.end_offsets(tps)
        records = []
        deadline = time.monotonic() + 30
        while any(consumer.position(tp) < ends[tp] for tp in tps) and time.monotonic() < deadline:
            for tp, msgs in consumer.poll(timeout_ms=1000).items():
                records += [(m.partition, m.offset, m.key, m.value, m.headers) for m in msgs]
        check(all(consumer.position(tp) >= ends[tp] for tp in tps), f"end offsets {ends} not reached (timed out)")
        return records
    finally:
        consumer.close()


def plain(n):
    return [(data.key(i), data.value(i), data.headers(i), None) for i in range(n)]


def produce_consume(bootstrap, admin):
    topic = create_topic(admin, "pc", 3)
    produce(bootstrap, topic, plain(1000))
    data.verify_records(consume_all(bootstrap, topic, 3), 1000)


def compression(bootstrap, admin):
    for codec in data.CODECS:
        topic = create_topic(admin, codec, 3)
        produce(bootstrap, topic, plain(200), compression_type=None if codec == "none" else codec)
        try:
            data.verify_records(consume_all(bootstrap, topic, 3), 200)
        except AssertionError as e:
            raise AssertionError(f"{codec}: {e}") from e


def large_records(bootstrap, admin):
    topic = create_topic(admin, "large", 1, {"max.message.bytes": "2097152"})
    produce(bootstrap, topic, [(f"large-{i}".encode(), data.large(i), None, None) for i in range(5)], max_request_size=2097152)
    data.verify_large(consume_all(bootstrap, topic, 1))


def keyed_partitions(bootstrap, admin):
    topic = create_topic(admin, "keyed", 6)
    produce(bootstrap, topic, [(f"key-{i % 20}".encode(), data.value(i), None, None) for i in range(600)])  # default: murmur2
    data.verify_keyed(consume_all(bootstrap, topic, 6), 600, 6)


def offsets_by_time(bootstrap, admin):
    topic = create_topic(admin, "time", 1)
    t, count, lookups = data.time_queries()
    produce(bootstrap, topic, [(data.key(i), data.value(i), None, t + i * 1000) for i in range(count)])
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=None)
    try:
        tp = TopicPartition(topic, 0)
        for ts, want in lookups:
            got = consumer.offsets_for_times({tp: ts})[tp]  # None: no record at or after ts
            check((got and got.offset) == want, f"offset for timestamp T{ts - t:+d}: {got}, expected {want}")
    finally:
        consumer.close()


def idempotent(bootstrap, admin):
    topic = create_topic(admin, "idem", 3)
    produce(bootstrap, topic, plain(2000), enable_idempotence=True)
    data.verify_records(consume_all(bootstrap, topic, 3), 2000)


# ----- consumer groups (group.py): each member is this program in group-member mode, a KafkaConsumer with a
# group_id that subscribe()s with a ConsumerRebalanceListener.

def group_member(bootstrap, opts):
    out = group.Emitter()

    class Listener(ConsumerRebalanceListener):
        def on_partitions_revoked(self, revoked):
            out("revoked", partitions=[tp.partition for tp in revoked])

        def on_partitions_assigned(self, assigned):
            out("assigned", partitions=[tp.partition for tp in assigned])

    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap, group_id=opts["group"], group_instance_id=opts.get("instanceId"),
        client_id=f"fjord-compat-kafka-python-{opts['name']}", auto_offset_reset="earliest",
        session_timeout_ms=opts["sessionMs"], heartbeat_interval_ms=group.HEARTBEAT_MS,
        max_poll_interval_ms=group.REBALANCE_TIMEOUT_MS, auto_commit_interval_ms=group.COMMIT_INTERVAL_MS)
    consumer.subscribe([opts["topic"]], listener=Listener())
    while not out.closing.is_set():
        for tp, msgs in consumer.poll(timeout_ms=100).items():
            for m in msgs:
                out("rec", p=m.partition, o=m.offset, k=m.key.decode())
    consumer.close()  # commits (autocommit); LeaveGroup unless static
    out("closed")


# ----- transactions (txn.py): KafkaProducer(transactional_id) with init/begin/commit/abort_transaction and
# send_offsets_to_transaction(offsets, group_id) (kafka-python sends no group metadata: no generation or member id
# checks), a subscribed KafkaConsumer with isolation_level="read_committed".

TIMEOUT_S = 30


class TxnProducer:
    def __init__(self, bootstrap, transactional_id):
        self.producer = KafkaProducer(bootstrap_servers=bootstrap, transactional_id=transactional_id, linger_ms=5)
        self.producer.init_transactions()

    def begin(self):
        self.producer.begin_transaction()

    def send(self, topic, value):
        self.producer.send(topic, value=value, partition=0).get(timeout=TIMEOUT_S)

    def commit(self):
        self.producer.commit_transaction()

    def close(self):
        self.producer.close(5)


class TransformSession:
    """txn.transform()'s session: one group member and one transactional producer."""

    def __init__(self, bootstrap, input_topic, output, group_id, transactional_id):
        self.input, self.output, self.group_id = input_topic, output, group_id
        self.consumer = KafkaConsumer(input_topic, bootstrap_servers=bootstrap, group_id=group_id, isolation_level="read_committed",
                                      enable_auto_commit=False, auto_offset_reset="earliest")
        self.txn = TxnProducer(bootstrap, transactional_id)
        self.producer = self.txn.producer

    def poll(self, n):
        return [(m.partition, m.offset, m.key) for msgs in self.consumer.poll(timeout_ms=500, max_records=n).values() for m in msgs]

    def begin(self):
        self.producer.begin_transaction()

    def send(self, key, value):
        self.producer.send(self.output, value=value, key=key)

    def send_offsets(self, offsets):
        self.producer.send_offsets_to_transaction({TopicPartition(self.input, p): OffsetAndMetadata(o, "", -1) for p, o in offsets.items()}, self.group_id)

    def commit(self):
        self.producer.commit_transaction()

    def abort(self):
        self.producer.flush(TIMEOUT_S)  # abort_transaction would fail the records not sent yet
        self.producer.abort_transaction()

    def rewind(self, first):
        # Back to the aborted records, not to the group's committed offsets: kafka-python's OffsetFetch cannot ask
        # for stable offsets (require_stable), so it may answer an offset older than a transaction just committed.
        for p, o in first.items():
            self.consumer.seek(TopicPartition(self.input, p), o)

    def close(self):
        self.consumer.close(autocommit=False)
        self.txn.close()


class GroupAdapter(txn.TxnAdapter):
    """The adapter of the group and the transaction scenarios."""

    def __init__(self, bootstrap, admin):
        super().__init__(bootstrap, admin, __file__, create_topic, produce)

    def committed(self, group_id, topic):
        offsets = self.admin.list_consumer_group_offsets(group_id)
        return {tp.partition: om.offset for tp, om in offsets.items() if tp.topic == topic}

    def end_offsets(self, topic):
        consumer = KafkaConsumer(bootstrap_servers=self.bootstrap, group_id=None)
        try:
            ends = consumer.end_offsets([TopicPartition(topic, p) for p in range(group.PARTITIONS)])
            return {tp.partition: o for tp, o in ends.items()}
        finally:
            consumer.close()

    def session(self, input_topic, output, group_id, transactional_id):
        return TransformSession(self.bootstrap, input_topic, output, group_id, transactional_id)

    def producer(self, transactional_id):
        return TxnProducer(self.bootstrap, transactional_id)

    def is_fencing(self, error):
        return isinstance(error, (ProducerFencedError, InvalidProducerEpochError))

    def read(self, topic, partitions, isolation):
        return consume_all(self.bootstrap, topic, partitions, isolation_level=isolation)


class CleanupAdapter(cleanup.Adapter):
    """cleanup.py's adapter: KafkaProducer (None values are tombstones), group-less assign()-ing consumers."""

    def __init__(self, bootstrap, admin):
        super().__init__(bootstrap, admin, create_topic, produce, consume_all)

    def earliest(self, topic):
        consumer = KafkaConsumer(bootstrap_servers=self.bootstrap, group_id=None)
        try:
            tp = TopicPartition(topic, 0)
            return consumer.beginning_offsets([tp])[tp]
        finally:
            consumer.close()

    def read_behind(self, topic, offset, n):
        consumer = KafkaConsumer(bootstrap_servers=self.bootstrap, group_id=None, enable_auto_commit=False, auto_offset_reset="earliest")
        try:
            tp = TopicPartition(topic, 0)
            consumer.assign([tp])
            consumer.seek(tp, offset)
            read, deadline = [], time.monotonic() + 20
            while len(read) < n and time.monotonic() < deadline:
                for msgs in consumer.poll(timeout_ms=1000, max_records=n - len(read)).values():
                    read += [(m.offset, m.key, m.value) for m in msgs]
            return read
        finally:
            consumer.close()


def cluster_produce(bootstrap, topic, count):
    """cluster-produce mode (compat/cluster/cluster-test.js): an idempotent acks=all producer sends COUNT records
    key "seq-<n>" at about 500/s through a partition leader's death; prints "ack <n> <partition> <offset>" for each
    acknowledgement."""
    producer = KafkaProducer(bootstrap_servers=bootstrap, enable_idempotence=True, acks="all", linger_ms=5,
                             delivery_timeout_ms=60000, reconnect_backoff_ms=100, reconnect_backoff_max_ms=500, retry_backoff_ms=100)
    failed = []

    def acked(n):
        return lambda md: print(f"ack {n} {md.partition} {md.offset}", flush=True)

    def error(n):
        return lambda e: failed.append(f"seq-{n}: {type(e).__name__}: {e}")
    for n in range(int(count)):
        producer.send(topic, key=f"seq-{n}".encode(), value=str(n).encode()).add_callback(acked(n)).add_errback(error(n))
        if n % 10 == 9:
            time.sleep(0.02)
    producer.flush(90)
    producer.close()
    check(not failed, f"{len(failed)} deliveries failed: {failed[:5]}")


PREFERRED = 0  # perform_leader_election's election_type


# kafka-python 2.3 knows DescribeLogDirs v0 only (describe_log_dirs() asks it), which Kafka 4 no longer serves
# (KIP-896: it closes the connection); v1 has the same request and response schemas.
class DescribeLogDirsResponseV1(DescribeLogDirsResponse[0]):
    API_VERSION = 1


class DescribeLogDirsRequestV1(DescribeLogDirsRequest[0]):
    API_VERSION = 1
    RESPONSE_TYPE = DescribeLogDirsResponseV1


def partition_state(admin, topic):
    [p] = admin.describe_topics([topic])[0]["partitions"]
    return p["leader"], p["replicas"], sorted(p["isr"])


def log_dir_partitions(admin, broker):
    """DescribeLogDirs v1 (all log dirs) sent to one broker: {(topic, partition): size} of the replicas it holds.
    (describe_log_dirs() asks v0 of one broker of the client's choosing, so the request is sent by hand to each.)"""
    response = admin.send_request(DescribeLogDirsRequestV1(), node_id=broker)
    held = {}
    for error_code, log_dir, topics in response.log_dirs:
        check(error_code == 0, f"DescribeLogDirs of broker {broker}: {log_dir} error {error_code}")
        for name, parts in topics:
            for index, size, _lag, _future in parts:
                held[(name, index)] = size
    return held


def elect_preferred(admin, topic):
    """perform_leader_election PREFERRED of topic-0: its partition's error class (NoError, ElectionNotNeededError...)."""
    response = admin.perform_leader_election(PREFERRED, {topic: [0]}, timeout_ms=30000)
    check(response.error_code == 0, f"ElectLeaders: top-level error {response.error_code}")
    results = [(name, index, code) for name, parts in response.replication_election_results for index, code, *_ in parts]
    check([(name, index) for name, index, _ in results] == [(topic, 0)], f"ElectLeaders answered for {results}, not {topic}-0 alone")
    return kafka_errors.for_code(results[0][2])


def cluster_admin_partitions(bootstrap, admin):
    """The cluster-admin-partitions row (no reassignment API in kafka-python: partitions.py reorders with Kafka's
    tool). A topic on [a, b] with records: describe_log_dirs on each broker finds its replica on a and b, not c;
    reordered to [b, a]: a still leads; perform_leader_election PREFERRED makes b lead, a second one answers
    ELECTION_NOT_NEEDED; records produced after."""
    ids = sorted(b["node_id"] for b in admin.describe_cluster()["brokers"])
    check(len(ids) == 3, f"expected 3 brokers, got {ids}")
    a, b, c = ids
    topic = data.topic_name("kafka-python", "adminp")
    response = admin.create_topics([NewTopic(topic, replica_assignments={0: [a, b]})])
    errors = [t for t in response.topic_errors if t[1] != 0]
    check(not errors, f"CreateTopics errors: {errors}")
    retry(lambda: check(partition_state(admin, topic) == (a, [a, b], [a, b]), f"{topic}-0 not led by {a} with [{a}, {b}] in sync: {partition_state(admin, topic)}"), 30)
    produce(bootstrap, topic, [(f"k-{i}".encode(), b"x" * 1000, None, None) for i in range(100)], partition=0)

    def logs_on_replicas():
        sizes = {i: log_dir_partitions(admin, i).get((topic, 0)) for i in ids}
        check(sizes[c] is None and sizes[a] and sizes[a] == sizes[b], f"DescribeLogDirs: {topic}-0 sizes by broker {sizes}: expected equal non-empty logs on {a} and {b}, none on {c}")
        return sizes
    sizes = retry(logs_on_replicas, 30)

    partitions.reassign_with_kafka_tool(bootstrap, topic, 0, [b, a])
    retry(lambda: check(partition_state(admin, topic)[1] == [b, a], f"{topic}-0 not reordered to [{b}, {a}]: {partition_state(admin, topic)}"), 30)
    check(partition_state(admin, topic)[0] == a, f"the reorder moved the leadership: {partition_state(admin, topic)}")

    elected = elect_preferred(admin, topic)
    check(elected is NoError, f"perform_leader_election PREFERRED {topic}-0: {elected.__name__}")
    retry(lambda: check(partition_state(admin, topic)[0] == b, f"after perform_leader_election PREFERRED: {partition_state(admin, topic)}"), 30)
    again = elect_preferred(admin, topic)
    check(again is ElectionNotNeededError, f"a second perform_leader_election PREFERRED {topic}-0: {again.__name__}, expected ElectionNotNeededError")
    produce(bootstrap, topic, [(f"after-{i}".encode(), b"y", None, None) for i in range(10)], partition=0)
    return (f"describe_log_dirs: {topic}-0 on {a} and {b} ({sizes[a]} bytes), not {c}; reordered to [{b}, {a}] with Kafka's tool, "
            f"perform_leader_election PREFERRED: {b} leads, then ELECTION_NOT_NEEDED")


# ----- the security rows (compat/security/rows.js): kafka-python's security settings, alice as the user.

def secure_produce_consume(bootstrap, admin):
    for t in security.TRANSPORTS:
        topic = f"secure-kafka-python-{t.lower()}"
        response = admin.create_topics([NewTopic(topic, num_partitions=1, replication_factor=1)])
        check(not [e for e in response.topic_errors if e[1] != 0], f"CreateTopics errors: {response.topic_errors}")
        conf = security.kafka_python_config(t, "alice")
        sent = security.sent_values(t)
        produce(security.endpoint(t), topic, [(f"k{i}".encode(), v, None, None) for i, v in enumerate(sent)], **conf)
        read = [r[3] for r in consume_all(security.endpoint(t), topic, 1, **conf)]
        check(read == sent, f"{t}: read back {read}, expected {sent}")
        print(f"{t}: {security.RECORDS} records produced and read back", flush=True)  # progress, shown if a later transport times out
    return f"produced and consumed {security.RECORDS} records over {', '.join(security.TRANSPORTS)}"


def acl_denials(bootstrap, admin):
    """FJORD_SEC_PHASE denied, then allowed: alice over SASL_PLAINTEXT with PLAIN."""
    b, conf, topic = security.endpoint("PLAIN", False), security.kafka_python_config("PLAIN", "alice", False), "acl-kafka-python"
    if security.env("FJORD_SEC_PHASE") == "allowed":
        read = [r[3] for r in consume_all(b, topic, 1, **conf)]
        check(read[:5] == [f"r{i}".encode() for i in range(5)], f"read {read} after the READ grant")
        return f"after the READ grant: {topic} read group-less"

    def error_of(f):
        try:
            return f"no error: {f()!r}"
        except kafka_errors.KafkaError as e:
            return e
    e = error_of(lambda: consume_all(b, topic, 1, **conf))
    check(isinstance(e, kafka_errors.TopicAuthorizationFailedError), f"group-less read of {topic} without READ: {e!r}, expected TopicAuthorizationFailedError")

    def join_denied_group():
        consumer = KafkaConsumer(topic, bootstrap_servers=b, group_id="acl-denied-kafka-python", auto_offset_reset="earliest", **conf)
        try:
            deadline = time.monotonic() + 15
            while time.monotonic() < deadline:
                check(not consumer.poll(timeout_ms=1000), "read records in group acl-denied-kafka-python")
            return "nothing within 15 s"
        finally:
            consumer.close()
    e = error_of(join_denied_group)
    check(isinstance(e, kafka_errors.GroupAuthorizationFailedError), f"group acl-denied-kafka-python: {e!r}, expected GroupAuthorizationFailedError")

    def init_transactions():
        producer = KafkaProducer(bootstrap_servers=b, transactional_id="acl-txn-kafka-python", **conf)
        try:
            producer.init_transactions()
        finally:
            producer.close(5)
    e = error_of(init_transactions)
    check(isinstance(e, kafka_errors.TransactionalIdAuthorizationFailedError),
          f"init_transactions with id acl-txn-kafka-python: {e!r}, expected TransactionalIdAuthorizationFailedError")
    return "consume: TopicAuthorizationFailedError; subscribe: GroupAuthorizationFailedError; init_transactions: TransactionalIdAuthorizationFailedError"


def run(bootstrap, scenario):
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="fjord-compat-kafka-python", request_timeout_ms=15000)
    try:
        if scenario in (group.group_consume, group.group_rebalance, group.group_static, txn.txn_consume_transform_produce, txn.txn_zombie_fenced):
            return scenario(GroupAdapter(bootstrap, admin))
        if scenario in (cleanup.compaction, cleanup.retention):
            return scenario(CleanupAdapter(bootstrap, admin))
        return scenario(bootstrap, admin)
    finally:
        admin.close()


if __name__ == "__main__" and sys.argv[2:3] == ["cluster-produce"]:
    run_mode(cluster_produce, sys.argv[1], sys.argv[3], sys.argv[4])
elif __name__ == "__main__" and sys.argv[2:3] == ["group-member"]:
    group_member(sys.argv[1], json.loads(sys.argv[3]))
elif __name__ == "__main__":
    main({"connect": connect, "admin-topics": admin_topics, "produce-consume": produce_consume, "compression": compression,
          "large-records": large_records, "keyed-partitions": keyed_partitions, "offsets-by-time": offsets_by_time,
          "idempotent": idempotent, "group-consume": group.group_consume, "group-rebalance": group.group_rebalance,
          "group-static": group.group_static, "txn-consume-transform-produce": txn.txn_consume_transform_produce,
          "txn-zombie-fenced": txn.txn_zombie_fenced, "compaction": cleanup.compaction, "retention": cleanup.retention,
          "cluster-admin-partitions": cluster_admin_partitions, "secure-produce-consume": secure_produce_consume, "acl-denials": acl_denials}, run)
