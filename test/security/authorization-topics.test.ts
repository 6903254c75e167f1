// Authorization of the topic, record and cluster APIs, against a broker whose authorizer denies
// what each test says (test/helpers/test-authorizer.ts): a denied principal gets Kafka's error
// code, an allowed one gets through, and Metadata hides and never auto-creates what it may not.
import { expect } from 'chai';
import { ApiKey, type ApiRequestMap } from '../../src/protocol/generated';
import { ErrorCode, errorMessage } from '../../src/common/errors';
import { ZERO_UUID } from '../../src/protocol/primitives';
import { buildBatchSync } from '../../src/records/build-batch';
import { AclOperation, ResourceType } from '../../src/security/acl';
import { RawClient } from '../helpers/raw-client';
import { withBroker } from '../helpers/broker';
import { TestAuthorizer } from '../helpers/test-authorizer';

const { TOPIC, CLUSTER, TRANSACTIONAL_ID } = ResourceType;
const { READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE, CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS } = AclOperation;
const CLUSTER_NAME = 'kafka-cluster';

describe('authorization: topics, records and the cluster', function () {
  const authorizer = new TestAuthorizer();
  const broker = withBroker({ authorizer, config: { 'num.partitions': '2' } });
  let raw: RawClient;

  before(async () => {
    raw = await RawClient.connect(broker.current().port);
    for (const name of ['alpha', 'beta']) {
      await broker.current().broker.controller.createTopic({ name, numPartitions: 2, replicationFactor: 1, assignments: [], configs: {} }, false);
    }
  });
  after(() => raw.close());
  beforeEach(() => authorizer.reset());

  function produce(topic: string, partitions: number[], opts: { transactionalId?: string; transactional?: boolean } = {}) {
    const records = (index: number) => buildBatchSync({
      producerId: opts.transactional ? 7 : -1, producerEpoch: opts.transactional ? 0 : -1, baseSequence: opts.transactional ? 0 : -1,
      isTransactional: opts.transactional ?? false, records: [{ value: Buffer.from(`v${index}`) }],
    });
    return raw.api(ApiKey.Produce, 9, {
      transactionalId: opts.transactionalId ?? null, acks: 1, timeoutMs: 1000,
      topicData: [{ name: topic, partitionData: partitions.map((index) => ({ index, records: records(index) })) }],
    });
  }

  function logEnd(topic: string, partition: number): number {
    return broker.current().broker.replicas.partition(topic, partition)!.log.logEndOffset;
  }

  describe('Produce', () => {
    it('refuses a topic without WRITE (every partition, nothing written), asking once per topic', async () => {
      authorizer.deny(WRITE, TOPIC, 'alpha');
      const before = logEnd('alpha', 0);
      const res = await produce('alpha', [0, 1]);
      expect(res.responses[0].partitionResponses.map((p) => p.errorCode)).to.deep.equal([ErrorCode.TOPIC_AUTHORIZATION_FAILED, ErrorCode.TOPIC_AUTHORIZATION_FAILED]);
      expect(logEnd('alpha', 0)).to.equal(before);
      expect(authorizer.askedLines()).to.deep.equal(['WRITE TOPIC alpha']);
    });

    it('writes with WRITE on the topic', async () => {
      const before = logEnd('alpha', 1);
      const res = await produce('alpha', [1]);
      expect(res.responses[0].partitionResponses[0].errorCode).to.equal(ErrorCode.NONE);
      expect(logEnd('alpha', 1)).to.equal(before + 1);
    });

    it('answers TOPIC_AUTHORIZATION_FAILED for an unknown topic it may not write, UNKNOWN_TOPIC_OR_PARTITION when it may', async () => {
      authorizer.deny(WRITE, TOPIC, 'nowhere');
      expect((await produce('nowhere', [0])).responses[0].partitionResponses[0].errorCode).to.equal(ErrorCode.TOPIC_AUTHORIZATION_FAILED);
      authorizer.reset();
      expect((await produce('nowhere', [0])).responses[0].partitionResponses[0].errorCode).to.equal(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    });

    it('refuses transactional batches whose transactional id it may not write, for the whole request', async () => {
      authorizer.deny(WRITE, TRANSACTIONAL_ID, 'tx-1');
      const res = await produce('beta', [0], { transactionalId: 'tx-1', transactional: true });
      expect(res.responses[0].partitionResponses[0].errorCode).to.equal(ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
      // Transactional batches without a transactional id are refused the same way.
      authorizer.reset();
      const noId = await produce('beta', [0], { transactional: true });
      expect(noId.responses[0].partitionResponses[0].errorCode).to.equal(ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
    });

    it('does not check the transactional id of non-transactional batches', async () => {
      authorizer.deny(WRITE, TRANSACTIONAL_ID);
      const res = await produce('beta', [1], { transactionalId: 'tx-2' });
      expect(res.responses[0].partitionResponses[0].errorCode).to.equal(ErrorCode.NONE);
    });
  });

  describe('Fetch', () => {
    const fetchBody = (topics: string[], replicaId = -1): ApiRequestMap[typeof ApiKey.Fetch] => ({
      replicaId, maxWaitMs: 5000, minBytes: 1, maxBytes: 1 << 20, isolationLevel: 0, sessionId: 0, sessionEpoch: -1,
      topics: topics.map((topic) => ({ topic, partitions: [0, 1].map((partition) => ({
        partition, currentLeaderEpoch: -1, fetchOffset: 0n, logStartOffset: -1n, partitionMaxBytes: 1 << 20,
      })) })),
      forgottenTopicsData: [], rackId: '',
    });

    it('refuses a topic without READ, reads the others, and asks once per topic', async () => {
      await produce('beta', [0]);
      authorizer.reset();
      authorizer.deny(READ, TOPIC, 'alpha');
      const res = await raw.api(ApiKey.Fetch, 12, fetchBody(['alpha', 'beta']));
      const byTopic = Object.fromEntries(res.responses.map((t) => [t.topic, t.partitions.map((p) => p.errorCode)]));
      expect(byTopic.alpha).to.deep.equal([ErrorCode.TOPIC_AUTHORIZATION_FAILED, ErrorCode.TOPIC_AUTHORIZATION_FAILED]);
      expect(byTopic.beta).to.deep.equal([ErrorCode.NONE, ErrorCode.NONE]);
      expect(res.responses.find((t) => t.topic === 'beta')!.partitions[0].records!.length).to.be.greaterThan(0);
      expect(authorizer.askedLines()).to.deep.equal(['READ TOPIC alpha', 'READ TOPIC beta']);
    });

    it('answers at once when nothing may be read', async () => {
      authorizer.deny(READ, TOPIC);
      const started = Date.now();
      const res = await raw.api(ApiKey.Fetch, 12, fetchBody(['alpha']));
      expect(res.responses[0].partitions.map((p) => p.errorCode)).to.deep.equal([ErrorCode.TOPIC_AUTHORIZATION_FAILED, ErrorCode.TOPIC_AUTHORIZATION_FAILED]);
      expect(Date.now() - started).to.be.below(4000);
    });

    it('refuses a follower without CLUSTER_ACTION (every partition TOPIC_AUTHORIZATION_FAILED), not asking READ', async () => {
      authorizer.deny(CLUSTER_ACTION, CLUSTER);
      const res = await raw.api(ApiKey.Fetch, 12, fetchBody(['beta'], 1));
      expect(res.responses[0].partitions.map((p) => p.errorCode)).to.deep.equal([ErrorCode.TOPIC_AUTHORIZATION_FAILED, ErrorCode.TOPIC_AUTHORIZATION_FAILED]);
      expect(authorizer.askedLines()).to.deep.equal([`CLUSTER_ACTION CLUSTER ${CLUSTER_NAME}`]);
    });
  });

  describe('Metadata', () => {
    const metadataBody = (topics: { name: string | null; topicId?: string }[] | null, allowAutoTopicCreation = false) => ({
      topics, allowAutoTopicCreation, includeClusterAuthorizedOperations: false, includeTopicAuthorizedOperations: false,
    });

    it('leaves out of "all topics" those it may not DESCRIBE', async () => {
      authorizer.deny(DESCRIBE, TOPIC, 'alpha');
      const res = await raw.api(ApiKey.Metadata, 12, metadataBody(null));
      const names = res.topics.map((t) => t.name);
      expect(names).to.include('beta');
      expect(names).not.to.include('alpha');
    });

    it('answers TOPIC_AUTHORIZATION_FAILED for a named topic it may not DESCRIBE (by id: no name)', async () => {
      authorizer.deny(DESCRIBE, TOPIC, 'alpha');
      const byName = await raw.api(ApiKey.Metadata, 12, metadataBody([{ name: 'alpha' }, { name: 'beta' }]));
      expect(byName.topics.map((t) => [t.name, t.errorCode, t.partitions.length])).to.deep.equal([
        ['alpha', ErrorCode.TOPIC_AUTHORIZATION_FAILED, 0], ['beta', ErrorCode.NONE, 2],
      ]);
      const id = broker.current().broker.controller.topic('alpha')!.id;
      const byId = await raw.api(ApiKey.Metadata, 12, metadataBody([{ name: null, topicId: id }]));
      expect(byId.topics.map((t) => [t.name, t.topicId, t.errorCode])).to.deep.equal([[null, id, ErrorCode.TOPIC_AUTHORIZATION_FAILED]]);
    });

    it('never auto-creates a topic without CREATE on the cluster or the topic', async () => {
      authorizer.deny(CREATE, CLUSTER).deny(CREATE, TOPIC, 'auto-denied');
      const res = await raw.api(ApiKey.Metadata, 12, metadataBody([{ name: 'auto-denied' }], true));
      expect(res.topics.map((t) => [t.name, t.errorCode])).to.deep.equal([['auto-denied', ErrorCode.TOPIC_AUTHORIZATION_FAILED]]);
      expect(broker.current().broker.controller.topic('auto-denied')).to.equal(undefined);
    });

    it('auto-creates with CREATE on the topic alone', async () => {
      authorizer.deny(CREATE, CLUSTER);
      const res = await raw.api(ApiKey.Metadata, 12, metadataBody([{ name: 'auto-allowed' }], true));
      expect(res.topics[0].errorCode).to.equal(ErrorCode.NONE);
      expect(broker.current().broker.controller.topic('auto-allowed')).not.to.equal(undefined);
    });
  });

  describe('ListOffsets, OffsetForLeaderEpoch, DeleteRecords, DescribeProducers', () => {
    it('ListOffsets needs DESCRIBE on the topic', async () => {
      authorizer.deny(DESCRIBE, TOPIC, 'alpha');
      const res = await raw.api(ApiKey.ListOffsets, 7, {
        replicaId: -1, isolationLevel: 0,
        topics: ['alpha', 'beta'].map((name) => ({ name, partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: -1n }] })),
      });
      expect(res.topics.map((t) => t.partitions[0].errorCode)).to.deep.equal([ErrorCode.TOPIC_AUTHORIZATION_FAILED, ErrorCode.NONE]);
    });

    it('OffsetForLeaderEpoch needs CLUSTER_ACTION or DESCRIBE on the topic', async () => {
      const ask = () => raw.api(ApiKey.OffsetForLeaderEpoch, 4, {
        replicaId: -1, topics: [{ topic: 'alpha', partitions: [{ partition: 0, currentLeaderEpoch: -1, leaderEpoch: 0 }] }],
      });
      authorizer.deny(DESCRIBE, TOPIC, 'alpha');
      expect((await ask()).topics[0].partitions[0].errorCode).to.equal(ErrorCode.NONE); // CLUSTER_ACTION covers it
      authorizer.deny(CLUSTER_ACTION, CLUSTER);
      expect((await ask()).topics[0].partitions[0].errorCode).to.equal(ErrorCode.TOPIC_AUTHORIZATION_FAILED);
    });

    it('DeleteRecords needs DELETE on the topic', async () => {
      authorizer.deny(DELETE, TOPIC, 'alpha');
      const res = await raw.api(ApiKey.DeleteRecords, 2, {
        topics: [{ name: 'alpha', partitions: [{ partitionIndex: 0, offset: -1n }] }], timeoutMs: 1000,
      });
      expect(res.topics[0].partitions[0].errorCode).to.equal(ErrorCode.TOPIC_AUTHORIZATION_FAILED);
    });

    it('DescribeProducers needs DESCRIBE on the topic', async () => {
      authorizer.deny(DESCRIBE, TOPIC, 'alpha');
      const res = await raw.api(ApiKey.DescribeProducers, 0, {
        topics: ['alpha', 'beta'].map((name) => ({ name, partitionIndexes: [0] })),
      });
      expect(res.topics.map((t) => t.partitions[0].errorCode)).to.deep.equal([ErrorCode.TOPIC_AUTHORIZATION_FAILED, ErrorCode.NONE]);
    });

    it('DescribeTopicPartitions hides undescribable topics, answering named ones TOPIC_AUTHORIZATION_FAILED', async () => {
      authorizer.deny(DESCRIBE, TOPIC, 'alpha');
      const all = await raw.api(ApiKey.DescribeTopicPartitions, 0, { topics: [], responsePartitionLimit: 2000, cursor: null });
      expect(all.topics.map((t) => t.name)).not.to.include('alpha');
      const named = await raw.api(ApiKey.DescribeTopicPartitions, 0, {
        topics: [{ name: 'alpha' }, { name: 'beta' }], responsePartitionLimit: 2000, cursor: null,
      });
      expect(named.topics.map((t) => [t.name, t.errorCode, t.topicId])).to.deep.equal([
        ['beta', ErrorCode.NONE, broker.current().broker.controller.topic('beta')!.id], ['alpha', ErrorCode.TOPIC_AUTHORIZATION_FAILED, ZERO_UUID],
      ]);
    });
  });

  describe('topic administration', () => {
    const createBody = (name: string) => ({
      topics: [{ name, numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 1000, validateOnly: false,
    });

    it('CreateTopics needs CREATE on the cluster or the topic', async () => {
      authorizer.deny(CREATE, CLUSTER).deny(CREATE, TOPIC, 'made-denied');
      const denied = await raw.api(ApiKey.CreateTopics, 7, createBody('made-denied'));
      expect([denied.topics[0].errorCode, denied.topics[0].errorMessage]).to.deep.equal([ErrorCode.TOPIC_AUTHORIZATION_FAILED, 'Authorization failed.']);
      expect(broker.current().broker.controller.topic('made-denied')).to.equal(undefined);
      const allowed = await raw.api(ApiKey.CreateTopics, 7, createBody('made-allowed'));
      expect(allowed.topics[0].errorCode).to.equal(ErrorCode.NONE);
    });

    it('CreateTopics answers configs only with DESCRIBE_CONFIGS on the topic', async () => {
      authorizer.deny(DESCRIBE_CONFIGS, TOPIC, 'made-quiet');
      const res = await raw.api(ApiKey.CreateTopics, 7, createBody('made-quiet'));
      expect(res.topics[0].errorCode).to.equal(ErrorCode.NONE);
      expect(res.topics[0].topicConfigErrorCode).to.equal(ErrorCode.TOPIC_AUTHORIZATION_FAILED);
      expect(res.topics[0].configs).to.deep.equal([]);
    });

    it('CreatePartitions needs ALTER on the topic', async () => {
      authorizer.deny(ALTER, TOPIC, 'alpha');
      const res = await raw.api(ApiKey.CreatePartitions, 3, { topics: [{ name: 'alpha', count: 5, assignments: null }], timeoutMs: 1000, validateOnly: false });
      expect(res.results[0].errorCode).to.equal(ErrorCode.TOPIC_AUTHORIZATION_FAILED);
      expect(broker.current().broker.controller.topic('alpha')!.partitions.length).to.equal(2);
    });

    it('DeleteTopics needs DESCRIBE (else no name is given for an id) and DELETE', async () => {
      await raw.api(ApiKey.CreateTopics, 7, createBody('doomed'));
      const id = broker.current().broker.controller.topic('doomed')!.id;
      authorizer.deny(DESCRIBE, TOPIC, 'doomed');
      const byId = await raw.api(ApiKey.DeleteTopics, 6, { topics: [{ name: null, topicId: id }], timeoutMs: 1000 });
      expect(byId.responses.map((r) => [r.name, r.topicId, r.errorCode])).to.deep.equal([[null, id, ErrorCode.TOPIC_AUTHORIZATION_FAILED]]);
      authorizer.reset();
      authorizer.deny(DELETE, TOPIC, 'doomed');
      const byName = await raw.api(ApiKey.DeleteTopics, 6, { topics: [{ name: 'doomed', topicId: ZERO_UUID }], timeoutMs: 1000 });
      expect(byName.responses.map((r) => [r.name, r.errorCode])).to.deep.equal([['doomed', ErrorCode.TOPIC_AUTHORIZATION_FAILED]]);
      expect(broker.current().broker.controller.topic('doomed')).not.to.equal(undefined);
      authorizer.reset();
      const deleted = await raw.api(ApiKey.DeleteTopics, 6, { topics: [{ name: 'doomed', topicId: ZERO_UUID }], timeoutMs: 1000 });
      expect(deleted.responses[0].errorCode).to.equal(ErrorCode.NONE);
    });
  });

  describe('configs', () => {
    const TOPIC_CONFIG = 2;
    const BROKER_CONFIG = 4;

    it('DescribeConfigs needs DESCRIBE_CONFIGS on the topic, or the cluster for a broker', async () => {
      authorizer.deny(DESCRIBE_CONFIGS, TOPIC, 'alpha').deny(DESCRIBE_CONFIGS, CLUSTER);
      const res = await raw.api(ApiKey.DescribeConfigs, 4, {
        resources: [
          { resourceType: TOPIC_CONFIG, resourceName: 'alpha', configurationKeys: null },
          { resourceType: TOPIC_CONFIG, resourceName: 'beta', configurationKeys: null },
          { resourceType: BROKER_CONFIG, resourceName: String(broker.current().broker.config.nodeId), configurationKeys: null },
        ],
        includeSynonyms: false, includeDocumentation: false,
      });
      expect(res.results.map((r) => [r.errorCode, r.configs.length > 0])).to.deep.equal([
        [ErrorCode.TOPIC_AUTHORIZATION_FAILED, false], [ErrorCode.NONE, true], [ErrorCode.CLUSTER_AUTHORIZATION_FAILED, false],
      ]);
      expect(res.results[0].errorMessage).to.equal(errorMessage(ErrorCode.TOPIC_AUTHORIZATION_FAILED));
    });

    it('IncrementalAlterConfigs and AlterConfigs need ALTER_CONFIGS on the topic', async () => {
      authorizer.deny(ALTER_CONFIGS, TOPIC, 'alpha');
      const incremental = await raw.api(ApiKey.IncrementalAlterConfigs, 1, {
        resources: [{ resourceType: TOPIC_CONFIG, resourceName: 'alpha', configs: [{ name: 'retention.ms', configOperation: 0, value: '1000' }] }],
        validateOnly: false,
      });
      expect([incremental.responses[0].errorCode, incremental.responses[0].errorMessage]).to.deep.equal([ErrorCode.TOPIC_AUTHORIZATION_FAILED, null]);
      const legacy = await raw.api(ApiKey.AlterConfigs, 2, {
        resources: [{ resourceType: TOPIC_CONFIG, resourceName: 'alpha', configs: [{ name: 'retention.ms', value: '1000' }] }],
        validateOnly: false,
      });
      expect(legacy.responses[0].errorCode).to.equal(ErrorCode.TOPIC_AUTHORIZATION_FAILED);
      expect(broker.current().broker.controller.topic('alpha')!.configs).not.to.have.property('retention.ms');
    });
  });

  describe('cluster operations', () => {
    it('DescribeLogDirs needs DESCRIBE on the cluster', async () => {
      authorizer.deny(DESCRIBE, CLUSTER);
      const res = await raw.api(ApiKey.DescribeLogDirs, 4, { topics: null });
      expect([res.errorCode, res.results.length]).to.deep.equal([ErrorCode.CLUSTER_AUTHORIZATION_FAILED, 0]);
    });

    it('AlterReplicaLogDirs needs ALTER on the cluster', async () => {
      authorizer.deny(ALTER, CLUSTER);
      const res = await raw.api(ApiKey.AlterReplicaLogDirs, 2, { dirs: [{ path: '/nowhere', topics: [{ name: 'alpha', partitions: [0] }] }] });
      expect(res.results[0].partitions[0].errorCode).to.equal(ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
    });

    it('ElectLeaders, AlterPartitionReassignments and UpdateFeatures need ALTER on the cluster', async () => {
      authorizer.deny(ALTER, CLUSTER);
      const elect = await raw.api(ApiKey.ElectLeaders, 2, { electionType: 0, topicPartitions: [{ topic: 'alpha', partitions: [0] }], timeoutMs: 1000 });
      expect([elect.errorCode, elect.replicaElectionResults[0].partitionResult[0].errorCode])
        .to.deep.equal([ErrorCode.CLUSTER_AUTHORIZATION_FAILED, ErrorCode.CLUSTER_AUTHORIZATION_FAILED]);
      const reassign = await raw.api(ApiKey.AlterPartitionReassignments, 0, {
        timeoutMs: 1000, topics: [{ name: 'alpha', partitions: [{ partitionIndex: 0, replicas: null }] }],
      });
      expect([reassign.errorCode, reassign.responses[0].partitions[0].errorCode])
        .to.deep.equal([ErrorCode.CLUSTER_AUTHORIZATION_FAILED, ErrorCode.CLUSTER_AUTHORIZATION_FAILED]);
      const features = await raw.api(ApiKey.UpdateFeatures, 1, {
        timeoutMs: 1000, featureUpdates: [{ feature: 'group.version', maxVersionLevel: 1, upgradeType: 1, allowDowngrade: false }], validateOnly: true,
      });
      expect(features.errorCode).to.equal(ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
    });

    it('ListPartitionReassignments needs DESCRIBE, ListConfigResources DESCRIBE_CONFIGS on the cluster', async () => {
      authorizer.deny(DESCRIBE, CLUSTER).deny(DESCRIBE_CONFIGS, CLUSTER);
      const listed = await raw.api(ApiKey.ListPartitionReassignments, 0, { timeoutMs: 1000, topics: null });
      expect(listed.errorCode).to.equal(ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
      const resources = await raw.api(ApiKey.ListConfigResources, 1, { resourceTypes: [] });
      expect([resources.errorCode, resources.configResources.length]).to.deep.equal([ErrorCode.CLUSTER_AUTHORIZATION_FAILED, 0]);
    });
  });
});
