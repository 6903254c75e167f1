"""Fjord compatibility client: confluent-kafka (librdkafka). Usage: confluent_client.py BOOTSTRAP SCENARIO."""
import json
import sys
import time

from confluent_kafka import OFFSET_BEGINNING, Consumer, ElectionType, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import (AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, ConfigSource, NewTopic,
                                  ResourceType)

import cleanup
import data
import group
import partitions
import security
import share
import txn
from common import REPLICATION_FACTOR, check, main, retry, run_mode


def connect(bootstrap, admin):
    md = admin.list_topics(timeout=15)
    brokers = list(md.brokers.values())
    check(len(brokers) == 1, f"expected 1 broker, got {brokers}")
    check(f"{brokers[0].host}:{brokers[0].port}" == bootstrap, f"expected broker {bootstrap}, got {brokers[0]}")
    check(md.cluster_id, "metadata has no cluster id")


def admin_topics(bootstrap, admin):
    name = f"compat-confluent-{time.time_ns()}"
    admin.create_topics([NewTopic(name, num_partitions=3, replication_factor=1)], operation_timeout=15)[name].result(timeout=30)

    def listed():
        topics = admin.list_topics(timeout=15).topics
        check(name in topics, f"created topic {name} not listed")
        check(len(topics[name].partitions) == 3, f"topic {name} has {len(topics[name].partitions)} partitions, expected 3")
    retry(listed)
    admin.delete_topics([name], operation_timeout=15)[name].result(timeout=30)

    def gone():
        check(name not in admin.list_topics(timeout=15).topics, f"deleted topic {name} still listed")
    retry(gone)


def create_topic(admin, prefix, partitions, config=None):
    name = data.topic_name("confluent", prefix)
    admin.create_topics([NewTopic(name, num_partitions=partitions, replication_factor=REPLICATION_FACTOR, config=config or {})],
                        operation_timeout=15)[name].result(timeout=30)
    return name


def produce(bootstrap, topic, records, partition=None, **conf):
    """records: [(key, value, headers, timestamp or None)], to one partition if given (else the partitioner's);
    waits for every delivery report, raises on any error."""
    errors = []
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 5, **conf})

    def report(err, msg):
        if err:
            errors.append(err)
    where = {} if partition is None else {"partition": partition}
    for k, v, hs, ts in records:
        producer.produce(topic, v, k, headers=hs, timestamp=ts or 0, on_delivery=report, **where)
        producer.poll(0)
    left = producer.flush(30)
    check(not errors and left == 0, f"delivery failed: {errors[:3]} ({len(errors)} errors, {left} undelivered)")


# confluent-kafka's Consumer refuses to start without a group.id, but assign() with explicit offsets and no
# commits uses no group API: the group.id is only a name here.
CONSUMER = {"group.id": "fjord-compat-unused", "enable.auto.commit": False, "enable.auto.offset.store": False}


def consume_all(bootstrap, topic, partitions, **conf):
    """Assigns every partition from the beginning (no subscribe, no commits) and reads up to the high watermarks."""
    consumer = Consumer({"bootstrap.servers": bootstrap, **CONSUMER, **conf})
    try:
        ends = {p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1] for p in range(partitions)}
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(partitions)])
        records, pos = [], {p: 0 for p in range(partitions)}
        deadline = time.monotonic() + 30
        while any(pos[p] < ends[p] for p in ends) and time.monotonic() < deadline:
            for msg in consumer.consume(500, timeout=1):
                if msg.error():
                    raise KafkaException(msg.error())
                records.append((msg.partition(), msg.offset(), msg.key(), msg.value(), msg.headers()))
                pos[msg.partition()] = msg.offset() + 1
        check(all(pos[p] >= ends[p] for p in ends), f"consumed up to {pos}, end offsets {ends} (timed out)")
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
        produce(bootstrap, topic, plain(200), **{"compression.type": codec})
        try:
            data.verify_records(consume_all(bootstrap, topic, 3), 200)
        except AssertionError as e:
            raise AssertionError(f"{codec}: {e}") from e


