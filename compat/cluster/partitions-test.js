#!/usr/bin/env node
'use strict';
// The partition-management rows (issue 15): Kafka's own tools (the Maven kafka-tools 4.4.0 artifact, through
// lib/apache-kafka.sh tool) and the clients' admin APIs moving replicas and leaders on a cluster (clusters.js:
// FjordCluster or, with FJORD_CLUSTER=kafka, Apache Kafka's KRaft cluster). Broker ids are the cluster's (0..N-1).
//
//   node compat/cluster/partitions-test.js cluster-reassign|cluster-leader-election|cluster-leader-rebalance|cluster-unclean-election
//   node compat/cluster/partitions-test.js cluster-admin-partitions CLIENT CMD_JSON
//
// cluster-reassign          4 brokers; a 1-partition RF=3 topic on {0,1,2} with PRELOAD_BYTES of data; a kafkajs
//                           idempotent acks=all producer (one record at a time, its acks' offsets kept) and a group
//                           consumer run throughout. kafka-reassign-partitions --generate for {1,2,3} must propose
//                           3 replicas among them; --execute to {1,2,3} with --throttle THROTTLE; meanwhile the
//                           new replica's size on broker 3 (DescribeLogDirs, lib/log-dirs.js) is sampled: its
//                           growth between 50% and 95% of the leader's size must be within ±RATE_TOLERANCE of the
//                           throttle; kafka-configs shows the throttle on the brokers and the topic while it runs,
//                           kafka-reassign-partitions --list the move; --verify until complete. Pass: --verify
//                           cleared the throttles (kafka-configs shows none), replicas [1,2,3] in sync, broker 0
//                           without the partition's log (kafka-log-dirs), produce and consume progressed during the
//                           move, every acknowledged record read once, in order, at its offset.
// cluster-leader-election   3 brokers; a 3-partition RF=3 topic, partition i's preferred leader broker i; broker 0
//                           SIGKILLed: partition 0's leadership moves; broker 0 restarted, back in the ISR, still
//                           not leader; kafka-leader-election --election-type PREFERRED --all-topic-partitions must
//                           report partition 0 elected and broker 0 lead it; run again for partition 0 alone, it
//                           must report it as already led by its preferred leader; records produced (acks=all) after.
// cluster-leader-rebalance  the same with leader.imbalance.check.interval.seconds=5 and no tool: leadership of
//                           partition 0 must return to broker 0 on its own within REBALANCE_BOUND_MS.
// cluster-unclean-election  3 brokers; a 1-partition topic on [1,2] (RF=2, min.insync.replicas=1); KEPT records
//                           written in sync; broker 2 (the follower) SIGKILLed, out of the ISR; LOST records written
//                           (on broker 1 only); broker 1 SIGKILLed; broker 2 restarted: once broker 1 is fenced the
//                           partition has no leader, and stays so (unclean.leader.election.enable is false); kafka-leader-election
//                           --election-type UNCLEAN elects broker 2. Pass: records produced afterwards are
//                           acknowledged and read back (kcat) after the KEPT ones, the LOST ones gone (expected).
// cluster-admin-partitions  3 brokers; the client program's own admin API (`PROGRAM BOOTSTRAP cluster-admin-partitions`):
//                           a replica moved under a throttle set with incrementalAlterConfigs (BROKER and TOPIC),
//                           the move listed, log dirs described, the throttle removed, the move completed, a
//                           preferred leader elected (the client program says what it checks).
//
// Exit 0 = pass, 1 after "FAIL: ...".
const { spawn } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { randomBytes } = require('crypto');
const kcat = require('../lib/kcat');
const { replicaSize } = require('../lib/log-dirs');
const { sleep } = require('../lib/group');
const { ROOT } = require('../lib/broker-process');
const { Failure, check, log, runClient, outputTail, runRow } = require('./cluster-test');

