// Config resources over the wire, as Kafka 4.4 answers them: GROUP configs through
// IncrementalAlterConfigs, AlterConfigs and DescribeConfigs, kept across a restart;
// ListConfigResources; and Kafka 4's message.timestamp.after.max.ms default refusing records from
// the future.
import { expect } from 'chai';
import { ApiKey } from '../../src/protocol/generated';
import type { AlterConfigsResponse } from '../../src/protocol/generated/AlterConfigsResponse';
import type { DeleteGroupsResponse } from '../../src/protocol/generated/DeleteGroupsResponse';
import type { DescribeConfigsResponse } from '../../src/protocol/generated/DescribeConfigsResponse';
import type { IncrementalAlterConfigsResponse } from '../../src/protocol/generated/IncrementalAlterConfigsResponse';
import type { ListConfigResourcesResponse } from '../../src/protocol/generated/ListConfigResourcesResponse';
import type { OffsetCommitResponse } from '../../src/protocol/generated/OffsetCommitResponse';
import type { ProduceResponse } from '../../src/protocol/generated/ProduceResponse';
import { ErrorCode } from '../../src/common/errors';
import { ConfigSource } from '../../src/config/definitions';
import { buildBatchSync } from '../../src/records/records';
import { withRestartableBroker } from '../helpers/broker';

const GROUP = 32;
const SET = 0;
const DELETE = 1;

