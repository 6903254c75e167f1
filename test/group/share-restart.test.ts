// Share groups are kept in memory: after a restart their members join again, and the share-partitions
// the share coordinator holds state for keep it (they are not initialized again, which would drop
// what was acknowledged), while they are assigned as before.
import { randomUUID } from 'crypto';
import { expect } from 'chai';
import { ErrorCode } from '../../src/common/errors';
import { ApiKey } from '../../src/protocol/generated';
import type { ShareGroupHeartbeatResponse } from '../../src/protocol/generated/ShareGroupHeartbeatResponse';
import type { StateSummary } from '../../src/share-state/persister';
import { withRestartableBroker } from '../helpers/broker';

const GROUP = 'restarted-queue';

describe('share groups across a restart', function () {
  this.timeout(60_000);
  const broker = withRestartableBroker({
    config: { 'offsets.topic.num.partitions': '1', 'share.coordinator.state.topic.num.partitions': '1', 'group.share.assignment.interval.ms': '0' },
  });

  /** A new member joins and heartbeats until it has the topic's only partition. */
  const joinUntilAssigned = async () => {
    const memberId = randomUUID();
    const heartbeat = (memberEpoch: number, subscribedTopicNames: string[] | null) => broker.client.request<ShareGroupHeartbeatResponse>(
      ApiKey.ShareGroupHeartbeat, 1, { groupId: GROUP, memberId, memberEpoch, rackId: null, subscribedTopicNames });
    let epoch = 0;
    for (let i = 0; i < 300; i++) {
      const r = await heartbeat(epoch, epoch === 0 ? ['rq'] : null);
      if (r.errorCode === ErrorCode.NONE) {
        epoch = r.memberEpoch;
        if (r.assignment?.topicPartitions.some((t) => t.partitions.includes(0))) return;
      }
      await new Promise((res) => setTimeout(res, 50));
    }
    throw new Error('never assigned');
  };

  const summary = async (topicId: string): Promise<StateSummary> => {
    for (let i = 0; ; i++) {
      const s = await broker.running.broker.sharePersister.readSummary({ groupId: GROUP, topicId, partition: 0 }, 0);
      if (s.errorCode === ErrorCode.NONE || i > 200) return s;
      await new Promise((res) => setTimeout(res, 50));
    }
  };

  it('a member joining again after a restart gets the partition, whose state stays as it was', async () => {
    const created = await broker.running.broker.controller.createTopic({ name: 'rq', numPartitions: 1, replicationFactor: 1, assignments: [], configs: {} }, false);
    const topicId = created.topic!.id;
    await joinUntilAssigned();
    expect(await summary(topicId)).to.deep.include({ errorCode: ErrorCode.NONE, stateEpoch: 1, startOffset: -1n });
    // What a share-partition writes once it has started and records were acknowledged.
    const written = await broker.running.broker.sharePersister.write({ groupId: GROUP, topicId, partition: 0 },
      { stateEpoch: 1, leaderEpoch: 0, startOffset: 5n, deliveryCompleteCount: 0, stateBatches: [] });
    expect(written.errorCode).to.equal(ErrorCode.NONE);

    await broker.restart();
    await joinUntilAssigned();
    expect(await summary(topicId)).to.deep.include({ errorCode: ErrorCode.NONE, stateEpoch: 1, startOffset: 5n });
  });
});
