// Share groups (KIP-932) on the wire, through RawClient against a real broker: the APIs advertised,
// two members joining (their first answer without partitions, the next one with the partitions they
// share), ShareGroupDescribe, ListGroups' share type, DescribeGroups, ConsumerGroupDescribe and
// OffsetFetch on a share group's id, DeleteGroups of a share group with members and once Empty, and
// UNSUPPORTED_VERSION while share.version is 0; with a share coordinator, the share-partitions
// initialized before they are assigned.
import { randomUUID } from 'crypto';
import { expect } from 'chai';
import { ApiKey } from '../../src/protocol/generated';
import type { ApiVersionsResponse } from '../../src/protocol/generated/ApiVersionsResponse';
import type { ConsumerGroupDescribeResponse } from '../../src/protocol/generated/ConsumerGroupDescribeResponse';
import type { DeleteGroupsResponse } from '../../src/protocol/generated/DeleteGroupsResponse';
import type { DescribeGroupsResponse } from '../../src/protocol/generated/DescribeGroupsResponse';
import type { FindCoordinatorResponse } from '../../src/protocol/generated/FindCoordinatorResponse';
import type { ListGroupsResponse } from '../../src/protocol/generated/ListGroupsResponse';
import type { OffsetFetchResponse } from '../../src/protocol/generated/OffsetFetchResponse';
import type { ShareGroupDescribeResponse } from '../../src/protocol/generated/ShareGroupDescribeResponse';
import type { ShareGroupHeartbeatResponse } from '../../src/protocol/generated/ShareGroupHeartbeatResponse';
import type { ShareFetchResponse } from '../../src/protocol/generated/ShareFetchResponse';
import type { ShareAcknowledgeResponse } from '../../src/protocol/generated/ShareAcknowledgeResponse';
import { ErrorCode } from '../../src/common/errors';
import { UpgradeType } from '../../src/cluster/features';
import { RawClient } from '../helpers/raw-client';
import { withBroker } from '../helpers/broker';
import { MemoryPersister } from '../helpers/memory-persister';

const GROUP = 'wire-queue';

