#!/usr/bin/env node
'use strict';
// The ClientCompatibilityTest row: Kafka's own org.apache.kafka.tools.ClientCompatibilityTest (the Maven kafka-tools
// artifact, run through lib/apache-kafka.sh tool) against a broker, with the flags Kafka's system test
// (client_compatibility_features_test.py) gives it for a broker of 0.11 or later, the expectations of a current
// Kafka: topics created by the AdminClient, offsetsForTimes, a cluster id, no RecordTooLargeException for a record
// over max.partition.fetch.bytes (KIP-74), describeAcls (answered with SECURITY_DISABLED without an authorizer),
// describeConfigs, the idempotent producer; one broker. As in the system test, the topic exists beforehand (one
// partition; kafkajs creates it). The tool creates a topic "newtopic" and leaves it: a rerun on the same broker
// deletes it first.
//
//   node compat/lib/client-compatibility.js BOOTSTRAP      exit 0 when the tool prints SUCCESS and exits 0
const { spawnSync } = require('child_process');
const path = require('path');
const { Kafka, logLevel } = require('kafkajs');

const LEFT_BY_THE_TOOL = 'newtopic';

async function main(bootstrap) {
  const topic = `compat-client-compatibility-${Date.now()}`;
  const admin = new Kafka({ clientId: 'fjord-compat-kafkajs', brokers: bootstrap.split(','), logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    if ((await admin.listTopics()).includes(LEFT_BY_THE_TOOL)) await admin.deleteTopics({ topics: [LEFT_BY_THE_TOOL] });
    await admin.createTopics({ topics: [{ topic, numPartitions: 1, replicationFactor: 1 }], waitForLeaders: true });
  } finally {
    await admin.disconnect();
  }
  const flags = {
    'bootstrap-server': bootstrap, topic, 'num-cluster-nodes': 1, 'create-topics-supported': true, 'offsets-for-times-supported': true,
    'cluster-id-supported': true, 'expect-record-too-large-exception': false, 'describe-acls-supported': true,
    'describe-configs-supported': true, 'idempotent-producer-supported': true,
  };
  const args = ['tool', 'org.apache.kafka.tools.ClientCompatibilityTest', ...Object.entries(flags).flatMap(([k, v]) => [`--${k}`, String(v)])];
  const r = spawnSync(path.join(__dirname, 'apache-kafka.sh'), args, { encoding: 'utf8', timeout: 120000 });
  const out = `${r.stdout || ''}${r.stderr || ''}`;
  if (r.status !== 0 || !/^SUCCESS\.$/m.test(out)) {
    console.error(`FAIL: ClientCompatibilityTest ${args.slice(2).join(' ')} exited ${r.status ?? r.signal}:\n${out.trim().split('\n').slice(-15).join('\n')}`);
    process.exit(1);
  }
  console.log(`ClientCompatibilityTest passed: ${args.slice(2).join(' ')}`);
}

if (process.argv.length !== 3) {
  console.error('usage: node compat/lib/client-compatibility.js BOOTSTRAP');
  process.exit(2);
}
main(process.argv[2]).catch((e) => {
  console.error(`FAIL: ${e && e.stack ? e.stack : e}`);
  process.exit(1);
});
