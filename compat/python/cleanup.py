"""The log-cleanup scenarios' steps and checks for the Python client programs (confluent-kafka, kafka-python):
the same steps and checks as compat/lib/cleanup.js, which describes them. Each program passes an Adapter."""
import time

import data
from common import check, retry

KEYS, ROUNDS, DELETED = 10, 3, (0, 1)
SEGMENT_MS, DELETE_RETENTION_MS, CLEANING_TIMEOUT_S = 500, 1000, 20


class Adapter:
    """What the cleanup scenarios ask of a client: create_topic(prefix, configs) -> name, produce(topic,
    [(key, value or None, timestamp_ms or None)]), read_all(topic) -> [(offset, key, value)] come from the client
    program's own topic creation, producer and group-less reader; it subclasses this with earliest(topic) -> int
    and read_behind(topic, offset, n) -> [(offset, key, value)]: the first n records a consumer starting at
    `offset` with auto.offset.reset=earliest reads."""

    def __init__(self, bootstrap, admin, create_topic, produce, consume_all):
        self.bootstrap, self.admin = bootstrap, admin
        self._create_topic, self._produce, self._consume_all = create_topic, produce, consume_all

    def create_topic(self, prefix, configs):
        return self._create_topic(self.admin, prefix, 1, configs)

    def produce(self, topic, records):
        self._produce(self.bootstrap, topic, [(k, v, None, ts) for k, v, ts in records])

    def read_all(self, topic):
        return [(o, k, v) for _, o, k, v, _ in self._consume_all(self.bootstrap, topic, 1)]


def ck(k):
    return f"ck-{k}".encode()


def verify_compacted(records, expected, sentinel):
    """The last record is the sentinel (active segment); the others exactly the latest value of each key in `expected`."""
    check(records and records[-1][2] == sentinel, f"the last record is not the sentinel {sentinel}: {records}")
    rest = records[:-1]
    check(all(a[0] < b[0] for a, b in zip(rest, rest[1:])), f"offsets not increasing: {records}")
    seen = {}
    for offset, k, v in rest:
        check(k not in seen, f"key {k} read twice: {records}")
        seen[k] = v
    check(seen == expected, f"read {records}, expected one record per key: {sorted(expected.items())}")


def compaction(a):
    topic = a.create_topic("compaction", {"cleanup.policy": "compact", "segment.ms": str(SEGMENT_MS),
                                          "min.cleanable.dirty.ratio": "0.01", "delete.retention.ms": str(DELETE_RETENTION_MS)})
    records = [(ck(k), f"ck-{k}@{r}".encode(), None) for r in range(ROUNDS) for k in range(KEYS)]
    records += [(ck(k), None, None) for k in DELETED]
    latest = {k: v for k, v, _ in records}
    a.produce(topic, records)
    time.sleep((SEGMENT_MS + 200) / 1000)
    a.produce(topic, [(b"end", b"end-1", None)])
    retry(lambda: verify_compacted(a.read_all(topic), latest, b"end-1"), CLEANING_TIMEOUT_S)

    time.sleep((max(DELETE_RETENTION_MS, SEGMENT_MS) + 200) / 1000)
    a.produce(topic, [(b"end", b"end-2", None)])
    latest[b"end"] = b"end-1"
    for k in DELETED:
        del latest[ck(k)]
    retry(lambda: verify_compacted(a.read_all(topic), latest, b"end-2"), CLEANING_TIMEOUT_S)


def retention(a):
    topic = a.create_topic("retention", {"retention.ms": "60000"})
    old = int(time.time() * 1000) - 3600_000
    a.produce(topic, [(data.key(i), data.value(i), old) for i in range(20)])

    def moved():
        earliest = a.earliest(topic)
        check(earliest == 20, f"earliest offset {earliest}, expected 20 once retention deleted the old segments")
    retry(moved, 15)
    a.produce(topic, [(data.key(20 + i), data.value(20 + i), None) for i in range(10)])
    read = a.read_behind(topic, 5, 10)
    check(read == [(20 + i, data.key(20 + i), data.value(20 + i)) for i in range(10)],
          f"a consumer at offset 5 read {read}, expected records 20..29 (reset to the earliest)")
