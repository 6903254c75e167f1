// The group APIs on the wire, through RawClient: every version's shape, two members on two
// connections forming a group, offsets committed and fetched across versions.
import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { startBroker, type RunningBroker } from '../../src/broker';
import { ApiKey } from '../../src/protocol/generated';
import { ZERO_UUID } from '../../src/protocol/primitives';
import type { ApiVersionsResponse } from '../../src/protocol/generated/ApiVersionsResponse';
import type { FindCoordinatorResponse } from '../../src/protocol/generated/FindCoordinatorResponse';
import type { JoinGroupResponse } from '../../src/protocol/generated/JoinGroupResponse';
import type { SyncGroupResponse } from '../../src/protocol/generated/SyncGroupResponse';
import type { HeartbeatResponse } from '../../src/protocol/generated/HeartbeatResponse';
import type { LeaveGroupResponse } from '../../src/protocol/generated/LeaveGroupResponse';
import type { OffsetCommitResponse } from '../../src/protocol/generated/OffsetCommitResponse';
import type { OffsetFetchResponse } from '../../src/protocol/generated/OffsetFetchResponse';
import type { ListGroupsResponse } from '../../src/protocol/generated/ListGroupsResponse';
import type { DescribeGroupsResponse } from '../../src/protocol/generated/DescribeGroupsResponse';
import type { DeleteGroupsResponse } from '../../src/protocol/generated/DeleteGroupsResponse';
import type { OffsetDeleteResponse } from '../../src/protocol/generated/OffsetDeleteResponse';
import type { MetadataResponse } from '../../src/protocol/generated/MetadataResponse';
import type { TxnOffsetCommitResponse } from '../../src/protocol/generated/TxnOffsetCommitResponse';
import { ErrorCode } from '../../src/common/errors';
import { OffsetsLog, OFFSETS_TOPIC } from '../../src/group/offsets-log';
import type { Broker } from '../../src/broker';
import { buildEndTxnMarker } from '../../src/records/records';
import { RawClient } from '../helpers/raw-client';
import { withBroker } from '../helpers/broker';
import { retentionTimers, subscription } from './fakes';

const PARTITIONS = 5;

/** TxnOffsetCommit of one partition of topic wt, as a simple group's producer sends it (generation -1). */
function txnCommit(c: RawClient, version: number, groupId: string, producerId: number, offset: bigint, extra: object = {}) {
  return c.request<TxnOffsetCommitResponse>(ApiKey.TxnOffsetCommit, version, {
    transactionalId: `tx-${producerId}`, groupId, producerId: BigInt(producerId), producerEpoch: 0,
    generationIdOrMemberEpoch: -1, memberId: '', groupInstanceId: null, ...extra,
    topics: [{ name: 'wt', partitions: [{ partitionIndex: 1, committedOffset: offset, committedLeaderEpoch: 3, committedMetadata: 'txn' }] }],
  });
}

/** [offset, errorCode] of wt-1 in the group, with require_stable (OffsetFetch v7). */
async function fetchStable(c: RawClient, groupId: string): Promise<[number, number]> {
  const res = await c.request<OffsetFetchResponse>(ApiKey.OffsetFetch, 7, { groupId, topics: [{ name: 'wt', partitionIndexes: [1] }], requireStable: true, groups: [] });
  expect(res.errorCode).to.equal(0);
  const p = res.topics[0].partitions[0];
  return [Number(p.committedOffset), p.errorCode];
}

/**
 * What the transaction coordinator does when a transaction ends: the marker into the group's
 * __consumer_offsets partition (straight into the log here: Part A's appendTxnMarker is not on this
 * branch), then onTransactionCompleted.
 */
async function endTransaction(broker: Broker, groupId: string, producerId: number, commit: boolean): Promise<void> {
  const index = broker.groups.partitionFor(groupId);
  await broker.replicas.partition(OFFSETS_TOPIC, index)!.log.append(buildEndTxnMarker({ commit, producerId, producerEpoch: 0, coordinatorEpoch: 0 })).done;
  broker.groups.onTransactionCompleted(producerId, index, commit);
}