def large_records(bootstrap, admin):
    topic = create_topic(admin, "large", 1, {"max.message.bytes": "2097152"})
    produce(bootstrap, topic, [(f"large-{i}".encode(), data.large(i), None, None) for i in range(5)], **{"message.max.bytes": 2097152})
    data.verify_large(consume_all(bootstrap, topic, 1))


def keyed_partitions(bootstrap, admin):
    topic = create_topic(admin, "keyed", 6)
    produce(bootstrap, topic, [(f"key-{i % 20}".encode(), data.value(i), None, None) for i in range(600)], partitioner="murmur2_random")
    data.verify_keyed(consume_all(bootstrap, topic, 6), 600, 6)


def offsets_by_time(bootstrap, admin):
    topic = create_topic(admin, "time", 1)
    t, count, lookups = data.time_queries()
    produce(bootstrap, topic, [(data.key(i), data.value(i), None, t + i * 1000) for i in range(count)])
    consumer = Consumer({"bootstrap.servers": bootstrap, **CONSUMER})
    try:
        for ts, want in lookups:
            [tp] = consumer.offsets_for_times([TopicPartition(topic, 0, ts)], timeout=10)
            check(tp.error is None, f"offsets_for_times({ts}): {tp.error}")
            # librdkafka answers "no record at or after ts" with -1 (OFFSET_END).
            check(tp.offset == (-1 if want is None else want), f"offset for timestamp T{ts - t:+d}: {tp.offset}, expected {want}")
    finally:
        consumer.close()


def idempotent(bootstrap, admin):
    topic = create_topic(admin, "idem", 3)
    produce(bootstrap, topic, plain(2000), **{"enable.idempotence": True})
    data.verify_records(consume_all(bootstrap, topic, 3), 2000)


# ----- consumer groups (group.py): each member is this program in group-member mode, a librdkafka consumer
# that subscribe()s; its rebalance callbacks and records are reported as JSON lines.

def group_member(bootstrap, opts):
    out = group.Emitter()
    conf = {
        "bootstrap.servers": bootstrap, "group.id": opts["group"], "client.id": f"fjord-compat-confluent-{opts['name']}",
        "auto.offset.reset": "earliest", "max.poll.interval.ms": group.REBALANCE_TIMEOUT_MS, "auto.commit.interval.ms": group.COMMIT_INTERVAL_MS,
    }
    if opts.get("protocol") == "consumer":
        conf["group.protocol"] = "consumer"  # the broker's session and heartbeat settings apply (librdkafka refuses its own)
    else:
        conf.update({"session.timeout.ms": opts["sessionMs"], "heartbeat.interval.ms": group.HEARTBEAT_MS})
    if opts.get("instanceId"):
        conf["group.instance.id"] = opts["instanceId"]
    consumer = Consumer(conf)
    consumer.subscribe([opts["topic"]],
                       on_assign=lambda c, ps: out("assigned", partitions=[p.partition for p in ps]),
                       on_revoke=lambda c, ps: out("revoked", partitions=[p.partition for p in ps]),
                       on_lost=lambda c, ps: out("lost", partitions=[p.partition for p in ps]))
    while not out.closing.is_set():
        for msg in consumer.consume(100, timeout=0.1):
            if msg.error():
                out("error", error=str(msg.error()))
            else:
                out("rec", p=msg.partition(), o=msg.offset(), k=msg.key().decode())
    try:
        consumer.commit(asynchronous=False)
    except KafkaException as e:
        if e.args[0].code() != KafkaError._NO_OFFSET:
            out("error", error=f"commit: {e}")
    consumer.close()  # commits again (auto commit); LeaveGroup unless static
    out("closed")


# ----- transactions (txn.py): librdkafka's transactional producer (init/begin/commit/abort_transaction,
# send_offsets_to_transaction with the consumer's group metadata) and a subscribed read_committed Consumer.

TIMEOUT_S = 30  # for each transactional call


class TxnProducer:
    def __init__(self, bootstrap, transactional_id):
        self.producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": transactional_id, "linger.ms": 5})
        self.producer.init_transactions(TIMEOUT_S)

    def begin(self):
        self.producer.begin_transaction()

    def send(self, topic, value):
        # No delivery callback: flush() raises librdkafka's fatal error (fenced) itself (with a callback,
        # confluent-kafka reports it as a SystemError), and any other failed delivery fails the commit.
        self.producer.produce(topic, value, partition=0)
        check(self.producer.flush(TIMEOUT_S) == 0, f"record {value!r} not delivered in {TIMEOUT_S} s")

    def commit(self):
        self.producer.commit_transaction(TIMEOUT_S)

    def close(self):
        pass  # librdkafka's producer has no close: it is destroyed with the object


