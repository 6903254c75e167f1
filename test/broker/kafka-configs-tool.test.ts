// Kafka's own `kafka-configs` (org.apache.kafka.tools.ConfigCommand, the Maven kafka-tools 4.4.0
// artifact) against a Fjord broker, on dynamic broker configs: --alter --add-config on a broker and on
// --entity-default, --describe of each (the lines Kafka 4.4 prints for the same changes), --describe
// --all, --delete-config, and a static config refused with Kafka's message. Skipped when the tools are
// not fetched (compat/lib/apache-kafka.sh fetch-tools).
import { expect } from 'chai';
import { withBroker } from '../helpers/broker';
import { kafkaConfigs, skipUnlessKafkaToolsFetched } from '../helpers/kafka-tool';

describe('kafka-configs (Kafka 4.4\'s ConfigCommand) on dynamic broker configs against Fjord', function () {
  this.timeout(300_000);
  const broker = withBroker({ nodeId: 1 });
  skipUnlessKafkaToolsFetched();

  it('alters and describes a broker\'s and the cluster-wide configs as Kafka 4.4 prints them', async () => {
    const bootstrap = broker.current().bootstrap;
    expect(await kafkaConfigs(bootstrap, '--entity-type', 'brokers', '--entity-name', '1', '--alter', '--add-config',
      'leader.replication.throttled.rate=1000000')).to.include({ status: 0, out: 'Completed updating config for broker 1.' });
    expect(await kafkaConfigs(bootstrap, '--entity-type', 'brokers', '--entity-default', '--alter', '--add-config',
      'log.retention.ms=3600000,follower.replication.throttled.rate=5')).to.include({ status: 0, out: 'Completed updating default config for brokers in the cluster.' });

    // What Kafka 4.4.0 printed for the same two changes.
    expect((await kafkaConfigs(bootstrap, '--entity-type', 'brokers', '--entity-name', '1', '--describe')).out).to.equal([
      'Dynamic configs for broker 1 are:',
      '  leader.replication.throttled.rate=1000000 sensitive=false synonyms={DYNAMIC_BROKER_CONFIG:leader.replication.throttled.rate=1000000}',
    ].join('\n'));
    expect((await kafkaConfigs(bootstrap, '--entity-type', 'brokers', '--entity-default', '--describe')).out).to.equal([
      'Default configs for brokers in the cluster are:',
      '  follower.replication.throttled.rate=5 sensitive=false synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:follower.replication.throttled.rate=5}',
      '  log.retention.ms=3600000 sensitive=false synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:log.retention.ms=3600000}',
    ].join('\n'));
    const all = (await kafkaConfigs(bootstrap, '--entity-type', 'brokers', '--entity-name', '1', '--describe', '--all')).out.split('\n');
    expect(all[0]).to.equal('All configs for broker 1 are:');
    expect(all).to.include('  log.retention.ms=3600000 sensitive=false synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:log.retention.ms=3600000, DEFAULT_CONFIG:log.retention.hours=168}');
    expect(broker.current().broker.config.getLong('leader.replication.throttled.rate')).to.equal(1000000);

    expect(await kafkaConfigs(bootstrap, '--entity-type', 'brokers', '--entity-name', '1', '--alter', '--delete-config',
      'leader.replication.throttled.rate')).to.include({ status: 0 });
    expect((await kafkaConfigs(bootstrap, '--entity-type', 'brokers', '--entity-name', '1', '--describe')).out).to.equal('Dynamic configs for broker 1 are:');

    const refused = await kafkaConfigs(bootstrap, '--entity-type', 'brokers', '--entity-name', '1', '--alter', '--add-config', 'log.dirs=/tmp');
    expect(refused.status).to.equal(1);
    expect(refused.err).to.include('InvalidRequestException: Cannot update these configs dynamically: [log.dirs]');
  });
});
