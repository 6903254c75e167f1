// Consumer groups (KIP-848: src/group/consumer-coordinator.ts) on a fake clock, with fake topics:
// joins, leaves, fencing, the incremental reconciliation (a partition is given only once its
// previous owner revoked it), static members, regular expressions picking up new topics,
// session and rebalance timeouts, the ids shared with classic groups, and commits with member epochs.
import { expect } from 'chai';
import { ErrorCode } from '../../src/common/errors';
import type { ConsumerHeartbeatRequest, ConsumerHeartbeatResult } from '../../src/group/coordinator';
import { encodeAssignment } from '../../src/group/consumer-protocol';
import { groupHash, topicHash } from '../../src/group/metadata-hash';
import { Reader, Writer } from '../../src/protocol/primitives';
import { Harness, G, flush, joinRequest, stableGroup, subscription, track } from './fakes';

const CG = 'cg';

function request(opts: Partial<ConsumerHeartbeatRequest>): ConsumerHeartbeatRequest {
  return {
    apiVersion: 1, groupId: CG, memberId: '', memberEpoch: 0, instanceId: null, rackId: null, rebalanceTimeoutMs: -1,
    subscribedTopicNames: null, subscribedTopicRegex: null, serverAssignor: null, topicPartitions: null,
    clientId: 'client', clientHost: '/127.0.0.1', ...opts,
  };
}

/** A consumer as the clients behave: it owns what its last assignment said (revoking at once) and reports it. */
class Member {
  epoch = 0;
  /** topic id -> partitions owned. */
  owned = new Map<string, number[]>();
  last: ConsumerHeartbeatResult | undefined;

  constructor(readonly h: Harness, readonly memberId: string, readonly extra: Partial<ConsumerHeartbeatRequest> = {}) {}

  join(topics: string[] | null, extra: Partial<ConsumerHeartbeatRequest> = {}): Promise<ConsumerHeartbeatResult> {
    this.owned.clear();
    return this.send({ memberEpoch: 0, rebalanceTimeoutMs: 30_000, subscribedTopicNames: topics, topicPartitions: [], ...extra });
  }

  heartbeat(extra: Partial<ConsumerHeartbeatRequest> = {}): Promise<ConsumerHeartbeatResult> {
    const topicPartitions = [...this.owned].map(([topicId, partitions]) => ({ topicId, partitions }));
    return this.send({ memberEpoch: this.epoch, topicPartitions, ...extra });
  }

  leave(epoch = -1): Promise<ConsumerHeartbeatResult> {
    return this.send({ memberEpoch: epoch });
  }

  private async send(opts: Partial<ConsumerHeartbeatRequest>): Promise<ConsumerHeartbeatResult> {
    const r = await this.h.coordinator.consumerGroupHeartbeat(request({ memberId: this.memberId, ...this.extra, ...opts }));
    this.last = r;
    if (r.errorCode === ErrorCode.NONE && r.memberEpoch >= 0) {
      this.epoch = r.memberEpoch;
      if (r.assignment) this.owned = new Map(r.assignment.map((t) => [t.topicId, t.partitions]));
    }
    return r;
  }

  /** What it owns, as "topic-partition" over the topic names. */
  partitions(): string[] {
    const names = new Map(this.h.topics.topics().map((t) => [t.id, t.name]));
    return [...this.owned].flatMap(([id, ps]) => ps.map((p) => `${names.get(id)}-${p}`)).sort();
  }
}

/** Heartbeats every member in turn until nothing changes; fails if a partition is ever owned twice. */
async function settle(members: Member[], rounds = 10): Promise<void> {
  for (let i = 0; i < rounds; i++) {
    for (const m of members) {
      await m.heartbeat();
      const seen = new Set<string>();
      for (const other of members) {
        for (const p of other.partitions()) {
          expect(seen.has(p), `${p} owned twice`).to.equal(false);
          seen.add(p);
        }
      }
    }
  }
}

