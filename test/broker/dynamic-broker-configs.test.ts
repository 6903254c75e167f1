// Dynamic broker configs on a single broker, over the wire: IncrementalAlterConfigs and AlterConfigs
// on BROKER resources ("1" and the cluster-wide ""), DescribeConfigs with their sources, Kafka 4.4's
// refusals, the change reaching the logs at once, kafkajs' admin, and the configs surviving a restart
// (kept in the metadata store).
import { expect } from 'chai';
import { Kafka, ConfigResourceTypes, logLevel } from 'kafkajs';
import { ApiKey } from '../../src/protocol/generated';
import type { AlterConfigsResponse } from '../../src/protocol/generated/AlterConfigsResponse';
import type { CreateTopicsResponse } from '../../src/protocol/generated/CreateTopicsResponse';
import type { DescribeConfigsResponse } from '../../src/protocol/generated/DescribeConfigsResponse';
import type { IncrementalAlterConfigsResponse } from '../../src/protocol/generated/IncrementalAlterConfigsResponse';
import { ErrorCode } from '../../src/common/errors';
import { ConfigSource } from '../../src/config/definitions';
import { withRestartableBroker } from '../helpers/broker';
import { RawClient } from '../helpers/raw-client';

const BROKER = 4;
const SET = 0;
const DELETE = 1;
const APPEND = 2;

