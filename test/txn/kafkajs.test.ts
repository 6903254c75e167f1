// kafkajs transactions against the broker: a transactional producer commits and aborts, sends
// consumed offsets in its transaction; a read_committed consumer (kafkajs's default) sees exactly the
// committed records; a second producer with the same transactional id fences the first; all of it
// survives a broker restart.
import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { Kafka, logLevel, type Producer } from 'kafkajs';
import { startBroker, type RunningBroker } from '../../src/broker';

const CONFIG = {
  'group.initial.rebalance.delay.ms': '0', 'offsets.topic.num.partitions': '3', 'transaction.state.log.num.partitions': '3',
};

describe('kafkajs transactions', function () {
  this.timeout(60000);
  let dataDir: string;
  let running: RunningBroker | undefined;
  let readers = 0;

  before(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'fjord-kafkajs-txn-'));
    running = await startBroker({ dataDir, logLevel: 'silent', config: CONFIG });
  });
  after(async () => {
    await running?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  const client = () => new Kafka({
    brokers: [running!.bootstrap], clientId: 'kjs-txn-test', logLevel: logLevel.NOTHING,
    retry: { retries: 20, initialRetryTime: 50, maxRetryTime: 500 },
  });
  const transactional = (kafka: Kafka, transactionalId: string): Producer =>
    kafka.producer({ transactionalId, idempotent: true, maxInFlightRequests: 1, retry: { retries: 5, initialRetryTime: 50 } });

  /** Every value on the topic, read from the start by a new group, as read_committed or not. */
  async function readAll(kafka: Kafka, topic: string, expectedCount: number, readUncommitted: boolean): Promise<string[]> {
    const consumer = kafka.consumer({ groupId: `reader-${++readers}`, readUncommitted, maxWaitTimeInMs: 100 });
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    const values: string[] = [];
    await consumer.run({ eachMessage: async ({ message }) => { values.push(message.value!.toString()); } });
    const deadline = Date.now() + 15000;
    while (values.length < expectedCount && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    await new Promise((r) => setTimeout(r, 300)); // anything beyond the expected count would show up here
    await consumer.disconnect();
    return values;
  }

  it('commits and aborts; read_committed sees only the committed records, read_uncommitted all of them', async () => {
    const kafka = client();
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: 'kjs-txn-out', numPartitions: 2 }] });
    await admin.disconnect();

    const producer = transactional(kafka, 'kjs-txn-1');
    await producer.connect();
    for (let i = 0; i < 6; i++) {
      const txn = await producer.transaction();
      await txn.send({ topic: 'kjs-txn-out', messages: [{ key: `k${i}`, value: `v${i}-a` }, { key: `k${i + 1}`, value: `v${i}-b` }] });
      if (i % 3 === 2) await txn.abort();
      else await txn.commit();
    }
    await producer.disconnect();

    const committed = [0, 1, 3, 4].flatMap((i) => [`v${i}-a`, `v${i}-b`]);
    expect((await readAll(kafka, 'kjs-txn-out', committed.length, false)).sort()).to.deep.equal(committed.sort());
    expect(await readAll(kafka, 'kjs-txn-out', 12, true)).to.have.length(12);
  });

  it('sendOffsets makes the consumed offsets part of the transaction: visible on commit, dropped on abort', async () => {
    const kafka = client();
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: 'kjs-txn-in', numPartitions: 1 }, { topic: 'kjs-txn-copy', numPartitions: 1 }] });
    const producer = transactional(kafka, 'kjs-txn-2');
    await producer.connect();

    let txn = await producer.transaction();
    await txn.send({ topic: 'kjs-txn-copy', messages: [{ value: 'copied' }] });
    await txn.sendOffsets({ consumerGroupId: 'kjs-txn-group', topics: [{ topic: 'kjs-txn-in', partitions: [{ partition: 0, offset: '7' }] }] });
    await txn.commit();
    const offsetsOf = async () => (await admin.fetchOffsets({ groupId: 'kjs-txn-group', topics: ['kjs-txn-in'] }))[0].partitions[0].offset;
    expect(await offsetsOf()).to.equal('7');

    txn = await producer.transaction();
    await txn.sendOffsets({ consumerGroupId: 'kjs-txn-group', topics: [{ topic: 'kjs-txn-in', partitions: [{ partition: 0, offset: '9' }] }] });
    await txn.abort();
    expect(await offsetsOf()).to.equal('7');
    await producer.disconnect();
    await admin.disconnect();
  });

  it('a second producer with the same transactional id fences the first; its open transaction is aborted', async () => {
    const kafka = client();
    const zombie = transactional(kafka, 'kjs-txn-3');
    await zombie.connect();
    const zombieTxn = await zombie.transaction();
    await zombieTxn.send({ topic: 'kjs-txn-fenced', messages: [{ value: 'zombie' }] });

    const successor = transactional(kafka, 'kjs-txn-3');
    await successor.connect();
    const txn = await successor.transaction();
    await txn.send({ topic: 'kjs-txn-fenced', messages: [{ value: 'successor' }] });
    await txn.commit();

    let fenced: Error | undefined;
    try {
      await zombieTxn.send({ topic: 'kjs-txn-fenced', messages: [{ value: 'zombie-2' }] });
      await zombieTxn.commit();
    } catch (e) {
      fenced = e as Error;
    }
    expect(fenced?.message ?? 'no error').to.match(/epoch|fenced/i);
    expect(await readAll(kafka, 'kjs-txn-fenced', 1, false)).to.deep.equal(['successor']);
    await zombie.disconnect().catch(() => undefined);
    await successor.disconnect();
  });

  it('committed transactions and the transactional ids survive a restart', async () => {
    await running!.close();
    running = await startBroker({ dataDir, logLevel: 'silent', config: CONFIG });
    const kafka = client();
    const committed = [0, 1, 3, 4].flatMap((i) => [`v${i}-a`, `v${i}-b`]);
    expect((await readAll(kafka, 'kjs-txn-out', committed.length, false)).sort()).to.deep.equal(committed.sort());
    const described = running.broker.transactions.describe('kjs-txn-1');
    expect(described).to.include({ errorCode: 0, state: 'CompleteCommit' });
    // The id's next producer gets the epoch after the last one.
    const producer = transactional(kafka, 'kjs-txn-1');
    await producer.connect();
    expect(running.broker.transactions.describe('kjs-txn-1').producerEpoch).to.equal(described.producerEpoch + 1);
    await producer.disconnect();
  });
});
