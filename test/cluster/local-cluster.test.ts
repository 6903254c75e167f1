// A local cluster as users start one: startCluster() in the library API and `fjord cluster` on the
// command line, each an etcd plus brokers, served to a real client (kafkajs).
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import * as net from 'node:net';
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
    // Each of these is the first of two consecutive ports (broker 1's; etcd's peer port).
    const [kafkaPort, etcdPort, httpPort] = [await consecutiveFreePorts(2), await consecutiveFreePorts(2), await consecutiveFreePorts(2)];
    const child = spawn(process.execPath, [FJORD, 'cluster', '--brokers', '2', '--port', String(kafkaPort),
      '--etcd-port', String(etcdPort), '--data-dir', dir, '--log-format', 'json', '--set', 'offsets.topic.replication.factor=2', '--set', `http.listener=127.0.0.1:${httpPort}`],
    { stdio: ['ignore', 'pipe', 'pipe'] });
    // What the cluster logged, for a failure's message; a step that hangs fails (the child killed) before mocha's timeout, with it.
    let out = '';
    child.stderr.on('data', (d) => (out += d));
    const hang = setTimeout(() => {
      out += '\n(killed after 50 s)';
      child.kill('SIGKILL');
    }, 50_000);
    try {
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      const bootstrap = await new Promise<string>((resolve, reject) => {
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
    } catch (e) {
      (e as Error).message += `\nfjord cluster's output:\n${out.split('\n').slice(-30).join('\n')}`;
      throw e;
    } finally {
      clearTimeout(hang);
      child.kill('SIGKILL');
      await rm(dir, { recursive: true, force: true });
    }
  });
});

/** A port whose next `count - 1` ports are free too (a free port's neighbour may be any socket's). */
async function consecutiveFreePorts(count: number): Promise<number> {
  for (let attempt = 0; ; attempt++) {
    const base = await freePort();
    const servers = await Promise.all(Array.from({ length: count }, (_, i) => new Promise<net.Server | null>((resolve) => {
      const server = net.createServer();
      server.once('error', () => resolve(null));
      server.listen(base + i, '127.0.0.1', () => resolve(server));
    })));
    await Promise.all(servers.map((server) => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()))));
    if (servers.every(Boolean)) return base;
    if (attempt === 20) throw new Error(`no ${count} consecutive free ports found`);
  }
}
