import { expect } from 'chai';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { BrokerConfig, ConfigError, ConfigSource, ConfigType, parseListeners } from '../../src/config/broker-config';
import { BROKER_CONFIGS, javaDouble } from '../../src/config/definitions';

function configError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (e) {
    expect(e).to.be.instanceOf(ConfigError);
    return e as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

describe('config/broker-config', () => {
  let tmp: string;
  before(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'fjord-cfg-'));
  });
  after(() => fs.rmSync(tmp, { recursive: true, force: true }));

  describe('defaults', () => {
    const c = new BrokerConfig({}, { cwd: '/srv' });

    it("has Kafka's defaults for Kafka's names", () => {
      expect(c.getInt('num.partitions')).to.equal(1);
      expect(c.getInt('default.replication.factor')).to.equal(1);
      expect(c.getBool('auto.create.topics.enable')).to.equal(true);
      expect(c.getBool('delete.topic.enable')).to.equal(true);
      expect(c.getInt('message.max.bytes')).to.equal(1048588);
      expect(c.getInt('socket.request.max.bytes')).to.equal(104857600);
      expect(c.getLong('connections.max.idle.ms')).to.equal(600000);
      expect(c.getInt('log.segment.bytes')).to.equal(1073741824);
      expect(c.getInt('log.roll.hours')).to.equal(168);
      expect(c.get('log.roll.ms')).to.equal(null);
      expect(c.getInt('log.retention.hours')).to.equal(168);
      expect(c.getLong('log.retention.bytes')).to.equal(-1);
      expect(c.getLong('log.retention.check.interval.ms')).to.equal(300000);
      expect(c.getList('log.cleanup.policy')).to.deep.equal(['delete']);
      expect(c.getDouble('log.cleaner.min.cleanable.ratio')).to.equal(0.5);
      expect(c.getLongBig('log.flush.interval.messages')).to.equal(9223372036854775807n);
      expect(c.getString('log.message.timestamp.type')).to.equal('CreateTime');
      expect(c.getString('compression.type')).to.equal('producer');
      expect(c.getInt('offsets.topic.num.partitions')).to.equal(50);
      expect(c.getInt('offsets.topic.replication.factor')).to.equal(3);
      expect(c.getInt('offsets.retention.minutes')).to.equal(10080);
      expect(c.getInt('group.initial.rebalance.delay.ms')).to.equal(3000);
      expect(c.getInt('group.min.session.timeout.ms')).to.equal(6000);
      expect(c.getInt('group.max.session.timeout.ms')).to.equal(1800000);
      expect(c.getInt('group.max.size')).to.equal(2147483647);
      expect(c.getInt('transaction.state.log.num.partitions')).to.equal(50);
      expect(c.getInt('transaction.max.timeout.ms')).to.equal(900000);
      expect(c.getInt('transactional.id.expiration.ms')).to.equal(604800000);
      expect(c.getInt('producer.id.expiration.ms')).to.equal(86400000);
      expect(c.getInt('fetch.max.bytes')).to.equal(57671680);
      expect(c.getInt('num.network.threads')).to.equal(3);
      expect(c.getInt('num.io.threads')).to.equal(8);
    });

    it('derives node id, listener, advertised listener, data dir and times', () => {
      expect(c.nodeId).to.equal(0);
      expect(c.listener).to.deep.equal({ name: 'PLAINTEXT', securityProtocol: 'PLAINTEXT', host: '127.0.0.1', port: 9092 });
      expect(c.advertisedListener).to.deep.equal(c.listener);
      expect(c.dataDir).to.equal(path.resolve('/srv', 'data'));
      expect(c.logRetentionMs).to.equal(168 * 3600000);
      expect(c.logRollMs).to.equal(168 * 3600000);
      expect(c.logRollJitterMs).to.equal(0);
      expect(c.logFlushIntervalMs).to.equal(Number(9223372036854775807n));
      expect(c.warnings).to.deep.equal([]);
    });

    it('every key has a source DEFAULT_CONFIG and a doc phrase; no-effect keys say so', () => {
      for (const [name, key] of BROKER_CONFIGS) {
        expect(c.source(name), name).to.equal(ConfigSource.DEFAULT_CONFIG);
        expect(key.doc.length, name).to.be.greaterThan(5);
      }
      expect(BROKER_CONFIGS.get('num.io.threads')!.doc).to.match(/no effect/);
    });
  });

  describe('layering and sources', () => {
    const file = () => {
      const f = path.join(tmp, 'server.properties');
      fs.writeFileSync(f, [
        '# test',
        'num.partitions=3',
        'log.retention.hours=24',
        'listeners=PLAINTEXT://0.0.0.0:9999',
        'log.dirs=/from/file',
        'default.replication.factor=1',
      ].join('\n'));
      return f;
    };

    it('defaults < file < --set < flags, with origins and STATIC_BROKER_CONFIG sources', () => {
      const c = BrokerConfig.load({
        configFile: file(),
        sets: ['num.partitions=5', 'log.retention.ms=1000', 'auto.create.topics.enable=false'],
        flags: { port: 1234, dataDir: '/from/flag', nodeId: 7 },
      });
      expect(c.getInt('num.partitions')).to.equal(5);
      expect(c.origin('num.partitions')).to.equal('set');
      expect(c.origin('default.replication.factor')).to.equal('file');
      expect(c.origin('log.dirs')).to.equal('flag');
      expect(c.origin('message.max.bytes')).to.equal('default');
      expect(c.source('num.partitions')).to.equal(ConfigSource.STATIC_BROKER_CONFIG);
      expect(c.source('message.max.bytes')).to.equal(ConfigSource.DEFAULT_CONFIG);
      expect(c.getBool('auto.create.topics.enable')).to.equal(false);
      expect(c.logRetentionMs).to.equal(1000); // ms beats hours
      expect(c.listener).to.include({ host: '0.0.0.0', port: 1234 }); // flag port, file host
      expect(c.advertisedListener).to.include({ host: '127.0.0.1', port: 1234 }); // wildcard -> loopback
      expect(c.dataDir).to.equal('/from/flag');
      expect(c.nodeId).to.equal(7);
      expect(c.getInt('broker.id')).to.equal(7);
    });

    it('--set accepts a map too and later --set wins', () => {
      const c = BrokerConfig.load({ sets: ['num.partitions=2', 'num.partitions=4'] });
      expect(c.getInt('num.partitions')).to.equal(4);
      const d = BrokerConfig.load({ sets: { 'num.partitions': '6' } });
      expect(d.getInt('num.partitions')).to.equal(6);
    });

    it('--host/--port/--advertised-* rewrite the listeners', () => {
      const c = BrokerConfig.load({ flags: { host: '0.0.0.0', port: 0, advertisedHost: 'kafka.local', advertisedPort: 19092 } });
      expect(c.listener).to.include({ host: '0.0.0.0', port: 0 });
      expect(c.original('listeners')).to.equal('PLAINTEXT://0.0.0.0:0');
      expect(c.advertisedListener).to.include({ host: 'kafka.local', port: 19092 });
      const d = BrokerConfig.load({ flags: { host: '::1', port: 5 } });
      expect(d.original('listeners')).to.equal('PLAINTEXT://[::1]:5');
      expect(d.listener.host).to.equal('::1');
    });

    it('retention: ms > minutes > hours; negative means forever; roll: ms > hours', () => {
      expect(new BrokerConfig({ 'log.retention.minutes': '10', 'log.retention.hours': '1' }).logRetentionMs).to.equal(600000);
      expect(new BrokerConfig({ 'log.retention.hours': '2' }).logRetentionMs).to.equal(7200000);
      expect(new BrokerConfig({ 'log.retention.ms': '-1' }).logRetentionMs).to.equal(-1);
      expect(new BrokerConfig({ 'log.retention.hours': '-5' }).logRetentionMs).to.equal(-1);
      expect(new BrokerConfig({ 'log.roll.ms': '500', 'log.roll.hours': '1' }).logRollMs).to.equal(500);
      expect(new BrokerConfig({ 'log.roll.hours': '2' }).logRollMs).to.equal(7200000);
    });

    it('broker.id stands in for node.id and vice versa; they must agree', () => {
      expect(new BrokerConfig({ 'broker.id': '3' }).nodeId).to.equal(3);
      expect(new BrokerConfig({ 'node.id': '4' }).getInt('broker.id')).to.equal(4);
      const e = configError(() => new BrokerConfig({ 'node.id': '1', 'broker.id': '2' }));
      expect(e.message).to.equal('You must set `node.id` to the same value as `broker.id`.');
    });

    it('log.dirs beats log.dir; relative dirs resolve against cwd', () => {
      const c = new BrokerConfig({ 'log.dir': 'a', 'log.dirs': 'b, c' }, { cwd: '/x' });
      expect(c.logDirs).to.deep.equal(['/x/b', '/x/c']);
      expect(new BrokerConfig({ 'log.dir': 'only' }, { cwd: '/x' }).dataDir).to.equal('/x/only');
    });

    it("a stock Kafka KRaft server.properties loads without warnings except the controller listener", () => {
      const f = path.join(tmp, 'kraft.properties');
      fs.writeFileSync(f, [
        'process.roles=broker,controller',
        'node.id=1',
        'controller.quorum.voters=1@localhost:9093',
        'listeners=PLAINTEXT://:9092,CONTROLLER://:9093',
        'inter.broker.listener.name=PLAINTEXT',
        'advertised.listeners=PLAINTEXT://localhost:9092',
        'controller.listener.names=CONTROLLER',
        'listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL',
        'num.network.threads=3',
        'num.io.threads=8',
        'socket.send.buffer.bytes=102400',
        'socket.receive.buffer.bytes=102400',
        'socket.request.max.bytes=104857600',
        'log.dirs=/tmp/kraft-combined-logs',
        'num.partitions=1',
        'num.recovery.threads.per.data.dir=1',
        'offsets.topic.replication.factor=1',
        'transaction.state.log.replication.factor=1',
        'transaction.state.log.min.isr=1',
        'log.retention.hours=168',
        'log.segment.bytes=1073741824',
        'log.retention.check.interval.ms=300000',
      ].join('\n'));
      const c = BrokerConfig.load({ configFile: f });
      expect(c.warnings).to.have.length(1);
      expect(c.warnings[0]).to.match(/Controller listener CONTROLLER is ignored/);
      expect(c.listeners.map((l) => l.name)).to.deep.equal(['PLAINTEXT']);
      expect(c.listener).to.include({ host: '', port: 9092 });
      expect(c.advertisedListener).to.include({ host: 'localhost', port: 9092 });
      expect(c.nodeId).to.equal(1);
      // --port applies to the client listener, not the controller one
      const d = BrokerConfig.load({ configFile: f, flags: { port: 1 } });
      expect(d.original('listeners')).to.equal('PLAINTEXT://:1,CONTROLLER://:9093');
    });

    it('unknown keys are kept and produce warnings', () => {
      const c = BrokerConfig.load({ sets: ['foo.bar=1'] });
      expect(c.warnings).to.deep.equal(["The configuration 'foo.bar' was supplied but isn't a known config."]);
      expect(c.original('foo.bar')).to.equal('1');
    });
  });

  describe('bad values are refused with a message naming key, value and what is allowed', () => {
    const cases: Array<[Record<string, string>, string]> = [
      [{ 'num.partitions': '0' }, 'Invalid value 0 for configuration num.partitions: Value must be at least 1'],
      [{ 'num.partitions': 'abc' }, 'Invalid value abc for configuration num.partitions: Not a number of type INT'],
      [{ 'num.partitions': '3000000000' }, 'Invalid value 3000000000 for configuration num.partitions: Not a number of type INT'],
      [{ 'auto.create.topics.enable': 'yes' }, 'Invalid value yes for configuration auto.create.topics.enable: Expected value to be either true or false'],
      [{ 'log.cleanup.policy': 'delete,forever' }, 'Invalid value forever for configuration log.cleanup.policy: String must be one of: compact, delete'],
      [{ 'compression.type': 'brotli' }, 'Invalid value brotli for configuration compression.type: String must be one of: uncompressed, zstd, lz4, snappy, gzip, producer'],
      [{ 'log.cleaner.min.cleanable.ratio': '2' }, 'Invalid value 2.0 for configuration log.cleaner.min.cleanable.ratio: Value must be no more than 1'],
      [{ 'log.segment.bytes': '1048575' }, 'Invalid value 1048575 for configuration log.segment.bytes: Value must be at least 1048576'],
      [{ 'log.flush.interval.messages': '9223372036854775808' }, 'Invalid value 9223372036854775808 for configuration log.flush.interval.messages: Not a number of type LONG'],
      [{ 'log.message.timestamp.type': 'createtime' }, 'Invalid value createtime for configuration log.message.timestamp.type: String must be one of: CreateTime, LogAppendTime'],
      [{ 'offsets.topic.replication.factor': '40000' }, 'Invalid value 40000 for configuration offsets.topic.replication.factor: Not a number of type SHORT'],
      [{ 'log.retention.ms': '0' }, 'Invalid value 0 for configuration log.retention.ms: log.retention.ms must be unlimited (-1) or, greater than or equal to 1'],
      [{ 'log.roll.ms': '0' }, 'Invalid value 0 for configuration log.roll.ms: log.roll.ms must be greater than or equal to 1'],
      [{ listeners: 'nonsense' }, 'Invalid value nonsense for configuration listeners: Unable to parse nonsense to a broker endpoint (expected NAME://host:port)'],
      [{ listeners: 'PLAINTEXT://:99999' }, 'Invalid value PLAINTEXT://:99999 for configuration listeners: port 99999 of PLAINTEXT://:99999 must be between 0 and 65535'],
      [{ listeners: 'FOO://:1' }, 'Invalid value FOO://:1 for configuration listeners: No security protocol defined for listener FOO (see listener.security.protocol.map)'],
      [{ 'inter.broker.listener.name': 'INTERNAL' }, 'requirement failed: inter.broker.listener.name must be a listener name defined in advertised.listeners. ' +
        'The valid options based on currently configured listeners are PLAINTEXT'],
      [{ 'inter.broker.listener.name': 'PLAINTEXT', 'security.inter.broker.protocol': 'PLAINTEXT' },
        'Only one of inter.broker.listener.name and security.inter.broker.protocol should be set.'],
      [{ listeners: 'PLAINTEXT://:1,PLAINTEXT://:2' }, 'Invalid value PLAINTEXT://:1,PLAINTEXT://:2 for configuration listeners: Each listener must have a different name'],
      [{ 'advertised.listeners': 'PLAINTEXT://0.0.0.0:9092' }, 'Invalid value PLAINTEXT://0.0.0.0:9092 for configuration advertised.listeners: advertised.listeners cannot use the nonroutable meta-address 0.0.0.0. Use a routable IP address.'],
      [{ 'node.id': '-1' }, 'Invalid value -1 for configuration node.id: Value must be at least 0'],
    ];
    for (const [props, message] of cases) {
      it(`${JSON.stringify(props)}`, () => {
        expect(configError(() => new BrokerConfig(props)).message).to.equal(message);
      });
    }

    it('bad flags and --set syntax', () => {
      expect(configError(() => BrokerConfig.load({ flags: { port: 70000 } })).message).to.equal(
        'Invalid value 70000 for --port: must be an integer between 0 and 65535');
      expect(configError(() => BrokerConfig.load({ flags: { port: NaN } })).message).to.match(/--port/);
      expect(configError(() => BrokerConfig.load({ sets: ['novalue'] })).message).to.equal(
        "Invalid --set argument 'novalue': expected key=value");
      expect(configError(() => BrokerConfig.load({ configFile: path.join(tmp, 'missing.properties') })).message).to.match(
        /^Cannot read config file .*missing\.properties: file not found$/);
    });
  });

  describe('describe() (DescribeConfigs for the broker)', () => {
    const c = BrokerConfig.load({ sets: ['log.retention.hours=24', 'num.partitions=3', 'custom.thing=x'] });

    it('reports value, source, readOnly, type and synonyms as Kafka', () => {
      const all = c.describe(null, { includeSynonyms: true, includeDocumentation: true });
      const by = new Map(all.map((e) => [e.name, e]));
      expect(all.map((e) => e.name)).to.deep.equal([...all.map((e) => e.name)].sort());

      expect(by.get('num.partitions')).to.deep.include({
        value: '3', source: ConfigSource.STATIC_BROKER_CONFIG, readOnly: true, isSensitive: false, configType: ConfigType.INT,
      });
      expect(by.get('num.partitions')!.synonyms).to.deep.equal([
        { name: 'num.partitions', value: '3', source: ConfigSource.STATIC_BROKER_CONFIG },
        { name: 'num.partitions', value: '1', source: ConfigSource.DEFAULT_CONFIG },
      ]);
      expect(by.get('num.partitions')!.documentation).to.be.a('string');

      // log.retention.hours: static then default; log.retention.ms: unset, null, no synonyms (Kafka's dropWhile)
      expect(by.get('log.retention.hours')!.synonyms).to.deep.equal([
        { name: 'log.retention.hours', value: '24', source: ConfigSource.STATIC_BROKER_CONFIG },
        { name: 'log.retention.hours', value: '168', source: ConfigSource.DEFAULT_CONFIG },
      ]);
      expect(by.get('log.retention.ms')).to.deep.include({ value: null, source: ConfigSource.DEFAULT_CONFIG, synonyms: [], readOnly: false });
      expect(by.get('log.cleaner.min.cleanable.ratio')).to.deep.include({ value: '0.5', configType: ConfigType.DOUBLE });
      expect(by.get('log.flush.interval.messages')!.value).to.equal('9223372036854775807');
      expect(by.get('log.cleanup.policy')).to.deep.include({ value: 'delete', configType: ConfigType.LIST, readOnly: false });

      // unknown static keys are listed, typed UNKNOWN, treated as sensitive
      expect(by.get('custom.thing')).to.deep.include({
        value: null, isSensitive: true, configType: ConfigType.UNKNOWN, source: ConfigSource.STATIC_BROKER_CONFIG,
      });
    });

    it('filters by requested names, skipping unknown ones, and omits synonyms unless asked', () => {
      const some = c.describe(['num.partitions', 'nope', 'message.max.bytes']);
      expect(some.map((e) => e.name)).to.deep.equal(['message.max.bytes', 'num.partitions']);
      expect(some[0]).to.deep.include({ value: '1048588', source: ConfigSource.DEFAULT_CONFIG, synonyms: [], documentation: null });
    });
  });

  it('parses listeners like Kafka (IPv6 in brackets, empty host, names upper-cased)', () => {
    expect(parseListeners('plaintext://[::1]:9092, PLAINTEXT2://:0', 'listeners',
      new Map([['PLAINTEXT', 'PLAINTEXT'], ['PLAINTEXT2', 'PLAINTEXT']]))).to.deep.equal([
      { name: 'PLAINTEXT', securityProtocol: 'PLAINTEXT', host: '::1', port: 9092 },
      { name: 'PLAINTEXT2', securityProtocol: 'PLAINTEXT', host: '', port: 0 },
    ]);
  });

  it("prints doubles like Java's Double.toString", () => {
    expect(javaDouble(0.5)).to.equal('0.5');
    expect(javaDouble(1)).to.equal('1.0');
    expect(javaDouble(1e-4)).to.equal('1.0E-4');
    expect(javaDouble(12345678)).to.equal('1.2345678E7');
  });
});
