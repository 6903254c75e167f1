'use strict';
// Fjord compatibility client: kcat (librdkafka's command-line client), driven from Node.
// Usage: node compat/kcat/client.js BOOTSTRAP SCENARIO (exit 0 = pass).
// kcat has no admin API: for admin-topics the harness side (kafkajs admin) creates and deletes
// the topic, and kcat's metadata listing (-L) must see it with 3 partitions, then see it gone.
// Data-path scenarios: kafkajs's admin creates the topics; kcat produces (-P) and consumes (-C -e, no group).
// kcat cannot set record timestamps, so for offsets-by-time kafkajs writes the records and kcat -Q looks up
// (and for retention kafkajs writes the records timestamped an hour ago).
const { spawn } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { Kafka, logLevel } = require('kafkajs');
const { check, retry, main } = require('../lib/client-util');
const data = require('../lib/data');
const kcat = require('../lib/kcat');
const group = require('../lib/group');
const cleanup = require('../lib/cleanup');
const security = require('../lib/security-config');

/** A kafkajs client, for what kcat cannot do (admin requests, timestamped records). */
const setupClient = (bootstrap) => new Kafka({ clientId: 'fjord-compat-kcat-setup', brokers: [bootstrap], logLevel: logLevel.NOTHING });

async function connect(bootstrap) {
  const md = kcat.metadata(bootstrap);
  check(md.brokers.length === 1, `expected 1 broker, got ${JSON.stringify(md.brokers)}`);
  check(md.brokers[0].name === bootstrap, `expected broker ${bootstrap}, got ${md.brokers[0].name}`);
  // kcat does not print the cluster id.
}

async function adminTopics(bootstrap) {
  const name = `compat-kcat-${Date.now()}`;
  const admin = setupClient(bootstrap).admin();
  await admin.connect();
  try {
    await admin.createTopics({ topics: [{ topic: name, numPartitions: 3, replicationFactor: 1 }], waitForLeaders: true });
    await retry(async () => {
      const t = kcat.metadata(bootstrap).topics.find((x) => x.topic === name);
      check(t, `topic ${name} (created via kafkajs admin) not listed by kcat -L`);
      check(t.partitions.length === 3, `topic ${name} has ${t.partitions.length} partitions, expected 3`);
    });
    await admin.deleteTopics({ topics: [name] });
    await retry(async () => {
      check(!kcat.metadata(bootstrap).topics.some((x) => x.topic === name), `deleted topic ${name} still listed by kcat -L`);
    });
  } finally {
    await admin.disconnect();
  }
}

/** Creates a topic through kafkajs's admin (kcat has none). */
async function createTopic(bootstrap, prefix, numPartitions, configEntries = []) {
  const topic = `compat-kcat-${prefix}-${Date.now()}`;
  const admin = setupClient(bootstrap).admin();
  await admin.connect();
  try {
    await admin.createTopics({ topics: [{ topic, numPartitions, replicationFactor: 1, configEntries }], waitForLeaders: true });
  } finally {
    await admin.disconnect();
  }
  return topic;
}

