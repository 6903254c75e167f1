import { expect } from 'chai';
import { KafkaConnection } from '../../src/admin/connection';
import { describeTopics } from '../../src/admin/topics';
import { withEtcdBrokers } from '../helpers/etcd-brokers';
import { runFjord, tableRows } from '../helpers/fjord-cli';

describe('fjord topics on a cluster of three brokers', function () {
  // Each run of bin/fjord loads @platformatic/kafka (about a second of CPU, more on a busy machine).
  this.timeout(180000);
  const cluster = withEtcdBrokers([0, 1, 2]);
  let bootstrap: string;
  const fjord = (...args: string[]) => runFjord(...args, '--bootstrap-server', bootstrap);

  before(() => {
    bootstrap = `127.0.0.1:${cluster.broker(0).port}`;
  });

  it('shows each partition\'s leader, replicas and size from its leader, then the partitions a stopped broker leaves under-replicated', async () => {
    expect((await fjord('topics', 'create', 'spread', '--partitions', '3', '--replication-factor', '2')).status).to.equal(0);
    const c = new KafkaConnection({ bootstrapServers: [bootstrap] });
    let onBroker2: number[];
    try {
      await c.producer().send({ acks: -1, messages: [0, 1, 2].map((partition) => ({ topic: 'spread', partition, value: Buffer.alloc(100 * (partition + 1)) })) });

      const [described] = JSON.parse((await fjord('topics', 'describe', 'spread', '--json')).stdout);
      expect(described.partitions.map((p: { replicas: number[] }) => p.replicas.length)).to.deep.equal([2, 2, 2]);
      expect(new Set(described.partitions.map((p: { leader: number }) => p.leader)).size).to.be.greaterThan(1);
      // Each partition's size is its leader's replica's, reported by that broker alone.
      const sizes = described.partitions.map((p: { sizeBytes: number }) => p.sizeBytes);
      expect(sizes[0]).to.be.greaterThan(100);
      expect(sizes[1]).to.be.greaterThan(sizes[0]);
      expect(sizes[2]).to.be.greaterThan(sizes[1]);
      expect(described.partitions.every((p: { latestOffset: number }) => p.latestOffset === 1)).to.equal(true);

      onBroker2 = described.partitions.filter((p: { replicas: number[] }) => p.replicas.includes(2)).map((p: { partition: number }) => p.partition);
      expect(onBroker2.length).to.be.greaterThan(0);
      await cluster.broker(2).close();
      // The controller fences the stopped broker after its session (6 s) and shrinks the ISRs it was in.
      const deadline = Date.now() + 60_000;
      for (;;) {
        const [now] = await describeTopics(c, ['spread']);
        if (now.partitions.filter((p) => p.underReplicated).length === onBroker2.length) break;
        if (Date.now() > deadline) throw new Error(`ISRs did not shrink: ${JSON.stringify(now.partitions.map((p) => p.isr))}`);
        await new Promise((r) => setTimeout(r, 500));
      }
    } finally {
      await c.close();
    }

    const table = await fjord('topics', 'describe', '--under-replicated');
    expect(table.status).to.equal(0);
    const rows = tableRows(table.stdout.split('\n').slice(1).join('\n'));
    expect(rows.slice(1).map((r) => Number(r[0]))).to.deep.equal(onBroker2);
    for (const r of rows.slice(1)) expect(r[4].split(',')).to.not.include('2');

    const list = JSON.parse((await fjord('topics', 'list', '--json')).stdout);
    expect(list).to.have.length(1);
    expect(list[0]).to.include({ name: 'spread', partitions: 3, replicationFactor: 2, underReplicatedPartitions: onBroker2.length, messages: 3 });
    await cluster.restart(2);
  });
});