class TransformSession:
    """txn.transform()'s session: one group member and one transactional producer."""

    def __init__(self, bootstrap, input_topic, output, group_id, transactional_id):
        self.input, self.output = input_topic, output
        self.consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group_id, "isolation.level": "read_committed",
                                  "enable.auto.commit": False, "auto.offset.reset": "earliest"})
        self.consumer.subscribe([input_topic])
        self.producer = TxnProducer(bootstrap, transactional_id).producer

    def poll(self, n):
        msgs = self.consumer.consume(n, timeout=0.5)
        for m in msgs:
            if m.error():
                raise KafkaException(m.error())
        return [(m.partition(), m.offset(), m.key()) for m in msgs]

    def begin(self):
        self.producer.begin_transaction()

    def send(self, key, value):
        self.producer.produce(self.output, value, key)
        self.producer.poll(0)

    def send_offsets(self, offsets):
        tps = [TopicPartition(self.input, p, o) for p, o in offsets.items()]
        self.producer.send_offsets_to_transaction(tps, self.consumer.consumer_group_metadata(), TIMEOUT_S)

    def commit(self):
        self.producer.commit_transaction(TIMEOUT_S)

    def abort(self):
        self.producer.flush(TIMEOUT_S)  # abort_transaction would purge records not sent yet
        self.producer.abort_transaction(TIMEOUT_S)

    def rewind(self, first):
        # Back to the group's committed offsets: with isolation.level=read_committed librdkafka fetches them as
        # stable (require_stable), so a transaction just committed is in them, the aborted one must not be.
        for tp in self.consumer.committed([TopicPartition(self.input, p) for p in first], timeout=15):
            check(tp.error is None, f"committed offsets: {tp.error}")
            self.consumer.seek(TopicPartition(self.input, tp.partition, tp.offset if tp.offset >= 0 else OFFSET_BEGINNING))

    def close(self):
        self.consumer.close()


FENCING = (KafkaError._FENCED, KafkaError.PRODUCER_FENCED, KafkaError.INVALID_PRODUCER_EPOCH)


class GroupAdapter(txn.TxnAdapter):
    """The adapter of the group and the transaction scenarios."""

    def __init__(self, bootstrap, admin):
        super().__init__(bootstrap, admin, __file__, create_topic, produce)

    def committed(self, group_id, topic):
        consumer = Consumer({"bootstrap.servers": self.bootstrap, "group.id": group_id, "enable.auto.commit": False})
        try:  # a consumer that does not subscribe: OffsetFetch only, it does not join
            tps = consumer.committed([TopicPartition(topic, p) for p in range(group.PARTITIONS)], timeout=15)
            return {tp.partition: tp.offset for tp in tps}
        finally:
            consumer.close()

    def group_type(self, group_id):
        listed = self.admin.list_consumer_groups(request_timeout=15).result(20)
        kinds = [g.type.name.lower() for g in listed.valid if g.group_id == group_id]
        return kinds[0] if kinds else None

    def end_offsets(self, topic):
        consumer = Consumer({"bootstrap.servers": self.bootstrap, **CONSUMER})
        try:
            return {p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1] for p in range(group.PARTITIONS)}
        finally:
            consumer.close()

    def session(self, input_topic, output, group_id, transactional_id):
        return TransformSession(self.bootstrap, input_topic, output, group_id, transactional_id)

    def producer(self, transactional_id):
        return TxnProducer(self.bootstrap, transactional_id)

    def is_fencing(self, error):
        return isinstance(error, KafkaException) and error.args[0].code() in FENCING

    def read(self, topic, partitions, isolation):
        return consume_all(self.bootstrap, topic, partitions, **{"isolation.level": isolation})


