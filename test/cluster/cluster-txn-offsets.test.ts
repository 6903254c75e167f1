// TxnOffsetCommit on a cluster where the group's coordinator and the transactional id's coordinator
// are different brokers (found by compat's cluster-txn row): the group's broker must not ask its own
// transaction coordinator to verify the write (KIP-890's check, off in a cluster as Produce's is),
// which does not own the transactional id and would refuse the commit for ever.
import { expect } from 'chai';
import { Kafka, logLevel, type Admin } from 'kafkajs';
import { startBroker, type RunningBroker } from '../../src/broker';
import { startEtcd, type RunningEtcd } from '../helpers/etcd';

const INTERNAL_PARTITIONS = 3;

/** Kafka's Utils.abs(key.hashCode()) % partitions: the internal-topic partition of a group or transactional id. */
function partitionFor(key: string, partitions: number): number {
  let h = 0;
  for (let i = 0; i < key.length; i++) h = (Math.imul(h, 31) + key.charCodeAt(i)) | 0;
  return (h & 0x7fffffff) % partitions;
}

describe('transactional offset commits on a cluster of three brokers', function () {
  this.timeout(60_000);
  let etcd: RunningEtcd;
  let brokers: RunningBroker[] = [];
  let admin: Admin;
  let kafka: Kafka;

  before(async () => {
    etcd = await startEtcd();
    brokers = await Promise.all([0, 1, 2].map((nodeId) => startBroker({
      nodeId, logLevel: process.env.FJORD_TEST_LOG ?? 'silent',
      config: {
        'etcd.connect': etcd.connect, 'offsets.topic.num.partitions': String(INTERNAL_PARTITIONS),
        'transaction.state.log.num.partitions': String(INTERNAL_PARTITIONS),
      },
    })));
    kafka = new Kafka({ brokers: brokers.map((b) => b.bootstrap), logLevel: logLevel.NOTHING, retry: { retries: 5, initialRetryTime: 100 } });
    admin = kafka.admin();
    await admin.connect();
  });

  after(async () => {
    await admin?.disconnect();
    await Promise.all(brokers.map((b) => b.close()));
    await etcd?.stop();
  });

  /** The partition's leader, once the (internal, created on first use) topic is in the metadata. */
  const leaderOf = async (topic: string, partition: number): Promise<number> => {
    for (let attempt = 0; ; attempt++) {
      try {
        return (await admin.fetchTopicMetadata({ topics: [topic] })).topics[0].partitions.find((p) => p.partitionId === partition)!.leader;
      } catch (e) {
        if (attempt === 50) throw e;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  };

  it('commits a group\'s offsets with the transaction when another broker coordinates the group', async () => {
    await admin.createTopics({ topics: ['in', 'out'].map((topic) => ({ topic, numPartitions: 1, replicationFactor: 3 })), waitForLeaders: true });
    const producer = kafka.producer({ transactionalId: 'tx', idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    const transaction = await producer.transaction();
    await transaction.send({ topic: 'out', messages: [{ value: 'v' }] }); // __transaction_state exists from here
    const txnCoordinator = await leaderOf('__transaction_state', partitionFor('tx', INTERNAL_PARTITIONS));
    let groupId = '';
    for (let i = 0; !groupId; i++) {
      if ((await leaderOf('__consumer_offsets', partitionFor(`g${i}`, INTERNAL_PARTITIONS))) !== txnCoordinator) groupId = `g${i}`;
    }
    await transaction.sendOffsets({ consumerGroupId: groupId, topics: [{ topic: 'in', partitions: [{ partition: 0, offset: '5' }] }] });
    await transaction.commit();
    await producer.disconnect();
    const [committed] = await admin.fetchOffsets({ groupId, topics: ['in'] });
    expect(committed.partitions).to.deep.equal([{ partition: 0, offset: '5', metadata: null }]);
  });
});
