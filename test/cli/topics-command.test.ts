import { expect } from 'chai';
import { KafkaConnection } from '../../src/admin/connection';
import { withBroker } from '../helpers/broker';
import { runFjord, tableRows } from '../helpers/fjord-cli';

describe('fjord topics', function () {
  // Each run of bin/fjord loads @platformatic/kafka (about a second of CPU, more on a busy machine).
  this.timeout(180000);
  const broker = withBroker();
  let bootstrap: string;
  const fjord = (...args: string[]) => runFjord(...args, '--bootstrap-server', bootstrap);

  before(() => {
    bootstrap = `127.0.0.1:${broker.current().port}`;
  });

  it('creates a topic with partitions and configs, and refuses to create it again with TOPIC_ALREADY_EXISTS', async () => {
    const created = await fjord('topics', 'create', 'orders', '--partitions', '3', '--replication-factor', '1', '--config', 'retention.ms=86400000');
    expect(created.stderr).to.equal('');
    expect(created.status).to.equal(0);
    expect(created.stdout).to.equal('Created topic orders.\n');

    const again = await fjord('topics', 'create', 'orders');
    expect(again.status).to.equal(1);
    expect(again.stdout).to.equal('');
    expect(again.stderr).to.equal("fjord: TOPIC_ALREADY_EXISTS: Topic 'orders' already exists.\n");

    const malformed = await fjord('topics', 'create', 'other', '--config', 'retention.ms');
    expect(malformed.status).to.equal(1);
    expect(malformed.stderr).to.equal('fjord: --config retention.ms: expected key=value\n');
  });

  it('lists and describes topics with offsets and sizes, as a table and as JSON', async () => {
    const c = new KafkaConnection({ bootstrapServers: [bootstrap] });
    try {
      const producer = c.producer();
      await producer.send({
        messages: [0, 0, 2].map((partition, i) => ({ topic: 'orders', partition, value: Buffer.from(`order-${i}`) })),
      });
    } finally {
      await c.close();
    }

    const list = await fjord('topics', 'list');
    expect(list.status).to.equal(0);
    const rows = tableRows(list.stdout);
    expect(rows[0]).to.deep.equal(['TOPIC', 'PARTITIONS', 'RF', 'UNDER-REPLICATED', 'MESSAGES', 'SIZE']);
    expect(rows.slice(1).map((r) => r.slice(0, 5))).to.deep.equal([['orders', '3', '1', '0', '3']]);
    expect(rows[1][5]).to.match(/^\d+ B$/);

    const listJson = JSON.parse((await fjord('topics', 'list', '--include-internal', '--json')).stdout);
    const orders = listJson.find((t: { name: string }) => t.name === 'orders');
    expect(orders).to.include({ name: 'orders', internal: false, partitions: 3, replicationFactor: 1, underReplicatedPartitions: 0, messages: 3 });
    expect(orders.sizeBytes).to.be.greaterThan(0);
    expect(listJson.find((t: { name: string }) => t.name === '__consumer_offsets')).to.include({ internal: true });

    const describe = await fjord('topics', 'describe', 'orders');
    expect(describe.status).to.equal(0);
    const lines = describe.stdout.split('\n');
    expect(lines[0]).to.match(/^Topic: orders\tTopicId: [0-9a-f-]{36}\tPartitions: 3\tReplicationFactor: 1\tConfigs: retention.ms=86400000$/);
    const table = tableRows(lines.slice(1).join('\n'));
    expect(table[0]).to.deep.equal(['PARTITION', 'LEADER', 'EPOCH', 'REPLICAS', 'ISR', 'OFFLINE', 'EARLIEST', 'LATEST', 'SIZE']);
    expect(table.slice(1).map((r) => r.slice(0, 8))).to.deep.equal([
      ['0', '0', '0', '0', '0', '-', '0', '2'],
      ['1', '0', '0', '0', '0', '-', '0', '0'],
      ['2', '0', '0', '0', '0', '-', '0', '1'],
    ]);

    const [json] = JSON.parse((await fjord('topics', 'describe', 'orders', '--json')).stdout);
    expect(json.name).to.equal('orders');
    expect(json.configs).to.deep.equal([{ name: 'retention.ms', value: '86400000', source: 'DYNAMIC_TOPIC_CONFIG', isDefault: false, readOnly: false, sensitive: false }]);
    expect(json.partitions[0]).to.include({ partition: 0, leader: 0, leaderEpoch: 0, underReplicated: false, earliestOffset: 0, latestOffset: 2 });
    expect(json.partitions[0].replicas).to.deep.equal([0]);
    expect(json.partitions[0].sizeBytes).to.be.greaterThan(0);
    expect(json.partitions[1].sizeBytes).to.equal(0);

    const healthy = await fjord('topics', 'describe', '--under-replicated', '--json');
    expect(JSON.parse(healthy.stdout)).to.deep.equal([]);

    const unknown = await fjord('topics', 'describe', 'nope');
    expect(unknown.status).to.equal(1);
    expect(unknown.stderr).to.equal("fjord: UNKNOWN_TOPIC_OR_PARTITION: Topic 'nope' does not exist.\n");
  });

  it('alters partitions and configs, and reports a decrease as INVALID_PARTITIONS', async () => {
    const altered = await fjord('topics', 'alter', 'orders', '--partitions', '4', '--config', 'cleanup.policy=compact', '--delete-config', 'retention.ms', '--json');
    expect(altered.stderr).to.equal('');
    expect(JSON.parse(altered.stdout)).to.deep.equal({ altered: 'orders', partitions: 4, set: { 'cleanup.policy': 'compact' }, deleted: ['retention.ms'] });
    const [after] = JSON.parse((await fjord('topics', 'describe', 'orders', '--json')).stdout);
    expect(after.partitions).to.have.length(4);
    expect(after.configs.map((e: { name: string; value: string }) => `${e.name}=${e.value}`)).to.deep.equal(['cleanup.policy=compact']);

    const fewer = await fjord('topics', 'alter', 'orders', '--partitions', '2');
    expect(fewer.status).to.equal(1);
    expect(fewer.stderr).to.match(/^fjord: INVALID_PARTITIONS: .+\n$/);

    const nothing = await fjord('topics', 'alter', 'orders');
    expect(nothing.status).to.equal(1);
    expect(nothing.stderr).to.equal('fjord: nothing to alter: give --partitions, --config or --delete-config\n');
  });

  it('deletes topics, and a second delete is UNKNOWN_TOPIC_OR_PARTITION', async () => {
    expect((await fjord('topics', 'create', 'doomed', '--partitions', '1')).status).to.equal(0);
    const deleted = await fjord('topics', 'delete', 'orders', 'doomed');
    expect(deleted.stderr).to.equal('');
    expect(deleted.stdout).to.equal('Deleted topic orders.\nDeleted topic doomed.\n');
    expect(JSON.parse((await fjord('topics', 'list', '--json')).stdout)).to.deep.equal([]);

    const again = await fjord('topics', 'delete', 'orders', '--json');
    expect(again.status).to.equal(1);
    expect(again.stderr).to.match(/^fjord: UNKNOWN_TOPIC_OR_PARTITION: /);
  });

  it('says in one line that no broker could be reached', async () => {
    const out = await runFjord('topics', 'list', '--bootstrap-server', '127.0.0.1:1');
    expect(out.status).to.equal(1);
    expect(out.stderr).to.equal('fjord: Cannot connect to any broker. (Connection to 127.0.0.1:1 failed.)\n');
  });
});