describe('consumer groups: heartbeats and reconciliation', () => {
  it('a first member joins at epoch 1 with every partition of its topics; the group is Stable', async () => {
    const h = await Harness.start();
    h.topics.set('t', 4);
    const a = new Member(h, 'a');
    const r = await a.join(['t']);
    expect(r).to.include({ errorCode: 0, memberId: 'a', memberEpoch: 1, heartbeatIntervalMs: 5000 });
    expect(a.partitions()).to.deep.equal(['t-0', 't-1', 't-2', 't-3']);
    const d = h.coordinator.consumerGroupDescribe(CG);
    expect(d).to.include({ errorCode: 0, groupState: 'Stable', groupEpoch: 1, assignmentEpoch: 1, assignorName: 'uniform' });
    expect(d.members[0]).to.include({ memberId: 'a', memberEpoch: 1, clientId: 'client', clientHost: '/127.0.0.1' });
    expect(d.members[0].assignment).to.deep.equal([{ topicId: h.topics.id('t'), topicName: 't', partitions: [0, 1, 2, 3] }]);
    // Nothing new: no assignment in the answer.
    expect((await a.heartbeat()).assignment).to.equal(null);
  });

  it('writes what changed to __consumer_offsets in Kafka\'s record order before answering, nothing when nothing changed', async () => {
    const h = await Harness.start();
    h.topics.set('t', 2);
    const kinds = () => h.store.writes.flatMap((w) => (w.kind === 'consumerGroup' ? [w.records.map((r) => `${r.kind}${r.value === null ? '-' : ''}`)] : []));
    const a = new Member(h, 'a');
    await a.join(['t']);
    expect(kinds()).to.deep.equal([['member', 'groupEpoch', 'targetMember', 'targetEpoch', 'currentAssignment']]);
    // The group epoch record carries the metadata hash as Kafka 4.4 computes it.
    const epochRecord = h.store.writes[0].kind === 'consumerGroup' ? h.store.writes[0].records.find((r) => r.kind === 'groupEpoch') : undefined;
    expect(epochRecord?.value).to.deep.equal({ epoch: 1, metadataHash: groupHash(new Map([['t', topicHash(h.topics.topic('t')!, [[], []])]])) });
    await a.heartbeat();
    expect(kinds()).to.have.length(1);
    await a.leave();
    expect(kinds()[1]).to.deep.equal(['currentAssignment-', 'targetMember-', 'member-', 'groupEpoch']);
    // A failed write is the answer.
    h.store.failWith = ErrorCode.NOT_COORDINATOR;
    expect(await new Member(h, 'b').join(['t'])).to.include({ errorCode: ErrorCode.NOT_COORDINATOR, memberId: null });
  });

  it('a heartbeat whose records cannot be written answers the error and leaves the group as it was', async () => {
    const h = await Harness.start();
    h.topics.set('t', 4);
    const a = new Member(h, 'a');
    const b = new Member(h, 'b');
    await a.join(['t']);
    const described = () => JSON.stringify(h.coordinator.consumerGroupDescribe(CG));
    const stable = described();
    h.store.failWith = ErrorCode.UNKNOWN_SERVER_ERROR;
    expect(await b.join(['t'])).to.include({ errorCode: ErrorCode.UNKNOWN_SERVER_ERROR, memberId: null });
    expect(described()).to.equal(stable);
    // A changed subscription, and a leave, are put back as well.
    expect((await a.heartbeat({ subscribedTopicNames: [] })).errorCode).to.equal(ErrorCode.UNKNOWN_SERVER_ERROR);
    expect((await a.leave()).errorCode).to.equal(ErrorCode.UNKNOWN_SERVER_ERROR);
    expect(described()).to.equal(stable);
    // Nothing was left half-done: the next join is the first one's.
    h.store.failWith = ErrorCode.NONE;
    expect(await b.join(['t'])).to.include({ errorCode: 0, memberEpoch: 2 });
    await settle([a, b]);
    expect([...a.partitions(), ...b.partitions()].sort()).to.deep.equal(['t-0', 't-1', 't-2', 't-3']);
    // A group the failed heartbeat would have created is not there.
    h.store.failWith = ErrorCode.UNKNOWN_SERVER_ERROR;
    expect((await new Member(h, 'c', { groupId: 'new' }).join(['t'])).errorCode).to.equal(ErrorCode.UNKNOWN_SERVER_ERROR);
    expect(h.coordinator.consumerGroupDescribe('new').errorCode).to.equal(ErrorCode.GROUP_ID_NOT_FOUND);
  });

  it('a failed write under a later change stays in memory and goes with the group\'s next write', async () => {
    const h = await Harness.start();
    h.topics.set('t', 2);
    h.topics.set('u', 2);
    const a = new Member(h, 'a');
    const b = new Member(h, 'b');
    await a.join(['t']);
    h.store.hold = true;
    h.store.failWith = ErrorCode.UNKNOWN_SERVER_ERROR;
    const changed = track(a.heartbeat({ subscribedTopicNames: ['t', 'u'] }));
    h.store.failWith = ErrorCode.NONE;
    const joined = track(b.join(['t']));
    h.store.release();
    await flush();
    expect(changed.value!.errorCode).to.equal(ErrorCode.UNKNOWN_SERVER_ERROR);
    expect(joined.value!.errorCode).to.equal(0);
    // b's join built on a's change, so it stays; the next write carries a's member record.
    expect(h.coordinator.consumerGroup(CG)!.members.get('a')!.subscribedTopicNames).to.deep.equal(['t', 'u']);
    const writes = h.store.writes.length;
    await b.heartbeat();
    const next = h.store.writes.slice(writes).flatMap((w) => (w.kind === 'consumerGroup' ? w.records : []));
    const member = next.find((r) => r.kind === 'member' && r.memberId === 'a');
    expect(member?.kind === 'member' && member.value?.subscribedTopicNames).to.deep.equal(['t', 'u']);
  });

  it('a fencing whose records cannot be written keeps the member and is tried again; a classic leave answers the error', async () => {
    const h = await Harness.start();
    h.topics.set('t', 2);
    const a = new Member(h, 'a');
    await a.join(['t']);
    h.store.failWith = ErrorCode.UNKNOWN_SERVER_ERROR;
    await h.advance(46_000, 1000);
    expect(h.coordinator.consumerGroup(CG)!.members.has('a'), 'the fencing could not be written').to.equal(true);
    expect(h.coordinator.consumerGroupDescribe(CG)).to.include({ groupEpoch: 1, groupState: 'Stable' });
    h.store.failWith = ErrorCode.NONE;
    await h.advance(1000, 100);
    expect(h.coordinator.consumerGroup(CG)!.members.has('a'), 'fenced by the retry').to.equal(false);
    expect(h.coordinator.consumerGroupDescribe(CG).groupEpoch).to.equal(2);

    const b = new Member(h, 'b');
    await b.join(['t']);
    const protocols = [{ name: 'range', metadata: subscription(['t']) }];
    const c = (await h.coordinator.joinGroup(joinRequest(CG, { protocols }))).memberId;
    expect((await h.coordinator.joinGroup(joinRequest(CG, { memberId: c, protocols }))).errorCode).to.equal(0);
    h.store.failWith = ErrorCode.NOT_COORDINATOR;
    expect(await h.coordinator.leaveGroup(CG, [{ memberId: c, groupInstanceId: null }])).to.deep.equal({ errorCode: ErrorCode.NOT_COORDINATOR, members: [] });
    expect(h.coordinator.consumerGroup(CG)!.members.has(c)).to.equal(true);
    h.store.failWith = ErrorCode.NONE;
    expect((await h.coordinator.leaveGroup(CG, [{ memberId: c, groupInstanceId: null }])).members[0].errorCode).to.equal(0);
    expect(h.coordinator.consumerGroup(CG)!.members.has(c)).to.equal(false);
  });

  it('computes a new target assignment at most once per consumer.assignment.interval.ms (Kafka 4.4, KIP-1263)', async () => {
    const h = await Harness.start({ consumerAssignmentIntervalMs: 1000 });
    h.topics.set('t', 4);
    const a = new Member(h, 'a');
    const b = new Member(h, 'b');
    const c = new Member(h, 'c');
    // The first assignment is at once.
    expect(await a.join(['t'])).to.include({ memberEpoch: 1 });
    expect(a.partitions()).to.have.length(4);
    // Within the interval: the group epoch moves, the target waits; b goes on at the current target.
    expect(await b.join(['t'])).to.include({ memberEpoch: 1 });
    expect(await c.join(['t'])).to.include({ memberEpoch: 1 });
    expect(h.coordinator.consumerGroupDescribe(CG)).to.include({ groupEpoch: 3, assignmentEpoch: 1, groupState: 'Assigning' });
    expect((await a.heartbeat()).memberEpoch).to.equal(1);
    expect(a.partitions()).to.have.length(4);
    // At the interval's end, one assignment for both joins, written by the timer.
    await h.advance(1000, 100);
    expect(h.coordinator.consumerGroupDescribe(CG)).to.include({ groupEpoch: 3, assignmentEpoch: 3 });
    const targetEpochs = h.store.writes.flatMap((w) => (w.kind === 'consumerGroup' ? w.records : []))
      .flatMap((r) => (r.kind === 'targetEpoch' && r.value ? [r.value.assignmentEpoch] : []));
    expect(targetEpochs).to.deep.equal([1, 3]);
    await settle([a, b, c]);
    expect([a, b, c].map((m) => m.partitions().length).sort()).to.deep.equal([1, 1, 2]);
    // A group's own consumer.assignment.interval.ms overrides the broker's.
    h.groupConfigs.set('fast', { 'consumer.assignment.interval.ms': '0' });
    const d = new Member(h, 'd', { groupId: 'fast' });
    const e = new Member(h, 'e', { groupId: 'fast' });
    await d.join(['t']);
    expect(await e.join(['t'])).to.include({ memberEpoch: 2 });
  });

  it('v0 joins get a member id from the coordinator (a Kafka Uuid); v1 must bring their own', async () => {
    const h = await Harness.start();
    const v0 = await h.coordinator.consumerGroupHeartbeat(request({ apiVersion: 0, memberId: '', rebalanceTimeoutMs: 1000, subscribedTopicNames: [], topicPartitions: [] }));
    expect(v0.errorCode).to.equal(0);
    expect(v0.memberId).to.match(/^[A-Za-z0-9_-]{22}$/);
    const v1 = await h.coordinator.consumerGroupHeartbeat(request({ memberId: '', rebalanceTimeoutMs: 1000, subscribedTopicNames: [], topicPartitions: [] }));
    expect(v1).to.include({ errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'MemberId can\'t be empty.', memberId: null });
  });

  it('a second member gets partitions only once the first has revoked them', async () => {
    const h = await Harness.start();
    h.topics.set('t', 4);
    const a = new Member(h, 'a');
    const b = new Member(h, 'b');
    await a.join(['t']);
    const rb = await b.join(['t']);
    // Group epoch 2; b is at epoch 2 but its partitions are still a's.
    expect(rb).to.include({ errorCode: 0, memberEpoch: 2 });
    expect(b.partitions()).to.deep.equal([]);
    expect(h.coordinator.consumerGroupDescribe(CG).groupState).to.equal('Reconciling');
    // a is asked to revoke two partitions and stays in epoch 1 until it has.
    const ra = await a.heartbeat();
    expect(ra.memberEpoch).to.equal(1);
    expect(a.partitions()).to.have.length(2);
    expect((await b.heartbeat()).assignment).to.equal(null);
    // a's next heartbeat reports the revocation: it moves to epoch 2; then b gets the released ones.
    expect((await a.heartbeat()).memberEpoch).to.equal(2);
    await b.heartbeat();
    expect(b.partitions()).to.have.length(2);
    expect([...a.partitions(), ...b.partitions()].sort()).to.deep.equal(['t-0', 't-1', 't-2', 't-3']);
    await settle([a, b]);
    expect(h.coordinator.consumerGroupDescribe(CG).groupState).to.equal('Stable');
  });

  it('a leaving member (-1) bumps the group epoch and the others take over its partitions', async () => {
    const h = await Harness.start();
    h.topics.set('t', 3);
    const a = new Member(h, 'a');
    const b = new Member(h, 'b');
    await a.join(['t']);
    await b.join(['t']);
    await settle([a, b]);
    const before = h.coordinator.consumerGroupDescribe(CG).groupEpoch;
    expect(await b.leave()).to.include({ errorCode: 0, memberId: 'b', memberEpoch: -1 });
    expect(h.coordinator.consumerGroupDescribe(CG).groupEpoch).to.equal(before + 1);
    await settle([a]);
    expect(a.partitions()).to.deep.equal(['t-0', 't-1', 't-2']);
    expect((await a.leave()).errorCode).to.equal(0);
    expect(h.coordinator.consumerGroupDescribe(CG)).to.include({ groupState: 'Empty' });
    expect(h.coordinator.scheduledTimers.filter((k) => k.includes('consumer'))).to.deep.equal([]);
  });

  it('fences wrong epochs, accepts the previous epoch with owned partitions within the assignment, and knows its members', async () => {
    const h = await Harness.start();
    h.topics.set('t', 2);
    const a = new Member(h, 'a');
    await a.join(['t']);
    expect(await a.heartbeat({ memberEpoch: 5 })).to.include({
      errorCode: ErrorCode.FENCED_MEMBER_EPOCH,
      errorMessage: 'The consumer group member has a greater member epoch (5) than the one known by the group coordinator (1). ' +
        'The member must abandon all its partitions and rejoin.',
    });
    const b = new Member(h, 'b');
    await b.join(['t']);
    await settle([a, b]);
    expect(a.epoch).to.equal(2);
    // Epoch 1 is a's previous one: accepted if what it owns is within its assignment (the answer with 2 may have been lost).
    expect((await a.heartbeat({ memberEpoch: 1 })).errorCode).to.equal(0);
    expect((await a.heartbeat({ memberEpoch: 1, topicPartitions: [{ topicId: h.topics.id('t'), partitions: [0, 1] }] })).errorCode)
      .to.equal(ErrorCode.FENCED_MEMBER_EPOCH);
    expect((await a.heartbeat({ memberEpoch: 0, rebalanceTimeoutMs: 1000, subscribedTopicNames: ['t'], topicPartitions: [] })).errorCode).to.equal(0);
    expect(await new Member(h, 'nobody').heartbeat({ memberEpoch: 3 })).to.include({
      errorCode: ErrorCode.UNKNOWN_MEMBER_ID, errorMessage: 'Member nobody is not a member of group cg.',
    });
    expect(await h.coordinator.consumerGroupHeartbeat(request({ groupId: 'missing', memberId: 'x', memberEpoch: 1 }))).to.include({
      errorCode: ErrorCode.GROUP_ID_NOT_FOUND, errorMessage: 'Consumer group missing not found.',
    });
  });

  it('checks requests as Kafka does', async () => {
    const h = await Harness.start();
    const join = { memberId: 'm', rebalanceTimeoutMs: 1000, subscribedTopicNames: ['t'], topicPartitions: [] };
    const cases: [Partial<ConsumerHeartbeatRequest>, number, string][] = [
      [{ ...join, groupId: '' }, ErrorCode.INVALID_REQUEST, 'GroupId can\'t be empty.'],
      [{ ...join, instanceId: '' }, ErrorCode.INVALID_REQUEST, 'InstanceId can\'t be empty.'],
      [{ ...join, rackId: '' }, ErrorCode.INVALID_REQUEST, 'RackId can\'t be empty.'],
      [{ ...join, rebalanceTimeoutMs: -1 }, ErrorCode.INVALID_REQUEST, 'RebalanceTimeoutMs must be provided in first request.'],
      [{ ...join, topicPartitions: null }, ErrorCode.INVALID_REQUEST, 'TopicPartitions must be empty when (re-)joining.'],
      [{ ...join, subscribedTopicNames: null }, ErrorCode.INVALID_REQUEST,
        'Either SubscribedTopicNames or SubscribedTopicRegex must be non-null when (re-)joining.'],
      [{ memberId: 'm', memberEpoch: -2 }, ErrorCode.INVALID_REQUEST, 'InstanceId can\'t be null.'],
      [{ memberId: 'm', memberEpoch: -3 }, ErrorCode.INVALID_REQUEST, 'MemberEpoch is invalid.'],
      [{ ...join, serverAssignor: 'sticky' }, ErrorCode.UNSUPPORTED_ASSIGNOR,
        'ServerAssignor sticky is not supported. Supported assignors: uniform, range.'],
      [{ ...join, subscribedTopicNames: null, subscribedTopicRegex: '(?=t)' }, ErrorCode.INVALID_REGULAR_EXPRESSION,
        'SubscribedTopicRegex `(?=t)` is not a valid regular expression: invalid or unsupported Perl syntax.'],
    ];
    for (const [opts, code, message] of cases) {
      expect(await h.coordinator.consumerGroupHeartbeat(request(opts)), JSON.stringify(opts)).to.include({ errorCode: code, errorMessage: message });
    }
    expect(h.coordinator.consumerGroup(CG)).to.equal(undefined);
  });

  it('refuses a member past group.consumer.max.size', async () => {
    const h = await Harness.start({ consumerMaxSize: 1 });
    await new Member(h, 'a').join([]);
    expect(await new Member(h, 'b').join([])).to.include({
      errorCode: ErrorCode.GROUP_MAX_SIZE_REACHED, errorMessage: 'The consumer group has reached its maximum capacity of 1 members.',
    });
  });
});