const KAFKA_SH = process.env.FJORD_KAFKA_SCRIPT || path.join(ROOT, 'compat/lib/apache-kafka.sh');
const RECORD_BYTES = 10240;
const PRELOAD_BYTES = 12 << 20;
// Kafka's replication quota is a rate over 11 one-second windows, measured over at least 10 s: a new replica
// first gets about 10 s worth at once, then THROTTLE. 12 MiB at 500 kB/s: ~5 MB at once, then ~14 s throttled.
const THROTTLE = 500000;
const RATE_TOLERANCE = 0.3;
const LOAD_INTERVAL_MS = 20;
const REASSIGN_BOUND_MS = 90000;
const LEADER_BOUND_MS = 30000;
const REBALANCE_BOUND_MS = 30000; // leader.imbalance.check.interval.seconds=5, after the broker is back in the ISR
const TOOL_TIMEOUT_MS = 60000;
const ADMIN_CLIENT_BOUND_MS = 150000;

/** Polls the async fn until it returns a truthy value (returned); Failure "what" (with describe()) after ms. */
async function until(fn, ms, what, describe = async () => '', every = 250) {
  const start = Date.now();
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() - start > ms) {
      const d = await describe();
      throw new Failure(`${what} after ${ms} ms${d ? `: ${d}` : ''}`);
    }
    await sleep(every);
  }
}

/** Runs one of Kafka's tools (a kafka-tools main class) to its end, asynchronously (the load runs meanwhile); resolves its output. */
function kafkaTool(cls, args) {
  return new Promise((resolve, reject) => {
    const child = spawn(KAFKA_SH, ['tool', `org.apache.kafka.tools.${cls}`, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), TOOL_TIMEOUT_MS);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve(out);
      else reject(new Failure(`${cls} ${args.join(' ')} exited ${code ?? signal}:\n${out.trim().split('\n').slice(-15).join('\n')}`));
    });
  });
}

/** A file in a temporary directory holding JSON, for the tools' --*-json-file options. */
function jsonFile(name, value) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fjord-partitions-'));
  const file = path.join(dir, name);
  fs.writeFileSync(file, JSON.stringify(value));
  return file;
}

/** The first JSON object in the tool output after the line `heading`. */
function jsonAfter(out, heading) {
  const lines = out.split('\n');
  const at = lines.findIndex((l) => l.trim() === heading);
  check(at >= 0, `no "${heading}" in the tool's output:\n${out.trim()}`);
  const line = lines.slice(at + 1).find((l) => l.trim().startsWith('{'));
  check(line, `no JSON after "${heading}" in the tool's output:\n${out.trim()}`);
  return JSON.parse(line);
}

/** The dynamic configs kafka-configs --describe lists for an entity: { name: value }. */
async function dynamicConfigs(bootstrap, entityType, entityName) {
  const out = await kafkaTool('ConfigCommand', ['--bootstrap-server', bootstrap, '--describe', '--entity-type', entityType, '--entity-name', String(entityName)]);
  return Object.fromEntries([...out.matchAll(/^\s+([a-z0-9.]+)=(\S*) sensitive=/gm)].map((m) => [m[1], m[2]]));
}

const hostPort = (cluster, id) => cluster.bootstrap.split(',')[id];

const throttleConfigs = (configs) => Object.entries(configs).filter(([k]) => k.includes('replication.throttled')).map(([k, v]) => `${k}=${v}`);

/** Partition's state from metadata: { leader, replicas, isr }. */
async function partitionState(h, topic, p) {
  const x = (await h.partitions(topic)).find((y) => y.partitionId === p);
  return { leader: x.leader, replicas: x.replicas, isr: x.isr };
}

/** Partition p's state as kcat -L reports it (kafkajs's metadata fails on a partition without a leader). */
function kcatState(bootstrap, topic, p) {
  const t = kcat.metadata(bootstrap, topic).topics.find((x) => x.topic === topic);
  const x = t && (t.partitions || []).find((y) => y.partition === p);
  check(x, `kcat -L does not list ${topic}-${p}: ${JSON.stringify(t)}`);
  return { leader: x.leader, replicas: x.replicas.map((r) => r.id), isr: x.isrs.map((r) => r.id) };
}

