'use strict';
// The security rows (compat/README.md, "Security rows"): each starts one broker with every listener
// (lib/secure-broker.js), prepares it with Kafka's own tools (kafka-configs for SCRAM users and quotas, kafka-acls for
// ACLs), then runs each client program against it: `PROGRAM BOOTSTRAP SCENARIO` with the FJORD_SEC_* variables
// (the endpoints, the certificate files; acl-denials also FJORD_SEC_PHASE).
const fs = require('fs');
const os = require('os');
const path = require('path');
const { Kafka, logLevel } = require('kafkajs');
const { startSecureBroker, mustTool, addScramUsers, ACL_COMMAND, CONFIG_COMMAND } = require('../lib/secure-broker');

const SECURE_SCENARIOS = ['secure-produce-consume', 'acl-denials', 'quota-throttle'];

/** The producer byte rate (bytes/s) quota-throttle sets for the client id `quota-CLIENT`. */
const QUOTA_BYTE_RATE = 1024 * 1024;

/** Creates 1-partition topics (a super user over PLAINTEXT) and writes `records` records `r0`.. to each. */
async function createTopics(bootstrap, topics, records = 0) {
  const kafka = new Kafka({ clientId: 'fjord-compat-security', brokers: [bootstrap], logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  try {
    await admin.createTopics({ topics: topics.map((topic) => ({ topic, numPartitions: 1, replicationFactor: 1 })), waitForLeaders: true });
  } finally {
    await admin.disconnect();
  }
  if (!records) return;
  const producer = kafka.producer();
  await producer.connect();
  try {
    for (const topic of topics) await producer.send({ topic, acks: -1, messages: Array.from({ length: records }, (_, i) => ({ key: `k${i}`, value: `r${i}` })) });
  } finally {
    await producer.disconnect();
  }
}

/**
 * What each row does before the clients run and around each client's run: its own server.properties lines
 * (properties); setup(broker, clients) once;
 * cell(broker, client, runProgram) per client, runProgram(env) running the client program (resolves { status, message }).
 */
const ROWS = {
  // alice may do anything with topics and groups named secure-* (kafka-acls, prefixed); SCRAM users from kafka-configs.
  'secure-produce-consume': {
    async setup(broker) {
      await addScramUsers(broker, ['alice']);
      await mustTool(broker, ACL_COMMAND, '--add', '--allow-principal', 'User:alice', '--operation', 'All',
        '--topic', 'secure-', '--group', 'secure-', '--resource-pattern-type', 'prefixed');
    },
    cell: (broker, client, runProgram) => runProgram({}),
  },
  // alice (PLAIN over SASL_PLAINTEXT) may write and describe acl-* topics, read acl-ok-* groups; hidden-acl is
  // not hers, neither is any transactional id. Topic acl-CLIENT holds 5 records. The client program runs twice:
  // FJORD_SEC_PHASE=denied (the denials), then, after kafka-acls gave alice READ on acl-CLIENT, allowed.
  'acl-denials': {
    async setup(broker, clients) {
      await createTopics(broker.bootstrap, [...clients.map((c) => `acl-${c.name}`), 'hidden-acl'], 5);
      await mustTool(broker, ACL_COMMAND, '--add', '--allow-principal', 'User:alice', '--operation', 'Write', '--operation', 'Describe',
        '--topic', 'acl-', '--resource-pattern-type', 'prefixed');
      await mustTool(broker, ACL_COMMAND, '--add', '--allow-principal', 'User:alice', '--operation', 'Read',
        '--group', 'acl-ok-', '--resource-pattern-type', 'prefixed');
    },
    async cell(broker, client, runProgram) {
      const denied = await runProgram({ FJORD_SEC_PHASE: 'denied' });
      if (denied.status !== 'pass') return { ...denied, message: `phase denied: ${denied.message}` };
      await mustTool(broker, ACL_COMMAND, '--add', '--allow-principal', 'User:alice', '--operation', 'Read', '--topic', `acl-${client.name}`);
      const allowed = await runProgram({ FJORD_SEC_PHASE: 'allowed' });
      return allowed.status === 'pass' ? allowed : { ...allowed, message: `phase allowed (after kafka-acls --add ... --operation Read --topic acl-${client.name}): ${allowed.message}` };
    },
  },
  // kafka-configs --alter --add-config producer_byte_rate=... --entity-type clients --entity-name quota-CLIENT.
  // Kafka measures a client's rate over quota.window.num samples of quota.window.size.seconds (11 x 1 s by default)
  // and lets a first burst of about a window's worth through, then throttles: with 11 s that burst (and the next,
  // when it leaves the window) is as large as 10 s of quota and a client's rate over any 10 s swings by tens of
  // percent (Java against Kafka 4.4: 78.6% and 98.3% in two runs). Two 1 s samples keep the bursts to a second's worth.
  'quota-throttle': {
    properties: ['quota.window.num=2', 'quota.window.size.seconds=1'],
    async setup(broker, clients) {
      for (const c of clients) {
        await mustTool(broker, CONFIG_COMMAND, '--alter', '--add-config', `producer_byte_rate=${QUOTA_BYTE_RATE}`, '--entity-type', 'clients', '--entity-name', `quota-${c.name}`);
      }
    },
    cell: (broker, client, runProgram) => runProgram({ FJORD_SEC_QUOTA_BYTE_RATE: String(QUOTA_BYTE_RATE) }),
  },
};

/**
 * Runs one security row for `clients` (those with a program for it; the others are the caller's n/a): starts the
 * broker, sets it up, runs the cells, stops it. runCell(client, env) runs a client's program. Resolves
 * Map(client name -> { status, message }). A broker that does not start fails every cell; a failed setup step fails
 * every cell too, but the cells still run and their outcome follows the setup's error (what works without it).
 */
async function runSecureRow(scenario, clients, runCell, log) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `fjord-${scenario}-`));
  const results = new Map();
  let broker;
  try {
    broker = await startSecureBroker(dir, { log, properties: ROWS[scenario].properties });
    log(`${scenario}: ${broker.kind} at ${Object.entries(broker.endpoints).map(([n, e]) => `${n} ${e}`).join(', ')}`);
    const row = ROWS[scenario];
    const setupError = await row.setup(broker, clients).then(() => null, (e) => e);
    for (const c of clients) {
      let result = await row.cell(broker, c, (env) => runCell(c, { ...broker.env, ...env })).catch((e) => ({ status: 'FAIL', message: e.message }));
      if (setupError) result = { status: 'FAIL', message: `${scenario} setup failed: ${setupError.message}\nthe cell anyway: ${result.status === 'pass' ? 'pass' : result.message}` };
      if (result.status === 'FAIL') result.message += `\n${broker.tail()}`;
      results.set(c.name, result);
    }
  } catch (e) {
    const message = `${scenario}: the broker did not start: ${e.message}${broker ? `\n${broker.tail()}` : ''}`;
    for (const c of clients) if (!results.has(c.name)) results.set(c.name, { status: 'FAIL', message });
  } finally {
    if (broker) await broker.stop();
    if (!process.env.FJORD_SECURE_KEEP) fs.rmSync(dir, { recursive: true, force: true });
    else log(`${scenario}: kept ${dir}`);
  }
  return results;
}

module.exports = { SECURE_SCENARIOS, runSecureRow };