describe('share groups on the wire', function () {
  this.timeout(30000);
  const broker = withBroker({
    logLevel: process.env.FJORD_TEST_LOG ?? 'silent',
    config: { 'offsets.topic.num.partitions': '3', 'group.share.assignment.interval.ms': '0' },
  });
  let c: RawClient;
  let topicId: string;

  before(async () => {
    const running = broker.current();
    const created = await running.broker.controller.createTopic({ name: 'sq', numPartitions: 2, replicationFactor: 1, assignments: [], configs: {} }, false);
    topicId = created.topic!.id;
    c = await RawClient.connect(running.port);
    for (let i = 0; ; i++) {
      const res = await c.request<FindCoordinatorResponse>(ApiKey.FindCoordinator, 3, { key: GROUP, keyType: 0, coordinatorKeys: [] });
      if (res.errorCode === ErrorCode.NONE) break;
      if (i > 200) throw new Error('coordinator never became available');
      await new Promise((r) => setTimeout(r, 50));
    }
  });
  after(() => c?.close());

  const heartbeat = (memberId: string, memberEpoch: number, subscribedTopicNames: string[] | null = null, groupId = GROUP) =>
    c.request<ShareGroupHeartbeatResponse>(ApiKey.ShareGroupHeartbeat, 1, { groupId, memberId, memberEpoch, rackId: null, subscribedTopicNames });
  const describe = (groupIds: string[]) =>
    c.request<ShareGroupDescribeResponse>(ApiKey.ShareGroupDescribe, 1, { groupIds, includeAuthorizedOperations: true });

  it('advertises ShareGroupHeartbeat 1 and ShareGroupDescribe 1', async () => {
    const res = await c.request<ApiVersionsResponse>(ApiKey.ApiVersions, 3, { clientSoftwareName: 't', clientSoftwareVersion: '1' });
    const range = (k: number) => res.apiKeys.find((a) => a.apiKey === k);
    expect([76, 77].map((k) => [k, range(k)?.minVersion, range(k)?.maxVersion])).to.deep.equal([[76, 1, 1], [77, 1, 1]]);
  });

  it('two members join, share both partitions, are described, listed and refused by the other kinds\' APIs; then leave and the group is deleted', async () => {
    const [a, b] = [randomUUID(), randomUUID()];
    const joined = await heartbeat(a, 0, ['sq']);
    expect(joined).to.deep.include({ errorCode: ErrorCode.NONE, errorMessage: null, memberId: a, memberEpoch: 1, heartbeatIntervalMs: 5000 });
    expect(joined.assignment).to.deep.equal({ topicPartitions: [] });
    const joinedB = await heartbeat(b, 0, ['sq']);
    expect(joinedB).to.deep.include({ errorCode: ErrorCode.NONE, memberEpoch: 2 });

    // The share-partitions are initialized at the share coordinator once the joins are answered (in
    // the background; its topic is made on first use): the heartbeats after that get them. Two
    // members, two partitions: one each, at the same epoch.
    const epochs = new Map([[a, joined.memberEpoch], [b, joinedB.memberEpoch]]);
    const assigned = new Map([[a, joined.assignment!.topicPartitions], [b, joinedB.assignment!.topicPartitions]]);
    const settled = () => [a, b].every((m) => assigned.get(m)!.length > 0) && epochs.get(a) === epochs.get(b);
    for (let round = 0; !settled() && round < 200; round++) {
      await new Promise((res) => setTimeout(res, 50));
      for (const m of [a, b]) {
        const r = await heartbeat(m, epochs.get(m)!);
        expect(r.errorCode).to.equal(ErrorCode.NONE);
        epochs.set(m, r.memberEpoch);
        if (r.assignment) assigned.set(m, r.assignment.topicPartitions);
      }
    }
    expect(epochs.get(a)).to.equal(epochs.get(b)).and.to.be.greaterThan(1);
    expect([a, b].map((m) => assigned.get(m)?.map((t) => [t.topicId, t.partitions.length]))).to.deep.equal([[[topicId, 1]], [[topicId, 1]]]);
    expect([a, b].flatMap((m) => assigned.get(m)!.flatMap((t) => t.partitions)).sort()).to.deep.equal([0, 1]);

    const d = (await describe([GROUP, 'nobody'])).groups;
    expect(d[0]).to.deep.include({ errorCode: ErrorCode.NONE, errorMessage: null, groupId: GROUP, groupState: 'Stable', assignorName: 'simple' });
    expect(d[0].authorizedOperations).to.be.greaterThan(0);
    expect(d[0].members.map((m) => m.memberId).sort()).to.deep.equal([a, b].sort());
    expect(d[0].members.every((m) => m.subscribedTopicNames.join() === 'sq' && m.clientHost.startsWith('/'))).to.equal(true);
    expect(d[0].members.flatMap((m) => m.assignment.topicPartitions.map((t) => [t.topicId, t.topicName, t.partitions.length]))).to.deep.equal([
      [topicId, 'sq', 1], [topicId, 'sq', 1],
    ]);
    expect(d[1]).to.deep.include({ errorCode: ErrorCode.GROUP_ID_NOT_FOUND, errorMessage: 'Group nobody not found.' });

    const listed = await c.request<ListGroupsResponse>(ApiKey.ListGroups, 5, { statesFilter: [], typesFilter: ['share'] });
    expect(listed.groups).to.deep.equal([{ groupId: GROUP, protocolType: 'share', groupState: 'Stable', groupType: 'share' }]);
    const classic = await c.request<DescribeGroupsResponse>(ApiKey.DescribeGroups, 6, { groups: [GROUP], includeAuthorizedOperations: false });
    expect(classic.groups[0]).to.deep.include({ errorCode: ErrorCode.GROUP_ID_NOT_FOUND, errorMessage: `Group ${GROUP} is not a classic group.` });
    const consumer = await c.request<ConsumerGroupDescribeResponse>(ApiKey.ConsumerGroupDescribe, 1, { groupIds: [GROUP], includeAuthorizedOperations: false });
    expect(consumer.groups[0]).to.deep.include({ errorCode: ErrorCode.GROUP_ID_NOT_FOUND, errorMessage: `Group ${GROUP} is not a consumer group.` });
    const offsets = await c.request<OffsetFetchResponse>(ApiKey.OffsetFetch, 9, {
      groups: [{ groupId: GROUP, memberId: null, memberEpoch: -1, topics: null }], requireStable: false,
    });
    expect(offsets.groups![0].errorCode).to.equal(ErrorCode.GROUP_ID_NOT_FOUND);

    const refused = await c.request<DeleteGroupsResponse>(ApiKey.DeleteGroups, 2, { groupsNames: [GROUP] });
    expect(refused.results[0].errorCode).to.equal(ErrorCode.NON_EMPTY_GROUP);
    for (const m of [a, b]) expect(await heartbeat(m, -1)).to.deep.include({ errorCode: ErrorCode.NONE, memberId: m, memberEpoch: -1, assignment: null });
    const emptyListed = await c.request<ListGroupsResponse>(ApiKey.ListGroups, 5, { statesFilter: ['Empty'], typesFilter: [] });
    expect(emptyListed.groups.map((g) => [g.groupId, g.groupState])).to.deep.include([GROUP, 'Empty']);
    const deleted = await c.request<DeleteGroupsResponse>(ApiKey.DeleteGroups, 2, { groupsNames: [GROUP] });
    expect(deleted.results[0].errorCode).to.equal(ErrorCode.NONE);
    expect((await describe([GROUP])).groups[0].errorCode).to.equal(ErrorCode.GROUP_ID_NOT_FOUND);
  });

  it('refuses a member id the client did not make (empty or longer than a UUID) with Kafka\'s message', async () => {
    for (const memberId of ['', 'x'.repeat(37)]) {
      expect(await heartbeat(memberId, 0, ['sq'])).to.deep.include({ errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'Invalid member id in the request.' });
    }
  });

  it('answers UNSUPPORTED_VERSION while share.version is 0, as Kafka', async () => {
    const features = broker.current().broker.features;
    const down = await features.update([{ feature: 'share.version', level: 0, upgradeType: UpgradeType.SAFE_DOWNGRADE }], false);
    expect(down.errorCode).to.equal(ErrorCode.NONE);
    try {
      expect((await heartbeat(randomUUID(), 0, ['sq'])).errorCode).to.equal(ErrorCode.UNSUPPORTED_VERSION);
      expect((await describe(['any'])).groups[0].errorCode).to.equal(ErrorCode.UNSUPPORTED_VERSION);
      const fetch = await c.request<ShareFetchResponse>(ApiKey.ShareFetch, 1, {
        groupId: GROUP, memberId: randomUUID(), shareSessionEpoch: 0, maxWaitMs: 0, minBytes: 1, maxBytes: 1 << 20, maxRecords: 10, batchSize: 10,
        topics: [], forgottenTopicsData: [],
      });
      expect(fetch.errorCode).to.equal(ErrorCode.UNSUPPORTED_VERSION);
      const ack = await c.request<ShareAcknowledgeResponse>(ApiKey.ShareAcknowledge, 1, { groupId: GROUP, memberId: randomUUID(), shareSessionEpoch: 1, topics: [] });
      expect(ack.errorCode).to.equal(ErrorCode.UNSUPPORTED_VERSION);
    } finally {
      await features.update([{ feature: 'share.version', level: 2, upgradeType: UpgradeType.UPGRADE }], false);
    }
    expect((await heartbeat(randomUUID(), 0, ['sq'], 'after-upgrade')).errorCode).to.equal(ErrorCode.NONE);
  });
});

