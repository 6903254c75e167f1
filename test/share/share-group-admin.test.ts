// The share-group admin APIs (DescribeShareGroupOffsets 90, AlterShareGroupOffsets 91,
// DeleteShareGroupOffsets 92) called as the router calls them, over an in-memory share coordinator
// and a group directory whose groups each test sets: Kafka 4.4's answers, errors and authorization.
import { expect } from 'chai';
import type { TopicRecord } from '../../src/cluster/metadata-store';
import { ErrorCode } from '../../src/common/errors';
import type { RequestContext } from '../../src/handlers/handler';
import { describeShareGroupOffsets } from '../../src/handlers/describe-share-group-offsets';
import { alterShareGroupOffsets } from '../../src/handlers/alter-share-group-offsets';
import { deleteShareGroupOffsets } from '../../src/handlers/delete-share-group-offsets';
import { ApiKey } from '../../src/protocol/generated';
import { ZERO_UUID } from '../../src/protocol/primitives';
import { AclOperation, ResourceType } from '../../src/security/acl';
import { ANONYMOUS, type Session } from '../../src/security/principal';
import type { ShareGroupLookup } from '../../src/group/share-membership';
import { ShareGroupAdmin } from '../../src/share/share-group-admin';
import type { Persister, PersisterError, SharePartitionKey, StateSummary } from '../../src/share-state/persister';
import { MemoryPersister } from '../helpers/memory-persister';
import { TestAuthorizer } from '../helpers/test-authorizer';

const ORDERS_ID = 'aa'.repeat(16);
const PAYMENTS_ID = 'bb'.repeat(16);
const GONE_ID = 'cc'.repeat(16);
const topicRecord = (name: string, id: string, partitions: number): TopicRecord => ({
  name, id, configs: {},
  partitions: Array.from({ length: partitions }, (_, index) => ({ index, leader: 1, leaderEpoch: 0, replicas: [1], isr: [1] })) as unknown as TopicRecord['partitions'],
});
const TOPICS = [topicRecord('orders', ORDERS_ID, 3), topicRecord('payments', PAYMENTS_ID, 1)];

/** The share coordinator as the admin uses it: the in-memory one, the calls asked, and a code every call answers instead while set. */
class ObservedPersister implements Pick<Persister, 'readSummary' | 'initialize' | 'delete'> {
  readonly calls: string[] = [];
  failWith: number | null = null;
  constructor(private readonly store: MemoryPersister) {}

  private failure(): PersisterError | null {
    return this.failWith === null ? null : { errorCode: this.failWith, errorMessage: null };
  }

  /** As the share coordinator answers: the stored epochs, and a key it never saw as not initialized. */
  async readSummary(key: SharePartitionKey): Promise<StateSummary> {
    this.calls.push(`readSummary ${key.partition}`);
    const failed = this.failure();
    if (failed) return { ...failed, stateEpoch: 0, leaderEpoch: 0, startOffset: -1n, deliveryCompleteCount: -1 };
    const state = this.store.state(key) ?? { stateEpoch: 0, leaderEpoch: 0, startOffset: -1n, deliveryCompleteCount: -1 };
    const { stateEpoch, leaderEpoch, startOffset, deliveryCompleteCount } = state;
    return { errorCode: ErrorCode.NONE, errorMessage: null, stateEpoch, leaderEpoch, startOffset, deliveryCompleteCount };
  }

  async initialize(key: SharePartitionKey, stateEpoch: number, startOffset: bigint): Promise<PersisterError> {
    this.calls.push(`initialize ${key.partition} epoch ${stateEpoch}`);
    return this.failure() ?? this.store.initialize(key, stateEpoch, startOffset);
  }

  async delete(key: SharePartitionKey): Promise<PersisterError> {
    this.calls.push(`delete ${key.partition}`);
    return this.failure() ?? this.store.delete(key);
  }
}

interface FakeShareGroup { members: number; statePartitions: Map<string, number[]> }

