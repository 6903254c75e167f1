// Kafka's own `kafka-features` (org.apache.kafka.tools.FeatureCommand, the Maven kafka-tools 4.4.0
// artifact) against a Fjord broker: describe lists the features Kafka 4.4 lists, with Fjord's levels;
// upgrade and downgrade of transaction.version work; a metadata.version downgrade is refused as
// Kafka refuses it. Skipped when the tools are not fetched (compat/lib/apache-kafka.sh fetch-tools).
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { withBroker } from '../helpers/broker';

const ROOT = path.resolve(__dirname, '../../..');
const KAFKA_SH = path.join(ROOT, 'compat/lib/apache-kafka.sh');
const TOOLS_CLASSPATH = path.join(os.homedir(), '.m2/fjord/apache-kafka-4.4.0/tools/classpath');

/**
 * Runs kafka-features against `bootstrap` (asynchronously: the broker answers from this process):
 * its exit status and its stdout without SLF4J's lines.
 */
function kafkaFeatures(bootstrap: string, ...args: string[]): Promise<{ status: number | null; out: string }> {
  return new Promise((resolve) => {
    execFile(KAFKA_SH, ['tool', 'org.apache.kafka.tools.FeatureCommand', '--bootstrap-server', bootstrap, ...args],
      { encoding: 'utf8', timeout: 120_000 }, (err, stdout) => resolve({
        status: err ? (typeof err.code === 'number' ? err.code : null) : 0,
        out: stdout.split('\n').filter((l) => l !== '' && !l.startsWith('SLF4J')).join('\n'),
      }));
  });
}

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
  before(function () {
    if (!fs.existsSync(TOOLS_CLASSPATH)) this.skip();
  });

  it('describes the features Kafka 4.4 lists, then upgrades and downgrades transaction.version', async () => {
    const bootstrap = broker.current().bootstrap;
    const first = await kafkaFeatures(bootstrap, 'describe');
    expect(first.status).to.equal(0);
    // Kafka 4.4 lists the same seven; share and ELR are 0-0 in Fjord (not implemented yet).
    expect(described(first.out)).to.deep.equal([
      ['eligible.leader.replicas.version', '0', '0', '0'],
      ['group.version', '0', '1', '1'],
      ['kraft.version', '0', '1', '0'],
      ['metadata.version', '3.3-IV3', '4.4-IV2', '4.4-IV2'],
      ['share.version', '0', '0', '0'],
      ['streams.version', '0', '1', '1'],
      ['transaction.version', '0', '2', '2'],
    ]);

    const down = await kafkaFeatures(bootstrap, 'downgrade', '--feature', 'transaction.version=1');
    expect(down).to.deep.equal({ status: 0, out: 'transaction.version was downgraded to 1.' });
    expect(broker.current().broker.features.transactionVersion()).to.equal(1);
    const up = await kafkaFeatures(bootstrap, 'upgrade', '--feature', 'transaction.version=2');
    expect(up).to.deep.equal({ status: 0, out: 'transaction.version was upgraded to 2.' });
    expect(broker.current().broker.features.transactionVersion()).to.equal(2);

    const refused = await kafkaFeatures(bootstrap, 'downgrade', '--feature', 'metadata.version=20');
    expect(refused.status).to.equal(1);
    expect(refused.out).to.equal('Could not downgrade metadata.version to 20. The update failed for all features since the following ' +
      'feature had an error: Unsupported metadata.version downgrade from 33 to 20. Refusing to perform the requested downgrade ' +
      'because it might delete metadata information.');
  });
});
