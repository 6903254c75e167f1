'use strict';
// Fjord compatibility client: kcat (librdkafka's command-line client), driven from Node.
// Usage: node compat/kcat/client.js BOOTSTRAP SCENARIO (exit 0 = pass).
// kcat has no admin API: for admin-topics the harness side (kafkajs admin) creates and deletes
// the topic, and kcat's metadata listing (-L) must see it with 3 partitions, then see it gone.
// Data-path scenarios: kafkajs's admin creates the topics; kcat produces (-P) and consumes (-C -e, no group).
// kcat cannot set record timestamps, so for offsets-by-time kafkajs writes the records and kcat -Q looks up.
const { execFileSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { Kafka, logLevel } = require('kafkajs');
const { check, retry, main } = require('../lib/client-util');
const data = require('../lib/data');
const kcat = require('../lib/kcat');

/** Cluster metadata as kcat -L -J prints it: { brokers: [{ id, name: "host:port" }], topics: [...] }. */
function metadata(bootstrap, topic) {
  const args = ['-b', bootstrap, '-L', '-J', '-m', '10', ...(topic ? ['-t', topic] : [])];
  let out;
  try {
    out = execFileSync('kcat', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (e) {
    throw new Error(`kcat ${args.join(' ')} exited ${e.status}: ${e.stderr || e.message}`);
  }
  return JSON.parse(out);
}

async function connect(bootstrap) {
  const md = metadata(bootstrap);
  check(md.brokers.length === 1, `expected 1 broker, got ${JSON.stringify(md.brokers)}`);
  check(md.brokers[0].name === bootstrap, `expected broker ${bootstrap}, got ${md.brokers[0].name}`);
  // kcat does not print the cluster id.
}

async function adminTopics(bootstrap) {
  const name = `compat-kcat-${Date.now()}`;
  const kafka = new Kafka({ clientId: 'fjord-compat-kcat-setup', brokers: [bootstrap], logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  try {
    await admin.createTopics({ topics: [{ topic: name, numPartitions: 3, replicationFactor: 1 }], waitForLeaders: true });
    await retry(async () => {
      const t = metadata(bootstrap).topics.find((x) => x.topic === name);
      check(t, `topic ${name} (created via kafkajs admin) not listed by kcat -L`);
      check(t.partitions.length === 3, `topic ${name} has ${t.partitions.length} partitions, expected 3`);
    });
    await admin.deleteTopics({ topics: [name] });
    await retry(async () => {
      check(!metadata(bootstrap).topics.some((x) => x.topic === name), `deleted topic ${name} still listed by kcat -L`);
    });
  } finally {
    await admin.disconnect();
  }
}

/** Creates a topic through kafkajs's admin (kcat has none); fn(admin, kafka) gets it too. */
async function createTopic(bootstrap, prefix, numPartitions, configEntries = [], fn = async () => {}) {
  const topic = `compat-kcat-${prefix}-${Date.now()}`;
  const kafka = new Kafka({ clientId: 'fjord-compat-kcat-setup', brokers: [bootstrap], logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  try {
    await admin.createTopics({ topics: [{ topic, numPartitions, replicationFactor: 1, configEntries }], waitForLeaders: true });
    await fn(admin, kafka, topic);
  } finally {
    await admin.disconnect();
  }
  return topic;
}

const TAG = [['tag', 'fjørd']]; // kcat -H puts the same headers on every record
const tagged = () => TAG.map(([k, v]) => [k, Buffer.from(v)]);
const records = (n) => Array.from({ length: n }, (_, i) => ({ key: data.key(i), value: data.value(i) }));

async function produceConsume(bootstrap) {
  const topic = await createTopic(bootstrap, 'pc', 3);
  kcat.produce(bootstrap, topic, records(1000), { headers: TAG, config: { acks: 'all' } });
  data.verifyRecords(kcat.consumeAll(bootstrap, topic), 1000, tagged);
}

async function compression(bootstrap) {
  for (const codec of data.CODECS) {
    const topic = await createTopic(bootstrap, codec, 3);
    kcat.produce(bootstrap, topic, records(200), { headers: TAG, config: { 'compression.codec': codec } });
    try {
      data.verifyRecords(kcat.consumeAll(bootstrap, topic), 200, tagged);
    } catch (e) {
      throw new Error(`${codec}: ${e.message}`);
    }
  }
}

async function largeRecords(bootstrap) {
  const topic = await createTopic(bootstrap, 'large', 1, [{ name: 'max.message.bytes', value: '2097152' }]);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'compat-kcat-'));
  try {
    for (let i = 0; i < 5; i++) {
      const file = path.join(dir, `large-${i}`);
      fs.writeFileSync(file, data.large(i));
      kcat.produceFile(bootstrap, topic, `large-${i}`, file, { 'message.max.bytes': 2097152 });
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  const got = kcat.consumeAll(bootstrap, topic);
  check(got.length === 5, `consumed ${got.length} records, expected 5`);
  got.forEach((r, i) => check(r.key.toString() === `large-${i}` && r.value.equals(data.large(i)), `record ${i} (key ${r.key}) differs: ${r.value.length} bytes`));
}

async function keyedPartitions(bootstrap) {
  const topic = await createTopic(bootstrap, 'keyed', 6);
  const recs = Array.from({ length: 600 }, (_, i) => ({ key: Buffer.from(`key-${i % 20}`), value: data.value(i) }));
  kcat.produce(bootstrap, topic, recs, { config: { partitioner: 'murmur2_random' } });
  data.verifyKeyed(kcat.consumeAll(bootstrap, topic), 600, 6);
}

async function offsetsByTime(bootstrap) {
  const { T, count, lookups } = data.timeQueries();
  const topic = await createTopic(bootstrap, 'time', 1, [], async (admin, kafka, name) => {
    const producer = kafka.producer();
    await producer.connect();
    const messages = Array.from({ length: count }, (_, i) => ({ key: data.key(i), value: data.value(i), timestamp: String(T + i * 1000) }));
    await producer.send({ topic: name, acks: -1, messages });
    await producer.disconnect();
  });
  for (const [ts, want] of lookups) {
    const offset = kcat.offsetForTime(bootstrap, topic, 0, ts);
    // librdkafka answers "no record at or after ts" with -1 (OFFSET_END).
    check(offset === (want === null ? -1 : want), `offset for timestamp T${ts - T >= 0 ? '+' : ''}${ts - T}: ${offset}, expected ${want === null ? -1 : want}`);
  }
}

async function idempotent(bootstrap) {
  const topic = await createTopic(bootstrap, 'idem', 3);
  kcat.produce(bootstrap, topic, records(2000), { headers: TAG, config: { 'enable.idempotence': 'true', acks: 'all' } });
  data.verifyRecords(kcat.consumeAll(bootstrap, topic), 2000, tagged);
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
};

main(scenarios, (bootstrap, scenario) => scenario(bootstrap));
