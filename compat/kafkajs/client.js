'use strict';
// Fjord compatibility client: kafkajs. Usage: node compat/kafkajs/client.js BOOTSTRAP SCENARIO (exit 0 = pass).
const { Kafka, logLevel } = require('kafkajs');
const { check, retry, main } = require('../lib/client-util');

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

const scenarios = { connect, 'admin-topics': adminTopics };

main(scenarios, async (bootstrap, scenario) => {
  const kafka = new Kafka({ clientId: 'fjord-compat-kafkajs', brokers: [bootstrap], logLevel: logLevel.NOTHING, retry: { retries: 3 } });
  const admin = kafka.admin();
  await admin.connect();
  try {
    await scenario(bootstrap, admin);
  } finally {
    await admin.disconnect();
  }
});
