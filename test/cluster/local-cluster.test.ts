// A local cluster as users start one: startCluster() in the library API and `fjord cluster` on the
// command line, each an etcd plus brokers, served to a real client (kafkajs).
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { startCluster } from '../../src/local-cluster';
import { freePort } from '../../src/local-etcd';

const FJORD = path.resolve(__dirname, '../../../bin/fjord');

const client = (bootstrap: string) => new Kafka({ brokers: bootstrap.split(','), logLevel: logLevel.NOTHING, retry: { retries: 10, initialRetryTime: 100 } });

describe('a local cluster', function () {
  this.timeout(60_000);

  it('startCluster() starts an etcd and three brokers that serve a replicated topic, and close() removes them', async () => {
    const cluster = await startCluster({ logLevel: 'silent', config: { 'offsets.topic.num.partitions': '3' } });
    let dataDir: string | undefined;
    try {
      const kafka = client(cluster.bootstrap);
      const admin = kafka.admin();
      await admin.connect();
      const described = await admin.describeCluster();
      expect(described.brokers.map((b) => b.nodeId).sort()).to.deep.equal([0, 1, 2]);
      await admin.createTopics({ topics: [{ topic: 'local', numPartitions: 2, replicationFactor: 3 }] });
      const producer = kafka.producer();
      await producer.connect();
      const [ack] = await producer.send({ topic: 'local', acks: -1, messages: [{ partition: 1, value: 'replicated' }] });
      expect(ack.errorCode).to.equal(0);
      await producer.disconnect();
      const offsets = await admin.fetchTopicOffsets('local');
      expect(offsets.find((o) => o.partition === 1)!.high).to.equal('1');
      await admin.disconnect();
      dataDir = path.dirname(cluster.brokers[0].broker.config.dataDir);
    } finally {
      await cluster.close();
    }
    expect(existsSync(dataDir!)).to.equal(false);
  });

  it('fjord cluster starts brokers on consecutive ports (Kafka and HTTP) with their data under --data-dir, and stops on SIGTERM', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'fjord-cluster-cli-'));
    const httpPort = await freePort();
    const child = spawn(process.execPath, [FJORD, 'cluster', '--brokers', '2', '--port', String(await freePort()),
      '--etcd-port', String(await freePort()), '--data-dir', dir, '--log-format', 'json', '--set', 'offsets.topic.replication.factor=2', '--set', `http.listener=127.0.0.1:${httpPort}`],
    { stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      const bootstrap = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout.on('data', (d) => {
          out += d;
          const line = out.split('\n').find((l) => l.includes('"cluster running"'));
          if (line) resolve(JSON.parse(line).bootstrap);
        });
        child.on('exit', () => reject(new Error(`exited early: ${out}`)));
      });
      const [first, second] = bootstrap.split(',').map((b) => Number(b.split(':')[1]));
      expect(second).to.equal(first + 1);
      const admin = client(bootstrap).admin();
      await admin.connect();
      expect((await admin.describeCluster()).brokers).to.have.length(2);
      await admin.disconnect();
      // Broker i's console is on the given HTTP port + i.
      for (const id of [0, 1]) {
        const info = await (await fetch(`http://127.0.0.1:${httpPort + id}/api/info`)).json() as { nodeId: number };
        expect(info.nodeId).to.equal(id);
      }
      child.kill('SIGTERM');
      expect(await exited).to.equal(0);
      expect((await readdir(dir)).sort()).to.deep.equal(['broker-0', 'broker-1', 'etcd']);
    } finally {
      child.kill('SIGKILL');
      await rm(dir, { recursive: true, force: true });
    }
  });
});