describe('consumer groups: timeouts', () => {
  it('fences a member whose session expires (group.consumer.session.timeout.ms, or the group\'s override)', async () => {
    const h = await Harness.start();
    h.topics.set('t', 2);
    const a = new Member(h, 'a');
    const b = new Member(h, 'b');
    await a.join(['t']);
    await b.join(['t']);
    await settle([a, b]);
    for (let i = 0; i < 9; i++) {
      await h.advance(5000, 1000);
      await a.heartbeat();
    }
    expect(h.coordinator.consumerGroup(CG)!.members.has('b')).to.equal(false);
    await settle([a]);
    expect(a.partitions()).to.deep.equal(['t-0', 't-1']);

    h.groupConfigs.set('other', { 'consumer.session.timeout.ms': '60000', 'consumer.heartbeat.interval.ms': '7000' });
    const c = new Member(h, 'c', { groupId: 'other' });
    expect((await c.join(['t'])).heartbeatIntervalMs).to.equal(7000);
    await h.advance(50_000, 1000);
    expect(h.coordinator.consumerGroup('other')!.members.has('c')).to.equal(true);
    await h.advance(11_000, 1000);
    expect(h.coordinator.consumerGroup('other')!.members.has('c')).to.equal(false);
  });

  it('fences a member that does not revoke within its rebalance timeout', async () => {
    const h = await Harness.start();
    h.topics.set('t', 2);
    const a = new Member(h, 'a');
    await a.join(['t'], { rebalanceTimeoutMs: 10_000 });
    const b = new Member(h, 'b');
    await b.join(['t']);
    await a.heartbeat();
    expect(h.coordinator.consumerGroup(CG)!.members.get('a')!.state).to.equal('unrevoked_partitions');
    // a keeps reporting everything it had: it has not revoked.
    const stubborn = [...a.owned].map(([topicId]) => ({ topicId, partitions: [0, 1] }));
    for (let i = 0; i < 3; i++) {
      await h.advance(3000, 1000);
      await a.heartbeat({ topicPartitions: stubborn });
      await b.heartbeat();
    }
    expect(h.coordinator.consumerGroup(CG)!.members.has('a')).to.equal(true);
    await h.advance(2000, 1000);
    expect(h.coordinator.consumerGroup(CG)!.members.has('a')).to.equal(false);
    expect((await a.heartbeat()).errorCode).to.equal(ErrorCode.UNKNOWN_MEMBER_ID);
    await settle([b]);
    expect(b.partitions()).to.deep.equal(['t-0', 't-1']);
  });
});

