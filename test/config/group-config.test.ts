// Group configs (GROUP config resources): Kafka 4.4's checks and messages (as a real Kafka 4.4.0
// answered IncrementalAlterConfigs), how they are described, and what the coordinator gets.
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { BrokerConfig } from '../../src/config/broker-config';
import { ConfigSource, ConfigType } from '../../src/config/definitions';
import { applyGroupConfigOps, consumerGroupConfig, describeGroupConfigs, shareGroupSettings, validateGroupConfigs } from '../../src/config/group-config';
import { MetadataStore, SNAPSHOT_FILE } from '../../src/cluster/metadata-store';

const broker = new BrokerConfig({});

describe('config/group-config', () => {
  describe('validateGroupConfigs', () => {
    it('accepts values within the broker bounds', () => {
      expect(validateGroupConfigs({}, broker)).to.equal(null);
      expect(validateGroupConfigs({
        'consumer.session.timeout.ms': '50000', 'consumer.heartbeat.interval.ms': '6000', 'share.auto.offset.reset': 'by_duration:PT1H',
        'share.isolation.level': 'read_committed', 'streams.rack.aware.assignment.tags': 'a,b', 'streams.assignor.name': 'sticky',
      }, broker)).to.equal(null);
    });

    for (const [configs, message] of [
      [{ nope: '1' }, 'Unknown group config name: nope'],
      [{ 'consumer.session.timeout.ms': '30000' }, 'consumer.session.timeout.ms must be in the range 45000 to 60000 inclusive.'],
      [{ 'consumer.session.timeout.ms': '70000' }, 'consumer.session.timeout.ms must be in the range 45000 to 60000 inclusive.'],
      [{ 'consumer.session.timeout.ms': 'abc' }, 'Invalid value abc for configuration consumer.session.timeout.ms: Not a number of type INT'],
      [{ 'consumer.heartbeat.interval.ms': '1000' }, 'consumer.heartbeat.interval.ms must be in the range 5000 to 15000 inclusive.'],
      [{ 'consumer.assignment.interval.ms': '20000' }, 'consumer.assignment.interval.ms must be in the range 0 to 15000 inclusive.'],
      [{ 'share.record.lock.duration.ms': '500' }, 'Invalid value 500 for configuration share.record.lock.duration.ms: Value must be at least 1000'],
      [{ 'share.delivery.count.limit': '11' }, 'share.delivery.count.limit must be in the range 2 to 10 inclusive.'],
      [{ 'share.partition.max.record.locks': '5000' }, 'share.partition.max.record.locks must be in the range 100 to 4000 inclusive.'],
      [{ 'share.auto.offset.reset': 'EARLIEST' }, "Invalid value EARLIEST for configuration share.auto.offset.reset: Invalid value `EARLIEST` for configuration share.auto.offset.reset. The value must be either 'earliest', 'latest' or of the format 'by_duration:<PnDTnHnMn.nS>'."],
      [{ 'share.isolation.level': 'bogus' }, 'Invalid value bogus for configuration share.isolation.level: String must be one of: read_committed, read_uncommitted'],
      [{ 'share.renew.acknowledge.enable': 'maybe' }, 'Invalid value maybe for configuration share.renew.acknowledge.enable: Expected value to be either true or false'],
      [{ 'streams.num.standby.replicas': '5' }, 'streams.num.standby.replicas must be less than or equal to 2'],
      [{ 'streams.initial.rebalance.delay.ms': '-1' }, 'Invalid value -1 for configuration streams.initial.rebalance.delay.ms: Value must be at least 0'],
      [{ 'streams.assignor.name': 'bogus' }, "streams.assignor.name 'bogus' is not a registered task assignor. Registered assignors are: [sticky]."],
      [{ 'errors.deadletterqueue.topic.name': '__x' }, "errors.deadletterqueue.topic.name: DLQ topic name must not start with '__'"],
    ] as const) {
      it(`refuses ${JSON.stringify(configs)}`, () => {
        expect(validateGroupConfigs(configs, broker)).to.deep.equal({ message });
      });
    }

    it('checks against the broker bounds in force, and a session timeout against the heartbeat interval', () => {
      const wide = new BrokerConfig({ 'group.consumer.min.session.timeout.ms': '1000', 'group.consumer.max.heartbeat.interval.ms': '60000' });
      expect(validateGroupConfigs({ 'consumer.session.timeout.ms': '30000' }, wide)).to.equal(null);
      expect(validateGroupConfigs({ 'consumer.session.timeout.ms': '5000' }, wide))
        .to.deep.equal({ message: 'consumer.session.timeout.ms must be greater than consumer.heartbeat.interval.ms' });
    });
  });

  it('APPEND and SUBTRACT are refused for every group config, as Kafka does; SET and DELETE edit the overrides', () => {
    expect(applyGroupConfigOps({ 'consumer.session.timeout.ms': '50000' }, [
      { name: 'consumer.heartbeat.interval.ms', op: 0, value: '6000' }, { name: 'consumer.session.timeout.ms', op: 1, value: null },
    ])).to.deep.equal({ configs: { 'consumer.heartbeat.interval.ms': '6000' } });
    expect(applyGroupConfigOps({}, [{ name: 'streams.rack.aware.assignment.tags', op: 2, value: 'a' }]))
      .to.deep.equal({ error: { message: "Can't APPEND to key streams.rack.aware.assignment.tags because its type is not LIST." } });
    expect(applyGroupConfigOps({}, [{ name: 'nope', op: 3, value: 'x' }]))
      .to.deep.equal({ error: { message: "Can't SUBTRACT to key nope because its type is not LIST." } });
  });

  it('describes overrides as GROUP_CONFIG over the broker synonym, defaults as DEFAULT_CONFIG', () => {
    const b = new BrokerConfig({ 'group.consumer.heartbeat.interval.ms': '6000' });
    const entries = describeGroupConfigs(b, { 'consumer.session.timeout.ms': '50000' }, null, { includeSynonyms: true });
    const by = new Map(entries.map((e) => [e.name, e]));
    expect(entries).to.have.length(21);
    expect(by.get('consumer.session.timeout.ms')).to.deep.include({
      value: '50000', source: ConfigSource.DYNAMIC_GROUP_CONFIG, readOnly: false, configType: ConfigType.INT,
      synonyms: [
        { name: 'consumer.session.timeout.ms', value: '50000', source: ConfigSource.DYNAMIC_GROUP_CONFIG },
        { name: 'group.consumer.session.timeout.ms', value: '45000', source: ConfigSource.DEFAULT_CONFIG },
      ],
    });
    expect(by.get('consumer.heartbeat.interval.ms')).to.deep.include({ value: '6000', source: ConfigSource.DEFAULT_CONFIG });
    expect(by.get('consumer.heartbeat.interval.ms')!.synonyms[0]).to.deep.equal({ name: 'group.consumer.heartbeat.interval.ms', value: '6000', source: ConfigSource.STATIC_BROKER_CONFIG });
    expect(by.get('share.auto.offset.reset')!.synonyms).to.deep.equal([{ name: 'share.auto.offset.reset', value: 'latest', source: ConfigSource.DEFAULT_CONFIG }]);
    expect(by.get('streams.assignor.name')).to.deep.include({ value: 'sticky' });
    expect(describeGroupConfigs(b, {}, ['consumer.session.timeout.ms', 'bogus']).map((e) => e.name)).to.deep.equal(['consumer.session.timeout.ms']);
  });

  it("gives the coordinator a consumer group's effective timings: the override, else the broker's", () => {
    const b = new BrokerConfig({ 'group.consumer.session.timeout.ms': '50000' });
    expect(consumerGroupConfig(b, {})).to.deep.equal({ sessionTimeoutMs: 50000, heartbeatIntervalMs: 5000, assignmentIntervalMs: 1000 });
    expect(consumerGroupConfig(b, { 'consumer.heartbeat.interval.ms': '7000', 'consumer.assignment.interval.ms': '0' }))
      .to.deep.equal({ sessionTimeoutMs: 50000, heartbeatIntervalMs: 7000, assignmentIntervalMs: 0 });
  });

  it("gives a share-partition its group's share settings: the override, else the broker's, else the config's default", () => {
    const b = new BrokerConfig({ 'group.share.delivery.count.limit': '7', 'group.share.record.lock.duration.ms': '20000' });
    expect(shareGroupSettings(b, {})).to.deep.equal({
      recordLockDurationMs: 20000, deliveryCountLimit: 7, maxRecordLocks: 2000, autoOffsetReset: 'latest', readCommitted: false, renewAcknowledgeEnable: true,
      deadLetterQueue: false,
    });
    expect(shareGroupSettings(b, {
      'share.delivery.count.limit': '3', 'share.partition.max.record.locks': '100', 'share.auto.offset.reset': 'earliest',
      'share.isolation.level': 'read_committed', 'share.renew.acknowledge.enable': 'false', 'share.record.lock.duration.ms': '15000',
      'errors.deadletterqueue.topic.name': 'dlq',
    })).to.deep.equal({
      recordLockDurationMs: 15000, deliveryCountLimit: 3, maxRecordLocks: 100, autoOffsetReset: 'earliest', readCommitted: true, renewAcknowledgeEnable: false,
      deadLetterQueue: true,
    });
    expect(shareGroupSettings(b, { 'share.auto.offset.reset': 'by_duration:P1DT2H3M4.5S' }).autoOffsetReset)
      .to.deep.equal({ durationMs: ((26 * 60 + 3) * 60 + 4.5) * 1000 });
    expect(shareGroupSettings(b, { 'share.auto.offset.reset': 'by_duration:PT0S' }).autoOffsetReset).to.deep.equal({ durationMs: 0 });
  });

  describe('in the metadata store', () => {
    let dir: string;
    beforeEach(() => { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fjord-group-configs-')); });
    afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

    it('persists a group\'s overrides; none left forgets the group', async () => {
      const store = MetadataStore.openSync(dir, 0);
      store.setGroupConfigs('g/1', { 'consumer.session.timeout.ms': '50000' });
      store.setGroupConfigs('g2', { 'consumer.heartbeat.interval.ms': '6000' });
      store.setGroupConfigs('g2', {});
      await store.close();
      const reopened = MetadataStore.openSync(dir, 0);
      expect(reopened.groupsWithConfigs()).to.deep.equal(['g/1']);
      expect(reopened.groupConfigs('g/1')).to.deep.equal({ 'consumer.session.timeout.ms': '50000' });
      expect(reopened.groupConfigs('g2')).to.deep.equal({});
    });

    it('opens a snapshot written before group configs existed', async () => {
      const store = MetadataStore.openSync(dir, 0);
      store.createTopic('t', [[0]]);
      await store.close();
      expect(fs.readFileSync(path.join(dir, SNAPSHOT_FILE), 'utf8')).not.to.include('groupConfigs');
      expect(MetadataStore.openSync(dir, 0).topic('t')).to.not.equal(undefined);
    });
  });
});
