// The versions Kafka 4.4 added to APIs Fjord already served, on the wire through RawClient: what each
// new version means (topics by id, new fields, new error codes) next to the version before it.
import { expect } from 'chai';
import { ApiKey } from '../../src/protocol/generated';
import type { ProduceResponse } from '../../src/protocol/generated/ProduceResponse';
import type { OffsetCommitResponse } from '../../src/protocol/generated/OffsetCommitResponse';
import type { OffsetFetchResponse } from '../../src/protocol/generated/OffsetFetchResponse';
import type { FetchResponse } from '../../src/protocol/generated/FetchResponse';
import type { DescribeClusterResponse } from '../../src/protocol/generated/DescribeClusterResponse';
import type { DescribeGroupsResponse } from '../../src/protocol/generated/DescribeGroupsResponse';
import type { DeleteGroupsResponse } from '../../src/protocol/generated/DeleteGroupsResponse';
import type { DescribeLogDirsResponse } from '../../src/protocol/generated/DescribeLogDirsResponse';
import type { ListOffsetsResponse } from '../../src/protocol/generated/ListOffsetsResponse';
import type { ListTransactionsResponse } from '../../src/protocol/generated/ListTransactionsResponse';
import type { InitProducerIdResponse } from '../../src/protocol/generated/InitProducerIdResponse';
import type { FindCoordinatorResponse } from '../../src/protocol/generated/FindCoordinatorResponse';
import { ErrorCode } from '../../src/common/errors';
import { ZERO_UUID } from '../../src/protocol/primitives';
import { buildBatchSync } from '../../src/records/records';
import { RawClient } from '../helpers/raw-client';
import { withBroker } from '../helpers/broker';

const UNKNOWN_ID = 'f'.repeat(32);

