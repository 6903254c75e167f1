'use strict';
// Fjord compatibility client: kafkajs. Usage: node compat/kafkajs/client.js BOOTSTRAP SCENARIO (exit 0 = pass).
// Data-path scenarios: kafkajs produces; its consumer needs a consumer group, so kcat (group-less, -C -e)
// reads the records back and the checks in ../lib/data.js judge them.
const { Kafka, Partitioners, logLevel } = require('kafkajs');
const { check, retry, main, describe } = require('../lib/client-util');
const data = require('../lib/data');
const kcat = require('../lib/kcat');
const CODECS = require('./codecs');
const group = require('../lib/group');
const cleanup = require('../lib/cleanup');
const txn = require('../lib/txn');
const security = require('./security');

async function connect(bootstrap, admin) {
  const cluster = await admin.describeCluster();
  check(cluster.brokers.length === 1, `expected 1 broker, got ${JSON.stringify(cluster.brokers)}`);
  const b = cluster.brokers[0];
  check(`${b.host}:${b.port}` === bootstrap, `expected broker ${bootstrap}, got ${b.host}:${b.port}`);
  check(cluster.clusterId, 'no cluster id');
}

async function adminTopics(bootstrap, admin) {
  const name = `compat-kafkajs-${Date.now()}`;
  await admin.createTopics({ topics: [{ topic: name, numPartitions: 3, replicationFactor: 1 }], waitForLeaders: true });
  await retry(async () => {
    const names = await admin.listTopics();
    check(names.includes(name), `created topic ${name} not listed`);
    const { topics } = await admin.fetchTopicMetadata({ topics: [name] });
    check(topics[0].partitions.length === 3, `topic ${name} has ${topics[0].partitions.length} partitions, expected 3`);
  });
  await admin.deleteTopics({ topics: [name] });
  await retry(async () => {
    check(!(await admin.listTopics()).includes(name), `deleted topic ${name} still listed`);
  });
}

async function createTopic(admin, prefix, numPartitions, configEntries = []) {
  const topic = `compat-kafkajs-${prefix}-${Date.now()}`;
  const replicationFactor = Number(process.env.FJORD_COMPAT_REPLICATION_FACTOR || 1); // 3 in the cluster rows
  await admin.createTopics({ topics: [{ topic, numPartitions, replicationFactor, configEntries }], waitForLeaders: true });
  return topic;
}

/** Sends records (kafkajs messages) with acks=all through a fresh producer; returns send()'s metadata. */
async function send(kafka, topic, messages, { compression, idempotent = false, sends = 1 } = {}) {
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner, idempotent, maxInFlightRequests: idempotent ? 1 : undefined });
  await producer.connect();
  try {
    const size = Math.ceil(messages.length / sends);
    for (let i = 0; i < messages.length; i += size) await producer.send({ topic, acks: -1, compression, messages: messages.slice(i, i + size) });
  } finally {
    await producer.disconnect();
  }
}

const message = (i) => ({ key: data.key(i), value: data.value(i), headers: Object.fromEntries(data.headers(i)) });
const messages = (n) => Array.from({ length: n }, (_, i) => message(i));

async function produceConsume(bootstrap, admin, kafka) {
  const topic = await createTopic(admin, 'pc', 3);
  await send(kafka, topic, messages(1000), { sends: 4 });
  data.verifyRecords(kcat.consumeAll(bootstrap, topic), 1000);
}

async function compression(bootstrap, admin, kafka) {
  for (const codec of data.CODECS) {
    const topic = await createTopic(admin, codec, 3);
    await send(kafka, topic, messages(200), { compression: CODECS[codec] });
    try {
      data.verifyRecords(kcat.consumeAll(bootstrap, topic), 200);
    } catch (e) {
      throw new Error(`${codec}: ${e.message}`, { cause: e });
    }
  }
}