/** Sends kafkajs messages (acks=all) with kafkajs's producer: for the records kcat cannot write (timestamped ones). */
async function kafkajsProduce(bootstrap, topic, messages) {
  const producer = setupClient(bootstrap).producer();
  await producer.connect();
  try {
    await producer.send({ topic, acks: -1, messages });
  } finally {
    await producer.disconnect();
  }
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
      throw new Error(`${codec}: ${e.message}`, { cause: e });
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
  const topic = await createTopic(bootstrap, 'time', 1);
  await kafkajsProduce(bootstrap, topic, Array.from({ length: count }, (_, i) => ({ key: data.key(i), value: data.value(i), timestamp: String(T + i * 1000) })));
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

// ----- consumer groups (../lib/group.js): each member is a `kcat -G` (librdkafka's balanced consumer) process;
// its records come on stdout (-f '%p %o %k'), its rebalances on stderr ("% Group G rebalanced (memberid M):
// assigned: t [0], t [3]"). SIGTERM closes it (commit; LeaveGroup unless static), SIGKILL kills it. kafkajs's
// admin creates the topics and reads the committed offsets (kcat has no admin API).

function kcatMember(bootstrap, name, topic, groupId, { sessionMs, instanceId }) {
  const member = new group.Member(name);
  const config = {
    'auto.offset.reset': 'earliest',
    'session.timeout.ms': sessionMs,
    'heartbeat.interval.ms': group.HEARTBEAT_MS,
    'max.poll.interval.ms': group.REBALANCE_TIMEOUT_MS,
    'auto.commit.interval.ms': group.COMMIT_INTERVAL_MS,
    ...(instanceId ? { 'group.instance.id': instanceId } : {}),
  };
  const child = spawn('kcat', ['-b', bootstrap, '-G', groupId, '-u', '-f', '%p %o %k\\n', ...kcat.xargs(config), topic], { stdio: ['ignore', 'pipe', 'pipe'] });
  member.attach(
    child,
    (line) => {
      const [p, o, k] = line.split(' ');
      member.event({ ev: 'rec', p: Number(p), o: Number(o), k });
    },
    (line) => {
      const m = /rebalanced \(memberid [^)]*\): (assigned|revoked): ?(.*)$/.exec(line);
      if (m) member.event({ ev: m[1], partitions: [...m[2].matchAll(/\[(\d+)\]/g)].map((x) => Number(x[1])) });
      else if (/^% ERROR|^%[0-3]\|/.test(line)) member.errors.push(line.slice(0, 300));
    },
  );
  member.close = async (ms = 20000) => {
    if (!member.alive()) return member.exited;
    child.kill('SIGTERM'); // kcat closes the consumer: commits, and leaves the group unless static
    const timer = setTimeout(() => member.kill(), ms);
    const r = await member.exitedP;
    clearTimeout(timer);
    return r;
  };
  return member;
}

/** Runs a group scenario with kcat members; kafkajs's admin for what kcat cannot do. */
async function groupScenario(bootstrap, scenario) {
  const admin = setupClient(bootstrap).admin();
  await admin.connect();
  try {
    return await scenario({
      killNote: 'the kcat process got SIGKILL',
      createTopic: async (prefix, partitions) => {
        const topic = `compat-kcat-${prefix}-${Date.now()}`;
        await admin.createTopics({ topics: [{ topic, numPartitions: partitions, replicationFactor: 1 }], waitForLeaders: true });
        return topic;
      },
      produce: (topic, from, to) => kcat.produceAsync(bootstrap, topic, Array.from({ length: to - from }, (_, j) => ({ key: data.key(from + j), value: data.value(from + j) })), { config: { acks: 'all' } }),
      member: (name, topic, groupId, opts) => kcatMember(bootstrap, name, topic, groupId, opts),
      committed: async (groupId, topic) => {
        const [t] = await admin.fetchOffsets({ groupId, topics: [topic] });
        return Object.fromEntries(t.partitions.map((p) => [p.partition, Number(p.offset)]));
      },
      endOffsets: async (topic) => Object.fromEntries((await admin.fetchTopicOffsets(topic)).map((p) => [p.partition, Number(p.high)])),
    });
  } finally {
    await admin.disconnect();
  }
}

// ----- log cleanup (../lib/cleanup.js): kcat -P produces (a null value is a tombstone: -Z), kcat -C reads from the
// beginning and, for the consumer that is behind, from an offset below the log start with auto.offset.reset=earliest;
// kcat -Q with timestamp -2 (ListOffsets EARLIEST) gives the earliest offset. kcat has no admin API and cannot set
// timestamps: kafkajs creates the topics and writes the records timestamped an hour ago.

const cleanupAdapter = (bootstrap) => ({
  createTopic: (prefix, configs) => createTopic(bootstrap, prefix, 1, Object.entries(configs).map(([name, value]) => ({ name, value }))),
  produce: async (topic, records) => {
    if (records.some((r) => r.timestamp)) await kafkajsProduce(bootstrap, topic, records.map((r) => ({ key: r.key, value: r.value, timestamp: String(r.timestamp) })));
    else kcat.produce(bootstrap, topic, records, { config: { acks: 'all' } });
  },
  readAll: async (topic) => kcat.consumeAll(bootstrap, topic),
  earliest: async (topic) => kcat.offsetForTime(bootstrap, topic, 0, -2),
  readBehind: async (topic, offset, n) => kcat.consumeFrom(bootstrap, topic, 0, offset, n, { 'auto.offset.reset': 'earliest' }),
});

