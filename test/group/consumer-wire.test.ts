// Consumer groups (KIP-848) on the wire, through RawClient against a real broker: two members on
// two connections heartbeating as the Java consumer does (ConsumerGroupHeartbeat v1, their own
// member ids), the second getting its partitions once the first has revoked them; then
// ConsumerGroupDescribe, ListGroups v5, commits and fetches at the member epoch, and leaving.
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { startBroker, type RunningBroker } from '../../src/broker';
import { ApiKey } from '../../src/protocol/generated';
import type { ApiVersionsResponse } from '../../src/protocol/generated/ApiVersionsResponse';
import type { ConsumerGroupHeartbeatResponse } from '../../src/protocol/generated/ConsumerGroupHeartbeatResponse';
import type { ConsumerGroupDescribeResponse } from '../../src/protocol/generated/ConsumerGroupDescribeResponse';
import type { DescribeGroupsResponse } from '../../src/protocol/generated/DescribeGroupsResponse';
import type { FindCoordinatorResponse } from '../../src/protocol/generated/FindCoordinatorResponse';
import type { ListGroupsResponse } from '../../src/protocol/generated/ListGroupsResponse';
import type { OffsetCommitResponse } from '../../src/protocol/generated/OffsetCommitResponse';
import type { OffsetFetchResponse } from '../../src/protocol/generated/OffsetFetchResponse';
import { ErrorCode } from '../../src/common/errors';
import { allowAllRequest } from '../helpers/request-context';
import { consumerGroupHeartbeat } from '../../src/handlers/consumer-group-heartbeat';
import { consumerGroupDescribe } from '../../src/handlers/consumer-group-describe';
import { BrokerConfig } from '../../src/config/broker-config';
import { RawClient } from '../helpers/raw-client';
import { withBroker } from '../helpers/broker';

const GROUP = 'kip848';

