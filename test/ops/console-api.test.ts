// The web console's JSON API under /api/ on a broker's HTTP listener, against known topics, messages
// and a group with lag: every route's JSON, the 4xx answers, the read-only default, the writes once
// http.console.writes.enable=true, and `fjord console` serving the same API for a cluster elsewhere.
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import type { RunningBroker } from '../../src/broker';
import type { ConfigEntry } from '../../src/admin/configs';
import type { ClusterDescription } from '../../src/admin/cluster';
import type { GroupDescription, GroupSummary, OffsetReset } from '../../src/admin/groups';
import type { BrowsedRecord } from '../../src/admin/messages';
import type { TopicDescription, TopicSummary } from '../../src/admin/topics';
import type { TaskProgress } from '../../src/metrics/progress';
import { withBroker, withRestartableBroker } from '../helpers/broker';
import { makeCertificates, type Certificates } from '../helpers/certs';

const FJORD = path.resolve(__dirname, '../../../bin/fjord');
const READ_ONLY = 'the console is read-only: set http.console.writes.enable=true';

/** A value as the API sends it: bigints as numbers (exact below 2^53), Buffers in base64. */
type Wire<T> = T extends bigint ? number : T extends Buffer ? string : T extends (infer U)[] ? Wire<U>[] : T extends object ? { [K in keyof T]: Wire<T[K]> } : T;

interface ErrorBody {
  error: string;
}