describe('group APIs on the wire', function () {
  this.timeout(20000);
  const broker = withBroker({ logLevel: process.env.FJORD_TEST_LOG ?? 'silent',
    config: {
      'group.initial.rebalance.delay.ms': '0',
      'offsets.topic.num.partitions': String(PARTITIONS),
      'group.min.session.timeout.ms': '1000',
      // The TxnOffsetCommit tests play the transaction coordinator (they write the markers themselves).
      'transaction.partition.verification.enable': 'false',
    },
  });
  let c1: RawClient;
  let c2: RawClient;

  before(async () => {
    const running = broker.current();
    await running.broker.controller.createTopic({ name: 'wt', numPartitions: 3, replicationFactor: 1, assignments: [], configs: {} }, false);
    c1 = await RawClient.connect(running.port);
    c2 = await RawClient.connect(running.port);
    // The coordinator loads in the background: FindCoordinator says when it is ready.
    for (let i = 0; ; i++) {
      const res = await c1.request<FindCoordinatorResponse>(ApiKey.FindCoordinator, 3, { key: 'g', keyType: 0, coordinatorKeys: [] });
      if (res.errorCode === ErrorCode.NONE) break;
      expect(res.errorCode).to.equal(ErrorCode.COORDINATOR_NOT_AVAILABLE);
      if (i > 100) throw new Error('coordinator never became available');
      await new Promise((r) => setTimeout(r, 50));
    }
  });
  after(() => {
    c1?.close();
    c2?.close();
  });

  it('advertises the group APIs with their version ranges', async () => {
    const res = await c1.request<ApiVersionsResponse>(ApiKey.ApiVersions, 3, { clientSoftwareName: 't', clientSoftwareVersion: '1' });
    const range = (k: number) => res.apiKeys.find((a) => a.apiKey === k);
    expect([8, 9, 10, 11, 12, 13, 14, 15, 16, 28, 42, 47].map((k) => [k, range(k)?.minVersion, range(k)?.maxVersion])).to.deep.equal([
      [8, 0, 10], [9, 0, 10], [10, 0, 6], [11, 0, 9], [12, 0, 4], [13, 0, 5], [14, 0, 5], [15, 0, 6], [16, 0, 5], [28, 0, 6], [42, 0, 3], [47, 0, 0],
    ]);
  });

  it('creates __consumer_offsets (compacted, internal) and names this broker the coordinator, batched from v4', async () => {
    const running = broker.current();
    const topic = running.broker.controller.topic('__consumer_offsets')!;
    expect(topic.partitions).to.have.length(PARTITIONS);
    expect(topic.configs['cleanup.policy']).to.equal('compact');
    const meta = await c1.request<MetadataResponse>(ApiKey.Metadata, 9, { topics: [{ name: '__consumer_offsets' }], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false });
    expect(meta.topics[0].isInternal).to.equal(true);

    const v0 = await c1.request<FindCoordinatorResponse>(ApiKey.FindCoordinator, 0, { key: 'g', coordinatorKeys: [] });
    expect(v0).to.include({ errorCode: 0, nodeId: running.broker.nodeId, host: '127.0.0.1', port: running.port });
    const v4 = await c1.request<FindCoordinatorResponse>(ApiKey.FindCoordinator, 4, { key: '', keyType: 0, coordinatorKeys: ['a', 'b'] });
    expect(v4.coordinators.map((c) => [c.key, c.errorCode, c.port])).to.deep.equal([['a', 0, running.port], ['b', 0, running.port]]);
    // A transactional id's coordinator is there once the first ask has created __transaction_state.
    const txn = await c1.request<FindCoordinatorResponse>(ApiKey.FindCoordinator, 6, { key: '', keyType: 1, coordinatorKeys: ['tx'] });
    expect(txn.coordinators[0]).to.include({ errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE, nodeId: -1 });
    await running.broker.startTransactions();
    const again = await c1.request<FindCoordinatorResponse>(ApiKey.FindCoordinator, 6, { key: '', keyType: 1, coordinatorKeys: ['tx'] });
    expect(again.coordinators[0]).to.include({ errorCode: 0, nodeId: running.broker.nodeId });
    const bad = await c1.request<FindCoordinatorResponse>(ApiKey.FindCoordinator, 2, { key: 'g', keyType: 7, coordinatorKeys: [] });
    expect(bad).to.include({ errorCode: ErrorCode.INVALID_REQUEST, nodeId: -1 });
    expect(running.broker.groups.partitionFor('my-group')).to.equal(OffsetsLog.partitionFor('my-group', PARTITIONS));
  });

  it('forms a group across two connections: MEMBER_ID_REQUIRED, join, sync (v5 protocol checks), heartbeat', async () => {
    const protocols = [{ name: 'range', metadata: subscription(['wt']) }];
    const join = (c: RawClient, memberId: string, version = 9) => c.request<JoinGroupResponse>(ApiKey.JoinGroup, version, {
      groupId: 'wire', sessionTimeoutMs: 10000, rebalanceTimeoutMs: 5000, memberId, groupInstanceId: null,
      protocolType: 'consumer', protocols, reason: null,
    });
    const r1 = await join(c1, '');
    expect(r1.errorCode).to.equal(ErrorCode.MEMBER_ID_REQUIRED);
    expect(r1.memberId).to.match(/^raw-test-/);
    const r2 = await join(c2, '', 5);
    expect(r2.errorCode).to.equal(ErrorCode.MEMBER_ID_REQUIRED);
    const [j1, j2] = await Promise.all([join(c1, r1.memberId), join(c2, r2.memberId, 5)]);
    expect(j1).to.include({ errorCode: 0, protocolType: 'consumer', protocolName: 'range', leader: r1.memberId, skipAssignment: false });
    expect(j1.generationId).to.equal(j2.generationId);
    expect(j1.members.map((m) => m.memberId).sort()).to.deep.equal([r1.memberId, r2.memberId].sort());
    expect(j1.members[0].metadata.equals(subscription(['wt']))).to.equal(true);
    expect(j2.members).to.deep.equal([]);
    const gen = j1.generationId!;

    const sync = (c: RawClient, memberId: string, assignments: { memberId: string; assignment: Buffer }[], version = 5, names: { protocolType?: string | null; protocolName?: string | null } = { protocolType: 'consumer', protocolName: 'range' }) =>
      c.request<SyncGroupResponse>(ApiKey.SyncGroup, version, { groupId: 'wire', generationId: gen, memberId, groupInstanceId: null, ...names, assignments });
    const missing = await sync(c2, r2.memberId, [], 5, { protocolType: null, protocolName: 'range' });
    expect(missing.errorCode).to.equal(ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
    const followerDone = sync(c2, r2.memberId, [], 3);
    const leader = await sync(c1, r1.memberId, [{ memberId: r1.memberId, assignment: Buffer.from('one') }]);
    expect(leader).to.deep.include({ errorCode: 0, protocolType: 'consumer', protocolName: 'range' });
    expect(leader.assignment.toString()).to.equal('one');
    const follower = await followerDone;
    expect(follower.errorCode).to.equal(0);
    expect(follower.assignment.length).to.equal(0);

    const hb = await c1.request<HeartbeatResponse>(ApiKey.Heartbeat, 4, { groupId: 'wire', generationId: gen, memberId: r1.memberId, groupInstanceId: null });
    expect(hb.errorCode).to.equal(0);
    const stale = await c2.request<HeartbeatResponse>(ApiKey.Heartbeat, 0, { groupId: 'wire', generationId: gen - 1, memberId: r2.memberId });
    expect(stale.errorCode).to.equal(ErrorCode.ILLEGAL_GENERATION);

    const described = await c1.request<DescribeGroupsResponse>(ApiKey.DescribeGroups, 5, { groups: ['wire', 'nope'], includeAuthorizedOperations: true });
    const [d, nope] = described.groups;
    expect(d).to.deep.include({ errorCode: 0, groupState: 'Stable', protocolType: 'consumer', protocolData: 'range' });
    expect(d.authorizedOperations).to.be.greaterThan(0);
    const mine = d.members.find((m) => m.memberId === r1.memberId)!;
    expect(mine).to.deep.include({ clientId: 'raw-test', clientHost: '/127.0.0.1' });
    expect(mine.memberAssignment.toString()).to.equal('one');
    expect(nope).to.deep.include({ errorCode: 0, groupState: 'Dead', members: [] });

    const listed = await c1.request<ListGroupsResponse>(ApiKey.ListGroups, 5, { statesFilter: ['stable'], typesFilter: ['classic'] });
    expect(listed.groups).to.deep.include({ groupId: 'wire', protocolType: 'consumer', groupState: 'Stable', groupType: 'classic' });
    const listedV0 = await c1.request<ListGroupsResponse>(ApiKey.ListGroups, 0, {});
    expect(listedV0.groups.map((g) => g.groupId)).to.include('wire');

    // Offsets from a member of the generation, then v0 (no generation) is refused while members are in.
    const committed = await c1.request<OffsetCommitResponse>(ApiKey.OffsetCommit, 8, {
      groupId: 'wire', generationIdOrMemberEpoch: gen, memberId: r1.memberId, groupInstanceId: null,
      topics: [{ name: 'wt', partitions: [{ partitionIndex: 0, committedOffset: 17n, committedLeaderEpoch: 0, committedMetadata: 'meta-0' }, { partitionIndex: 9, committedOffset: 1n, committedLeaderEpoch: -1, committedMetadata: null }] },
        { name: 'no-such-topic', partitions: [{ partitionIndex: 0, committedOffset: 1n, committedLeaderEpoch: -1, committedMetadata: null }] }],
    });
    expect(committed.topics.map((t) => t.partitions.map((p) => p.errorCode))).to.deep.equal([[0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION], [ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]]);
    const v0 = await c1.request<OffsetCommitResponse>(ApiKey.OffsetCommit, 0, { groupId: 'wire', topics: [{ name: 'wt', partitions: [{ partitionIndex: 1, committedOffset: 1n, committedMetadata: '' }] }] });
    expect(v0.topics[0].partitions[0].errorCode).to.equal(ErrorCode.UNKNOWN_MEMBER_ID);
    const deleteWhileIn = await c1.request<OffsetDeleteResponse>(ApiKey.OffsetDelete, 0, { groupId: 'wire', topics: [{ name: 'wt', partitions: [{ partitionIndex: 0 }] }] });
    expect(deleteWhileIn.topics[0].partitions[0].errorCode).to.equal(ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC);

    // Both leave in one batched request (v3+).
    const left = await c1.request<LeaveGroupResponse>(ApiKey.LeaveGroup, 5, {
      groupId: 'wire', memberId: '', members: [{ memberId: r1.memberId, groupInstanceId: null, reason: 'done' }, { memberId: r2.memberId, groupInstanceId: null, reason: null }],
    });
    expect(left.errorCode).to.equal(0);
    expect(left.members.map((m) => m.errorCode)).to.deep.equal([0, 0]);
    const leftV0 = await c1.request<LeaveGroupResponse>(ApiKey.LeaveGroup, 0, { groupId: 'wire', memberId: r1.memberId, members: [] });
    expect(leftV0.errorCode).to.equal(ErrorCode.UNKNOWN_MEMBER_ID);

    const fetched = await c1.request<OffsetFetchResponse>(ApiKey.OffsetFetch, 5, { groupId: 'wire', topics: [{ name: 'wt', partitionIndexes: [0, 1] }], groups: [] });
    expect(fetched.errorCode).to.equal(0);
    expect(fetched.topics[0].partitions.map((p) => [p.partitionIndex, Number(p.committedOffset), p.committedLeaderEpoch, p.metadata])).to.deep.equal([[0, 17, 0, 'meta-0'], [1, -1, -1, '']]);
    const deleted = await c1.request<OffsetDeleteResponse>(ApiKey.OffsetDelete, 0, { groupId: 'wire', topics: [{ name: 'wt', partitions: [{ partitionIndex: 0 }] }, { name: 'nope', partitions: [{ partitionIndex: 0 }] }] });
    expect(deleted.errorCode).to.equal(0);
    expect(deleted.topics.map((t) => [t.name, t.partitions[0].errorCode])).to.deep.equal([['wt', 0], ['nope', ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]]);
    const removed = await c1.request<DeleteGroupsResponse>(ApiKey.DeleteGroups, 2, { groupsNames: ['wire', 'never'] });
    expect(removed.results).to.deep.equal([
      { groupId: 'wire', errorCode: 0, errorMessage: null }, { groupId: 'never', errorCode: ErrorCode.GROUP_ID_NOT_FOUND, errorMessage: null },
    ]);
  });

  it('old versions: JoinGroup v0 (session timeout as rebalance timeout) and protocolName "" before v7', async () => {
    const j = await c1.request<JoinGroupResponse>(ApiKey.JoinGroup, 0, {
      groupId: 'old', sessionTimeoutMs: 6000, memberId: '', protocolType: 'consumer', protocols: [{ name: 'range', metadata: subscription(['wt'], 0) }],
    });
    expect(j).to.include({ errorCode: 0, protocolName: 'range', generationId: 1 });
    const bad = await c1.request<JoinGroupResponse>(ApiKey.JoinGroup, 6, {
      groupId: 'old', sessionTimeoutMs: 6000, rebalanceTimeoutMs: 6000, memberId: 'nope', groupInstanceId: null, protocolType: 'consumer', protocols: [{ name: 'range', metadata: Buffer.alloc(0) }],
    });
    expect(bad).to.include({ errorCode: ErrorCode.UNKNOWN_MEMBER_ID, protocolName: '', generationId: -1 });
    const invalid = await c1.request<JoinGroupResponse>(ApiKey.JoinGroup, 7, {
      groupId: 'old', sessionTimeoutMs: 10, rebalanceTimeoutMs: 6000, memberId: '', groupInstanceId: null, protocolType: 'consumer', protocols: [{ name: 'range', metadata: Buffer.alloc(0) }],
    });
    expect(invalid).to.include({ errorCode: ErrorCode.INVALID_SESSION_TIMEOUT, protocolName: null });
  });

  it('standalone commits (generation -1) and OffsetFetch across versions, several groups at once from v8', async () => {
    const commit = (groupId: string, offset: bigint, version: number, extra: object = {}) => c1.request<OffsetCommitResponse>(ApiKey.OffsetCommit, version, {
      groupId, generationIdOrMemberEpoch: -1, memberId: '', groupInstanceId: null, retentionTimeMs: -1n, ...extra,
      topics: [{ name: 'wt', partitions: [{ partitionIndex: 2, committedOffset: offset, committedLeaderEpoch: 4, commitTimestamp: -1n, committedMetadata: `m${offset}` }] }],
    });
    for (const [v, g] of [[0, 's0'], [1, 's1'], [2, 's2'], [5, 's5'], [7, 's7'], [9, 's9']] as const) {
      const res = await commit(g, BigInt(v * 10 + 1), v);
      expect(res.topics[0].partitions[0].errorCode, `OffsetCommit v${v}`).to.equal(0);
    }
    const big = await commit('s9', 1n, 9, {});
    expect(big.topics[0].partitions[0].errorCode).to.equal(0);
    const tooBig = await c1.request<OffsetCommitResponse>(ApiKey.OffsetCommit, 9, {
      groupId: 's9', generationIdOrMemberEpoch: -1, memberId: '', groupInstanceId: null,
      topics: [{ name: 'wt', partitions: [{ partitionIndex: 2, committedOffset: 1n, committedLeaderEpoch: -1, committedMetadata: 'x'.repeat(4097) }] }],
    });
    expect(tooBig.topics[0].partitions[0].errorCode).to.equal(ErrorCode.OFFSET_METADATA_TOO_LARGE);

    const v1 = await c1.request<OffsetFetchResponse>(ApiKey.OffsetFetch, 1, { groupId: 's5', topics: [{ name: 'wt', partitionIndexes: [2] }], groups: [] });
    expect(v1.topics[0].partitions[0]).to.deep.include({ committedOffset: 51n, metadata: 'm51', errorCode: 0 });
    const all = await c1.request<OffsetFetchResponse>(ApiKey.OffsetFetch, 7, { groupId: 's7', topics: null, requireStable: true, groups: [] });
    expect(all.topics).to.deep.equal([{ name: 'wt', partitions: [{ partitionIndex: 2, committedOffset: 71n, committedLeaderEpoch: 4, metadata: 'm71', errorCode: 0 }] }]);
    const multi = await c1.request<OffsetFetchResponse>(ApiKey.OffsetFetch, 8, {
      groups: [{ groupId: 's0', topics: [{ name: 'wt', partitionIndexes: [2] }] }, { groupId: 's2', topics: null }, { groupId: 'unknown', topics: [{ name: 'wt', partitionIndexes: [0] }] }],
      requireStable: false,
    });
    expect(multi.groups.map((g) => [g.groupId, g.errorCode, g.topics.map((t) => t.partitions.map((p) => Number(p.committedOffset)))])).to.deep.equal([
      ['s0', 0, [[1]]], ['s2', 0, [[21]]], ['unknown', 0, [[-1]]],
    ]);
  });
  it('TxnOffsetCommit v0-4: offsets show once the transaction commits, UNSTABLE_OFFSET_COMMIT with require_stable until then', async () => {
    const { broker: b } = broker.current();
    const partitionOf = (groupId: string) => b.replicas.partition(OFFSETS_TOPIC, b.groups.partitionFor(groupId))!;
    const endBefore = partitionOf('tx3').log.logEndOffset;
    for (let v = 0; v <= 4; v++) {
      const res = await txnCommit(c1, v, `tx${v}`, 2000 + v, BigInt(v * 10 + 5));
      expect(res.topics).to.deep.equal([{ name: 'wt', topicId: ZERO_UUID, partitions: [{ partitionIndex: 1, errorCode: 0 }] }]);
    }
    // tx3's batch: the producer's, transactional, sequence 0.
    const read = await partitionOf('tx3').log.readBytes(endBefore, 1 << 20);
    if (read.outOfRange) throw new Error('out of range');
    expect([read.records.readBigInt64BE(43), read.records.readInt32BE(53), (read.records.readInt16BE(21) >> 4) & 1]).to.deep.equal([2003n, 0, 1]);

    const unknown = await c1.request<TxnOffsetCommitResponse>(ApiKey.TxnOffsetCommit, 3, {
      transactionalId: 'tx', groupId: 'tx3', producerId: 2003n, producerEpoch: 0, generationIdOrMemberEpoch: -1, memberId: '', groupInstanceId: null,
      topics: [{ name: 'wt', partitions: [{ partitionIndex: 9, committedOffset: 1n, committedLeaderEpoch: -1, committedMetadata: null }] },
        { name: 'no-such-topic', partitions: [{ partitionIndex: 0, committedOffset: 1n, committedLeaderEpoch: -1, committedMetadata: null }] }],
    });
    expect(unknown.topics.map((t) => t.partitions.map((p) => p.errorCode))).to.deep.equal([[ErrorCode.UNKNOWN_TOPIC_OR_PARTITION], [ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]]);
    const stale = await txnCommit(c1, 3, 'no-such-group', 2010, 1n, { generationIdOrMemberEpoch: 4, memberId: 'm' });
    expect(stale.topics[0].partitions[0].errorCode).to.equal(ErrorCode.ILLEGAL_GENERATION);

    expect(await fetchStable(c1, 'tx3')).to.deep.equal([-1, ErrorCode.UNSTABLE_OFFSET_COMMIT]);
    const plain = await c1.request<OffsetFetchResponse>(ApiKey.OffsetFetch, 6, { groupId: 'tx3', topics: [{ name: 'wt', partitionIndexes: [1] }], groups: [] });
    expect(plain.topics[0].partitions[0]).to.deep.include({ committedOffset: -1n, errorCode: 0 });
    // v8+: the group's own error stays NONE, the partition carries UNSTABLE_OFFSET_COMMIT.
    const batched = await c1.request<OffsetFetchResponse>(ApiKey.OffsetFetch, 8, { groups: [{ groupId: 'tx4', topics: null }, { groupId: 'tx2', topics: [{ name: 'wt', partitionIndexes: [1] }] }], requireStable: true });
    expect(batched.groups.map((g) => [g.groupId, g.errorCode, g.topics.map((t) => t.partitions.map((p) => p.errorCode))])).to.deep.equal([
      ['tx4', 0, []], ['tx2', 0, [[ErrorCode.UNSTABLE_OFFSET_COMMIT]]],
    ]);

    await endTransaction(b, 'tx3', 2003, true);
    await endTransaction(b, 'tx2', 2002, false);
    expect(await fetchStable(c1, 'tx3')).to.deep.equal([35, 0]);
    expect(await fetchStable(c1, 'tx2')).to.deep.equal([-1, 0]);
    expect(await fetchStable(c1, 'tx4')).to.deep.equal([-1, ErrorCode.UNSTABLE_OFFSET_COMMIT]);
    // The same producer's next transaction, same epoch and sequence 0 again: written, not taken for a retry.
    expect((await txnCommit(c1, 4, 'tx3', 2003, 36n)).topics[0].partitions[0].errorCode).to.equal(0);
    await endTransaction(b, 'tx3', 2003, true);
    expect(await fetchStable(c1, 'tx3')).to.deep.equal([36, 0]);
  });
});

describe('a Stable group across a broker restart', function () {
  this.timeout(20000);
  let dataDir: string;
  let running: RunningBroker | undefined;
  before(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'fjord-group-restart-'));
  });
  after(async () => {
    await running?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  const start = async (): Promise<{ running: RunningBroker; c: RawClient }> => {
    const r = await startBroker({ dataDir, logLevel: 'silent', config: {
      'group.initial.rebalance.delay.ms': '0', 'offsets.topic.num.partitions': '3', 'transaction.partition.verification.enable': 'false',
    } });
    const c = await RawClient.connect(r.port);
    // Each __consumer_offsets partition loads on its own: wait for those of the groups used here.
    for (const key of ['kept', 'txg']) {
      for (let i = 0; (await c.request<FindCoordinatorResponse>(ApiKey.FindCoordinator, 1, { key, keyType: 0 })).errorCode !== 0; i++) {
        if (i > 100) throw new Error('coordinator never became available');
        await new Promise((res) => setTimeout(res, 50));
      }
    }
    return { running: r, c };
  };

  it('keeps its members (Kafka restores them with their sessions): a member that heartbeats goes on without a rebalance', async () => {
    let c: RawClient;
    ({ running, c } = await start());
    const join = (memberId: string) => c.request<JoinGroupResponse>(ApiKey.JoinGroup, 7, {
      groupId: 'kept', sessionTimeoutMs: 10000, rebalanceTimeoutMs: 5000, memberId, groupInstanceId: null,
      protocolType: 'consumer', protocols: [{ name: 'range', metadata: subscription(['wt']) }],
    });
    const memberId = (await join('')).memberId;
    const joined = await join(memberId);
    expect(joined.errorCode).to.equal(0);
    const sync = await c.request<SyncGroupResponse>(ApiKey.SyncGroup, 4, {
      groupId: 'kept', generationId: joined.generationId, memberId, groupInstanceId: null, assignments: [{ memberId, assignment: Buffer.from('mine') }],
    });
    expect(sync.errorCode).to.equal(0);
    c.close();
    await running.close();

    ({ running, c } = await start());
    const group = running.broker.groups.group('kept')!;
    expect(group.state).to.equal('Stable');
    const hb = await c.request<HeartbeatResponse>(ApiKey.Heartbeat, 4, { groupId: 'kept', generationId: joined.generationId, memberId, groupInstanceId: null });
    expect(hb.errorCode).to.equal(0);
    const again = await c.request<SyncGroupResponse>(ApiKey.SyncGroup, 4, {
      groupId: 'kept', generationId: joined.generationId, memberId, groupInstanceId: null, assignments: [],
    });
    expect(again.assignment.toString()).to.equal('mine');
    // Leaving empties the group; deleting it leaves no timer but the retention check.
    await c.request<LeaveGroupResponse>(ApiKey.LeaveGroup, 4, { groupId: 'kept', memberId: '', members: [{ memberId, groupInstanceId: null }] });
    const removed = await c.request<DeleteGroupsResponse>(ApiKey.DeleteGroups, 1, { groupsNames: ['kept'] });
    expect(removed.results[0].errorCode).to.equal(0);
    expect(running.broker.groups.scheduledTimers).to.have.members(retentionTimers(running.broker.config.getInt('offsets.topic.num.partitions')));
    c.close();
  });

  it('keeps transactional offsets pending across a restart; the marker completes them, and the next load reads it', async () => {
    await running?.close(); // the previous test's broker, on the same data dir
    let c: RawClient;
    ({ running, c } = await start());
    await running.broker.controller.createTopic({ name: 'wt', numPartitions: 3, replicationFactor: 1, assignments: [], configs: {} }, false);
    expect((await txnCommit(c, 3, 'txg', 3000, 77n)).topics[0].partitions[0].errorCode).to.equal(0);
    c.close();
    await running.close();

    ({ running, c } = await start());
    expect(await fetchStable(c, 'txg')).to.deep.equal([-1, ErrorCode.UNSTABLE_OFFSET_COMMIT]);
    await endTransaction(running.broker, 'txg', 3000, true);
    expect(await fetchStable(c, 'txg')).to.deep.equal([77, 0]);
    c.close();
    await running.close();

    ({ running, c } = await start());
    expect(await fetchStable(c, 'txg')).to.deep.equal([77, 0]);
    c.close();
  });
});