/** A steady load on a 1-partition topic: an idempotent acks=all producer sending one record at a time (its acks kept) and a group consumer. */
async function startLoad(h, topic) {
  const producer = h.kafka.producer({ idempotent: true, maxInFlightRequests: 1, retry: { retries: 30, initialRetryTime: 100, maxRetryTime: 1000 } });
  const consumer = h.kafka.consumer({ groupId: `${topic}-load`, retry: { retries: 30, initialRetryTime: 100, maxRetryTime: 1000 } });
  await producer.connect();
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  const acks = []; // { n, offset, t }
  const read = []; // { key, offset, t }
  await consumer.run({ eachMessage: async ({ message }) => void read.push({ key: message.key.toString(), offset: Number(message.offset), t: Date.now() }) });
  let running = true;
  let error = null;
  const loop = (async () => {
    for (let n = 0; running; n++) {
      try {
        const [r] = await producer.send({ topic, acks: -1, messages: [{ key: `seq-${n}`, value: `load-${n}` }] });
        acks.push({ n, offset: Number(r.baseOffset), t: Date.now() });
      } catch (e) {
        error = e;
        return;
      }
      await sleep(LOAD_INTERVAL_MS);
    }
  })();
  return {
    acks,
    read,
    async stop() {
      running = false;
      await loop;
      check(!error, `the load's producer failed after ${acks.length} acks: ${error && error.message}`);
      const end = acks.length ? acks[acks.length - 1].offset : -1;
      await until(async () => read.some((r) => r.offset >= end), 30000, `the load's consumer did not read up to offset ${end}`,
        async () => `read up to ${read.length ? read[read.length - 1].offset : 'nothing'}`);
      await consumer.disconnect();
      await producer.disconnect();
    },
  };
}

/** Every acknowledged load record read once, at its acknowledged offset, in order; some of them acknowledged and read between from and to. */
function checkLoad(load, from, to) {
  const seqRead = load.read.filter((r) => r.key.startsWith('seq-'));
  const byN = new Map();
  let last = -1;
  for (const r of seqRead) {
    const n = Number(r.key.slice(4));
    if (byN.has(n)) throw new Failure(`${r.key} read twice: at offsets ${byN.get(n).offset} and ${r.offset}`);
    check(n > last, `${r.key} at offset ${r.offset} read after seq-${last}: order not kept`);
    byN.set(n, r);
    last = n;
  }
  for (const a of load.acks) {
    const r = byN.get(a.n);
    check(r, `seq-${a.n} acknowledged at offset ${a.offset} but not read (${seqRead.length} read)`);
    check(r.offset === a.offset, `seq-${a.n} acknowledged at offset ${a.offset} but read at ${r.offset}`);
  }
  const acked = load.acks.filter((a) => a.t >= from && a.t <= to).length;
  const consumed = seqRead.filter((r) => r.t >= from && r.t <= to).length;
  check(acked > 0 && consumed > 0, `the load stalled during the move (${((to - from) / 1000).toFixed(1)} s): ${acked} records acknowledged, ${consumed} read`);
  return `${load.acks.length} records acknowledged and read back once, in order, at their offsets (${acked} acknowledged and ${consumed} read during the move)`;
}

/** Writes bytes of incompressible records (key pre-<i>) to a partition, acks=all, 50 records a request. */
async function preload(h, topic, bytes) {
  const producer = h.kafka.producer({ retry: { retries: 30, initialRetryTime: 100, maxRetryTime: 1000 } });
  await producer.connect();
  const count = Math.ceil(bytes / RECORD_BYTES);
  for (let i = 0; i < count; i += 50) {
    const messages = Array.from({ length: Math.min(50, count - i) }, (_, j) => ({ key: `pre-${i + j}`, value: randomBytes(RECORD_BYTES) }));
    await producer.send({ topic, acks: -1, messages });
  }
  await producer.disconnect();
}

