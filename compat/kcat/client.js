'use strict';
// Fjord compatibility client: kcat (librdkafka's command-line client), driven from Node.
// Usage: node compat/kcat/client.js BOOTSTRAP SCENARIO (exit 0 = pass).
// kcat has no admin API: for admin-topics the harness side (kafkajs admin) creates and deletes
// the topic, and kcat's metadata listing (-L) must see it with 3 partitions, then see it gone.
const { execFileSync } = require('child_process');
const { Kafka, logLevel } = require('kafkajs');
const { check, retry, main } = require('../lib/client-util');

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

main({ connect, 'admin-topics': adminTopics }, (bootstrap, scenario) => scenario(bootstrap));