describe('dynamic broker configs (single broker)', function () {
  this.timeout(60_000);
  const broker = withRestartableBroker({ nodeId: 1 });

  const alter = async (name: string, configs: { name: string; configOperation: number; value: string | null }[], validateOnly = false) =>
    (await broker.client.request<IncrementalAlterConfigsResponse>(ApiKey.IncrementalAlterConfigs, 1,
      { resources: [{ resourceType: BROKER, resourceName: name, configs }], validateOnly })).responses[0];
  const describe = async (name: string, keys: string[] | null = null) =>
    (await broker.client.request<DescribeConfigsResponse>(ApiKey.DescribeConfigs, 4,
      { resources: [{ resourceType: BROKER, resourceName: name, configurationKeys: keys }], includeSynonyms: true, includeDocumentation: false })).results[0];
  const entry = async (name: string, key: string) => (await describe(name, [key])).configs.find((e) => e.name === key);

  it('sets per-broker and cluster-wide values, described with their sources as Kafka 4.4 does', async () => {
    expect(await alter('1', [{ name: 'leader.replication.throttled.rate', configOperation: SET, value: '1000000' }]))
      .to.include({ errorCode: ErrorCode.NONE, errorMessage: null, resourceName: '1' });
    expect(await alter('', [{ name: 'log.retention.ms', configOperation: SET, value: '3600000' },
      { name: 'follower.replication.throttled.rate', configOperation: SET, value: '5' }])).to.include({ errorCode: ErrorCode.NONE });

    const config = broker.running.broker.config;
    expect(config.getLong('leader.replication.throttled.rate')).to.equal(1000000);
    expect(config.getLong('follower.replication.throttled.rate')).to.equal(5);
    expect(config.logRetentionMs).to.equal(3600000);

    expect(await entry('1', 'leader.replication.throttled.rate')).to.deep.include({
      value: '1000000', configSource: ConfigSource.DYNAMIC_BROKER_CONFIG, readOnly: false,
      synonyms: [{ name: 'leader.replication.throttled.rate', value: '1000000', source: ConfigSource.DYNAMIC_BROKER_CONFIG }],
    });
    expect(await entry('1', 'log.retention.ms')).to.deep.include({
      value: '3600000', configSource: ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG,
      synonyms: [
        { name: 'log.retention.ms', value: '3600000', source: ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG },
        { name: 'log.retention.hours', value: '168', source: ConfigSource.DEFAULT_CONFIG },
      ],
    });
    const defaults = await describe('');
    expect(defaults.errorCode).to.equal(ErrorCode.NONE);
    expect(defaults.configs.map((e) => [e.name, e.value, e.configSource])).to.deep.equal([
      ['follower.replication.throttled.rate', '5', ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG],
      ['log.retention.ms', '3600000', ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG],
    ]);
  });

  it('refuses what Kafka 4.4 refuses, with its codes and messages', async () => {
    expect(await alter('2', [{ name: 'log.retention.ms', configOperation: SET, value: '5' }]))
      .to.include({ errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'Unexpected broker id, expected 1, but received 2' });
    expect(await alter('abc', [{ name: 'log.retention.ms', configOperation: SET, value: '5' }]))
      .to.include({ errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'Node id must be an integer, but it is: abc' });
    expect(await alter('1', [{ name: 'log.dirs', configOperation: SET, value: '/tmp' }]))
      .to.include({ errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'Cannot update these configs dynamically: [log.dirs]' });
    expect(await alter('1', [{ name: 'log.retention.ms', configOperation: SET, value: null }]))
      .to.include({ errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'Null value not supported for : log.retention.ms' });
    expect(await alter('1', [{ name: 'log.retention.ms', configOperation: APPEND, value: '5' }]))
      .to.include({ errorCode: ErrorCode.INVALID_CONFIG, errorMessage: 'Config value append is not allowed for config key: log.retention.ms' });
    expect(await alter('', [{ name: 'listeners', configOperation: SET, value: 'PLAINTEXT://:9' }])).to.include({
      errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'Cannot update these configs at default cluster level, broker id must be specified: [listeners]',
    });
    expect(await alter('1', [{ name: 'log.retention.ms', configOperation: SET, value: '0' }])).to.include({
      errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'requirement failed: log.retention.ms must be unlimited (-1) or, greater than or equal to 1',
    });
    // Nothing of it was applied.
    expect((await describe('1', ['log.dirs'])).configs[0].configSource).to.equal(ConfigSource.STATIC_BROKER_CONFIG);
    expect(broker.running.broker.config.logRetentionMs).to.equal(3600000);
  });

  it('changes nothing with validateOnly', async () => {
    expect(await alter('1', [{ name: 'message.max.bytes', configOperation: SET, value: '2000' }], true)).to.include({ errorCode: ErrorCode.NONE });
    expect(await entry('1', 'message.max.bytes')).to.include({ value: '1048588', configSource: ConfigSource.DEFAULT_CONFIG });
  });

  it('applies log defaults to new topics and to existing logs at once, a topic override still winning', async () => {
    const created = await broker.client.request<CreateTopicsResponse>(ApiKey.CreateTopics, 7, {
      topics: [
        { name: 'plain', numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] },
        { name: 'kept', numPartitions: 1, replicationFactor: 1, assignments: [], configs: [{ name: 'segment.bytes', value: '3145728' }] },
      ],
      timeoutMs: 5000, validateOnly: false,
    });
    expect(created.topics.map((t) => t.errorCode)).to.deep.equal([ErrorCode.NONE, ErrorCode.NONE]);
    // As Kafka 4.4's controller resolves a new topic's configs: the dynamic default is its source.
    expect(created.topics[0].configs!.find((e) => e.name === 'retention.ms'))
      .to.include({ value: '3600000', configSource: ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG });
    expect(await alter('', [{ name: 'log.segment.bytes', configOperation: SET, value: '2097152' }])).to.include({ errorCode: ErrorCode.NONE });
    const logs = broker.running.broker.replicas.logs;
    expect(logs.get('plain', 0)!.config.segmentBytes).to.equal(2097152);
    expect(logs.get('plain', 0)!.config.retentionMs).to.equal(3600000);
    expect(logs.get('kept', 0)!.config.segmentBytes).to.equal(3145728);
    expect(await alter('', [{ name: 'log.segment.bytes', configOperation: DELETE, value: null }])).to.include({ errorCode: ErrorCode.NONE });
    expect(logs.get('plain', 0)!.config.segmentBytes).to.equal(1073741824);
  });

  it('applies max.connections to the next connection', async () => {
    expect(await alter('1', [{ name: 'max.connections', configOperation: SET, value: '1' }])).to.include({ errorCode: ErrorCode.NONE });
    const refused = await RawClient.connect(broker.running.port);
    await refused.closed;
    expect(await alter('1', [{ name: 'max.connections', configOperation: DELETE, value: null }])).to.include({ errorCode: ErrorCode.NONE });
    const accepted = await RawClient.connect(broker.running.port);
    expect((await accepted.request<DescribeConfigsResponse>(ApiKey.DescribeConfigs, 4, {
      resources: [{ resourceType: BROKER, resourceName: '1', configurationKeys: ['max.connections'] }], includeSynonyms: false, includeDocumentation: false,
    })).results[0].configs[0]).to.include({ value: '2147483647', configSource: ConfigSource.DEFAULT_CONFIG });
    accepted.close();
  });

  it('replaces a resource\'s whole set with AlterConfigs', async () => {
    const res = await broker.client.request<AlterConfigsResponse>(ApiKey.AlterConfigs, 2, {
      resources: [{ resourceType: BROKER, resourceName: '1', configs: [{ name: 'message.max.bytes', value: '3000' }] }], validateOnly: false,
    });
    expect(res.responses[0]).to.include({ errorCode: ErrorCode.NONE });
    expect(await entry('1', 'message.max.bytes')).to.include({ value: '3000', configSource: ConfigSource.DYNAMIC_BROKER_CONFIG });
    expect(await entry('1', 'leader.replication.throttled.rate')).to.equal(undefined);
    expect(broker.running.broker.config.getLong('leader.replication.throttled.rate')).to.equal(Number(9223372036854775807n));
  });

  it('is served to kafkajs\' admin', async () => {
    const admin = new Kafka({ brokers: [broker.running.bootstrap], logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    try {
      await admin.alterConfigs({
        validateOnly: false,
        resources: [{ type: ConfigResourceTypes.BROKER, name: '1', configEntries: [{ name: 'unclean.leader.election.enable', value: 'true' }] }],
      });
      const described = await admin.describeConfigs({
        includeSynonyms: false, resources: [{ type: ConfigResourceTypes.BROKER, name: '1', configNames: ['unclean.leader.election.enable'] }],
      });
      expect(described.resources[0].configEntries[0]).to.include({ configValue: 'true', configSource: ConfigSource.DYNAMIC_BROKER_CONFIG });
      expect(broker.running.broker.config.getBool('unclean.leader.election.enable')).to.equal(true);
    } finally {
      await admin.disconnect();
    }
  });

  it('keeps the dynamic configs across a restart', async () => {
    await broker.restart();
    expect(broker.running.broker.config.getBool('unclean.leader.election.enable')).to.equal(true);
    expect(broker.running.broker.config.logRetentionMs).to.equal(3600000);
    expect(await entry('1', 'unclean.leader.election.enable')).to.include({ value: 'true', configSource: ConfigSource.DYNAMIC_BROKER_CONFIG });
    expect((await describe('')).configs.map((e) => e.name)).to.deep.equal(['follower.replication.throttled.rate', 'log.retention.ms']);
    expect(broker.running.broker.replicas.logs.get('plain', 0)!.config.retentionMs).to.equal(3600000);
  });
});
