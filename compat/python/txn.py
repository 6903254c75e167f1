"""The transaction scenarios, shared by the Python client programs: the same steps and checks as compat/lib/txn.js
(txn-consume-transform-produce, txn-zombie-fenced; read the description there).

A client program hands in an adapter (see TxnAdapter below) whose transactional producer and group consumer are
the client's own; the loop, the zombie's steps and the checks are here.
"""
import os
import re
import time

import group
from common import check

INPUT_RECORDS = 120
PARTITIONS = 6
RECORDS_PER_TXN = 10
ABORT_EVERY = 3  # transaction t is aborted when t % ABORT_EVERY == 0
END_KEY = b"end"
LOOP_TIMEOUT_S = 30
# A pause after each commit: the cluster rows (FJORD_COMPAT_TXN_PAUSE_MS) stretch the loop so that the harness
# can kill the transaction coordinator's broker mid-run.
PAUSE_S = int(os.environ.get("FJORD_COMPAT_TXN_PAUSE_MS", "0")) / 1000


def output_value(i, t):
    return f"out-{i}:txn-{t}".encode()


def index(key):
    """i of an input record's key key-<i>."""
    return int(key.decode()[len("key-"):])


class Transactions:
    """What the transactional loop did: the input indexes each committed or aborted transaction wrote."""

    def __init__(self):
        self.committed = {}  # t -> [i]
        self.aborted = {}  # t -> [i]

    def complete(self):
        return len({i for ids in self.committed.values() for i in ids}) == INPUT_RECORDS

    def show(self):
        def count(m):
            return sum(len(ids) for ids in m.values())
        return (f"{len(self.committed)} transactions committed ({count(self.committed)} records), "
                f"{len(self.aborted)} aborted ({count(self.aborted)} records)")


def transform(session):
    """The consume-transform-produce loop on a session (the client's group consumer and transactional producer):
    session.poll(n) -> [(partition, offset, key)], begin(), send(key, value), send_offsets({partition: offset}),
    commit(), abort() (after flushing), rewind({partition: first offset of the aborted records}), close()."""
    txns, t = Transactions(), 0
    deadline = time.monotonic() + LOOP_TIMEOUT_S
    while not txns.complete():
        check(time.monotonic() < deadline, f"the transactional loop did not write every input record in {LOOP_TIMEOUT_S} s: {txns.show()}")
        records = session.poll(RECORDS_PER_TXN)
        if not records:
            continue
        t += 1
        session.begin()
        for _, _, k in records:
            session.send(k, output_value(index(k), t))
        session.send_offsets({p: o + 1 for p, o, _ in records})  # records are in offset order per partition
        ids = [index(k) for _, _, k in records]
        if t % ABORT_EVERY == 0:
            session.abort()
            txns.aborted[t] = ids
            session.rewind({p: o for p, o, _ in reversed(records)})
        else:
            session.commit()
            txns.committed[t] = ids
            time.sleep(PAUSE_S)
    return txns


def split_end(records, partitions, what):
    """The records without the "end" ones; checks that every partition had its "end" record."""
    ends = {r[0] for r in records if r[2] == END_KEY}
    for p in range(partitions):
        check(p in ends, f'{what}: no "end" record read on output partition {p}: the consumer did not get past the transactions there')
    return [r for r in records if r[2] != END_KEY]


def parse_output(r, what):
    """(i, t) of an output record (partition, offset, key, value, ...): key-<i> / out-<i>:txn-<t>."""
    m = re.fullmatch(rb"out-(\d+):txn-(\d+)", r[3] or b"")
    check(m and r[2] == f"key-{int(m[1])}".encode(), f"{what}: unexpected record {r[2]!r} / {r[3]!r} at {r[0]}/{r[1]}")
    return int(m[1]), int(m[2])


def verify_transformed(txns, committed_read, uncommitted_read, committed_offsets, end_offsets):
    check(txns.aborted, f"no transaction was aborted: {txns.show()}")
    seen = {}  # i -> t
    for r in split_end(committed_read, PARTITIONS, "read_committed"):
        i, t = parse_output(r, "read_committed")
        check(t not in txns.aborted, f"read_committed returned out-{i} of aborted transaction {t} (at {r[0]}/{r[1]})")
        check(i in txns.committed.get(t, ()), f"read_committed returned out-{i} of transaction {t}, which the client did not commit with it")
        check(i not in seen, f"read_committed returned input record {i} twice: by transactions {seen.get(i)} and {t}")
        seen[i] = t
    missing = [i for i in range(INPUT_RECORDS) if i not in seen]
    check(not missing, f"read_committed: {len(missing)} input records not in the output: {missing[:10]}")

    written = {}  # (i, t) -> times read
    for r in split_end(uncommitted_read, PARTITIONS, "read_uncommitted"):
        key = parse_output(r, "read_uncommitted")
        written[key] = written.get(key, 0) + 1
    for kind, txn_map in (("committed", txns.committed), ("aborted", txns.aborted)):
        for t, ids in txn_map.items():
            for i in ids:
                check(written.get((i, t)) == 1, f"read_uncommitted: out-{i} of {kind} transaction {t} read {written.get((i, t), 0)} times, expected once")
    expected = sum(len(ids) for m in (txns.committed, txns.aborted) for ids in m.values())
    check(sum(written.values()) == expected, f"read_uncommitted returned {sum(written.values())} output records, the transactions wrote {expected}")

    check(all(committed_offsets.get(p) == end_offsets[p] for p in range(PARTITIONS)),
          f"the group's committed offsets {committed_offsets}, expected the input's end offsets {end_offsets}")
    return (f"{txns.show()}; read_committed: each of {INPUT_RECORDS} records once, none aborted; "
            f"read_uncommitted: all {expected}; committed offsets = end offsets")


