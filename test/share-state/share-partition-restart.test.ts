// A share-partition (src/share) on a real broker's persister: it initializes the share-partition the
// share coordinator never saw (read as UNKNOWN_TOPIC_OR_PARTITION), its acknowledgements, rejections and releases are written to
// __share_group_state, and after a restart of the broker a new share-partition neither redelivers
// what was accepted or rejected nor forgets the delivery counts of what it hands out again.
import { expect } from 'chai';
import { ErrorCode } from '../../src/common/errors';
import { createSharePartition } from '../../src/share/in-flight-records';
import { AcknowledgeType, type LogBatchBounds, type SharePartition } from '../../src/share/share-partition';
import { withRestartableBroker } from '../helpers/broker';

const settings = () => ({
  recordLockDurationMs: 30_000, deliveryCountLimit: 5, maxRecordLocks: 2000, autoOffsetReset: 'earliest' as const,
  readCommitted: false, renewAcknowledgeEnable: false,
});
/** One log batch of offsets 0-9 (the share-partition reads batch bounds only). */
const LOG: LogBatchBounds[] = [{ baseOffset: 0n, lastOffset: 9n, isControl: false, isTransactional: false, producerId: -1n }];

describe('share-state: a share-partition\'s acknowledgements survive a broker restart', function () {
  this.timeout(30000);
  const b = withRestartableBroker();
  let key = { groupId: 'jobs-group', topicId: '', partition: 0 };
  const open: SharePartition[] = [];
  const sharePartition = (leaderEpoch: number) => {
    const sp = createSharePartition({
      key, topicName: 'jobs', leaderEpoch, persister: b.running.broker.sharePersister, settings, resetOffset: () => Promise.resolve(0n),
    });
    open.push(sp);
    return sp;
  };

  before(async () => {
    await b.running.broker.controller.createTopic({ name: 'jobs', numPartitions: 1, replicationFactor: 1, assignments: [], configs: {} }, false);
    key = { ...key, topicId: b.running.broker.controller.topic('jobs')!.id };
  });
  after(() => {
    for (const sp of open) sp.close();
  });

  it('keeps accepted and rejected records settled and delivery counts across the restart', async () => {
    const first = sharePartition(0);
    expect(await first.load()).to.equal(ErrorCode.NONE);
    expect(first.acquire('m1', LOG, 10)).to.deep.equal([{ firstOffset: 0n, lastOffset: 9n, deliveryCount: 1 }]);
    expect(await first.acknowledge('m1', [
      { firstOffset: 0n, lastOffset: 4n, acknowledgeTypes: [AcknowledgeType.ACCEPT] },
      { firstOffset: 5n, lastOffset: 5n, acknowledgeTypes: [AcknowledgeType.REJECT] },
    ])).to.equal(ErrorCode.NONE);
    expect(await first.releaseAcquiredRecords('m1')).to.equal(ErrorCode.NONE);
    const stored = await b.running.broker.sharePersister.read(key, 0);
    first.close();

    await b.restart();
    expect(await b.running.broker.sharePersister.read(key, 0)).to.deep.equal(stored);
    const second = sharePartition(1);
    expect(await second.load()).to.equal(ErrorCode.NONE);
    expect(second.nextFetchOffset()).to.equal(6n);
    expect(second.acquire('m2', LOG, 10)).to.deep.equal([{ firstOffset: 6n, lastOffset: 9n, deliveryCount: 2 }]);
  });
});