describe('consumer groups: static members', () => {
  it('a static member leaving with -2 keeps its instance id for a replacement, which takes over its partitions', async () => {
    const h = await Harness.start();
    h.topics.set('t', 4);
    const a = new Member(h, 'a1', { instanceId: 'i-a' });
    const b = new Member(h, 'b', {});
    await a.join(['t']);
    await b.join(['t']);
    await settle([a, b]);
    const owned = a.partitions();
    // Another member of the same instance id while a1 is there.
    const intruder = new Member(h, 'a2', { instanceId: 'i-a' });
    expect(await intruder.join(['t'])).to.include({
      errorCode: ErrorCode.UNRELEASED_INSTANCE_ID,
      errorMessage: 'Static member a2 with instance id i-a cannot join the group because the instance id is owned by a1 member.',
    });
    const epoch = h.coordinator.consumerGroupDescribe(CG).groupEpoch;
    expect(await a.leave(-2)).to.include({ errorCode: 0, memberId: 'a1', memberEpoch: -2 });
    // The replacement: no rebalance, the same partitions.
    const r = await intruder.join(['t']);
    expect(r.errorCode).to.equal(0);
    expect(intruder.partitions()).to.deep.equal(owned);
    expect(h.coordinator.consumerGroupDescribe(CG).groupEpoch).to.equal(epoch);
    expect(await a.heartbeat()).to.include({
      errorCode: ErrorCode.FENCED_INSTANCE_ID, errorMessage: 'Static member a1 with instance id i-a was fenced by member a2.',
    });
    expect(await new Member(h, 'x', { instanceId: 'i-x' }).heartbeat({ memberEpoch: 1 })).to.include({
      errorCode: ErrorCode.UNKNOWN_MEMBER_ID, errorMessage: 'Instance id i-x is unknown.',
    });
  });
});

