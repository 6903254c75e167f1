// The group coordinator following the leadership of __consumer_offsets partitions (Kafka 4's
// CoordinatorRuntime scheduleLoadOperation / scheduleUnloadOperation): one partition loads or
// resigns while the others serve on; requests of a partition not hosted answer NOT_COORDINATOR, of
// one loading COORDINATOR_LOAD_IN_PROGRESS; stale epochs are ignored; what was in flight when a
// partition resigned changes nothing.
import { expect } from 'chai';
import { startBroker, type RunningBroker } from '../../src/broker';
import { coordinatorPartitionFor } from '../../src/cluster/coordinator-partition';
import { ErrorCode } from '../../src/common/errors';
import { GroupState } from '../../src/group/group';
import type { LoadedGroup } from '../../src/group/store';
import { joinKey, retentionKey } from '../../src/group/timers';
import { FakeStore, G, Harness, PARTITIONS, buf, flush, joinRequest, stableGroup, subscription, track } from './fakes';

const NOT_COORDINATOR = ErrorCode.NOT_COORDINATOR;
const h0 = 1_700_000_000_000;
const LOADING = ErrorCode.COORDINATOR_LOAD_IN_PROGRESS;
const P = coordinatorPartitionFor(G, PARTITIONS);
/** A group on another partition than G's. */
const OTHER = ['h', 'i', 'j', 'k'].find((id) => coordinatorPartitionFor(id, PARTITIONS) !== P)!;
const OTHER_P = coordinatorPartitionFor(OTHER, PARTITIONS);
/** Another group on G's partition. */
const SAME = Array.from({ length: 1000 }, (_, i) => `g${i}`).find((id) => coordinatorPartitionFor(id, PARTITIONS) === P)!;

const commit = (h: Harness, groupId: string, offset: number, member = { generationId: -1, memberId: '' }) => h.coordinator.commitOffsets({
  groupId, ...member, groupInstanceId: null, apiVersion: 8, retentionTimeMs: -1,
  partitions: [{ topic: 't', partition: 0, offset, leaderEpoch: -1, metadata: null, commitTimestamp: -1 }],
});
const fetched = (h: Harness, groupId: string) => h.coordinator.fetchOffsets(groupId, [{ name: 't', partitions: [0] }], false);
const offsetOf = (h: Harness, groupId: string) => fetched(h, groupId).topics[0]?.partitions[0].offset;

/** The error each group API answers for `groupId` (member and generation made up: the status check comes first). */
async function answers(h: Harness, groupId: string): Promise<Record<string, number>> {
  const sync = await h.coordinator.syncGroup({
    groupId, memberId: 'm', generationId: 1, groupInstanceId: null, protocolType: null, protocolName: null, assignments: [],
  });
  const txn = await h.coordinator.commitTxnOffsets({
    groupId, producerId: 1, producerEpoch: 0, generationId: -1, memberId: '', groupInstanceId: null,
    partitions: [{ topic: 't', partition: 0, offset: 1, leaderEpoch: -1, metadata: null }],
  });
  return {
    join: (await h.coordinator.joinGroup(joinRequest(groupId))).errorCode,
    sync: sync.errorCode,
    heartbeat: h.heartbeat(groupId, 'm', 1),
    leave: (await h.coordinator.leaveGroup(groupId, [{ memberId: 'm', groupInstanceId: null }])).errorCode,
    commit: (await commit(h, groupId, 1))[0],
    fetch: fetched(h, groupId).errorCode,
    txnCommit: txn[0],
    describe: h.coordinator.describeGroup(groupId).errorCode,
    delete: (await h.coordinator.deleteGroups([groupId]))[0].errorCode,
    offsetDelete: (await h.coordinator.deleteOffsets(groupId, [{ name: 't', partitions: [0] }])).errorCode,
  };
}

const every = (code: number, except: Record<string, number> = {}): Record<string, number> => ({
  join: code, sync: code, heartbeat: code, leave: code, commit: code, fetch: code, txnCommit: code, describe: code, delete: code,
  offsetDelete: code, ...except,
});

