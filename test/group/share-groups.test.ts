// Share groups (KIP-932: src/group/share-membership.ts) on a fake clock with fake topics: joins
// (the first answer without partitions until their share state is initialized), member and group
// epochs, leaves, session expiry, subscription changes, members sharing partitions, the maximum
// size, the ids shared with the other kinds of groups, listing, describing and deleting; and the
// `simple` assignor's balance, sharing and stickiness.
import { expect } from 'chai';
import { ErrorCode } from '../../src/common/errors';
import type { TopicPartitions } from '../../src/group/consumer-member';
import { assignSharePartitions } from '../../src/group/share-assignor';
import type { ShareHeartbeatRequest, ShareHeartbeatResult } from '../../src/group/share-membership';
import { Harness, flush } from './fakes';

const G = 'queue';

function request(opts: Partial<ShareHeartbeatRequest>): ShareHeartbeatRequest {
  return { groupId: G, memberId: 'm', memberEpoch: 0, rackId: null, subscribedTopicNames: null, clientId: 'client', clientHost: '/127.0.0.1', ...opts };
}

/** A share consumer as the client behaves: it keeps its epoch and last assignment. */
class Member {
  epoch = 0;
  assignment: { topicId: string; partitions: number[] }[] = [];
  last: ShareHeartbeatResult | undefined;

  constructor(readonly h: Harness, readonly memberId: string, readonly groupId = G) {}

  join(topics: string[]): ShareHeartbeatResult {
    return this.send({ memberEpoch: 0, subscribedTopicNames: topics });
  }

  heartbeat(extra: Partial<ShareHeartbeatRequest> = {}): ShareHeartbeatResult {
    return this.send({ memberEpoch: this.epoch, ...extra });
  }

  leave(): ShareHeartbeatResult {
    return this.send({ memberEpoch: -1 });
  }

  /** Partition count of the assignment, over every topic. */
  get count(): number {
    return this.assignment.reduce((n, t) => n + t.partitions.length, 0);
  }

  private send(opts: Partial<ShareHeartbeatRequest>): ShareHeartbeatResult {
    const r = this.h.coordinator.shareGroupHeartbeat(request({ groupId: this.groupId, memberId: this.memberId, ...opts }));
    this.last = r;
    if (r.errorCode === ErrorCode.NONE && r.memberEpoch >= 0) {
      this.epoch = r.memberEpoch;
      if (r.assignment) this.assignment = r.assignment;
    }
    return r;
  }
}

const tp = (entries: [string, number[]][]): TopicPartitions => new Map(entries.map(([t, ps]) => [t, new Set(ps)]));

