"""The consumer-group scenarios, shared by the Python client programs: the same steps and checks as
compat/lib/group.js (group-consume, group-rebalance, group-static; read the description there), and the same with
group.protocol=consumer (CONSUMER_PROTOCOL_SCENARIOS, the -consumer rows: confluent-kafka only).

Each member is the client program itself in group-member mode (`client.py BOOTSTRAP group-member JSON`), a
process of its own, so that group-rebalance can SIGKILL it (neither librdkafka nor kafka-python can close a
dynamic member without sending LeaveGroup). A member prints one JSON event a line on stdout and closes
(commit, close) when it reads "close" on stdin:
  {"ev": "assigned" | "revoked" | "lost", "partitions": [...]}   from the rebalance callbacks
  {"ev": "rec", "p": partition, "o": offset, "k": key}            one a record
  {"ev": "error", "error": text}, {"ev": "closed"}
"""
import json
import re
import subprocess
import sys
import threading
import time

import data
from common import check

PARTITIONS = 6
HEARTBEAT_MS = 500
REBALANCE_SESSION_MS = 6000  # group.min.session.timeout.ms's default: the shortest a broker allows
SESSION_MS = 10000
REBALANCE_TIMEOUT_MS = 20000  # max.poll.interval.ms: bounds a join phase
COMMIT_INTERVAL_MS = 500


class Emitter:
    """The member side: JSON lines on stdout, and the "close" command from stdin."""

    def __init__(self):
        self.lock = threading.Lock()
        self.closing = threading.Event()
        threading.Thread(target=self._stdin, daemon=True).start()

    def _stdin(self):
        for line in sys.stdin:
            if "close" in line:
                break
        self.closing.set()  # "close", or the orchestrator went away

    def __call__(self, ev, **fields):
        with self.lock:
            sys.stdout.write(json.dumps({"ev": ev, **fields}) + "\n")
            sys.stdout.flush()


class Member:
    """The orchestrator side: one member process and what it reported."""

    def __init__(self, name, args):
        self.name = name
        self.assignment = set()
        self.events = []  # (ev, partitions, time)
        self.records = []  # (p, o, i, member)
        self.errors = []
        self.generation = None
        self.last_event = time.monotonic()
        self.lock = threading.Lock()
        self.proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1)
        threading.Thread(target=self._read_out, daemon=True).start()
        threading.Thread(target=self._read_err, daemon=True).start()

    def _read_out(self):
        for line in self.proc.stdout:
            if line.strip():
                try:
                    e = json.loads(line)
                except ValueError:
                    self.errors.append(line.strip()[:300])
                    continue
                with self.lock:
                    self.event(e)

    def _read_err(self):
        for line in self.proc.stderr:
            if line.strip():
                self.errors.append(line.strip()[:300])

    def event(self, e):
        ev = e["ev"]
        if ev == "rec":
            m = re.fullmatch(r"key-(\d+)", e["k"] or "")
            if m:
                self.records.append((e["p"], e["o"], int(m[1]), self.name))
            else:
                self.errors.append(f"unexpected key {e['k']!r} at {e['p']}/{e['o']}")
            return
        if ev == "error":
            self.errors.append(e["error"])
            return
        if ev == "closed":
            return
        if ev == "assignment":
            self.assignment = set(e["partitions"])
        elif ev == "assigned":
            self.assignment |= set(e["partitions"])
        elif ev in ("revoked", "lost"):
            self.assignment -= set(e["partitions"])
        else:
            self.errors.append(f"unknown event {e}")
            return
        if "generation" in e:
            self.generation = e["generation"]
        self.events.append((ev, e["partitions"], time.monotonic()))
        self.last_event = time.monotonic()

    def alive(self):
        return self.proc.poll() is None

    def close(self, timeout=20):
        """Asks the member to close (commit; LeaveGroup unless static); its exit code."""
        if self.alive():
            try:
                self.proc.stdin.write("close\n")
                self.proc.stdin.flush()
            except OSError:
                pass
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.kill()
        return self.proc.returncode

    def kill(self):
        if self.alive():
            self.proc.kill()
        self.proc.wait()

    def show(self):
        return (f"{self.name}: {sorted(self.assignment)} {len(self.records)} records"
                + (f" gen {self.generation}" if self.generation is not None else "")
                + ("" if self.alive() else f" exited {self.proc.returncode}")
                + (f" errors: {' | '.join(self.errors[-3:])}" if self.errors else ""))


def member_process(program, bootstrap, name, topic, group, session_ms, instance_id=None, protocol="classic"):
    opts = {"name": name, "topic": topic, "group": group, "sessionMs": session_ms, "instanceId": instance_id, "protocol": protocol}
    return Member(name, [sys.executable, program, bootstrap, "group-member", json.dumps(opts)])