async function largeRecords(bootstrap, admin, kafka) {
  const topic = await createTopic(admin, 'large', 1, [{ name: 'max.message.bytes', value: '2097152' }]);
  // kafkajs puts one send() in one batch: one send per 1 MiB record.
  await send(kafka, topic, [0, 1, 2, 3, 4].map((i) => ({ key: `large-${i}`, value: data.large(i) })), { sends: 5 });
  const records = kcat.consumeAll(bootstrap, topic);
  check(records.length === 5, `consumed ${records.length} records, expected 5`);
  records.forEach((r, i) => check(r.key.toString() === `large-${i}` && r.value.equals(data.large(i)), `record ${i} (key ${r.key}) differs: ${r.value.length} bytes`));
}

async function keyedPartitions(bootstrap, admin, kafka) {
  const topic = await createTopic(admin, 'keyed', 6);
  await send(kafka, topic, Array.from({ length: 600 }, (_, i) => ({ key: `key-${i % 20}`, value: data.value(i) })));
  data.verifyKeyed(kcat.consumeAll(bootstrap, topic), 600, 6);
}

async function offsetsByTime(bootstrap, admin, kafka) {
  const topic = await createTopic(admin, 'time', 1);
  const { T, count, lookups } = data.timeQueries();
  await send(kafka, topic, Array.from({ length: count }, (_, i) => ({ ...message(i), timestamp: String(T + i * 1000) })));
  for (const [ts, want] of lookups) {
    const [{ offset }] = await admin.fetchTopicOffsetsByTimestamp(topic, ts);
    // kafkajs answers "no record at or after ts" with the end offset.
    check(Number(offset) === (want === null ? count : want), `offset for timestamp T${ts - T >= 0 ? '+' : ''}${ts - T}: ${offset}, expected ${want === null ? count : want}`);
  }
}

async function idempotent(bootstrap, admin, kafka) {
  const topic = await createTopic(admin, 'idem', 3);
  await send(kafka, topic, messages(2000), { idempotent: true, sends: 8 });
  data.verifyRecords(kcat.consumeAll(bootstrap, topic), 2000);
}

// ----- consumer groups (../lib/group.js): each member is this program in group-member mode, a process of its own,
// so that group-rebalance can SIGKILL one (kafkajs's disconnect() always sends LeaveGroup). kafkajs has no static
// membership (no group.instance.id), so group-static is n/a.

/** group-member mode: one kafkajs consumer in a group, events as JSON lines on stdout, "close" on stdin. */
async function groupMember(bootstrap, opts) {
  const out = (e) => process.stdout.write(`${JSON.stringify(e)}\n`);
  const kafka = new Kafka({ clientId: `fjord-compat-kafkajs-${opts.name}`, brokers: bootstrap.split(','), logLevel: logLevel.NOTHING });
  const consumer = kafka.consumer({
    groupId: opts.group,
    sessionTimeout: opts.sessionMs,
    heartbeatInterval: group.HEARTBEAT_MS,
    rebalanceTimeout: group.REBALANCE_TIMEOUT_MS,
    maxWaitTimeInMs: 250,
  });
  // kafkajs is eager: every join brings the whole assignment (commits after each batch, its default).
  consumer.on(consumer.events.GROUP_JOIN, (e) => out({ ev: 'assignment', partitions: e.payload.memberAssignment[opts.topic] || [] }));
  consumer.on(consumer.events.CRASH, (e) => out({ ev: 'error', error: `crash: ${e.payload.error && e.payload.error.message}` }));
  await consumer.connect();
  await consumer.subscribe({ topics: [opts.topic], fromBeginning: true });
  await consumer.run({
    eachMessage: async ({ partition, message }) => out({ ev: 'rec', p: partition, o: Number(message.offset), k: message.key.toString() }),
  });
  let closing = false;
  const close = async () => {
    if (closing) return;
    closing = true;
    await consumer.disconnect(); // commits, leaves the group
    out({ ev: 'closed' });
    process.exit(0);
  };
  process.stdin.setEncoding('utf8');
  process.stdin.on('data', (d) => d.includes('close') && close());
  process.stdin.on('end', close); // the orchestrator went away
}

