'use strict';
// The consumer-group scenarios, shared by the Node client programs (kafkajs, kcat). Every client program
// (python/group.py, java/.../Group.java, go/group.go) runs the same steps with the same checks:
//
// group-consume          6 partitions, records 0..599 produced first; three members of a new group read them.
//                        Pass: all 600 read, none twice, the final assignments disjoint, covering the 6
//                        partitions, every member with some; after the members close, the group's committed
//                        offsets are the end offsets.
// group-rebalance        three members (session timeout 6 s) settle and read records 0..299; one is killed
//                        (SIGKILL, or closed without leaving); records 300..599 are produced. Pass: the two
//                        survivors own all 6 partitions between session-timeout - heartbeat - 1 s (earlier:
//                        the broker did not wait for the session to expire) and session timeout + 2
//                        heartbeats + 2.5 s after the kill, and read every record from 300 on.
// group-static           two static members (group.instance.id), session timeout 10 s, settle; records
//                        0..199 read; the second member closes (a static member sends no LeaveGroup) and a new
//                        instance with the same group.instance.id starts. Pass: it gets the same partitions,
//                        records 200..399 are all read, none twice, and the first member sees no rebalance at
//                        all (no assignment callback, the same generation where the client shows it) in the
//                        2 s after the restart.
//
// The group-*-consumer rows run the same scenarios with group.protocol=consumer (KIP-848) where the client has it
// (confluent-kafka, Java, franz-go; not kafkajs or kcat): the broker's assignor, session timeout and heartbeat
// interval, and a check that the group is a consumer group.
//
// A member is a process (a kafkajs program, a kcat -G) whose events are parsed into `Member`:
// its current assignment, its records, the assignment events it saw and errors.
const { spawn } = require('child_process');
const { check } = require('./client-util');

const PARTITIONS = 6;
const HEARTBEAT_MS = 500;
const REBALANCE_SESSION_MS = 6000; // group.min.session.timeout.ms's default: the shortest a broker allows
const SESSION_MS = 10000;
const REBALANCE_TIMEOUT_MS = 20000; // max.poll.interval.ms / rebalance timeout: bounds a join phase
const COMMIT_INTERVAL_MS = 500;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Waits until cond() is true, polling every 25 ms; throws "what" (and describe()) after ms. Returns the wait in ms. */
async function waitFor(cond, ms, what, describe = () => '') {
  const start = Date.now();
  for (;;) {
    if (cond()) return Date.now() - start;
    if (Date.now() - start > ms) throw new Error(`${what} (after ${ms} ms)${describe() ? `: ${describe()}` : ''}`);
    await sleep(25);
  }
}

/**
 * One group member running as a process. `feed(line, stream)` parsers call `event(...)`.
 * Events: { ev: 'assignment', partitions } (the whole new assignment), 'assigned' / 'revoked' / 'lost'
 * (partitions added / taken away), 'rec' { p, o, k }, 'error' { error }, 'generation' { generation }.
 */
class Member {
  constructor(name) {
    this.name = name;
    this.assignment = new Set();
    this.events = []; // assignment events: { ev, partitions, t }
    this.records = []; // { p, o, i, member }
    this.errors = [];
    this.generation = null;
    this.lastEventAt = Date.now();
    this.exited = null; // { code, signal } once exited
  }

  attach(child, parseOut, parseErr) {
    this.child = child;
    for (const [stream, parse] of [[child.stdout, parseOut], [child.stderr, parseErr]]) {
      let buf = '';
      stream.setEncoding('utf8');
      stream.on('data', (d) => {
        buf += d;
        let nl;
        while ((nl = buf.indexOf('\n')) >= 0) {
          const line = buf.slice(0, nl);
          buf = buf.slice(nl + 1);
          if (line.trim()) parse(line);
        }
      });
    }
    this.exitedP = new Promise((r) => child.on('exit', (code, signal) => r((this.exited = { code, signal }))));
    child.on('error', (e) => this.errors.push(`spawn: ${e.message}`));
    return this;
  }

  event(e) {
    const now = Date.now();
    if (e.ev === 'rec') {
      const m = /^key-(\d+)$/.exec(e.k);
      if (!m) this.errors.push(`unexpected key ${JSON.stringify(e.k)} at ${e.p}/${e.o}`);
      else this.records.push({ p: e.p, o: e.o, i: Number(m[1]), member: this.name });
      return;
    }
    if (e.ev === 'error') return void this.errors.push(e.error);
    if (e.ev === 'generation') return void (this.generation = e.generation);
    if (e.ev === 'closed') return;
    if (e.ev === 'assignment') this.assignment = new Set(e.partitions);
    else if (e.ev === 'assigned') e.partitions.forEach((p) => this.assignment.add(p));
    else if (e.ev === 'revoked' || e.ev === 'lost') e.partitions.forEach((p) => this.assignment.delete(p));
    else return void this.errors.push(`unknown event ${JSON.stringify(e)}`);
    if (e.generation !== undefined) this.generation = e.generation;
    this.events.push({ ev: e.ev, partitions: e.partitions, t: now });
    this.lastEventAt = now;
  }

  alive() {
    return !this.exited;
  }