/** The body as JSON and the status of one request to the broker's console. */
async function call<T = ErrorBody>(b: RunningBroker | number, method: string, apiPath: string, body?: unknown): Promise<{ status: number; json: Wire<T> }> {
  const port = typeof b === 'number' ? b : b.http!.port;
  const res = await fetch(`http://127.0.0.1:${port}${apiPath}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  expect(res.headers.get('content-type')).to.equal('application/json; charset=utf-8');
  return { status: res.status, json: await res.json() as Wire<T> };
}

async function get<T>(b: RunningBroker | number, apiPath: string): Promise<Wire<T>> {
  const { status, json } = await call<T>(b, 'GET', apiPath);
  expect(status, `${apiPath}: ${JSON.stringify(json)}`).to.equal(200);
  return json;
}

/** Topic `orders` (3 partitions, 5 records with keys and a header in partition 0) and group `billing` committed at 2 of them. */
async function seed(b: RunningBroker): Promise<void> {
  const kafka = new Kafka({ brokers: [b.bootstrap], clientId: 'console-api-test', logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic: 'orders', numPartitions: 3 }] });
  const producer = kafka.producer();
  await producer.connect();
  await producer.send({
    topic: 'orders',
    messages: [0, 1, 2, 3, 4].map((i) => ({ partition: 0, key: `k${i}`, value: `{"order":${i}}`, headers: { source: `h${i}` }, timestamp: String(1_700_000_000_000 + i * 1000) })),
  });
  await producer.disconnect();
  await admin.setOffsets({ groupId: 'billing', topic: 'orders', partitions: [{ partition: 0, offset: '2' }] });
  await admin.disconnect();
}

const b64 = (s: string) => Buffer.from(s).toString('base64');

describe('console API', function () {
  this.timeout(60_000);

  describe('read-only (the default)', () => {
    const broker = withBroker({ config: { 'http.listener': '127.0.0.1:0' } });
    before(async () => seed(broker.current()));

    it('GET /api/info: version, node id, writes off, metrics on', async () => {
      const info = await get<object>(broker.current(), '/api/info');
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      expect(info).to.deep.equal({ version: require('../../../package.json').version, nodeId: 0, writesEnabled: false, metrics: true });
    });

    it('GET /api/cluster: the broker, the controller', async () => {
      const b = broker.current();
      const cluster = await get<ClusterDescription>(b, '/api/cluster');
      expect(cluster.clusterId).to.equal(b.broker.clusterId);
      expect(cluster.controllerId).to.equal(0);
      expect(cluster.brokers).to.deep.equal([{ nodeId: 0, host: '127.0.0.1', port: b.port, rack: null }]);
    });

    it('GET /api/topics: summaries with message counts, internal topics flagged', async () => {
      const topics = await get<TopicSummary[]>(broker.current(), '/api/topics');
      const orders = topics.find((t) => t.name === 'orders');
      expect(orders).to.include({ internal: false, partitions: 3, replicationFactor: 1, underReplicatedPartitions: 0, messages: 5 });
      expect(topics.find((t) => t.name === '__consumer_offsets')?.internal).to.equal(true);
    });

    it('GET /api/topics/:name: partitions with offsets, and the configs', async () => {
      const b = broker.current();
      const topic = await get<TopicDescription & { configs: ConfigEntry[] }>(b, '/api/topics/orders');
      expect(topic.name).to.equal('orders');
      expect(topic.topicId).to.be.a('string').with.length.greaterThan(0);
      expect(topic.partitions.map((p) => [p.partition, p.leader, p.replicas, p.isr, p.earliestOffset, p.latestOffset]))
        .to.deep.equal([[0, 0, [0], [0], 0, 5], [1, 0, [0], [0], 0, 0], [2, 0, [0], [0], 0, 0]]);
      const retention = topic.configs.find((c) => c.name === 'retention.ms');
      expect(retention).to.include({ value: '604800000', isDefault: true });
    });

    it('GET /api/topics/:name/messages: records from an offset, keys, values and headers in base64', async () => {
      const records = await get<BrowsedRecord[]>(broker.current(), '/api/topics/orders/messages?partition=0&offset=1&limit=2');
      expect(records.map((r) => [r.offset, r.timestamp, r.key, r.value, r.headers])).to.deep.equal([
        [1, 1_700_000_001_000, b64('k1'), b64('{"order":1}'), [{ key: 'source', value: b64('h1') }]],
        [2, 1_700_000_002_000, b64('k2'), b64('{"order":2}'), [{ key: 'source', value: b64('h2') }]],
      ]);
      expect(records.every((r) => r.topic === 'orders' && r.partition === 0)).to.equal(true);
    });

    it('GET /api/topics/:name/messages?timestamp=: from the first record at or after it', async () => {
      const records = await get<BrowsedRecord[]>(broker.current(), '/api/topics/orders/messages?partition=0&timestamp=1700000003000&limit=10');
      expect(records.map((r) => r.offset)).to.deep.equal([3, 4]);
    });

    it('answers 400 for a bad browse and 404 for an unknown topic', async () => {
      const b = broker.current();
      for (const q of ['', '?partition=x', '?partition=-1', '?partition=0&limit=0', '?partition=0&offset=1&timestamp=2', '?partition=0&offset=abc']) {
        const { status, json } = await call(b, 'GET', `/api/topics/orders/messages${q}`);
        expect(status, q).to.equal(400);
        expect(json.error, q).to.be.a('string');
      }
      const unknown = await call(b, 'GET', '/api/topics/nope');
      expect(unknown.status).to.equal(404);
      expect(unknown.json.error).to.match(/^UNKNOWN_TOPIC_OR_PARTITION: /);
    });

    it('GET /api/groups: the group with its total lag', async () => {
      const groups = await get<(GroupSummary & { totalLag: bigint | null })[]>(broker.current(), '/api/groups');
      expect(groups.find((g) => g.groupId === 'billing')).to.include({ state: 'Empty', totalLag: 3 });
    });

    it('GET /api/groups/:id: committed offsets and lag per partition; 404 for an unknown group', async () => {
      const b = broker.current();
      const group = await get<GroupDescription>(b, '/api/groups/billing');
      expect(group).to.include({ groupId: 'billing', state: 'Empty', totalLag: 3 });
      expect(group.members).to.deep.equal([]);
      expect(group.offsets.find((o) => o.topic === 'orders' && o.partition === 0)).to.include({ committedOffset: 2, latestOffset: 5, lag: 3 });
      expect((await call(b, 'GET', '/api/groups/nope')).status).to.equal(404);
    });

    it('GET /api/brokers/:id/configs: the broker\'s configs; 404 for an unknown broker, 400 for a bad id', async () => {
      const b = broker.current();
      const configs = await get<ConfigEntry[]>(b, '/api/brokers/0/configs');
      expect(configs.find((c) => c.name === 'http.listener')?.value).to.equal('127.0.0.1:0');
      expect(configs.find((c) => c.name === 'num.partitions')).to.include({ value: '1', isDefault: true });
      expect((await call(b, 'GET', '/api/brokers/7/configs')).status).to.equal(404);
      expect((await call(b, 'GET', '/api/brokers/x/configs')).status).to.equal(400);
    });

    it('answers 404 for an unknown route', async () => {
      const { status, json } = await call(broker.current(), 'GET', '/api/nope');
      expect(status).to.equal(404);
      expect(json.error).to.contain('/api/nope');
    });

    it('refuses every write with 403', async () => {
      const b = broker.current();
      const writes: [string, string, unknown][] = [
        ['POST', '/api/topics', { name: 'new', partitions: 1, replicationFactor: 1, configs: {} }],
        ['DELETE', '/api/topics/orders', undefined],
        ['POST', '/api/groups/billing/reset-offsets', { topics: ['orders'], target: { to: 'earliest' }, dryRun: false }],
      ];
      for (const [method, p, body] of writes) {
        const { status, json } = await call(b, method, p, body);
        expect(status, `${method} ${p}`).to.equal(403);
        expect(json).to.deep.equal({ error: READ_ONLY });
      }
      expect((await get<TopicSummary[]>(b, '/api/topics')).map((t) => t.name)).to.include('orders').and.not.include('new');
    });
  });

  describe('with http.console.writes.enable=true', () => {
    const broker = withBroker({ config: { 'http.listener': '127.0.0.1:0', 'http.console.writes.enable': 'true' } });
    before(async () => seed(broker.current()));

    it('creates a topic, refuses it twice (409) and bad bodies (400, 415)', async () => {
      const b = broker.current();
      const created = await call(b, 'POST', '/api/topics', { name: 'payments', partitions: 2, replicationFactor: 1, configs: { 'cleanup.policy': 'compact' } });
      expect(created.status, JSON.stringify(created.json)).to.equal(201);
      const topic = await get<TopicDescription & { configs: ConfigEntry[] }>(b, '/api/topics/payments');
      expect(topic.partitions).to.have.length(2);
      expect(topic.configs.find((c) => c.name === 'cleanup.policy')?.value).to.equal('compact');
      const again = await call(b, 'POST', '/api/topics', { name: 'payments', partitions: 2, replicationFactor: 1 });
      expect(again.status).to.equal(409);
      expect(again.json.error).to.match(/^TOPIC_ALREADY_EXISTS: /);
      expect((await call(b, 'POST', '/api/topics', { partitions: 2 })).status).to.equal(400);
      expect((await call(b, 'POST', '/api/topics', { name: 'x', partitions: 'two' })).status).to.equal(400);
      expect((await call(b, 'POST', '/api/topics', { name: 'x', configs: { 'retention.ms': 5 } })).status).to.equal(400);
      const res = await fetch(`http://127.0.0.1:${b.http!.port}/api/topics`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: '{"name":"y"}' });
      expect(res.status).to.equal(415);
      const notJson = await fetch(`http://127.0.0.1:${b.http!.port}/api/topics`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{' });
      expect(notJson.status).to.equal(400);
    });

    it('resets a group\'s offsets: the plan with dryRun, applied without', async () => {
      const b = broker.current();
      const body = { topics: ['orders:0'], target: { to: 'offset', offset: 4 } };
      const plan = await call<OffsetReset[]>(b, 'POST', '/api/groups/billing/reset-offsets', { ...body, dryRun: true });
      expect(plan.status, JSON.stringify(plan.json)).to.equal(200);
      expect(plan.json).to.deep.equal([{ topic: 'orders', partition: 0, currentOffset: 2, newOffset: 4 }]);
      expect((await get<GroupDescription>(b, '/api/groups/billing')).totalLag).to.equal(3);
      const applied = await call(b, 'POST', '/api/groups/billing/reset-offsets', { ...body, dryRun: false });
      expect(applied.json).to.deep.equal(plan.json);
      expect((await get<GroupDescription>(b, '/api/groups/billing')).totalLag).to.equal(1);
      const bad = await call(b, 'POST', '/api/groups/billing/reset-offsets', { topics: ['orders'], target: { to: 'yesterday' } });
      expect(bad.status).to.equal(400);
    });

    it('deletes a topic, then answers 404 for it', async () => {
      const b = broker.current();
      await call(b, 'POST', '/api/topics', { name: 'doomed', partitions: 1, replicationFactor: 1 });
      const deleted = await call(b, 'DELETE', '/api/topics/doomed');
      expect(deleted.status, JSON.stringify(deleted.json)).to.equal(200);
      expect((await get<TopicSummary[]>(b, '/api/topics')).map((t) => t.name)).not.to.include('doomed');
      expect((await call(b, 'DELETE', '/api/topics/doomed')).status).to.equal(404);
    });
  });

  describe('after a restart', () => {
    const broker = withRestartableBroker({ config: { 'http.listener': '127.0.0.1:0' } });

    it('GET /api/progress: the loading of the logs, finished', async () => {
      await seed(broker.running);
      await broker.restart();
      const progress = await get<TaskProgress[]>(broker.running, '/api/progress');
      const loading = progress.find((t) => t.kind === 'recovery');
      expect(loading?.title).to.match(/^loading \d+ logs$/);
      expect(loading).to.include({ percent: 100, unit: 'bytes' });
      expect(loading?.done).to.equal(loading?.total).and.be.greaterThan(0);
      expect(loading?.finishedAtMs).to.be.a('number');
    });
  });

  describe('on a broker with only an SSL listener', () => {
    let certs: Certificates;
    before(() => {
      certs = makeCertificates();
    });
    after(() => certs.remove());
    const broker = withBroker(() => ({ config: { listeners: 'SSL://127.0.0.1:0', ...certs.brokerSsl, 'http.listener': '127.0.0.1:0' } }));

    it('serves /metrics and /api/info, and answers 503 where the console would read the cluster', async () => {
      const b = broker.current();
      expect((await fetch(`http://127.0.0.1:${b.http!.port}/metrics`)).status).to.equal(200);
      expect(await get<object>(b, '/api/info')).to.include({ nodeId: 0, metrics: true });
      const { status, json } = await call(b, 'GET', '/api/topics');
      expect(status).to.equal(503);
      expect(json.error).to.contain('needs a PLAINTEXT listener').and.contain('SSL:SSL');
    });
  });

  describe('fjord console', () => {
    const broker = withBroker({ config: { 'http.listener': '127.0.0.1:0' } });
    before(async () => seed(broker.current()));

    it('serves the same API for a cluster it reaches over Kafka, without /metrics', async () => {
      const child = spawn(process.execPath, [FJORD, 'console', '--bootstrap-server', broker.current().bootstrap, '--http', '127.0.0.1:0'],
        { stdio: ['ignore', 'pipe', 'pipe'] });
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      try {
        const port = await new Promise<number>((resolve, reject) => {
          let out = '';
          child.stdout.on('data', (d) => {
            out += d;
            const m = /console at http:\/\/127\.0\.0\.1:(\d+)\//.exec(out);
            if (m) resolve(Number(m[1]));
          });
          child.on('exit', () => reject(new Error(`exited early: ${out}`)));
        });
        expect(await get<object>(port, '/api/info')).to.include({ nodeId: null, metrics: false, writesEnabled: false });
        expect((await get<TopicSummary[]>(port, '/api/topics')).map((t) => t.name)).to.include('orders');
        expect((await get<GroupDescription>(port, '/api/groups/billing')).totalLag).to.equal(3);
        expect(await get<TaskProgress[]>(port, '/api/progress')).to.deep.equal([]);
        expect((await fetch(`http://127.0.0.1:${port}/metrics`)).status).to.equal(404);
        expect((await call(port, 'POST', '/api/topics', { name: 'new' })).status).to.equal(403);
      } finally {
        child.kill('SIGTERM');
      }
      expect(await exited).to.equal(0);
    });
  });
});
