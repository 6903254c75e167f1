// The coordinator's own part (src/group/coordinator.ts): loading groups from __consumer_offsets,
// listing, describing and deleting them, and closing.
import { expect } from 'chai';
import { ErrorCode } from '../../src/common/errors';
import { GroupState } from '../../src/group/group';
import type { LoadedGroup } from '../../src/group/store';
import { FakeStore, G, Harness, buf, flush, joinRequest, stableGroup, subscription } from './fakes';

/** A simple group (no members) with an offset committed for t-0. */
const commitStandalone = (h: Harness, groupId: string) => h.coordinator.commitOffsets({
  groupId, generationId: -1, memberId: '', groupInstanceId: null, apiVersion: 8, retentionTimeMs: -1,
  partitions: [{ topic: 't', partition: 0, offset: 1, leaderEpoch: -1, metadata: null, commitTimestamp: -1 }],
});

describe('group coordinator: loading, listing, describing, deleting', () => {
  it('answers COORDINATOR_LOAD_IN_PROGRESS until loaded (heartbeats blindly NONE, syncs REBALANCE_IN_PROGRESS)', async () => {
    const h = new Harness();
    expect((await h.coordinator.joinGroup({ ...joinRequest(G) })).errorCode).to.equal(ErrorCode.COORDINATOR_LOAD_IN_PROGRESS);
    expect(h.heartbeat(G, 'm', 1)).to.equal(ErrorCode.NONE);
    const sync = h.sync(G, 'm', 1);
    await flush();
    expect(sync.value!.errorCode).to.equal(ErrorCode.REBALANCE_IN_PROGRESS);
    expect(h.coordinator.isActive()).to.equal(false);
    await h.electAll();
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
    await commitStandalone(h, 'simple');
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

  it('DeleteGroups: NON_EMPTY_GROUP, GROUP_ID_NOT_FOUND, and Empty groups go with their offsets', async () => {
    const h = await Harness.start();
    await stableGroup(h, ['a']);
    await commitStandalone(h, 'simple');
    const res = await h.coordinator.deleteGroups([G, 'simple', 'nope', 'simple']);
    expect(res).to.deep.equal([
      { groupId: G, errorCode: ErrorCode.NON_EMPTY_GROUP },
      { groupId: 'simple', errorCode: 0 },
      { groupId: 'nope', errorCode: ErrorCode.GROUP_ID_NOT_FOUND },
    ]);
    expect(h.coordinator.fetchOffsets('simple', [{ name: 't', partitions: [0] }], false).topics[0].partitions[0].offset).to.equal(-1);
  });
});