  kill() {
    if (this.alive()) this.child.kill('SIGKILL');
    return this.exitedP;
  }

  show() {
    return `${this.name}: [${[...this.assignment].sort((a, b) => a - b)}] ${this.records.length} records` +
      `${this.generation !== null ? ` gen ${this.generation}` : ''}${this.exited ? ` exited ${this.exited.code ?? this.exited.signal}` : ''}` +
      `${this.errors.length ? ` errors: ${this.errors.slice(-3).join(' | ')}` : ''}`;
  }
}

/** A member speaking the JSON-lines protocol (one event a line on stdout; "close" on stdin closes it). */
function jsonMember(name, program, args) {
  const member = new Member(name);
  const child = spawn(program, args, { stdio: ['pipe', 'pipe', 'pipe'] });
  member.attach(
    child,
    (line) => {
      try {
        member.event(JSON.parse(line));
      } catch {
        member.errors.push(line.slice(0, 300));
      }
    },
    (line) => member.errors.push(line.slice(0, 300)),
  );
  member.close = async (ms = 20000) => {
    if (!member.alive()) return member.exited;
    child.stdin.write('close\n');
    const timer = setTimeout(() => member.kill(), ms);
    const r = await member.exitedP;
    clearTimeout(timer);
    return r;
  };
  return member;
}

const sorted = (s) => [...s].sort((a, b) => a - b);
const describeAll = (members) => () => members.map((m) => m.show()).join('; ');

/** Every member owns some partitions, no partition twice, all `partitions` owned. */
function settled(members, partitions = PARTITIONS) {
  const all = new Set();
  for (const m of members) {
    if (!m.alive() || m.assignment.size === 0) return false;
    for (const p of m.assignment) {
      if (all.has(p)) return false;
      all.add(p);
    }
  }
  return all.size === partitions;
}

/** Waits until the members are settled and none has seen an assignment event for a second. */
async function waitSettled(members, ms, what) {
  return waitFor(() => settled(members) && members.every((m) => Date.now() - m.lastEventAt >= 1000), ms, what, describeAll(members));
}

/** Distinct record indexes in [from, to) read by the members. */
function readIndexes(members, from = 0, to = Infinity) {
  const seen = new Set();
  for (const m of members) for (const r of m.records) if (r.i >= from && r.i < to) seen.add(r.i);
  return seen;
}

/** Throws if any record index in [from, to) was read twice (by one member or two). */
function checkNoDuplicates(members, from = 0, to = Infinity) {
  const where = new Map();
  for (const m of members) {
    for (const r of m.records) {
      if (r.i < from || r.i >= to) continue;
      const prev = where.get(r.i);
      check(!prev, `record key-${r.i} read twice: by ${prev && prev.member} at ${prev && `${prev.p}/${prev.o}`} and by ${r.member} at ${r.p}/${r.o}`);
      where.set(r.i, r);
    }
  }
}

function checkNoErrors(members) {
  for (const m of members) check(!m.errors.length, `${m.name} reported errors: ${m.errors.slice(0, 5).join(' | ')}`);
}

/**
 * The adapter a client program hands in:
 *   createTopic(prefix, partitions) -> topic
 *   produce(topic, from, to)        records key-<i> / value(i) / headers(i) for i in [from, to)
 *   member(name, topic, group, { sessionMs, instanceId }) -> Member (started)
 *   committed(group, topic) -> { partition: offset }; endOffsets(topic) -> { partition: offset }
 *   killNote: how the kill is done (for messages)
 */
async function groupConsume(a) {
  const topic = await a.createTopic('gc', PARTITIONS);
  await a.produce(topic, 0, 600);
  const group = `${topic}-group`;
  const members = ['m0', 'm1', 'm2'].map((n) => a.member(n, topic, group, { sessionMs: SESSION_MS }));
  try {
    await waitFor(() => readIndexes(members).size === 600, 30000, 'the three members did not read all 600 records', describeAll(members));
    await waitSettled(members, 20000, 'the group did not settle with three members owning all 6 partitions');
    checkNoErrors(members);
    checkNoDuplicates(members);
    const owned = members.map((m) => `${m.name} [${sorted(m.assignment)}]`).join(', ');
    const closed = await Promise.all(members.map((m) => m.close()));
    closed.forEach((r, i) => check(r.code === 0, `${members[i].name} did not close cleanly (exit ${r.code ?? r.signal}): ${members[i].errors.slice(-3).join(' | ')}`));
    const [committed, ends] = [await a.committed(group, topic), await a.endOffsets(topic)];
    for (let p = 0; p < PARTITIONS; p++) {
      check(Number(committed[p]) === Number(ends[p]), `committed offsets ${JSON.stringify(committed)}, expected the end offsets ${JSON.stringify(ends)}`);
    }
    return `600 records read once each; assignments ${owned}; committed offsets = end offsets`;
  } finally {
    await Promise.all(members.map((m) => m.kill()));
  }
}

