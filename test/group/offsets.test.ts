// Committed offsets (src/group/offsets.ts, Kafka's OffsetMetadataManager) on a fake clock and an
// in-memory store: the commit rules, fetching, OffsetDelete, expiry, and transactional offsets
// (pending until their transaction's marker).
import { expect } from 'chai';
import { ErrorCode } from '../../src/common/errors';
import { GroupState } from '../../src/group/group';
import type { LoadedGroup } from '../../src/group/store';
import { FakeStore, G, Harness, flush, joinRequest, retentionTimers, stableGroup } from './fakes';

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
    expect(h.coordinator.scheduledTimers).to.have.members(retentionTimers());
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
    const loading = h.electAll();
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
