// Retention: retention.ms by a segment's largest timestamp, retention.bytes, whole segments only, the log
// start offset moved (and checkpointed), files renamed first and removed after file.delete.delay.ms.
import { expect } from 'chai';
import * as fs from 'fs';
import * as path from 'path';
import { LogManager } from '../../src/storage/log-manager';
import { PartitionLog } from '../../src/storage/partition-log';
import { makeBatch, segmentFiles, silentLogger, tempDirs, topicConfig } from './helpers';

const DAY = 86_400_000;
const NOW = 100 * DAY;

describe('storage/retention', () => {
  const dirs = tempDirs('fjord-retention-');
  const open: PartitionLog[] = [];

  async function openLog(overrides: Record<string, string>, persistLogStartOffset?: () => Promise<void>): Promise<PartitionLog> {
    // 3 batches of 100 bytes per segment.
    const config = topicConfig({ 'segment.bytes': '300', 'file.delete.delay.ms': '50', ...overrides });
    const log = await PartitionLog.open({ dir: dirs.next(), topic: 'r', partition: 0, config, logger: silentLogger, now: () => NOW, persistLogStartOffset });
    open.push(log);
    return log;
  }

  afterEach(async () => {
    for (const log of open.splice(0)) await log.close();
  });

  /** One 100-byte batch per timestamp. */
  async function write(log: PartitionLog, timestamps: number[]): Promise<void> {
    for (const timestamp of timestamps) await log.append(makeBatch({ timestamp, payload: 39 })).done;
  }

  it('retention.ms deletes the segments whose newest record is older, keeps the rest, moves and persists the log start', async () => {
    let persisted = 0;
    const log = await openLog({ 'retention.ms': String(DAY) }, async () => void persisted++);
    // Segments: [0-2] 3 days old, [3-5] newest 2 days old, [6-8] newest 1 hour old, [9] active and fresh.
    await write(log, [NOW - 3 * DAY, NOW - 3 * DAY, NOW - 3 * DAY, NOW - 3 * DAY, NOW - 3 * DAY, NOW - 2 * DAY, NOW - 3 * DAY, NOW - 3 * DAY, NOW - 3600_000, NOW]);
    expect(log.segmentInfo().map((s) => s.baseOffset)).to.deep.equal([0, 3, 6, 9]);
    expect(await log.deleteOldSegments()).to.equal(2);
    expect(log.segmentInfo().map((s) => s.baseOffset)).to.deep.equal([6, 9]);
    expect(log.logStartOffset).to.equal(6);
    expect(persisted).to.equal(1);
    // Renamed at once, removed after file.delete.delay.ms.
    expect(segmentFiles(log.dir, '.log.deleted')).to.deep.equal(['00000000000000000000.log.deleted', '00000000000000000003.log.deleted']);
    await log.segmentDeletionsSettled();
    expect(segmentFiles(log.dir, '.deleted')).to.deep.equal([]);
    expect(segmentFiles(log.dir, '.log')).to.deep.equal(['00000000000000000006.log', '00000000000000000009.log']);
    const read = await log.readBytes(0, 1000);
    expect(read.outOfRange).to.equal(true);
    expect(await log.deleteOldSegments()).to.equal(0);
  });

  it('rolls and deletes the active segment too when everything has expired, and appends go on at the end offset', async () => {
    const log = await openLog({ 'retention.ms': String(DAY) });
    await write(log, [NOW - 3 * DAY, NOW - 3 * DAY, NOW - 3 * DAY, NOW - 2 * DAY]);
    expect(await log.deleteOldSegments()).to.equal(2);
    expect(log.segmentInfo()).to.deep.equal([{ baseOffset: 4, size: 0 }]);
    expect([log.logStartOffset, log.logEndOffset]).to.deep.equal([4, 4]);
    expect((await log.append(makeBatch()).done, log.logEndOffset)).to.equal(5);
    const read = await log.readBytes(4, 1000);
    expect(!read.outOfRange && read.firstOffset).to.equal(4);
  });

  it('retention.bytes deletes the oldest segments until the log fits, never the active one', async () => {
    const log = await openLog({ 'retention.bytes': '400' });
    await write(log, Array(10).fill(NOW)); // 1000 bytes: 300, 300, 300, 100 (active)
    expect(await log.deleteOldSegments()).to.equal(2);
    expect(log.segmentInfo().map((s) => s.baseOffset)).to.deep.equal([6, 9]);
    expect(log.size).to.equal(400);
    log.updateConfig(topicConfig({ 'segment.bytes': '300', 'retention.bytes': '1' }));
    expect(await log.deleteOldSegments()).to.equal(1);
    expect(log.segmentInfo().map((s) => s.baseOffset)).to.deep.equal([9]);
    expect(log.logStartOffset).to.equal(9);
  });

  it('applies to cleanup.policy=compact,delete and not to compact alone', async () => {
    const compact = await openLog({ 'retention.ms': String(DAY), 'cleanup.policy': 'compact' });
    const both = await openLog({ 'retention.ms': String(DAY), 'cleanup.policy': 'compact,delete' });
    for (const log of [compact, both]) await write(log, [NOW - 3 * DAY, NOW - 3 * DAY, NOW - 3 * DAY, NOW]);
    expect(await compact.deleteOldSegments()).to.equal(0);
    expect(await both.deleteOldSegments()).to.equal(1);
  });

  it('runs every log.retention.check.interval.ms from the LogManager, which checkpoints the new log start', async () => {
    const dataDir = dirs.next();
    const manager = await LogManager.open({ dataDir, defaults: topicConfig(), log: silentLogger, retentionCheckIntervalMs: 20, now: () => NOW });
    try {
      const log = await manager.getOrCreate('t', 0, topicConfig({ 'segment.bytes': '300', 'retention.ms': String(DAY), 'file.delete.delay.ms': '0' }));
      await write(log, [NOW - 2 * DAY, NOW - 2 * DAY, NOW - 2 * DAY, NOW]);
      const deadline = Date.now() + 5000;
      while (log.logStartOffset === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      expect(log.logStartOffset).to.equal(3);
      await new Promise((r) => setTimeout(r, 50));
      expect(fs.readFileSync(path.join(dataDir, 'log-start-offset-checkpoint'), 'utf8')).to.equal('0\n1\nt 0 3\n');
    } finally {
      await manager.close();
    }
  });
});
