// BrokerConfig's dynamic layers (Kafka's DynamicBrokerConfig): precedence, synonyms, sources,
// DescribeConfigs entries, the checks of a change with Kafka 4.4's messages (captured from a real
// Kafka 4.4.0 with kafka-configs and raw IncrementalAlterConfigs), the 'change' event, and the
// IncrementalAlterConfigs operations on a BROKER resource.
import { expect } from 'chai';
import { BrokerConfig, ConfigSource, applyBrokerConfigOps } from '../../src/config/broker-config';
import { resolveTopicConfig } from '../../src/config/topic-config';

describe('dynamic broker configs', () => {
  it('takes per-broker over cluster default over static over default', () => {
    const c = new BrokerConfig({ 'node.id': '1', 'message.max.bytes': '2000', 'log.dirs': '/tmp/x' });
    expect(c.getInt('message.max.bytes')).to.equal(2000);
    expect(c.source('message.max.bytes')).to.equal(ConfigSource.STATIC_BROKER_CONFIG);
    c.setDynamicConfigs({}, { 'message.max.bytes': '3000' });
    expect(c.getInt('message.max.bytes')).to.equal(3000);
    expect(c.source('message.max.bytes')).to.equal(ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG);
    c.setDynamicConfigs({ 'message.max.bytes': '4000' }, { 'message.max.bytes': '3000' });
    expect(c.getInt('message.max.bytes')).to.equal(4000);
    expect(c.source('message.max.bytes')).to.equal(ConfigSource.DYNAMIC_BROKER_CONFIG);
    expect(c.synonymsOf('message.max.bytes')).to.deep.equal([
      { name: 'message.max.bytes', value: '4000', source: ConfigSource.DYNAMIC_BROKER_CONFIG },
      { name: 'message.max.bytes', value: '3000', source: ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG },
      { name: 'message.max.bytes', value: '2000', source: ConfigSource.STATIC_BROKER_CONFIG },
      { name: 'message.max.bytes', value: '1048588', source: ConfigSource.DEFAULT_CONFIG },
    ]);
    c.setDynamicConfigs({}, {});
    expect(c.getInt('message.max.bytes')).to.equal(2000);
    expect(c.source('message.max.bytes')).to.equal(ConfigSource.STATIC_BROKER_CONFIG);
  });

  it('lets a dynamic log.retention.ms beat a static log.retention.hours, and reach the topic defaults', () => {
    const c = new BrokerConfig({ 'log.retention.hours': '5', 'log.dirs': '/tmp/x' });
    expect(c.logRetentionMs).to.equal(5 * 3600000);
    c.setDynamicConfigs({}, { 'log.retention.ms': '60000' });
    expect(c.logRetentionMs).to.equal(60000);
    expect(resolveTopicConfig(c, {}).retentionMs).to.equal(60000);
    expect(resolveTopicConfig(c, { 'retention.ms': '7' }).retentionMs).to.equal(7);
    // Kafka's answer for broker 1 after the same change: the dynamic default, then the static hours.
    expect(c.synonymsOf('log.retention.ms')).to.deep.equal([
      { name: 'log.retention.ms', value: '60000', source: ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG },
      { name: 'log.retention.hours', value: '5', source: ConfigSource.STATIC_BROKER_CONFIG },
      { name: 'log.retention.hours', value: '168', source: ConfigSource.DEFAULT_CONFIG },
    ]);
  });

  it('gives the replication throttles Long.MAX_VALUE until set, and lists them only when set, as Kafka', () => {
    const c = new BrokerConfig({ 'node.id': '1', 'leader.replication.throttled.rate': '5', 'log.dirs': '/tmp/x' });
    expect(c.warnings).to.include("The configuration 'leader.replication.throttled.rate' was supplied but isn't a known config.");
    expect(c.getLong('leader.replication.throttled.rate')).to.equal(Number(9223372036854775807n));
    expect(c.describe(['leader.replication.throttled.rate', 'follower.replication.throttled.rate'])).to.deep.equal([]);
    c.setDynamicConfigs({ 'follower.replication.throttled.rate': '1000000' }, { 'leader.replication.throttled.rate': '5' });
    expect(c.getLong('follower.replication.throttled.rate')).to.equal(1000000);
    expect(c.getLong('leader.replication.throttled.rate')).to.equal(5);
    const [follower] = c.describe(['follower.replication.throttled.rate'], { includeSynonyms: true });
    expect(follower).to.deep.include({
      name: 'follower.replication.throttled.rate', value: '1000000', readOnly: false, source: ConfigSource.DYNAMIC_BROKER_CONFIG,
      synonyms: [{ name: 'follower.replication.throttled.rate', value: '1000000', source: ConfigSource.DYNAMIC_BROKER_CONFIG }],
    });
  });

  it('describes the cluster-wide default resource ("") as only its own entries', () => {
    const c = new BrokerConfig({ 'node.id': '1', 'log.dirs': '/tmp/x' });
    expect(c.describe(null, { includeSynonyms: true }, 'default')).to.deep.equal([]);
    c.setDynamicConfigs({ 'message.max.bytes': '4000' }, { 'log.retention.ms': '3600000', 'foo.bar': '1' });
    const entries = c.describe(null, { includeSynonyms: true }, 'default');
    expect(entries.map((e) => [e.name, e.value, e.source, e.readOnly, e.synonyms])).to.deep.equal([
      ['foo.bar', null, ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG, true, [{ name: 'foo.bar', value: null, source: ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG }]],
      ['log.retention.ms', '3600000', ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG, false,
        [{ name: 'log.retention.ms', value: '3600000', source: ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG }]],
    ]);
    // The per-broker view lists the custom key too, as Kafka (sensitive, type UNKNOWN).
    expect(c.describe(['foo.bar'])[0]).to.include({ value: null, isSensitive: true, readOnly: true });
  });

  it('emits change with the names whose effective value changed', () => {
    const c = new BrokerConfig({ 'log.dirs': '/tmp/x' });
    const seen: string[][] = [];
    c.on('change', (names) => seen.push(names));
    c.setDynamicConfigs({}, { 'unclean.leader.election.enable': 'true', 'message.max.bytes': '1048588' });
    c.setDynamicConfigs({}, { 'unclean.leader.election.enable': 'true', 'message.max.bytes': '1048588' });
    c.setDynamicConfigs({ 'unclean.leader.election.enable': 'false' }, {});
    // message.max.bytes set to its default changes nothing; the second call changes nothing at all.
    expect(seen).to.deep.equal([['unclean.leader.election.enable'], ['unclean.leader.election.enable']]);
    expect(c.getBool('unclean.leader.election.enable')).to.equal(false);
  });

  it('ignores stored entries Kafka would ignore (not dynamic, per-broker only at the default level, bad values, unprefixed security configs)', () => {
    const c = new BrokerConfig({ 'log.dirs': '/tmp/x' });
    const ignored = c.setDynamicConfigs({ 'log.dirs': '/elsewhere', 'num.replica.fetchers': 'many', 'ssl.key.password': 'x' },
      { listeners: 'PLAINTEXT://:1', 'log.segment.bytes': '2097152' });
    expect(ignored).to.have.members(['log.dirs', 'num.replica.fetchers', 'ssl.key.password', 'listeners']);
    expect(c.getInt('log.segment.bytes')).to.equal(2097152);
    expect(c.dynamicConfigs('broker')).to.deep.equal({});
  });

  describe('checking a change (Kafka 4.4 messages, answered as INVALID_REQUEST)', () => {
    const c = new BrokerConfig({ 'node.id': '1', 'log.dirs': '/tmp/x' });
    const cases: [Record<string, string>, 'broker' | 'default', string | null][] = [
      [{ 'leader.replication.throttled.rate': '1000000' }, 'broker', null],
      [{ 'log.retention.ms': '3600000', 'foo.bar': '1' }, 'default', null],
      [{ 'log.dirs': '/tmp' }, 'broker', 'Cannot update these configs dynamically: [log.dirs]'],
      [{ 'log.retention.hours': '1' }, 'broker', 'Cannot update these configs dynamically: [log.retention.hours]'],
      [{ 'leader.replication.throttled.rate': '-1' }, 'broker', 'Invalid value -1 for configuration leader.replication.throttled.rate: Value must be at least 0'],
      [{ 'unclean.leader.election.enable': 'yes' }, 'broker',
        'Invalid value yes for configuration unclean.leader.election.enable: Expected value to be either true or false'],
      [{ listeners: 'PLAINTEXT://:9' }, 'default', 'Cannot update these configs at default cluster level, broker id must be specified: [listeners]'],
      [{ 'log.retention.ms': '0' }, 'broker', 'requirement failed: log.retention.ms must be unlimited (-1) or, greater than or equal to 1'],
      [{ 'log.roll.ms': '0' }, 'broker', 'requirement failed: log.roll.ms must be greater than or equal to 1'],
      [{ 'max.connections.per.ip': '0' }, 'broker',
        'requirement failed: max.connections.per.ip can be set to zero only if max.connections.per.ip.overrides property is set.'],
      [{ 'num.replica.fetchers': '10' }, 'broker',
        'Invalid value org.apache.kafka.common.config.ConfigException: Dynamic thread count update validation failed for num.replica.fetchers=10, ' +
        'value should not be greater than double the current value 1 for configuration Invalid dynamic configuration'],
      [{ 'num.replica.fetchers': '2' }, 'default', null],
      [{ 'ssl.keystore.password': 'x' }, 'broker',
        'These security configs can be dynamically updated only per-listener using the listener prefix: [ssl.keystore.password]'],
      [{ 'listener.name.plaintext.ssl.keystore.password': 'x' }, 'broker',
        'Cannot update these configs dynamically: [listener.name.plaintext.ssl.keystore.password] (Fjord reads listener, TLS and SASL configs at start only)'],
      [{ 'sasl.enabled.mechanisms': 'PLAIN' }, 'broker',
        'Cannot update these configs dynamically: [sasl.enabled.mechanisms] (Fjord reads listener, TLS and SASL configs at start only)'],
      [{ 'log.cleaner.threads': '8' }, 'broker',
        'Invalid value org.apache.kafka.common.config.ConfigException: Log cleaner threads cannot be increased to more than double the current value 1 ' +
        'for configuration Invalid dynamic configuration'],
    ];
    for (const [props, level, expected] of cases) {
      it(`${level} ${JSON.stringify(props)}: ${expected ?? 'accepted'}`, () => {
        expect(c.validateDynamicConfigs(props, level)).to.equal(expected);
      });
    }

    it('checks a default against this broker\'s own dynamic configs, and the reverse', () => {
      const d = new BrokerConfig({ 'log.dirs': '/tmp/x', 'max.connections.per.ip.overrides': 'a:1' });
      d.setDynamicConfigs({ 'max.connections.per.ip.overrides': '' }, {});
      // The per-broker empty overrides hide the static ones: a default of 0 connections is refused.
      expect(d.validateDynamicConfigs({ 'max.connections.per.ip': '0' }, 'default')).to.match(/^requirement failed: max.connections.per.ip/);
      expect(d.validateDynamicConfigs({ 'max.connections.per.ip': '0', 'max.connections.per.ip.overrides': 'b:2' }, 'broker')).to.equal(null);
    });
  });

  describe('IncrementalAlterConfigs operations on a BROKER resource', () => {
    it('sets and deletes', () => {
      expect(applyBrokerConfigOps({ a: '1', b: '2' }, [{ name: 'a', op: 1, value: null }, { name: 'c', op: 0, value: '3' }]))
        .to.deep.equal({ configs: { b: '2', c: '3' } });
    });

    it('appends to and subtracts from list configs, from the default when unset', () => {
      const appended = applyBrokerConfigOps({}, [{ name: 'log.cleanup.policy', op: 2, value: 'compact,delete' }]);
      expect(appended).to.deep.equal({ configs: { 'log.cleanup.policy': 'delete,compact' } });
      expect(applyBrokerConfigOps({ 'log.cleanup.policy': 'delete,compact' }, [{ name: 'log.cleanup.policy', op: 3, value: 'compact' }]))
        .to.deep.equal({ configs: { 'log.cleanup.policy': 'delete' } });
    });

    it('refuses APPEND/SUBTRACT on unknown or non-list configs with Kafka\'s INVALID_CONFIG text', () => {
      expect(applyBrokerConfigOps({}, [{ name: 'log.retention.ms', op: 2, value: '5' }]))
        .to.deep.equal({ error: 'Config value append is not allowed for config key: log.retention.ms' });
      expect(applyBrokerConfigOps({}, [{ name: 'log.retention.ms', op: 3, value: '5' }]))
        .to.deep.equal({ error: 'Config value subtract is not allowed for config key: log.retention.ms' });
      expect(applyBrokerConfigOps({}, [{ name: 'nope.nope', op: 2, value: '5' }])).to.deep.equal({ error: 'Unknown config name: nope.nope' });
    });
  });
});
