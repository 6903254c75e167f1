import { expect } from 'chai';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { parseProperties } from '../../src/config/properties';
import {
  META_PROPERTIES_FILE,
  MetadataError,
  MetadataStore,
  MetadataStoreError,
  SNAPSHOT_FILE,
  generateClusterId,
} from '../../src/cluster/metadata-store';

describe('cluster/metadata-store', () => {
  let root: string;
  let n = 0;
  let dir: string;
  before(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'fjord-meta-'));
  });
  after(() => fs.rmSync(root, { recursive: true, force: true }));
  beforeEach(() => {
    dir = path.join(root, `d${n++}`, 'nested');
  });

  async function rejects(p: () => Promise<unknown>): Promise<Error> {
    try {
      await p();
    } catch (e) {
      return e as Error;
    }
    throw new Error('expected a rejection');
  }

  it('creates the directory and a Kafka-style meta.properties', async () => {
    const s = await MetadataStore.open(dir, 3);
    const props = parseProperties(fs.readFileSync(path.join(dir, META_PROPERTIES_FILE), 'utf8'));
    expect(props.get('version')).to.equal('1');
    expect(props.get('node.id')).to.equal('3');
    expect(props.get('cluster.id')).to.equal(s.clusterId);
    expect(s.clusterId).to.match(/^[A-Za-z0-9_-]{22}$/);
    expect(s.clusterId.startsWith('-')).to.equal(false);
    expect(s.nodeId).to.equal(3);
    expect(s.topics()).to.deep.equal([]);
    await s.close();
  });

  it('generates distinct base64url cluster ids', () => {
    const ids = new Set(Array.from({ length: 200 }, generateClusterId));
    expect(ids.size).to.equal(200);
    for (const id of ids) expect(id).to.match(/^[A-Za-z0-9_][A-Za-z0-9_-]{21}$/);
  });

  it('keeps topics, partitions and configs across reopen', async () => {
    const s = await MetadataStore.open(dir, 0);
    const t = s.createTopic('orders', [[0], [0], [0]], { 'cleanup.policy': 'compact' });
    expect(t.id).to.match(/^[0-9a-f]{32}$/);
    expect(t.id).to.not.equal('0'.repeat(32));
    expect(t.partitions).to.deep.equal([
      { index: 0, replicas: [0], leader: 0, leaderEpoch: 0, isr: [0] },
      { index: 1, replicas: [0], leader: 0, leaderEpoch: 0, isr: [0] },
      { index: 2, replicas: [0], leader: 0, leaderEpoch: 0, isr: [0] },
    ]);
    expect(s.topic('orders')).to.equal(t); // visible before persistence completes
    s.createTopic('gone', [[0]]);
    s.deleteTopic('gone');
    s.addPartitions('orders', [[0], [0]]);
    s.setTopicConfigs('orders', { 'retention.ms': '1000' });
    s.setLeaderEpoch('orders', 4, 7);
    s.createTopic('b-topic', [[0]]);
    await s.persist();
    await s.close();

    const r = await MetadataStore.open(dir, 0);
    expect(r.clusterId).to.equal(s.clusterId);
    expect(r.topics().map((x) => x.name)).to.deep.equal(['b-topic', 'orders']);
    const o = r.topic('orders')!;
    expect(o.id).to.equal(t.id);
    expect(r.topicById(t.id)).to.equal(o);
    expect(r.topicById(t.id.toUpperCase())).to.equal(o);
    expect(o.partitions.map((p) => p.index)).to.deep.equal([0, 1, 2, 3, 4]);
    expect(o.partitions[4].leaderEpoch).to.equal(7);
    expect(o.configs).to.deep.equal({ 'retention.ms': '1000' });
    expect(r.topic('gone')).to.equal(undefined);
    expect(r.version).to.equal(s.version);
    await r.close();
  });

  it('returns frozen records that later mutations replace rather than change', async () => {
    const s = await MetadataStore.open(dir, 0);
    const before = s.createTopic('t', [[0]]);
    expect(Object.isFrozen(before)).to.equal(true);
    expect(Object.isFrozen(before.partitions[0].replicas)).to.equal(true);
    s.addPartitions('t', [[0]]);
    expect(before.partitions).to.have.length(1);
    expect(s.topic('t')!.partitions).to.have.length(2);
    await s.close();
  });

  it("refuses bad mutations with Kafka's error codes", async () => {
    const s = await MetadataStore.open(dir, 0);
    s.createTopic('a_b', [[0]]);
    const err = (fn: () => unknown): MetadataError => {
      try {
        fn();
      } catch (e) {
        expect(e).to.be.instanceOf(MetadataError);
        return e as MetadataError;
      }
      throw new Error('expected MetadataError');
    };
    expect(err(() => s.createTopic('a_b', [[0]]))).to.include({ errorCode: 36, message: "Topic 'a_b' already exists." });
    expect(err(() => s.createTopic('a.b', [[0]]))).to.include({ errorCode: 17, message: "Topic 'a.b' collides with existing topic: a_b" });
    expect(err(() => s.createTopic('bad name', [[0]]))).to.include({ errorCode: 17 });
    expect(err(() => s.createTopic('x', []))).to.include({ errorCode: 37 });
    expect(err(() => s.createTopic('x', [[0, 0]]))).to.include({ errorCode: 39 });
    expect(err(() => s.createTopic('x', [[]]))).to.include({ errorCode: 39 });
    expect(err(() => s.deleteTopic('nope'))).to.include({ errorCode: 3, errorName: 'UNKNOWN_TOPIC_OR_PARTITION' });
    expect(err(() => s.addPartitions('nope', [[0]]))).to.include({ errorCode: 3 });
    expect(err(() => s.setTopicConfigs('nope', {}))).to.include({ errorCode: 3 });
    expect(s.topics().map((t) => t.name)).to.deep.equal(['a_b']);
    await s.close();
  });

  it('coalesces concurrent writers and every persist() sees its own change on disk', async () => {
    const s = await MetadataStore.open(dir, 0);
    const waits: Promise<void>[] = [];
    for (let i = 0; i < 30; i++) {
      s.createTopic(`t${i}`, [[0]]);
      waits.push(s.persist());
      if (i % 7 === 0) await new Promise((r) => setImmediate(r));
    }
    await Promise.all(waits);
    const onDisk = JSON.parse(fs.readFileSync(path.join(dir, SNAPSHOT_FILE), 'utf8'));
    expect(onDisk.state.topics).to.have.length(30);
    expect(onDisk.state.version).to.equal(s.version);
    await s.close();
    expect(() => s.createTopic('late', [[0]])).to.throw(MetadataError, /closed/);
  });

  it('refuses to start when meta.properties names another node id', async () => {
    const s = await MetadataStore.open(dir, 1);
    s.createTopic('t', [[1]]);
    await s.close();
    const e = await rejects(() => MetadataStore.open(dir, 2));
    expect(e).to.be.instanceOf(MetadataStoreError);
    expect(e.message).to.match(/Stored node id 1 in .*meta\.properties doesn't match the configured node\.id 2/);
    // the data is untouched
    expect((await MetadataStore.open(dir, 1)).topic('t')).to.not.equal(undefined);
  });

  it('honours a given cluster id for a new directory and keeps the stored one afterwards', async () => {
    const s = await MetadataStore.open(dir, 0, { clusterId: 'MkU3OEVBNTcwNTJENDM2Qk' });
    expect(s.clusterId).to.equal('MkU3OEVBNTcwNTJENDM2Qk');
    const r = await MetadataStore.open(dir, 0, { clusterId: 'ignored-for-existing-d' });
    expect(r.clusterId).to.equal('MkU3OEVBNTcwNTJENDM2Qk');
  });

  describe('crash safety', () => {
    async function seeded(): Promise<string> {
      const s = await MetadataStore.open(dir, 0);
      s.createTopic('kept', [[0], [0]], { 'retention.ms': '5' });
      await s.close();
      return s.clusterId;
    }

    it('a leftover complete temp file (crash before rename) is ignored and removed', async () => {
      const cid = await seeded();
      const snap = path.join(dir, SNAPSHOT_FILE);
      // a full newer snapshot that never got renamed: the mutation was never acknowledged
      const s = await MetadataStore.open(dir, 0);
      s.createTopic('unacked', [[0]]);
      await s.persist();
      const newer = fs.readFileSync(snap);
      s.deleteTopic('unacked');
      await s.close();
      fs.writeFileSync(snap + '.tmp', newer);
      const r = await MetadataStore.open(dir, 0);
      expect(r.clusterId).to.equal(cid);
      expect(r.topics().map((t) => t.name)).to.deep.equal(['kept']);
      expect(fs.existsSync(snap + '.tmp')).to.equal(false);
    });

    it('a truncated temp file (crash mid-write) does not break open or lose state', async () => {
      await seeded();
      const snap = path.join(dir, SNAPSHOT_FILE);
      const full = fs.readFileSync(snap, 'utf8');
      fs.writeFileSync(snap + '.tmp', full.slice(0, Math.floor(full.length / 2)));
      fs.writeFileSync(path.join(dir, META_PROPERTIES_FILE + '.tmp'), 'version=');
      const r = await MetadataStore.open(dir, 0);
      expect(r.topic('kept')!.configs).to.deep.equal({ 'retention.ms': '5' });
      expect(r.topic('kept')!.partitions).to.have.length(2);
      r.createTopic('more', [[0]]);
      await r.close();
      expect((await MetadataStore.open(dir, 0)).topics().map((t) => t.name)).to.deep.equal(['kept', 'more']);
    });

    it('a temp file without any snapshot (crash during the first write) opens empty', async () => {
      fs.mkdirSync(dir, { recursive: true });
      fs.writeFileSync(path.join(dir, SNAPSHOT_FILE + '.tmp'), '{"format":1,"sha');
      const s = await MetadataStore.open(dir, 0);
      expect(s.topics()).to.deep.equal([]);
    });

    it('a damaged snapshot is reported, not half-read', async () => {
      await seeded();
      const snap = path.join(dir, SNAPSHOT_FILE);
      const full = fs.readFileSync(snap, 'utf8');
      fs.writeFileSync(snap, full.replace('"retention.ms":"5"', '"retention.ms":"6"'));
      const e = await rejects(() => MetadataStore.open(dir, 0));
      expect(e).to.be.instanceOf(MetadataStoreError);
      expect(e.message).to.match(/checksum mismatch/);
      fs.writeFileSync(snap, full.slice(0, 10));
      expect((await rejects(() => MetadataStore.open(dir, 0))).message).to.match(/is unreadable/);
    });

    it('recreates a lost meta.properties from the snapshot', async () => {
      const cid = await seeded();
      fs.rmSync(path.join(dir, META_PROPERTIES_FILE));
      const r = await MetadataStore.open(dir, 0);
      expect(r.clusterId).to.equal(cid);
      expect(r.topic('kept')).to.not.equal(undefined);
      fs.rmSync(path.join(dir, META_PROPERTIES_FILE));
      expect((await rejects(() => MetadataStore.open(dir, 5))).message).to.match(/doesn't match the configured node\.id 5/);
    });

    it('a failed write poisons the store instead of diverging silently', async () => {
      const s = await MetadataStore.open(dir, 0);
      s.createTopic('ok', [[0]]);
      await s.persist();
      // make the snapshot path un-renameable: a non-empty directory in its place
      const snap = path.join(dir, SNAPSHOT_FILE);
      fs.rmSync(snap);
      fs.mkdirSync(path.join(snap, 'x'), { recursive: true });
      s.createTopic('fails', [[0]]);
      const e = await rejects(() => s.persist());
      expect(e).to.be.instanceOf(Error);
      expect(() => s.createTopic('after', [[0]])).to.throw(MetadataError, /Metadata store failed/);
      await rejects(() => s.persist());
    });
  });
});