class CleanupAdapter(cleanup.Adapter):
    """cleanup.py's adapter: librdkafka's producer (None values are tombstones), assign()-ing consumers."""

    def __init__(self, bootstrap, admin):
        super().__init__(bootstrap, admin, create_topic, produce, consume_all)

    def earliest(self, topic):
        consumer = Consumer({"bootstrap.servers": self.bootstrap, **CONSUMER})
        try:
            return consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)[0]
        finally:
            consumer.close()

    def read_behind(self, topic, offset, n):
        consumer = Consumer({"bootstrap.servers": self.bootstrap, **CONSUMER, "auto.offset.reset": "earliest"})
        try:
            consumer.assign([TopicPartition(topic, 0, offset)])
            read, deadline = [], time.monotonic() + 20
            while len(read) < n and time.monotonic() < deadline:
                for msg in consumer.consume(n - len(read), timeout=1):
                    if msg.error():
                        raise KafkaException(msg.error())
                    read.append((msg.offset(), msg.key(), msg.value()))
            return read
        finally:
            consumer.close()


def cluster_produce(bootstrap, topic, count):
    """cluster-produce mode (compat/cluster/cluster-test.js): an idempotent acks=all producer sends COUNT records
    key "seq-<n>" at about 500/s through a partition leader's death; prints "ack <n> <partition> <offset>" for each
    acknowledgement."""
    producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "acks": "all", "linger.ms": 5,
                         "message.timeout.ms": 60000, "reconnect.backoff.ms": 100, "reconnect.backoff.max.ms": 500, "retry.backoff.ms": 100})
    failed = []

    def report(err, msg):
        if err:
            failed.append(f"{msg.key().decode()}: {err}")
        else:
            print(f"ack {msg.key().decode()[4:]} {msg.partition()} {msg.offset()}", flush=True)
    for n in range(int(count)):
        producer.produce(topic, str(n).encode(), f"seq-{n}".encode(), on_delivery=report)
        producer.poll(0)
        if n % 10 == 9:
            time.sleep(0.02)
    left = producer.flush(90)
    check(not failed and not left, f"{len(failed)} deliveries failed, {left} undelivered: {failed[:5]}")


THROTTLE_RATES = ("leader.replication.throttled.rate", "follower.replication.throttled.rate")


def alter_throttle_rates(admin, ids, op):
    """incremental_alter_configs of both replication throttle rates (1 B/s) on every broker, op SET or DELETE (one
    call a broker: librdkafka allows one BROKER resource per call, each goes to its broker)."""
    for i in ids:
        resource = ConfigResource(ResourceType.BROKER, str(i), incremental_configs=[
            ConfigEntry(name, "1" if op == AlterConfigOpType.SET else None, incremental_operation=op) for name in THROTTLE_RATES])
        [f] = admin.incremental_alter_configs([resource]).values()
        f.result(timeout=30)


def dynamic_broker_configs(admin, broker):
    """describe_configs of a broker: {name: value} of its dynamic per-broker configs."""
    [f] = admin.describe_configs([ConfigResource(ResourceType.BROKER, str(broker))]).values()
    return {e.name: e.value for e in f.result(timeout=30).values() if e.source == ConfigSource.DYNAMIC_BROKER_CONFIG.value}


def partition_state(admin, topic):
    p = admin.list_topics(topic, timeout=15).topics[topic].partitions[0]
    return p.leader, p.replicas, sorted(p.isrs)