describe('share groups on the wire with a share coordinator (an in-memory persister)', function () {
  this.timeout(30000);
  const persister = new MemoryPersister();
  const broker = withBroker(() => ({ sharePersister: persister, config: { 'offsets.topic.num.partitions': '1', 'group.share.assignment.interval.ms': '0' } }));

  it('initializes the subscribed share-partitions at the group epoch (start offset -1) before assigning them, not those with state', async () => {
    const running = broker.current();
    const topicId = (await running.broker.controller.createTopic({ name: 'sp', numPartitions: 2, replicationFactor: 1, assignments: [], configs: {} }, false)).topic!.id;
    // Partition 1 has state already (a restarted broker's group joining again): it keeps it.
    persister.setState({ groupId: 'persisted', topicId, partition: 1 }, { stateEpoch: 4, leaderEpoch: 0, startOffset: 7n, deliveryCompleteCount: 0, stateBatches: [] });
    const c = await RawClient.connect(running.port);
    try {
      const member = randomUUID();
      const heartbeat = (memberEpoch: number, subscribedTopicNames: string[] | null = null) => c.request<ShareGroupHeartbeatResponse>(ApiKey.ShareGroupHeartbeat, 1,
        { groupId: 'persisted', memberId: member, memberEpoch, rackId: null, subscribedTopicNames });
      let r = await heartbeat(0, ['sp']);
      for (let i = 0; r.errorCode === ErrorCode.COORDINATOR_LOAD_IN_PROGRESS && i < 200; i++) {
        await new Promise((res) => setTimeout(res, 50));
        r = await heartbeat(0, ['sp']);
      }
      expect(r).to.deep.include({ errorCode: ErrorCode.NONE, memberEpoch: 1 });
      let partitions: number[] = [];
      for (let i = 0; partitions.length < 2 && i < 100; i++) {
        await new Promise((res) => setTimeout(res, 20));
        r = await heartbeat(r.memberEpoch);
        if (r.assignment) partitions = r.assignment.topicPartitions.flatMap((t) => t.partitions);
      }
      expect(partitions.sort()).to.deep.equal([0, 1]);
      expect(persister.initializations).to.deep.equal([{ key: { groupId: 'persisted', topicId, partition: 0 }, stateEpoch: 1, startOffset: -1n }]);
      expect(persister.state({ groupId: 'persisted', topicId, partition: 1 })).to.deep.include({ stateEpoch: 4, startOffset: 7n });
    } finally {
      c.close();
    }
  });
});