describe('consumer groups: subscriptions and topics', () => {
  it('a topic created, grown or deleted later changes the assignment', async () => {
    const h = await Harness.start();
    const a = new Member(h, 'a');
    await a.join(['later']);
    expect(a.partitions()).to.deep.equal([]);
    h.topics.set('later', 2);
    await settle([a]);
    expect(a.partitions()).to.deep.equal(['later-0', 'later-1']);
    h.topics.set('later', 3);
    await settle([a]);
    expect(a.partitions()).to.deep.equal(['later-0', 'later-1', 'later-2']);
    h.topics.delete('later');
    await settle([a]);
    expect(a.owned.size).to.equal(0);
  });

  it('a regular expression (RE2/J, whole name) picks up a new matching topic at the next refresh', async () => {
    const h = await Harness.start();
    h.topics.set('orders-eu', 1);
    h.topics.set('payments', 1);
    const a = new Member(h, 'a');
    await a.join(null, { subscribedTopicRegex: 'orders-.*' });
    expect(a.partitions()).to.deep.equal(['orders-eu-0']);
    h.topics.set('orders-us', 2);
    h.topics.set('xorders-us', 1);
    await settle([a]);
    expect(a.partitions()).to.deep.equal(['orders-eu-0']); // not yet: the last refresh is recent
    await h.advance(10_000, 1000);
    await settle([a]);
    expect(a.partitions()).to.deep.equal(['orders-eu-0', 'orders-us-0', 'orders-us-1']);
    expect(h.coordinator.consumerGroupDescribe(CG).members[0].subscribedTopicRegex).to.equal('orders-.*');
  });

  it('a changed subscription revokes the partitions of topics no longer subscribed', async () => {
    const h = await Harness.start();
    h.topics.set('x', 2);
    h.topics.set('y', 2);
    const a = new Member(h, 'a');
    await a.join(['x', 'y']);
    expect(a.partitions()).to.have.length(4);
    await a.heartbeat({ subscribedTopicNames: ['y'] });
    await settle([a]);
    expect(a.partitions()).to.deep.equal(['y-0', 'y-1']);
  });

  it('the range assignor when members ask for it, else the first of group.consumer.assignors', async () => {
    const h = await Harness.start();
    h.topics.set('t', 5);
    const a = new Member(h, 'a', { serverAssignor: 'range' });
    const b = new Member(h, 'b', { serverAssignor: 'range' });
    await a.join(['t']);
    await b.join(['t']);
    await settle([a, b]);
    expect(a.partitions()).to.deep.equal(['t-0', 't-1', 't-2']);
    expect(b.partitions()).to.deep.equal(['t-3', 't-4']);
    expect(h.coordinator.consumerGroupDescribe(CG).assignorName).to.equal('range');
  });
});

/** The partitions of ConsumerProtocolAssignment bytes, as "topic-partition". */
function assignedIn(bytes: Buffer): string[] {
  const r = new Reader(bytes);
  r.int16();
  const out: string[] = [];
  for (let i = 0, n = r.arrayLength(); i < n; i++) {
    const topic = r.string();
    for (let j = 0, m = r.arrayLength(); j < m; j++) out.push(`${topic}-${r.int32()}`);
  }
  return out.sort();
}

