#!/usr/bin/env node
'use strict';
// The cluster rows: a real client against a 3-broker cluster (clusters.js: each broker its own process, one
// etcd), the harness SIGKILLing the broker that matters mid-stream and restarting it later. The harness finds
// that broker as a client would (metadata; the coordinator is the leader of the internal topic's partition
// that Kafka's partitionFor picks) and checks the outcome; the client does the producing and consuming.
//
//   node compat/cluster/cluster-test.js cluster-failover|cluster-group|cluster-txn CLIENT CMD_JSON
//   node compat/cluster/cluster-test.js cluster-controller
//
// CMD_JSON is the client program's [program, args] with "{bootstrap}" and "{scenario}" in place of its two
// arguments (run.js builds it). Exit 0 = pass, 1 after "FAIL: ...".
//
// cluster-failover   3 partitions, RF=3, min.insync.replicas=2; the client's idempotent acks=all producer
//                    (`PROGRAM BOOTSTRAP cluster-produce TOPIC COUNT`, printing "ack <n> <partition> <offset>"
//                    per acknowledgement) sends COUNT records key "seq-<n>" at a steady rate; once a third are
//                    acknowledged, the leader of partition 0 gets SIGKILL. The producer must finish; then the
//                    broker is restarted. Pass: every acknowledged record read back (kcat, group-less, to the
//                    end offsets) exactly once, at the partition and offset its ack reported, seq increasing
//                    per partition; the restarted broker back in the ISR of every partition within ISR_BOUND_MS.
// cluster-group      6 partitions, RF=3; records 0..299 produced, two members of a new group (the client's
//                    group-member mode, as the group-* rows) settle and read them; the group coordinator's
//                    broker gets SIGKILL and records 300..599 are produced. Pass: the members read every
//                    record (duplicates only among reads after the kill: at-least-once), and after they
//                    close, the group's committed offsets are the end offsets.
// cluster-txn        the client's txn-consume-transform-produce scenario with its topics at RF=3
//                    (FJORD_COMPAT_REPLICATION_FACTOR=3); once the group has committed offsets (a transaction
//                    committed), the transaction coordinator's broker (for transactional.id "<input>-txn")
//                    gets SIGKILL. Pass: the client's own checks (read_committed: each input record
//                    transformed exactly once, ...).
// cluster-controller kafkajs admin: the controller (DescribeCluster) gets SIGKILL. Pass: the survivors report
//                    another controller within CONTROLLER_BOUND_MS, a topic created afterwards gets RF=3
//                    placement with leaders, and the restarted broker is listed again.
const { spawn } = require('child_process');
const { Kafka, logLevel } = require('kafkajs');
const data = require('../lib/data');
const kcat = require('../lib/kcat');
const { jsonMember, waitFor, sleep } = require('../lib/group');
const { clusterFromEnv } = require('./clusters');

const COUNT = 3000;
const ISR_BOUND_MS = 30000;
const CONTROLLER_BOUND_MS = 15000;
const GROUP_RECORDS = 600;
const TXN_CLIENT_BOUND_MS = 80000;
const TXN_PAUSE_MS = 300; // after each commit: 14 commits take 4 s or more, the kill lands mid-run
const log = (msg) => console.log(`cluster: ${msg}`);

class Failure extends Error {}
const check = (ok, message) => {
  if (!ok) throw new Failure(message);
};

/** Kafka's Utils.abs(groupId.hashCode()) % partitions: the internal-topic partition of a group / transactional id. */
function partitionFor(key, partitions) {
  let h = 0;
  for (let i = 0; i < key.length; i++) h = (Math.imul(h, 31) + key.charCodeAt(i)) | 0;
  return (h & 0x7fffffff) % partitions;
}