describe('group coordinator: following the leadership of __consumer_offsets partitions', () => {
  it('a resigned partition answers NOT_COORDINATOR to every group API; the other partitions serve on', async () => {
    const h = await Harness.start();
    const { ids, generation } = await stableGroup(h, ['c1']);
    expect(await commit(h, OTHER, 5)).to.deep.equal([0]);

    h.coordinator.onResignation(P, 1);
    expect(h.coordinator.group(G)).to.equal(undefined);
    expect(h.coordinator.isLoaded(P)).to.equal(false);
    expect(await answers(h, G)).to.deep.equal(every(NOT_COORDINATOR));
    // ListGroups lists the groups of the partitions hosted here only.
    expect(h.coordinator.listGroups([], [])).to.deep.equal({
      errorCode: 0, groups: [{ groupId: OTHER, protocolType: '', state: 'Empty', type: 'classic' }],
    });
    expect(h.heartbeat(G, ids[0], generation)).to.equal(NOT_COORDINATOR);

    // OTHER's partition was not touched: it commits, fetches, is described.
    expect(await commit(h, OTHER, 6)).to.deep.equal([0]);
    expect(offsetOf(h, OTHER)).to.equal(6);
    expect(h.coordinator.describeGroup(OTHER)).to.include({ errorCode: 0, state: 'Empty' });
    expect(h.coordinator.isLoaded(OTHER_P)).to.equal(true);
  });

  it('a partition being loaded answers COORDINATOR_LOAD_IN_PROGRESS (heartbeat NONE, sync REBALANCE_IN_PROGRESS, as Kafka), ListGroups too', async () => {
    const h = await Harness.start();
    h.coordinator.onResignation(P, 1);
    h.store.holdLoads = true;
    h.coordinator.onElection(P, 2);
    expect(await answers(h, G)).to.deep.equal(every(LOADING, { heartbeat: 0, sync: ErrorCode.REBALANCE_IN_PROGRESS }));
    expect(h.coordinator.listGroups([], [])).to.deep.equal({ errorCode: LOADING, groups: [] });
    // Another partition's groups are served meanwhile.
    expect(await commit(h, OTHER, 1)).to.deep.equal([0]);
    h.store.releaseLoads();
    await h.coordinator.loaded();
    expect(h.coordinator.isLoaded(P)).to.equal(true);
    expect(await commit(h, G, 3)).to.deep.equal([0]);
    expect(h.coordinator.listGroups([], []).errorCode).to.equal(0);
  });

  it('a re-election reads the partition again: its groups come back with their members and offsets (and only that partition is read)', async () => {
    const loaded: LoadedGroup[] = [];
    const h = await Harness.start({}, new FakeStore(loaded));
    expect(h.store.loads).to.have.length(PARTITIONS);
    h.coordinator.onResignation(P, 1);
    // What the log holds by now (the other broker's leadership wrote a generation 7 and an offset).
    loaded.push({
      groupId: G,
      group: {
        protocolType: 'consumer', generationId: 7, protocolName: 'range', leader: 'm-1', currentStateTimestamp: h.now,
        members: [{ memberId: 'm-1', groupInstanceId: null, clientId: 'c', clientHost: '/h', rebalanceTimeoutMs: 10_000,
          sessionTimeoutMs: 10_000, subscription: subscription(['t']), assignment: buf('a') }],
      },
      offsets: new Map([['t:0', { topic: 't', partition: 0, offset: 42, leaderEpoch: 3, metadata: 'm', commitTimestamp: h.now, expireTimestamp: -1, logOffset: 9 }]]),
      pendingTxnOffsets: new Map(),
    });
    h.coordinator.onElection(P, 2);
    await h.coordinator.loaded();
    expect(h.store.loads.slice(PARTITIONS)).to.deep.equal([P]);
    const group = h.coordinator.group(G)!;
    expect([group.state, group.generationId, [...group.members.keys()]]).to.deep.equal([GroupState.Stable, 7, ['m-1']]);
    expect(offsetOf(h, G)).to.equal(42);
    expect(h.heartbeat(G, 'm-1', 7)).to.equal(0);
  });

  it('ignores elections and resignations older than the last epoch seen; an election of a hosted partition changes nothing', async () => {
    const h = await Harness.start({}, new FakeStore());
    h.coordinator.onElection(P, 5);
    expect(h.store.loads).to.have.length(PARTITIONS); // already hosted: not read again
    h.coordinator.onResignation(P, 4);
    expect(await commit(h, G, 1)).to.deep.equal([0]);
    h.coordinator.onResignation(P, 6);
    expect(await commit(h, G, 2)).to.deep.equal([NOT_COORDINATOR]);
    h.coordinator.onElection(P, 5);
    expect(h.coordinator.isLoaded(P)).to.equal(false);
    expect(await commit(h, G, 3)).to.deep.equal([NOT_COORDINATOR]);
    h.coordinator.onElection(P, 7);
    await h.coordinator.loaded();
    expect(await commit(h, G, 4)).to.deep.equal([0]);
    expect(h.store.loads.slice(PARTITIONS)).to.deep.equal([P]);
  });

  it('resigning answers parked JoinGroup and SyncGroup requests NOT_COORDINATOR and stops the partition\'s timers', async () => {
    const h = await Harness.start({ initialRebalanceDelayMs: 3000 });
    const { join } = await h.joinNew(G);
    expect(join.done).to.equal(false); // parked in the initial rebalance delay
    const otherJoin = await h.joinNew(OTHER);
    h.coordinator.onResignation(P, 1);
    await flush();
    expect(join.value).to.include({ errorCode: NOT_COORDINATOR });
    expect(otherJoin.join.done).to.equal(false);
    // No timer of G's (join, heartbeats) nor its partition's retention check is left; OTHER's are.
    const timers = h.coordinator.scheduledTimers;
    expect(timers.filter((k) => k.startsWith('["g"'))).to.deep.equal([]);
    expect(timers).to.not.include(retentionKey(P));
    expect(timers).to.include(retentionKey(OTHER_P));
    expect(timers.filter((k) => k.startsWith(`["${OTHER}"`))).to.not.deep.equal([]);

    // A SyncGroup parked while the leader's assignment is awaited.
    const s = await Harness.start();
    const members = await s.joinNew(G);
    const follower = await s.joinNew(G);
    await s.advance(100);
    const generation = members.join.value!.generationId;
    const parkedSync = s.sync(G, follower.memberId, generation);
    await flush();
    expect(parkedSync.done).to.equal(false);
    s.coordinator.onResignation(P, 1);
    await flush();
    expect(parkedSync.value).to.include({ errorCode: NOT_COORDINATOR });
  });

  it('a write in flight when its partition resigns answers NOT_COORDINATOR and changes nothing in the partition loaded again since', async () => {
    const loaded: LoadedGroup[] = [];
    const h = await Harness.start({}, new FakeStore(loaded));
    // G: its leader's assignment being written; SAME (G's partition): a commit being written.
    const { memberId, join } = await h.joinNew(G);
    await h.advance(100);
    const generation = join.value!.generationId;
    expect(await commit(h, SAME, 1)).to.deep.equal([0]);
    h.store.hold = true;
    const sync = h.sync(G, memberId, generation, [[memberId, buf('new')]]);
    const committing = track(commit(h, SAME, 2));
    await flush();
    expect([sync.done, committing.done]).to.deep.equal([false, false]);
    h.coordinator.onResignation(P, 1);
    await flush();
    expect(sync.value).to.include({ errorCode: NOT_COORDINATOR });

    // The log as the next leadership reads it: SAME's offset 1, G with an older assignment.
    const member = { memberId, groupInstanceId: null, clientId: 'client', clientHost: '/127.0.0.1', rebalanceTimeoutMs: 10_000,
      sessionTimeoutMs: 30_000, subscription: subscription(['t']), assignment: buf('old') };
    loaded.push(
      { groupId: SAME, group: null, pendingTxnOffsets: new Map(), offsets: new Map([['t:0', {
        topic: 't', partition: 0, offset: 1, leaderEpoch: -1, metadata: '', commitTimestamp: h.now, expireTimestamp: -1, logOffset: 3,
      }]]) },
      { groupId: G, offsets: new Map(), pendingTxnOffsets: new Map(), group: {
        protocolType: 'consumer', generationId: generation, protocolName: 'range', leader: memberId, currentStateTimestamp: h.now, members: [member],
      } },
    );
    h.coordinator.onElection(P, 2);
    await h.coordinator.loaded();
    h.store.release();
    await flush();
    expect(committing.value).to.deep.equal([NOT_COORDINATOR]);
    expect(offsetOf(h, SAME)).to.equal(1);
    const group = h.coordinator.group(G)!;
    expect([group.state, group.generationId, group.get(memberId).assignment.toString()]).to.deep.equal([GroupState.Stable, generation, 'old']);
    // The failed write did not start a rebalance of the dropped group either (its timers would be the new group's).
    expect(h.coordinator.scheduledTimers).to.not.include(joinKey(G));
  });

  it('a load still in flight when its partition resigns is discarded; the next election reads the partition again', async () => {
    const loaded: LoadedGroup[] = [{ groupId: G, group: null, pendingTxnOffsets: new Map(), offsets: new Map([['t:0', {
      topic: 't', partition: 0, offset: 8, leaderEpoch: -1, metadata: '', commitTimestamp: h0, expireTimestamp: -1, logOffset: 1,
    }]]) }];
    const h = new Harness(new FakeStore(loaded));
    h.store.holdLoads = true;
    const first = h.electAll();
    h.coordinator.onResignation(P, 1);
    h.store.releaseLoads();
    await first;
    expect(h.coordinator.group(G)).to.equal(undefined);
    expect(h.coordinator.scheduledTimers).to.not.include(retentionKey(P));
    expect(fetched(h, G).errorCode).to.equal(NOT_COORDINATOR);

    h.coordinator.onElection(P, 2);
    await h.coordinator.loaded();
    expect(h.store.loads.filter((p) => p === P)).to.deep.equal([P, P]);
    expect(offsetOf(h, G)).to.equal(8);
    expect(h.coordinator.scheduledTimers).to.include(retentionKey(P));
  });

  it('a transaction that ends while its partition loads completes the offsets the load leaves pending; one not hosted is left to the log', async () => {
    const PID = 77;
    const pending = { topic: 't', partition: 0, offset: 9, leaderEpoch: -1, metadata: '', commitTimestamp: 1, expireTimestamp: -1, logOffset: 4 };
    const loaded: LoadedGroup[] = [{ groupId: G, group: null, offsets: new Map(), pendingTxnOffsets: new Map([[PID, new Map([['t:0', pending]])]]) }];
    const h = new Harness(new FakeStore(loaded));
    h.store.holdLoads = true;
    const loading = h.electAll();
    h.coordinator.onTransactionCompleted(PID, P, true);
    h.store.releaseLoads();
    await loading;
    expect(offsetOf(h, G)).to.equal(9);

    h.coordinator.onResignation(P, 1);
    h.coordinator.onTransactionCompleted(PID, P, false); // not hosted: nothing to do, and nothing kept for later
    h.coordinator.onElection(P, 2);
    await h.coordinator.loaded();
    expect(h.coordinator.fetchOffsets(G, [{ name: 't', partitions: [0] }], true).topics[0].partitions[0].errorCode)
      .to.equal(ErrorCode.UNSTABLE_OFFSET_COMMIT);
  });

  it('before __consumer_offsets is in use, every group answers COORDINATOR_LOAD_IN_PROGRESS and elections are ignored', async () => {
    const h = new Harness();
    h.coordinator.onElection(P, 0);
    expect(h.store.loads).to.deep.equal([]);
    expect((await commit(h, G, 1))[0]).to.equal(LOADING);
    h.coordinator.useOffsetsTopic(h.store, PARTITIONS);
    expect((await commit(h, G, 1))[0]).to.equal(NOT_COORDINATOR);
    // The topic deleted: every partition resigns, epochs are forgotten (a new topic starts at 0).
    await h.electAll(3);
    h.coordinator.unloadAll();
    expect((await commit(h, G, 1))[0]).to.equal(LOADING);
    await h.electAll(0);
    expect((await commit(h, G, 1))[0]).to.equal(0);
  });
});

