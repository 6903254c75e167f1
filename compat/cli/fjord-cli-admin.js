#!/usr/bin/env node
'use strict';
// The fjord-cli-admin row: `bin/fjord`'s admin commands, with --json, against a broker (the harness's Fjord, or
// Apache Kafka 4.4 with `run.js --bootstrap`), checked against expectations that hold on both. The steps:
//
//   cluster describe          a cluster id, the brokers, a controller among them, Kafka's feature names
//   topics create/list/       a 3-partition topic with two configs; created twice: TOPIC_ALREADY_EXISTS; listed
//   describe/alter            and described (leaders, replicas, ISR, empty offsets); altered to 4 partitions, then
//                             to 2: INVALID_PARTITIONS
//   configs describe/alter    the two set configs (only those without --all), one changed, one deleted, a bad
//                             value refused with INVALID_CONFIG
//   produce / consume         two batches of records with keys and headers (fjord produce), read back (fjord
//                             consume, raw then json) exactly once each, bytes intact
//   a group                   a kafkajs member of a new group reads everything and commits half of each
//                             partition; while it is there: groups list/describe (Stable, its assignment),
//                             groups delete: NON_EMPTY_GROUP; once it left: Empty, the committed offsets and the
//                             lag of each partition
//   groups reset-offsets      a dry run (planned, nothing applied), then --execute: to-earliest, to-offset on one
//                             partition, shift-by past the start (clamped), to-datetime (the second batch's first
//                             timestamp: its first offsets), to-latest; the lag after each
//   groups delete             gone from the list; deleting it again: GROUP_ID_NOT_FOUND
//   topics delete             gone from the list; describing it: UNKNOWN_TOPIC_OR_PARTITION
//
// Every result is also kept, normalized (cluster and topic ids, broker ids and addresses, member ids, timestamps,
// sizes: what legitimately differs between two brokers), as a transcript: `--record FILE` writes it (the run
// against Kafka 4.4 that made kafka-4.4.json), `--compare FILE` fails on any difference from it (the run against
// Fjord), so that "the same results" is checked field by field beyond the expectations written here.
//
//   node compat/cli/fjord-cli-admin.js BOOTSTRAP [--record FILE | --compare FILE]
const { spawn } = require('child_process');
const fs = require('fs');
const path = require('path');
const { Kafka, logLevel } = require('kafkajs');

const ROOT = path.resolve(__dirname, '../..');
const FJORD = path.join(ROOT, 'bin/fjord');
const PARTITIONS = 3;
const BATCH = 12; // records per batch; two batches, the second one's timestamps after the first one's

const startedAt = Date.now();
const failures = [];
const transcript = [];

function check(ok, message) {
  if (!ok) failures.push(message);
  return ok;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const big = (v) => (v === null || v === undefined ? v : BigInt(v)); // --json prints bigints as numbers or strings
const show = (v) => JSON.stringify(v, (_, x) => (typeof x === 'bigint' ? x.toString() : x));

/** Runs `fjord ARGS --bootstrap-server B` (stdin: `input`); resolves { code, stdout, stderr, ms }. */
function fjord(bootstrap, args, input) {
  return new Promise((resolve, reject) => {
    const start = Date.now();
    const child = spawn(process.execPath, [FJORD, ...args, '--bootstrap-server', bootstrap], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr, ms: Date.now() - start }));
    child.stdin.end(input ?? '');
  });
}

/** A command that must succeed; its stdout. */
async function ok(bootstrap, args, input) {
  const r = await fjord(bootstrap, args, input);
  if (r.code !== 0) throw new Error(`fjord ${args.join(' ')} exited ${r.code}: ${r.stderr.trim() || r.stdout.trim()}`);
  return r.stdout;
}

/** Its stdout as JSON (null when it printed nothing). */
async function okJson(bootstrap, args, input) {
  const out = await ok(bootstrap, args, input);
  try {
    return out.trim() ? JSON.parse(out) : null;
  } catch (e) {
    throw new Error(`fjord ${args.join(' ')} printed no JSON (${e.message}): ${out.slice(0, 300)}`, { cause: e });
  }
}

/**
 * A command that must fail with Kafka's error `name` (null: any, the transcript then compares it): exit code 1, one
 * line `fjord: NAME: message` on stderr.
 */