/** A kafkajs admin on the cluster, with the lookups the rows need. */
async function clusterAdmin(bootstrap) {
  const kafka = new Kafka({ clientId: 'fjord-cluster-harness', brokers: bootstrap.split(','), logLevel: logLevel.NOTHING,
    retry: { retries: 30, initialRetryTime: 100, maxRetryTime: 1000 } });
  const admin = kafka.admin();
  await admin.connect();
  const partitions = async (topic) => (await admin.fetchTopicMetadata({ topics: [topic] })).topics[0].partitions;
  return {
    kafka,
    admin,
    partitions,
    leaderOf: async (topic, p) => (await partitions(topic)).find((x) => x.partitionId === p).leader,
    /** The broker FindCoordinator names: the leader of the key's partition of the internal topic. */
    coordinatorOf: async (internalTopic, key) => {
      const ps = await partitions(internalTopic);
      return ps.find((x) => x.partitionId === partitionFor(key, ps.length)).leader;
    },
    createTopic: async (prefix, numPartitions, replicationFactor = 3) => {
      const topic = `${prefix}-${Date.now().toString(36)}`;
      await admin.createTopics({ topics: [{ topic, numPartitions, replicationFactor, configEntries: [{ name: 'min.insync.replicas', value: '2' }] }], waitForLeaders: true });
      return topic;
    },
    close: () => admin.disconnect(),
  };
}

/** Spawns the client program in `mode`; collects its output, calls onLine for each stdout line. */
function runClient(cmd, bootstrap, mode, extraArgs, { env = {}, onLine = () => {} } = {}) {
  const [program, args] = cmd;
  const child = spawn(program, [...args.map((a) => a.replace('{bootstrap}', bootstrap).replace('{scenario}', mode)), ...extraArgs],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, PYTHONUNBUFFERED: '1', ...env } });
  let out = '';
  let buf = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (d) => {
    out += d;
    buf += d;
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      onLine(buf.slice(0, nl));
      buf = buf.slice(nl + 1);
    }
  });
  child.stderr.on('data', (d) => (out += d));
  const exited = new Promise((resolve) => child.on('close', (code) => resolve({ code, out })));
  return { child, exited };
}

const outputTail = (out) => out.trim().split('\n').filter((l) => !l.startsWith('ack ')).slice(-40).join('\n');

/** Waits until `id` is in (inIsr) or out of the ISR of every partition of `topic`; returns the wait in ms. */
async function waitIsr(h, topic, id, inIsr) {
  const start = Date.now();
  for (;;) {
    const ps = await h.partitions(topic);
    if (ps.every((p) => p.isr.includes(id) === inIsr)) return Date.now() - start;
    check(Date.now() - start < ISR_BOUND_MS, `broker ${id} is ${inIsr ? 'not back in' : 'still in'} the ISR after ${ISR_BOUND_MS} ms: ${ps.map((p) => `${p.partitionId}: isr [${p.isr}]`).join(', ')}`);
    await sleep(200);
  }
}