describe('consumer groups: members of the classic protocol (JoinGroup, SyncGroup, Heartbeat)', () => {
  it('a classic consumer joins a consumer group as a member, gets its partitions once released, and leaves', async () => {
    const h = await Harness.start();
    h.topics.set('t', 4);
    const a = new Member(h, 'a');
    await a.join(['t']);
    const first = await h.coordinator.joinGroup(joinRequest(CG, { clientId: 'classic', protocols: [{ name: 'range', metadata: subscription(['t']) }] }));
    expect(first.errorCode).to.equal(ErrorCode.MEMBER_ID_REQUIRED);
    const c = first.memberId;
    const joined = await h.coordinator.joinGroup(joinRequest(CG, { memberId: c, protocols: [{ name: 'range', metadata: subscription(['t']) }] }));
    expect(joined).to.deep.include({ errorCode: 0, memberId: c, generationId: 2, protocolType: 'consumer', protocolName: 'range', leader: '', members: [] });
    const sync = () => h.coordinator.syncGroup({ groupId: CG, memberId: c, generationId: 2, groupInstanceId: null, protocolType: 'consumer', protocolName: 'range', assignments: [] });
    // Its partitions are still a's: nothing yet.
    const synced = await sync();
    expect(synced).to.include({ errorCode: 0, protocolType: 'consumer', protocolName: 'range' });
    expect(assignedIn(synced.assignment)).to.deep.equal([]);
    expect(h.coordinator.heartbeat(CG, c, null, 2)).to.equal(ErrorCode.NONE);
    expect(h.coordinator.heartbeat(CG, c, null, 1)).to.equal(ErrorCode.ILLEGAL_GENERATION);
    await settle([a]);
    expect(a.partitions()).to.have.length(2);
    // Released: the classic member is told to join again, and gets them.
    expect(h.coordinator.heartbeat(CG, c, null, 2)).to.equal(ErrorCode.REBALANCE_IN_PROGRESS);
    const rejoined = await h.coordinator.joinGroup(joinRequest(CG, { memberId: c, protocols: [{ name: 'range', metadata: subscription(['t']) }] }));
    expect(rejoined.generationId).to.equal(2);
    const got = assignedIn((await sync()).assignment);
    expect([...got, ...a.partitions()].sort()).to.deep.equal(['t-0', 't-1', 't-2', 't-3']);
    expect(h.coordinator.heartbeat(CG, c, null, 2)).to.equal(ErrorCode.NONE);
    // It commits as a classic consumer does: any OffsetCommit version, its generation.
    const commit = (generationId: number) => h.coordinator.commitOffsets({
      groupId: CG, memberId: c, generationId, groupInstanceId: null, apiVersion: 7, retentionTimeMs: -1,
      partitions: [{ topic: 't', partition: 0, offset: 3, leaderEpoch: -1, metadata: '', commitTimestamp: -1 }],
    });
    expect([...await commit(2), ...await commit(1)]).to.deep.equal([0, ErrorCode.ILLEGAL_GENERATION]);
    const d = h.coordinator.consumerGroupDescribe(CG);
    expect(d.members.map((m) => [m.memberId, m.memberType]).sort()).to.deep.equal([['a', 1], [c, 0]].sort());
    expect(await h.coordinator.leaveGroup(CG, [{ memberId: c, groupInstanceId: null }])).to.deep.equal({
      errorCode: 0, members: [{ memberId: c, groupInstanceId: null, errorCode: 0 }],
    });
    await settle([a]);
    expect(a.partitions()).to.have.length(4);
    expect(h.coordinator.heartbeat(CG, c, null, 2)).to.equal(ErrorCode.UNKNOWN_MEMBER_ID);
    expect((await h.coordinator.joinGroup(joinRequest(CG, { memberId: 'x', protocolType: 'connect' }))).errorCode).to.equal(ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
    // A classic member must share a protocol with the classic members there.
    expect((await h.coordinator.joinGroup(joinRequest(CG, { memberId: 'd' }))).errorCode).to.equal(0);
    expect((await h.coordinator.joinGroup(joinRequest(CG, { memberId: 'e', protocols: [{ name: 'roundrobin', metadata: subscription(['t']) }] }))).errorCode)
      .to.equal(ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
  });

  it('a classic member that does not sync within its rebalance timeout, or stops heartbeating, is fenced', async () => {
    const h = await Harness.start();
    h.topics.set('t', 2);
    const a = new Member(h, 'a');
    await a.join(['t']);
    const join = (memberId: string) => h.coordinator.joinGroup(joinRequest(CG, { memberId, rebalanceTimeoutMs: 5000, sessionTimeoutMs: 20_000 }));
    await join('c1');
    await h.advance(6000, 1000);
    expect(h.coordinator.consumerGroup(CG)!.members.has('c1')).to.equal(false);
    await join('c2');
    await h.coordinator.syncGroup({ groupId: CG, memberId: 'c2', generationId: h.coordinator.consumerGroup(CG)!.members.get('c2')!.memberEpoch,
      groupInstanceId: null, protocolType: null, protocolName: null, assignments: [] });
    await h.advance(19_000, 1000);
    expect(h.coordinator.consumerGroup(CG)!.members.has('c2')).to.equal(true);
    await h.advance(2000, 1000);
    expect(h.coordinator.consumerGroup(CG)!.members.has('c2')).to.equal(false);
  });
});

/** ConsumerProtocolSubscription v1 bytes with the partitions the member owns. */
function ownedSubscription(topics: string[], owned: string[]): Buffer {
  const byTopic = new Map<string, number[]>();
  for (const tp of owned) {
    const i = tp.lastIndexOf('-');
    byTopic.set(tp.slice(0, i), [...(byTopic.get(tp.slice(0, i)) ?? []), Number(tp.slice(i + 1))]);
  }
  const w = new Writer();
  w.int16(1);
  w.int32(topics.length);
  for (const t of topics) w.string(t);
  w.nullableBytes(null);
  w.int32(byTopic.size);
  for (const [t, ps] of byTopic) {
    w.string(t);
    w.int32(ps.length);
    for (const p of ps) w.int32(p);
  }
  return w.finishOne();
}

describe('consumer groups: the online upgrade of a classic group', () => {
  it('a consumer member joining a classic group of the consumer protocol upgrades it; the classic members rejoin and revoke', async () => {
    const h = await Harness.start();
    h.topics.set('t', 4);
    // A classic group of two members, each with two partitions.
    const join = (memberId: string, owned: string[]) => h.coordinator.joinGroup(joinRequest(G, {
      memberId, protocols: [{ name: 'cooperative-sticky', metadata: ownedSubscription(['t'], owned) }],
    }));
    const x = await h.joinNew(G, { protocols: [{ name: 'cooperative-sticky', metadata: ownedSubscription(['t'], []) }] });
    const y = await h.joinNew(G, { protocols: [{ name: 'cooperative-sticky', metadata: ownedSubscription(['t'], []) }] });
    await h.advance(100);
    const generation = x.join.value!.generationId;
    const assignment = (ps: string[]) => encodeAssignment([{ topic: 't', partitions: ps.map((p) => Number(p.split('-')[1])) }], 1);
    const leaderId = x.join.value!.leader;
    const followerId = leaderId === x.memberId ? y.memberId : x.memberId;
    h.sync(G, followerId, generation);
    const synced = h.sync(G, leaderId, generation, [[leaderId, assignment(['t-0', 't-1'])], [followerId, assignment(['t-2', 't-3'])]]);
    await flush();
    expect(synced.value!.errorCode).to.equal(0);

    const a = new Member(h, 'a', { groupId: G });
    const r = await a.join(['t']);
    expect(r).to.include({ errorCode: 0, memberEpoch: generation + 1 });
    expect(a.partitions()).to.deep.equal([]);
    expect(h.coordinator.listGroups([], []).groups.map((g) => `${g.groupId}:${g.type}`)).to.deep.equal(['g:consumer']);
    const described = h.coordinator.consumerGroupDescribe(G);
    expect(described.members.map((m) => [m.memberId, m.memberType, m.assignment.flatMap((t) => t.partitions).length]).sort())
      .to.deep.equal([[leaderId, 0, 2], [followerId, 0, 2], ['a', 1, 0]].sort());
    expect(h.store.writes.some((w) => w.kind === 'deleteGroup' && w.groupId === G)).to.equal(true);

    // The classic members are told to rejoin; they report what they own, revoke what they must, and rejoin.
    const classic = async (memberId: string, owned: string[]) => {
      expect(h.coordinator.heartbeat(G, memberId, null, generation)).to.equal(ErrorCode.REBALANCE_IN_PROGRESS);
      const j = await join(memberId, owned);
      const s = await h.coordinator.syncGroup({ groupId: G, memberId, generationId: j.generationId, groupInstanceId: null, protocolType: 'consumer', protocolName: 'cooperative-sticky', assignments: [] });
      return assignedIn(s.assignment);
    };
    const leaderKeeps = await classic(leaderId, ['t-0', 't-1']);
    const followerKeeps = await classic(followerId, ['t-2', 't-3']);
    await join(leaderId, leaderKeeps);
    await join(followerId, followerKeeps);
    await settle([a]);
    const all = [...a.partitions(), ...leaderKeeps, ...followerKeeps].sort();
    expect(all).to.deep.equal(['t-0', 't-1', 't-2', 't-3']);
    expect(a.partitions().length).to.be.greaterThan(0);
  });

  it('when the last member of ConsumerGroupHeartbeat leaves, the classic members have a classic group again, which rebalances', async () => {
    const h = await Harness.start();
    h.topics.set('t', 2);
    const a = new Member(h, 'a', { groupId: G });
    await a.join(['t']);
    const classicJoin = (memberId: string) => h.coordinator.joinGroup(joinRequest(G, { memberId }));
    const joined = await classicJoin('c');
    expect(joined).to.include({ errorCode: 0, generationId: 2 });
    await a.leave();
    expect(h.coordinator.consumerGroup(G)).to.equal(undefined);
    const group = h.coordinator.group(G)!;
    expect([group.state, group.generationId, [...group.members.keys()].join()]).to.deep.equal(['PreparingRebalance', 3, 'c']);
    // Written at once, before the rebalance: the tombstones, then the classic group with c and its assignment.
    const [tombstones, record] = h.store.writes.slice(-2);
    expect(tombstones.kind === 'consumerGroup' && tombstones.records.every((r) => r.value === null)).to.equal(true);
    expect(record.kind === 'group' && [record.group.generationId, record.group.protocolType, record.group.members.map((m) => m.memberId)])
      .to.deep.equal([3, 'consumer', ['c']]);
    expect(record.kind === 'group' && record.group.members[0].assignment.length).to.be.greaterThan(0);
    // The classic member is told to rejoin, and the group goes on as a classic one.
    expect(h.coordinator.heartbeat(G, 'c', null, 2)).to.equal(ErrorCode.ILLEGAL_GENERATION);
    expect(h.coordinator.heartbeat(G, 'c', null, 3)).to.equal(ErrorCode.REBALANCE_IN_PROGRESS);
    const rejoin = track(classicJoin('c'));
    await h.advance(100);
    expect(rejoin.value).to.include({ errorCode: 0, generationId: 4, leader: 'c' });
    expect(h.coordinator.listGroups([], []).groups.map((g) => `${g.groupId}:${g.type}`)).to.deep.equal(['g:classic']);
  });

  it('is refused for a classic group larger than group.consumer.max.size, and with group.consumer.migration.policy off', async () => {
    for (const [config, message] of [
      [{ consumerMaxSize: 1 }, 'the group size exceeds the consumer group maximum size'],
      [{ consumerMigrationPolicy: 'downgrade' }, 'online upgrade is disabled'],
    ] as const) {
      const h = await Harness.start(config);
      await stableGroup(h, ['c1', 'c2']);
      expect(await new Member(h, 'a', { groupId: G }).join(['t'])).to.include({
        errorCode: ErrorCode.GROUP_ID_NOT_FOUND, errorMessage: `Cannot upgrade classic group g to consumer group because ${message}.`,
      });
      expect(h.coordinator.consumerGroup(G)).to.equal(undefined);
    }
  });
});

describe('consumer groups: ids shared with classic groups, and the other group APIs', () => {
  it('a classic group\'s id is not a consumer group\'s', async () => {
    const h = await Harness.start();
    await stableGroup(h, ['c1']);
    expect(await h.coordinator.consumerGroupHeartbeat(request({ groupId: G, memberId: 'm', memberEpoch: 1 }))).to.include({
      errorCode: ErrorCode.GROUP_ID_NOT_FOUND, errorMessage: 'Group g is not a consumer group.',
    });
    const { join } = await h.joinNew('connect-group', { protocolType: 'connect' });
    await h.advance(100);
    expect(join.value!.errorCode).to.equal(0);
    expect(await h.coordinator.consumerGroupHeartbeat(request({ groupId: 'connect-group', memberId: 'm', rebalanceTimeoutMs: 1000, subscribedTopicNames: [], topicPartitions: [] })))
      .to.include({
        errorCode: ErrorCode.GROUP_ID_NOT_FOUND,
        errorMessage: 'Cannot upgrade classic group connect-group to consumer group because the group does not use the consumer embedded protocol.',
      });
    expect(h.coordinator.consumerGroupDescribe(G)).to.include({ errorCode: ErrorCode.GROUP_ID_NOT_FOUND, errorMessage: 'Group g is not a consumer group.' });
    expect(h.coordinator.consumerGroupDescribe('nope')).to.include({ errorCode: ErrorCode.GROUP_ID_NOT_FOUND, errorMessage: 'Group nope not found.' });
  });

  it('lists both kinds with their types, describes a consumer group to DescribeGroups as Dead, deletes only empty ones', async () => {
    const h = await Harness.start();
    await stableGroup(h, ['c1']);
    h.topics.set('t', 1);
    const a = new Member(h, 'a');
    await a.join(['t']);
    const listed = h.coordinator.listGroups([], []).groups.map((g) => `${g.groupId}:${g.type}:${g.state}`).sort();
    expect(listed).to.deep.equal(['cg:consumer:Stable', 'g:classic:Stable']);
    expect(h.coordinator.listGroups([], ['Consumer']).groups.map((g) => g.groupId)).to.deep.equal([CG]);
    expect(h.coordinator.listGroups(['STABLE'], []).groups.map((g) => g.groupId).sort()).to.deep.equal([CG, G]);
    expect(h.coordinator.describeGroup(CG)).to.include({
      errorCode: ErrorCode.GROUP_ID_NOT_FOUND, errorMessage: 'Group cg is not a classic group.', state: 'Dead',
    });
    expect(await h.coordinator.deleteGroups([CG])).to.deep.equal([{ groupId: CG, errorCode: ErrorCode.NON_EMPTY_GROUP }]);
    await a.leave();
    expect(await h.coordinator.deleteGroups([CG])).to.deep.equal([{ groupId: CG, errorCode: 0 }]);
    expect(h.coordinator.consumerGroup(CG)).to.equal(undefined);
  });

  it('commits offsets with the member epoch (OffsetCommit v9+), and they stay when the group empties', async () => {
    const h = await Harness.start();
    h.topics.set('t', 1);
    const a = new Member(h, 'a');
    await a.join(['t']);
    const commit = (memberId: string, generationId: number, apiVersion = 9) => h.coordinator.commitOffsets({
      groupId: CG, memberId, generationId, groupInstanceId: null, apiVersion, retentionTimeMs: -1,
      partitions: [{ topic: 't', partition: 0, offset: 42, leaderEpoch: -1, metadata: 'm', commitTimestamp: -1 }],
    });
    expect(await commit('a', 0)).to.deep.equal([ErrorCode.STALE_MEMBER_EPOCH]);
    expect(await commit('zz', 1)).to.deep.equal([ErrorCode.UNKNOWN_MEMBER_ID]);
    expect(await commit('a', 1, 8)).to.deep.equal([ErrorCode.UNSUPPORTED_VERSION]);
    expect(await commit('', -1)).to.deep.equal([ErrorCode.UNKNOWN_MEMBER_ID]);
    expect(await commit('a', 1)).to.deep.equal([0]);
    // TxnOffsetCommit: at the member epoch, or without any member fields (before v3).
    const txnCommit = (memberId: string, generationId: number) => h.coordinator.commitTxnOffsets({
      groupId: CG, producerId: 7, producerEpoch: 0, generationId, memberId, groupInstanceId: null,
      partitions: [{ topic: 't', partition: 0, offset: 50, leaderEpoch: -1, metadata: null }],
    });
    expect(await txnCommit('a', 0)).to.deep.equal([ErrorCode.STALE_MEMBER_EPOCH]);
    expect(await txnCommit('a', 1)).to.deep.equal([0]);
    expect(await txnCommit('', -1)).to.deep.equal([0]);
    expect(h.coordinator.fetchOffsets(CG, [{ name: 't', partitions: [0] }], false).topics[0].partitions[0]).to.include({ offset: 42 });
    // The offsets do not make it a classic group.
    expect(h.coordinator.listGroups([], []).groups.map((g) => `${g.groupId}:${g.type}`)).to.deep.equal(['cg:consumer']);
    await a.leave();
    expect(await commit('', -1)).to.deep.equal([0]);
    expect(h.coordinator.fetchOffsets(CG, null, false).topics).to.have.length(1);
  });

  it('a commit at an older member epoch counts for the partitions the member owned at that epoch (Kafka 4.4, KIP-1251)', async () => {
    const h = await Harness.start();
    h.topics.set('t', 4);
    const a = new Member(h, 'a');
    const b = new Member(h, 'b');
    await a.join(['t']);
    await b.join(['t']);
    await a.heartbeat();
    expect((await a.heartbeat()).memberEpoch).to.equal(2);
    await b.heartbeat();
    expect(b.epoch).to.equal(2);
    const partitionsOf = (m: Member) => m.partitions().map((p) => Number(p.split('-')[1]));
    const aKept = partitionsOf(a);
    const bOwn = partitionsOf(b);
    expect(aKept).to.have.length(2);
    expect(bOwn).to.have.length(2);
    const commit = (memberId: string, generationId: number, partitions: number[]) => h.coordinator.commitOffsets({
      groupId: CG, memberId, generationId, groupInstanceId: null, apiVersion: 10, retentionTimeMs: -1,
      partitions: partitions.map((partition) => ({ topic: 't', partition, offset: 7, leaderEpoch: -1, metadata: '', commitTimestamp: -1 })),
    });
    // a kept two of its partitions from epoch 1: a commit at epoch 1 counts for them, not for those now b's.
    expect(await commit('a', 1, [...aKept, ...bOwn])).to.deep.equal([0, 0, ErrorCode.STALE_MEMBER_EPOCH, ErrorCode.STALE_MEMBER_EPOCH]);
    // b got its partitions at epoch 2: nothing older counts; nor does an epoch it never had.
    expect(await commit('b', 1, bOwn)).to.deep.equal([ErrorCode.STALE_MEMBER_EPOCH, ErrorCode.STALE_MEMBER_EPOCH]);
    expect(await commit('b', 3, bOwn)).to.deep.equal([ErrorCode.STALE_MEMBER_EPOCH, ErrorCode.STALE_MEMBER_EPOCH]);
    expect(await commit('b', 2, bOwn)).to.deep.equal([0, 0]);
    // A partition being revoked still counts at the epoch it was assigned at.
    expect(await a.heartbeat({ subscribedTopicNames: [] })).to.include({ memberEpoch: 2 });
    const revoking = [...h.coordinator.consumerGroup(CG)!.members.get('a')!.pendingRevocation.values()].flatMap((ps) => [...ps.keys()]);
    expect(revoking.sort()).to.deep.equal([...aKept].sort());
    expect(await commit('a', 1, revoking)).to.deep.equal([0, 0]);
    // Only what was accepted was written.
    const written = h.store.writes.flatMap((w) => (w.kind === 'offsets' ? w.offsets.map((o) => o.partition) : []));
    expect(written).to.deep.equal([...aKept, ...bOwn, ...revoking]);
  });

  it('expires the offsets of topics the group does not subscribe to; once empty, the group goes with its last offsets', async () => {
    const h = await Harness.start({ offsetsRetentionMs: 60_000 });
    h.topics.set('t', 1);
    h.topics.set('old', 1);
    const a = new Member(h, 'a');
    await a.join(['t']);
    const commit = (topic: string) => h.coordinator.commitOffsets({
      groupId: CG, memberId: 'a', generationId: 1, groupInstanceId: null, apiVersion: 9, retentionTimeMs: -1,
      partitions: [{ topic, partition: 0, offset: 1, leaderEpoch: -1, metadata: '', commitTimestamp: -1 }],
    });
    expect([...await commit('t'), ...await commit('old')]).to.deep.equal([0, 0]);
    const committed = () => h.coordinator.fetchOffsets(CG, null, false).topics.map((t) => t.name).sort();
    h.coordinator.expireOffsets(h.now + 61_000);
    await flush();
    expect(committed()).to.deep.equal(['t']);
    expect(h.coordinator.consumerGroup(CG)).to.not.equal(undefined);
    await a.leave();
    h.coordinator.expireOffsets(h.now + 61_000);
    await flush();
    expect(committed()).to.deep.equal([]);
    expect(h.coordinator.consumerGroup(CG)).to.equal(undefined);
    const deletion = h.store.writes.at(-1)!;
    expect(deletion.kind).to.equal('deleteGroup');
    expect(deletion.kind === 'deleteGroup' && deletion.consumerTombstones!.map((r) => r.kind).slice(-2)).to.deep.equal(['targetEpoch', 'groupEpoch']);
  });

  it('an empty consumer group gives way to a classic member joining, and an empty classic group to a consumer member', async () => {
    const h = await Harness.start();
    const a = new Member(h, 'a', { groupId: G });
    await a.join([]);
    await a.leave();
    const { memberId, join } = await h.joinNew(G, { clientId: 'classic' });
    await h.advance(100);
    expect(join.value!.errorCode).to.equal(0);
    expect(h.coordinator.consumerGroup(G)).to.equal(undefined);
    expect((await h.coordinator.leaveGroup(G, [{ memberId, groupInstanceId: null }])).errorCode).to.equal(0);
    expect((await a.join([])).errorCode).to.equal(0);
    expect(h.coordinator.listGroups([], []).groups.map((g) => `${g.groupId}:${g.type}`)).to.deep.equal(['g:consumer']);
  });
});
