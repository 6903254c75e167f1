import { expect } from 'chai';
import * as fs from 'fs';
import * as path from 'path';
import type { TopicLogConfig } from '../../src/config/topic-config';
import { CLEAN_SHUTDOWN_FILE, LogManager, RECOVERY_POINT_CHECKPOINT_FILE } from '../../src/storage/log-manager';
import type { PartitionLog } from '../../src/storage/partition-log';
import { batchBaseOffsets, makeBatch, segmentFiles, silentLogger, tempDirs, topicConfig } from './helpers';

const SEG = (base: number, suffix: string) => String(base).padStart(20, '0') + suffix;

describe('storage/recovery', () => {
  const dirs = tempDirs('fjord-recovery-');
  let managers: LogManager[] = [];

  afterEach(async () => {
    for (const m of managers) await m.close();
    managers = [];
  });

  async function openManager(dataDir: string, config: TopicLogConfig): Promise<LogManager> {
    const m = await LogManager.open({ dataDir, defaults: config, log: silentLogger });
    managers.push(m);
    return m;
  }

  async function closeManager(m: LogManager): Promise<void> {
    await m.close();
    managers = managers.filter((x) => x !== m);
  }

  /**
   * A data dir with topic t partition 0: `batches` batches of 2 records (161 bytes each,
   * timestamps 1000, 1010, ...), closed cleanly. Returns the partition directory.
   */
  async function prepared(config: TopicLogConfig, batches: number): Promise<{ dataDir: string; dir: string }> {
    const dataDir = dirs.next();
    const m = await openManager(dataDir, config);
    const log = await m.getOrCreate('t', 0);
    for (let i = 0; i < batches; i++) log.append(makeBatch({ records: 2, payload: 100, timestamp: 1000 + i * 10, epoch: i < 3 ? 0 : 1 }));
    await closeManager(m);
    return { dataDir, dir: path.join(dataDir, 't-0') };
  }

  /** What a crash leaves: no clean-shutdown marker. */
  function crash(dataDir: string, { forgetRecoveryPoints = false } = {}): void {
    fs.rmSync(path.join(dataDir, CLEAN_SHUTDOWN_FILE));
    if (forgetRecoveryPoints) fs.rmSync(path.join(dataDir, RECOVERY_POINT_CHECKPOINT_FILE));
  }

  async function allOffsets(log: PartitionLog): Promise<number[]> {
    const r = await log.readBytes(log.logStartOffset, 1 << 24);
    if (r.outOfRange) throw new Error('out of range');
    return batchBaseOffsets(r.records);
  }

  it('cuts a torn tail (half a batch written) after a crash', async () => {
    const config = topicConfig();
    const { dataDir, dir } = await prepared(config, 4);
    const logFile = path.join(dir, SEG(0, '.log'));
    fs.appendFileSync(logFile, makeBatch({ records: 2, payload: 100, baseOffset: 8 }).subarray(0, 80));
    crash(dataDir);
    const log = (await openManager(dataDir, config)).get('t', 0)!;
    expect(log.logEndOffset).to.equal(8);
    expect(fs.statSync(logFile).size).to.equal(4 * 161);
    expect(await allOffsets(log)).to.deep.equal([0, 2, 4, 6]);
    expect(log.append(makeBatch()).baseOffset).to.equal(8);
  });

  it('cuts at a batch whose CRC does not match, and skips validation after a clean shutdown', async () => {
    const config = topicConfig();
    const { dataDir, dir } = await prepared(config, 4);
    const logFile = path.join(dir, SEG(0, '.log'));
    const bytes = fs.readFileSync(logFile);
    bytes[3 * 161 + 100] ^= 0xff; // a payload byte of the last batch
    fs.writeFileSync(logFile, bytes);

    // With the marker the log is trusted as it is (Kafka skips recovery).
    let m = await openManager(dataDir, config);
    expect(m.get('t', 0)!.logEndOffset).to.equal(8);
    expect(fs.existsSync(path.join(dataDir, CLEAN_SHUTDOWN_FILE))).to.equal(false);
    await closeManager(m);
    expect(fs.existsSync(path.join(dataDir, CLEAN_SHUTDOWN_FILE))).to.equal(true);

    crash(dataDir);
    m = await openManager(dataDir, config);
    const log = m.get('t', 0)!;
    expect(log.logEndOffset).to.equal(6);
    expect(fs.statSync(logFile).size).to.equal(3 * 161);
    expect(await allOffsets(log)).to.deep.equal([0, 2, 4]);
  });

  it('validates from the recovery point, and deletes every segment after a corrupt one', async () => {
    const config = topicConfig({ 'segment.bytes': '400' }); // 2 batches per segment
    const { dataDir, dir } = await prepared(config, 7);
    expect(segmentFiles(dir, '.log')).to.deep.equal([SEG(0, '.log'), SEG(4, '.log'), SEG(8, '.log'), SEG(12, '.log')]);
    const corruptFile = path.join(dir, SEG(4, '.log'));
    const bytes = fs.readFileSync(corruptFile);
    bytes[161 + 70] ^= 0x01; // second batch of segment 4 (offsets 6-7)
    fs.writeFileSync(corruptFile, bytes);

    // The recovery point (14, checkpointed at close) is in the last segment: segment 4 is not validated.
    crash(dataDir);
    let m = await openManager(dataDir, config);
    expect(m.get('t', 0)!.logEndOffset).to.equal(14);
    await closeManager(m);

    crash(dataDir, { forgetRecoveryPoints: true });
    m = await openManager(dataDir, config);
    const log = m.get('t', 0)!;
    expect(log.logEndOffset).to.equal(6);
    expect(segmentFiles(dir, '.log')).to.deep.equal([SEG(0, '.log'), SEG(4, '.log')]);
    expect(segmentFiles(dir, '.index')).to.deep.equal([SEG(0, '.index'), SEG(4, '.index')]);
    expect(await allOffsets(log)).to.deep.equal([0, 2, 4]);
    const next = log.append(makeBatch());
    expect(next.baseOffset).to.equal(6);
    await next.done;
  });

  it('re-derives leader epochs from the batches it validates', async () => {
    const config = topicConfig();
    const { dataDir, dir } = await prepared(config, 5);
    fs.rmSync(path.join(dir, 'leader-epoch-checkpoint'));
    crash(dataDir, { forgetRecoveryPoints: true });
    const log = (await openManager(dataDir, config)).get('t', 0)!;
    expect(log.leaderEpochEntries()).to.deep.equal([{ epoch: 0, startOffset: 0 }, { epoch: 1, startOffset: 6 }]);
  });

  it('rebuilds a deleted or corrupt index of an old segment on first use', async () => {
    const config = topicConfig({ 'segment.bytes': '1000', 'index.interval.bytes': '200' });
    const { dataDir, dir } = await prepared(config, 12); // 6 batches per segment: segments 0 and 12
    const indexFile = path.join(dir, SEG(0, '.index'));
    const timeIndexFile = path.join(dir, SEG(0, '.timeindex'));
    const original = fs.readFileSync(indexFile);
    const originalTime = fs.readFileSync(timeIndexFile);
    expect(original.length).to.equal(2 * 8); // entries at batches 2 and 4 (more than 200 bytes since the last)

    fs.rmSync(indexFile);
    let m = await openManager(dataDir, config);
    let read = await m.get('t', 0)!.readBytes(9, 1);
    if (read.outOfRange) return expect.fail('out of range');
    expect(read.firstOffset).to.equal(8);
    expect(fs.readFileSync(indexFile).equals(original)).to.equal(true);
    expect(fs.readFileSync(timeIndexFile).equals(originalTime)).to.equal(true);
    await closeManager(m);

    // Entries out of order, and one pointing past the log.
    const garbage = Buffer.alloc(16);
    garbage.writeInt32BE(9, 0);
    garbage.writeInt32BE(644, 4);
    garbage.writeInt32BE(3, 8);
    garbage.writeInt32BE(99_999, 12);
    fs.writeFileSync(indexFile, garbage);
    m = await openManager(dataDir, config);
    read = await m.get('t', 0)!.readBytes(5, 1);
    if (read.outOfRange) return expect.fail('out of range');
    expect(read.firstOffset).to.equal(4);
    expect(fs.readFileSync(indexFile).equals(original)).to.equal(true);
  });

  it('rebuilds a missing index of the active segment after a clean shutdown', async () => {
    const config = topicConfig({ 'index.interval.bytes': '200' });
    const { dataDir, dir } = await prepared(config, 6);
    const indexFile = path.join(dir, SEG(0, '.index'));
    const original = fs.readFileSync(indexFile);
    fs.rmSync(indexFile);
    const log = (await openManager(dataDir, config)).get('t', 0)!;
    expect(log.logEndOffset).to.equal(12);
    expect(fs.readFileSync(indexFile).equals(original)).to.equal(true);
    const r = await log.readBytes(7, 1);
    if (r.outOfRange) return expect.fail('out of range');
    expect(r.firstOffset).to.equal(6);
  });

  it('survives a crash in the middle of a roll (new empty segment without indexes)', async () => {
    const config = topicConfig({ 'segment.bytes': '400' });
    const { dataDir, dir } = await prepared(config, 4); // segments 0 and 4, LEO 8
    // The roll had created the next log file and nothing else; the previous segment's index was not written yet.
    fs.writeFileSync(path.join(dir, SEG(8, '.log')), Buffer.alloc(0));
    fs.rmSync(path.join(dir, SEG(4, '.index')));
    crash(dataDir);
    const m = await openManager(dataDir, config);
    const log = m.get('t', 0)!;
    expect(log.segmentInfo()).to.deep.equal([
      { baseOffset: 0, size: 322 },
      { baseOffset: 4, size: 322 },
      { baseOffset: 8, size: 0 },
    ]);
    expect(log.logEndOffset).to.equal(8);
    const r = log.append(makeBatch({ records: 2 }));
    expect(r.baseOffset).to.equal(8);
    await r.done;
    expect(await allOffsets(log)).to.deep.equal([0, 2, 4, 6, 8]);
    expect(fs.existsSync(path.join(dir, SEG(8, '.index')))).to.equal(true);
    expect(fs.existsSync(path.join(dir, SEG(4, '.index')))).to.equal(true);
  });

  it('removes leftovers: orphan indexes, .deleted and .tmp files', async () => {
    const config = topicConfig();
    const { dataDir, dir } = await prepared(config, 2);
    fs.writeFileSync(path.join(dir, SEG(50, '.index')), Buffer.alloc(8));
    fs.writeFileSync(path.join(dir, SEG(60, '.log.deleted')), Buffer.alloc(8));
    fs.writeFileSync(path.join(dir, 'leader-epoch-checkpoint.tmp'), 'x');
    const log = (await openManager(dataDir, config)).get('t', 0)!;
    expect(log.logEndOffset).to.equal(4);
    expect(fs.readdirSync(dir).sort()).to.deep.equal([SEG(0, '.index'), SEG(0, '.log'), SEG(0, '.timeindex'), 'leader-epoch-checkpoint']);
  });
});