async function failover(cluster, h, cmd) {
  const topic = await h.createTopic('cfail', 3);
  const victim = await h.leaderOf(topic, 0);
  const acks = new Map(); // n -> { p, o }
  let killed = null;
  const producer = runClient(cmd, cluster.bootstrap, 'cluster-produce', [topic, String(COUNT)], {
    onLine: (line) => {
      const m = /^ack (\d+) (\d+) (\d+)$/.exec(line.trim());
      if (!m) return;
      check(!acks.has(Number(m[1])), `seq ${m[1]} acknowledged twice`);
      acks.set(Number(m[1]), { p: Number(m[2]), o: Number(m[3]) });
      if (!killed && acks.size >= COUNT / 3) killed = cluster.kill(victim).then(() => log(`broker ${victim} (leader of ${topic}/0) killed after ${acks.size} acks`));
    },
  });
  const { code, out } = await producer.exited;
  check(killed, `the producer ended after ${acks.size} acks, before a third were acknowledged: no kill (exit ${code}): ${outputTail(out)}`);
  await killed;
  check(code === 0, `the producer exited ${code} after ${acks.size} acks (leader ${victim} of partition 0 killed): ${outputTail(out)}`);
  check(acks.size === COUNT, `the producer exited 0 with ${acks.size} of ${COUNT} records acknowledged`);
  const after = await h.leaderOf(topic, 0);
  log(`producer done: ${acks.size} acks; partition 0 leader ${victim} -> ${after}`);
  check(after !== victim && after >= 0, `partition 0 still has leader ${after} after its leader ${victim} was killed`);

  const records = kcat.consumeAll(cluster.bootstrap, topic);
  const seen = new Map(); // n -> record
  const lastSeq = new Map(); // partition -> last seq read
  for (const r of records) {
    const n = Number(/^seq-(\d+)$/.exec(r.key.toString())[1]);
    check(!seen.has(n), `seq-${n} read twice: at ${seen.get(n) && `${seen.get(n).partition}/${seen.get(n).offset}`} and ${r.partition}/${r.offset}`);
    seen.set(n, r);
    check(!(lastSeq.get(r.partition) > n), `partition ${r.partition}: seq-${n} at offset ${r.offset} after seq-${lastSeq.get(r.partition)}: order not kept`);
    lastSeq.set(r.partition, n);
  }
  for (const [n, a] of acks) {
    const r = seen.get(n);
    check(r, `seq-${n} acknowledged at ${a.p}/${a.o} but not read back (${records.length} records read)`);
    check(r.partition === a.p && r.offset === a.o, `seq-${n} acknowledged at ${a.p}/${a.o} but read at ${r.partition}/${r.offset}`);
  }
  log(`read back ${records.length} records: every acknowledged one once, at its offset, in order`);

  // Out of the ISR while dead (so that its return is seen), back in once restarted.
  await waitIsr(h, topic, victim, false);
  await cluster.restart(victim);
  log(`broker ${victim} restarted; back in the ISR of every partition after ${await waitIsr(h, topic, victim, true)} ms`);
}

/** The records read twice among each member's first counts[j] records: "key-i by m1 at p/o and m2 at p/o". */
function duplicatesAmong(members, counts) {
  const where = new Map();
  const twice = [];
  members.forEach((m, j) => m.records.slice(0, counts[j]).forEach((r) => {
    const prev = where.get(r.i);
    if (prev) twice.push(`key-${r.i} by ${prev.member} at ${prev.p}/${prev.o} and by ${r.member} at ${r.p}/${r.o}`);
    where.set(r.i, r);
  }));
  return twice;
}

async function group(cluster, h, cmd) {
  const topic = await h.createTopic('cgroup', 6);
  const groupId = `${topic}-group`;
  const producer = h.kafka.producer({ idempotent: true, retry: { retries: 30, initialRetryTime: 100, maxRetryTime: 1000 } });
  await producer.connect();
  const produce = (from, to) => producer.send({ topic, acks: -1, messages: Array.from({ length: to - from }, (_, j) => ({ key: data.key(from + j), value: data.value(from + j) })) });
  await produce(0, GROUP_RECORDS / 2);
  const [program, args] = cmd;
  const members = ['m1', 'm2'].map((name) => jsonMember(name, program,
    [...args.map((a) => a.replace('{bootstrap}', cluster.bootstrap).replace('{scenario}', 'group-member')), JSON.stringify({ name, topic, group: groupId, sessionMs: 10000 })]));
  const started = Date.now();
  const show = () => members.map((m) => m.show()).join('; ');
  const distinct = () => new Set(members.flatMap((m) => m.records.map((r) => r.i)));
  try {
    await waitFor(() => distinct().size === GROUP_RECORDS / 2, 40000, 'the members did not read records 0..299', show);
    // Both in the group before the kill: a member still in its first join when its coordinator dies
    // may give up (kafkajs's run() rejects), which is the client's start-up, not the failover tested.
    await waitFor(() => members.every((m) => m.assignment.size > 0), 40000, 'a member had no partitions', show);
    const victim = await h.coordinatorOf('__consumer_offsets', groupId);
    const readBefore = members.map((m) => m.records.length);
    await cluster.kill(victim);
    log(`group coordinator ${victim} killed after records 0..299 were read`);
    await produce(GROUP_RECORDS / 2, GROUP_RECORDS);
    await waitFor(() => distinct().size === GROUP_RECORDS, 40000, 'the members did not read every record after the coordinator was killed', show);
    const newCoordinator = await h.coordinatorOf('__consumer_offsets', groupId);
    check(newCoordinator !== victim && newCoordinator >= 0, `the group's coordinator is still ${newCoordinator} after broker ${victim} was killed`);
    // Duplicates only among the reads after the kill (a member re-reads from the last commit after a rebalance).
    const twice = duplicatesAmong(members, readBefore);
    check(!twice.length, `${twice.length} records read twice before the kill, e.g. ${twice.slice(0, 3).join('; ')}; ` +
      `assignments: ${members.map((m) => `${m.name} ${m.events.map((e) => `${e.ev} [${e.partitions}] at +${e.t - started} ms`).join(', ')}`).join('; ')}; ${show()}`);
    const dupes = members.reduce((n, m) => n + m.records.length, 0) - GROUP_RECORDS;
    // Both carried on (their errors, connections to the dead broker refused, are expected and not checked).
    check(members.every((m) => m.alive()), `a member exited after the coordinator was killed: ${show()}`);
    await Promise.all(members.map((m) => m.close()));
    const end = Object.fromEntries((await h.admin.fetchTopicOffsets(topic)).map((p) => [p.partition, Number(p.high)]));
    const [t] = await h.admin.fetchOffsets({ groupId, topics: [topic] });
    const committed = Object.fromEntries(t.partitions.map((p) => [p.partition, Number(p.offset)]));
    check(JSON.stringify(committed) === JSON.stringify(end), `committed offsets ${JSON.stringify(committed)}, end offsets ${JSON.stringify(end)}`);
    log(`all ${GROUP_RECORDS} read (${dupes} duplicates after the kill), coordinator ${victim} -> ${newCoordinator}, committed = end offsets`);
  } finally {
    await Promise.all(members.map((m) => m.kill()));
    await producer.disconnect();
  }
}

