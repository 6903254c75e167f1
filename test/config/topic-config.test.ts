import { expect } from 'chai';
import { BrokerConfig, ConfigSource, ConfigType } from '../../src/config/broker-config';
import {
  AlterConfigOp,
  TOPIC_CONFIG_NAMES,
  applyAlterConfigOps,
  brokerSynonymOf,
  createTopicConfigs,
  describeTopicConfigs,
  effectiveTopicConfig,
  isListTopicConfig,
  resolveTopicConfig,
  validateTopicConfigs,
} from '../../src/config/topic-config';

describe('config/topic-config', () => {
  describe('validateTopicConfigs', () => {
    it('accepts valid overrides', () => {
      expect(validateTopicConfigs({})).to.equal(null);
      expect(validateTopicConfigs({
        'cleanup.policy': 'compact,delete',
        'compression.type': 'zstd',
        'segment.bytes': '1048576',
        'internal.segment.bytes': '14',
        'retention.ms': '-1',
        'retention.bytes': '-5',
        'min.cleanable.dirty.ratio': '0.1',
        'message.timestamp.type': 'LogAppendTime',
        'max.message.bytes': '0',
        'leader.replication.throttled.replicas': '*',
        'follower.replication.throttled.replicas': '0:1,1:1',
      })).to.equal(null);
      expect(validateTopicConfigs({ 'cleanup.policy': '' })).to.equal(null); // empty list is allowed in 3.x
      expect(validateTopicConfigs([{ name: 'segment.ms', value: '1' }])).to.equal(null);
    });

    const bad: Array<[Record<string, string | null>, string, string]> = [
      [{ 'foo.bar': '1' }, 'foo.bar', 'Unknown topic config name: foo.bar'],
      [{ 'retention.ms': null, 'segment.ms': null }, 'retention.ms', 'Null value not supported for topic configs: retention.ms,segment.ms'],
      [{ 'cleanup.policy': 'compact,forever' }, 'cleanup.policy', 'Invalid value forever for configuration cleanup.policy: String must be one of: compact, delete'],
      [{ 'compression.type': 'brotli' }, 'compression.type', 'Invalid value brotli for configuration compression.type: String must be one of: uncompressed, zstd, lz4, snappy, gzip, producer'],
      [{ 'segment.bytes': '1048575' }, 'segment.bytes', 'Invalid value 1048575 for configuration segment.bytes: Value must be at least 1048576'],
      [{ 'internal.segment.bytes': '13' }, 'internal.segment.bytes', 'Invalid value 13 for configuration internal.segment.bytes: Value must be at least 14'],
      [{ 'segment.ms': '0' }, 'segment.ms', 'Invalid value 0 for configuration segment.ms: Value must be at least 1'],
      [{ 'retention.ms': '-2' }, 'retention.ms', 'Invalid value -2 for configuration retention.ms: Value must be at least -1'],
      [{ 'retention.ms': 'forever' }, 'retention.ms', 'Invalid value forever for configuration retention.ms: Not a number of type LONG'],
      [{ 'min.insync.replicas': '0' }, 'min.insync.replicas', 'Invalid value 0 for configuration min.insync.replicas: Value must be at least 1'],
      [{ 'min.cleanable.dirty.ratio': '1.5' }, 'min.cleanable.dirty.ratio', 'Invalid value 1.5 for configuration min.cleanable.dirty.ratio: Value must be no more than 1'],
      [{ preallocate: 'maybe' }, 'preallocate', 'Invalid value maybe for configuration preallocate: Expected value to be either true or false'],
      [{ 'message.timestamp.type': 'Now' }, 'message.timestamp.type', 'Invalid value Now for configuration message.timestamp.type: String must be one of: CreateTime, LogAppendTime'],
      [{ 'compression.gzip.level': '10' }, 'compression.gzip.level', 'Invalid value 10 for configuration compression.gzip.level: Value must be between 1 and 9, or -1'],
      [{ 'leader.replication.throttled.replicas': 'x' }, 'leader.replication.throttled.replicas',
        "Invalid value [x] for configuration leader.replication.throttled.replicas: leader.replication.throttled.replicas must be the literal '*' or a list of replicas in the following format: [partitionId]:[brokerId],[partitionId]:[brokerId],..."],
      [{ 'min.compaction.lag.ms': '10', 'max.compaction.lag.ms': '5' }, 'min.compaction.lag.ms',
        'conflict topic config setting min.compaction.lag.ms (10) > max.compaction.lag.ms (5)'],
      [{ 'remote.storage.enable': 'true' }, 'remote.storage.enable',
        'Tiered Storage functionality is disabled in the broker. Topic cannot be configured with remote log storage.'],
      // unknown names are reported before bad values, values in LogConfig order
      [{ 'segment.ms': '0', 'x.y': '1' }, 'x.y', 'Unknown topic config name: x.y'],
      [{ 'cleanup.policy': 'nope', 'segment.bytes': '1' }, 'segment.bytes', 'Invalid value 1 for configuration segment.bytes: Value must be at least 1048576'],
    ];
    for (const [configs, name, message] of bad) {
      it(`refuses ${JSON.stringify(configs)}`, () => {
        expect(validateTopicConfigs(configs)).to.deep.equal({ name, message });
      });
    }

    it('checks compaction lag against broker defaults', () => {
      const broker = new BrokerConfig({ 'log.cleaner.max.compaction.lag.ms': '100' });
      expect(validateTopicConfigs({ 'min.compaction.lag.ms': '200' }, broker)!.message).to.equal(
        'conflict topic config setting min.compaction.lag.ms (200) > max.compaction.lag.ms (100)');
      expect(validateTopicConfigs({ 'min.compaction.lag.ms': '200' })).to.equal(null);
    });
  });

  describe('describeTopicConfigs / effectiveTopicConfig (DescribeConfigs)', () => {
    it('lists every topic config, sorted, with Kafka defaults and DEFAULT_CONFIG source', () => {
      const entries = effectiveTopicConfig(undefined, {});
      expect(entries.map((e) => e.name)).to.deep.equal([...TOPIC_CONFIG_NAMES]);
      const by = new Map(entries.map((e) => [e.name, e]));
      expect(by.get('cleanup.policy')).to.deep.include({
        value: 'delete', source: ConfigSource.DEFAULT_CONFIG, readOnly: false, isSensitive: false, configType: ConfigType.LIST,
      });
      expect(by.get('cleanup.policy')!.synonyms).to.deep.equal([
        { name: 'log.cleanup.policy', value: 'delete', source: ConfigSource.DEFAULT_CONFIG },
      ]);
      expect(by.get('max.message.bytes')).to.deep.include({ value: '1048588' });
      expect(by.get('max.message.bytes')!.synonyms).to.deep.equal([
        { name: 'message.max.bytes', value: '1048588', source: ConfigSource.DEFAULT_CONFIG },
      ]);
      expect(by.get('retention.ms')).to.deep.include({ value: '604800000', source: ConfigSource.DEFAULT_CONFIG, synonyms: [] });
      expect(by.get('segment.ms')).to.deep.include({ value: '604800000', synonyms: [] });
      expect(by.get('segment.bytes')).to.deep.include({ value: '1073741824', configType: ConfigType.INT });
      expect(by.get('flush.ms')).to.deep.include({ value: '9223372036854775807', configType: ConfigType.LONG });
      expect(by.get('min.cleanable.dirty.ratio')).to.deep.include({ value: '0.5', configType: ConfigType.DOUBLE });
      expect(by.get('remote.storage.enable')).to.deep.include({ value: 'false', synonyms: [] });
    });

    it('an override comes first as TOPIC_CONFIG, then the static broker synonym, then the default', () => {
      const broker = new BrokerConfig({ 'log.cleanup.policy': 'compact', 'log.retention.ms': '5000', 'compression.type': 'lz4' });
      const e = describeTopicConfigs(broker, { 'cleanup.policy': 'delete,compact', 'min.cleanable.dirty.ratio': '1' },
        ['cleanup.policy', 'retention.ms', 'compression.type', 'min.cleanable.dirty.ratio', 'unknown'], { includeSynonyms: true });
      expect(e.map((x) => x.name)).to.deep.equal(['cleanup.policy', 'compression.type', 'min.cleanable.dirty.ratio', 'retention.ms']);
      expect(e[0]).to.deep.include({ value: 'delete,compact', source: ConfigSource.TOPIC_CONFIG });
      expect(e[0].synonyms).to.deep.equal([
        { name: 'cleanup.policy', value: 'delete,compact', source: ConfigSource.TOPIC_CONFIG },
        { name: 'log.cleanup.policy', value: 'compact', source: ConfigSource.STATIC_BROKER_CONFIG },
        { name: 'log.cleanup.policy', value: 'delete', source: ConfigSource.DEFAULT_CONFIG },
      ]);
      expect(e[1]).to.deep.include({ value: 'lz4', source: ConfigSource.STATIC_BROKER_CONFIG });
      expect(e[2]).to.deep.include({ value: '1.0', source: ConfigSource.TOPIC_CONFIG }); // Java prints doubles
      expect(e[3]).to.deep.include({ value: '5000', source: ConfigSource.STATIC_BROKER_CONFIG });
      expect(e[3].synonyms).to.deep.equal([
        { name: 'log.retention.ms', value: '5000', source: ConfigSource.STATIC_BROKER_CONFIG },
        { name: 'log.retention.hours', value: '168', source: ConfigSource.DEFAULT_CONFIG },
      ]);
    });

    it("follows Kafka's quirk: retention.ms with only log.retention.hours set has the value but no synonyms", () => {
      const broker = new BrokerConfig({ 'log.retention.hours': '24' });
      const [e] = describeTopicConfigs(broker, {}, ['retention.ms'], { includeSynonyms: true });
      expect(e).to.deep.include({ value: '86400000', source: ConfigSource.DEFAULT_CONFIG, synonyms: [] });
    });

    it('omits synonyms when not asked and adds documentation when asked', () => {
      const [e] = describeTopicConfigs(undefined, { 'cleanup.policy': 'compact' }, ['cleanup.policy'], { includeSynonyms: false, includeDocumentation: true });
      expect(e.synonyms).to.deep.equal([]);
      expect(e.source).to.equal(ConfigSource.TOPIC_CONFIG);
      expect(e.documentation).to.be.a('string');
    });
  });

  describe('createTopicConfigs (CreateTopics v5+ configs)', () => {
    it('override verbatim, else static synonym converted to the topic unit, else the topic default', () => {
      const broker = new BrokerConfig({ 'log.retention.hours': '2', 'log.segment.bytes': '1048576' });
      const by = new Map(createTopicConfigs(broker, { 'min.cleanable.dirty.ratio': '1' }).map((e) => [e.name, e]));
      expect(by.get('retention.ms')).to.deep.include({ value: '7200000', source: ConfigSource.STATIC_BROKER_CONFIG });
      expect(by.get('segment.bytes')).to.deep.include({ value: '1048576', source: ConfigSource.STATIC_BROKER_CONFIG });
      expect(by.get('min.cleanable.dirty.ratio')).to.deep.include({ value: '1', source: ConfigSource.TOPIC_CONFIG });
      expect(by.get('cleanup.policy')).to.deep.include({ value: 'delete', source: ConfigSource.DEFAULT_CONFIG, synonyms: [] });
    });
  });

  describe('resolveTopicConfig', () => {
    it('takes internal.segment.bytes over segment.bytes, and opens a segment.bytes set under older bounds', () => {
      expect(resolveTopicConfig(undefined, { 'segment.bytes': '2000000', 'internal.segment.bytes': '4096' }).segmentBytes).to.equal(4096);
      expect(resolveTopicConfig(undefined, { 'segment.bytes': '200' }).segmentBytes).to.equal(200);
      expect(validateTopicConfigs({ 'segment.bytes': '200' })).to.deep.equal({
        name: 'segment.bytes', message: 'Invalid value 200 for configuration segment.bytes: Value must be at least 1048576',
      });
    });

    it('never lists internal.segment.bytes, as Kafka lists no internal config', () => {
      const overrides = { 'internal.segment.bytes': '4096' };
      expect(effectiveTopicConfig(undefined, overrides).map((e) => e.name)).not.to.include('internal.segment.bytes');
      expect(effectiveTopicConfig(undefined, overrides, { names: ['internal.segment.bytes'] })).to.deep.equal([]);
      expect(createTopicConfigs(undefined, overrides).map((e) => e.name)).not.to.include('internal.segment.bytes');
    });

    it('gives the log layer typed effective values from broker defaults and overrides', () => {
      const broker = new BrokerConfig({ 'log.retention.minutes': '5', 'log.roll.hours': '1', 'log.segment.bytes': '2097152' });
      const c = resolveTopicConfig(broker, { 'cleanup.policy': 'compact', 'max.message.bytes': '100' });
      expect(c.retentionMs).to.equal(300000);
      expect(c.segmentMs).to.equal(3600000);
      expect(c.segmentBytes).to.equal(2097152);
      expect(c.compact).to.equal(true);
      expect(c.delete).to.equal(false);
      expect(c.maxMessageBytes).to.equal(100);
      expect(c.messageTimestampType).to.equal('CreateTime');
      expect(c.flushMessages).to.be.greaterThan(9e18);
      expect(resolveTopicConfig(undefined).retentionMs).to.equal(604800000);
    });
  });

  describe('synonyms and list configs', () => {
    it('maps topic configs to their broker synonyms', () => {
      expect(brokerSynonymOf('cleanup.policy')).to.equal('log.cleanup.policy');
      expect(brokerSynonymOf('delete.retention.ms')).to.equal('log.cleaner.delete.retention.ms');
      expect(brokerSynonymOf('file.delete.delay.ms')).to.equal('log.segment.delete.delay.ms');
      expect(brokerSynonymOf('flush.messages')).to.equal('log.flush.interval.messages');
      expect(brokerSynonymOf('flush.ms')).to.equal('log.flush.interval.ms');
      expect(brokerSynonymOf('max.message.bytes')).to.equal('message.max.bytes');
      expect(brokerSynonymOf('min.cleanable.dirty.ratio')).to.equal('log.cleaner.min.cleanable.ratio');
      expect(brokerSynonymOf('segment.index.bytes')).to.equal('log.index.size.max.bytes');
      expect(brokerSynonymOf('segment.ms')).to.equal('log.roll.ms');
      expect(brokerSynonymOf('remote.storage.enable')).to.equal(undefined);
      expect(isListTopicConfig('cleanup.policy')).to.equal(true);
      expect(isListTopicConfig('retention.ms')).to.equal(false);
      expect(isListTopicConfig('nope')).to.equal(false);
    });
  });

  describe('applyAlterConfigOps (IncrementalAlterConfigs)', () => {
    it('SET, DELETE, APPEND from the default, SUBTRACT', () => {
      const r = applyAlterConfigOps({ 'retention.ms': '100', 'segment.ms': '5' }, [
        { name: 'retention.ms', op: AlterConfigOp.SET, value: '200' },
        { name: 'segment.ms', op: AlterConfigOp.DELETE, value: null },
        { name: 'cleanup.policy', op: AlterConfigOp.APPEND, value: 'compact' },
      ]);
      expect(r).to.deep.equal({ configs: { 'retention.ms': '200', 'cleanup.policy': 'delete,compact' } });
      const s = applyAlterConfigOps({ 'cleanup.policy': 'delete,compact' }, [{ name: 'cleanup.policy', op: AlterConfigOp.SUBTRACT, value: 'delete' }]);
      expect(s).to.deep.equal({ configs: { 'cleanup.policy': 'compact' } });
    });

    it('refuses APPEND on a non-list key and invalid results', () => {
      expect(applyAlterConfigOps({}, [{ name: 'retention.ms', op: AlterConfigOp.APPEND, value: '1' }])).to.deep.equal({
        error: { name: 'retention.ms', message: "Can't APPEND to key retention.ms because its type is not LIST." },
      });
      expect(applyAlterConfigOps({}, [{ name: 'segment.bytes', op: AlterConfigOp.SET, value: '1' }])).to.deep.equal({
        error: { name: 'segment.bytes', message: 'Invalid value 1 for configuration segment.bytes: Value must be at least 1048576' },
      });
    });
  });
});