async function fails(bootstrap, step, args, name) {
  const r = await fjord(bootstrap, args);
  const line = r.stderr.trim();
  const error = /^fjord: ([A-Z_]+): ./.exec(line)?.[1] ?? null;
  check(r.code === 1, `${step}: fjord ${args.join(' ')} exited ${r.code}, not 1 (stderr: ${line || '-'})`);
  check(!line.includes('\n') && error !== null && (name === null || error === name), `${step}: stderr is not one line "fjord: ${name ?? 'NAME'}: message": ${line || '(empty)'}`);
  record(step, { exitCode: r.code, error });
}

// ----- normalization: what two brokers legitimately differ in -----

/** Broker ids as their rank among the cluster's ids ("broker-0"): Kafka's oracle is node 1, Fjord's node 0. */
let brokerRank = new Map();
const broker = (id) => (id === null || id === undefined || id < 0 ? id : brokerRank.has(id) ? `broker-${brokerRank.get(id)}` : `unknown-broker-${id}`);

/** The run's own names (they carry a time stamp) as placeholders: `<topic>`, `<group>`. */
const names = new Map();

function record(step, value) {
  console.log(`${step}: done at ${((Date.now() - startedAt) / 1000).toFixed(1)} s`); // the progress a timeout shows
  let text = show(value);
  for (const [name, placeholder] of names) text = text.split(name).join(placeholder);
  transcript.push({ step, value: JSON.parse(text) });
}

const normPartition = (p) => ({
  partition: p.partition, leader: broker(p.leader), replicas: p.replicas.map(broker), isr: p.isr.map(broker),
  offlineReplicas: p.offlineReplicas.map(broker), underReplicated: p.underReplicated, earliestOffset: big(p.earliestOffset), latestOffset: big(p.latestOffset),
});
const normTopic = (t) => ({ name: t.name, internal: t.internal, partitions: [...t.partitions].sort((a, b) => a.partition - b.partition).map(normPartition) });
const normSummary = (t) => ({ name: t.name, internal: t.internal, partitions: t.partitions, replicationFactor: t.replicationFactor, underReplicatedPartitions: t.underReplicatedPartitions, messages: big(t.messages) });
const normConfig = (c) => ({ name: c.name, value: c.value, source: c.source, isDefault: c.isDefault, readOnly: c.readOnly, sensitive: c.sensitive });
const normOffset = (o) => ({ topic: o.topic, partition: o.partition, committedOffset: big(o.committedOffset), latestOffset: big(o.latestOffset), lag: big(o.lag), member: o.memberId === null ? null : '<member>' });
const normGroup = (g) => ({
  groupId: g.groupId, type: g.type, state: g.state, protocol: g.protocol, coordinator: broker(g.coordinator),
  members: g.members.map((m) => ({ groupInstanceId: m.groupInstanceId, clientId: m.clientId, host: m.host, assignment: m.assignment.map((a) => ({ topic: a.topic, partitions: [...a.partitions].sort() })) })),
  offsets: [...g.offsets].sort((a, b) => a.topic.localeCompare(b.topic) || a.partition - b.partition).map(normOffset),
  totalLag: big(g.totalLag),
});
const normReset = (plan) => [...plan].sort((a, b) => a.partition - b.partition).map((r) => ({ topic: r.topic, partition: r.partition, currentOffset: big(r.currentOffset), newOffset: big(r.newOffset) }));
const normRecord = (r) => ({ partition: r.partition, offset: big(r.offset), key: r.key, value: r.value, headers: r.headers });

/** The one element of a --json answer that describes one thing (an array of one, or the object itself). */
const only = (v, what) => {
  const list = Array.isArray(v) ? v : [v];
  if (list.length !== 1) throw new Error(`${what}: expected one result, got ${list.length}: ${show(v).slice(0, 300)}`);
  return list[0];
};

// ----- the scenario -----

