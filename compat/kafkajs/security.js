'use strict';
// kafkajs in the security rows (../security/rows.js): secure-produce-consume and acl-denials. kafkajs's consumer
// needs a group, so records are read back by a group consumer.
const { Kafka, logLevel } = require('kafkajs');
const { check } = require('../lib/client-util');
const { TRANSPORTS, kafkajsConfig, errorType, env } = require('../lib/security-config');

const RECORDS = 20;
const kafkaAs = (transport, user, tls = true, logCreator = undefined) => new Kafka({ clientId: 'fjord-compat-kafkajs',
  logLevel: logCreator ? logLevel.DEBUG : logLevel.NOTHING, logCreator,
  retry: { retries: 10, initialRetryTime: 200, maxRetryTime: 2000 }, ...kafkajsConfig(transport, user, tls) });

/**
 * A kafkajs logCreator collecting the Kafka error types its debug log mentions: kafkajs answers a FindCoordinator
 * error other than GROUP_COORDINATOR_NOT_AVAILABLE with KafkaJSGroupCoordinatorNotFound ("Failed to find group
 * coordinator"), the broker's error only in its log ("Tried to find group coordinator").
 */
function loggedErrorTypes() {
  const types = new Set();
  const logCreator = () => ({ log }) => {
    if (log && log.error && log.error.type) types.add(log.error.type);
  };
  return { types, logCreator };
}

/**
 * Runs a group consumer of `topic` until it has `count` values or crashes or `ms` pass; resolves { values, error }
 * (error: the crash's, or a failure of connect/subscribe/run).
 */
async function consumeInGroup(kafka, groupId, topic, count, ms = 20000) {
  const consumer = kafka.consumer({ groupId, sessionTimeout: 10000, heartbeatInterval: 500 });
  const values = [];
  let error = null;
  try {
    await new Promise((resolve, reject) => {
      const timer = setTimeout(resolve, ms);
      const done = (f) => (...a) => {
        clearTimeout(timer);
        f(...a);
      };
      consumer.on(consumer.events.CRASH, ({ payload }) => done(reject)(payload.error));
      (async () => {
        await consumer.connect();
        await consumer.subscribe({ topics: [topic], fromBeginning: true });
        await consumer.run({ eachMessage: async ({ message }) => {
          values.push(message.value.toString());
          if (values.length >= count) done(resolve)();
        } });
      })().catch(done(reject));
    });
  } catch (e) {
    error = e;
  } finally {
    await consumer.disconnect().catch(() => {});
  }
  return { values, error };
}

/** secure-produce-consume: per transport, 20 records produced as alice (SSL: anonymous) and read back exactly. */
async function secureProduceConsume(bootstrap, admin) {
  for (const t of TRANSPORTS) {
    const topic = `secure-kafkajs-${t.toLowerCase()}`;
    await admin.createTopics({ topics: [{ topic, numPartitions: 1, replicationFactor: 1 }], waitForLeaders: true });
    const kafka = kafkaAs(t, 'alice');
    const sent = Array.from({ length: RECORDS }, (_, i) => `${t} record ${i} \u00e9\n`);
    const producer = kafka.producer();
    try {
      await producer.connect();
      await producer.send({ topic, acks: -1, messages: sent.map((value, i) => ({ key: `k${i}`, value })) });
    } catch (e) {
      throw new Error(`${t}: produce failed: ${e.message}`, { cause: e });
    } finally {
      await producer.disconnect();
    }
    const { values, error } = await consumeInGroup(kafka, `secure-kafkajs-${t.toLowerCase()}`, topic, RECORDS);
    if (error) throw new Error(`${t}: consume failed: ${error.message}`, { cause: error });
    check(JSON.stringify(values) === JSON.stringify(sent), `${t}: read back ${JSON.stringify(values)}, expected ${JSON.stringify(sent)}`);
    console.log(`${t}: ${RECORDS} records produced and read back`); // progress, shown if a later transport times out
  }
  return `produced and consumed ${RECORDS} records over ${TRANSPORTS.join(', ')}`;
}

/** acl-denials (FJORD_SEC_PHASE denied, then allowed): alice over SASL_PLAINTEXT with PLAIN. */
async function aclDenials() {
  const logged = loggedErrorTypes();
  const kafka = kafkaAs('PLAIN', 'alice', false, logged.logCreator);
  const topic = 'acl-kafkajs';
  if (env('FJORD_SEC_PHASE') === 'allowed') {
    const { values, error } = await consumeInGroup(kafka, 'acl-ok-kafkajs', topic, 5);
    if (error) throw new Error(`group acl-ok-kafkajs after the READ grant: ${error.message}`, { cause: error });
    check(JSON.stringify(values.slice(0, 5)) === JSON.stringify(['r0', 'r1', 'r2', 'r3', 'r4']), `read ${JSON.stringify(values)} after the READ grant`);
    return `after the READ grant: ${topic} read in group acl-ok-kafkajs`;
  }
  const seen = [];
  const expectError = (what, error, type) => {
    check(errorType(error) === type, `${what}: expected ${type}, got ${error ? `${error.name}: ${error.message} (${errorType(error)})` : 'no error'}`);
    seen.push(`${what}: ${type}`);
  };
  // Group allowed, topic without READ: the consumer crashes on TOPIC_AUTHORIZATION_FAILED.
  let r = await consumeInGroup(kafka, 'acl-ok-kafkajs-denied-topic', topic, 1);
  check(!r.values.length, `read ${JSON.stringify(r.values)} without READ on ${topic}`);
  expectError('consumer without READ on the topic', r.error, 'TOPIC_AUTHORIZATION_FAILED');
  // A denied FindCoordinator: kafkajs throws KafkaJSGroupCoordinatorNotFound, the broker's error is in its log.
  const expectCoordinatorDenied = (what, error, type) => {
    check(error && error.name === 'KafkaJSGroupCoordinatorNotFound' && logged.types.has(type),
      `${what}: expected KafkaJSGroupCoordinatorNotFound after FindCoordinator's ${type}, got ${error ? `${error.name}: ${error.message}` : 'no error'}; the errors logged: ${[...logged.types]}`);
    seen.push(`${what}: KafkaJSGroupCoordinatorNotFound (FindCoordinator: ${type})`);
  };
  // No ACL on the group.
  logged.types.clear();
  r = await consumeInGroup(kafka, 'acl-denied-kafkajs', topic, 1);
  check(!r.values.length, `read ${JSON.stringify(r.values)} in a group without READ`);
  expectCoordinatorDenied('consumer in group acl-denied-kafkajs', r.error, 'GROUP_AUTHORIZATION_FAILED');
  // No ACL on the transactional id.
  logged.types.clear();
  const producer = kafka.producer({ transactionalId: 'acl-txn-kafkajs', idempotent: true, maxInFlightRequests: 1 });
  let error = null;
  try {
    await producer.connect();
    const txn = await producer.transaction();
    await txn.abort();
  } catch (e) {
    error = e;
  } finally {
    await producer.disconnect();
  }
  expectCoordinatorDenied('transaction()', error, 'TRANSACTIONAL_ID_AUTHORIZATION_FAILED');
  return seen.join('; ');
}

module.exports = { 'secure-produce-consume': secureProduceConsume, 'acl-denials': aclDenials };
