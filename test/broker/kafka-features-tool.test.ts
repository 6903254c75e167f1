// Kafka's own `kafka-features` (org.apache.kafka.tools.FeatureCommand, the Maven kafka-tools 4.4.0
// artifact) against a Fjord broker: describe lists the features Kafka 4.4 lists, with Fjord's levels;
// upgrade and downgrade of transaction.version work; a metadata.version downgrade is refused as
// Kafka refuses it. Skipped when the tools are not fetched (compat/lib/apache-kafka.sh fetch-tools).
import { expect } from 'chai';
import { withBroker } from '../helpers/broker';
import { runKafkaTool, skipUnlessKafkaToolsFetched } from '../helpers/kafka-tool';

const kafkaFeatures = (bootstrap: string, ...args: string[]) => runKafkaTool('org.apache.kafka.tools.FeatureCommand', bootstrap, ...args);

/** describe's lines as [feature, supported min, supported max, finalized level]. */
function described(out: string): string[][] {
  return out.split('\n').map((line) => {
    const m = /^Feature: (\S+)\s+SupportedMinVersion: (\S+)\s+SupportedMaxVersion: (\S+)\s+FinalizedVersionLevel: (\S+)\s+Epoch: \d+$/.exec(line);
    if (!m) throw new Error(`unexpected describe line: ${line}`);
    return m.slice(1);
  });
}

describe('kafka-features (Kafka 4.4\'s FeatureCommand) against Fjord', function () {
  this.timeout(300_000);
  const broker = withBroker();
  skipUnlessKafkaToolsFetched();

  it('describes the features Kafka 4.4 lists, then upgrades and downgrades transaction.version', async () => {
    const bootstrap = broker.current().bootstrap;
    const first = await kafkaFeatures(bootstrap, 'describe');
    expect(first.status).to.equal(0);
    // Kafka 4.4 lists the same seven; ELR is 0-0 in Fjord (not implemented yet).
    expect(described(first.out)).to.deep.equal([
      ['eligible.leader.replicas.version', '0', '0', '0'],
      ['group.version', '0', '1', '1'],
      ['kraft.version', '0', '1', '0'],
      ['metadata.version', '3.3-IV3', '4.4-IV2', '4.4-IV2'],
      ['share.version', '0', '2', '2'],
      ['streams.version', '0', '1', '1'],
      ['transaction.version', '0', '2', '2'],
    ]);

    const down = await kafkaFeatures(bootstrap, 'downgrade', '--feature', 'transaction.version=1');
    expect(down).to.include({ status: 0, out: 'transaction.version was downgraded to 1.' });
    expect(broker.current().broker.features.transactionVersion()).to.equal(1);
    const up = await kafkaFeatures(bootstrap, 'upgrade', '--feature', 'transaction.version=2');
    expect(up).to.include({ status: 0, out: 'transaction.version was upgraded to 2.' });
    expect(broker.current().broker.features.transactionVersion()).to.equal(2);

    const refused = await kafkaFeatures(bootstrap, 'downgrade', '--feature', 'metadata.version=20');
    expect(refused.status).to.equal(1);
    expect(refused.out).to.equal('Could not downgrade metadata.version to 20. The update failed for all features since the following ' +
      'feature had an error: Unsupported metadata.version downgrade from 33 to 20. Refusing to perform the requested downgrade ' +
      'because it might delete metadata information.');
  });
});
