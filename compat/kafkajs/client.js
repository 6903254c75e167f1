'use strict';
// Fjord compatibility client: kafkajs. Usage: node compat/kafkajs/client.js BOOTSTRAP SCENARIO (exit 0 = pass).
// Data-path scenarios: kafkajs produces; its consumer needs a consumer group, so kcat (group-less, -C -e)
// reads the records back and the checks in ../lib/data.js judge them.
const { Kafka, Partitioners, logLevel } = require('kafkajs');
const { check, retry, main } = require('../lib/client-util');
const data = require('../lib/data');
const kcat = require('../lib/kcat');
const CODECS = require('./codecs');

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
  await admin.createTopics({ topics: [{ topic, numPartitions, replicationFactor: 1, configEntries }], waitForLeaders: true });
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
      throw new Error(`${codec}: ${e.message}`);
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

main(scenarios, async (bootstrap, scenario) => {
  const kafka = new Kafka({ clientId: 'fjord-compat-kafkajs', brokers: [bootstrap], logLevel: logLevel.NOTHING, retry: { retries: 3 } });
  const admin = kafka.admin();
  await admin.connect();
  try {
    await scenario(bootstrap, admin, kafka);
  } finally {
    await admin.disconnect();
  }
});
