// The rebalance protocol (src/group/rebalance.ts: JoinGroup, SyncGroup, Heartbeat, LeaveGroup) on a
// fake clock and an in-memory store: Kafka's rules, and the ugly orders (a join during a sync, the
// leader leaving mid-rebalance, a stale generation's heartbeat, a session ending during
// CompletingRebalance, static members restarting).
import { expect } from 'chai';
import { ErrorCode } from '../../src/common/errors';
import { GroupState } from '../../src/group/group';
import { G, Harness, buf, flush, joinRequest, retentionTimers, stableGroup, subscription } from './fakes';

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
    const left = await h.coordinator.leaveGroup(G, [{ memberId: ids[0], groupInstanceId: null }]);
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
    const res = await h.coordinator.leaveGroup(G, [
      { memberId: '', groupInstanceId: 'inst-1' },
      { memberId: 'ghost', groupInstanceId: null },
      { memberId: '', groupInstanceId: 'inst-9' },
    ]);
    expect(res.members.map((m) => m.errorCode)).to.deep.equal([0, ErrorCode.UNKNOWN_MEMBER_ID, ErrorCode.UNKNOWN_MEMBER_ID]);
    const none = await h.coordinator.leaveGroup('nope', [{ memberId: 'x', groupInstanceId: null }]);
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
    expect(h.coordinator.scheduledTimers).to.have.members(retentionTimers());
    expect(await h.coordinator.deleteGroups([G])).to.deep.equal([{ groupId: G, errorCode: 0 }]);
    expect(h.coordinator.group(G)).to.equal(undefined);
    expect(h.coordinator.scheduledTimers).to.have.members(retentionTimers());
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
