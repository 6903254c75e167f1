// Share groups on a cluster of three brokers (a real etcd): the group's coordinator is the leader of
// its __consumer_offsets partition, as for the other kinds of groups (FindCoordinator key type 0);
// it serves ShareGroupHeartbeat and ShareGroupDescribe, the others answer NOT_COORDINATOR.
import { randomUUID } from 'crypto';
import { expect } from 'chai';
import { startBroker, type RunningBroker } from '../../src/broker';
import { ErrorCode } from '../../src/common/errors';
import { ApiKey } from '../../src/protocol/generated';
import type { FindCoordinatorResponse } from '../../src/protocol/generated/FindCoordinatorResponse';
import type { ShareGroupDescribeResponse } from '../../src/protocol/generated/ShareGroupDescribeResponse';
import type { ShareGroupHeartbeatResponse } from '../../src/protocol/generated/ShareGroupHeartbeatResponse';
import { startEtcd, type RunningEtcd } from '../helpers/etcd';
import { RawClient } from '../helpers/raw-client';

const GROUP = 'cluster-queue';

describe('share groups on a cluster of three brokers', function () {
  this.timeout(60_000);
  let etcd: RunningEtcd;
  let brokers: RunningBroker[] = [];
  const clients: RawClient[] = [];

  before(async () => {
    etcd = await startEtcd();
    brokers = await Promise.all([0, 1, 2].map((nodeId) => startBroker({
      nodeId, logLevel: process.env.FJORD_TEST_LOG ?? 'silent',
      config: { 'etcd.connect': etcd.connect, 'offsets.topic.num.partitions': '3', 'group.share.assignment.interval.ms': '0' },
    })));
    const created = await brokers[0].broker.controller.createTopic({ name: 'cq', numPartitions: 2, replicationFactor: 3, assignments: [], configs: {} }, false);
    expect(created.errorCode).to.equal(ErrorCode.NONE);
    for (const b of brokers) clients.push(await RawClient.connect(b.port));
  });

  after(async () => {
    for (const c of clients) c.close();
    await Promise.all(brokers.map((b) => b.close()));
    await etcd?.stop();
  });

  const heartbeat = (c: RawClient, memberId: string, memberEpoch: number, subscribedTopicNames: string[] | null = null) =>
    c.request<ShareGroupHeartbeatResponse>(ApiKey.ShareGroupHeartbeat, 1, { groupId: GROUP, memberId, memberEpoch, rackId: null, subscribedTopicNames });

  it('the coordinator found for the group serves its members; the other brokers answer NOT_COORDINATOR', async () => {
    // The coordinator found may still be taking the partition over: find it again until it serves the join.
    const member = randomUUID();
    let coordinator = -1;
    let joined: ShareGroupHeartbeatResponse | undefined;
    for (let i = 0; joined?.errorCode !== ErrorCode.NONE; i++) {
      if (i > 200) throw new Error(`the group's coordinator never served it: ${JSON.stringify(joined)}`);
      if (i > 0) await new Promise((r) => setTimeout(r, 50));
      const res = await clients[0].request<FindCoordinatorResponse>(ApiKey.FindCoordinator, 4, { key: '', keyType: 0, coordinatorKeys: [GROUP] });
      if (res.coordinators![0].errorCode !== ErrorCode.NONE) continue;
      coordinator = res.coordinators![0].nodeId;
      joined = await heartbeat(clients[coordinator], member, 0, ['cq']);
    }
    expect(joined).to.deep.include({ memberId: member, memberEpoch: 1 });
    let partitions = joined.assignment?.topicPartitions.flatMap((t) => t.partitions) ?? [];
    let epoch = joined.memberEpoch;
    // Assigned once the share coordinator (its topic made on first use) initialized them.
    for (let i = 0; partitions.length < 2 && i < 300; i++) {
      await new Promise((r) => setTimeout(r, 50));
      const r = await heartbeat(clients[coordinator], member, epoch);
      epoch = r.memberEpoch;
      if (r.assignment) partitions = r.assignment.topicPartitions.flatMap((t) => t.partitions);
    }
    expect(partitions.sort()).to.deep.equal([0, 1]);
    for (const other of [0, 1, 2].filter((n) => n !== coordinator)) {
      expect((await heartbeat(clients[other], randomUUID(), 0, ['cq'])).errorCode).to.equal(ErrorCode.NOT_COORDINATOR);
      const described = await clients[other].request<ShareGroupDescribeResponse>(ApiKey.ShareGroupDescribe, 1, { groupIds: [GROUP], includeAuthorizedOperations: false });
      expect(described.groups[0].errorCode).to.equal(ErrorCode.NOT_COORDINATOR);
    }
    const described = await clients[coordinator].request<ShareGroupDescribeResponse>(ApiKey.ShareGroupDescribe, 1, { groupIds: [GROUP], includeAuthorizedOperations: false });
    expect(described.groups[0]).to.deep.include({ errorCode: ErrorCode.NONE, groupState: 'Stable' });
    expect(described.groups[0].members.map((m) => m.memberId)).to.deep.equal([member]);
  });
});