def cluster_admin_partitions(bootstrap, admin):
    """The cluster-admin-partitions row (no reassignment API in librdkafka: partitions.py reorders with Kafka's tool).
    The replication throttle rates set on every broker, described as dynamic broker configs, deleted; a topic on
    [a, b] reordered to [b, a]: a still leads; elect_leaders PREFERRED makes b lead, a second one answers
    ELECTION_NOT_NEEDED; records produced after."""
    ids = sorted(admin.list_topics(timeout=15).brokers)
    check(len(ids) == 3, f"expected 3 brokers, got {ids}")
    a, b, c = ids

    alter_throttle_rates(admin, ids, AlterConfigOpType.SET)
    retry(lambda: check(all(dynamic_broker_configs(admin, i).get(name) == "1" for i in ids for name in THROTTLE_RATES),
                        f"describe_configs: the throttle rates are not dynamic broker configs of 1 on every broker: "
                        f"{ {i: dynamic_broker_configs(admin, i) for i in ids} }"))
    alter_throttle_rates(admin, ids, AlterConfigOpType.DELETE)
    retry(lambda: check(not any(name in dynamic_broker_configs(admin, i) for i in ids for name in THROTTLE_RATES),
                        f"describe_configs after DELETE: { {i: dynamic_broker_configs(admin, i) for i in ids} }"))

    topic = data.topic_name("confluent", "adminp")
    admin.create_topics([NewTopic(topic, num_partitions=1, replica_assignment=[[a, b]])], operation_timeout=15)[topic].result(timeout=30)
    retry(lambda: check(partition_state(admin, topic) == (a, [a, b], [a, b]), f"{topic}-0 not led by {a} with [{a}, {b}] in sync: {partition_state(admin, topic)}"), 30)
    partitions.reassign_with_kafka_tool(bootstrap, topic, 0, [b, a])
    retry(lambda: check(partition_state(admin, topic)[1] == [b, a], f"{topic}-0 not reordered to [{b}, {a}]: {partition_state(admin, topic)}"), 30)
    check(partition_state(admin, topic)[0] == a, f"the reorder moved the leadership: {partition_state(admin, topic)}")

    tp = TopicPartition(topic, 0)
    [(elected_tp, error)] = admin.elect_leaders(ElectionType.PREFERRED, [tp]).result(timeout=30).items()
    check(elected_tp.topic == topic and elected_tp.partition == 0 and error is None, f"elect_leaders PREFERRED {topic}-0: {elected_tp} {error}")
    retry(lambda: check(partition_state(admin, topic)[0] == b, f"after elect_leaders PREFERRED: {partition_state(admin, topic)}"), 30)
    [(_, again)] = admin.elect_leaders(ElectionType.PREFERRED, [tp]).result(timeout=30).items()
    check(isinstance(again, KafkaError) and again.code() == KafkaError.ELECTION_NOT_NEEDED,
          f"a second elect_leaders PREFERRED {topic}-0: {again!r}, expected ELECTION_NOT_NEEDED")
    produce(bootstrap, topic, [(f"k-{i}".encode(), f"v-{i}".encode(), None, None) for i in range(10)], partition=0)
    return (f"throttle rates set, described (dynamic, every broker), deleted; {topic}-0 reordered to [{b}, {a}] with Kafka's tool, "
            f"elect_leaders PREFERRED: {b} leads, then ELECTION_NOT_NEEDED")


# ----- the security rows (compat/security/rows.js): librdkafka's security settings, alice as the user.

def secure_produce_consume(bootstrap, admin):
    for t in security.TRANSPORTS:
        topic = f"secure-confluent-{t.lower()}"
        admin.create_topics([NewTopic(topic, num_partitions=1, replication_factor=1)], operation_timeout=15)[topic].result(timeout=30)
        conf = security.librdkafka_config(t, "alice")
        sent = security.sent_values(t)
        produce(security.endpoint(t), topic, [(f"k{i}".encode(), v, None, None) for i, v in enumerate(sent)], **conf)
        # consume_all's consumer has a group.id (unused, but librdkafka looks its coordinator up): one alice may describe
        read = [r[3] for r in consume_all(security.endpoint(t), topic, 1, **conf, **{"group.id": f"secure-confluent-{t.lower()}"})]
        check(read == sent, f"{t}: read back {read}, expected {sent}")
        print(f"{t}: {security.RECORDS} records produced and read back", flush=True)  # progress, shown if a later transport times out
    return f"produced and consumed {security.RECORDS} records over {', '.join(security.TRANSPORTS)}"


def kafka_error_code(f):
    """The KafkaError code f raises (KafkaException), else a description of what it did."""
    try:
        return f"no error: {f()!r}"
    except KafkaException as e:
        return e.args[0].code() if isinstance(e.args[0], KafkaError) else repr(e)


