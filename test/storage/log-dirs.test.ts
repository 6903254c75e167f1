// Several log dirs: placement, loading, per-dir files, offline dirs, and moving a log between dirs.
import { expect } from 'chai';
import * as fs from 'fs';
import * as path from 'path';
import { parseProperties } from '../../src/config/properties';
import {
  CLEAN_SHUTDOWN_FILE, LOG_START_OFFSET_CHECKPOINT_FILE, LogManager, META_PROPERTIES_FILE, RECOVERY_POINT_CHECKPOINT_FILE,
  futureDirName, type LogManagerOptions,
} from '../../src/storage/log-manager';
import type { PartitionLog } from '../../src/storage/partition-log';
import { eventually } from '../helpers/eventually';
import { batchBaseOffsets, makeBatch, silentLogger, tempDirs, topicConfig } from './helpers';

const IDENTITY = { nodeId: 1, clusterId: 'test-cluster-id-000000' };

describe('storage/log-dirs', function () {
  this.timeout(20000);
  const dirs = tempDirs('fjord-logdirs-');
  let managers: LogManager[] = [];

  afterEach(async () => {
    for (const m of managers) await m.close();
    managers = [];
  });

  async function openManager(logDirs: string[], extra: Partial<LogManagerOptions> = {}): Promise<LogManager> {
    const m = await LogManager.open({
      dataDir: logDirs[0], logDirs, identity: IDENTITY, log: silentLogger,
      defaults: topicConfig({ 'segment.bytes': '600', 'file.delete.delay.ms': '0' }), ...extra,
    });
    managers.push(m);
    return m;
  }

  async function closeManager(m: LogManager): Promise<void> {
    await m.close();
    managers = managers.filter((x) => x !== m);
  }

  /** Each log as `topic-partition@dN`, N its dir's index in log.dirs. */
  const placement = (m: LogManager) => m.allLogs().map((l) => `${l.topic}-${l.partition}@d${m.logDirs.indexOf(m.logDirOf(l))}`).sort();

  /** Every batch of a log, from its start, with its base offset. */
  async function contents(log: PartitionLog): Promise<string[]> {
    const out: string[] = [];
    await log.forEachBatch(log.logStartOffset, (b) => out.push(`${batchBaseOffsets(b)[0]}:${b.toString('hex')}`));
    return out;
  }

  it('puts each new partition in the dir with the fewest, the first one on a tie', async () => {
    const [a, b, c] = [dirs.next(), dirs.next(), dirs.next()];
    let m = await openManager([a]);
    await m.getOrCreate('old', 0);
    await m.getOrCreate('old', 1);
    await closeManager(m);
    m = await openManager([a, b, c]);
    // Created at the same time: each counts for the next one's placement.
    await Promise.all([0, 1, 2, 3].map((p) => m.getOrCreate('new', p)));
    expect(placement(m)).to.deep.equal(['new-0@d1', 'new-1@d2', 'new-2@d1', 'new-3@d2', 'old-0@d0', 'old-1@d0']);
    await m.getOrCreate('new', 4);
    expect(placement(m)).to.include('new-4@d0');
  });

  it('loads every dir after a restart, each with its own checkpoints, marker and meta.properties', async () => {
    const [a, b] = [dirs.next(), dirs.next()];
    let m = await openManager([a, b]);
    for (const p of [0, 1, 2]) {
      const log = await m.getOrCreate('t', p);
      for (let i = 0; i <= p; i++) await log.append(makeBatch({ records: 2 })).done;
    }
    await (m.get('t', 1)!).deleteRecordsBefore(1);
    const before = placement(m);
    await closeManager(m);
    expect(fs.readFileSync(path.join(b, RECOVERY_POINT_CHECKPOINT_FILE), 'utf8')).to.equal('0\n1\nt 1 4\n');
    expect(fs.readFileSync(path.join(b, LOG_START_OFFSET_CHECKPOINT_FILE), 'utf8')).to.equal('0\n1\nt 1 1\n');
    expect(fs.readFileSync(path.join(a, RECOVERY_POINT_CHECKPOINT_FILE), 'utf8').split('\n').slice(2).sort().join(',')).to.equal(',t 0 2,t 2 6');
    for (const d of [a, b]) expect(fs.existsSync(path.join(d, CLEAN_SHUTDOWN_FILE)), d).to.equal(true);
    // The data dir's meta.properties belongs to the metadata store; the others get Kafka's.
    expect(fs.existsSync(path.join(a, META_PROPERTIES_FILE))).to.equal(false);
    const meta = parseProperties(fs.readFileSync(path.join(b, META_PROPERTIES_FILE), 'utf8'));
    expect(Object.fromEntries([...meta].filter(([k]) => k !== 'directory.id'))).to.deep.equal({ 'cluster.id': IDENTITY.clusterId, 'node.id': '1', version: '1' });
    expect(meta.get('directory.id'), 'a Kafka Uuid').to.match(/^[A-Za-z0-9_][A-Za-z0-9_-]{21}$/);

    m = await openManager([a, b]);
    expect(placement(m)).to.deep.equal(before);
    expect(m.allLogs().map((l) => `${l.partition}:${l.logStartOffset}-${l.logEndOffset}`).sort()).to.deep.equal(['0:0-2', '1:1-4', '2:0-6']);
    expect(fs.readFileSync(path.join(b, META_PROPERTIES_FILE), 'utf8')).to.contain(`directory.id=${meta.get('directory.id')}`);
  });

  it('refuses to start on a partition found in two dirs, and on a dir of another node', async () => {
    const [a, b] = [dirs.next(), dirs.next()];
    const m = await openManager([a, b]);
    await m.getOrCreate('t', 0);
    await closeManager(m);
    fs.mkdirSync(path.join(b, 't-0'));
    let refused = await openManager([a, b]).catch((e: Error) => e);
    expect(refused).to.be.instanceOf(Error);
    expect((refused as Error).message).to.contain('Duplicate log directories for t-0 are found in both');
    fs.rmSync(path.join(b, 't-0'), { recursive: true });
    refused = await openManager([a, b], { identity: { nodeId: 2, clusterId: IDENTITY.clusterId } }).catch((e: Error) => e);
    expect((refused as Error).message).to.contain("doesn't match the configured node.id 2");
  });

  it('takes a dir it cannot read offline and places nothing there', async () => {
    const [a, b] = [dirs.next(), dirs.next()];
    fs.mkdirSync(path.dirname(b), { recursive: true });
    fs.writeFileSync(b, 'not a directory');
    const m = await openManager([a, b]);
    expect(m.isLogDirOnline(a)).to.equal(true);
    expect(m.isLogDirOnline(b)).to.equal(false);
    expect(() => m.isLogDirOnline('/no/such/dir')).to.throw('Log dir /no/such/dir is not found in the config.');
    await m.getOrCreate('t', 0);
    await m.getOrCreate('t', 1);
    expect(placement(m)).to.deep.equal(['t-0@d0', 't-1@d0']);
    const t0 = m.get('t', 0)!;
    expect(await m.moveLog('t', 0, b).catch((e: { errorName: string }) => e.errorName)).to.equal('KAFKA_STORAGE_ERROR');
    expect(await m.moveLog('t', 9, a).catch((e: { errorName: string }) => e.errorName)).to.equal('REPLICA_NOT_AVAILABLE');
    expect(await m.moveLog('t', 0, '/elsewhere').catch((e: { errorName: string }) => e.errorName)).to.equal('LOG_DIR_NOT_FOUND');
    await m.moveLog('t', 0, a); // already there
    expect(m.futureLogs()).to.deep.equal([]);
    expect(m.get('t', 0)).to.equal(t0);
  });

  it('moves a log to another dir while it takes appends: same batches and offsets, the old dir emptied, found there after a restart', async () => {
    const [a, b] = [dirs.next(), dirs.next()];
    let m = await openManager([a, b], { defaults: topicConfig({ 'segment.bytes': '6000' }) });
    const log = await m.getOrCreate('t', 0);
    expect(m.logDirOf(log)).to.equal(a);
    for (let i = 0; i < 40; i++) await log.append(makeBatch({ records: 3, payload: 400, epoch: 1 + Math.floor(i / 20), fill: i })).done;
    await log.deleteRecordsBefore(4);
    const oldDir = log.dir;
    const epochsBefore = log.leaderEpochEntries().slice();

    await m.moveLog('t', 0, b);
    // Appends go on during the copy, a few at a time (several per segment); every one of them must be in the moved log.
    let moved = false;
    let duringMove = 0;
    const appended: Array<Promise<void>> = [];
    const writer = (async () => {
      for (let i = 0; i < 400; i++) {
        for (let j = 0; j < 3; j++) appended.push(log.append(makeBatch({ records: 2, epoch: 2, fill: 100 + (i % 100) })).done);
        if (!moved) duringMove += 3;
        await new Promise((r) => setTimeout(r, 1));
      }
    })();
    await m.whenMoved('t', 0);
    moved = true;
    await writer;
    await Promise.all(appended);
    expect(duringMove, 'appends made while the log was being moved').to.be.greaterThan(0).and.below(appended.length);

    expect(m.get('t', 0), 'the same PartitionLog serves on').to.equal(log);
    expect(m.logDirOf(log)).to.equal(b);
    expect(log.logStartOffset).to.equal(4);
    expect(log.logEndOffset).to.equal(120 + 2 * appended.length);
    expect(epochsBefore.map((e) => e.epoch)).to.deep.equal([1, 2]);
    expect(log.leaderEpochEntries()).to.deep.equal(epochsBefore);
    const movedBatches = await contents(log);
    expect(movedBatches.map((b) => Number(b.split(':')[0])).slice(0, 3)).to.deep.equal([3, 6, 9]);
    expect(movedBatches).to.have.length(39 + appended.length);
    await m.deletionsSettled();
    expect(fs.existsSync(oldDir), 'the old copy is gone').to.equal(false);
    expect(fs.readdirSync(a).filter((f) => f.startsWith('t-0'))).to.deep.equal([]);
    await log.append(makeBatch({ records: 1 })).done;

    await closeManager(m);
    m = await openManager([a, b], { defaults: topicConfig({ 'segment.bytes': '6000' }) });
    expect(placement(m)).to.deep.equal(['t-0@d1']);
    const reopened = m.get('t', 0)!;
    expect(reopened.dir).to.equal(path.join(b, 't-0'));
    expect(reopened.logStartOffset).to.equal(4);
    expect((await contents(reopened)).slice(0, movedBatches.length)).to.deep.equal(movedBatches);
    expect(reopened.logEndOffset).to.equal(log.logEndOffset);
  });

  it('a truncation of the log during its move starts the copy over: the moved log is the truncated one', async () => {
    const [a, b] = [dirs.next(), dirs.next()];
    let rate = 1000;
    const m = await openManager([a, b], { moveBytesPerSecond: () => rate });
    const log = await m.getOrCreate('t', 0);
    for (let i = 0; i < 10; i++) await log.append(makeBatch({ records: 2, epoch: 1, fill: i })).done;
    await m.moveLog('t', 0, b);
    // The copy has passed the offset the log is about to be cut at, and is not done.
    await eventually(() => m.futureLogs()[0]?.logEndOffset >= 8, 'the copy to pass offset 8', 5000);
    expect(m.futureLogs()[0].logEndOffset).to.be.below(20);
    await log.truncateTo(6); // a follower cutting a divergent tail
    for (let i = 0; i < 4; i++) await log.append(makeBatch({ records: 1, epoch: 2, fill: 50 + i })).done;
    const expected = await contents(log);
    rate = Number.MAX_VALUE;
    await m.whenMoved('t', 0);
    expect(m.logDirOf(log)).to.equal(b);
    expect(await contents(log)).to.deep.equal(expected);
    expect(log.logEndOffset).to.equal(10);
    expect(log.leaderEpochEntries()).to.deep.equal([{ epoch: 1, startOffset: 0 }, { epoch: 2, startOffset: 6 }]);
  });

  it('a copy left by a move cut short is dropped at start-up: the current log stays', async () => {
    const [a, b] = [dirs.next(), dirs.next()];
    let m = await openManager([a, b], { moveBytesPerSecond: () => 200 });
    const log = await m.getOrCreate('t', 0);
    for (let i = 0; i < 20; i++) await log.append(makeBatch({ records: 1, fill: i })).done;
    const before = await contents(log);
    await m.moveLog('t', 0, b);
    expect(m.futureLogs().map((f) => path.dirname(f.dir))).to.deep.equal([b]);
    expect(path.basename(m.futureLogs()[0].dir)).to.match(/^t-0\.[0-9a-f]{32}-future$/);
    await closeManager(m);
    expect(fs.readdirSync(b).filter((f) => f.endsWith('-future'))).to.have.length(1);

    m = await openManager([a, b]);
    expect(placement(m)).to.deep.equal(['t-0@d0']);
    expect(await contents(m.get('t', 0)!)).to.deep.equal(before);
    await m.deletionsSettled();
    expect(fs.readdirSync(b).filter((f) => f.startsWith('t-0'))).to.deep.equal([]);
  });

  it('a lone -future dir at start-up is a finished move: it takes its partition name', async () => {
    const [a, b] = [dirs.next(), dirs.next()];
    let m = await openManager([a, b]);
    await (await m.getOrCreate('t', 0)).append(makeBatch({ records: 5 })).done;
    await closeManager(m);
    fs.renameSync(path.join(a, 't-0'), path.join(b, futureDirName('t', 0)));
    m = await openManager([a, b]);
    expect(placement(m)).to.deep.equal(['t-0@d1']);
    expect(m.get('t', 0)!.logEndOffset).to.equal(5);
    expect(fs.existsSync(path.join(b, 't-0'))).to.equal(true);
  });

  it('a move to another dir replaces the one in progress; deleting the topic cancels it', async () => {
    const [a, b, c] = [dirs.next(), dirs.next(), dirs.next()];
    const m = await openManager([a, b, c], { moveBytesPerSecond: () => 100 });
    const log = await m.getOrCreate('t', 0);
    for (let i = 0; i < 10; i++) await log.append(makeBatch({ records: 1 })).done;
    await m.moveLog('t', 0, b);
    await m.moveLog('t', 0, c);
    expect(m.futureLogs().map((f) => path.dirname(f.dir))).to.deep.equal([c]);
    // Requests racing (a copy still being created while the next one cancels it): one copy is left, and nothing else.
    await Promise.all([m.moveLog('t', 0, b), m.moveLog('t', 0, c), m.moveLog('t', 0, b)]);
    const [future, ...more] = m.futureLogs();
    expect(more).to.deep.equal([]);
    for (const d of [b, c]) {
      expect(fs.readdirSync(d).filter((f) => f.startsWith('t-0')), d).to.deep.equal(path.dirname(future.dir) === d ? [path.basename(future.dir)] : []);
    }
    await m.moveLog('t', 0, c);
    expect(m.futureLogs().map((f) => path.dirname(f.dir))).to.deep.equal([c]);
    expect(fs.readdirSync(b).filter((f) => f.startsWith('t-0'))).to.deep.equal([]);
    await m.deleteTopic('t');
    await m.deletionsSettled();
    expect(m.futureLogs()).to.deep.equal([]);
    for (const d of [a, b, c]) expect(fs.readdirSync(d).filter((f) => f.startsWith('t-0')), d).to.deep.equal([]);
  });
});