describe('share groups (KIP-932)', () => {
  describe('the simple assignor', () => {
    const members = (n: number, topics: string[]) => Array.from({ length: n }, (_, i) => ({ memberId: `m${i}`, subscribedTopicIds: new Set(topics) }));
    const counts = (a: Map<string, TopicPartitions>) => [...a.values()].map((m) => [...m.values()].reduce((n, ps) => n + ps.size, 0));
    const holders = (a: Map<string, TopicPartitions>, topicId: string, p: number) => [...a].filter(([, m]) => m.get(topicId)?.has(p)).length;

    it('spreads partitions over fewer members evenly, each partition to one member', () => {
      const a = assignSharePartitions({ members: members(3, ['t']), assignable: new Map([['t', [0, 1, 2, 3, 4, 5, 6]]]), previous: new Map() });
      expect(counts(a).sort()).to.deep.equal([2, 2, 3]);
      for (let p = 0; p < 7; p++) expect(holders(a, 't', p), `partition ${p}`).to.equal(1);
    });

    it('shares each partition among ceil(members / partitions) members when there are more members', () => {
      const a = assignSharePartitions({ members: members(5, ['t']), assignable: new Map([['t', [0, 1]]]), previous: new Map() });
      // Three sharers per partition: six assignments over five members, none with both twice.
      expect(holders(a, 't', 0)).to.equal(3);
      expect(holders(a, 't', 1)).to.equal(3);
      expect(counts(a).sort()).to.deep.equal([1, 1, 1, 1, 2]);
    });

    it('keeps what members had as far as balance allows', () => {
      const previous = new Map([['m0', tp([['t', [0, 1]]])], ['m1', tp([['t', [2, 3]]])]]);
      const a = assignSharePartitions({ members: members(2, ['t']), assignable: new Map([['t', [0, 1, 2, 3]]]), previous });
      expect(a.get('m0')).to.deep.equal(tp([['t', [0, 1]]]));
      expect(a.get('m1')).to.deep.equal(tp([['t', [2, 3]]]));
      // A third member takes one partition from one of them; the rest stays.
      const b = assignSharePartitions({ members: members(3, ['t']), assignable: new Map([['t', [0, 1, 2, 3]]]), previous: a });
      expect(counts(b).sort()).to.deep.equal([1, 1, 2]);
      const kept = [...b.get('m0')!.get('t') ?? [], ...b.get('m1')!.get('t') ?? []];
      expect(kept).to.have.length(3);
      expect(kept.every((p) => a.get('m0')!.get('t')!.has(p) || a.get('m1')!.get('t')!.has(p))).to.equal(true);
    });

    it('balances each topic over its own subscribers when subscriptions differ, only initialized partitions', () => {
      const spec = {
        members: [
          { memberId: 'a', subscribedTopicIds: new Set(['t1']) },
          { memberId: 'b', subscribedTopicIds: new Set(['t2']) },
          { memberId: 'c', subscribedTopicIds: new Set(['t1', 't2']) },
        ],
        assignable: new Map([['t1', [0, 1]], ['t2', [0, 1, 2, 3]]]),
        previous: new Map(),
      };
      const a = assignSharePartitions(spec);
      expect(a.get('a')!.has('t2')).to.equal(false);
      expect(a.get('b')!.has('t1')).to.equal(false);
      expect([a.get('a')!.get('t1')!.size, a.get('c')!.get('t1')!.size]).to.deep.equal([1, 1]);
      expect([a.get('b')!.get('t2')!.size, a.get('c')!.get('t2')!.size]).to.deep.equal([2, 2]);
      expect(assignSharePartitions({ ...spec, assignable: new Map() }).get('c')).to.deep.equal(new Map());
    });
  });

  describe('heartbeats', () => {
    let h: Harness;
    let t: string;
    beforeEach(async () => {
      h = await Harness.start();
      t = h.topics.set('orders', 3);
    });

    it('joins: the first answer has no partitions until the share coordinator initialized them, the next one has them', async () => {
      const m = new Member(h, 'member-1');
      expect(m.join(['orders'])).to.deep.equal({
        errorCode: ErrorCode.NONE, errorMessage: null, memberId: 'member-1', memberEpoch: 1, heartbeatIntervalMs: 5000, assignment: [],
      });
      expect(h.shareInitializations).to.deep.equal([{ groupId: G, stateEpoch: 1, topics: [{ topicId: t, partitions: [0, 1, 2] }] }]);
      await flush();
      const r = m.heartbeat();
      expect(r.memberEpoch).to.equal(2);
      expect(r.assignment).to.deep.equal([{ topicId: t, partitions: [0, 1, 2] }]);
      // Nothing new: no assignment, same epoch, nothing initialized again.
      expect(m.heartbeat()).to.deep.include({ memberEpoch: 2, assignment: null });
      expect(h.shareInitializations).to.have.length(1);
      expect(h.coordinator.shareGroupDescribe(G)).to.deep.include({ groupState: 'Stable', groupEpoch: 2, assignmentEpoch: 2, assignorName: 'simple' });
    });

    it('two members share the partitions; a third of one partition gets the one partition too', async () => {
      h.topics.set('single', 1);
      const [a, b, c] = ['a', 'b', 'c'].map((id) => new Member(h, id));
      a.join(['single']);
      b.join(['single']);
      await flush();
      a.heartbeat();
      b.heartbeat();
      a.heartbeat();
      expect([a.count, b.count]).to.deep.equal([1, 1]);
      c.join(['single']);
      await h.advance(1000);
      for (const m of [a, b, c]) m.heartbeat();
      expect([a.count, b.count, c.count]).to.deep.equal([1, 1, 1]);
      expect(new Set([a.epoch, b.epoch, c.epoch]).size).to.equal(1);
    });

    it('answers the member epochs as Kafka: greater fenced, smaller fenced unless the previous one, unknown members', async () => {
      const m = new Member(h, 'm');
      m.join(['orders']);
      await flush();
      m.heartbeat();
      expect(m.epoch).to.equal(2);
      const fenced = h.coordinator.shareGroupHeartbeat(request({ memberEpoch: 3 }));
      expect(fenced).to.include({ errorCode: ErrorCode.FENCED_MEMBER_EPOCH });
      expect(fenced.errorMessage).to.equal('The share group member has a greater member epoch (3) than the one known by the group ' +
        'coordinator (2). The member must abandon all its partitions and rejoin.');
      // The previous epoch (the answer that moved it may have been lost) is accepted.
      expect(h.coordinator.shareGroupHeartbeat(request({ memberEpoch: 1 })).errorCode).to.equal(ErrorCode.NONE);
      m.join(['orders']);
      await h.advance(1000);
      // A rejoin with epoch 0 keeps the member; the group epoch only moves when something changed.
      expect(h.coordinator.shareGroupHeartbeat(request({ memberId: 'ghost', memberEpoch: 2 }))).to.deep.include({
        errorCode: ErrorCode.UNKNOWN_MEMBER_ID, errorMessage: `Member ghost is not a member of group ${G}.`,
      });
      expect(h.coordinator.shareGroupHeartbeat(request({ memberId: 'ghost', memberEpoch: -1 })).errorCode).to.equal(ErrorCode.UNKNOWN_MEMBER_ID);
    });

    it('refuses invalid requests with Kafka\'s messages', () => {
      const invalid = (opts: Partial<ShareHeartbeatRequest>) => {
        const r = h.coordinator.shareGroupHeartbeat(request(opts));
        expect(r.errorCode).to.equal(ErrorCode.INVALID_REQUEST);
        return r.errorMessage;
      };
      expect(invalid({ memberId: '' })).to.equal('MemberId can\'t be empty.');
      expect(invalid({ groupId: '' })).to.equal('GroupId can\'t be empty.');
      expect(invalid({ rackId: '' })).to.equal('RackId can\'t be empty.');
      expect(invalid({ subscribedTopicNames: [] })).to.equal('SubscribedTopicNames must be set in first request.');
      expect(invalid({ subscribedTopicNames: null })).to.equal('SubscribedTopicNames must be set in first request.');
      expect(invalid({ memberEpoch: -2 })).to.equal('MemberEpoch is invalid.');
      expect(h.coordinator.shareGroupHeartbeat(request({ memberEpoch: 3 }))).to.deep.include({
        errorCode: ErrorCode.GROUP_ID_NOT_FOUND, errorMessage: `Share group ${G} not found.`,
      });
    });

    it('a member leaving gives its partitions to the others at the next heartbeat; the last one leaves the group Empty', async () => {
      const [a, b] = ['a', 'b'].map((id) => new Member(h, id));
      a.join(['orders']);
      b.join(['orders']);
      await flush();
      a.heartbeat();
      b.heartbeat();
      a.heartbeat();
      expect(a.count + b.count).to.equal(3);
      expect(b.leave()).to.deep.include({ errorCode: ErrorCode.NONE, memberId: 'b', memberEpoch: -1, assignment: null });
      await h.advance(1000);
      a.heartbeat();
      expect(a.count).to.equal(3);
      a.leave();
      expect(h.coordinator.shareGroupDescribe(G)).to.deep.include({ groupState: 'Empty', members: [] });
      expect(h.coordinator.scheduledTimers.filter((k) => k.includes('share'))).to.deep.equal([]);
    });

    it('a leave bumps the group epoch once, even when the topics subscribed to change with it', async () => {
      h.topics.set('payments', 1);
      const [a, b] = ['a', 'b'].map((id) => new Member(h, id));
      a.join(['orders']);
      b.join(['orders', 'payments']);
      await flush();
      a.heartbeat();
      b.heartbeat();
      const before = h.coordinator.shareGroupDescribe(G).groupEpoch;
      b.leave();
      expect(h.coordinator.shareGroupDescribe(G).groupEpoch).to.equal(before + 1);
      expect(a.heartbeat().memberEpoch).to.equal(before + 1);
      expect(h.coordinator.shareGroupDescribe(G)).to.deep.include({ groupEpoch: before + 1, assignmentEpoch: before + 1 });
    });

    it('a member whose session expires is fenced: its partitions go to the others', async () => {
      h.groupConfigs.set(G, { 'share.session.timeout.ms': '10000', 'share.heartbeat.interval.ms': '2000' });
      const [a, b] = ['a', 'b'].map((id) => new Member(h, id));
      expect(a.join(['orders']).heartbeatIntervalMs).to.equal(2000);
      b.join(['orders']);
      await flush();
      a.heartbeat();
      b.heartbeat();
      for (let i = 0; i < 6; i++) {
        await h.advance(2000);
        a.heartbeat();
      }
      expect(h.coordinator.shareGroupDescribe(G).members.map((m) => m.memberId)).to.deep.equal(['a']);
      expect(a.count).to.equal(3);
      expect(b.heartbeat().errorCode).to.equal(ErrorCode.UNKNOWN_MEMBER_ID);
    });

    it('a subscription change bumps the group epoch and the assignment follows it; new topics are initialized', async () => {
      const payments = h.topics.set('payments', 2);
      const m = new Member(h, 'm');
      m.join(['orders']);
      await flush();
      m.heartbeat();
      expect(m.assignment.map((x) => x.topicId)).to.deep.equal([t]);
      const changed = m.heartbeat({ subscribedTopicNames: ['payments'] });
      expect(changed.memberEpoch).to.equal(3);
      expect(changed.assignment).to.deep.equal([]);
      expect(h.shareInitializations.at(-1)).to.deep.equal({ groupId: G, stateEpoch: 3, topics: [{ topicId: payments, partitions: [0, 1] }] });
      await h.advance(1000);
      expect(m.heartbeat().assignment).to.deep.equal([{ topicId: payments, partitions: [0, 1] }]);
      // New partitions of a subscribed topic: initialized, then assigned.
      h.topics.set('payments', 3);
      m.heartbeat();
      await h.advance(1000);
      expect(m.heartbeat().assignment).to.deep.equal([{ topicId: payments, partitions: [0, 1, 2] }]);
    });

    it('partitions being initialized are not asked for again while the share coordinator answers (until the retry interval)', async () => {
      let release = (): void => undefined;
      h.initializeShareState = () => new Promise<void>((resolve) => {
        release = resolve;
      });
      const m = new Member(h, 'm');
      m.join(['orders']);
      m.heartbeat();
      await h.advance(1000);
      m.heartbeat();
      expect(h.shareInitializations).to.have.length(1);
      expect(m.count).to.equal(0);
      release();
      await flush();
      expect(m.heartbeat().assignment).to.deep.equal([{ topicId: t, partitions: [0, 1, 2] }]);
      // Asked again only once the retry interval has passed without an answer.
      h.topics.set('orders', 4);
      m.heartbeat();
      await h.advance(29_000, 1000);
      m.heartbeat();
      expect(h.shareInitializations).to.have.length(2);
      await h.advance(1000, 1000);
      m.heartbeat();
      expect(h.shareInitializations.map((i) => i.topics[0].partitions)).to.deep.equal([[0, 1, 2], [3], [3]]);
    });

    it('a refused initialization leaves the partitions unassigned and is asked again at the next heartbeat', async () => {
      let refuse = true;
      h.initializeShareState = () => (refuse ? Promise.reject(new Error('share coordinator not available')) : Promise.resolve());
      const m = new Member(h, 'm');
      m.join(['orders']);
      await flush();
      m.heartbeat();
      expect(m.count).to.equal(0);
      expect(h.shareInitializations).to.have.length(2);
      refuse = false;
      await flush();
      m.heartbeat();
      await h.advance(1000);
      expect(m.heartbeat().assignment).to.deep.equal([{ topicId: t, partitions: [0, 1, 2] }]);
      expect(h.shareInitializations).to.have.length(3);
    });

    it('group.share.max.size: GROUP_MAX_SIZE_REACHED for a new member beyond it', async () => {
      const small = await Harness.start({ shareMaxSize: 1 });
      small.topics.set('orders', 1);
      new Member(small, 'a').join(['orders']);
      expect(new Member(small, 'b').join(['orders'])).to.deep.include({
        errorCode: ErrorCode.GROUP_MAX_SIZE_REACHED, errorMessage: 'The share group has reached its maximum capacity of 1 members.',
      });
      expect(new Member(small, 'a').join(['orders']).errorCode).to.equal(ErrorCode.NONE);
    });
  });

  describe('one id space with the other kinds of groups', () => {
    let h: Harness;
    beforeEach(async () => {
      h = await Harness.start();
      h.topics.set('orders', 1);
    });

    it('a share group id is no consumer, classic or streams group, and none of theirs is a share group', async () => {
      new Member(h, 'm').join(['orders']);
      const consumer = await h.coordinator.consumerGroupHeartbeat({
        apiVersion: 1, groupId: G, memberId: 'c', memberEpoch: 0, instanceId: null, rackId: null, rebalanceTimeoutMs: 30000,
        subscribedTopicNames: ['orders'], subscribedTopicRegex: null, serverAssignor: null, topicPartitions: [], clientId: 'c', clientHost: '/h',
      });
      expect(consumer).to.deep.include({ errorCode: ErrorCode.GROUP_ID_NOT_FOUND, errorMessage: `Group ${G} is not a consumer group.` });
      expect(h.coordinator.consumerGroupDescribe(G)).to.deep.include({ errorCode: ErrorCode.GROUP_ID_NOT_FOUND, errorMessage: `Group ${G} is not a consumer group.` });
      const join = h.join(G, { memberId: 'classic' });
      await flush();
      expect(join.value).to.deep.include({ errorCode: ErrorCode.INCONSISTENT_GROUP_PROTOCOL, memberId: '' });
      expect(h.coordinator.describeGroup(G)).to.deep.include({ errorCode: ErrorCode.GROUP_ID_NOT_FOUND, errorMessage: `Group ${G} is not a classic group.`, state: 'Dead' });
      // A share group commits and fetches no offsets.
      expect(await h.coordinator.commitOffsets({
        groupId: G, memberId: 'm', generationId: 1, groupInstanceId: null, apiVersion: 9, retentionTimeMs: -1,
        partitions: [{ topic: 'orders', partition: 0, offset: 1, leaderEpoch: -1, metadata: null, commitTimestamp: -1 }],
      })).to.deep.equal([ErrorCode.GROUP_ID_NOT_FOUND]);
      expect(h.coordinator.fetchOffsets(G, null, false).errorCode).to.equal(ErrorCode.GROUP_ID_NOT_FOUND);

      await h.coordinator.consumerGroupHeartbeat({
        apiVersion: 1, groupId: 'consumers', memberId: 'c', memberEpoch: 0, instanceId: null, rackId: null, rebalanceTimeoutMs: 30000,
        subscribedTopicNames: ['orders'], subscribedTopicRegex: null, serverAssignor: null, topicPartitions: [], clientId: 'c', clientHost: '/h',
      });
      expect(new Member(h, 'm', 'consumers').join(['orders'])).to.deep.include({
        errorCode: ErrorCode.GROUP_ID_NOT_FOUND, errorMessage: 'Group consumers is not a share group.',
      });
      expect(h.coordinator.shareGroupDescribe('consumers')).to.deep.include({
        errorCode: ErrorCode.GROUP_ID_NOT_FOUND, errorMessage: 'Group consumers is not a share group.',
      });
      expect(h.coordinator.shareGroupDescribe('nobody')).to.deep.include({ errorCode: ErrorCode.GROUP_ID_NOT_FOUND, errorMessage: 'Group nobody not found.' });
    });

    it('lists share groups with their type and state, filtered by both', () => {
      const m = new Member(h, 'm');
      m.join(['orders']);
      expect(h.coordinator.listGroups([], ['share']).groups).to.deep.equal([{ groupId: G, protocolType: 'share', state: 'Stable', type: 'share' }]);
      expect(h.coordinator.listGroups(['empty'], []).groups).to.deep.equal([]);
      m.leave();
      expect(h.coordinator.listGroups(['Empty'], ['share', 'consumer']).groups).to.deep.equal([{ groupId: G, protocolType: 'share', state: 'Empty', type: 'share' }]);
      expect(h.coordinator.listGroups([], ['classic']).groups).to.deep.equal([]);
    });

    it('deletes an Empty share group and its share-partitions\' state, not one with members', async () => {
      const m = new Member(h, 'm');
      m.join(['orders']);
      await flush();
      expect(await h.coordinator.deleteGroups([G])).to.deep.equal([{ groupId: G, errorCode: ErrorCode.NON_EMPTY_GROUP }]);
      m.leave();
      h.onShareGroupDeleted = () => Promise.resolve(ErrorCode.COORDINATOR_NOT_AVAILABLE);
      expect(await h.coordinator.deleteGroups([G])).to.deep.equal([{ groupId: G, errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE }]);
      expect(h.coordinator.shareGroup(G)).to.deep.include({ found: 'share', memberCount: 0 });
      h.onShareGroupDeleted = () => Promise.resolve(ErrorCode.NONE);
      expect(await h.coordinator.deleteGroups([G])).to.deep.equal([{ groupId: G, errorCode: ErrorCode.NONE }]);
      expect(h.shareGroupsDeleted.at(-1)).to.deep.equal({ groupId: G, topics: [{ topicId: h.topics.id('orders'), partitions: [0] }] });
      expect(h.coordinator.shareGroup(G)).to.deep.equal({ found: 'none' });
      expect(await h.coordinator.deleteGroups([G])).to.deep.equal([{ groupId: G, errorCode: ErrorCode.GROUP_ID_NOT_FOUND }]);
      // The id is free for any kind again.
      expect(new Member(h, 'again').join(['orders']).memberEpoch).to.equal(1);
    });

    it('shows the share admin APIs the group, its members and its initialized share-partitions; they may add and forget some', async () => {
      const orders = h.topics.id('orders');
      const other = h.topics.set('other', 3);
      expect(h.coordinator.shareGroup(G)).to.deep.equal({ found: 'none' });
      const m = new Member(h, 'm');
      m.join(['orders']);
      expect(h.coordinator.shareGroup(G)).to.deep.equal({ found: 'share', memberCount: 1, statePartitions: new Map() });
      await flush();
      expect(h.coordinator.shareGroup(G)).to.deep.equal({ found: 'share', memberCount: 1, statePartitions: new Map([[orders, [0]]]) });
      await h.coordinator.markInitialized(G, [{ topicId: other, topicName: 'other', partitions: [2, 0] }]);
      expect(h.coordinator.shareGroup(G)).to.deep.include({ statePartitions: new Map([[orders, [0]], [other, [0, 2]]]) });
      await h.coordinator.forgetTopics(G, [orders]);
      expect(h.coordinator.shareGroup(G)).to.deep.include({ statePartitions: new Map([[other, [0, 2]]]) });
      // AlterShareGroupOffsets on a new id makes an Empty share group; another kind's id is left alone.
      await h.coordinator.markInitialized('fresh', [{ topicId: other, topicName: 'other', partitions: [1] }]);
      expect(h.coordinator.shareGroup('fresh')).to.deep.equal({ found: 'share', memberCount: 0, statePartitions: new Map([[other, [1]]]) });
      await h.joinNew('classic-group');
      await flush();
      expect(h.coordinator.shareGroup('classic-group')).to.deep.equal({ found: 'other-type' });
    });
  });
});