async function txn(cluster, h, cmd) {
  const before = new Set(await h.admin.listTopics());
  const client = runClient(cmd, cluster.bootstrap, 'txn-consume-transform-produce', [],
    { env: { FJORD_COMPAT_REPLICATION_FACTOR: '3', FJORD_COMPAT_TXN_PAUSE_MS: String(TXN_PAUSE_MS), COMPAT_VERBOSE: '1', PYTHONFAULTHANDLER: '1' } });
  let done = false;
  // Bounded here, so that a hanging client's output makes the failure message: SIGABRT first, on which Python
  // (faulthandler) and Go print every thread's stack.
  const timer = setTimeout(() => {
    client.child.kill('SIGABRT');
    setTimeout(() => client.child.kill('SIGKILL'), 2000);
  }, TXN_CLIENT_BOUND_MS);
  client.exited.then(() => (done = true, clearTimeout(timer)));
  // The input topic ("txn-in-..."), then the group's first committed offsets: a transaction has committed.
  let input;
  let groupId;
  const committedSome = async () => {
    input ||= (await h.admin.listTopics()).find((t) => t.includes('-txn-in-') && !before.has(t));
    if (input && !groupId) groupId = (await h.admin.listGroups()).groups.map((g) => g.groupId).find((g) => g.startsWith(input));
    if (!groupId) return false;
    const [t] = await h.admin.fetchOffsets({ groupId, topics: [input] });
    return t.partitions.some((p) => Number(p.offset) > 0);
  };
  const deadline = Date.now() + 40000;
  while (!done && !(await committedSome().catch(() => false))) {
    if (Date.now() > deadline) {
      client.child.kill('SIGKILL');
      throw new Failure(`no committed transaction seen in 40 s (input topic ${input}, group ${groupId}): ${outputTail((await client.exited).out)}`);
    }
    await sleep(50);
  }
  let victim = null;
  if (!done) {
    victim = await h.coordinatorOf('__transaction_state', `${input}-txn`);
    await cluster.kill(victim);
    log(`transaction coordinator ${victim} (of ${input}-txn) killed after the first committed transaction`);
  }
  const { code, out } = await client.exited;
  check(victim !== null, `the client finished before a transaction was seen committed: no kill (exit ${code}): ${outputTail(out)}`);
  check(code === 0, `the client ${code === null || code === 134 ? `hung: killed after ${TXN_CLIENT_BOUND_MS} ms` : `failed (exit ${code})`} after transaction coordinator ${victim} was killed: ${outputTail(out)}`);
  log(`client passed: ${out.trim().split('\n').filter((l) => !l.startsWith('%')).pop()}`); // its summary (not librdkafka's log lines)
}