async function reassign(cluster, h) {
  const [b0, b1, b2, b3] = cluster.ids;
  const topic = `creassign-${Date.now().toString(36)}`;
  await h.admin.createTopics({ topics: [{ topic, replicaAssignment: [{ partition: 0, replicas: [b0, b1, b2] }], configEntries: [{ name: 'min.insync.replicas', value: '2' }] }], waitForLeaders: true });
  await preload(h, topic, PRELOAD_BYTES);
  log(`topic ${topic} on [${b0},${b1},${b2}] with ${PRELOAD_BYTES} bytes`);
  const load = await startLoad(h, topic);
  const target = [b1, b2, b3];

  const generated = await kafkaTool('reassign.ReassignPartitionsCommand', ['--bootstrap-server', cluster.bootstrap, '--generate',
    '--topics-to-move-json-file', jsonFile('topics.json', { version: 1, topics: [{ topic }] }), '--broker-list', target.join(',')]);
  const current = jsonAfter(generated, 'Current partition replica assignment');
  const proposed = jsonAfter(generated, 'Proposed partition reassignment configuration');
  check(JSON.stringify(current.partitions.map((p) => p.replicas)) === JSON.stringify([[b0, b1, b2]]), `--generate: current assignment ${JSON.stringify(current)}`);
  check(proposed.partitions.length === 1 && proposed.partitions[0].replicas.length === 3 && proposed.partitions[0].replicas.every((r) => target.includes(r)),
    `--generate for brokers ${target}: proposed ${JSON.stringify(proposed)}`);
  log(`--generate proposed ${JSON.stringify(proposed.partitions)}`);

  // The new replica's size on broker b3, sampled from before the move starts until it completes.
  const leaderAddress = hostPort(cluster, (await partitionState(h, topic, 0)).leader);
  const samples = []; // { t, size, leaderSize }
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      const [size, leaderSize] = await Promise.all([replicaSize(hostPort(cluster, b3), topic, 0), replicaSize(leaderAddress, topic, 0)]).catch(() => [null, null]);
      if (size !== null && leaderSize !== null) samples.push({ t: Date.now(), size, leaderSize });
      await sleep(250);
    }
  })();
  const plan = jsonFile('reassign.json', { version: 1, partitions: [{ topic, partition: 0, replicas: target }] });
  const moveStart = Date.now();
  const executed = await kafkaTool('reassign.ReassignPartitionsCommand', ['--bootstrap-server', cluster.bootstrap, '--execute',
    '--reassignment-json-file', plan, '--throttle', String(THROTTLE)]);
  check(/Successfully started partition reassignment/.test(executed), `--execute:\n${executed.trim()}`);
  log(`--execute to [${target}] with --throttle ${THROTTLE}: started`);

  // While it runs (the throttled copy takes 10 s or more; a tool's JVM a few seconds): the move listed; the
  // throttle on the brokers and the topic (there until --verify clears it).
  const listed = await kafkaTool('reassign.ReassignPartitionsCommand', ['--bootstrap-server', cluster.bootstrap, '--list']);
  const line = listed.split('\n').find((l) => l.startsWith(`${topic}-0:`));
  check(line && new RegExp(`adding: ${b3}\\b`).test(line) && new RegExp(`removing: ${b0}\\b`).test(line),
    `during the move (${Date.now() - moveStart} ms after --execute started; the copy ${JSON.stringify(samples[samples.length - 1])}), --list says:\n${listed.trim()}`);
  const [brokerConfigs, topicConfigs] = await Promise.all([dynamicConfigs(cluster.bootstrap, 'brokers', b3), dynamicConfigs(cluster.bootstrap, 'topics', topic)]);
  check(brokerConfigs['follower.replication.throttled.rate'] === String(THROTTLE) && brokerConfigs['leader.replication.throttled.rate'] === String(THROTTLE),
    `before --verify, kafka-configs --describe on broker ${b3} shows ${JSON.stringify(brokerConfigs)}, not both throttled rates at ${THROTTLE}`);
  check((topicConfigs['follower.replication.throttled.replicas'] || '').split(',').includes(`0:${b3}`),
    `before --verify, kafka-configs --describe on topic ${topic} shows ${JSON.stringify(topicConfigs)}: no follower throttle on 0:${b3}`);
  log(`--list: ${line}; kafka-configs: broker ${b3} ${throttleConfigs(brokerConfigs).join(' ')}; topic ${throttleConfigs(topicConfigs).join(' ')}`);

  let verified;
  const verify = ['--bootstrap-server', cluster.bootstrap, '--verify', '--reassignment-json-file', plan];
  try {
    verified = await until(async () => {
      const out = await kafkaTool('reassign.ReassignPartitionsCommand', verify);
      return /Reassignment of partition \S+ is completed/.test(out) && out;
    }, REASSIGN_BOUND_MS, 'kafka-reassign-partitions --verify does not report the move completed', async () => `${samples.length} size samples, the last ${JSON.stringify(samples[samples.length - 1])}`, 1000);
  } finally {
    sampling = false;
    await sampler;
  }
  const moveEnd = Date.now();
  log(`--verify: completed after ${((moveEnd - moveStart) / 1000).toFixed(1)} s: ${verified.trim().split('\n').slice(-3).join(' / ')}`);

  // The copy rate: the replica's growth between half and 95% of the leader's size (past the quota's first burst).
  const window = samples.filter((s) => s.size >= 0.5 * s.leaderSize && s.size <= 0.95 * s.leaderSize);
  const describeSamples = () => samples.map((s) => `+${s.t - moveStart}ms ${s.size}/${s.leaderSize}`).join(', ');
  check(window.length >= 4 && window[window.length - 1].t - window[0].t >= 2000,
    `the copy to broker ${b3} went too fast to see a rate (throttle ${THROTTLE} B/s): ${window.length} samples between 50% and 95%; samples: ${describeSamples()}`);
  const first = window[0];
  const last = window[window.length - 1];
  const rate = (last.size - first.size) / ((last.t - first.t) / 1000);
  check(Math.abs(rate - THROTTLE) <= RATE_TOLERANCE * THROTTLE, `the copy to broker ${b3} ran at ${Math.round(rate)} B/s, throttle ${THROTTLE} B/s (±${RATE_TOLERANCE * 100}%); samples: ${describeSamples()}`);
  log(`copy rate to broker ${b3}: ${Math.round(rate)} B/s over ${((last.t - first.t) / 1000).toFixed(1)} s (throttle ${THROTTLE}); ` +
    `size/leader size by ms after --execute started: ${samples.filter((x, i) => i % 4 === 0 || x === first || x === last).map((x) => `+${x.t - moveStart} ${x.size}/${x.leaderSize}`).join(', ')}`);

  // The throttle cleared by --verify, on every broker and on the topic.
  const left = (await Promise.all([...cluster.ids.map((id) => dynamicConfigs(cluster.bootstrap, 'brokers', id).then((c) => throttleConfigs(c).map((x) => `broker ${id}: ${x}`))),
    dynamicConfigs(cluster.bootstrap, 'topics', topic).then((c) => throttleConfigs(c).map((x) => `topic: ${x}`))])).flat();
  check(!left.length, `after --verify reported completion, kafka-configs still shows ${left.join(', ')}`);

  const state = await until(async () => {
    const s = await partitionState(h, topic, 0);
    return [...s.replicas].sort().join() === [...target].sort().join() && s.isr.length === 3 && s;
  }, LEADER_BOUND_MS, `the partition's replicas are not [${target}] in sync`, async () => JSON.stringify(await partitionState(h, topic, 0)));
  await until(async () => (await replicaSize(hostPort(cluster, b0), topic, 0)) === null, LEADER_BOUND_MS, `broker ${b0} still has ${topic}-0's log (DescribeLogDirs)`);
  const logDirs = await kafkaTool('LogDirsCommand', ['--bootstrap-server', cluster.bootstrap, '--describe', '--broker-list', cluster.ids.join(','), '--topic-list', topic]);
  const described = JSON.parse(logDirs.split('\n').find((l) => l.trim().startsWith('{')));
  const holders = described.brokers.filter((b) => b.logDirs.some((d) => d.partitions.some((p) => p.partition === `${topic}-0`))).map((b) => b.broker).sort();
  check(holders.join() === [...target].sort().join(), `kafka-log-dirs --describe: ${topic}-0 on brokers [${holders}], expected [${[...target].sort()}]`);
  log(`replicas [${state.replicas}], isr [${state.isr}], leader ${state.leader}; kafka-log-dirs: the log on [${holders}] only`);

  await load.stop();
  log(checkLoad(load, moveStart, moveEnd));
}