describe('group coordinator over a broker\'s __consumer_offsets: a partition resigned and elected again', function () {
  this.timeout(20000);
  let running: RunningBroker | undefined;
  afterEach(async () => {
    await running?.close();
    running = undefined;
  });

  it('reads the partition\'s groups and offsets back from its log, while the other partitions serve on', async () => {
    running = await startBroker({ logLevel: 'silent', config: { 'offsets.topic.num.partitions': '3', 'group.initial.rebalance.delay.ms': '0' } });
    const { groups, controller } = running.broker;
    const p = coordinatorPartitionFor(G, 3);
    const other = ['h', 'i', 'j', 'k'].find((id) => coordinatorPartitionFor(id, 3) !== p)!;
    for (let i = 0; !groups.isLoaded(p) || !groups.isLoaded(coordinatorPartitionFor(other, 3)); i++) {
      if (i > 200) throw new Error('the coordinator never loaded');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const joined = await groups.joinGroup({ ...joinRequest(G), requireKnownMemberId: false });
    const { memberId, generationId } = joined;
    const synced = await groups.syncGroup({ groupId: G, memberId, generationId, groupInstanceId: null, protocolType: null, protocolName: null,
      assignments: [{ memberId, assignment: buf('mine') }] });
    expect(synced.errorCode).to.equal(0);
    const commitOn = (groupId: string, offset: number, member = { generationId: -1, memberId: '' }) => groups.commitOffsets({
      groupId, ...member, groupInstanceId: null, apiVersion: 8, retentionTimeMs: -1,
      partitions: [{ topic: 't', partition: 0, offset, leaderEpoch: -1, metadata: null, commitTimestamp: -1 }],
    });
    expect(await commitOn(G, 42, { generationId, memberId })).to.deep.equal([0]);

    const epoch = controller.topic('__consumer_offsets')!.partitions[p].leaderEpoch;
    groups.onResignation(p, epoch + 1);
    expect(await commitOn(G, 43, { generationId, memberId })).to.deep.equal([NOT_COORDINATOR]);
    expect(await commitOn(other, 5)).to.deep.equal([0]);

    groups.onElection(p, epoch + 2);
    await groups.loaded();
    const group = groups.group(G)!;
    expect([group.state, group.generationId, group.get(memberId).assignment.toString()]).to.deep.equal([GroupState.Stable, generationId, 'mine']);
    expect(groups.fetchOffsets(G, [{ name: 't', partitions: [0] }], false).topics[0].partitions[0].offset).to.equal(42);
    expect(groups.heartbeat(G, memberId, null, generationId)).to.equal(0);
  });
});