async function scenario(bootstrap) {
  const stamp = Date.now();
  const topic = `cli-admin-${stamp}`;
  const group = `cli-admin-group-${stamp}`;
  names.set(topic, '<topic>').set(group, '<group>');
  const run = (args, input) => okJson(bootstrap, args, input);
  const runText = (args, input) => ok(bootstrap, args, input);

  // cluster describe
  const cluster = await run(['cluster', 'describe', '--json']);
  const ids = cluster.brokers.map((b) => b.nodeId).sort((a, b) => a - b);
  brokerRank = new Map(ids.map((id, i) => [id, i]));
  check(typeof cluster.clusterId === 'string' && cluster.clusterId.length > 0, `cluster describe: no cluster id: ${show(cluster)}`);
  check(ids.length === 1, `cluster describe: expected one broker, got ${show(cluster.brokers)}`);
  check(ids.includes(cluster.controllerId), `cluster describe: controller ${cluster.controllerId} is not a broker (${ids})`);
  check(cluster.brokers.every((b) => b.host === '127.0.0.1' && b.port > 0), `cluster describe: brokers not on 127.0.0.1: ${show(cluster.brokers)}`);
  const features = new Map(cluster.features.map((f) => [f.name, f]));
  for (const name of ['metadata.version', 'transaction.version', 'group.version']) {
    check(features.has(name), `cluster describe: no feature ${name} among ${[...features.keys()]}`);
  }
  check(features.get('transaction.version')?.finalizedLevel === 2, `cluster describe: transaction.version finalized at ${features.get('transaction.version')?.finalizedLevel}, not 2 (Kafka 4.4's default)`);
  // Not eligible.leader.replicas.version: Kafka 4.4 supports and finalizes 1 (KIP-966), Fjord has no ELR (0..0).
  record('cluster describe', {
    brokers: cluster.brokers.map((b) => ({ nodeId: broker(b.nodeId), rack: b.rack })), controller: broker(cluster.controllerId),
    features: ['transaction.version', 'group.version', 'share.version', 'streams.version'].map((n) => features.get(n)).filter(Boolean)
      .map((f) => ({ name: f.name, minVersion: f.minVersion, maxVersion: f.maxVersion, finalizedLevel: f.finalizedLevel })),
  });

  // topics create / list / describe
  await runText(['topics', 'create', topic, '--partitions', String(PARTITIONS), '--replication-factor', '1', '--config', 'retention.ms=86400000', '--config', 'cleanup.policy=delete']);
  await fails(bootstrap, 'topics create (again)', ['topics', 'create', topic, '--partitions', '1'], 'TOPIC_ALREADY_EXISTS');
  const listed = (await run(['topics', 'list', '--json'])).find((t) => t.name === topic);
  if (check(listed, `topics list: ${topic} not listed`)) {
    check(listed.partitions === PARTITIONS && listed.replicationFactor === 1 && listed.underReplicatedPartitions === 0 && big(listed.messages) === 0n && !listed.internal,
      `topics list: ${show(listed)}`);
    check(typeof listed.topicId === 'string' && listed.topicId.length > 0, `topics list: no topic id: ${show(listed)}`);
    record('topics list (created)', normSummary(listed));
  }
  let described = only(await run(['topics', 'describe', topic, '--json']), 'topics describe');
  checkPartitions('topics describe (created)', described, PARTITIONS, () => 0n);
  check(described.topicId === listed?.topicId, `topics describe: topic id ${described.topicId}, listed as ${listed?.topicId}`);
  record('topics describe (created)', normTopic(described));

  // configs describe / alter
  const topicTarget = ['--topic', topic];
  const configs = async (step, all = false) => {
    const entries = await run(['configs', 'describe', ...topicTarget, ...(all ? ['--all'] : []), '--json']);
    if (!all) record(step, [...entries].sort((a, b) => a.name.localeCompare(b.name)).map(normConfig));
    return new Map(entries.map((e) => [e.name, e]));
  };
  let set = await configs('configs describe (created)');
  check(set.size === 2 && set.get('retention.ms')?.value === '86400000' && set.get('cleanup.policy')?.value === 'delete',
    `configs describe: expected exactly retention.ms=86400000 and cleanup.policy=delete, got ${show([...set.values()])}`);
  check([...set.values()].every((e) => e.source === 'DYNAMIC_TOPIC_CONFIG' && !e.isDefault), `configs describe: not DYNAMIC_TOPIC_CONFIG: ${show([...set.values()])}`);
  await runText(['configs', 'alter', ...topicTarget, '--set', 'retention.ms=7200000', '--set', 'segment.ms=3600000', '--delete', 'cleanup.policy']);
  set = await configs('configs describe (altered)');
  check(set.size === 2 && set.get('retention.ms')?.value === '7200000' && set.get('segment.ms')?.value === '3600000',
    `configs describe after alter: expected exactly retention.ms=7200000 and segment.ms=3600000, got ${show([...set.values()])}`);
  const all = await configs('configs describe --all', true);
  const policy = all.get('cleanup.policy');
  check(policy && policy.value === 'delete' && policy.isDefault && policy.source === 'DEFAULT_CONFIG', `configs describe --all: cleanup.policy is not the default delete: ${show(policy)}`);
  check(all.get('retention.ms')?.value === '7200000' && all.get('retention.ms')?.source === 'DYNAMIC_TOPIC_CONFIG', `configs describe --all: retention.ms ${show(all.get('retention.ms'))}`);
  // Not min.insync.replicas: Kafka 4.4 shows it as DYNAMIC_DEFAULT_BROKER_CONFIG, the cluster-level config its controller
  // adds once eligible leader replicas are on (KIP-966, finalized in a new 4.4 cluster); Fjord has no ELR: DEFAULT_CONFIG.
  record('configs describe --all (a few)', ['cleanup.policy', 'retention.ms', 'segment.ms', 'max.message.bytes', 'compression.type'].map((n) => all.get(n)).filter(Boolean).map(normConfig));
  await fails(bootstrap, 'configs alter (bad value)', ['configs', 'alter', ...topicTarget, '--set', 'retention.ms=soon'], 'INVALID_CONFIG');

  // topics alter
  await runText(['topics', 'alter', topic, '--partitions', String(PARTITIONS + 1)]);
  described = only(await run(['topics', 'describe', topic, '--json']), 'topics describe');
  checkPartitions('topics describe (4 partitions)', described, PARTITIONS + 1, () => 0n);
  record('topics describe (4 partitions)', normTopic(described));
  await fails(bootstrap, 'topics alter (fewer partitions)', ['topics', 'alter', topic, '--partitions', '2'], 'INVALID_PARTITIONS');
  const partitions = PARTITIONS + 1;

  // produce two batches (keys, a header), consume them back
  const expected = [];
  const produceBatch = async (b) => {
    const lines = [];
    for (let i = b * BATCH; i < (b + 1) * BATCH; i++) {
      const p = i % partitions;
      expected.push({ i, partition: p, key: `k${i}`, value: `value ${i} ✓` });
      lines.push(`k${i}\tvalue ${i} ✓`);
    }
    // One command per partition (at once), so that where each record goes is known without a partitioner.
    await Promise.all([...Array(partitions).keys()].map((p) => {
      const mine = lines.filter((_, j) => (b * BATCH + j) % partitions === p);
      return runText(['produce', '--topic', topic, '--partition', String(p), '--key-separator', '\t', '--header', `batch=${b}`, '--header', 'source=fjord-cli'], `${mine.join('\n')}\n`);
    }));
  };
  await produceBatch(0);
  await sleep(50); // the second batch's timestamps after the first's: to-datetime's boundary
  await produceBatch(1);
  const total = 2 * BATCH;
  const perPartition = (p) => BigInt(expected.filter((r) => r.partition === p).length);

  // raw: headers, key and value tab-separated, as kafka-console-consumer's print.headers / print.key
  const raw = await runText(['consume', '--topic', topic, '--from-beginning', '--max-messages', String(total), '--print-key', '--print-headers']);
  const rawLines = raw.split('\n').filter(Boolean).sort();
  const rawExpected = expected.map((r) => `batch:${r.i < BATCH ? 0 : 1},source:fjord-cli\t${r.key}\t${r.value}`).sort();
  check(show(rawLines) === show(rawExpected), `consume (raw): expected ${show(rawExpected.slice(0, 2))}..., got ${show(rawLines).slice(0, 500)}`);
  const consumed = (await runText(['consume', '--topic', topic, '--from-beginning', '--max-messages', String(total), '--json'])).split('\n').filter(Boolean).map((l) => JSON.parse(l)); // a record a line
  const byKey = new Map();
  for (const r of consumed) {
    check(!byKey.has(r.key), `consume (json): ${r.key} read twice`);
    byKey.set(r.key, r);
  }
  const firstOfSecondBatch = new Map(); // partition -> { offset, timestamp } of its first record of batch 1
  for (const e of expected) {
    const r = byKey.get(e.key);
    if (!check(r, `consume (json): ${e.key} not read`)) continue;
    const headers = (r.headers ?? []).map((h) => `${h.key}=${h.value}`);
    const batch = e.i < BATCH ? 0 : 1;
    check(r.value === e.value && r.partition === e.partition && r.topic === topic, `consume (json): ${e.key} is ${show(r)}, expected ${show(e)}`);
    check(show(headers) === show([`batch=${batch}`, 'source=fjord-cli']), `consume (json): ${e.key}'s headers ${show(headers)}`);
    if (batch === 1 && !firstOfSecondBatch.has(e.partition)) firstOfSecondBatch.set(e.partition, { offset: big(r.offset), timestamp: Number(r.timestamp) });
  }
  check(byKey.size === total, `consume (json): ${byKey.size} records, expected ${total}`);
  // Per partition, the records at offsets 0.. in the order produced.
  for (let p = 0; p < partitions; p++) {
    const offsets = expected.filter((e) => e.partition === p).map((e) => byKey.get(e.key)?.offset).map(big);
    check(offsets.every((o, j) => o === BigInt(j)), `consume (json): partition ${p}'s offsets ${show(offsets)}`);
  }
  record('consume --json', [...byKey.values()].sort((a, b) => a.partition - b.partition || Number(a.offset) - Number(b.offset)).map((r) => normRecord({ ...r, topic: undefined })));

  described = only(await run(['topics', 'describe', topic, '--json']), 'topics describe');
  checkPartitions('topics describe (produced)', described, partitions, perPartition);
  record('topics describe (produced)', normTopic(described));
  const summary = (await run(['topics', 'list', '--json'])).find((t) => t.name === topic);
  check(summary && big(summary.messages) === BigInt(total), `topics list: ${topic} has ${summary?.messages} messages, expected ${total}`);

  // a group: a kafkajs member reads everything, commits half of each partition
  const half = (p) => perPartition(p) / 2n;
  const kafka = new Kafka({ clientId: 'fjord-compat-cli-admin', brokers: bootstrap.split(','), logLevel: logLevel.NOTHING });
  const consumer = kafka.consumer({ groupId: group, sessionTimeout: 10000, heartbeatInterval: 500 });
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    let read = 0;
    await consumer.run({ autoCommit: false, eachMessage: async () => void read++ });
    for (const deadline = Date.now() + 20000; read < total; await sleep(50)) {
      if (Date.now() > deadline) throw new Error(`the kafkajs member read ${read} of ${total} records in 20 s`);
    }
    await consumer.commitOffsets([...Array(partitions).keys()].map((p) => ({ topic, partition: p, offset: String(half(p)) })));

    const activeList = (await run(['groups', 'list', '--json'])).find((g) => g.groupId === group);
    check(activeList && activeList.type === 'classic' && activeList.state === 'Stable' && activeList.protocolType === 'consumer', `groups list (member in): ${show(activeList)}`);
    record('groups list (member in)', activeList ?? null);
    const active = only(await run(['groups', 'describe', group, '--json']), 'groups describe');
    check(active.state === 'Stable' && active.members.length === 1, `groups describe (member in): ${show(active).slice(0, 500)}`);
    const assigned = active.members[0]?.assignment.flatMap((a) => (a.topic === topic ? a.partitions : [])).sort();
    check(show(assigned) === show([...Array(partitions).keys()]), `groups describe (member in): assignment ${show(active.members[0]?.assignment)}`);
    check(active.members[0]?.clientId === 'fjord-compat-cli-admin' && active.members[0]?.host === '/127.0.0.1', `groups describe (member in): member ${show(active.members[0])}`);
    checkOffsets('groups describe (member in)', active, partitions, half, perPartition, true);
    record('groups describe (member in)', normGroup(active));
    await fails(bootstrap, 'groups delete (member in)', ['groups', 'delete', group], 'NON_EMPTY_GROUP');
    // Kafka answers UNKNOWN_MEMBER_ID to offsets committed from outside a group with members (kafka-consumer-groups
    // refuses before asking: the group is not inactive); whichever, the same on both brokers.
    await fails(bootstrap, 'groups reset-offsets (member in)', ['groups', 'reset-offsets', '--group', group, '--topic', topic, '--to-earliest', '--execute'], null);
  } finally {
    await consumer.disconnect();
  }

  const describeGroup = async (step, committed) => {
    const g = only(await run(['groups', 'describe', group, '--json']), 'groups describe');
    check(g.state === 'Empty' && g.members.length === 0, `${step}: ${show(g).slice(0, 500)}`);
    checkOffsets(step, g, partitions, committed, perPartition, false);
    record(step, normGroup(g));
  };
  await describeGroup('groups describe (member left)', half);
  const emptyList = (await run(['groups', 'list', '--json'])).find((g) => g.groupId === group);
  check(emptyList && emptyList.state === 'Empty', `groups list (member left): ${show(emptyList)}`);
  record('groups list (member left)', emptyList ?? null);

  // reset-offsets: a dry run, then each target
  // mode: --execute, --dry-run, or none (kafka-consumer-groups' default: a dry run)
  const reset = async (step, target, expectedNew, current, { topics = [topic], mode = '--execute' } = {}) => {
    const planned = await run(['groups', 'reset-offsets', '--group', group, ...topics.flatMap((t) => ['--topic', t]), ...target, ...(mode ? [mode] : []), '--json']);
    const want = [...expectedNew.keys()].sort((a, b) => a - b).map((partition) => ({ topic, partition, currentOffset: current(partition), newOffset: expectedNew.get(partition) }));
    check(show(normReset(planned)) === show(want), `${step}: planned ${show(normReset(planned))}, expected ${show(want)}`);
    record(step, normReset(planned));
  };
  const each = (f) => new Map([...Array(partitions).keys()].map((p) => [p, f(p)]));

  // a dry run, explicit or by default, applies nothing: the group still at half after them
  await reset('reset-offsets --to-earliest --dry-run', ['--to-earliest'], each(() => 0n), half, { mode: '--dry-run' });
  await reset('reset-offsets --to-earliest (no --execute)', ['--to-earliest'], each(() => 0n), half, { mode: null });
  await describeGroup('groups describe (after dry runs)', half);

  await reset('reset-offsets --to-earliest', ['--to-earliest'], each(() => 0n), half);
  await describeGroup('groups describe (earliest)', () => 0n);
  await reset('reset-offsets --to-offset 2 (partition 1)', ['--to-offset', '2'], new Map([[1, 2n]]), () => 0n, { topics: [`${topic}:1`] });
  await describeGroup('groups describe (partition 1 at 2)', (p) => (p === 1 ? 2n : 0n));
  // Kafka's kafka-consumer-groups clamps a shift before the earliest offset to it.
  await reset('reset-offsets --shift-by -1', ['--shift-by', '-1'], each((p) => (p === 1 ? 1n : 0n)), (p) => (p === 1 ? 2n : 0n));
  const boundary = Math.min(...[...firstOfSecondBatch.values()].map((f) => f.timestamp));
  const atBoundary = (p) => firstOfSecondBatch.get(p).offset;
  check([...firstOfSecondBatch.values()].every((f) => f.timestamp >= boundary), 'the second batch starts at its earliest timestamp');
  await reset('reset-offsets --to-datetime', ['--to-datetime', new Date(boundary).toISOString()], each(atBoundary), (p) => (p === 1 ? 1n : 0n));
  await describeGroup('groups describe (to-datetime)', atBoundary);
  await reset('reset-offsets --to-latest', ['--to-latest'], each(perPartition), atBoundary);
  await describeGroup('groups describe (latest: no lag)', perPartition);

  // groups delete
  await runText(['groups', 'delete', group]);
  const afterDelete = await run(['groups', 'list', '--json']);
  check(!afterDelete.some((g) => g.groupId === group), `groups list after delete: ${group} still listed`);
  await fails(bootstrap, 'groups delete (gone)', ['groups', 'delete', group], 'GROUP_ID_NOT_FOUND');

  // topics delete
  await runText(['topics', 'delete', topic]);
  let stillListed = true;
  for (const deadline = Date.now() + 10000; stillListed && Date.now() < deadline; await sleep(200)) {
    stillListed = (await run(['topics', 'list', '--json'])).some((t) => t.name === topic);
  }
  check(!stillListed, `topics list: ${topic} still listed 10 s after its deletion`);
  await fails(bootstrap, 'topics describe (deleted)', ['topics', 'describe', topic, '--json'], 'UNKNOWN_TOPIC_OR_PARTITION');
  await fails(bootstrap, 'topics delete (deleted)', ['topics', 'delete', topic], 'UNKNOWN_TOPIC_OR_PARTITION');
}