/** 3 partitions on 3 brokers, partition i's preferred leader broker i; broker 0 killed and restarted, back in every ISR. */
async function leaderMovedAndBack(cluster, h) {
  const ids = cluster.ids;
  const topic = `celect-${Date.now().toString(36)}`;
  const replicaAssignment = ids.map((_, p) => ({ partition: p, replicas: ids.map((_, j) => ids[(p + j) % ids.length]) }));
  await h.admin.createTopics({ topics: [{ topic, replicaAssignment }], waitForLeaders: true });
  const victim = ids[0];
  check((await partitionState(h, topic, 0)).leader === victim, `partition 0 of ${topic} is not led by its preferred leader ${victim}`);
  await cluster.kill(victim);
  const moved = await until(async () => {
    const s = await partitionState(h, topic, 0);
    return s.leader !== victim && s.leader >= 0 && s;
  }, LEADER_BOUND_MS, `partition 0's leadership did not move from the killed broker ${victim}`, async () => JSON.stringify(await partitionState(h, topic, 0)));
  log(`broker ${victim} killed: partition 0 led by ${moved.leader}`);
  await cluster.restart(victim);
  await until(async () => (await h.partitions(topic)).every((p) => p.isr.includes(victim)), LEADER_BOUND_MS, `broker ${victim} not back in every ISR`,
    async () => JSON.stringify(await h.partitions(topic)));
  return { topic, victim };
}

