// Authorization of the group and transaction APIs, against a broker whose authorizer denies what
// each test says: GROUP_AUTHORIZATION_FAILED, TOPIC_AUTHORIZATION_FAILED,
// TRANSACTIONAL_ID_AUTHORIZATION_FAILED and CLUSTER_AUTHORIZATION_FAILED where Kafka answers them,
// and the same requests allowed get through.
import { expect } from 'chai';
import { ApiKey } from '../../src/protocol/generated';
import { ErrorCode } from '../../src/common/errors';
import { AclOperation, ResourceType } from '../../src/security/acl';
import { RawClient } from '../helpers/raw-client';
import { withBroker } from '../helpers/broker';
import { eventually } from '../helpers/eventually';
import { TestAuthorizer } from '../helpers/test-authorizer';

const { TOPIC, GROUP, CLUSTER, TRANSACTIONAL_ID } = ResourceType;
const { READ, WRITE, DELETE, DESCRIBE, CLUSTER_ACTION, IDEMPOTENT_WRITE } = AclOperation;
const GROUP_KEY = 0;
const TRANSACTION_KEY = 1;

describe('authorization: groups and transactions', function () {
  const authorizer = new TestAuthorizer();
  const broker = withBroker({ authorizer });
  let raw: RawClient;

  const findCoordinator = (keyType: number, keys: string[]) => raw.api(ApiKey.FindCoordinator, 4, { key: '', keyType, coordinatorKeys: keys });

  before(async () => {
    raw = await RawClient.connect(broker.current().port);
    await broker.current().broker.controller.createTopic({ name: 'orders', numPartitions: 1, replicationFactor: 1, assignments: [], configs: {} }, false);
    // The coordinators load once their topics exist: asked until they answer.
    let ready = false;
    await eventually(() => {
      void Promise.all([findCoordinator(GROUP_KEY, ['g']), findCoordinator(TRANSACTION_KEY, ['t'])])
        .then((rs) => { ready = rs.every((r) => r.coordinators[0].errorCode === ErrorCode.NONE); });
      return ready;
    }, 'the coordinators', 15000);
  });
  after(() => raw.close());
  beforeEach(() => authorizer.reset());

  describe('group APIs', () => {
    it('FindCoordinator needs DESCRIBE on the group or the transactional id', async () => {
      authorizer.deny(DESCRIBE, GROUP, 'hidden').deny(DESCRIBE, TRANSACTIONAL_ID, 'secret');
      const groups = await findCoordinator(GROUP_KEY, ['hidden', 'open']);
      expect(groups.coordinators.map((c) => [c.key, c.errorCode])).to.deep.equal([['hidden', ErrorCode.GROUP_AUTHORIZATION_FAILED], ['open', ErrorCode.NONE]]);
      const txns = await findCoordinator(TRANSACTION_KEY, ['secret']);
      expect(txns.coordinators[0].errorCode).to.equal(ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
    });

    it('JoinGroup, SyncGroup, Heartbeat and LeaveGroup need READ on the group', async () => {
      authorizer.deny(READ, GROUP, 'g1');
      const join = await raw.api(ApiKey.JoinGroup, 5, {
        groupId: 'g1', sessionTimeoutMs: 10000, rebalanceTimeoutMs: 10000, memberId: '', groupInstanceId: null, protocolType: 'consumer',
        protocols: [{ name: 'range', metadata: Buffer.alloc(0) }],
      });
      expect([join.errorCode, join.memberId, join.generationId]).to.deep.equal([ErrorCode.GROUP_AUTHORIZATION_FAILED, '', -1]);
      const sync = await raw.api(ApiKey.SyncGroup, 3, { groupId: 'g1', generationId: 1, memberId: 'm', groupInstanceId: null, assignments: [] });
      expect(sync.errorCode).to.equal(ErrorCode.GROUP_AUTHORIZATION_FAILED);
      const beat = await raw.api(ApiKey.Heartbeat, 3, { groupId: 'g1', generationId: 1, memberId: 'm', groupInstanceId: null });
      expect(beat.errorCode).to.equal(ErrorCode.GROUP_AUTHORIZATION_FAILED);
      const leave = await raw.api(ApiKey.LeaveGroup, 3, { groupId: 'g1', memberId: '', members: [{ memberId: 'm', groupInstanceId: null }] });
      expect(leave.errorCode).to.equal(ErrorCode.GROUP_AUTHORIZATION_FAILED);
      // Allowed, the same join is answered by the coordinator (KIP-394: a member id to join with).
      authorizer.reset();
      const allowed = await raw.api(ApiKey.JoinGroup, 5, {
        groupId: 'g1', sessionTimeoutMs: 10000, rebalanceTimeoutMs: 10000, memberId: '', groupInstanceId: null, protocolType: 'consumer',
        protocols: [{ name: 'range', metadata: Buffer.alloc(0) }],
      });
      expect(allowed.errorCode).to.equal(ErrorCode.MEMBER_ID_REQUIRED);
    });

    const commit = (groupId: string) => raw.api(ApiKey.OffsetCommit, 8, {
      groupId, generationIdOrMemberEpoch: -1, memberId: '', groupInstanceId: null,
      topics: [{ name: 'orders', partitions: [{ partitionIndex: 0, committedOffset: 5n, committedLeaderEpoch: -1, committedMetadata: '' }] }],
    });
    const fetchOffsets = (groupId: string, topics: string[] | null) => raw.api(ApiKey.OffsetFetch, 8, {
      groupId: '', topics: [], requireStable: false,
      groups: [{ groupId, topics: topics && topics.map((name) => ({ name, partitionIndexes: [0] })) }],
    });

    it('OffsetCommit needs READ on the group, then READ on each topic', async () => {
      authorizer.deny(READ, GROUP, 'g2');
      expect((await commit('g2')).topics[0].partitions[0].errorCode).to.equal(ErrorCode.GROUP_AUTHORIZATION_FAILED);
      authorizer.reset();
      authorizer.deny(READ, TOPIC, 'orders');
      expect((await commit('g2')).topics[0].partitions[0].errorCode).to.equal(ErrorCode.TOPIC_AUTHORIZATION_FAILED);
      authorizer.reset();
      expect((await commit('g2')).topics[0].partitions[0].errorCode).to.equal(ErrorCode.NONE);
    });

    it('OffsetFetch needs DESCRIBE on the group; named topics it may not DESCRIBE fail, all topics leaves them out', async () => {
      await commit('g3');
      authorizer.deny(DESCRIBE, GROUP, 'g3');
      expect((await fetchOffsets('g3', ['orders'])).groups[0].errorCode).to.equal(ErrorCode.GROUP_AUTHORIZATION_FAILED);
      authorizer.reset();
      authorizer.deny(DESCRIBE, TOPIC, 'orders');
      const named = (await fetchOffsets('g3', ['orders'])).groups[0];
      expect([named.errorCode, named.topics[0].partitions[0].errorCode, named.topics[0].partitions[0].committedOffset])
        .to.deep.equal([ErrorCode.NONE, ErrorCode.TOPIC_AUTHORIZATION_FAILED, -1n]);
      expect((await fetchOffsets('g3', null)).groups[0].topics).to.deep.equal([]);
      authorizer.reset();
      const all = (await fetchOffsets('g3', null)).groups[0];
      expect(all.topics.map((t) => [t.name, t.partitions[0].committedOffset])).to.deep.equal([['orders', 5n]]);
    });

    it('OffsetDelete needs DELETE on the group and READ on each topic', async () => {
      await commit('g4');
      const del = () => raw.api(ApiKey.OffsetDelete, 0, { groupId: 'g4', topics: [{ name: 'orders', partitions: [{ partitionIndex: 0 }] }] });
      authorizer.deny(DELETE, GROUP, 'g4');
      expect((await del()).errorCode).to.equal(ErrorCode.GROUP_AUTHORIZATION_FAILED);
      authorizer.reset();
      authorizer.deny(READ, TOPIC, 'orders');
      const res = await del();
      expect([res.errorCode, res.topics[0].partitions[0].errorCode]).to.deep.equal([ErrorCode.NONE, ErrorCode.TOPIC_AUTHORIZATION_FAILED]);
    });

    it('DescribeGroups needs DESCRIBE on each group; ListGroups shows only those without DESCRIBE on the cluster', async () => {
      await commit('g5');
      await commit('g6');
      authorizer.deny(DESCRIBE, GROUP, 'g5');
      const described = await raw.api(ApiKey.DescribeGroups, 5, { groups: ['g5', 'g6'], includeAuthorizedOperations: false });
      expect(described.groups.map((g) => [g.groupId, g.errorCode])).to.deep.equal([['g5', ErrorCode.GROUP_AUTHORIZATION_FAILED], ['g6', ErrorCode.NONE]]);
      const withCluster = await raw.api(ApiKey.ListGroups, 4, { statesFilter: [], typesFilter: [] });
      expect(withCluster.groups.map((g) => g.groupId)).to.include.members(['g5', 'g6']);
      authorizer.deny(DESCRIBE, CLUSTER);
      const filtered = await raw.api(ApiKey.ListGroups, 4, { statesFilter: [], typesFilter: [] });
      expect(filtered.groups.map((g) => g.groupId)).to.include('g6').and.not.include('g5');
    });

    it('DeleteGroups needs DELETE on each group', async () => {
      await commit('g7');
      await commit('g8');
      authorizer.deny(DELETE, GROUP, 'g7');
      const res = await raw.api(ApiKey.DeleteGroups, 2, { groupsNames: ['g7', 'g8'] });
      expect(res.results.map((r) => [r.groupId, r.errorCode])).to.deep.equal([['g7', ErrorCode.GROUP_AUTHORIZATION_FAILED], ['g8', ErrorCode.NONE]]);
    });

    it('ConsumerGroupHeartbeat needs READ on the group and DESCRIBE on each subscribed topic; ConsumerGroupDescribe DESCRIBE on the group', async () => {
      const beat = () => raw.api(ApiKey.ConsumerGroupHeartbeat, 0, {
        groupId: 'cg', memberId: 'member-1', memberEpoch: 0, rebalanceTimeoutMs: 30000, subscribedTopicNames: ['orders'], topicPartitions: [],
      });
      authorizer.deny(READ, GROUP, 'cg');
      expect((await beat()).errorCode).to.equal(ErrorCode.GROUP_AUTHORIZATION_FAILED);
      authorizer.reset();
      authorizer.deny(DESCRIBE, TOPIC, 'orders');
      expect((await beat()).errorCode).to.equal(ErrorCode.TOPIC_AUTHORIZATION_FAILED);
      authorizer.reset();
      expect((await beat()).errorCode).to.equal(ErrorCode.NONE);
      authorizer.deny(DESCRIBE, GROUP, 'cg');
      const described = await raw.api(ApiKey.ConsumerGroupDescribe, 0, { groupIds: ['cg'], includeAuthorizedOperations: false });
      expect(described.groups[0].errorCode).to.equal(ErrorCode.GROUP_AUTHORIZATION_FAILED);
    });
  });

  it('StreamsGroupHeartbeat needs READ on the group and DESCRIBE on the topology\'s topics; StreamsGroupDescribe DESCRIBE on the group', async () => {
    const beat = () => raw.api(ApiKey.StreamsGroupHeartbeat, 0, {
      groupId: 'app', memberId: 'm1', memberEpoch: 0, endpointInformationEpoch: 0, rebalanceTimeoutMs: 30000, processId: 'p1',
      topology: { epoch: 1, subtopologies: [{
        subtopologyId: '0', sourceTopics: ['orders'], sourceTopicRegex: [], stateChangelogTopics: [], repartitionSinkTopics: [],
        repartitionSourceTopics: [], copartitionGroups: [],
      }] },
      activeTasks: [], standbyTasks: [], warmupTasks: [], clientTags: [],
    });
    authorizer.deny(READ, GROUP, 'app');
    expect((await beat()).errorCode).to.equal(ErrorCode.GROUP_AUTHORIZATION_FAILED);
    authorizer.reset();
    authorizer.deny(DESCRIBE, TOPIC, 'orders');
    const refused = await beat();
    expect([refused.errorCode, refused.errorMessage]).to.deep.equal([ErrorCode.TOPIC_AUTHORIZATION_FAILED, 'Unauthorized topics: orders']);
    authorizer.reset();
    expect((await beat()).errorCode).to.equal(ErrorCode.NONE);
    authorizer.deny(DESCRIBE, GROUP, 'app');
    const described = await raw.api(ApiKey.StreamsGroupDescribe, 0, { groupIds: ['app'], includeAuthorizedOperations: false });
    expect(described.groups[0].errorCode).to.equal(ErrorCode.GROUP_AUTHORIZATION_FAILED);
  });

  describe('transaction APIs', () => {
    const initProducerId = (transactionalId: string | null) => raw.api(ApiKey.InitProducerId, 4, {
      transactionalId, transactionTimeoutMs: 60000, producerId: -1n, producerEpoch: -1,
    });

    it('InitProducerId needs WRITE on the transactional id', async () => {
      authorizer.deny(WRITE, TRANSACTIONAL_ID, 'tx-a');
      expect((await initProducerId('tx-a')).errorCode).to.equal(ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
      authorizer.reset();
      expect((await initProducerId('tx-a')).errorCode).to.equal(ErrorCode.NONE);
    });

    it('InitProducerId without a transactional id needs IDEMPOTENT_WRITE on the cluster or WRITE on some topic', async () => {
      authorizer.deny(IDEMPOTENT_WRITE, CLUSTER);
      expect((await initProducerId(null)).errorCode).to.equal(ErrorCode.NONE);
      authorizer.deny(WRITE, TOPIC);
      expect((await initProducerId(null)).errorCode).to.equal(ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
    });

    it('AddPartitionsToTxn v3 needs WRITE on the transactional id and on each topic', async () => {
      const add = (topics: string[]) => raw.api(ApiKey.AddPartitionsToTxn, 3, {
        transactions: [], v3AndBelowTransactionalId: 'tx-b', v3AndBelowProducerId: 1n, v3AndBelowProducerEpoch: 0,
        v3AndBelowTopics: topics.map((name) => ({ name, partitions: [0] })),
      });
      await broker.current().broker.controller.createTopic({ name: 'other', numPartitions: 1, replicationFactor: 1, assignments: [], configs: {} }, false);
      authorizer.deny(WRITE, TRANSACTIONAL_ID, 'tx-b');
      expect((await add(['orders'])).resultsByTopicV3AndBelow[0].resultsByPartition[0].partitionErrorCode)
        .to.equal(ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
      authorizer.reset();
      authorizer.deny(WRITE, TOPIC, 'orders');
      const res = await add(['orders', 'other']);
      expect(res.resultsByTopicV3AndBelow.map((t) => [t.name, t.resultsByPartition[0].partitionErrorCode])).to.deep.equal([
        ['orders', ErrorCode.TOPIC_AUTHORIZATION_FAILED], ['other', ErrorCode.OPERATION_NOT_ATTEMPTED],
      ]);
    });

    it('AddPartitionsToTxn v4+ (from brokers) needs CLUSTER_ACTION', async () => {
      authorizer.deny(CLUSTER_ACTION, CLUSTER);
      const res = await raw.api(ApiKey.AddPartitionsToTxn, 4, {
        transactions: [{ transactionalId: 'tx-c', producerId: 1n, producerEpoch: 0, verifyOnly: true, topics: [{ name: 'orders', partitions: [0] }] }],
        v3AndBelowTransactionalId: '', v3AndBelowProducerId: 0n, v3AndBelowProducerEpoch: 0, v3AndBelowTopics: [],
      });
      expect([res.errorCode, res.resultsByTransaction.length]).to.deep.equal([ErrorCode.CLUSTER_AUTHORIZATION_FAILED, 0]);
    });

    it('AddOffsetsToTxn needs WRITE on the transactional id, then READ on the group; EndTxn WRITE on the id', async () => {
      const addOffsets = () => raw.api(ApiKey.AddOffsetsToTxn, 3, { transactionalId: 'tx-d', producerId: 1n, producerEpoch: 0, groupId: 'g-tx' });
      authorizer.deny(WRITE, TRANSACTIONAL_ID, 'tx-d');
      expect((await addOffsets()).errorCode).to.equal(ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
      const ended = await raw.api(ApiKey.EndTxn, 3, { transactionalId: 'tx-d', producerId: 1n, producerEpoch: 0, committed: true });
      expect(ended.errorCode).to.equal(ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
      authorizer.reset();
      authorizer.deny(READ, GROUP, 'g-tx');
      expect((await addOffsets()).errorCode).to.equal(ErrorCode.GROUP_AUTHORIZATION_FAILED);
    });

    it('TxnOffsetCommit needs WRITE on the transactional id, READ on the group and on each topic', async () => {
      const commit = () => raw.api(ApiKey.TxnOffsetCommit, 3, {
        transactionalId: 'tx-e', groupId: 'g-txc', producerId: 1n, producerEpoch: 0, generationIdOrMemberEpoch: -1, memberId: '', groupInstanceId: null,
        topics: [{ name: 'orders', partitions: [{ partitionIndex: 0, committedOffset: 1n, committedLeaderEpoch: -1, committedMetadata: '' }] }],
      });
      const code = async () => (await commit()).topics[0].partitions[0].errorCode;
      authorizer.deny(WRITE, TRANSACTIONAL_ID, 'tx-e').deny(READ, GROUP, 'g-txc');
      expect(await code()).to.equal(ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
      authorizer.reset();
      authorizer.deny(READ, GROUP, 'g-txc');
      expect(await code()).to.equal(ErrorCode.GROUP_AUTHORIZATION_FAILED);
      authorizer.reset();
      authorizer.deny(READ, TOPIC, 'orders');
      expect(await code()).to.equal(ErrorCode.TOPIC_AUTHORIZATION_FAILED);
    });

    it('WriteTxnMarkers needs CLUSTER_ACTION', async () => {
      authorizer.deny(CLUSTER_ACTION, CLUSTER);
      const res = await raw.api(ApiKey.WriteTxnMarkers, 1, {
        markers: [{ producerId: 1n, producerEpoch: 0, transactionResult: true, coordinatorEpoch: 0, topics: [{ name: 'orders', partitionIndexes: [0] }] }],
      });
      expect(res.markers[0].topics[0].partitions[0].errorCode).to.equal(ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
    });

    it('DescribeTransactions needs DESCRIBE on each id; ListTransactions lists only those', async () => {
      expect((await initProducerId('tx-f')).errorCode).to.equal(ErrorCode.NONE);
      expect((await initProducerId('tx-g')).errorCode).to.equal(ErrorCode.NONE);
      authorizer.deny(DESCRIBE, TRANSACTIONAL_ID, 'tx-f');
      const described = await raw.api(ApiKey.DescribeTransactions, 0, { transactionalIds: ['tx-f', 'tx-g'] });
      expect(described.transactionStates.map((t) => [t.transactionalId, t.errorCode])).to.deep.equal([
        ['tx-f', ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED], ['tx-g', ErrorCode.NONE],
      ]);
      const listed = await raw.api(ApiKey.ListTransactions, 1, { stateFilters: [], producerIdFilters: [], durationFilter: -1n });
      expect(listed.transactionStates.map((t) => t.transactionalId)).to.include('tx-g').and.not.include('tx-f');
    });
  });
});
