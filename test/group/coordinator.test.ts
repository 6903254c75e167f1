// The classic group coordinator's state machine on a fake clock and an in-memory store: Kafka's
// rules, and the ugly orders (a join during a sync, the leader leaving mid-rebalance, a stale
// generation's heartbeat, a session ending during CompletingRebalance, static members restarting).
import { expect } from 'chai';
import { ErrorCode } from '../../src/common/errors';
import { GroupState } from '../../src/group/group';
import type { LoadedGroup } from '../../src/group/store';
import { FakeStore, Harness, flush, joinRequest, subscription } from './fakes';

const G = 'g';
const buf = (s: string): Buffer => Buffer.from(s);

/** A Stable group of the members named (the first leads), each with an assignment "a-<name>". */
async function stableGroup(h: Harness, clients: string[], opts: { rebalanceTimeoutMs?: number; sessionTimeoutMs?: number } = {}) {
  const ids: string[] = [];
  const joins = [];
  for (const clientId of clients) {
    const { memberId, join } = await h.joinNew(G, { clientId, ...opts });
    ids.push(memberId);
    joins.push(join);
  }
  await h.advance(100); // initial delay 0: the first generation forms on the timer
  for (const j of joins) expect(j.value?.errorCode).to.equal(ErrorCode.NONE);
  const generation = joins[0].value!.generationId;
  const leader = joins[0].value!.leader;
  expect(leader).to.equal(ids[0]);
  const syncs = ids.map((id) => h.sync(G, id, generation, id === leader ? ids.map((m, i) => [m, buf(`a-${clients[i]}`)] as [string, Buffer]) : []));
  await flush();
  for (const s of syncs) expect(s.value?.errorCode).to.equal(ErrorCode.NONE);
  expect(h.coordinator.group(G)!.state).to.equal(GroupState.Stable);
  return { ids, generation };
}