/** Records produced acks=all to every partition of the topic. */
async function produceAll(h, topic, partitions) {
  const producer = h.kafka.producer({ retry: { retries: 30, initialRetryTime: 100, maxRetryTime: 1000 } });
  await producer.connect();
  await producer.send({ topic, acks: -1, messages: Array.from({ length: 10 * partitions }, (_, i) => ({ partition: i % partitions, key: `k-${i}`, value: `v-${i}` })) });
  await producer.disconnect();
}

async function leaderElection(cluster, h) {
  const { topic, victim } = await leaderMovedAndBack(cluster, h);
  const before = await partitionState(h, topic, 0);
  check(before.leader !== victim, `partition 0's leadership returned to ${victim} before the election (auto leader rebalance should be off: its interval is 300 s)`);
  const args = ['--bootstrap-server', cluster.bootstrap, '--election-type', 'PREFERRED', '--all-topic-partitions'];
  const out = await kafkaTool('LeaderElectionCommand', args);
  const elected = /Successfully completed leader election \(PREFERRED\) for partitions (.*)/.exec(out);
  check(elected && elected[1].split(', ').includes(`${topic}-0`), `kafka-leader-election --election-type PREFERRED --all-topic-partitions did not report ${topic}-0 elected:\n${out.trim()}`);
  const after = await partitionState(h, topic, 0);
  check(after.leader === victim, `after the preferred election partition 0 is led by ${after.leader}, not its preferred leader ${victim}`);
  log(`kafka-leader-election PREFERRED: ${topic}-0 elected, led by ${victim} again`);
  // Named (with --all-topic-partitions a partition that needs no election is not reported).
  const again = await kafkaTool('LeaderElectionCommand', ['--bootstrap-server', cluster.bootstrap, '--election-type', 'PREFERRED', '--topic', topic, '--partition', '0']);
  const notNeeded = /Valid replica already elected for partitions (.*)/.exec(again);
  check(notNeeded && notNeeded[1].split(', ').includes(`${topic}-0`) && !/Successfully completed/.test(again),
    `a second PREFERRED election should find ${topic}-0 with its preferred leader:\n${again.trim()}`);
  await produceAll(h, topic, cluster.ids.length);
  log(`the second election: "Valid replica already elected" for ${topic}-0; records produced to every partition after`);
}