describe('Kafka 4.4 versions of the APIs', function () {
  this.timeout(30000);
  const broker = withBroker({ config: { 'group.initial.rebalance.delay.ms': '0' } });
  let c: RawClient;
  let topicId: string;

  before(async () => {
    const created = await broker.current().broker.controller.createTopic({ name: 'v44', numPartitions: 2, replicationFactor: 1, assignments: [], configs: {} }, false);
    expect(created.errorCode).to.equal(ErrorCode.NONE);
    topicId = created.topic!.id;
    c = await RawClient.connect(broker.current().port);
  });
  after(() => c.close());

  const records = (value: string) => buildBatchSync({ records: [{ value }] });
  const partition = (partitionIndex: number, offset: bigint) => ({ partitionIndex, committedOffset: offset, committedLeaderEpoch: -1, committedMetadata: 'm' });
  /** A group that exists only through its committed offsets (Empty). */
  const commitOffset = async (groupId: string) => {
    const res = await c.request<OffsetCommitResponse>(ApiKey.OffsetCommit, 9, {
      groupId, generationIdOrMemberEpoch: -1, memberId: '', groupInstanceId: null, topics: [{ name: 'v44', partitions: [partition(1, 1n)] }],
    });
    expect(res.topics[0].partitions[0].errorCode).to.equal(ErrorCode.NONE);
  };

  describe('Produce 13: topics by id', () => {
    it('appends to a topic named by its id and answers with the id; an unknown id is UNKNOWN_TOPIC_ID on each partition', async () => {
      const res = await c.request<ProduceResponse>(ApiKey.Produce, 13, {
        transactionalId: null, acks: -1, timeoutMs: 5000,
        topicData: [
          { topicId, partitionData: [{ index: 0, records: records('by-id') }, { index: 7, records: records('no such partition') }] },
          { topicId: UNKNOWN_ID, partitionData: [{ index: 0, records: records('a') }, { index: 1, records: records('b') }] },
        ],
      });
      expect(res.responses.map((t) => [t.topicId, t.partitionResponses.map((p) => [p.index, p.errorCode, p.baseOffset])])).to.deep.equal([
        [topicId, [[0, ErrorCode.NONE, 0n], [7, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, -1n]]],
        [UNKNOWN_ID, [[0, ErrorCode.UNKNOWN_TOPIC_ID, -1n], [1, ErrorCode.UNKNOWN_TOPIC_ID, -1n]]],
      ]);
      expect(broker.current().broker.replicas.partition('v44', 0)!.log.logEndOffset).to.equal(1);
    });

    it('v12 still names topics by name (its id is not on the wire)', async () => {
      const res = await c.request<ProduceResponse>(ApiKey.Produce, 12, {
        transactionalId: null, acks: 1, timeoutMs: 5000, topicData: [{ name: 'v44', partitionData: [{ index: 0, records: records('by-name') }] }],
      });
      expect(res.responses.map((t) => [t.name, t.topicId, t.partitionResponses[0].errorCode, t.partitionResponses[0].baseOffset])).to.deep.equal([
        ['v44', ZERO_UUID, ErrorCode.NONE, 1n],
      ]);
    });
  });

  describe('OffsetCommit 10 and OffsetFetch 10: topics by id', () => {

    it('commits to topics named by id, UNKNOWN_TOPIC_ID for an unknown one; fetches by id, or all with their ids', async () => {
      const committed = await c.request<OffsetCommitResponse>(ApiKey.OffsetCommit, 10, {
        groupId: 'g10', generationIdOrMemberEpoch: -1, memberId: '', groupInstanceId: null,
        topics: [{ topicId, partitions: [partition(0, 5n), partition(9, 1n)] }, { topicId: UNKNOWN_ID, partitions: [partition(0, 1n)] }],
      });
      expect(committed.topics.map((t) => [t.topicId, t.partitions.map((p) => [p.partitionIndex, p.errorCode])])).to.deep.equal([
        [topicId, [[0, ErrorCode.NONE], [9, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]]],
        [UNKNOWN_ID, [[0, ErrorCode.UNKNOWN_TOPIC_ID]]],
      ]);

      const byId = await c.request<OffsetFetchResponse>(ApiKey.OffsetFetch, 10, {
        groups: [{ groupId: 'g10', memberId: null, memberEpoch: -1, topics: [{ topicId, partitionIndexes: [0, 1] }, { topicId: UNKNOWN_ID, partitionIndexes: [3] }] }],
        requireStable: false,
      });
      const group = byId.groups[0];
      expect(group.errorCode).to.equal(ErrorCode.NONE);
      expect(group.topics.map((t) => [t.topicId, t.partitions.map((p) => [p.partitionIndex, p.committedOffset, p.errorCode])])).to.deep.equal([
        [topicId, [[0, 5n, ErrorCode.NONE], [1, -1n, ErrorCode.NONE]]],
        [UNKNOWN_ID, [[3, -1n, ErrorCode.UNKNOWN_TOPIC_ID]]],
      ]);

      const all = await c.request<OffsetFetchResponse>(ApiKey.OffsetFetch, 10, {
        groups: [{ groupId: 'g10', memberId: null, memberEpoch: -1, topics: null }], requireStable: false,
      });
      expect(all.groups[0].topics.map((t) => [t.topicId, t.partitions.map((p) => [p.partitionIndex, p.committedOffset])])).to.deep.equal([
        [topicId, [[0, 5n]]],
      ]);
    });

    it('an offset committed by id is the one fetched by name (v9), and the other way round', async () => {
      await c.request<OffsetCommitResponse>(ApiKey.OffsetCommit, 9, {
        groupId: 'g9', generationIdOrMemberEpoch: -1, memberId: '', groupInstanceId: null, topics: [{ name: 'v44', partitions: [partition(1, 42n)] }],
      });
      const byId = await c.request<OffsetFetchResponse>(ApiKey.OffsetFetch, 10, {
        groups: [{ groupId: 'g9', memberId: null, memberEpoch: -1, topics: [{ topicId, partitionIndexes: [1] }] }], requireStable: false,
      });
      expect(byId.groups[0].topics[0].partitions[0].committedOffset).to.equal(42n);
      const byName = await c.request<OffsetFetchResponse>(ApiKey.OffsetFetch, 9, {
        groups: [{ groupId: 'g10', memberId: null, memberEpoch: -1, topics: [{ name: 'v44', partitionIndexes: [0] }] }], requireStable: false,
      });
      expect(byName.groups[0].topics.map((t) => [t.name, t.partitions[0].committedOffset])).to.deep.equal([['v44', 5n]]);
    });
  });

  it('Fetch 18: a consumer fetch reads as at v17 (the HighWatermark field is a follower\'s)', async () => {
    const produced = await c.request<ProduceResponse>(ApiKey.Produce, 13, {
      transactionalId: null, acks: 1, timeoutMs: 5000, topicData: [{ topicId, partitionData: [{ index: 1, records: records('to fetch') }] }],
    });
    expect(produced.responses[0].partitionResponses[0].errorCode).to.equal(ErrorCode.NONE);
    const res = await c.request<FetchResponse>(ApiKey.Fetch, 18, {
      maxWaitMs: 0, minBytes: 0, maxBytes: 1 << 20, isolationLevel: 0, sessionId: 0, sessionEpoch: -1,
      topics: [{ topicId, partitions: [{ partition: 1, fetchOffset: 0n, partitionMaxBytes: 1 << 20, highWatermark: 0n }] }],
      forgottenTopicsData: [], rackId: '',
    });
    const p = res.responses[0].partitions[0];
    expect([res.responses[0].topicId, p.errorCode, p.highWatermark, p.records!.length > 0]).to.deep.equal([topicId, ErrorCode.NONE, 1n, true]);
  });

  it('DescribeCluster 2: every broker unfenced, with or without IncludeFencedBrokers', async () => {
    for (const includeFencedBrokers of [false, true]) {
      const res = await c.request<DescribeClusterResponse>(ApiKey.DescribeCluster, 2, { includeClusterAuthorizedOperations: false, endpointType: 1, includeFencedBrokers });
      expect(res.errorCode).to.equal(ErrorCode.NONE);
      expect(res.brokers.map((b) => [b.brokerId, b.isFenced])).to.deep.equal([[broker.current().broker.nodeId, false]]);
    }
  });

  it('DescribeGroups 6: an unknown group is GROUP_ID_NOT_FOUND with a message, where v5 says Dead with no error', async () => {
    await commitOffset('described');
    const v6 = await c.request<DescribeGroupsResponse>(ApiKey.DescribeGroups, 6, { groups: ['nobody', 'described'], includeAuthorizedOperations: false });
    expect(v6.groups.map((g) => [g.groupId, g.errorCode, g.errorMessage, g.groupState])).to.deep.equal([
      ['nobody', ErrorCode.GROUP_ID_NOT_FOUND, 'Group nobody not found.', 'Dead'],
      ['described', ErrorCode.NONE, null, 'Empty'],
    ]);
    const v5 = await c.request<DescribeGroupsResponse>(ApiKey.DescribeGroups, 5, { groups: ['nobody'], includeAuthorizedOperations: false });
    expect(v5.groups.map((g) => [g.errorCode, g.groupState])).to.deep.equal([[ErrorCode.NONE, 'Dead']]);
    // A group id of 32 KB is quoted in part, so that the message still fits a protocol string.
    const long = 'g'.repeat(32000);
    const quoted = await c.request<DescribeGroupsResponse>(ApiKey.DescribeGroups, 6, { groups: [long], includeAuthorizedOperations: false });
    expect(quoted.groups[0].errorMessage).to.equal(`Group ${'g'.repeat(1000)}... (32000 characters) not found.`);
  });

  it('DeleteGroups 3: GROUP_ID_NOT_FOUND with no message, as Kafka 4.4 answers', async () => {
    await commitOffset('deleted');
    const res = await c.request<DeleteGroupsResponse>(ApiKey.DeleteGroups, 3, { groupsNames: ['nobody', 'deleted'] });
    expect(res.results.map((r) => [r.groupId, r.errorCode, r.errorMessage])).to.deep.equal([
      ['nobody', ErrorCode.GROUP_ID_NOT_FOUND, null],
      ['deleted', ErrorCode.NONE, null],
    ]);
  });

  it('DescribeLogDirs 5: the dir is not cordoned', async () => {
    const res = await c.request<DescribeLogDirsResponse>(ApiKey.DescribeLogDirs, 5, { topics: null });
    expect(res.results.map((r) => [r.errorCode, r.isCordoned])).to.deep.equal([[ErrorCode.NONE, false]]);
  });

  it('ListOffsets 11: EARLIEST_PENDING_UPLOAD (-6) is offset -1 with no remote storage; before v11 it is UNSUPPORTED_VERSION', async () => {
    const ask = (version: number) => c.request<ListOffsetsResponse>(ApiKey.ListOffsets, version, {
      replicaId: -1, isolationLevel: 0, timeoutMs: 1000, topics: [{ name: 'v44', partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: -6n }] }],
    });
    const answer = async (version: number) => {
      const p = (await ask(version)).topics[0].partitions[0];
      return [p.errorCode, p.offset, p.timestamp];
    };
    expect(await answer(11)).to.deep.equal([ErrorCode.NONE, -1n, -1n]);
    expect(await answer(10)).to.deep.equal([ErrorCode.UNSUPPORTED_VERSION, -1n, -1n]);
  });

  describe('ListTransactions 2: TransactionalIdPattern', () => {
    before(async () => {
      // FindCoordinator creates __transaction_state; the coordinator answers once it has loaded it.
      const findCoordinator = async () => (await c.request<FindCoordinatorResponse>(ApiKey.FindCoordinator, 3, { key: 'alpha-1', keyType: 1, coordinatorKeys: [] })).errorCode;
      while (await findCoordinator() !== ErrorCode.NONE) await new Promise((resolve) => setTimeout(resolve, 20));
      for (const transactionalId of ['alpha-1', 'alpha-2', 'beta-1']) {
        const res = await c.request<InitProducerIdResponse>(ApiKey.InitProducerId, 4, { transactionalId, transactionTimeoutMs: 60000, producerId: -1n, producerEpoch: -1 });
        expect(res.errorCode).to.equal(ErrorCode.NONE);
      }
    });

    const listed = async (pattern: string | null, version = 2): Promise<[number, string[]]> => {
      const res = await c.request<ListTransactionsResponse>(ApiKey.ListTransactions, version, {
        stateFilters: [], producerIdFilters: [], durationFilter: -1n, transactionalIdPattern: pattern,
      });
      return [res.errorCode, res.transactionStates.map((t) => t.transactionalId).sort()];
    };

    it('lists the transactional ids the pattern matches whole; null or empty lists all', async () => {
      expect(await listed('alpha-.*')).to.deep.equal([ErrorCode.NONE, ['alpha-1', 'alpha-2']]);
      expect(await listed('alpha'), 'the whole id must match').to.deep.equal([ErrorCode.NONE, []]);
      expect(await listed('(?P<kind>beta)-\\d')).to.deep.equal([ErrorCode.NONE, ['beta-1']]);
      expect(await listed(null)).to.deep.equal([ErrorCode.NONE, ['alpha-1', 'alpha-2', 'beta-1']]);
      expect(await listed('')).to.deep.equal([ErrorCode.NONE, ['alpha-1', 'alpha-2', 'beta-1']]);
    });

    it('answers a pattern RE2/J refuses with INVALID_REGULAR_EXPRESSION', async () => {
      for (const pattern of ['alpha-(', '(?=alpha).*', '(a)\\1']) {
        expect(await listed(pattern), pattern).to.deep.equal([ErrorCode.INVALID_REGULAR_EXPRESSION, []]);
      }
    });
  });
});