describe('share: admin APIs 90-92 (describe, alter, delete share group offsets)', () => {
  let store: MemoryPersister;
  let persister: ObservedPersister;
  let groups: Map<string, FakeShareGroup | 'consumer' | 'elsewhere'>;
  let endOffsets: Map<string, bigint>;
  let resets: string[];
  let shareVersion: number;
  const authorizer = new TestAuthorizer();
  const session: Session = { principal: ANONYMOUS, clientAddress: '127.0.0.1', listenerName: 'PLAINTEXT', securityProtocol: 'PLAINTEXT' };
  const ctx = (apiKey: ApiKey, apiVersion: number) => ({
    apiKey, apiVersion, session,
    authorize: (op: AclOperation, type: ResourceType, name: string) => authorizer.authorize(session, op, type, name),
    authorizeByResourceType: () => true,
  }) as unknown as RequestContext;

  const admin = () => new ShareGroupAdmin({
    persister,
    controller: { topic: (name) => TOPICS.find((t) => t.name === name), topicById: (id) => TOPICS.find((t) => t.id === id) },
    endOffsets: {
      latestOffset: async (topic, partition) => {
        const end = endOffsets.get(`${topic}-${partition}`);
        return end === undefined ? { errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER, offset: -1n } : { errorCode: ErrorCode.NONE, offset: end };
      },
    },
    sharePartitions: { reset: (k: SharePartitionKey) => void resets.push(`${k.groupId} ${TOPICS.find((t) => t.id === k.topicId)?.name} ${k.partition}`) },
    groups: {
      shareGroup: (groupId): ShareGroupLookup => {
        const g = groups.get(groupId);
        if (g === undefined) return { found: 'none' };
        if (g === 'consumer') return { found: 'other-type' };
        if (g === 'elsewhere') return { found: 'error', errorCode: ErrorCode.NOT_COORDINATOR };
        return { found: 'share', memberCount: g.members, statePartitions: g.statePartitions };
      },
      markInitialized: async (groupId, topics) => {
        let g = groups.get(groupId);
        if (g === undefined) groups.set(groupId, (g = { members: 0, statePartitions: new Map() }));
        if (typeof g === 'string') throw new Error('not a share group here');
        for (const t of topics) g.statePartitions.set(t.topicId, [...new Set([...g.statePartitions.get(t.topicId) ?? [], ...t.partitions])].sort());
      },
      forgetTopics: async (groupId, topicIds) => {
        const g = groups.get(groupId);
        if (g && typeof g !== 'string') for (const id of topicIds) g.statePartitions.delete(id);
      },
    },
  });
  const services = () => ({ shareVersion: () => shareVersion, controller: { topic: (name: string) => TOPICS.find((t) => t.name === name) }, shareGroupAdmin: admin() });
  const describe90 = (groupsAsked: { groupId: string; topics: { topicName: string; partitions: number[] }[] | null }[], version = 1) =>
    describeShareGroupOffsets.bind(services()).handle({ groups: groupsAsked }, ctx(ApiKey.DescribeShareGroupOffsets, version));
  const alter91 = (groupId: string, topics: { topicName: string; partitions: { partitionIndex: number; startOffset: bigint }[] }[]) =>
    alterShareGroupOffsets.bind(services()).handle({ groupId, topics }, ctx(ApiKey.AlterShareGroupOffsets, 0));
  const delete92 = (groupId: string, topicNames: string[]) =>
    deleteShareGroupOffsets.bind(services()).handle({ groupId, topics: topicNames.map((topicName) => ({ topicName })) }, ctx(ApiKey.DeleteShareGroupOffsets, 0));

  beforeEach(() => {
    store = new MemoryPersister();
    persister = new ObservedPersister(store);
    groups = new Map();
    endOffsets = new Map([['orders-0', 100n], ['orders-1', 50n], ['orders-2', 7n], ['payments-0', 10n]]);
    resets = [];
    shareVersion = 1;
    authorizer.reset();
  });

  describe('DescribeShareGroupOffsets', () => {
    it('answers start offset, leader epoch and lag (end - start - delivery complete) of the partitions named; -1 where there is no state', async () => {
      await store.initialize({ groupId: 'g', topicId: ORDERS_ID, partition: 0 }, 0, 40n);
      await store.read({ groupId: 'g', topicId: ORDERS_ID, partition: 0 }, 3);
      await store.write({ groupId: 'g', topicId: ORDERS_ID, partition: 0 }, { stateEpoch: 0, leaderEpoch: 3, startOffset: 40n, deliveryCompleteCount: 5, stateBatches: [] });
      const res = await describe90([{ groupId: 'g', topics: [{ topicName: 'orders', partitions: [0, 1] }, { topicName: 'nope', partitions: [0] }] }]);
      expect(res!.groups).to.deep.equal([{
        groupId: 'g', errorCode: ErrorCode.NONE, errorMessage: null, topics: [
          { topicName: 'orders', topicId: ORDERS_ID, partitions: [
            { partitionIndex: 0, startOffset: 40n, leaderEpoch: 3, lag: 55n, errorCode: 0, errorMessage: null },
            { partitionIndex: 1, startOffset: -1n, leaderEpoch: 0, lag: -1n, errorCode: 0, errorMessage: null },
          ] },
          { topicName: 'nope', topicId: ZERO_UUID, partitions: [{ partitionIndex: 0, startOffset: -1n, leaderEpoch: 0, lag: -1n, errorCode: 0, errorMessage: null }] },
        ],
      }]);
    });

    it('with no topics describes every partition the group has state for, leaving out deleted topics; the end offset\'s error is the partition\'s', async () => {
      groups.set('g', { members: 2, statePartitions: new Map([[ORDERS_ID, [1]], [GONE_ID, [0]], [PAYMENTS_ID, [0]]]) });
      await store.initialize({ groupId: 'g', topicId: ORDERS_ID, partition: 1 }, 1, 20n);
      await store.initialize({ groupId: 'g', topicId: PAYMENTS_ID, partition: 0 }, 1, 2n);
      endOffsets.delete('payments-0');
      const res = await describe90([{ groupId: 'g', topics: null }, { groupId: 'unknown', topics: null }]);
      expect(res!.groups.map((g) => ({ groupId: g.groupId, errorCode: g.errorCode, topics: g.topics.map((t) => ({ name: t.topicName, p: t.partitions })) }))).to.deep.equal([
        { groupId: 'g', errorCode: 0, topics: [
          { name: 'orders', p: [{ partitionIndex: 1, startOffset: 20n, leaderEpoch: -1, lag: 30n, errorCode: 0, errorMessage: null }] },
          { name: 'payments', p: [{ partitionIndex: 0, startOffset: 0n, leaderEpoch: 0, lag: -1n, errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER, errorMessage: 'For requests intended only for the leader, this error indicates that the broker is not the current leader. For requests intended for any replica, this error indicates that the broker is not a replica of the topic partition.' }] },
        ] },
        { groupId: 'unknown', errorCode: 0, topics: [] },
      ]);
    });

    it('authorizes GROUP DESCRIBE per group and TOPIC DESCRIBE per topic: named topics refused come last, unnamed ones are left out', async () => {
      groups.set('g', { members: 0, statePartitions: new Map([[ORDERS_ID, [0]], [PAYMENTS_ID, [0]]]) });
      authorizer.deny(AclOperation.DESCRIBE, ResourceType.GROUP, 'secret').deny(AclOperation.DESCRIBE, ResourceType.TOPIC, 'orders');
      const res = await describe90([
        { groupId: 'secret', topics: null },
        { groupId: 'g', topics: [{ topicName: 'orders', partitions: [0] }, { topicName: 'payments', partitions: [0] }] },
        { groupId: 'g', topics: null },
      ]);
      expect(res!.groups[0]).to.deep.equal({ groupId: 'secret', topics: [], errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED, errorMessage: null });
      expect(res!.groups[1].topics.map((t) => [t.topicName, t.partitions[0].errorCode, t.partitions[0].errorMessage])).to.deep.equal([
        ['payments', 0, null], ['orders', ErrorCode.TOPIC_AUTHORIZATION_FAILED, 'Topic authorization failed.'],
      ]);
      expect(res!.groups[2].topics.map((t) => t.topicName)).to.deep.equal(['payments']);
    });

    it('answers the coordinator\'s error for all topics of a group it does not serve (NOT_COORDINATOR)', async () => {
      groups.set('g', 'elsewhere');
      expect((await describe90([{ groupId: 'g', topics: null }]))!.groups).to.deep.equal([
        { groupId: 'g', topics: [], errorCode: ErrorCode.NOT_COORDINATOR, errorMessage: 'This is not the correct coordinator.' },
      ]);
      expect((await delete92('g', ['orders']))!.errorCode).to.equal(ErrorCode.NOT_COORDINATOR);
    });

    it('answers UNSUPPORTED_VERSION per group while share.version is not finalized, and no topics for an empty list', async () => {
      expect((await describe90([{ groupId: 'g', topics: [] }]))!.groups).to.deep.equal([{ groupId: 'g', topics: [], errorCode: 0, errorMessage: null }]);
      shareVersion = 0;
      expect((await describe90([{ groupId: 'g', topics: null }]))!.groups[0].errorCode).to.equal(ErrorCode.UNSUPPORTED_VERSION);
      expect(persister.calls).to.deep.equal([]);
    });
  });

  describe('AlterShareGroupOffsets', () => {
    it('initializes the partitions at a state epoch above the stored one, resets their share-partitions and records them as the group\'s state', async () => {
      groups.set('g', { members: 0, statePartitions: new Map() });
      await store.initialize({ groupId: 'g', topicId: ORDERS_ID, partition: 0 }, 4, 10n);
      const res = await alter91('g', [{ topicName: 'orders', partitions: [{ partitionIndex: 0, startOffset: 30n }, { partitionIndex: 2, startOffset: 5n }, { partitionIndex: 3, startOffset: 0n }] }]);
      expect(res).to.deep.equal({
        throttleTimeMs: 0, errorCode: 0, errorMessage: null, responses: [{ topicName: 'orders', topicId: ORDERS_ID, partitions: [
          { partitionIndex: 0, errorCode: 0, errorMessage: null },
          { partitionIndex: 2, errorCode: 0, errorMessage: null },
          { partitionIndex: 3, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: 'This server does not host this topic-partition.' },
        ] }],
      });
      expect(persister.calls.filter((c) => c.startsWith('initialize')).sort()).to.deep.equal(['initialize 0 epoch 5', 'initialize 2 epoch 1']);
      expect(store.state({ groupId: 'g', topicId: ORDERS_ID, partition: 0 })).to.include({ stateEpoch: 5, startOffset: 30n });
      expect(store.state({ groupId: 'g', topicId: ORDERS_ID, partition: 2 })).to.include({ stateEpoch: 1, startOffset: 5n });
      expect(resets.sort()).to.deep.equal(['g orders 0', 'g orders 2']);
      expect((groups.get('g') as FakeShareGroup).statePartitions.get(ORDERS_ID)).to.deep.equal([0, 2]);
    });

    it('alters a group that does not exist yet (Kafka creates it); an unknown topic is UNKNOWN_TOPIC_OR_PARTITION per partition', async () => {
      const res = await alter91('fresh', [{ topicName: 'nope', partitions: [{ partitionIndex: 0, startOffset: 1n }] }, { topicName: 'payments', partitions: [{ partitionIndex: 0, startOffset: 3n }] }]);
      expect(res!.errorCode).to.equal(0);
      expect(res!.responses.map((t) => [t.topicName, t.topicId, t.partitions.map((p) => p.errorCode)])).to.deep.equal([
        ['nope', ZERO_UUID, [ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]], ['payments', PAYMENTS_ID, [0]],
      ]);
      expect((groups.get('fresh') as FakeShareGroup).statePartitions.get(PAYMENTS_ID)).to.deep.equal([0]);
    });

    it('refuses a group with members (NON_EMPTY_GROUP), one of another type (GROUP_ID_NOT_FOUND) and an empty id, changing nothing', async () => {
      groups.set('busy', { members: 1, statePartitions: new Map() }).set('classic', 'consumer');
      const topics = [{ topicName: 'orders', partitions: [{ partitionIndex: 0, startOffset: 0n }] }];
      expect(await alter91('busy', topics)).to.deep.equal({ throttleTimeMs: 0, errorCode: ErrorCode.NON_EMPTY_GROUP, errorMessage: 'The group is not empty.', responses: [] });
      expect(await alter91('classic', topics)).to.deep.equal({ throttleTimeMs: 0, errorCode: ErrorCode.GROUP_ID_NOT_FOUND, errorMessage: 'Group classic is not a share group.', responses: [] });
      expect((await alter91('', topics))!.errorCode).to.equal(ErrorCode.INVALID_GROUP_ID);
      expect(persister.calls).to.deep.equal([]);
    });

    it('authorizes GROUP READ, then TOPIC READ per topic (refused topics answered first); the share coordinator\'s error is the partition\'s', async () => {
      authorizer.deny(AclOperation.READ, ResourceType.GROUP, 'secret').deny(AclOperation.READ, ResourceType.TOPIC, 'payments');
      const topics = [{ topicName: 'orders', partitions: [{ partitionIndex: 1, startOffset: 0n }] }, { topicName: 'payments', partitions: [{ partitionIndex: 0, startOffset: 0n }] }];
      expect(await alter91('secret', topics)).to.deep.equal({ throttleTimeMs: 0, errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED, errorMessage: 'Group authorization failed.', responses: [] });
      persister.failWith = ErrorCode.COORDINATOR_NOT_AVAILABLE;
      const res = await alter91('g', topics);
      expect(res!.responses.map((t) => [t.topicName, t.partitions[0].errorCode])).to.deep.equal([
        ['payments', ErrorCode.TOPIC_AUTHORIZATION_FAILED], ['orders', ErrorCode.COORDINATOR_NOT_AVAILABLE],
      ]);
      expect(resets).to.deep.equal([]);
      expect(groups.has('g')).to.equal(false);
    });
  });

  describe('DeleteShareGroupOffsets', () => {
    it('deletes the state of whole topics, forgets them in the group and resets their share-partitions', async () => {
      groups.set('g', { members: 0, statePartitions: new Map([[ORDERS_ID, [0, 2]], [PAYMENTS_ID, [0]]]) });
      for (const partition of [0, 2]) await store.initialize({ groupId: 'g', topicId: ORDERS_ID, partition }, 0, 1n);
      const res = await delete92('g', ['nope', 'orders', 'payments']);
      expect(res).to.deep.equal({
        throttleTimeMs: 0, errorCode: 0, errorMessage: null, responses: [
          { topicName: 'orders', topicId: ORDERS_ID, errorCode: 0, errorMessage: null },
          { topicName: 'payments', topicId: PAYMENTS_ID, errorCode: 0, errorMessage: null },
          { topicName: 'nope', topicId: ZERO_UUID, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: 'This server does not host this topic-partition.' },
        ],
      });
      expect([0, 2].map((partition) => store.state({ groupId: 'g', topicId: ORDERS_ID, partition }))).to.deep.equal([undefined, undefined]);
      expect([...(groups.get('g') as FakeShareGroup).statePartitions.keys()]).to.deep.equal([]);
      expect(resets.sort()).to.deep.equal(['g orders 0', 'g orders 2', 'g payments 0']);
      // Nothing left to delete now.
      expect((await delete92('g', ['orders']))!.responses).to.deep.equal([
        { topicName: 'orders', topicId: ZERO_UUID, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: 'There is no offset information to delete.' },
      ]);
    });

    it('answers group errors with no topics: unknown group, another type, members, GROUP DELETE refused', async () => {
      groups.set('busy', { members: 3, statePartitions: new Map([[ORDERS_ID, [0]]]) }).set('classic', 'consumer');
      authorizer.deny(AclOperation.DELETE, ResourceType.GROUP, 'secret');
      const answers = await Promise.all(['missing', 'classic', 'busy', 'secret'].map((g) => delete92(g, ['orders'])));
      expect(answers.map((r) => [r!.errorCode, r!.errorMessage, r!.responses.length])).to.deep.equal([
        [ErrorCode.GROUP_ID_NOT_FOUND, 'Group missing not found.', 0],
        [ErrorCode.GROUP_ID_NOT_FOUND, 'Group classic is not a share group.', 0],
        [ErrorCode.NON_EMPTY_GROUP, 'The group is not empty.', 0],
        [ErrorCode.GROUP_AUTHORIZATION_FAILED, 'Group authorization failed.', 0],
      ]);
      expect(persister.calls).to.deep.equal([]);
    });

    it('answers a topic the principal may not READ first, and the share coordinator\'s error per topic, keeping that topic', async () => {
      groups.set('g', { members: 0, statePartitions: new Map([[ORDERS_ID, [0]]]) });
      authorizer.deny(AclOperation.READ, ResourceType.TOPIC, 'payments');
      persister.failWith = ErrorCode.COORDINATOR_LOAD_IN_PROGRESS;
      const res = await delete92('g', ['orders', 'payments']);
      expect(res!.responses.map((t) => [t.topicName, t.errorCode])).to.deep.equal([
        ['payments', ErrorCode.TOPIC_AUTHORIZATION_FAILED], ['orders', ErrorCode.COORDINATOR_LOAD_IN_PROGRESS],
      ]);
      expect((groups.get('g') as FakeShareGroup).statePartitions.has(ORDERS_ID)).to.equal(true);
    });
  });

  it('deleteGroupState deletes the partitions DeleteGroups names, and answers the share coordinator\'s error', async () => {
    for (const partition of [0, 1]) await store.initialize({ groupId: 'g', topicId: ORDERS_ID, partition }, 0, 0n);
    expect(await admin().deleteGroupState('g', [{ topicId: ORDERS_ID, partitions: [0, 1] }])).to.equal(ErrorCode.NONE);
    expect([0, 1].map((partition) => store.state({ groupId: 'g', topicId: ORDERS_ID, partition }))).to.deep.equal([undefined, undefined]);
    expect(resets.sort()).to.deep.equal(['g orders 0', 'g orders 1']);
    persister.failWith = ErrorCode.NOT_COORDINATOR;
    expect(await admin().deleteGroupState('g', [{ topicId: ORDERS_ID, partitions: [0] }])).to.equal(ErrorCode.NOT_COORDINATOR);
  });
});