async function controller(cluster, h) {
  const first = (await h.admin.describeCluster()).controller;
  check(cluster.ids.includes(first), `DescribeCluster names controller ${first}`);
  await cluster.kill(first);
  const start = Date.now();
  let now;
  let listed;
  for (;;) {
    const described = await h.admin.describeCluster();
    now = described.controller;
    listed = described.brokers.map((b) => b.nodeId);
    if (now !== first && cluster.ids.includes(now) && !listed.includes(first)) break;
    check(Date.now() - start < CONTROLLER_BOUND_MS, `${CONTROLLER_BOUND_MS} ms after controller ${first} was killed, DescribeCluster says controller ${now}, brokers [${listed}]`);
    await sleep(200);
  }
  log(`controller ${first} killed; after ${Date.now() - start} ms ${now} is the controller and the brokers are [${listed}]`);
  const topic = await h.createTopic('cctl', 3, 2); // RF=2: RF=3 with two live brokers is INVALID_REPLICATION_FACTOR
  const ps = await h.partitions(topic);
  check(ps.every((p) => p.replicas.length === 2 && !p.replicas.includes(first) && p.leader !== first && cluster.ids.includes(p.leader)),
    `topic ${topic} created after the failover: ${JSON.stringify(ps.map((p) => ({ p: p.partitionId, leader: p.leader, replicas: p.replicas })))}`);
  await cluster.restart(first);
  const back = Date.now();
  for (;;) {
    const ids = (await h.admin.describeCluster()).brokers.map((b) => b.nodeId);
    if (ids.includes(first)) break;
    check(Date.now() - back < CONTROLLER_BOUND_MS, `the restarted broker ${first} is not listed after ${CONTROLLER_BOUND_MS} ms: brokers [${ids}]`);
    await sleep(200);
  }
  log(`topic ${topic} created with leaders on the survivors; broker ${first} listed again after ${Date.now() - back} ms`);
}

const ROWS = { 'cluster-failover': failover, 'cluster-group': group, 'cluster-txn': txn, 'cluster-controller': controller };

/** Runs one row on a new cluster (clusterOpts: its size, its broker settings): the exit code, 0 on pass. */
async function runRow(name, fn, cmd, clusterOpts = {}) {
  const cluster = clusterFromEnv({ log, ...clusterOpts });
  let h;
  let failed = false;
  try {
    await cluster.start();
    h = await clusterAdmin(cluster.bootstrap);
    log(name);
    await fn(cluster, h, cmd);
  } catch (e) {
    failed = true;
    const causes = (e && e.errors ? e.errors : []).map((x) => `\n  ${x.name}: ${x.message}`).join('');
    console.log(`FAIL: ${e instanceof Failure ? e.message : e && e.stack ? e.stack : e}${causes}`);
    for (const id of cluster.ids) console.log(`broker ${id} log tail:\n${cluster.tail(id)}`);
  } finally {
    await h?.close().catch(() => {});
    await cluster.stop();
  }
  return failed ? 1 : 0;
}

async function main() {
  const [row, client, cmdJson] = process.argv.slice(2);
  if (!ROWS[row] || (row !== 'cluster-controller' && !cmdJson)) {
    console.error('usage: cluster-test.js cluster-failover|cluster-group|cluster-txn CLIENT CMD_JSON | cluster-controller');
    process.exit(2);
  }
  process.exit(await runRow(`${row}${client ? ` with ${client}` : ''}`, ROWS[row], cmdJson && JSON.parse(cmdJson)));
}

module.exports = { Failure, check, log, clusterAdmin, runClient, outputTail, runRow };

if (require.main === module) main();
