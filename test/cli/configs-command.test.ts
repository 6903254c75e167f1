import { expect } from 'chai';
import { withBroker } from '../helpers/broker';
import { runFjord, tableRows } from '../helpers/fjord-cli';

describe('fjord configs and fjord cluster describe', function () {
  // Each run of bin/fjord loads @platformatic/kafka (about a second of CPU, more on a busy machine).
  this.timeout(180000);
  const broker = withBroker({ config: { 'node.id': '0' } });
  let bootstrap: string;
  const fjord = (...args: string[]) => runFjord(...args, '--bootstrap-server', bootstrap);

  before(async () => {
    bootstrap = `127.0.0.1:${broker.current().port}`;
    expect((await fjord('topics', 'create', 'payments', '--partitions', '1', '--config', 'retention.ms=60000')).status).to.equal(0);
  });

  it('describes a topic\'s own configs, or all of them with their sources', async () => {
    const own = await fjord('configs', 'describe', '--topic', 'payments');
    expect(own.status).to.equal(0);
    expect(tableRows(own.stdout)).to.deep.equal([
      ['NAME', 'VALUE', 'SOURCE', 'READ-ONLY'],
      ['retention.ms', '60000', 'DYNAMIC_TOPIC_CONFIG', 'false'],
    ]);
    const all = JSON.parse((await fjord('configs', 'describe', '--topic', 'payments', '--all', '--json')).stdout);
    expect(all.find((e: { name: string }) => e.name === 'retention.ms')).to.deep.equal({ name: 'retention.ms', value: '60000', source: 'DYNAMIC_TOPIC_CONFIG', isDefault: false, readOnly: false, sensitive: false });
    expect(all.find((e: { name: string }) => e.name === 'cleanup.policy')).to.deep.equal({ name: 'cleanup.policy', value: 'delete', source: 'DEFAULT_CONFIG', isDefault: true, readOnly: false, sensitive: false });
  });

  it('sets and removes topic configs in one change, and reports a bad one with Kafka\'s error', async () => {
    const altered = await fjord('configs', 'alter', '--topic', 'payments', '--set', 'cleanup.policy=compact', '--set', 'segment.ms=3600000', '--delete', 'retention.ms');
    expect(altered.stderr).to.equal('');
    expect(altered.stdout).to.equal('Completed updating config for topic payments.\n');
    const own = JSON.parse((await fjord('configs', 'describe', '--topic', 'payments', '--json')).stdout);
    expect(own.map((e: { name: string; value: string }) => `${e.name}=${e.value}`)).to.deep.equal(['cleanup.policy=compact', 'segment.ms=3600000']);

    const bad = await fjord('configs', 'alter', '--topic', 'payments', '--set', 'retention.ms=soon');
    expect(bad.status).to.equal(1);
    expect(bad.stderr).to.match(/^fjord: INVALID_CONFIG: .*retention\.ms.*\n$/);
    const noTarget = await fjord('configs', 'describe');
    expect(noTarget.status).to.equal(1);
    expect(noTarget.stderr).to.equal('fjord: give exactly one of --topic, --broker, --broker-default, --group\n');
  });

  it('alters a broker\'s dynamic configs and the cluster-wide broker default', async () => {
    expect((await fjord('configs', 'alter', '--broker', '0', '--set', 'log.cleaner.threads=2')).stdout).to.equal('Completed updating config for broker 0.\n');
    expect((await fjord('configs', 'alter', '--broker-default', '--set', 'log.retention.ms=7200000')).stdout).to.equal('Completed updating config for the default broker.\n');
    const own = JSON.parse((await fjord('configs', 'describe', '--broker', '0', '--json')).stdout);
    expect(own).to.deep.equal([{ name: 'log.cleaner.threads', value: '2', source: 'DYNAMIC_BROKER_CONFIG', isDefault: false, readOnly: false, sensitive: false }]);
    const defaults = JSON.parse((await fjord('configs', 'describe', '--broker-default', '--json')).stdout);
    expect(defaults).to.deep.equal([{ name: 'log.retention.ms', value: '7200000', source: 'DYNAMIC_DEFAULT_BROKER_CONFIG', isDefault: false, readOnly: false, sensitive: false }]);
    const absent = await fjord('configs', 'describe', '--broker', '7');
    expect(absent.status).to.equal(1);
    expect(absent.stderr).to.equal('fjord: BROKER_NOT_AVAILABLE: Broker 7 is not in the cluster.\n');
  });

  it('describes the cluster: id, controller, brokers and finalized features', async () => {
    const running = broker.current();
    const table = await fjord('cluster', 'describe');
    expect(table.status).to.equal(0);
    const [head, brokers, features] = table.stdout.split('\n\n');
    expect(head).to.equal(`Cluster ID: ${running.broker.clusterId}\nController: 0`);
    expect(tableRows(brokers)).to.deep.equal([['BROKER', 'HOST', 'PORT', 'RACK'], ['0', '127.0.0.1', String(running.port), '-']]);
    expect(tableRows(features)[0]).to.deep.equal(['FEATURE', 'SUPPORTED', 'FINALIZED']);

    const json = JSON.parse((await fjord('cluster', 'describe', '--json')).stdout);
    expect(json).to.deep.include({ clusterId: running.broker.clusterId, controllerId: 0, brokers: [{ nodeId: 0, host: '127.0.0.1', port: running.port, rack: null }] });
    const metadataVersion = json.features.find((f: { name: string }) => f.name === 'metadata.version');
    expect(metadataVersion.finalizedLevel).to.be.a('number').within(metadataVersion.minVersion, metadataVersion.maxVersion);
    // Features whose minimum is 0 too (a broker leaves them out of ApiVersions below v4).
    expect(json.features.map((f: { name: string }) => f.name)).to.include.members(['group.version', 'transaction.version']);
  });
});