class Adapter:
    """What the group scenarios ask of a client. A client program subclasses it with its own program
    file, topic creation and producer, and adds committed() and end_offsets() (and group_type() where the
    client runs the consumer-protocol rows). `protocol` is the members' group.protocol."""
    kill_note = "the member process got SIGKILL"
    protocol = "classic"

    def __init__(self, bootstrap, admin, program, create_topic, produce):
        self.bootstrap, self.admin = bootstrap, admin
        self._program, self._create_topic, self._produce = program, create_topic, produce

    def create_topic(self, prefix, partitions):
        return self._create_topic(self.admin, prefix, partitions)

    def produce(self, topic, lo, hi):
        self._produce(self.bootstrap, topic, [(data.key(i), data.value(i), data.headers(i), None) for i in range(lo, hi)])

    def member(self, name, topic, group_id, session_ms, instance_id=None):
        return member_process(self._program, self.bootstrap, name, topic, group_id, session_ms, instance_id, self.protocol)


def wait_for(cond, seconds, what, members=()):
    start = time.monotonic()
    while not cond():
        if time.monotonic() - start > seconds:
            raise AssertionError(f"{what} (after {seconds} s): " + "; ".join(m.show() for m in members))
        time.sleep(0.025)
    return time.monotonic() - start


def settled(members, partitions=PARTITIONS):
    owned = set()
    for m in members:
        if not m.alive() or not m.assignment or owned & m.assignment:
            return False
        owned |= m.assignment
    return len(owned) == partitions


def wait_settled(members, seconds, what):
    wait_for(lambda: settled(members) and all(time.monotonic() - m.last_event >= 1 for m in members), seconds, what, members)


def read(members, lo=0, hi=10**9):
    return {i for m in members for (p, o, i, n) in list(m.records) if lo <= i < hi}


def check_no_duplicates(members, lo=0, hi=10**9):
    where = {}
    for m in members:
        for r in list(m.records):
            if lo <= r[2] < hi:
                prev = where.get(r[2])
                check(prev is None, f"record key-{r[2]} read twice: by {prev and prev[3]} at {prev and f'{prev[0]}/{prev[1]}'} and by {r[3]} at {r[0]}/{r[1]}")
                where[r[2]] = r


def check_no_errors(members):
    for m in members:
        check(not m.errors, f"{m.name} reported errors: {' | '.join(m.errors[:5])}")


def owned(members):
    return ", ".join(f"{m.name} {sorted(m.assignment)}" for m in members)


def check_group_type(a, group_id):
    """With group.protocol=consumer, the group is a consumer group (a client may fall back to the classic
    protocol where the broker lacks ConsumerGroupHeartbeat: that is no pass)."""
    if a.protocol == "consumer":
        kind = a.group_type(group_id)
        check(kind == "consumer", f"group {group_id} is of type {kind!r}, expected 'consumer' (group.protocol=consumer)")


# The adapter `a` a client program hands in: a.create_topic(prefix, partitions) -> topic; a.produce(topic, lo, hi)
# (records key-<i> / value(i) / headers(i)); a.member(name, topic, group, session_ms, instance_id=None) -> Member;
# a.committed(group, topic) -> {partition: offset}; a.end_offsets(topic) -> {partition: offset}; a.kill_note.

def group_consume(a):
    topic = a.create_topic("gc", PARTITIONS)
    a.produce(topic, 0, 600)
    group = f"{topic}-group"
    members = [a.member(n, topic, group, SESSION_MS) for n in ("m0", "m1", "m2")]
    try:
        wait_for(lambda: len(read(members)) == 600, 30, "the three members did not read all 600 records", members)
        wait_settled(members, 20, "the group did not settle with three members owning all 6 partitions")
        check_group_type(a, group)
        check_no_errors(members)
        check_no_duplicates(members)
        assignments = owned(members)
        for m in members:
            code = m.close()
            check(code == 0, f"{m.name} did not close cleanly (exit {code}): {' | '.join(m.errors[-3:])}")
        committed, ends = a.committed(group, topic), a.end_offsets(topic)
        check(all(committed.get(p) == ends[p] for p in range(PARTITIONS)), f"committed offsets {committed}, expected the end offsets {ends}")
        return f"600 records read once each; assignments {assignments}; committed offsets = end offsets"
    finally:
        for m in members:
            m.kill()