async function leaderRebalance(cluster, h) {
  const { topic, victim } = await leaderMovedAndBack(cluster, h);
  const back = Date.now();
  await until(async () => (await partitionState(h, topic, 0)).leader === victim, REBALANCE_BOUND_MS,
    `partition 0's leadership did not return to ${victim} (leader.imbalance.check.interval.seconds=5)`, async () => JSON.stringify(await partitionState(h, topic, 0)));
  log(`partition 0 led by ${victim} again ${Date.now() - back} ms after it was back in every ISR (auto leader rebalance)`);
  await produceAll(h, topic, cluster.ids.length);
}

async function uncleanElection(cluster, h) {
  const [, leader, follower] = cluster.ids;
  const topic = `cunclean-${Date.now().toString(36)}`;
  await h.admin.createTopics({ topics: [{ topic, replicaAssignment: [{ partition: 0, replicas: [leader, follower] }], configEntries: [{ name: 'min.insync.replicas', value: '1' }] }], waitForLeaders: true });
  const producer = h.kafka.producer({ retry: { retries: 30, initialRetryTime: 100, maxRetryTime: 1000 } });
  await producer.connect();
  const send = async (tag, n) => (await producer.send({ topic, acks: -1, messages: Array.from({ length: n }, (_, i) => ({ key: `${tag}-${i}`, value: `${tag}-${i}` })) }))[0];
  try {
    await until(async () => kcatState(cluster.bootstrap, topic, 0).isr.length === 2, LEADER_BOUND_MS, 'the topic is not in sync');
    const kept = await send('kept', 20);
    check(Number(kept.baseOffset) === 0, `the 20 records written in sync were acknowledged at ${kept.baseOffset}.., not 0..19`);
    await cluster.kill(follower);
    await until(async () => kcatState(cluster.bootstrap, topic, 0).isr.join() === String(leader), LEADER_BOUND_MS, `the killed follower ${follower} did not leave the ISR`,
      async () => JSON.stringify(kcatState(cluster.bootstrap, topic, 0)));
    const lost = await send('lost', 20);
    check(Number(lost.baseOffset) === 20, `the 20 records written with the follower dead were acknowledged at ${lost.baseOffset}.., not 20..39 (after the 20 in sync ones): ` +
      `read back: ${kcat.consumeAll(cluster.bootstrap, topic).map((r) => `${r.offset}:${r.key.toString()}`).join(' ')}`);
    log(`follower ${follower} killed and out of the ISR; 20 records at ${lost.baseOffset}.. on leader ${leader} only`);
    await cluster.kill(leader);
    await cluster.restart(follower);
    await until(async () => kcat.metadata(cluster.bootstrap).brokers.some((b) => b.id === follower), LEADER_BOUND_MS, `the restarted broker ${follower} is not listed`);
    // The dead leader fenced (Kafka: its session, 9 s by default, expires once a controller quorum is back) leaves
    // the partition without a leader; 3 s more for a (wrong) election to happen.
    await until(async () => kcatState(cluster.bootstrap, topic, 0).leader < 0, LEADER_BOUND_MS, `the partition is still led by the killed broker ${leader}`,
      async () => JSON.stringify(kcatState(cluster.bootstrap, topic, 0)));
    await sleep(3000);
    const stuck = kcatState(cluster.bootstrap, topic, 0);
    check(stuck.leader < 0, `with the leader dead and the out-of-sync follower back, the partition has leader ${stuck.leader} before any unclean election: ${JSON.stringify(stuck)}`);
    log(`leader ${leader} killed, follower ${follower} restarted: no leader (${JSON.stringify(stuck)})`);
    const out = await kafkaTool('LeaderElectionCommand', ['--bootstrap-server', cluster.bootstrap, '--election-type', 'UNCLEAN', '--topic', topic, '--partition', '0']);
    check(new RegExp(`Successfully completed leader election \\(UNCLEAN\\) for partitions .*\\b${topic}-0\\b`).test(out), `kafka-leader-election --election-type UNCLEAN:\n${out.trim()}`);
    const elected = await until(async () => {
      const s = kcatState(cluster.bootstrap, topic, 0);
      return s.leader === follower && s;
    }, LEADER_BOUND_MS, `broker ${follower} does not lead the partition after the unclean election`, async () => JSON.stringify(kcatState(cluster.bootstrap, topic, 0)));
    const after = await send('after', 20);
    log(`kafka-leader-election UNCLEAN: ${follower} leads (${JSON.stringify(elected)}); 20 records acknowledged at ${after.baseOffset}..`);
    const read = kcat.consumeAll(cluster.bootstrap, topic).map((r) => `${r.offset}:${r.key.toString()}`);
    const expected = [...Array.from({ length: 20 }, (_, i) => `${i}:kept-${i}`), ...Array.from({ length: 20 }, (_, i) => `${Number(after.baseOffset) + i}:after-${i}`)];
    check(Number(after.baseOffset) === 20 && read.join() === expected.join(), `read back [${read.join(' ')}], expected the kept records at 0..19 then the new ones at 20..39`);
    log('read back: the 20 kept records, then the 20 new ones at offsets 20..39; the 20 only the old leader had are gone (as expected)');
  } finally {
    await producer.disconnect();
  }
}