describe('group coordinator: join and sync', () => {
  it('hands out a member id first (KIP-394), then forms generation 1 with the first member leading', async () => {
    const h = await Harness.start();
    const first = await h.coordinator.joinGroup({ ...joinRequest(G), clientId: 'c1' });
    expect(first.errorCode).to.equal(ErrorCode.MEMBER_ID_REQUIRED);
    expect(first.memberId).to.match(/^c1-[0-9a-f-]{36}$/);
    const a = h.join(G, { memberId: first.memberId, clientId: 'c1' });
    const b = await h.joinNew(G, { clientId: 'c2' });
    await h.advance(100);
    expect(a.value).to.include({ errorCode: 0, generationId: 1, leader: first.memberId, protocolName: 'range', protocolType: 'consumer' });
    expect(a.value!.members.map((m) => m.memberId)).to.deep.equal([first.memberId, b.memberId]);
    expect(b.join.value).to.include({ errorCode: 0, generationId: 1, leader: first.memberId });
    expect(b.join.value!.members).to.deep.equal([]);
    expect(h.coordinator.group(G)!.state).to.equal(GroupState.CompletingRebalance);
  });

  it('joins without member id directly before v4', async () => {
    const h = await Harness.start();
    const j = h.join(G, { requireKnownMemberId: false, clientId: 'old' });
    await h.advance(100);
    expect(j.value!.errorCode).to.equal(ErrorCode.NONE);
    expect(j.value!.memberId).to.match(/^old-/);
  });

  it('delays the first rebalance by group.initial.rebalance.delay.ms, extended by new arrivals up to the rebalance timeout', async () => {
    const h = await Harness.start({ initialRebalanceDelayMs: 3000 });
    const a = await h.joinNew(G, { clientId: 'a', rebalanceTimeoutMs: 7000 });
    await h.advance(2000);
    const b = await h.joinNew(G, { clientId: 'b', rebalanceTimeoutMs: 7000 });
    await h.advance(1500); // 3.5 s: the first delay ended with a newcomer: one more delay, to 6 s
    expect(a.join.done).to.equal(false);
    await h.advance(1500); // 5 s: another newcomer; the next delay is cut to what is left of the rebalance timeout
    const c = await h.joinNew(G, { clientId: 'c', rebalanceTimeoutMs: 7000 });
    await h.advance(1900); // 6.9 s
    expect(a.join.done).to.equal(false);
    await h.advance(200); // 7.1 s
    expect(a.join.value!.errorCode).to.equal(ErrorCode.NONE);
    expect(a.join.value!.members).to.have.length(3);
    expect(b.join.value!.generationId).to.equal(1);
    expect(c.join.value!.generationId).to.equal(1);
  });

  it('chooses the protocol by the members\' votes among those all support, and refuses members that share none', async () => {
    const h = await Harness.start();
    const p = (...names: string[]) => names.map((name) => ({ name, metadata: buf(name) }));
    const a = await h.joinNew(G, { protocols: p('range', 'roundrobin', 'sticky') });
    const b = await h.joinNew(G, { protocols: p('roundrobin', 'range') });
    const c = await h.joinNew(G, { protocols: p('roundrobin', 'sticky', 'range') });
    const bad = await h.coordinator.joinGroup({ ...joinRequest(G), protocols: p('cooperative-sticky') });
    expect(bad.errorCode).to.equal(ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
    const otherType = await h.coordinator.joinGroup({ ...joinRequest(G), protocolType: 'connect' });
    expect(otherType.errorCode).to.equal(ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
    await h.advance(100);
    expect(a.join.value!.protocolName).to.equal('roundrobin');
    // The leader sees each member's metadata for the chosen protocol.
    expect(a.join.value!.members.map((m) => m.metadata.toString())).to.deep.equal(['roundrobin', 'roundrobin', 'roundrobin']);
    expect(c.join.value!.protocolName).to.equal('roundrobin');
    expect(b.join.value!.errorCode).to.equal(0);
    // An empty protocol type or list never starts a group.
    const none = await h.coordinator.joinGroup({ ...joinRequest('other'), protocols: [] });
    expect(none.errorCode).to.equal(ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
  });

  it('gives every member the leader\'s bytes whole, empty bytes to members left out, after the group is written', async () => {
    const h = await Harness.start();
    const a = await h.joinNew(G, { clientId: 'a' });
    const b = await h.joinNew(G, { clientId: 'b' });
    const c = await h.joinNew(G, { clientId: 'c' });
    await h.advance(100);
    const gen = a.join.value!.generationId;
    const big = Buffer.alloc(100_000, 7);
    const followerSync = h.sync(G, b.memberId, gen);
    await flush();
    expect(followerSync.done).to.equal(false);
    h.store.hold = true;
    const leaderSync = h.sync(G, a.memberId, gen, [[a.memberId, buf('for-a')], [b.memberId, big]]);
    await flush();
    expect(leaderSync.done).to.equal(false, 'answered before the group was written');
    expect(h.coordinator.group(G)!.state).to.equal(GroupState.CompletingRebalance);
    const written = h.store.groupWrites().at(-1)!;
    expect(written.generationId).to.equal(gen);
    expect(written.members.map((m) => [m.memberId, m.assignment.length])).to.deep.equal([[a.memberId, 5], [b.memberId, 100_000], [c.memberId, 0]]);
    h.store.release();
    await flush();
    expect(leaderSync.value).to.deep.include({ errorCode: 0, protocolType: 'consumer', protocolName: 'range' });
    expect(leaderSync.value!.assignment.toString()).to.equal('for-a');
    expect(followerSync.value!.assignment.equals(big)).to.equal(true);
    const late = h.sync(G, c.memberId, gen);
    await flush();
    expect(late.value!.errorCode).to.equal(0);
    expect(late.value!.assignment).to.be.instanceOf(Buffer);
    expect(late.value!.assignment.length).to.equal(0);
    expect(h.coordinator.group(G)!.state).to.equal(GroupState.Stable);
  });

  it('SyncGroup errors: unknown member, wrong generation, protocol mismatch, during a join phase', async () => {
    const h = await Harness.start();
    const { ids, generation } = await stableGroup(h, ['a', 'b']);
    expect((await h.coordinator.syncGroup({ groupId: G, memberId: 'nobody', generationId: generation, groupInstanceId: null, protocolType: null, protocolName: null, assignments: [] })).errorCode)
      .to.equal(ErrorCode.UNKNOWN_MEMBER_ID);
    const wrongGen = await h.coordinator.syncGroup({ groupId: G, memberId: ids[1], generationId: generation - 1, groupInstanceId: null, protocolType: null, protocolName: null, assignments: [] });
    expect(wrongGen.errorCode).to.equal(ErrorCode.ILLEGAL_GENERATION);
    const wrongName = await h.coordinator.syncGroup({ groupId: G, memberId: ids[1], generationId: generation, groupInstanceId: null, protocolType: 'consumer', protocolName: 'sticky', assignments: [] });
    expect(wrongName.errorCode).to.equal(ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
    const unknownGroup = await h.coordinator.syncGroup({ groupId: 'nope', memberId: 'x', generationId: 1, groupInstanceId: null, protocolType: null, protocolName: null, assignments: [] });
    expect(unknownGroup.errorCode).to.equal(ErrorCode.UNKNOWN_MEMBER_ID);
    h.join(G, { memberId: ids[0] }); // the leader rejoins: a join phase starts
    const during = await h.coordinator.syncGroup({ groupId: G, memberId: ids[1], generationId: generation, groupInstanceId: null, protocolType: null, protocolName: null, assignments: [] });
    expect(during.errorCode).to.equal(ErrorCode.REBALANCE_IN_PROGRESS);
  });
});

describe('group coordinator: the ugly orders', () => {
  it('a join while the leader\'s assignment is being written: everyone is told to rejoin, the late write changes nothing', async () => {
    const h = await Harness.start();
    const a = await h.joinNew(G, { clientId: 'a' });
    const b = await h.joinNew(G, { clientId: 'b' });
    await h.advance(100);
    const gen = a.join.value!.generationId;
    const followerSync = h.sync(G, b.memberId, gen);
    h.store.hold = true;
    const leaderSync = h.sync(G, a.memberId, gen, [[a.memberId, buf('x')], [b.memberId, buf('y')]]);
    await flush();
    const c = await h.joinNew(G, { clientId: 'c' });
    await flush();
    expect(h.coordinator.group(G)!.state).to.equal(GroupState.PreparingRebalance);
    expect(leaderSync.value!.errorCode).to.equal(ErrorCode.REBALANCE_IN_PROGRESS);
    expect(followerSync.value!.errorCode).to.equal(ErrorCode.REBALANCE_IN_PROGRESS);
    h.store.release();
    await flush();
    expect(h.coordinator.group(G)!.state).to.equal(GroupState.PreparingRebalance);
    expect(h.coordinator.group(G)!.get(a.memberId).assignment.length).to.equal(0);
    // Both old members rejoin; nobody is told UNKNOWN_MEMBER_ID.
    const ra = h.join(G, { memberId: a.memberId });
    const rb = h.join(G, { memberId: b.memberId });
    await flush();
    for (const r of [ra, rb, c.join]) expect(r.value).to.include({ errorCode: 0, generationId: gen + 1 });
  });

  it('members joining concurrently during a rebalance all get in (never UNKNOWN_MEMBER_ID)', async () => {
    const h = await Harness.start();
    const { ids, generation } = await stableGroup(h, ['a', 'b']);
    const rejoinA = h.join(G, { memberId: ids[0] });
    const newcomers = await Promise.all([h.joinNew(G, { clientId: 'c' }), h.joinNew(G, { clientId: 'd' })]);
    const rejoinB = h.join(G, { memberId: ids[1] });
    await flush();
    const all = [rejoinA, rejoinB, ...newcomers.map((n) => n.join)];
    for (const r of all) expect(r.value, 'answered once all joined').to.include({ errorCode: 0, generationId: generation + 1 });
    expect(rejoinA.value!.members).to.have.length(4);
  });

  it('the leader leaving mid-rebalance: the join phase ends with the members left, one of them leading', async () => {
    const h = await Harness.start();
    const { ids, generation } = await stableGroup(h, ['a', 'b', 'c']);
    const rb = h.join(G, { memberId: ids[1], protocols: [{ name: 'range', metadata: subscription(['t', 'u']) }] });
    const rc = h.join(G, { memberId: ids[2] });
    await flush();
    expect(h.coordinator.group(G)!.state).to.equal(GroupState.PreparingRebalance);
    const left = h.coordinator.leaveGroup(G, [{ memberId: ids[0], groupInstanceId: null }]);
    expect(left.members[0].errorCode).to.equal(0);
    await flush();
    expect(rb.value).to.include({ errorCode: 0, generationId: generation + 1, leader: ids[1] });
    expect(rc.value!.leader).to.equal(ids[1]);
    expect(rb.value!.members.map((m) => m.memberId)).to.deep.equal([ids[1], ids[2]]);
  });

  it('a leader that does not rejoin by the rebalance timeout is dropped and replaced', async () => {
    const h = await Harness.start();
    const { ids, generation } = await stableGroup(h, ['a', 'b'], { rebalanceTimeoutMs: 10_000, sessionTimeoutMs: 60_000 });
    const rb = h.join(G, { memberId: ids[1], protocols: [{ name: 'range', metadata: subscription(['u']) }], rebalanceTimeoutMs: 10_000, sessionTimeoutMs: 60_000 });
    h.heartbeat(G, ids[0], generation); // the leader is alive but never rejoins
    await h.advance(9_900);
    expect(rb.done).to.equal(false);
    await h.advance(200);
    expect(rb.value).to.include({ errorCode: 0, generationId: generation + 1, leader: ids[1] });
    expect(h.coordinator.group(G)!.has(ids[0])).to.equal(false);
    expect(h.heartbeat(G, ids[0], generation)).to.equal(ErrorCode.UNKNOWN_MEMBER_ID);
  });

  it('a group stuck in PreparingRebalance (a member never rejoins) finishes at the rebalance timeout', async () => {
    const h = await Harness.start();
    const { ids, generation } = await stableGroup(h, ['a', 'b', 'c'], { rebalanceTimeoutMs: 5000, sessionTimeoutMs: 60_000 });
    const ra = h.join(G, { memberId: ids[0], rebalanceTimeoutMs: 5000, sessionTimeoutMs: 60_000 });
    const rb = h.join(G, { memberId: ids[1], rebalanceTimeoutMs: 5000, sessionTimeoutMs: 60_000 });
    await h.advance(4900);
    expect(ra.done).to.equal(false);
    await h.advance(200);
    expect(ra.value!.members.map((m) => m.memberId)).to.deep.equal([ids[0], ids[1]]);
    expect(rb.value!.generationId).to.equal(generation + 1);
  });

  it('heartbeats: stale generation ILLEGAL_GENERATION, rebalance REBALANCE_IN_PROGRESS, unknown member, empty group id', async () => {
    const h = await Harness.start();
    const { ids, generation } = await stableGroup(h, ['a', 'b']);
    expect(h.heartbeat(G, ids[1], generation)).to.equal(ErrorCode.NONE);
    expect(h.heartbeat(G, ids[1], generation - 1)).to.equal(ErrorCode.ILLEGAL_GENERATION);
    expect(h.heartbeat(G, 'ghost', generation)).to.equal(ErrorCode.UNKNOWN_MEMBER_ID);
    expect(h.heartbeat('nope', ids[1], generation)).to.equal(ErrorCode.UNKNOWN_MEMBER_ID);
    expect(h.heartbeat('', ids[1], generation)).to.equal(ErrorCode.INVALID_GROUP_ID);
    h.join(G, { memberId: ids[0] });
    expect(h.heartbeat(G, ids[1], generation)).to.equal(ErrorCode.REBALANCE_IN_PROGRESS);
    const rb = h.join(G, { memberId: ids[1] });
    await flush();
    // After the new generation forms, the old one is stale.
    expect(rb.value!.generationId).to.equal(generation + 1);
    expect(h.heartbeat(G, ids[1], generation)).to.equal(ErrorCode.ILLEGAL_GENERATION);
    expect(h.heartbeat(G, ids[1], generation + 1)).to.equal(ErrorCode.NONE);
  });

  it('a session ending during CompletingRebalance: the member goes and the members waiting in SyncGroup are told to rejoin', async () => {
    const h = await Harness.start();
    const a = await h.joinNew(G, { clientId: 'a', sessionTimeoutMs: 10_000, rebalanceTimeoutMs: 60_000 });
    const b = await h.joinNew(G, { clientId: 'b', sessionTimeoutMs: 10_000, rebalanceTimeoutMs: 60_000 });
    await h.advance(100);
    const gen = b.join.value!.generationId;
    const followerSync = h.sync(G, b.memberId, gen); // parked: the leader never syncs, never heartbeats
    await h.advance(9_800);
    expect(followerSync.done).to.equal(false);
    await h.advance(300);
    expect(followerSync.value!.errorCode).to.equal(ErrorCode.REBALANCE_IN_PROGRESS);
    const group = h.coordinator.group(G)!;
    expect(group.has(a.memberId)).to.equal(false);
    expect(group.state).to.equal(GroupState.PreparingRebalance);
    const rb = h.join(G, { memberId: b.memberId });
    await flush();
    expect(rb.value).to.include({ errorCode: 0, leader: b.memberId, generationId: gen + 1 });
  });

  it('members that never send SyncGroup are removed after the rebalance timeout', async () => {
    const h = await Harness.start();
    const a = await h.joinNew(G, { clientId: 'a', sessionTimeoutMs: 60_000, rebalanceTimeoutMs: 5000 });
    const b = await h.joinNew(G, { clientId: 'b', sessionTimeoutMs: 60_000, rebalanceTimeoutMs: 5000 });
    await h.advance(100);
    const gen = a.join.value!.generationId;
    const leaderSync = h.sync(G, a.memberId, gen, [[a.memberId, buf('x')]]);
    await flush();
    expect(leaderSync.value!.errorCode).to.equal(0);
    h.heartbeat(G, a.memberId, gen);
    await h.advance(5100);
    expect(h.coordinator.group(G)!.has(b.memberId)).to.equal(false);
    expect(h.heartbeat(G, a.memberId, gen)).to.equal(ErrorCode.REBALANCE_IN_PROGRESS);
  });

  it('a pending member id (MEMBER_ID_REQUIRED) not used within the session is forgotten', async () => {
    const h = await Harness.start();
    const first = await h.coordinator.joinGroup({ ...joinRequest(G), sessionTimeoutMs: 5000 });
    await h.advance(5100);
    const late = await h.coordinator.joinGroup({ ...joinRequest(G), memberId: first.memberId });
    expect(late.errorCode).to.equal(ErrorCode.UNKNOWN_MEMBER_ID);
  });

  it('a retried JoinGroup replaces the parked one, which is told to rejoin', async () => {
    const h = await Harness.start();
    const { ids } = await stableGroup(h, ['a', 'b']);
    const first = h.join(G, { memberId: ids[0] });
    await flush();
    const retry = h.join(G, { memberId: ids[0] });
    await flush();
    expect(first.value!.errorCode).to.equal(ErrorCode.REBALANCE_IN_PROGRESS);
    expect(retry.done).to.equal(false);
    h.join(G, { memberId: ids[1] });
    await flush();
    expect(retry.value!.errorCode).to.equal(ErrorCode.NONE);
  });
});

describe('group coordinator: limits and leaving', () => {
  it('INVALID_SESSION_TIMEOUT outside the broker\'s bounds, GROUP_MAX_SIZE_REACHED past group.max.size', async () => {
    const h = await Harness.start({ maxSize: 2 });
    expect((await h.coordinator.joinGroup({ ...joinRequest(G), sessionTimeoutMs: 500 })).errorCode).to.equal(ErrorCode.INVALID_SESSION_TIMEOUT);
    expect((await h.coordinator.joinGroup({ ...joinRequest(G), sessionTimeoutMs: 400_000 })).errorCode).to.equal(ErrorCode.INVALID_SESSION_TIMEOUT);
    await stableGroup(h, ['a', 'b']);
    const third = await h.coordinator.joinGroup({ ...joinRequest(G) });
    expect(third).to.include({ errorCode: ErrorCode.GROUP_MAX_SIZE_REACHED, memberId: '' });
    expect((await h.coordinator.joinGroup({ ...joinRequest('') })).errorCode).to.equal(ErrorCode.INVALID_GROUP_ID);
    expect((await h.coordinator.joinGroup({ ...joinRequest('unknown'), memberId: 'm' })).errorCode).to.equal(ErrorCode.UNKNOWN_MEMBER_ID);
  });

  it('LeaveGroup: by member id, by instance id alone, unknown members, unknown group', async () => {
    const h = await Harness.start();
    const s = await h.coordinator.joinGroup({ ...joinRequest(G), groupInstanceId: 'inst-1' });
    expect(s.errorCode).to.equal(0);
    const res = h.coordinator.leaveGroup(G, [
      { memberId: '', groupInstanceId: 'inst-1' },
      { memberId: 'ghost', groupInstanceId: null },
      { memberId: '', groupInstanceId: 'inst-9' },
    ]);
    expect(res.members.map((m) => m.errorCode)).to.deep.equal([0, ErrorCode.UNKNOWN_MEMBER_ID, ErrorCode.UNKNOWN_MEMBER_ID]);
    const none = h.coordinator.leaveGroup('nope', [{ memberId: 'x', groupInstanceId: null }]);
    expect(none).to.deep.equal({ errorCode: 0, members: [{ memberId: 'x', groupInstanceId: null, errorCode: ErrorCode.UNKNOWN_MEMBER_ID }] });
    await h.advance(100);
    expect(h.coordinator.group(G)!.state).to.equal(GroupState.Empty);
  });

  it('the last member leaving empties the group, writes it, and leaves no timer behind', async () => {
    const h = await Harness.start();
    const { ids, generation } = await stableGroup(h, ['a', 'b']);
    h.coordinator.leaveGroup(G, [{ memberId: ids[0], groupInstanceId: null }, { memberId: ids[1], groupInstanceId: null }]);
    await flush();
    const group = h.coordinator.group(G)!;
    expect(group.state).to.equal(GroupState.Empty);
    expect(group.generationId).to.equal(generation + 1);
    expect(h.store.groupWrites().at(-1)).to.deep.include({ generationId: generation + 1, protocolName: null, members: [] });
    expect(h.coordinator.scheduledTimers).to.deep.equal(['offsets-retention']);
    expect(await h.coordinator.deleteGroups([G])).to.deep.equal([{ groupId: G, errorCode: 0 }]);
    expect(h.coordinator.group(G)).to.equal(undefined);
    expect(h.coordinator.scheduledTimers).to.deep.equal(['offsets-retention']);
  });
});

describe('group coordinator: static membership (KIP-345)', () => {
  const STATIC = { groupInstanceId: 'inst-a' };

  async function staticGroup(h: Harness) {
    const s = h.join(G, { ...STATIC, clientId: 'a' });
    const d = await h.joinNew(G, { clientId: 'b' });
    await h.advance(100);
    const sId = s.value!.memberId;
    expect(sId).to.match(/^inst-a-/);
    const gen = s.value!.generationId;
    expect(s.value!.leader).to.equal(sId);
    h.sync(G, d.memberId, gen);
    const ls = h.sync(G, sId, gen, [[sId, buf('a-part')], [d.memberId, buf('b-part')]], STATIC);
    await flush();
    expect(ls.value!.errorCode).to.equal(0);
    return { sId, dId: d.memberId, gen };
  }

  it('a static member restarting rejoins without a rebalance and gets its assignment back', async () => {
    const h = await Harness.start();
    const { sId, dId, gen } = await staticGroup(h);
    const writesBefore = h.store.groupWrites().length;
    const again = h.join(G, { ...STATIC, clientId: 'a' });
    await flush();
    expect(again.value!.errorCode).to.equal(0);
    const newId = again.value!.memberId;
    expect(newId).to.not.equal(sId);
    // The old leader id is named so the restarted leader does not compute an assignment.
    expect(again.value).to.include({ generationId: gen, leader: sId, skipAssignment: false });
    expect(again.value!.members).to.deep.equal([]);
    const group = h.coordinator.group(G)!;
    expect(group.state).to.equal(GroupState.Stable);
    expect(h.store.groupWrites()).to.have.length(writesBefore + 1);
    expect(h.store.groupWrites().at(-1)!.members.map((m) => m.memberId)).to.include(newId);
    const sync = h.sync(G, newId, gen, [], STATIC);
    await flush();
    expect(sync.value!.assignment.toString()).to.equal('a-part');
    expect(h.heartbeat(G, dId, gen)).to.equal(ErrorCode.NONE);
    // The old incarnation is fenced.
    expect(h.heartbeat(G, sId, gen, 'inst-a')).to.equal(ErrorCode.FENCED_INSTANCE_ID);
    const stale = await h.coordinator.joinGroup({ ...joinRequest(G), memberId: sId, ...STATIC });
    expect(stale.errorCode).to.equal(ErrorCode.FENCED_INSTANCE_ID);
  });

  it('a static follower that restarts before its first SyncGroup syncs under its new id without a rebalance', async () => {
    const h = await Harness.start();
    const leader = await h.joinNew(G, { clientId: 'lead' });
    const s = h.join(G, { ...STATIC, clientId: 'a' });
    await h.advance(100);
    const gen = leader.join.value!.generationId;
    const ls = h.sync(G, leader.memberId, gen, [[leader.memberId, buf('l')], [s.value!.memberId, buf('s')]]);
    await flush();
    expect(ls.value!.errorCode).to.equal(0);
    const again = h.join(G, { ...STATIC, clientId: 'a' });
    await flush();
    const sync = h.sync(G, again.value!.memberId, gen, [], STATIC);
    await flush();
    expect(sync.value!.assignment.toString()).to.equal('s');
    await h.advance(10_100, 1000); // past the sync deadline: nobody owes a SyncGroup
    expect(h.coordinator.group(G)!.state).to.equal(GroupState.Stable);
  });

  it('v9: a restarted static leader is told it leads but to skip the assignment (KIP-814)', async () => {
    const h = await Harness.start();
    const { gen } = await staticGroup(h);
    const again = h.join(G, { ...STATIC, clientId: 'a', supportSkippingAssignment: true });
    await flush();
    expect(again.value).to.include({ errorCode: 0, generationId: gen, leader: again.value!.memberId, skipAssignment: true });
    expect(again.value!.members).to.have.length(2);
  });

  it('a failed write undoes the replacement: the old member id is still the one', async () => {
    const h = await Harness.start();
    const { sId, gen } = await staticGroup(h);
    h.store.failWith = ErrorCode.NOT_COORDINATOR;
    const again = h.join(G, { ...STATIC });
    await flush();
    expect(again.value).to.include({ errorCode: ErrorCode.NOT_COORDINATOR, memberId: '' });
    expect(h.heartbeat(G, sId, gen, 'inst-a')).to.equal(ErrorCode.NONE);
  });

  it('a static member parked in SyncGroup is fenced when a new incarnation takes over during CompletingRebalance', async () => {
    const h = await Harness.start();
    const s = h.join(G, { ...STATIC });
    const d = await h.joinNew(G, { clientId: 'b' });
    await h.advance(100);
    const gen = s.value!.generationId;
    const followerIsStatic = h.sync(G, d.memberId, gen);
    await flush();
    // The static member (leader) restarts before syncing.
    const again = h.join(G, { ...STATIC });
    await flush();
    expect(followerIsStatic.value!.errorCode).to.equal(ErrorCode.REBALANCE_IN_PROGRESS);
    expect(h.coordinator.group(G)!.state).to.equal(GroupState.PreparingRebalance);
    h.join(G, { memberId: d.memberId });
    await flush();
    expect(again.value).to.include({ errorCode: 0, generationId: gen + 1 });
  });

  it('an unknown instance id with a member id is UNKNOWN_MEMBER_ID; static members survive a missed join phase until their session ends', async () => {
    const h = await Harness.start();
    const { sId, dId, gen } = await staticGroup(h);
    expect(h.heartbeat(G, dId, gen, 'inst-z')).to.equal(ErrorCode.UNKNOWN_MEMBER_ID);
    const rd = h.join(G, { memberId: dId, protocols: [{ name: 'range', metadata: subscription(['x']) }] });
    h.heartbeat(G, sId, gen, 'inst-a');
    await h.advance(9_900);
    expect(rd.done).to.equal(false);
    await h.advance(200); // the rebalance timeout (10 s, the largest of the members')
    // The static member did not rejoin: it stays, and the group moves on with the members that did.
    expect(rd.value).to.include({ errorCode: 0, generationId: gen + 1, leader: dId });
    expect(rd.value!.members.map((m) => m.memberId)).to.include(sId);
  });
});

describe('group coordinator: offsets', () => {
  const part = (topic: string, partition: number, offset: number, metadata: string | null = null) =>
    ({ topic, partition, offset, leaderEpoch: 3, metadata, commitTimestamp: -1 });
  const commit = (h: Harness, generationId: number, memberId: string, partitions: ReturnType<typeof part>[], extra: { groupId?: string; apiVersion?: number; retentionTimeMs?: number } = {}) =>
    h.coordinator.commitOffsets({ groupId: extra.groupId ?? G, generationId, memberId, groupInstanceId: null, apiVersion: extra.apiVersion ?? 8, retentionTimeMs: extra.retentionTimeMs ?? -1, partitions });

  it('a standalone consumer (generation -1) commits to an empty group; metadata round-trips', async () => {
    const h = await Harness.start();
    expect(await commit(h, -1, '', [part('t', 0, 10, 'hello'), part('t', 1, 20)])).to.deep.equal([0, 0]);
    const fetched = h.coordinator.fetchOffsets(G, [{ name: 't', partitions: [0, 1, 2] }], false);
    expect(fetched.topics[0].partitions).to.deep.equal([
      { partition: 0, offset: 10, leaderEpoch: 3, metadata: 'hello', errorCode: 0 },
      { partition: 1, offset: 20, leaderEpoch: 3, metadata: '', errorCode: 0 },
      { partition: 2, offset: -1, leaderEpoch: -1, metadata: '', errorCode: 0 },
    ]);
    expect(h.coordinator.fetchOffsets(G, null, false).topics).to.have.length(1);
    expect(h.coordinator.fetchOffsets('nope', null, false)).to.deep.equal({ errorCode: 0, topics: [] });
    expect(h.coordinator.group(G)!.state).to.equal(GroupState.Empty);
    expect(h.coordinator.group(G)!.protocolType).to.equal(null);
    expect(h.store.writes.at(-1)).to.deep.include({ kind: 'offsets', groupId: G });
  });

  it('commit rules: generation, membership, rebalance, metadata size, unknown groups', async () => {
    const h = await Harness.start({ offsetMetadataMaxBytes: 10 });
    expect(await commit(h, 1, 'm', [part('t', 0, 1)], { apiVersion: 8 })).to.deep.equal([ErrorCode.ILLEGAL_GENERATION]);
    expect(await commit(h, 1, 'm', [part('t', 0, 1)], { apiVersion: 9 })).to.deep.equal([ErrorCode.GROUP_ID_NOT_FOUND]);
    const a = await h.joinNew(G, { clientId: 'a' });
    const b = await h.joinNew(G, { clientId: 'b' });
    await h.advance(100);
    const gen = a.join.value!.generationId;
    // Between JoinGroup and SyncGroup: finish the rebalance first.
    expect(await commit(h, gen, a.memberId, [part('t', 0, 1)])).to.deep.equal([ErrorCode.REBALANCE_IN_PROGRESS]);
    h.sync(G, b.memberId, gen);
    h.sync(G, a.memberId, gen, []);
    await flush();
    expect(await commit(h, gen, a.memberId, [part('t', 0, 5, 'short'), part('t', 1, 6, 'much too long')])).to.deep.equal([0, ErrorCode.OFFSET_METADATA_TOO_LARGE]);
    expect(await commit(h, gen - 1, a.memberId, [part('t', 0, 1)])).to.deep.equal([ErrorCode.ILLEGAL_GENERATION]);
    expect(await commit(h, gen, 'ghost', [part('t', 0, 1)])).to.deep.equal([ErrorCode.UNKNOWN_MEMBER_ID]);
    expect(await commit(h, -1, '', [part('t', 0, 1)])).to.deep.equal([ErrorCode.UNKNOWN_MEMBER_ID]);
    // During a join phase, members of the generation may still commit.
    h.join(G, { memberId: a.memberId });
    expect(await commit(h, gen, b.memberId, [part('t', 0, 7)])).to.deep.equal([0]);
    expect(h.coordinator.fetchOffsets(G, [{ name: 't', partitions: [0] }], false).topics[0].partitions[0].offset).to.equal(7);
  });

  it('the newest commit of a partition wins even if writes complete out of order', async () => {
    const h = await Harness.start();
    h.store.hold = true;
    const first = commit(h, -1, '', [part('t', 0, 1)]);
    const second = commit(h, -1, '', [part('t', 0, 2)]);
    h.store.release();
    await Promise.all([first, second]);
    expect(h.coordinator.fetchOffsets(G, [{ name: 't', partitions: [0] }], false).topics[0].partitions[0].offset).to.equal(2);
  });

  it('expires an Empty group\'s offsets offsets.retention.minutes after it emptied, then the group itself', async () => {
    const h = await Harness.start({ offsetsRetentionMs: 60_000, offsetsRetentionCheckIntervalMs: 10_000 });
    const { ids, generation } = await stableGroup(h, ['a'], { sessionTimeoutMs: 200_000 });
    expect(await commit(h, generation, ids[0], [part('t', 0, 1)])).to.deep.equal([0]);
    await h.advance(120_000, 1000);
    expect(h.coordinator.fetchOffsets(G, [{ name: 't', partitions: [0] }], false).topics[0].partitions[0].offset, 'a Stable group subscribed to t keeps it').to.equal(1);
    h.coordinator.leaveGroup(G, [{ memberId: ids[0], groupInstanceId: null }]);
    await h.advance(50_000, 1000);
    expect(h.coordinator.group(G)!.offsets.size).to.equal(1);
    await h.advance(20_000, 1000);
    expect(h.coordinator.group(G)).to.equal(undefined);
    expect(h.store.writes.at(-1)).to.deep.equal({ kind: 'deleteGroup', groupId: G, keys: [{ topic: 't', partition: 0 }] });
    expect(h.coordinator.scheduledTimers).to.deep.equal(['offsets-retention']);
  });

  it('a simple group\'s offsets expire by commit time; a per-offset retention (v2-4) expires at its own time', async () => {
    const h = await Harness.start({ offsetsRetentionMs: 60_000, offsetsRetentionCheckIntervalMs: 1000 });
    await commit(h, -1, '', [part('t', 0, 1)]);
    await commit(h, -1, '', [part('t', 1, 1)], { retentionTimeMs: 5000, apiVersion: 2 });
    await h.advance(6000, 1000);
    expect([...h.coordinator.group(G)!.offsets.keys()]).to.deep.equal(['t:0']);
    await h.advance(30_000, 1000);
    await commit(h, -1, '', [part('t', 0, 2)]);
    await h.advance(40_000, 1000);
    expect(h.coordinator.group(G)!.offsets.get('t:0')!.offset).to.equal(2);
  });

  it('OffsetDelete: subscribed topics are kept (GROUP_SUBSCRIBED_TO_TOPIC), others go; non-consumer groups must be empty', async () => {
    const h = await Harness.start();
    const { ids, generation } = await stableGroup(h, ['a']);
    await commit(h, generation, ids[0], [part('t', 0, 1), part('other', 0, 1)]);
    const res = await h.coordinator.deleteOffsets(G, [{ name: 't', partitions: [0] }, { name: 'other', partitions: [0, 1] }]);
    expect(res).to.deep.equal({
      errorCode: 0,
      topics: [
        { name: 't', partitions: [{ partition: 0, errorCode: ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC }] },
        { name: 'other', partitions: [{ partition: 0, errorCode: 0 }, { partition: 1, errorCode: 0 }] },
      ],
    });
    expect(h.store.writes.at(-1)).to.deep.equal({ kind: 'deleteOffsets', groupId: G, keys: [{ topic: 'other', partition: 0 }] });
    expect([...h.coordinator.group(G)!.offsets.keys()]).to.deep.equal(['t:0']);
    expect((await h.coordinator.deleteOffsets('nope', [])).errorCode).to.equal(ErrorCode.GROUP_ID_NOT_FOUND);

    const other = await h.coordinator.joinGroup({ ...joinRequest('connect-group'), protocolType: 'connect', requireKnownMemberId: false });
    await h.advance(100);
    expect(other.errorCode).to.equal(0);
    expect((await h.coordinator.deleteOffsets('connect-group', [{ name: 't', partitions: [0] }])).errorCode).to.equal(ErrorCode.NON_EMPTY_GROUP);
  });

  it('DeleteGroups: NON_EMPTY_GROUP, GROUP_ID_NOT_FOUND, and Empty groups go with their offsets', async () => {
    const h = await Harness.start();
    await stableGroup(h, ['a']);
    await commit(h, -1, '', [part('t', 0, 1)], { groupId: 'simple' });
    const res = await h.coordinator.deleteGroups([G, 'simple', 'nope', 'simple']);
    expect(res).to.deep.equal([
      { groupId: G, errorCode: ErrorCode.NON_EMPTY_GROUP },
      { groupId: 'simple', errorCode: 0 },
      { groupId: 'nope', errorCode: ErrorCode.GROUP_ID_NOT_FOUND },
    ]);
    expect(h.coordinator.fetchOffsets('simple', [{ name: 't', partitions: [0] }], false).topics[0].partitions[0].offset).to.equal(-1);
  });
});

describe('group coordinator: loading, listing, describing', () => {
  it('answers COORDINATOR_LOAD_IN_PROGRESS until loaded (heartbeats blindly NONE, syncs REBALANCE_IN_PROGRESS)', async () => {
    const h = new Harness();
    expect((await h.coordinator.joinGroup({ ...joinRequest(G) })).errorCode).to.equal(ErrorCode.COORDINATOR_LOAD_IN_PROGRESS);
    expect(h.heartbeat(G, 'm', 1)).to.equal(ErrorCode.NONE);
    const sync = h.sync(G, 'm', 1);
    await flush();
    expect(sync.value!.errorCode).to.equal(ErrorCode.REBALANCE_IN_PROGRESS);
    expect(h.coordinator.isActive()).to.equal(false);
    await h.coordinator.load(h.store, 50);
    expect(h.coordinator.isActive()).to.equal(true);
  });

  it('rebuilds groups from the log: a Stable group with its members (who must heartbeat), offsets, Empty groups', async () => {
    const now = 1_700_000_000_000;
    const loaded: LoadedGroup[] = [
      {
        groupId: G,
        group: {
          protocolType: 'consumer', generationId: 4, protocolName: 'range', leader: 'm-1', currentStateTimestamp: now - 1000,
          members: [
            { memberId: 'm-1', groupInstanceId: null, clientId: 'c', clientHost: '/1.2.3.4', rebalanceTimeoutMs: 10_000, sessionTimeoutMs: 10_000, subscription: subscription(['t']), assignment: buf('x') },
            { memberId: 'm-2', groupInstanceId: 'i-2', clientId: 'c', clientHost: '/1.2.3.4', rebalanceTimeoutMs: 10_000, sessionTimeoutMs: 10_000, subscription: subscription(['t']), assignment: buf('y') },
          ],
        },
        offsets: new Map([['t:0', { topic: 't', partition: 0, offset: 42, leaderEpoch: 1, metadata: 'm', commitTimestamp: now, expireTimestamp: -1, logOffset: 7 }]]),
        pendingTxnOffsets: new Map(),
      },
      { groupId: 'empty', group: { protocolType: 'consumer', generationId: 9, protocolName: null, leader: null, currentStateTimestamp: now, members: [] }, offsets: new Map(), pendingTxnOffsets: new Map() },
    ];
    const h = await Harness.start({}, new FakeStore(loaded));
    const group = h.coordinator.group(G)!;
    expect(group.state).to.equal(GroupState.Stable);
    expect(h.coordinator.fetchOffsets(G, [{ name: 't', partitions: [0] }], false).topics[0].partitions[0]).to.include({ offset: 42, metadata: 'm' });
    expect(h.coordinator.describeGroup(G)).to.deep.include({ state: 'Stable', protocolData: 'range' });
    expect(h.coordinator.describeGroup('empty')).to.deep.include({ state: 'Empty', protocolType: 'consumer' });
    expect(h.coordinator.describeGroup('nope')).to.deep.include({ errorCode: 0, state: 'Dead', members: [] });
    // m-2 keeps its session alive; m-1 is silent and expires; the group rebalances.
    for (let i = 0; i < 4; i++) {
      await h.advance(3000, 1000);
      expect(h.heartbeat(G, 'm-2', 4, 'i-2')).to.be.oneOf([ErrorCode.NONE, ErrorCode.REBALANCE_IN_PROGRESS]);
    }
    expect(group.has('m-1')).to.equal(false);
    expect(group.state).to.equal(GroupState.PreparingRebalance);
    const syncAfterLoad = h.sync(G, 'm-2', 4, [], { groupInstanceId: 'i-2' });
    await flush();
    expect(syncAfterLoad.value!.errorCode).to.equal(ErrorCode.REBALANCE_IN_PROGRESS);
  });

  it('ListGroups filters by state and type (case-insensitive); DescribeGroups shows bytes only when Stable', async () => {
    const h = await Harness.start();
    const { ids } = await stableGroup(h, ['a', 'b']);
    await h.coordinator.commitOffsets({ groupId: 'simple', generationId: -1, memberId: '', groupInstanceId: null, apiVersion: 8, retentionTimeMs: -1, partitions: [{ topic: 't', partition: 0, offset: 1, leaderEpoch: -1, metadata: null, commitTimestamp: -1 }] });
    const all = h.coordinator.listGroups([], []);
    expect(all.groups).to.deep.equal([
      { groupId: G, protocolType: 'consumer', state: 'Stable', type: 'classic' },
      { groupId: 'simple', protocolType: '', state: 'Empty', type: 'classic' },
    ]);
    expect(h.coordinator.listGroups(['STABLE'], []).groups.map((g) => g.groupId)).to.deep.equal([G]);
    expect(h.coordinator.listGroups([], ['Classic']).groups).to.have.length(2);
    expect(h.coordinator.listGroups([], ['consumer']).groups).to.have.length(0);
    const d = h.coordinator.describeGroup(G);
    expect(d.members.map((m) => [m.memberId, m.assignment.toString(), m.metadata.length > 0])).to.deep.equal([[ids[0], 'a-a', true], [ids[1], 'a-b', true]]);
    h.join(G, { memberId: ids[0] });
    const during = h.coordinator.describeGroup(G);
    expect(during.state).to.equal('PreparingRebalance');
    expect(during.protocolData).to.equal('');
    expect(during.members.every((m) => m.metadata.length === 0 && m.assignment.length === 0)).to.equal(true);
  });

  it('close() answers parked requests and stops every timer', async () => {
    const h = await Harness.start();
    const a = await h.joinNew(G, { clientId: 'a' });
    const b = await h.joinNew(G, { clientId: 'b' });
    await h.advance(100);
    const parked = h.sync(G, b.memberId, b.join.value!.generationId);
    h.coordinator.close();
    await flush();
    expect(parked.value!.errorCode).to.equal(ErrorCode.NOT_COORDINATOR);
    expect(h.coordinator.scheduledTimers).to.deep.equal([]);
    expect(h.timer.size).to.equal(0);
    expect(a.memberId).to.be.a('string');
  });
});

describe('group coordinator: transactional offsets (TxnOffsetCommit)', () => {
  const PID = 5000;
  const part = (topic: string, partition: number, offset: number, metadata: string | null = null) =>
    ({ topic, partition, offset, leaderEpoch: 2, metadata });
  const txnCommit = (h: Harness, partitions: ReturnType<typeof part>[],
    extra: { groupId?: string; producerId?: number; generationId?: number; memberId?: string; groupInstanceId?: string | null } = {}) =>
    h.coordinator.commitTxnOffsets({
      groupId: extra.groupId ?? G, producerId: extra.producerId ?? PID, producerEpoch: 1,
      generationId: extra.generationId ?? -1, memberId: extra.memberId ?? '', groupInstanceId: extra.groupInstanceId ?? null, partitions,
    });
  const plainCommit = (h: Harness, partitions: ReturnType<typeof part>[]) => h.coordinator.commitOffsets({
    groupId: G, generationId: -1, memberId: '', groupInstanceId: null, apiVersion: 8, retentionTimeMs: -1,
    partitions: partitions.map((p) => ({ ...p, commitTimestamp: -1 })),
  });
  /** [offset, errorCode] of each partition of topic t asked for. */
  const fetchT = (h: Harness, partitions: number[], requireStable: boolean, groupId = G) =>
    h.coordinator.fetchOffsets(groupId, [{ name: 't', partitions }], requireStable).topics[0].partitions.map((p) => [p.offset, p.errorCode]);
  const UNSTABLE = [-1, ErrorCode.UNSTABLE_OFFSET_COMMIT];

  it('stays pending (invisible, UNSTABLE_OFFSET_COMMIT with require_stable) until its COMMIT on the group\'s partition', async () => {
    const h = await Harness.start();
    expect(await txnCommit(h, [part('t', 0, 10, 'txn')])).to.deep.equal([0]);
    expect(h.store.writes.at(-1)).to.deep.include({ kind: 'txnOffsets', groupId: G, producer: { producerId: PID, producerEpoch: 1 } });
    expect(fetchT(h, [0, 1], false)).to.deep.equal([[-1, 0], [-1, 0]]);
    expect(fetchT(h, [0, 1], true)).to.deep.equal([UNSTABLE, [-1, 0]]);
    // Another producer's marker, or this producer's on another partition, changes nothing.
    h.coordinator.onTransactionCompleted(PID + 1, h.coordinator.partitionFor(G), true);
    h.coordinator.onTransactionCompleted(PID, (h.coordinator.partitionFor(G) + 1) % 50, true);
    expect(fetchT(h, [0], true)).to.deep.equal([UNSTABLE]);
    h.coordinator.onTransactionCompleted(PID, h.coordinator.partitionFor(G), true);
    expect(fetchT(h, [0], true)).to.deep.equal([[10, 0]]);
    expect(h.coordinator.fetchOffsets(G, [{ name: 't', partitions: [0] }], false).topics[0].partitions[0]).to.deep.include({ metadata: 'txn', leaderEpoch: 2 });
  });

  it('ABORT drops only that producer\'s offsets; COMMIT keeps a plain commit written after the transactional one', async () => {
    const h = await Harness.start();
    const partition = h.coordinator.partitionFor(G);
    await plainCommit(h, [part('t', 0, 1), part('t', 1, 1)]);
    await txnCommit(h, [part('t', 0, 20), part('t', 1, 20)], { producerId: 1 });
    await txnCommit(h, [part('t', 2, 30)], { producerId: 2 });
    expect(fetchT(h, [0, 1, 2], false)).to.deep.equal([[1, 0], [1, 0], [-1, 0]]);
    h.coordinator.onTransactionCompleted(1, partition, false);
    expect(fetchT(h, [0, 1, 2], true)).to.deep.equal([[1, 0], [1, 0], UNSTABLE]);
    h.coordinator.onTransactionCompleted(2, partition, true);
    expect(fetchT(h, [2], true)).to.deep.equal([[30, 0]]);

    // Transactional t:0 = 40, then a plain t:0 = 50, then the COMMIT: the plain one is the later write.
    await txnCommit(h, [part('t', 0, 40), part('t', 1, 40)], { producerId: 1 });
    await plainCommit(h, [part('t', 0, 50)]);
    expect(fetchT(h, [0, 1], true)).to.deep.equal([UNSTABLE, UNSTABLE]);
    h.coordinator.onTransactionCompleted(1, partition, true);
    expect(fetchT(h, [0, 1], true)).to.deep.equal([[50, 0], [40, 0]]);
  });

  it('require_stable over all of a group\'s offsets: committed partitions with a pending offset are UNSTABLE_OFFSET_COMMIT', async () => {
    const h = await Harness.start();
    await plainCommit(h, [part('t', 0, 1), part('t', 1, 1)]);
    await txnCommit(h, [part('t', 1, 2), part('t', 2, 2)]);
    const all = (requireStable: boolean) => h.coordinator.fetchOffsets(G, null, requireStable).topics[0].partitions.map((p) => [p.partition, p.offset, p.errorCode]);
    expect(all(false)).to.deep.equal([[0, 1, 0], [1, 1, 0]]);
    // As Kafka: only partitions with a committed offset are listed, t-2 has none yet.
    expect(all(true)).to.deep.equal([[0, 1, 0], [1, -1, ErrorCode.UNSTABLE_OFFSET_COMMIT]]);
  });

  it('KIP-447 checks: generation, member, static instance; no REBALANCE_IN_PROGRESS; v0-2 without member; group id, metadata, loading, write errors', async () => {
    const loading = new Harness();
    expect(await txnCommit(loading, [part('t', 0, 1)])).to.deep.equal([ErrorCode.COORDINATOR_LOAD_IN_PROGRESS]);
    const h = await Harness.start({ offsetMetadataMaxBytes: 5 });
    expect(await txnCommit(h, [part('t', 0, 1)], { groupId: '' })).to.deep.equal([ErrorCode.INVALID_GROUP_ID]);
    expect(await txnCommit(h, [part('t', 0, 1)], { generationId: 1, memberId: 'm' })).to.deep.equal([ErrorCode.ILLEGAL_GENERATION]);
    expect(h.coordinator.group(G)).to.equal(undefined);

    // A static member gets its id in the JoinGroup answer.
    const a = h.join(G, { clientId: 'a', groupInstanceId: 'inst-a' });
    const b = await h.joinNew(G, { clientId: 'b' });
    await h.advance(100);
    const gen = a.value!.generationId;
    expect(h.coordinator.group(G)!.state).to.equal(GroupState.CompletingRebalance);
    const member = { generationId: gen, memberId: a.value!.memberId, groupInstanceId: 'inst-a' };
    // Unlike OffsetCommit, a member of the generation commits before its SyncGroup.
    expect(await txnCommit(h, [part('t', 0, 1)], member)).to.deep.equal([0]);
    expect(await txnCommit(h, [part('t', 0, 1)], { ...member, generationId: gen + 1 })).to.deep.equal([ErrorCode.ILLEGAL_GENERATION]);
    expect(await txnCommit(h, [part('t', 0, 1)], { ...member, memberId: 'ghost' })).to.deep.equal([ErrorCode.FENCED_INSTANCE_ID]);
    expect(await txnCommit(h, [part('t', 0, 1)], { ...member, groupInstanceId: 'inst-x' })).to.deep.equal([ErrorCode.UNKNOWN_MEMBER_ID]);
    expect(await txnCommit(h, [part('t', 0, 1)], { generationId: gen, memberId: 'ghost' })).to.deep.equal([ErrorCode.UNKNOWN_MEMBER_ID]);
    expect(await txnCommit(h, [part('t', 0, 1)], { generationId: gen, memberId: b.memberId })).to.deep.equal([0]);
    // v0-2 carry no member: accepted even though the group has members.
    expect(await txnCommit(h, [part('t', 0, 1)])).to.deep.equal([0]);
    expect(await txnCommit(h, [part('t', 0, 1, 'ok'), part('t', 1, 1, 'too long')])).to.deep.equal([0, ErrorCode.OFFSET_METADATA_TOO_LARGE]);
    h.store.failWith = ErrorCode.NOT_COORDINATOR;
    expect(await txnCommit(h, [part('t', 3, 1)], { producerId: 77 })).to.deep.equal([ErrorCode.NOT_COORDINATOR]);
    h.store.failWith = 0;
    expect(h.coordinator.group(G)!.pendingTxnOffsets.has(77)).to.equal(false);
  });

  it('a transaction that ends while its batch is still being written applies to it (the marker follows the batch)', async () => {
    const h = await Harness.start();
    const partition = h.coordinator.partitionFor(G);
    h.store.hold = true;
    const committed = txnCommit(h, [part('t', 0, 7)], { producerId: 1 });
    const aborted = txnCommit(h, [part('t', 1, 8)], { producerId: 2 });
    await flush();
    h.coordinator.onTransactionCompleted(1, partition, true);
    h.coordinator.onTransactionCompleted(2, partition, false);
    h.store.release();
    expect(await committed).to.deep.equal([0]);
    expect(await aborted).to.deep.equal([0]);
    expect(fetchT(h, [0, 1], true)).to.deep.equal([[7, 0], [-1, 0]]);
    expect(h.coordinator.group(G)!.pendingTxnOffsets.size).to.equal(0);
  });

  it('DeleteGroups and OffsetDelete tombstone pending partitions too, and a later COMMIT brings nothing back', async () => {
    const h = await Harness.start();
    const partition = h.coordinator.partitionFor(G);
    await plainCommit(h, [part('t', 0, 1)]);
    await txnCommit(h, [part('t', 1, 2)], { producerId: 1 });
    h.store.hold = true;
    const inFlight = txnCommit(h, [part('t', 2, 3)], { producerId: 2 });
    await flush();
    const deleted = h.coordinator.deleteGroups([G]);
    h.store.release();
    expect(await deleted).to.deep.equal([{ groupId: G, errorCode: 0 }]);
    expect(await inFlight).to.deep.equal([0]);
    expect(h.store.writes.at(-1)).to.deep.equal({
      kind: 'deleteGroup', groupId: G, keys: [{ topic: 't', partition: 0 }, { topic: 't', partition: 1 }, { topic: 't', partition: 2 }],
    });
    h.coordinator.onTransactionCompleted(1, partition, true);
    h.coordinator.onTransactionCompleted(2, partition, true);
    expect(h.coordinator.group(G)).to.equal(undefined);
    expect(fetchT(h, [0, 1, 2], true)).to.deep.equal([[-1, 0], [-1, 0], [-1, 0]]);

    // OffsetDelete of a partition that only has a pending offset: its tombstone ends it.
    await txnCommit(h, [part('t', 5, 9), part('t', 6, 9)], { producerId: 3 });
    const res = await h.coordinator.deleteOffsets(G, [{ name: 't', partitions: [5] }]);
    expect(res.topics[0].partitions).to.deep.equal([{ partition: 5, errorCode: 0 }]);
    expect(h.store.writes.at(-1)).to.deep.equal({ kind: 'deleteOffsets', groupId: G, keys: [{ topic: 't', partition: 5 }] });
    expect(fetchT(h, [5, 6], true)).to.deep.equal([[-1, 0], UNSTABLE]);
    h.coordinator.onTransactionCompleted(3, partition, true);
    expect(fetchT(h, [5, 6], true)).to.deep.equal([[-1, 0], [9, 0]]);
  });

  it('retention waits for open transactions: neither a pending partition\'s offset nor a group with pending offsets expires', async () => {
    const h = await Harness.start({ offsetsRetentionMs: 60_000, offsetsRetentionCheckIntervalMs: 1000 });
    await plainCommit(h, [part('t', 0, 1)]);
    await txnCommit(h, [part('t', 0, 2)], { producerId: 1 });
    await h.advance(70_000, 1000);
    expect(h.coordinator.group(G)!.offsets.get('t:0')!.offset).to.equal(1);
    h.coordinator.onTransactionCompleted(1, h.coordinator.partitionFor(G), false);
    await h.advance(2000, 1000);
    expect(h.coordinator.group(G)).to.equal(undefined);

    await txnCommit(h, [part('t', 1, 3)], { producerId: 2 });
    await h.advance(70_000, 1000);
    expect(h.coordinator.group(G)!.pendingTxnOffsets.has(2)).to.equal(true);
    expect(h.store.writes.at(-1)!.kind).to.equal('txnOffsets');
  });

  it('loads pending transactional offsets (a marker after the restart completes them, against the log order of the committed ones)', async () => {
    const loadedOffset = (partition: number, offset: number, logOffset: number) =>
      ({ topic: 't', partition, offset, leaderEpoch: -1, metadata: '', commitTimestamp: 1, expireTimestamp: -1, logOffset });
    const loaded: LoadedGroup[] = [{
      groupId: G, group: null,
      // t-0 was committed plainly after the transaction wrote it (log offset 20 > 10); t-1 before it.
      offsets: new Map([['t:0', loadedOffset(0, 100, 20)], ['t:1', loadedOffset(1, 100, 5)]]),
      pendingTxnOffsets: new Map([[PID, new Map([['t:0', loadedOffset(0, 7, 10)], ['t:1', loadedOffset(1, 7, 11)], ['t:2', loadedOffset(2, 7, 12)]])]]),
    }];
    const h = new Harness(new FakeStore(loaded));
    const loading = h.coordinator.load(h.store, 50);
    // A marker written while the log was being read: applied once loaded.
    h.coordinator.onTransactionCompleted(PID, h.coordinator.partitionFor(G), true);
    await loading;
    expect(fetchT(h, [0, 1, 2], true)).to.deep.equal([[100, 0], [7, 0], [7, 0]]);

    const again = await Harness.start({}, new FakeStore(loaded));
    // Pending even where the committed offset is the later one (Kafka: any open transaction of the partition).
    expect(fetchT(again, [0, 1, 2], true)).to.deep.equal([UNSTABLE, UNSTABLE, UNSTABLE]);
    expect(fetchT(again, [0, 1, 2], false)).to.deep.equal([[100, 0], [100, 0], [-1, 0]]);
    // A new commit after the load is later than anything loaded; the transaction's COMMIT does not undo it.
    await again.coordinator.commitOffsets({ groupId: G, generationId: -1, memberId: '', groupInstanceId: null, apiVersion: 8, retentionTimeMs: -1,
      partitions: [{ ...part('t', 2, 55), commitTimestamp: -1 }] });
    again.coordinator.onTransactionCompleted(PID, again.coordinator.partitionFor(G), true);
    expect(fetchT(again, [0, 1, 2], true)).to.deep.equal([[100, 0], [7, 0], [55, 0]]);
  });
});