def group_rebalance(a):
    topic = a.create_topic("gr", PARTITIONS)
    group = f"{topic}-group"
    members = [a.member(n, topic, group, REBALANCE_SESSION_MS) for n in ("m0", "m1", "m2")]
    try:
        wait_settled(members, 30, "the group did not settle with three members owning all 6 partitions")
        check_group_type(a, group)
        a.produce(topic, 0, 300)
        wait_for(lambda: len(read(members, 0, 300)) == 300, 20, "records 0..299 not all read before the kill", members)
        victim, survivors = members[2], members[:2]
        victim_had = sorted(victim.assignment)
        t0 = time.monotonic()
        victim.kill()
        a.produce(topic, 300, 600)
        wait_for(lambda: settled(survivors), REBALANCE_SESSION_MS / 1000 + 20, f"{victim.name}'s partitions {victim_had} did not move to the survivors", survivors)
        moved = int((time.monotonic() - t0) * 1000)
        low, high = REBALANCE_SESSION_MS - HEARTBEAT_MS - 1000, REBALANCE_SESSION_MS + 2 * HEARTBEAT_MS + 2500
        check(moved >= low, f"the partitions moved {moved} ms after the kill, before the {REBALANCE_SESSION_MS} ms session could expire ({a.kill_note})")
        check(moved <= high, f"the partitions moved {moved} ms after the kill, later than session timeout {REBALANCE_SESSION_MS} ms + rejoin ({high} ms)")
        wait_for(lambda: len(read(survivors, 300, 600)) == 300, 20, "records 300..599 (produced after the kill) not all read by the survivors", survivors)
        check_no_errors(survivors)
        check_no_duplicates(survivors, 300, 600)
        after = owned(survivors)
        for m in survivors:
            m.close()
        return f"{victim.name} {victim_had} killed ({a.kill_note}); {after} {moved} ms later; records 300..599 all read"
    finally:
        for m in members:
            m.kill()


def group_static(a):
    topic = a.create_topic("gs", PARTITIONS)
    group = f"{topic}-group"
    first = a.member("a", topic, group, SESSION_MS, f"{group}-a")
    every = [first]
    try:
        wait_for(lambda: len(first.assignment) == PARTITIONS, 30, "the first static member did not get all 6 partitions", every)
        second = a.member("b", topic, group, SESSION_MS, f"{group}-b")
        every.append(second)
        wait_settled([first, second], 30, "the group did not settle with two static members")
        check_group_type(a, group)
        a.produce(topic, 0, 200)
        wait_for(lambda: len(read(every, 0, 200)) == 200, 20, "records 0..199 not all read", every)
        events_before, assignment_before, generation_before = len(first.events), sorted(first.assignment), first.generation
        second_had = sorted(second.assignment)
        code = second.close()
        check(code == 0, f"{second.name} did not close cleanly (exit {code}): {' | '.join(second.errors[-3:])}")
        t0 = time.monotonic()
        again = a.member("b2", topic, group, SESSION_MS, f"{group}-b")
        every.append(again)
        wait_for(lambda: again.assignment, SESSION_MS / 1000, f"the restarted static member got no partitions within the {SESSION_MS} ms session timeout", every)
        rejoin = time.monotonic() - t0
        a.produce(topic, 200, 400)
        wait_for(lambda: len(read([first, again], 200, 400)) == 200, 20, "records 200..399 not all read after the restart", every)
        time.sleep(max(0.0, 2 - (time.monotonic() - t0 - rejoin)))
        extra = [f"{ev} {ps} at +{int((t - t0) * 1000)} ms" for ev, ps, t in first.events[events_before:]]
        check(not extra, f"the restart of static member b rebalanced the group: member a saw {', '.join(extra)}")
        check(sorted(first.assignment) == assignment_before, f"member a's assignment changed: {assignment_before} -> {sorted(first.assignment)}")
        check(first.generation == generation_before, f"member a's generation changed: {generation_before} -> {first.generation}")
        check(sorted(again.assignment) == second_had, f"the restarted member got {sorted(again.assignment)}, it had {second_had}")
        check_no_errors([first, again])
        check_no_duplicates(every)
        first.close()
        again.close()
        return (f"static member b {second_had} restarted and rejoined in {int(rejoin * 1000)} ms; member a {assignment_before}"
                + (f" generation {generation_before}" if generation_before is not None else "") + " saw no rebalance")
    finally:
        for m in every:
            m.kill()


def consumer_protocol(scenario):
    """The scenario with group.protocol=consumer (KIP-848): the broker assigns (its group.consumer.assignors),
    and its session timeout and heartbeat interval apply (group.consumer.session.timeout.ms and
    group.consumer.heartbeat.interval.ms: 6 s and 0.5 s on the compat brokers, the timings of the classic rows)."""
    def run(a):
        a.protocol = "consumer"
        return scenario(a)
    return run


# The consumer-protocol rows, for the clients that have group.protocol=consumer (confluent-kafka).
CONSUMER_PROTOCOL_SCENARIOS = {f"{name}-consumer": consumer_protocol(f) for name, f in
                               (("group-consume", group_consume), ("group-rebalance", group_rebalance), ("group-static", group_static))}