/** Every partition 0..n-1 led by a broker of the cluster, in sync, from offset 0 to latest(p). */
function checkPartitions(step, t, n, latest) {
  const parts = [...t.partitions].sort((a, b) => a.partition - b.partition);
  check(show(parts.map((p) => p.partition)) === show([...Array(n).keys()]), `${step}: partitions ${show(parts.map((p) => p.partition))}, expected 0..${n - 1}`);
  for (const p of parts) {
    check(brokerRank.has(p.leader) && show(p.replicas) === show([p.leader]) && show(p.isr) === show([p.leader]) && p.offlineReplicas.length === 0 && !p.underReplicated,
      `${step}: partition ${p.partition} ${show(p)}`);
    check(big(p.earliestOffset) === 0n && big(p.latestOffset) === latest(p.partition), `${step}: partition ${p.partition} offsets ${p.earliestOffset}..${p.latestOffset}, expected 0..${latest(p.partition)}`);
  }
}

/** A group's offsets: committed(p) on every partition, the lag to the end, a member id when one holds it. */
function checkOffsets(step, g, n, committed, latest, held) {
  const offsets = [...g.offsets].sort((a, b) => a.partition - b.partition);
  check(show(offsets.map((o) => o.partition)) === show([...Array(n).keys()]), `${step}: offsets of partitions ${show(offsets.map((o) => o.partition))}`);
  let total = 0n;
  for (const o of offsets) {
    const want = { committed: committed(o.partition), latest: latest(o.partition) };
    total += want.latest - want.committed;
    check(big(o.committedOffset) === want.committed && big(o.latestOffset) === want.latest && big(o.lag) === want.latest - want.committed,
      `${step}: partition ${o.partition} ${show(o)}, expected committed ${want.committed}, latest ${want.latest}`);
    check(held ? typeof o.memberId === 'string' && o.memberId.length > 0 : o.memberId === null, `${step}: partition ${o.partition} member ${o.memberId}`);
  }
  check(big(g.totalLag) === total, `${step}: total lag ${g.totalLag}, expected ${total}`);
}