def verify_fenced(fence_error, fencing, committed_after_fence, committed_read, uncommitted_read):
    check(fence_error, "the fenced producer A wrote and committed after B initialized with the same transactional.id: no error")
    check(fencing, f"producer A failed with {fence_error}, not with a fencing error (PRODUCER_FENCED / INVALID_PRODUCER_EPOCH)")
    check(not committed_after_fence, f"producer A's commit succeeded after it was fenced (the send failed with {fence_error})")
    committed = [r[3] for r in split_end(committed_read, 1, "read_committed")]
    check(committed == [b"b-0"], f"read_committed returned {committed}, expected [b'b-0']: nothing of the fenced producer")
    uncommitted = [r[3] for r in split_end(uncommitted_read, 1, "read_uncommitted")]
    check(uncommitted == [b"a-0", b"b-0"], f"read_uncommitted returned {uncommitted}, expected [b'a-0', b'b-0'] (A's first record, aborted by the fencing, then B's)")
    return f"A fenced: {fence_error!r}; read_committed [b-0], read_uncommitted [a-0, b-0]"


class TxnAdapter(group.Adapter):
    """What the transaction scenarios ask of a client, besides the group adapter's create_topic / produce /
    committed / end_offsets: a client's adapter subclasses it and adds
      session(input, output, group_id, transactional_id) -> a session for transform()
      producer(transactional_id) -> initialized; begin(), send(topic, value) (waits for the acknowledgement,
          raises on a delivery error), commit(), close()
      is_fencing(error) -> bool (error may be None)
      read(topic, partitions, isolation) -> [(partition, offset, key, value, headers)], isolation
          "read_committed" or "read_uncommitted"
    """

    def write_end(self, topic, partitions):
        """One "end" record on each partition, outside any transaction."""
        for p in range(partitions):
            self._produce(self.bootstrap, topic, [(END_KEY, END_KEY, None, None)], partition=p)

    def read_both_ways(self, topic, partitions):
        return [self.read(topic, partitions, isolation) for isolation in ("read_committed", "read_uncommitted")]


def txn_consume_transform_produce(a):
    input_topic, output = a.create_topic("txn-in", PARTITIONS), a.create_topic("txn-out", PARTITIONS)
    a.produce(input_topic, 0, INPUT_RECORDS)
    group_id = f"{input_topic}-group"
    session = a.session(input_topic, output, group_id, f"{input_topic}-txn")
    try:
        txns = transform(session)
    finally:
        session.close()
    a.write_end(output, PARTITIONS)
    committed_read, uncommitted_read = a.read_both_ways(output, PARTITIONS)
    return verify_transformed(txns, committed_read, uncommitted_read, a.committed(group_id, input_topic), a.end_offsets(input_topic))


def txn_zombie_fenced(a):
    topic = a.create_topic("zombie", 1)
    transactional_id = f"{topic}-txn"
    first = a.producer(transactional_id)
    first.begin()
    first.send(topic, b"a-0")
    second = a.producer(transactional_id)  # InitProducerId: fences the first and aborts its transaction
    fence_error, committed_after_fence = None, False
    try:
        second.begin()
        second.send(topic, b"b-0")
        second.commit()
        try:
            first.send(topic, b"a-1")
        except Exception as e:  # noqa: BLE001 - which error it is, is the check
            fence_error = e
        try:
            first.commit()
            committed_after_fence = True
        except Exception as e:  # noqa: BLE001
            fence_error = fence_error or e
    finally:
        first.close()
        second.close()
    a.write_end(topic, 1)
    committed_read, uncommitted_read = a.read_both_ways(topic, 1)
    return verify_fenced(fence_error and f"{type(fence_error).__name__}: {fence_error}", a.is_fencing(fence_error), committed_after_fence,
                         committed_read, uncommitted_read)
