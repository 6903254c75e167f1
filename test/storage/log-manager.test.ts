import { expect } from 'chai';
import * as fs from 'fs';
import * as path from 'path';
import {
  CLEAN_SHUTDOWN_FILE,
  LOG_START_OFFSET_CHECKPOINT_FILE,
  LogManager,
  type LogManagerOptions,
  RECOVERY_POINT_CHECKPOINT_FILE,
} from '../../src/storage/log-manager';
import { makeBatch, silentLogger, tempDirs, topicConfig } from './helpers';

describe('storage/log-manager', () => {
  const dirs = tempDirs('fjord-logmgr-');
  let managers: LogManager[] = [];

  afterEach(async () => {
    for (const m of managers) await m.close();
    managers = [];
  });

  async function openManager(dataDir: string, extra: Partial<LogManagerOptions> = {}): Promise<LogManager> {
    const m = await LogManager.open({ dataDir, defaults: topicConfig({ 'segment.bytes': '400' }), log: silentLogger, ...extra });
    managers.push(m);
    return m;
  }

  async function closeManager(m: LogManager): Promise<void> {
    await m.close();
    managers = managers.filter((x) => x !== m);
  }

  it('loads every <topic>-<partition> directory and ignores other entries', async () => {
    const dataDir = dirs.next();
    let m = await openManager(dataDir);
    for (const [t, p] of [['a', 0], ['a', 1], ['my-topic.v2', 3]] as const) {
      await (await m.getOrCreate(t, p)).append(makeBatch({ records: p + 1 })).done;
    }
    await closeManager(m);
    fs.writeFileSync(path.join(dataDir, 'meta.properties'), 'version=1\n');
    fs.mkdirSync(path.join(dataDir, 'not a partition'));
    m = await openManager(dataDir);
    expect(m.allLogs().map((l) => `${l.topic}/${l.partition}@${l.logEndOffset}`).sort()).to.deep.equal(['a/0@1', 'a/1@2', 'my-topic.v2/3@4']);
    expect(fs.existsSync(path.join(dataDir, 'a-0'))).to.equal(true);
  });

  it('writes the clean-shutdown marker and both checkpoints on close, and removes the marker on open', async () => {
    const dataDir = dirs.next();
    let m = await openManager(dataDir);
    const log = await m.getOrCreate('t', 0);
    for (let i = 0; i < 3; i++) await log.append(makeBatch({ records: 2, payload: 150 })).done;
    await log.deleteRecordsBefore(3);
    expect(fs.readFileSync(path.join(dataDir, LOG_START_OFFSET_CHECKPOINT_FILE), 'utf8')).to.equal('0\n1\nt 0 3\n');
    expect(fs.existsSync(path.join(dataDir, CLEAN_SHUTDOWN_FILE))).to.equal(false);
    await closeManager(m);
    expect(fs.existsSync(path.join(dataDir, CLEAN_SHUTDOWN_FILE))).to.equal(true);
    expect(fs.readFileSync(path.join(dataDir, RECOVERY_POINT_CHECKPOINT_FILE), 'utf8')).to.equal('0\n1\nt 0 6\n');

    m = await openManager(dataDir);
    expect(fs.existsSync(path.join(dataDir, CLEAN_SHUTDOWN_FILE))).to.equal(false);
    const again = m.get('t', 0)!;
    // The first segment (base 2) is still there: only the checkpoint keeps the start at 3.
    expect(again.segmentInfo()[0].baseOffset).to.equal(2);
    expect(again.logStartOffset).to.equal(3);
    expect(again.recoveryPoint).to.equal(6);
    expect((await again.read(2, 100)).outOfRange).to.equal(true);
  });

  it('deletes a topic: renames each partition directory, then removes it', async () => {
    const dataDir = dirs.next();
    const m = await openManager(dataDir);
    for (const p of [0, 1]) await (await m.getOrCreate('gone', p)).append(makeBatch({ records: 5 })).done;
    await (await m.getOrCreate('kept', 0)).append(makeBatch()).done;
    await m.checkpointRecoveryPoints();
    await m.deleteTopic('gone');
    expect(m.get('gone', 0)).to.equal(undefined);
    expect(fs.existsSync(path.join(dataDir, 'gone-0'))).to.equal(false);
    expect(fs.existsSync(path.join(dataDir, 'gone-1'))).to.equal(false);
    // Any directory still there is a renamed one, waiting for removal.
    for (const d of fs.readdirSync(dataDir).filter((n) => n.startsWith('gone'))) expect(d).to.match(/^gone-[01]\.[0-9a-f]{32}-delete$/);
    await m.deletionsSettled();
    expect(fs.readdirSync(dataDir).filter((d) => d.startsWith('gone'))).to.deep.equal([]);
    expect(fs.readFileSync(path.join(dataDir, RECOVERY_POINT_CHECKPOINT_FILE), 'utf8')).to.not.contain('gone');
    // Re-created, it starts empty.
    const fresh = await m.getOrCreate('gone', 0);
    expect(fresh.logEndOffset).to.equal(0);
    expect(m.get('kept', 0)!.logEndOffset).to.equal(1);
  });

  it('finishes an interrupted topic deletion at start-up', async () => {
    const dataDir = dirs.next();
    const pending = path.join(dataDir, `old-0.${'ab12'.repeat(8)}-delete`);
    fs.mkdirSync(pending, { recursive: true });
    fs.writeFileSync(path.join(pending, '00000000000000000000.log'), makeBatch());
    const m = await openManager(dataDir);
    expect(m.allLogs()).to.deep.equal([]);
    await m.deletionsSettled();
    expect(fs.existsSync(pending)).to.equal(false);
  });

  it('creates a partition once when asked concurrently, and applies config updates', async () => {
    const m = await openManager(dirs.next());
    const [a, b] = await Promise.all([m.getOrCreate('t', 0), m.getOrCreate('t', 0)]);
    expect(a).to.equal(b);
    m.updateConfig('t', topicConfig({ 'segment.bytes': '200' }));
    expect(a.config.segmentBytes).to.equal(200);
    await a.append(makeBatch({ payload: 120 })).done;
    await a.append(makeBatch({ payload: 120 })).done;
    expect(a.segmentInfo()).to.have.length(2);
    let refused = false;
    await m.getOrCreate('../evil', 0).catch(() => (refused = true));
    expect(refused).to.equal(true);
  });

  it('flushes a log once flush.ms has passed since its last flush', async () => {
    let now = 1_000_000;
    const m = await openManager(dirs.next(), { now: () => now, defaults: topicConfig({ 'flush.ms': '1000' }) });
    const log = await m.getOrCreate('t', 0);
    await log.append(makeBatch({ records: 3 })).done;
    await m.flushDueLogs();
    expect(log.recoveryPoint).to.equal(0);
    now += 1000;
    await m.flushDueLogs();
    expect(log.recoveryPoint).to.equal(3);
  });

  it('reports disk usage of the data dir', async () => {
    const m = await openManager(dirs.next());
    const usage = await m.diskUsage();
    expect(usage.totalBytes).to.be.greaterThan(0);
    expect(usage.usableBytes).to.be.at.most(usage.totalBytes);
  });
});