async function groupRebalance(a) {
  const topic = await a.createTopic('gr', PARTITIONS);
  const group = `${topic}-group`;
  const members = ['m0', 'm1', 'm2'].map((n) => a.member(n, topic, group, { sessionMs: REBALANCE_SESSION_MS }));
  try {
    await waitSettled(members, 30000, 'the group did not settle with three members owning all 6 partitions');
    await a.produce(topic, 0, 300);
    await waitFor(() => readIndexes(members, 0, 300).size === 300, 20000, 'records 0..299 not all read before the kill', describeAll(members));
    const [victim, ...survivors] = [members[2], members[0], members[1]];
    const victimHad = sorted(victim.assignment);
    const t0 = Date.now();
    await victim.kill();
    await a.produce(topic, 300, 600);
    await waitFor(() => settled(survivors), REBALANCE_SESSION_MS + 20000, `${victim.name}'s partitions [${victimHad}] did not move to the survivors`, describeAll(survivors));
    const moved = Date.now() - t0;
    const low = REBALANCE_SESSION_MS - HEARTBEAT_MS - 1000;
    const high = REBALANCE_SESSION_MS + 2 * HEARTBEAT_MS + 2500;
    check(moved >= low, `the partitions moved ${moved} ms after the kill, before the ${REBALANCE_SESSION_MS} ms session could expire (${a.killNote})`);
    check(moved <= high, `the partitions moved ${moved} ms after the kill, later than session timeout ${REBALANCE_SESSION_MS} ms + rejoin (${high} ms)`);
    await waitFor(() => readIndexes(survivors, 300, 600).size === 300, 20000, 'records 300..599 (produced after the kill) not all read by the survivors', describeAll(survivors));
    checkNoErrors(survivors);
    checkNoDuplicates(survivors, 300, 600);
    const owned = survivors.map((m) => `${m.name} [${sorted(m.assignment)}]`).join(', ');
    await Promise.all(survivors.map((m) => m.close()));
    return `${victim.name} [${victimHad}] killed (${a.killNote}); ${owned} ${moved} ms later; records 300..599 all read`;
  } finally {
    await Promise.all(members.map((m) => m.kill()));
  }
}

async function groupStatic(a) {
  const topic = await a.createTopic('gs', PARTITIONS);
  const group = `${topic}-group`;
  const opts = (id) => ({ sessionMs: SESSION_MS, instanceId: `${group}-${id}` });
  const first = a.member('a', topic, group, opts('a'));
  const all = [first];
  try {
    await waitFor(() => first.assignment.size === PARTITIONS, 30000, 'the first static member did not get all 6 partitions', describeAll(all));
    const second = a.member('b', topic, group, opts('b'));
    all.push(second);
    await waitSettled([first, second], 30000, 'the group did not settle with two static members');
    await a.produce(topic, 0, 200);
    await waitFor(() => readIndexes(all, 0, 200).size === 200, 20000, 'records 0..199 not all read', describeAll(all));
    const before = { events: first.events.length, assignment: sorted(first.assignment), generation: first.generation };
    const secondHad = sorted(second.assignment);
    const closed = await second.close();
    check(closed.code === 0, `${second.name} did not close cleanly (exit ${closed.code ?? closed.signal}): ${second.errors.slice(-3).join(' | ')}`);
    const t0 = Date.now();
    const again = a.member('b2', topic, group, opts('b'));
    all.push(again);
    await waitFor(() => again.assignment.size > 0, SESSION_MS, `the restarted static member got no partitions within the ${SESSION_MS} ms session timeout`, describeAll(all));
    const rejoinMs = Date.now() - t0;
    await a.produce(topic, 200, 400);
    await waitFor(() => readIndexes([first, again], 200, 400).size === 200, 20000, 'records 200..399 not all read after the restart', describeAll(all));
    await sleep(Math.max(0, 2000 - (Date.now() - t0 - rejoinMs)));
    const extra = first.events.slice(before.events).map((e) => `${e.ev} [${e.partitions}] at +${e.t - t0} ms`);
    check(!extra.length, `the restart of static member b rebalanced the group: member a saw ${extra.join(', ')}`);
    check(JSON.stringify(sorted(first.assignment)) === JSON.stringify(before.assignment), `member a's assignment changed: [${before.assignment}] -> [${sorted(first.assignment)}]`);
    check(first.generation === before.generation, `member a's generation changed: ${before.generation} -> ${first.generation}`);
    check(JSON.stringify(sorted(again.assignment)) === JSON.stringify(secondHad), `the restarted member got [${sorted(again.assignment)}], it had [${secondHad}]`);
    checkNoErrors([first, again]);
    checkNoDuplicates(all);
    await Promise.all([first.close(), again.close()]);
    return `static member b [${secondHad}] restarted and rejoined in ${rejoinMs} ms; member a [${before.assignment}]${before.generation !== null ? ` generation ${before.generation}` : ''} saw no rebalance`;
  } finally {
    await Promise.all(all.map((m) => m.kill()));
  }
}

module.exports = {
  PARTITIONS, HEARTBEAT_MS, SESSION_MS, REBALANCE_SESSION_MS, REBALANCE_TIMEOUT_MS, COMMIT_INTERVAL_MS,
  Member, jsonMember, groupConsume, groupRebalance, groupStatic, sleep, waitFor,
};