/** FindCoordinator until the group's partition of __consumer_offsets is loaded. */
async function waitForCoordinator(c: RawClient): Promise<void> {
  for (let i = 0; ; i++) {
    const res = await c.request<FindCoordinatorResponse>(ApiKey.FindCoordinator, 3, { key: GROUP, keyType: 0, coordinatorKeys: [] });
    if (res.errorCode === ErrorCode.NONE) return;
    if (i > 200) throw new Error('coordinator never became available');
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A member as the Java consumer drives one: its own id, the partitions it owns reported on every heartbeat. */
class WireMember {
  readonly memberId = randomUUID();
  epoch = 0;
  owned: { topicId: string; partitions: number[] }[] = [];

  constructor(public conn: RawClient) {}

  async heartbeat(joining = false): Promise<ConsumerGroupHeartbeatResponse> {
    const res = await this.conn.request<ConsumerGroupHeartbeatResponse>(ApiKey.ConsumerGroupHeartbeat, 1, {
      groupId: GROUP, memberId: this.memberId, memberEpoch: joining ? 0 : this.epoch, instanceId: null, rackId: null,
      rebalanceTimeoutMs: joining ? 30_000 : -1, subscribedTopicNames: joining ? ['cw'] : null, subscribedTopicRegex: null,
      serverAssignor: null, topicPartitions: joining ? [] : this.owned,
    });
    expect(res.errorCode, `${res.errorCode} ${res.errorMessage}`).to.equal(ErrorCode.NONE);
    this.epoch = res.memberEpoch;
    if (res.assignment) this.owned = res.assignment.topicPartitions;
    return res;
  }

  count(): number {
    return this.owned.reduce((n, t) => n + t.partitions.length, 0);
  }
}

describe('consumer groups on the wire', function () {
  this.timeout(30000);
  const broker = withBroker({ logLevel: process.env.FJORD_TEST_LOG ?? 'silent', config: { 'offsets.topic.num.partitions': '3', 'group.consumer.assignment.interval.ms': '0' } });
  let c1: RawClient;
  let c2: RawClient;

  before(async () => {
    const running = broker.current();
    await running.broker.controller.createTopic({ name: 'cw', numPartitions: 4, replicationFactor: 1, assignments: [], configs: {} }, false);
    c1 = await RawClient.connect(running.port);
    c2 = await RawClient.connect(running.port);
    await waitForCoordinator(c1);
  });
  after(() => {
    c1?.close();
    c2?.close();
  });

  it('advertises ConsumerGroupHeartbeat 0-1 and ConsumerGroupDescribe 0-1', async () => {
    const res = await c1.request<ApiVersionsResponse>(ApiKey.ApiVersions, 3, { clientSoftwareName: 't', clientSoftwareVersion: '1' });
    const range = (k: number) => res.apiKeys.find((a) => a.apiKey === k);
    expect([68, 69].map((k) => [k, range(k)?.minVersion, range(k)?.maxVersion])).to.deep.equal([[68, 0, 1], [69, 0, 1]]);
  });

  it('answers UNSUPPORTED_VERSION while group.version is 0 or group.coordinator.rebalance.protocols lacks consumer, as Kafka', async () => {
    const ctx = (apiKey: number) => ({
      apiKey, apiVersion: 1, correlationId: 1, clientId: 'c', peer: '127.0.0.1:1', ...allowAllRequest, responseBuffer: Buffer.alloc, closeConnection: () => undefined, onConnectionClose: () => () => undefined,
    });
    const { broker: b } = broker.current();
    const heartbeat = { groupId: GROUP, memberId: 'm', memberEpoch: 0, rebalanceTimeoutMs: 1000, subscribedTopicNames: [], topicPartitions: [] };
    const classicOnly = new BrokerConfig({ 'group.coordinator.rebalance.protocols': 'classic' });
    for (const services of [{ groups: b.groups, config: b.config, groupVersion: () => 0 }, { groups: b.groups, config: classicOnly, groupVersion: () => 1 }]) {
      expect(await consumerGroupHeartbeat.bind(services).handle(heartbeat, ctx(68))).to.include({ errorCode: ErrorCode.UNSUPPORTED_VERSION });
      const described = await consumerGroupDescribe.bind(services).handle({ groupIds: [GROUP, 'x'], includeAuthorizedOperations: false }, ctx(69));
      expect(described!.groups.map((g) => [g.groupId, g.errorCode])).to.deep.equal([[GROUP, ErrorCode.UNSUPPORTED_VERSION], ['x', ErrorCode.UNSUPPORTED_VERSION]]);
    }
    expect((await consumerGroupDescribe.bind({ groups: b.groups, config: b.config, groupVersion: () => 1 })
      .handle({ groupIds: ['x'], includeAuthorizedOperations: false }, ctx(69)))!.groups[0].errorCode).to.equal(ErrorCode.GROUP_ID_NOT_FOUND);
    expect(() => new BrokerConfig({ 'group.coordinator.rebalance.protocols': 'consumer' })).to.throw('Disabling the \'classic\' protocol is not supported.');
    expect(() => new BrokerConfig({ 'group.coordinator.rebalance.protocols': 'classic,cooperative' })).to.throw('String must be one of');
  });

  it('two members share the topic; a partition moves only after its owner revoked it', async () => {
    const a = new WireMember(c1);
    const b = new WireMember(c2);
    const first = await a.heartbeat(true);
    expect(first).to.include({ memberId: a.memberId, memberEpoch: 1, heartbeatIntervalMs: 5000 });
    expect(a.count()).to.equal(4);
    await b.heartbeat(true);
    expect(b.epoch).to.equal(2);
    expect(b.count()).to.equal(0);
    for (let round = 0; round < 4; round++) {
      await a.heartbeat();
      await b.heartbeat();
      const owned = [...a.owned, ...b.owned].flatMap((t) => t.partitions);
      expect(new Set(owned).size, 'a partition owned twice').to.equal(owned.length);
    }
    expect([a.count(), b.count()]).to.deep.equal([2, 2]);
    expect([a.epoch, b.epoch]).to.deep.equal([2, 2]);

    const described = await c1.request<ConsumerGroupDescribeResponse>(ApiKey.ConsumerGroupDescribe, 1, { groupIds: [GROUP, 'nope'], includeAuthorizedOperations: false });
    const [g, missing] = described.groups;
    expect(g).to.include({ errorCode: 0, groupState: 'Stable', groupEpoch: 2, assignmentEpoch: 2, assignorName: 'uniform' });
    expect(g.members.map((m) => [m.memberId, m.memberEpoch, m.memberType, m.subscribedTopicNames.join()]).sort())
      .to.deep.equal([[a.memberId, 2, 1, 'cw'], [b.memberId, 2, 1, 'cw']].sort());
    expect(g.members.every((m) => m.assignment.topicPartitions[0].topicName === 'cw')).to.equal(true);
    expect(missing).to.include({ errorCode: ErrorCode.GROUP_ID_NOT_FOUND, errorMessage: 'Group nope not found.' });

    // DescribeGroups knows classic groups only: v6 says so, older versions answer Dead.
    const classicView = async (v: number) => (await c1.request<DescribeGroupsResponse>(ApiKey.DescribeGroups, v, { groups: [GROUP, 'nope'], includeAuthorizedOperations: false }))
      .groups.map((x) => [x.errorCode, x.errorMessage ?? null, x.groupState]);
    expect(await classicView(6)).to.deep.equal([
      [ErrorCode.GROUP_ID_NOT_FOUND, `Group ${GROUP} is not a classic group.`, 'Dead'], [ErrorCode.GROUP_ID_NOT_FOUND, 'Group nope not found.', 'Dead'],
    ]);
    expect(await classicView(5)).to.deep.equal([[0, null, 'Dead'], [0, null, 'Dead']]);

    const listed = await c1.request<ListGroupsResponse>(ApiKey.ListGroups, 5, { statesFilter: [], typesFilter: ['consumer'] });
    expect(listed.groups.map((x) => [x.groupId, x.groupType, x.groupState, x.protocolType])).to.deep.equal([[GROUP, 'consumer', 'Stable', 'consumer']]);

    // Commits at the member epoch (OffsetCommit v9: generationIdOrMemberEpoch), fetched at it (OffsetFetch v9).
    const commit = (epoch: number) => c1.request<OffsetCommitResponse>(ApiKey.OffsetCommit, 9, {
      groupId: GROUP, generationIdOrMemberEpoch: epoch, memberId: a.memberId, groupInstanceId: null,
      topics: [{ name: 'cw', partitions: [{ partitionIndex: 0, committedOffset: 7n, committedLeaderEpoch: -1, committedMetadata: '' }] }],
    });
    // (An epoch it never had is stale; test/group/consumer-groups.test.ts has older epochs, partition by partition.)
    expect((await commit(3)).topics[0].partitions[0].errorCode).to.equal(ErrorCode.STALE_MEMBER_EPOCH);
    expect((await commit(2)).topics[0].partitions[0].errorCode).to.equal(ErrorCode.NONE);
    const fetch = (epoch: number) => c1.request<OffsetFetchResponse>(ApiKey.OffsetFetch, 9, {
      groupId: '', topics: [], requireStable: true,
      groups: [{ groupId: GROUP, memberId: a.memberId, memberEpoch: epoch, topics: [{ name: 'cw', partitionIndexes: [0] }] }],
    });
    expect((await fetch(1)).groups[0].errorCode).to.equal(ErrorCode.STALE_MEMBER_EPOCH);
    expect((await fetch(2)).groups[0].topics[0].partitions[0].committedOffset).to.equal(7n);

    // b leaves; a ends up with everything.
    const left = await c2.request<ConsumerGroupHeartbeatResponse>(ApiKey.ConsumerGroupHeartbeat, 1, {
      groupId: GROUP, memberId: b.memberId, memberEpoch: -1, instanceId: null, rackId: null, rebalanceTimeoutMs: -1,
      subscribedTopicNames: null, subscribedTopicRegex: null, serverAssignor: null, topicPartitions: null,
    });
    expect(left).to.include({ errorCode: 0, memberEpoch: -1 });
    await a.heartbeat();
    expect(a.count()).to.equal(4);
  });
});

describe('consumer groups across a restart', function () {
  this.timeout(60000);
  let dataDir: string;
  let running: RunningBroker | undefined;
  before(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'fjord-consumer-group-restart-'));
  });
  after(async () => {
    await running?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  const start = async (): Promise<RawClient> => {
    running = await startBroker({ dataDir, logLevel: 'silent', config: { 'offsets.topic.num.partitions': '3', 'group.consumer.assignment.interval.ms': '0' } });
    const c = await RawClient.connect(running.port);
    await waitForCoordinator(c);
    return c;
  };

  it('reads the group back from __consumer_offsets: members go on at their epochs with their partitions, without a rebalance', async () => {
    let c = await start();
    await running!.broker.controller.createTopic({ name: 'cw', numPartitions: 4, replicationFactor: 1, assignments: [], configs: {} }, false);
    const a = new WireMember(c);
    const b = new WireMember(c);
    await a.heartbeat(true);
    await b.heartbeat(true);
    for (let round = 0; round < 4; round++) {
      await a.heartbeat();
      await b.heartbeat();
    }
    const before = (await c.request<ConsumerGroupDescribeResponse>(ApiKey.ConsumerGroupDescribe, 1, { groupIds: [GROUP], includeAuthorizedOperations: false })).groups[0];
    expect(before).to.include({ groupState: 'Stable', groupEpoch: 2 });
    c.close();
    await running!.close();
    running = undefined;

    c = await start();
    a.conn = c;
    b.conn = c;
    const after = (await c.request<ConsumerGroupDescribeResponse>(ApiKey.ConsumerGroupDescribe, 1, { groupIds: [GROUP], includeAuthorizedOperations: false })).groups[0];
    expect(after).to.deep.equal(before);
    const ra = await a.heartbeat();
    expect(ra).to.include({ errorCode: 0, memberEpoch: 2, assignment: null });
    await b.heartbeat();
    expect([a.count(), b.count()]).to.deep.equal([2, 2]);
    const again = (await c.request<ConsumerGroupDescribeResponse>(ApiKey.ConsumerGroupDescribe, 1, { groupIds: [GROUP], includeAuthorizedOperations: false })).groups[0];
    expect(again).to.include({ groupState: 'Stable', groupEpoch: 2, assignmentEpoch: 2 });
    c.close();
  });
});
