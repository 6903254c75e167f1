// Three Fjord brokers on one etcd, driven by kafkajs as a user would: a replicated topic written
// with acks=all and read back, the partition leader's broker stopped (the others go on from the
// ISR, nothing acknowledged lost), and a consumer group whose coordinator moves with it.
import { expect } from 'chai';
import { Kafka, logLevel, type Admin } from 'kafkajs';
import { startBroker, type RunningBroker } from '../../src/broker';
import { startEtcd, type RunningEtcd } from '../helpers/etcd';
import { readValues } from '../helpers/read-values';

describe('a cluster of three brokers on etcd', function () {
  this.timeout(90_000);
  let etcd: RunningEtcd;
  let brokers: (RunningBroker | undefined)[] = [];
  let admin: Admin;
  let kafka: Kafka;

  const startNode = (nodeId: number) => startBroker({
    nodeId, logLevel: process.env.FJORD_TEST_LOG ?? 'silent',
    config: {
      'etcd.connect': etcd.connect, 'broker.session.timeout.ms': '6000',
      'replica.lag.time.max.ms': '3000', 'replica.fetch.wait.max.ms': '100', 'offsets.topic.num.partitions': '3',
      'group.initial.rebalance.delay.ms': '0',
    },
  });

  before(async () => {
    etcd = await startEtcd();
    brokers = await Promise.all([0, 1, 2].map(startNode));
    kafka = new Kafka({ brokers: brokers.map((b) => b!.bootstrap), logLevel: logLevel.NOTHING, retry: { retries: 20, initialRetryTime: 100 } });
    admin = kafka.admin();
    await admin.connect();
  });

  after(async () => {
    await admin?.disconnect();
    await Promise.all(brokers.map((b) => b?.close()));
    await etcd?.stop();
  });

  it('lists every broker and the controller, and places an RF=3 topic on all three with a leader each', async () => {
    const cluster = await admin.describeCluster();
    expect(cluster.brokers.map((b) => b.nodeId).sort()).to.deep.equal([0, 1, 2]);
    expect([0, 1, 2]).to.include(cluster.controller);
    await admin.createTopics({ topics: [{ topic: 'replicated', numPartitions: 3, replicationFactor: 3, configEntries: [{ name: 'min.insync.replicas', value: '2' }] }] });
    const [meta] = (await admin.fetchTopicMetadata({ topics: ['replicated'] })).topics;
    for (const p of meta.partitions) {
      expect([...p.replicas].sort()).to.deep.equal([0, 1, 2]);
      expect(p.leader).to.be.oneOf([0, 1, 2]);
    }
  });

  it('keeps every acknowledged record through the death of a partition leader', async () => {
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    const sent: string[] = [];
    let partition = -1;
    for (let i = 0; i < 50; i++) {
      const [ack] = await producer.send({ topic: 'replicated', acks: -1, messages: [{ key: 'k', value: `before-${i}` }] });
      partition = ack.partition;
      sent.push(`before-${i}`);
    }
    const [meta] = (await admin.fetchTopicMetadata({ topics: ['replicated'] })).topics;
    const victim = meta.partitions.find((p) => p.partitionId === partition)!.leader;
    await brokers[victim]!.close();
    brokers[victim] = undefined;
    for (let i = 0; i < 50; i++) {
      await producer.send({ topic: 'replicated', acks: -1, messages: [{ key: 'k', value: `after-${i}` }] });
      sent.push(`after-${i}`);
    }
    await producer.disconnect();

    const consumer = kafka.consumer({ groupId: 'readers' });
    await consumer.connect();
    await consumer.subscribe({ topic: 'replicated', fromBeginning: true });
    const seen = await readValues(consumer, sent.length);
    await consumer.disconnect();
    expect(seen).to.deep.equal(sent); // one key, one partition: order kept, nothing lost or doubled

    brokers[victim] = await startNode(victim);
  });

  it('commits a transaction over partitions led by other brokers than its coordinator (markers sent between brokers)', async () => {
    await admin.createTopics({ topics: [{ topic: 'txn-out', numPartitions: 3, replicationFactor: 3 }] });
    const producer = kafka.producer({ transactionalId: 'cluster-txn', idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    const committed = await producer.transaction();
    for (let p = 0; p < 3; p++) await committed.send({ topic: 'txn-out', messages: [{ partition: p, value: `committed-${p}` }] });
    await committed.commit();
    const aborted = await producer.transaction();
    for (let p = 0; p < 3; p++) await aborted.send({ topic: 'txn-out', messages: [{ partition: p, value: `aborted-${p}` }] });
    await aborted.abort();
    await producer.disconnect();

    // Each partition's last stable offset is past both markers: 1 record, 2 markers, 1 record.
    const consumer = kafka.consumer({ groupId: 'txn-readers' });
    await consumer.connect();
    await consumer.subscribe({ topic: 'txn-out', fromBeginning: true });
    const seen: string[] = [];
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`read ${JSON.stringify(seen)}`)), 30_000);
      void consumer.run({
        eachMessage: async ({ message }) => {
          seen.push(message.value!.toString());
          if (seen.length === 3) {
            clearTimeout(timer);
            resolve();
          }
        },
      });
    });
    await consumer.disconnect();
    expect(seen.sort()).to.deep.equal(['committed-0', 'committed-1', 'committed-2']);
    const offsets = await admin.fetchTopicOffsets('txn-out');
    expect(offsets.map((o) => o.high)).to.deep.equal(['4', '4', '4']);
  });
});
