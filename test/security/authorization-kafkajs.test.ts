// What an off-the-shelf client (kafkajs) sees of denials: a producer without WRITE on a topic, a
// consumer without READ on it, a consumer whose group join is denied and a producer whose
// transactional id is denied each fail with Kafka's error; allowed, they work.
import { expect } from 'chai';
import { Kafka, logLevel, type Consumer } from 'kafkajs';
import { AclOperation, ResourceType } from '../../src/security/acl';
import { withBroker } from '../helpers/broker';
import { eventually } from '../helpers/eventually';
import { TestAuthorizer } from '../helpers/test-authorizer';

const { TOPIC, GROUP, TRANSACTIONAL_ID } = ResourceType;
const { READ, WRITE } = AclOperation;

/** kafkajs's name for the Kafka error of a failure (KafkaJSProtocolError.type), or its message. */
function errorType(err: unknown): string {
  const e = err as { type?: string; cause?: { type?: string }; message?: string };
  return e.type ?? e.cause?.type ?? e.message ?? String(err);
}

describe('authorization as kafkajs sees it', function () {
  this.timeout(30000);
  const authorizer = new TestAuthorizer();
  const broker = withBroker({ authorizer, config: { 'group.initial.rebalance.delay.ms': '0', 'offsets.topic.num.partitions': '1' } });
  const consumers: Consumer[] = [];
  let kafka: Kafka;

  before(async () => {
    kafka = new Kafka({
      brokers: [broker.current().bootstrap], clientId: 'authz-test', logLevel: logLevel.NOTHING,
      retry: { retries: 10, initialRetryTime: 100, maxRetryTime: 500 },
    });
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: 'ledger', numPartitions: 1 }] });
    await admin.disconnect();
    const producer = kafka.producer();
    await producer.connect();
    await producer.send({ topic: 'ledger', messages: [{ value: 'first' }] });
    await producer.disconnect();
  });
  after(async () => {
    await Promise.all(consumers.map((c) => c.disconnect().catch(() => undefined)));
  });
  beforeEach(() => authorizer.reset());

  it('a producer without WRITE on the topic gets TOPIC_AUTHORIZATION_FAILED', async () => {
    authorizer.deny(WRITE, TOPIC, 'ledger');
    const producer = kafka.producer();
    await producer.connect();
    try {
      const sent = await producer.send({ topic: 'ledger', messages: [{ value: 'refused' }] }).then(() => 'sent', errorType);
      expect(sent).to.equal('TOPIC_AUTHORIZATION_FAILED');
    } finally {
      await producer.disconnect();
    }
  });

  /** A consumer of 'ledger' in `groupId`, running until it crashes: the crash's error type, or the values it read. */
  async function consume(groupId: string): Promise<{ crashed: () => string | undefined; values: string[] }> {
    const consumer = kafka.consumer({ groupId, sessionTimeout: 10000, heartbeatInterval: 500, maxWaitTimeInMs: 100, retry: { retries: 0 } });
    consumers.push(consumer);
    let crash: string | undefined;
    const values: string[] = [];
    consumer.on(consumer.events.CRASH, (e) => { crash = errorType(e.payload.error); });
    await consumer.connect();
    await consumer.subscribe({ topic: 'ledger', fromBeginning: true });
    await consumer.run({ eachMessage: async ({ message }) => { values.push(message.value!.toString()); } });
    return { crashed: () => crash, values };
  }

  it('a consumer without READ on the topic gets TOPIC_AUTHORIZATION_FAILED; with it, reads', async () => {
    authorizer.deny(READ, TOPIC, 'ledger');
    const denied = await consume('readers-denied');
    await eventually(() => denied.crashed() !== undefined, 'the consumer to fail', 20000);
    expect(denied.crashed()).to.equal('TOPIC_AUTHORIZATION_FAILED');
    expect(denied.values).to.deep.equal([]);
    authorizer.reset();
    const allowed = await consume('readers-allowed');
    await eventually(() => allowed.values.includes('first'), 'the record', 20000);
  });

  it('a consumer denied its group gets GROUP_AUTHORIZATION_FAILED', async () => {
    authorizer.deny(READ, GROUP, 'forbidden-group');
    const denied = await consume('forbidden-group');
    await eventually(() => denied.crashed() !== undefined, 'the consumer to fail', 20000);
    expect(denied.crashed()).to.equal('GROUP_AUTHORIZATION_FAILED');
  });

  it('a transactional producer denied its transactional id gets TRANSACTIONAL_ID_AUTHORIZATION_FAILED', async () => {
    authorizer.deny(WRITE, TRANSACTIONAL_ID, 'forbidden-txn');
    const producer = kafka.producer({ transactionalId: 'forbidden-txn', idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    // kafkajs asks for the transactional producer id when the first transaction begins.
    const begun = await producer.transaction().then(() => 'begun', errorType);
    await producer.disconnect();
    expect(begun).to.equal('TRANSACTIONAL_ID_AUTHORIZATION_FAILED');
    authorizer.reset();
    const allowed = kafka.producer({ transactionalId: 'allowed-txn', idempotent: true, maxInFlightRequests: 1 });
    await allowed.connect();
    const txn = await allowed.transaction();
    await txn.send({ topic: 'ledger', messages: [{ value: 'in-txn' }] });
    await txn.commit();
    await allowed.disconnect();
  });
});