/** The adapter ../lib/group.js drives: kafkajs admin and producer, members as group-member processes. */
function groupAdapter(bootstrap, admin, kafka) {
  return {
    killNote: 'the member process got SIGKILL',
    createTopic: (prefix, partitions) => createTopic(admin, prefix, partitions),
    produce: (topic, from, to) => send(kafka, topic, Array.from({ length: to - from }, (_, j) => message(from + j))),
    member: (name, topic, groupId, { sessionMs }) =>
      group.jsonMember(name, process.execPath, [__filename, bootstrap, 'group-member', JSON.stringify({ name, topic, group: groupId, sessionMs })]),
    committed: async (groupId, topic) => {
      const [t] = await admin.fetchOffsets({ groupId, topics: [topic] });
      return Object.fromEntries(t.partitions.map((p) => [p.partition, Number(p.offset)]));
    },
    endOffsets: async (topic) => Object.fromEntries((await admin.fetchTopicOffsets(topic)).map((p) => [p.partition, Number(p.high)])),
  };
}

const groupConsume = (bootstrap, admin, kafka) => group.groupConsume(groupAdapter(bootstrap, admin, kafka));
const groupRebalance = (bootstrap, admin, kafka) => group.groupRebalance(groupAdapter(bootstrap, admin, kafka));

// ----- transactions (../lib/txn.js): kafkajs's transactional producer and its group consumer (read_committed is its
// default); kcat reads the output back.

const transactionalProducer = (kafka, transactionalId) => kafka.producer({ transactionalId, idempotent: true, maxInFlightRequests: 1 });

/** One "end" record on each partition, outside any transaction: a consumer that reads it got past every transaction. */
const writeEnd = (kafka, topic, partitions) => send(kafka, topic, Array.from({ length: partitions }, (_, p) => ({ key: txn.END_KEY, value: txn.END_KEY, partition: p })));

/** [read_committed records, read_uncommitted records] of the whole topic (kcat). */
const readBothWays = (bootstrap, topic) => ['read_committed', 'read_uncommitted'].map((level) => kcat.consumeAll(bootstrap, topic, { 'isolation.level': level }));

async function txnConsumeTransformProduce(bootstrap, admin, kafka) {
  const input = await createTopic(admin, 'txn-in', txn.PARTITIONS);
  const output = await createTopic(admin, 'txn-out', txn.PARTITIONS);
  await send(kafka, input, messages(txn.INPUT_RECORDS));
  const groupId = `${input}-group`;
  const adapter = groupAdapter(bootstrap, admin, kafka);
  const txns = new txn.Transactions();
  const producer = transactionalProducer(kafka, `${input}-txn`);
  const consumer = kafka.consumer({ groupId, maxWaitTimeInMs: 100 });
  let failure = null;
  let t = 0;
  // One transaction per RECORDS_PER_TXN records of a batch (kafkajs hands over one partition's batch at a time).
  const transform = async ({ batch, resolveOffset }) => {
    for (let at = 0; at < batch.messages.length; at += txn.RECORDS_PER_TXN) {
      const chunk = batch.messages.slice(at, at + txn.RECORDS_PER_TXN);
      const is = chunk.map((m) => Number(m.key.toString().slice('key-'.length)));
      t += 1;
      const transaction = await producer.transaction();
      await transaction.send({ topic: output, messages: chunk.map((m, j) => ({ key: m.key, value: txn.outputValue(is[j], t) })) });
      const next = String(Number(chunk[chunk.length - 1].offset) + 1);
      await transaction.sendOffsets({ consumerGroupId: groupId, topics: [{ topic: input, partitions: [{ partition: batch.partition, offset: next }] }] });
      if (txn.aborts(t)) {
        await transaction.abort();
        txns.aborted.set(t, is);
        // Read the aborted records again. Not from the group's committed offset: kafkajs's OffsetFetch cannot ask
        // for stable offsets (require_stable), so it may answer an offset older than a transaction just committed.
        consumer.seek({ topic: input, partition: batch.partition, offset: chunk[0].offset });
        return;
      }
      await transaction.commit();
      txns.committed.set(t, is);
      await new Promise((r) => setTimeout(r, txn.PAUSE_MS));
      resolveOffset(chunk[chunk.length - 1].offset); // the consumer's position (kafkajs commits nothing itself here)
    }
  };
  await producer.connect();
  await consumer.connect();
  try {
    await consumer.subscribe({ topics: [input], fromBeginning: true });
    await consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      eachBatch: (payload) => transform(payload).catch((e) => {
        failure = failure || e;
        throw e;
      }),
    });
    await group.waitFor(() => txns.complete() || failure, txn.LOOP_TIMEOUT_MS, 'the transactional loop did not write every input record', () => txns.show());
    if (failure) throw failure;
  } finally {
    await consumer.disconnect();
    await producer.disconnect();
  }
  await writeEnd(kafka, output, txn.PARTITIONS);
  const [committedRead, uncommittedRead] = readBothWays(bootstrap, output);
  return txn.verifyTransformed(txns, committedRead, uncommittedRead, await adapter.committed(groupId, input), await adapter.endOffsets(input));
}

