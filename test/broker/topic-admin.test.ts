import { expect } from 'chai';
import { Kafka, logLevel, ConfigResourceTypes } from 'kafkajs';
import { ApiKey } from '../../src/protocol/generated';
import type { CreateTopicsResponse } from '../../src/protocol/generated/CreateTopicsResponse';
import type { IncrementalAlterConfigsResponse } from '../../src/protocol/generated/IncrementalAlterConfigsResponse';
import type { DescribeConfigsResponse } from '../../src/protocol/generated/DescribeConfigsResponse';
import type { MetadataResponse } from '../../src/protocol/generated/MetadataResponse';
import type { DeleteTopicsResponse } from '../../src/protocol/generated/DeleteTopicsResponse';
import type { CreatePartitionsResponse } from '../../src/protocol/generated/CreatePartitionsResponse';
import { ErrorCode } from '../../src/common/errors';
import { RawClient } from '../helpers/raw-client';
import { withBroker } from '../helpers/broker';

describe('topic administration', function () {
  this.timeout(20000);
  const broker = withBroker({ config: { 'num.partitions': '2' } });
  const kafka = () => new Kafka({ brokers: [broker.current().bootstrap], clientId: 'admin-test', logLevel: logLevel.NOTHING });

  it('creates, lists, grows, describes and deletes topics through kafkajs', async () => {
    const admin = kafka().admin();
    await admin.connect();
    try {
      expect(await admin.createTopics({ topics: [{ topic: 'orders', numPartitions: 3, configEntries: [{ name: 'retention.ms', value: '60000' }] }] })).to.equal(true);
      expect(await admin.listTopics()).to.include('orders');
      await admin.createPartitions({ topicPartitions: [{ topic: 'orders', count: 5 }] });
      const meta = await admin.fetchTopicMetadata({ topics: ['orders'] });
      expect(meta.topics[0].partitions).to.have.length(5);
      const configs = await admin.describeConfigs({ resources: [{ type: ConfigResourceTypes.TOPIC, name: 'orders' }], includeSynonyms: true });
      const retention = configs.resources[0].configEntries.find((e) => e.configName === 'retention.ms');
      expect(retention).to.include({ configValue: '60000', isDefault: false });
      const segment = configs.resources[0].configEntries.find((e) => e.configName === 'segment.bytes');
      expect(segment).to.include({ configValue: '1073741824', isDefault: true });
      await admin.alterConfigs({ validateOnly: false, resources: [{ type: ConfigResourceTypes.TOPIC, name: 'orders', configEntries: [{ name: 'cleanup.policy', value: 'compact' }] }] });
      const after = await admin.describeConfigs({ resources: [{ type: ConfigResourceTypes.TOPIC, name: 'orders' }], includeSynonyms: false });
      const entries = after.resources[0].configEntries;
      expect(entries.find((e) => e.configName === 'cleanup.policy')?.configValue).to.equal('compact');
      // AlterConfigs replaces the whole set of overrides: retention.ms is back to its default.
      expect(entries.find((e) => e.configName === 'retention.ms')?.isDefault).to.equal(true);
      const cluster = await admin.describeCluster();
      expect(cluster.brokers).to.deep.equal([{ nodeId: 0, host: '127.0.0.1', port: broker.current().port }]);
      await admin.deleteTopics({ topics: ['orders'] });
      expect(await admin.listTopics()).to.not.include('orders');
    } finally {
      await admin.disconnect();
    }
  });

  it('answers CreateTopics errors with Kafka codes', async () => {
    const c = await RawClient.connect(broker.current().port);
    const topic = (name: string, extra: object = {}) => ({ name, numPartitions: 1, replicationFactor: 1, assignments: [], configs: [], ...extra });
    const res = await c.request<CreateTopicsResponse>(ApiKey.CreateTopics, 7, {
      topics: [
        topic('dup'), topic('dup'),
        topic('bad name!'),
        topic('rf3', { replicationFactor: 3 }),
        topic('zero', { numPartitions: 0 }),
        topic('badcfg', { configs: [{ name: 'segment.bytes', value: 'lots' }] }),
        topic('unknowncfg', { configs: [{ name: 'no.such.config', value: '1' }] }),
        topic('defaults', { numPartitions: -1, replicationFactor: -1 }),
      ],
      timeoutMs: 1000, validateOnly: false,
    });
    const codes = res.topics.map((t) => [t.name, t.errorCode]);
    expect(codes).to.deep.equal([
      ['dup', ErrorCode.INVALID_REQUEST], ['dup', ErrorCode.INVALID_REQUEST],
      ['bad name!', ErrorCode.INVALID_TOPIC_EXCEPTION],
      ['rf3', ErrorCode.INVALID_REPLICATION_FACTOR],
      ['zero', ErrorCode.INVALID_PARTITIONS],
      ['badcfg', ErrorCode.INVALID_CONFIG],
      ['unknowncfg', ErrorCode.INVALID_CONFIG],
      ['defaults', ErrorCode.NONE],
    ]);
    expect(res.topics[3].errorMessage).to.equal('Unable to replicate the partition 3 time(s): The target replication factor of 3 cannot be '
      + 'reached because only 1 broker(s) are registered or some brokers have all their log directories cordoned.');
    const created = res.topics[7];
    expect(created.numPartitions).to.equal(2); // num.partitions
    expect(created.topicId).to.match(/^[0-9a-f]{32}$/).and.not.equal('0'.repeat(32));
    expect(created.configs!.find((e) => e.name === 'cleanup.policy')?.value).to.equal('delete');

    const again = await c.request<CreateTopicsResponse>(ApiKey.CreateTopics, 7, { topics: [topic('defaults')], timeoutMs: 1000, validateOnly: false });
    expect(again.topics[0].errorCode).to.equal(ErrorCode.TOPIC_ALREADY_EXISTS);
    expect(again.topics[0].errorMessage).to.equal("Topic 'defaults' already exists.");

    const collide = await c.request<CreateTopicsResponse>(ApiKey.CreateTopics, 7, { topics: [topic('a.b'), topic('a_b')], timeoutMs: 1000, validateOnly: false });
    expect(collide.topics.map((t) => t.errorCode)).to.deep.equal([ErrorCode.NONE, ErrorCode.INVALID_TOPIC_EXCEPTION]);

    const validateOnly = await c.request<CreateTopicsResponse>(ApiKey.CreateTopics, 7, { topics: [topic('only-validated')], timeoutMs: 1000, validateOnly: true });
    expect(validateOnly.topics[0].errorCode).to.equal(ErrorCode.NONE);
    const meta = await c.request<MetadataResponse>(ApiKey.Metadata, 12, { topics: [{ name: 'only-validated' }], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false });
    expect(meta.topics[0].errorCode).to.equal(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    c.close();
  });

  it('auto-creates topics on Metadata when allowed, and finds topics by id', async () => {
    const c = await RawClient.connect(broker.current().port);
    const meta = await c.request<MetadataResponse>(ApiKey.Metadata, 12, { topics: [{ name: 'auto-made' }], allowAutoTopicCreation: true, includeTopicAuthorizedOperations: true });
    const t = meta.topics[0];
    expect(t.errorCode).to.equal(ErrorCode.NONE);
    expect(t.partitions.map((p) => p.partitionIndex)).to.deep.equal([0, 1]);
    expect(t.partitions[0]).to.include({ leaderId: 0, leaderEpoch: 0 });
    expect(t.topicAuthorizedOperations).to.be.greaterThan(0);
    const byId = await c.request<MetadataResponse>(ApiKey.Metadata, 12, { topics: [{ name: null, topicId: t.topicId }], includeTopicAuthorizedOperations: false });
    expect(byId.topics[0].name).to.equal('auto-made');
    const unknownId = await c.request<MetadataResponse>(ApiKey.Metadata, 12, { topics: [{ name: null, topicId: '1'.repeat(32) }], includeTopicAuthorizedOperations: false });
    expect(unknownId.topics[0].errorCode).to.equal(ErrorCode.UNKNOWN_TOPIC_ID);
    const invalid = await c.request<MetadataResponse>(ApiKey.Metadata, 4, { topics: [{ name: '$$' }], allowAutoTopicCreation: true });
    expect(invalid.topics[0].errorCode).to.equal(ErrorCode.INVALID_TOPIC_EXCEPTION);
    c.close();
  });

  it('applies IncrementalAlterConfigs SET, DELETE, APPEND and SUBTRACT', async () => {
    const c = await RawClient.connect(broker.current().port);
    await c.request(ApiKey.CreateTopics, 7, { topics: [{ name: 'inc', numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 1000, validateOnly: false });
    const alter = (configs: object[]) => c.request<IncrementalAlterConfigsResponse>(ApiKey.IncrementalAlterConfigs, 1,
      { resources: [{ resourceType: 2, resourceName: 'inc', configs }], validateOnly: false });
    const describe = async (name: string) => {
      const res = await c.request<DescribeConfigsResponse>(ApiKey.DescribeConfigs, 4, { resources: [{ resourceType: 2, resourceName: 'inc', configurationKeys: [name] }], includeSynonyms: true, includeDocumentation: false });
      return res.results[0].configs[0];
    };
    expect((await alter([{ name: 'cleanup.policy', configOperation: 2, value: 'compact' }])).responses[0].errorCode).to.equal(ErrorCode.NONE);
    expect((await describe('cleanup.policy')).value).to.equal('delete,compact');
    expect((await alter([{ name: 'cleanup.policy', configOperation: 3, value: 'delete' }])).responses[0].errorCode).to.equal(ErrorCode.NONE);
    expect((await describe('cleanup.policy')).value).to.equal('compact');
    expect((await alter([{ name: 'retention.ms', configOperation: 2, value: '5' }])).responses[0].errorCode).to.equal(ErrorCode.INVALID_CONFIG);
    expect((await alter([{ name: 'retention.ms', configOperation: 0, value: '5000' }])).responses[0].errorCode).to.equal(ErrorCode.NONE);
    const retention = await describe('retention.ms');
    expect(retention).to.include({ value: '5000', configSource: 1 });
    expect(retention.synonyms![0]).to.include({ name: 'retention.ms', source: 1 });
    expect((await alter([{ name: 'retention.ms', configOperation: 1, value: null }])).responses[0].errorCode).to.equal(ErrorCode.NONE);
    expect((await describe('retention.ms')).configSource).to.equal(5);
    expect((await alter([{ name: 'segment.bytes', configOperation: 0, value: '1' }])).responses[0].errorCode).to.equal(ErrorCode.INVALID_CONFIG);
    c.close();
  });

  it('describes broker configs with sources, and rejects other broker ids', async () => {
    const c = await RawClient.connect(broker.current().port);
    const res = await c.request<DescribeConfigsResponse>(ApiKey.DescribeConfigs, 4, {
      resources: [{ resourceType: 4, resourceName: '0', configurationKeys: null }, { resourceType: 4, resourceName: '7', configurationKeys: null }],
      includeSynonyms: true, includeDocumentation: true,
    });
    const [mine, other] = res.results;
    expect(mine.errorCode).to.equal(ErrorCode.NONE);
    expect(mine.configs.length).to.be.greaterThan(30);
    expect(mine.configs.find((e) => e.name === 'num.partitions')).to.include({ value: '2', configSource: 4 });
    expect(mine.configs.find((e) => e.name === 'log.segment.bytes')).to.include({ value: '1073741824', configSource: 5 });
    expect(other.errorCode).to.equal(ErrorCode.INVALID_REQUEST);
    c.close();
  });

  it('answers DeleteTopics by id and CreatePartitions per topic', async () => {
    const c = await RawClient.connect(broker.current().port);
    const created = await c.request<CreateTopicsResponse>(ApiKey.CreateTopics, 7, { topics: [{ name: 'by-id', numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 1000, validateOnly: false });
    const grown = await c.request<CreatePartitionsResponse>(ApiKey.CreatePartitions, 3, {
      topics: [{ name: 'by-id', count: 1, assignments: null }, { name: 'nope', count: 3, assignments: null }, { name: 'by-id', count: 4, assignments: null }],
      timeoutMs: 1000, validateOnly: false,
    });
    expect(grown.results.map((r) => r.errorCode)).to.deep.equal([ErrorCode.INVALID_REQUEST, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.INVALID_REQUEST]);
    const single = await c.request<CreatePartitionsResponse>(ApiKey.CreatePartitions, 3, { topics: [{ name: 'by-id', count: 1, assignments: null }], timeoutMs: 1000, validateOnly: false });
    expect(single.results[0]).to.include({ errorCode: ErrorCode.INVALID_PARTITIONS, errorMessage: 'Topic already has 1 partition(s).' });
    const id = created.topics[0].topicId!;
    const del = await c.request<DeleteTopicsResponse>(ApiKey.DeleteTopics, 6, { topics: [{ name: null, topicId: id }, { name: null, topicId: '2'.repeat(32) }], timeoutMs: 1000 });
    expect(del.responses.map((r) => [r.name, r.errorCode])).to.deep.equal([['by-id', ErrorCode.NONE], [null, ErrorCode.UNKNOWN_TOPIC_ID]]);
    const legacy = await c.request<DeleteTopicsResponse>(ApiKey.DeleteTopics, 3, { topicNames: ['by-id'], timeoutMs: 1000 });
    expect(legacy.responses[0].errorCode).to.equal(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    c.close();
  });
});