async function adminPartitions(cluster, h, cmd) {
  const client = runClient(cmd, cluster.bootstrap, 'cluster-admin-partitions', []);
  const timer = setTimeout(() => client.child.kill('SIGKILL'), ADMIN_CLIENT_BOUND_MS);
  const { code, out } = await client.exited;
  clearTimeout(timer);
  check(code === 0, `the client ${code === null ? `hung: killed after ${ADMIN_CLIENT_BOUND_MS} ms` : `failed (exit ${code})`}: ${outputTail(out)}`);
  log(`client passed: ${out.trim().split('\n').pop()}`);
}

const ROWS = {
  'cluster-reassign': [reassign, { size: 4 }],
  'cluster-leader-election': [leaderElection, {}],
  'cluster-leader-rebalance': [leaderRebalance, { config: { 'leader.imbalance.check.interval.seconds': '5' } }],
  'cluster-unclean-election': [uncleanElection, {}],
  'cluster-admin-partitions': [adminPartitions, {}],
};

async function main() {
  const [row, client, cmdJson] = process.argv.slice(2);
  if (!ROWS[row] || (row === 'cluster-admin-partitions' && !cmdJson)) {
    console.error(`usage: partitions-test.js ${Object.keys(ROWS).filter((r) => r !== 'cluster-admin-partitions').join('|')} | cluster-admin-partitions CLIENT CMD_JSON`);
    process.exit(2);
  }
  const [fn, clusterOpts] = ROWS[row];
  process.exit(await runRow(`${row}${client ? ` with ${client}` : ''}`, fn, cmdJson && JSON.parse(cmdJson), clusterOpts));
}

main();