/** kafkajs's fencing errors: INVALID_PRODUCER_EPOCH, or PRODUCER_FENCED (code 90, which kafkajs has no name for). */
function isFencing(e) {
  for (let x = e; x; x = x.cause || x.originalError) if (x.type === 'INVALID_PRODUCER_EPOCH' || x.code === 90) return true;
  return false;
}

async function txnZombieFenced(bootstrap, admin, kafka) {
  const topic = await createTopic(admin, 'zombie', 1);
  const [a, b] = [1, 2].map(() => transactionalProducer(kafka, `${topic}-txn`));
  let fenceError = null;
  let committedAfterFence = false;
  try {
    await a.connect();
    const ta = await a.transaction();
    await ta.send({ topic, messages: [{ value: 'a-0', partition: 0 }] });
    await b.connect();
    const tb = await b.transaction(); // InitProducerId: fences A and aborts its transaction
    await tb.send({ topic, messages: [{ value: 'b-0', partition: 0 }] });
    await tb.commit();
    try {
      await ta.send({ topic, messages: [{ value: 'a-1', partition: 0 }] });
    } catch (e) {
      fenceError = e;
    }
    try {
      await ta.commit();
      committedAfterFence = true;
    } catch (e) {
      fenceError = fenceError || e;
    }
  } finally {
    await a.disconnect();
    await b.disconnect();
  }
  await writeEnd(kafka, topic, 1);
  const [committedRead, uncommittedRead] = readBothWays(bootstrap, topic);
  return txn.verifyFenced(fenceError && describe(fenceError), isFencing(fenceError), committedAfterFence, committedRead, uncommittedRead);
}

// ----- log cleanup (../lib/cleanup.js): kafkajs produces (tombstones are value null) and its admin lists offsets;
// kcat reads the whole topic back (kafkajs's consumer needs a group); the consumer that is behind is a kafkajs
// group consumer whose committed offset is set below the log start, reset by fromBeginning (earliest).