/** The first difference between two normalized values, as "path: a != b", or null. */
function difference(a, b, at = '') {
  if (show(a) === show(b)) return null;
  if (a && b && typeof a === 'object' && typeof b === 'object' && Array.isArray(a) === Array.isArray(b)) {
    if (Array.isArray(a) && a.length !== b.length) return `${at || '.'}: ${a.length} elements != ${b.length}: ${show(a).slice(0, 300)} != ${show(b).slice(0, 300)}`;
    for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
      const d = difference(a[k], b[k], `${at}.${k}`);
      if (d) return d;
    }
  }
  return `${at || '.'}: ${show(a)} != ${show(b)}`;
}

async function main() {
  const [bootstrap, mode, file] = process.argv.slice(2);
  if (!bootstrap || (mode && !['--record', '--compare'].includes(mode)) || (mode && !file)) {
    console.error('usage: node compat/cli/fjord-cli-admin.js BOOTSTRAP [--record FILE | --compare FILE]');
    process.exit(2);
  }
  try {
    await scenario(bootstrap);
  } catch (e) {
    failures.push(`${e && e.stack ? e.stack : e}`);
  }
  if (mode === '--record' && !failures.length) fs.writeFileSync(file, `${JSON.stringify(transcript, null, 1)}\n`);
  if (mode === '--compare') {
    const reference = JSON.parse(fs.readFileSync(file, 'utf8'));
    const steps = new Map(transcript.map((s) => [s.step, s.value]));
    for (const { step, value } of reference) {
      if (!steps.has(step)) failures.push(`not the same as ${path.basename(file)}: step "${step}" did not run`);
      else {
        const d = difference(value, steps.get(step));
        if (d) failures.push(`not the same as ${path.basename(file)}: ${step}: ${d}`);
      }
    }
    const known = new Set(reference.map((s) => s.step));
    for (const step of steps.keys()) if (!known.has(step)) failures.push(`step "${step}" is not in ${path.basename(file)}: record it against Kafka (--record)`);
  }
  if (failures.length) {
    console.log(`FAIL: ${failures.length} check(s) failed:\n${failures.join('\n')}`);
    process.exit(1);
  }
  console.log(`fjord-cli-admin: ${transcript.length} steps as expected${mode === '--compare' ? ` and as in ${path.basename(file)}` : ''} in ${((Date.now() - startedAt) / 1000).toFixed(1)} s`);
}

main();