describe('config resources (Kafka 4.4)', function () {
  this.timeout(60_000);
  const broker = withRestartableBroker();

  const incrementalAlter = async (name: string, configs: { name: string; configOperation: number; value: string | null }[], validateOnly = false) =>
    (await broker.client.request<IncrementalAlterConfigsResponse>(ApiKey.IncrementalAlterConfigs, 1, { resources: [{ resourceType: GROUP, resourceName: name, configs }], validateOnly })).responses[0];
  const describeGroup = async (name: string, keys: string[] | null = null) =>
    (await broker.client.request<DescribeConfigsResponse>(ApiKey.DescribeConfigs, 4, { resources: [{ resourceType: GROUP, resourceName: name, configurationKeys: keys }], includeSynonyms: true, includeDocumentation: false })).results[0];
  const overrides = async (name: string) =>
    Object.fromEntries((await describeGroup(name)).configs.filter((e) => e.configSource === ConfigSource.DYNAMIC_GROUP_CONFIG).map((e) => [e.name, e.value]));

  describe('GROUP resources', () => {
    it('sets and deletes a group\'s configs, whether or not the group exists, and describes them', async () => {
      expect(await incrementalAlter('orders-app', [
        { name: 'consumer.session.timeout.ms', configOperation: SET, value: '50000' },
        { name: 'consumer.heartbeat.interval.ms', configOperation: SET, value: '6000' },
      ])).to.include({ errorCode: ErrorCode.NONE, errorMessage: null });
      const described = await describeGroup('orders-app', ['consumer.session.timeout.ms']);
      expect(described).to.include({ errorCode: ErrorCode.NONE, errorMessage: '' });
      expect(described.configs).to.have.length(1);
      expect(described.configs[0]).to.deep.include({
        value: '50000', configSource: ConfigSource.DYNAMIC_GROUP_CONFIG,
        synonyms: [
          { name: 'consumer.session.timeout.ms', value: '50000', source: ConfigSource.DYNAMIC_GROUP_CONFIG },
          { name: 'group.consumer.session.timeout.ms', value: '45000', source: ConfigSource.DEFAULT_CONFIG },
        ],
      });
      expect(await incrementalAlter('orders-app', [{ name: 'consumer.heartbeat.interval.ms', configOperation: DELETE, value: null }])).to.include({ errorCode: ErrorCode.NONE });
      expect(await overrides('orders-app')).to.deep.equal({ 'consumer.session.timeout.ms': '50000' });
      expect(broker.running.broker.controller.consumerGroupConfig('orders-app')).to.deep.equal({ sessionTimeoutMs: 50000, heartbeatIntervalMs: 5000, assignmentIntervalMs: 1000 });
    });

    it('refuses what Kafka refuses, with its error codes and messages, and changes nothing', async () => {
      const refusals: [string, { name: string; configOperation: number; value: string | null }[], number, string][] = [
        ['bounds', [{ name: 'consumer.session.timeout.ms', configOperation: SET, value: '30000' }], ErrorCode.INVALID_CONFIG, 'consumer.session.timeout.ms must be in the range 45000 to 60000 inclusive.'],
        ['bounds', [{ name: 'nope', configOperation: SET, value: '1' }], ErrorCode.INVALID_CONFIG, 'Unknown group config name: nope'],
        ['bounds', [{ name: 'message', configOperation: SET, value: 'x' }], ErrorCode.INVALID_CONFIG, 'Unknown group config name: message'],
        ['bounds', [{ name: 'consumer.session.timeout.ms', configOperation: 2, value: '50000' }], ErrorCode.INVALID_CONFIG, "Can't APPEND to key consumer.session.timeout.ms because its type is not LIST."],
        ['bounds', [{ name: 'consumer.session.timeout.ms', configOperation: SET, value: null }], ErrorCode.INVALID_REQUEST, 'Null value not supported for : consumer.session.timeout.ms'],
        ['bounds', [{ name: 'consumer.session.timeout.ms', configOperation: SET, value: '46000' }, { name: 'consumer.session.timeout.ms', configOperation: SET, value: '47000' }], ErrorCode.INVALID_REQUEST, 'Error due to duplicate config keys'],
        ['bounds', [{ name: 'errors.deadletterqueue.topic.name', configOperation: SET, value: '__dlq' }], ErrorCode.INVALID_CONFIG, "errors.deadletterqueue.topic.name: DLQ topic name must not start with '__'"],
        ['', [{ name: 'consumer.session.timeout.ms', configOperation: SET, value: '50000' }], ErrorCode.INVALID_REQUEST, 'Default group resources are not allowed.'],
      ];
      for (const [name, configs, errorCode, errorMessage] of refusals) {
        expect(await incrementalAlter(name, configs), JSON.stringify(configs)).to.deep.include({ errorCode, errorMessage });
      }
      expect(await incrementalAlter('bounds', [{ name: 'consumer.session.timeout.ms', configOperation: SET, value: '55000' }], true)).to.include({ errorCode: ErrorCode.NONE });
      expect(await overrides('bounds')).to.deep.equal({});
      expect(await describeGroup('')).to.deep.include({ errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'Group name must not be empty' });
    });

    it("outlive their group: deleting the group leaves them, as in Kafka", async () => {
      await broker.running.broker.controller.createTopic({ name: 'committed', numPartitions: 1, replicationFactor: 1, assignments: [], configs: {} }, false);
      const commit = await broker.client.request<OffsetCommitResponse>(ApiKey.OffsetCommit, 8, {
        groupId: 'orders-app', generationIdOrMemberEpoch: -1, memberId: '', groupInstanceId: null,
        topics: [{ name: 'committed', partitions: [{ partitionIndex: 0, committedOffset: 0n, committedLeaderEpoch: -1, committedMetadata: '' }] }],
      });
      expect(commit.topics[0].partitions[0].errorCode).to.equal(ErrorCode.NONE);
      const deleted = await broker.client.request<DeleteGroupsResponse>(ApiKey.DeleteGroups, 2, { groupsNames: ['orders-app'] });
      expect(deleted.results[0]).to.include({ groupId: 'orders-app', errorCode: ErrorCode.NONE });
      expect(await overrides('orders-app')).to.deep.equal({ 'consumer.session.timeout.ms': '50000' });
    });

    it('AlterConfigs replaces the whole set', async () => {
      await incrementalAlter('replaced', [{ name: 'consumer.heartbeat.interval.ms', configOperation: SET, value: '6000' }]);
      const res = await broker.client.request<AlterConfigsResponse>(ApiKey.AlterConfigs, 2, {
        resources: [{ resourceType: GROUP, resourceName: 'replaced', configs: [{ name: 'consumer.session.timeout.ms', value: '55000' }] }], validateOnly: false,
      });
      expect(res.responses[0]).to.include({ errorCode: ErrorCode.NONE });
      expect(await overrides('replaced')).to.deep.equal({ 'consumer.session.timeout.ms': '55000' });
    });
  });

  it('DescribeConfigs answers bad resources with Kafka 4.4\'s codes and messages, "" on success', async () => {
    const node = broker.running.broker.config.nodeId;
    const cases: [number, string, number, string][] = [
      [2, 'a b', ErrorCode.INVALID_TOPIC_EXCEPTION, "Topic name is invalid: 'a b' contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'"],
      [2, '', ErrorCode.INVALID_TOPIC_EXCEPTION, 'Topic name is invalid: the empty string is not allowed'],
      [2, 'no-such-topic', ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ''],
      [4, '7', ErrorCode.INVALID_REQUEST, `Unexpected broker id, expected ${node} or empty string, but received 7`],
      [4, '', ErrorCode.NONE, ''],
      [8, '7', ErrorCode.INVALID_REQUEST, `Unexpected broker id, expected ${node} but received 7`],
      [8, '', ErrorCode.INVALID_REQUEST, 'Broker id must not be empty'],
      [16, 'some-subscription', ErrorCode.NONE, ''],
    ];
    const res = await broker.client.request<DescribeConfigsResponse>(ApiKey.DescribeConfigs, 4, {
      resources: cases.map(([resourceType, resourceName]) => ({ resourceType, resourceName, configurationKeys: null })), includeSynonyms: false, includeDocumentation: false,
    });
    expect(res.results.map((r) => [r.resourceType, r.resourceName, r.errorCode, r.errorMessage])).to.deep.equal(cases);
  });

  describe('ListConfigResources', () => {
    const list = async (version: number, resourceTypes: number[] = []) =>
      broker.client.request<ListConfigResourcesResponse>(ApiKey.ListConfigResources, version, { resourceTypes });

    it('v0 lists client metrics resources: none', async () => {
      expect(await list(0)).to.deep.include({ errorCode: ErrorCode.NONE, configResources: [] });
    });

    it('v1 lists the groups with configs, the broker (as logger and broker) and every topic, by type', async () => {
      await broker.running.broker.controller.createTopic({ name: 'listed', numPartitions: 1, replicationFactor: 1, assignments: [], configs: {} }, false);
      const groups = broker.running.broker.controller.groupsWithConfigs();
      expect(groups).to.include('orders-app');
      const node = String(broker.running.broker.config.nodeId);
      const topics = broker.running.broker.controller.topics().map((t) => t.name);
      expect(topics).to.include('listed');
      const all = (await list(1)).configResources.map((r) => [r.resourceType, r.resourceName]);
      expect(all).to.deep.equal([...groups.map((g) => [32, g]), [8, node], [4, node], ...topics.map((t) => [2, t])]);
      expect((await list(1, [2, 32])).configResources.map((r) => r.resourceType)).to.deep.equal([...groups.map(() => 32), ...topics.map(() => 2)]);
      expect(await list(1, [99])).to.deep.include({ errorCode: ErrorCode.UNSUPPORTED_VERSION, configResources: [] });
    });
  });

  describe('across a restart', () => {
    it('keeps group configs', async () => {
    await broker.restart();
    expect(await overrides('orders-app')).to.deep.equal({ 'consumer.session.timeout.ms': '50000' });
    });
  });

  describe('Produce', () => {
    it('refuses records stamped more than message.timestamp.after.max.ms (Kafka 4: an hour) ahead', async () => {
    await broker.running.broker.controller.createTopic({ name: 'stamps', numPartitions: 1, replicationFactor: 1, assignments: [], configs: {} }, false);
    await broker.running.broker.controller.createTopic({ name: 'lenient', numPartitions: 1, replicationFactor: 1, assignments: [], configs: { 'message.timestamp.after.max.ms': String(3 * 3600_000) } }, false);
    const produce = async (topic: string, timestamp: number) => (await broker.client.request<ProduceResponse>(ApiKey.Produce, 9, {
      transactionalId: null, acks: -1, timeoutMs: 5000,
      topicData: [{ name: topic, partitionData: [{ index: 0, records: buildBatchSync({ records: [{ value: 'v', timestamp }] }) }] }],
    })).responses[0].partitionResponses[0].errorCode;
    const now = Date.now();
    expect(await produce('stamps', now + 2 * 3600_000)).to.equal(ErrorCode.INVALID_TIMESTAMP);
    expect(await produce('stamps', now + 30 * 60_000)).to.equal(ErrorCode.NONE);
    expect(await produce('lenient', now + 2 * 3600_000)).to.equal(ErrorCode.NONE);
    });
  });
});