// ----- the security rows (../security/rows.js): kcat with librdkafka's security settings (-X), alice as the user.

// kcat 1.7.1 (Debian) is built on librdkafka 2.0.2, whose SCRAM exchange Kafka 4.4 refuses ("Authentication failed
// during authentication due to invalid credentials", where librdkafka 2.16, confluent-kafka's, passes): no SCRAM here.
const KCAT_TRANSPORTS = security.TRANSPORTS.filter((t) => !t.startsWith('SCRAM-'));

async function secureProduceConsume(bootstrap) {
  const admin = setupClient(bootstrap).admin();
  await admin.connect();
  try {
    for (const t of KCAT_TRANSPORTS) {
      const topic = `secure-kcat-${t.toLowerCase()}`;
      await admin.createTopics({ topics: [{ topic, numPartitions: 1, replicationFactor: 1 }], waitForLeaders: true });
      const config = security.librdkafkaConfig(t, 'alice');
      const sent = Array.from({ length: 20 }, (_, i) => `${t} record ${i} \u00e9`);
      kcat.produce(security.endpoint(t), topic, sent.map((v, i) => ({ key: Buffer.from(`k${i}`), value: Buffer.from(v) })), { config: { ...config, acks: 'all' } });
      const read = kcat.consumeAll(security.endpoint(t), topic, config).map((r) => r.value.toString());
      check(JSON.stringify(read) === JSON.stringify(sent), `${t}: read back ${JSON.stringify(read)}, expected ${JSON.stringify(sent)}`);
      console.log(`${t}: 20 records produced and read back`); // progress, shown if a later transport times out
    }
  } finally {
    await admin.disconnect();
  }
  return `produced and consumed 20 records over ${KCAT_TRANSPORTS.join(', ')}`;
}

/** acl-denials (FJORD_SEC_PHASE denied, then allowed): alice over SASL_PLAINTEXT with PLAIN. */
async function aclDenials() {
  const [b, config, topic] = [security.endpoint('PLAIN', false), security.librdkafkaConfig('PLAIN', 'alice', false), 'acl-kcat'];
  if (security.env('FJORD_SEC_PHASE') === 'allowed') {
    const read = kcat.consumeAll(b, topic, config).map((r) => r.value.toString());
    check(JSON.stringify(read.slice(0, 5)) === JSON.stringify(['r0', 'r1', 'r2', 'r3', 'r4']), `read ${JSON.stringify(read)} after the READ grant`);
    return `after the READ grant: ${topic} read group-less`;
  }
  const failure = (f) => {
    try {
      return `no error: ${JSON.stringify(f())}`;
    } catch (e) {
      return e.message;
    }
  };
  const topicError = failure(() => kcat.consumeAll(b, topic, config));
  check(/Topic authorization failed/i.test(topicError), `kcat -C without READ on ${topic}: expected "Topic authorization failed", got ${topicError}`);
  const groupError = failure(() => kcat.groupConsume(b, 'acl-denied-kcat', topic, config, 15000));
  check(/Group authorization failed/i.test(groupError), `kcat -G acl-denied-kcat: expected "Group authorization failed", got ${groupError}`);
  return 'kcat -C: Topic authorization failed; kcat -G: Group authorization failed';
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
  'group-consume': (bootstrap) => groupScenario(bootstrap, group.groupConsume),
  'group-rebalance': (bootstrap) => groupScenario(bootstrap, group.groupRebalance),
  'group-static': (bootstrap) => groupScenario(bootstrap, group.groupStatic),
  compaction: (bootstrap) => cleanup.compaction(cleanupAdapter(bootstrap)),
  retention: (bootstrap) => cleanup.retention(cleanupAdapter(bootstrap)),
  'secure-produce-consume': secureProduceConsume,
  'acl-denials': aclDenials,
};

main(scenarios, (bootstrap, scenario) => scenario(bootstrap));