def acl_denials(bootstrap, admin):
    """FJORD_SEC_PHASE denied, then allowed: alice over SASL_PLAINTEXT with PLAIN."""
    b, conf, topic = security.endpoint("PLAIN", False), security.librdkafka_config("PLAIN", "alice", False), "acl-confluent-kafka"
    # consume_all's consumer has a group.id (unused, but librdkafka looks its coordinator up): one alice may read
    consume_conf = {**conf, "group.id": "acl-ok-confluent"}
    if security.env("FJORD_SEC_PHASE") == "allowed":
        read = [r[3] for r in consume_all(b, topic, 1, **consume_conf)]
        check(read[:5] == [f"r{i}".encode() for i in range(5)], f"read {read} after the READ grant")
        return f"after the READ grant: {topic} read group-less"
    code = kafka_error_code(lambda: consume_all(b, topic, 1, **consume_conf))
    check(code == KafkaError.TOPIC_AUTHORIZATION_FAILED, f"group-less read of {topic} without READ: {code}, expected TOPIC_AUTHORIZATION_FAILED")

    def join_denied_group():
        consumer = Consumer({"bootstrap.servers": b, "group.id": "acl-denied-confluent", "auto.offset.reset": "earliest", **conf})
        try:
            consumer.subscribe([topic])
            deadline = time.monotonic() + 15
            while time.monotonic() < deadline:
                msg = consumer.poll(1)
                if msg is not None and msg.error():
                    raise KafkaException(msg.error())
                check(msg is None, f"read {msg.value()} in group acl-denied-confluent")
            return "nothing within 15 s"
        finally:
            consumer.close()
    code = kafka_error_code(join_denied_group)
    check(code == KafkaError.GROUP_AUTHORIZATION_FAILED, f"group acl-denied-confluent: {code}, expected GROUP_AUTHORIZATION_FAILED")
    code = kafka_error_code(lambda: Producer({"bootstrap.servers": b, "transactional.id": "acl-txn-confluent", **conf}).init_transactions(15))
    check(code == KafkaError.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, f"init_transactions: {code}, expected TRANSACTIONAL_ID_AUTHORIZATION_FAILED")
    return "consume: TOPIC_AUTHORIZATION_FAILED; subscribe: GROUP_AUTHORIZATION_FAILED; init_transactions: TRANSACTIONAL_ID_AUTHORIZATION_FAILED"


def run(bootstrap, scenario):
    admin = AdminClient({"bootstrap.servers": bootstrap, "client.id": "fjord-compat-confluent"})
    if scenario in (group.group_consume, group.group_rebalance, group.group_static, txn.txn_consume_transform_produce, txn.txn_zombie_fenced,
                    *group.CONSUMER_PROTOCOL_SCENARIOS.values()):
        return scenario(GroupAdapter(bootstrap, admin))
    if scenario in (cleanup.compaction, cleanup.retention):
        return scenario(CleanupAdapter(bootstrap, admin))
    return scenario(bootstrap, admin)


if __name__ == "__main__" and sys.argv[2:3] == ["cluster-produce"]:
    run_mode(cluster_produce, sys.argv[1], sys.argv[3], sys.argv[4])
elif __name__ == "__main__" and sys.argv[2:3] == ["share-member"]:  # share-queue's victim process (share.py)
    run_mode(share.share_member, sys.argv[1], sys.argv[3], sys.argv[4], int(sys.argv[5]))
elif __name__ == "__main__" and sys.argv[2:3] == ["group-member"]:
    group_member(sys.argv[1], json.loads(sys.argv[3]))
elif __name__ == "__main__":
    main({"connect": connect, "admin-topics": admin_topics, "produce-consume": produce_consume, "compression": compression,
          "large-records": large_records, "keyed-partitions": keyed_partitions, "offsets-by-time": offsets_by_time,
          "idempotent": idempotent, "group-consume": group.group_consume, "group-rebalance": group.group_rebalance,
          "group-static": group.group_static, "compaction": cleanup.compaction, "retention": cleanup.retention, "txn-consume-transform-produce": txn.txn_consume_transform_produce,
          "txn-zombie-fenced": txn.txn_zombie_fenced, "cluster-admin-partitions": cluster_admin_partitions, **group.CONSUMER_PROTOCOL_SCENARIOS,
          "secure-produce-consume": secure_produce_consume, "acl-denials": acl_denials,
          "share-queue": lambda b, admin: share.share_queue(b, admin, create_topic, produce),
          "share-dlq": lambda b, admin: share.share_dlq(b, admin, create_topic, produce, consume_all)}, run)
