// SharePartitionManager's share-partitions against a replica layer the test drives: made once per
// group and partition at the leader epoch, dropped when leadership ends or the epoch moves.
import { expect } from 'chai';
import pino from 'pino';
import { ErrorCode } from '../../src/common/errors';
import { DelayedOperationPurgatory } from '../../src/replica/delayed/purgatory';
import type { ReplicaManager } from '../../src/replica/replica-manager';
import { createSharePartition } from '../../src/share/in-flight-records';
import { SharePartitionManager, type SharePartitionSpec, type SharePartitionManagerOptions } from '../../src/share/share-partition-manager';
import { MemoryPersister } from '../helpers/memory-persister';

const TOPIC_ID = 'cd'.repeat(16);

describe('SharePartitionManager', () => {
  let leaderEpoch: number;
  let leads: boolean;
  let leadershipEnded: (topic: string, partition: number) => void;
  let made: SharePartitionSpec[];
  let closed: number;
  let purgatory: DelayedOperationPurgatory;
  let manager: SharePartitionManager;

  beforeEach(() => {
    leaderEpoch = 5;
    leads = true;
    made = [];
    closed = 0;
    purgatory = new DelayedOperationPurgatory('ShareFetchTest');
    const persister = new MemoryPersister('uninitialized');
    // The partition's log is never read here: it is empty (nothing acquirable), so fetches answer at once.
    const replicas = {
      leaderPartition: () => (leads ? { partition: {}, leaderEpoch } : { errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER }),
      partition: () => undefined,
      fetchPurgatory: purgatory,
      onLeadershipEnded: (listener: (topic: string, partition: number) => void) => {
        leadershipEnded = listener;
      },
      fetchMessages: () => Promise.reject(new Error('nothing to read')),
      fetchOffsetForTimestamp: () => Promise.resolve({ errorCode: ErrorCode.NONE, offset: 0, timestamp: -1, leaderEpoch }),
    } as unknown as SharePartitionManagerOptions['replicas'] & Pick<ReplicaManager, 'fetchPurgatory'>;
    manager = new SharePartitionManager({
      replicas, logger: pino({ level: 'silent' }), maxSessions: () => 10,
      settings: () => ({ readCommitted: false, recordLockDurationMs: 30_000 }),
      createPartition: (spec) => {
        made.push(spec);
        const sharePartition = createSharePartition({
          ...spec, persister,
          settings: () => ({ recordLockDurationMs: 30_000, deliveryCountLimit: 5, maxRecordLocks: 2000, autoOffsetReset: 'earliest', readCommitted: false, renewAcknowledgeEnable: true }),
          resetOffset: () => Promise.resolve(0n),
        });
        const close = sharePartition.close.bind(sharePartition);
        sharePartition.close = () => {
          closed++;
          close();
        };
        return sharePartition;
      },
    });
  });
  afterEach(() => {
    manager.close();
    purgatory.shutdown();
  });

  const fetch = (groupId: string) => manager.fetch(
    { groupId, memberId: 'm', maxWaitMs: 0, maxBytes: 1 << 20, maxRecords: 10, recordLimit: false, allocate: Buffer.allocUnsafe },
    [{ topicId: TOPIC_ID, topicName: 't', partition: 0 }]);

  it('makes one share-partition per group and partition, at the leader epoch, and keeps it', async () => {
    expect((await fetch('g1'))[0]).to.include({ errorCode: ErrorCode.NONE, leaderEpoch: 5 });
    await fetch('g1');
    await fetch('g2');
    expect(made.map((s) => [s.key.groupId, s.key.topicId, s.key.partition, s.topicName, s.leaderEpoch])).to.deep.equal([
      ['g1', TOPIC_ID, 0, 't', 5], ['g2', TOPIC_ID, 0, 't', 5],
    ]);
    expect(manager.size).to.equal(2);
  });

  it('reset drops the share-partition of that group and partition only (its state was altered or deleted); the next fetch makes it again', async () => {
    await fetch('g1');
    await fetch('g2');
    manager.reset({ groupId: 'g1', topicId: TOPIC_ID, partition: 0 });
    manager.reset({ groupId: 'g1', topicId: TOPIC_ID, partition: 1 });
    expect([closed, manager.size]).to.deep.equal([1, 1]);
    await fetch('g1');
    expect(made.map((s) => s.key.groupId)).to.deep.equal(['g1', 'g2', 'g1']);
  });

  it('drops and closes the share-partitions of a partition no longer led here, and answers NOT_LEADER_OR_FOLLOWER', async () => {
    await fetch('g1');
    await fetch('g2');
    leadershipEnded('other', 0);
    expect(manager.size).to.equal(2);
    leads = false;
    leadershipEnded('t', 0);
    expect([manager.size, closed]).to.deep.equal([0, 2]);
    expect((await fetch('g1'))[0]).to.include({ errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER, leaderEpoch: -1 });
    expect(made).to.have.length(2);
  });

  it('makes the share-partition again when the leader epoch moved on', async () => {
    await fetch('g1');
    leaderEpoch = 6;
    expect((await fetch('g1'))[0]).to.include({ errorCode: ErrorCode.NONE, leaderEpoch: 6 });
    expect(made.map((s) => s.leaderEpoch)).to.deep.equal([5, 6]);
    expect([manager.size, closed]).to.deep.equal([1, 1]);
  });
});