function cleanupAdapter(bootstrap, admin, kafka) {
  return {
    createTopic: (prefix, configs) => createTopic(admin, prefix, 1, Object.entries(configs).map(([name, value]) => ({ name, value }))),
    produce: (topic, records) => send(kafka, topic, records.map((r) => ({ key: r.key, value: r.value, timestamp: r.timestamp && String(r.timestamp) }))),
    readAll: async (topic) => kcat.consumeAll(bootstrap, topic),
    earliest: async (topic) => Number((await admin.fetchTopicOffsets(topic))[0].low),
    readBehind: async (topic, offset, n) => {
      const groupId = `${topic}-behind`;
      await admin.setOffsets({ groupId, topic, partitions: [{ partition: 0, offset: String(offset) }] });
      const consumer = kafka.consumer({ groupId, maxWaitTimeInMs: 250 });
      const read = [];
      await consumer.connect();
      try {
        await consumer.subscribe({ topics: [topic], fromBeginning: true });
        await new Promise((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`read ${read.length} of ${n} records in 20 s`)), 20000);
          consumer.run({
            eachMessage: async ({ message }) => {
              read.push({ offset: Number(message.offset), key: message.key, value: message.value });
              if (read.length >= n) {
                clearTimeout(timer);
                resolve();
              }
            },
          }).catch(reject);
        });
      } finally {
        await consumer.disconnect();
      }
      return read;
    },
  };
}

// ----- the cluster rows (../cluster/cluster-test.js drives them): cluster-produce mode, an idempotent acks=all
// producer printing "ack <n> <partition> <offset>" for every record acknowledged, through a leader's death.

/** cluster-produce mode: COUNT records key "seq-<n>" to partition n % 3, 10 a send, one send at a time. */
async function clusterProduce(bootstrap, topic, count) {
  const kafka = new Kafka({ clientId: 'fjord-compat-kafkajs', brokers: bootstrap.split(','), logLevel: logLevel.NOTHING,
    retry: { retries: 30, initialRetryTime: 100, maxRetryTime: 1000 } });
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  for (let n = 0; n < count; n += 10) {
    const batch = Array.from({ length: Math.min(10, count - n) }, (_, j) => n + j);
    const acks = await producer.send({ topic, acks: -1, messages: batch.map((i) => ({ key: `seq-${i}`, value: String(i), partition: i % 3 })) });
    const base = new Map(acks.map((a) => [a.partition, Number(a.baseOffset)]));
    for (const i of batch) {
      const p = i % 3;
      process.stdout.write(`ack ${i} ${p} ${base.get(p)}\n`);
      base.set(p, base.get(p) + 1); // the next record of the batch on this partition
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  await producer.disconnect();
}

const scenarios = {
  connect,
  'admin-topics': adminTopics,
  'produce-consume': produceConsume,
  compression,
  'large-records': largeRecords,
  'keyed-partitions': keyedPartitions,
  'offsets-by-time': offsetsByTime,
  idempotent,
  'group-consume': groupConsume,
  'group-rebalance': groupRebalance,
  'txn-consume-transform-produce': txnConsumeTransformProduce,
  'txn-zombie-fenced': txnZombieFenced,
  compaction: (bootstrap, admin, kafka) => cleanup.compaction(cleanupAdapter(bootstrap, admin, kafka)),
  retention: (bootstrap, admin, kafka) => cleanup.retention(cleanupAdapter(bootstrap, admin, kafka)),
  ...security,
};

if (process.argv[3] === 'cluster-produce') {
  clusterProduce(process.argv[2], process.argv[4], Number(process.argv[5])).then(() => process.exit(0), (e) => {
    console.error(`FAIL: ${describe(e)}`);
    process.exit(1);
  });
} else if (process.argv[3] === 'group-member') {
  groupMember(process.argv[2], JSON.parse(process.argv[4])).catch((e) => {
    process.stdout.write(`${JSON.stringify({ ev: 'error', error: `${e.name}: ${e.message}` })}\n`);
    process.exit(1);
  });
} else main(scenarios, async (bootstrap, scenario) => {
  const kafka = new Kafka({ clientId: 'fjord-compat-kafkajs', brokers: bootstrap.split(','), logLevel: logLevel.NOTHING,
    // Retries that outlast a broker's death in the cluster rows (its etcd lease, 2 s there, then an election).
    retry: { retries: 10, initialRetryTime: 100, maxRetryTime: 2000 } });
  const admin = kafka.admin();
  await admin.connect();
  try {
    return await scenario(bootstrap, admin, kafka);
  } finally {
    await admin.disconnect();
  }
});
