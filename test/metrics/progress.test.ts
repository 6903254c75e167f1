// Progress of long work (src/metrics/progress.ts): the tracker's figures and logging on a fake clock,
// the start-up recovery of a data dir with several partitions, and a cleaning of a compacted log,
// each reporting to the end (with the cleaner's metrics of that cleaning).
import { expect } from 'chai';
import * as fs from 'fs';
import * as path from 'path';
import pino from 'pino';
import { Registry } from 'prom-client';
import { ProgressTracker } from '../../src/metrics/progress';
import { LogMetrics } from '../../src/metrics/state-instruments';
import { buildBatch } from '../../src/records/records';
import { LogCleaner } from '../../src/storage/log-cleaner';
import { CLEAN_SHUTDOWN_FILE, LogManager } from '../../src/storage/log-manager';
import { PartitionLog } from '../../src/storage/partition-log';
import { makeBatch, silentLogger, tempDirs, topicConfig } from '../storage/helpers';

/** A pino logger whose lines are kept, parsed. */
function capturingLogger(): { logger: pino.Logger; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino({ level: 'info' }, { write: (s: string) => void lines.push(JSON.parse(s) as Record<string, unknown>) });
  return { logger, lines };
}

const segmentBytes = (dir: string): number =>
  fs.readdirSync(dir).filter((f) => f.endsWith('.log')).reduce((n, f) => n + fs.statSync(path.join(dir, f)).size, 0);

describe('metrics/progress', function () {
  this.timeout(20000);
  const dirs = tempDirs('fjord-progress-');

  describe('tracker', () => {
    it('gives percent, average rate and ETA, logs at most every interval and at the end', () => {
      let now = 1_000_000;
      const tracker = new ProgressTracker({ logIntervalMs: 5000, now: () => now });
      const { logger, lines } = capturingLogger();
      const task = tracker.start({ kind: 'recovery', title: 'recovering 3 logs', total: 4 * 1048576, unit: 'bytes', logger });
      now += 1000;
      task.advance(1048576);
      expect(lines).to.have.length(0); // before the first interval
      expect(tracker.list()).to.deep.equal([{
        id: task.id, kind: 'recovery', title: 'recovering 3 logs', startedAtMs: 1_000_000, finishedAtMs: null,
        done: 1048576, total: 4 * 1048576, unit: 'bytes', percent: 25, ratePerSec: 1048576, etaMs: 3000,
      }]);
      now += 4000;
      task.advance(1048576);
      expect(lines).to.have.length(1);
      expect(lines[0]).to.include({ msg: 'recovering 3 logs: 50%', percent: 50, MBps: 0.4, etaMs: 5000 });
      now += 1000;
      task.advance(1048576); // within the interval of the last line: not logged
      expect(lines).to.have.length(1);
      task.advance(10 * 1048576); // never past the total
      expect(tracker.list()[0].done).to.equal(4 * 1048576);
      task.finish();
      expect(lines).to.have.length(2);
      expect(lines[1]).to.include({ msg: 'recovering 3 logs: finished', percent: 100, etaMs: 0, elapsedMs: 6000 });
      expect(tracker.list()[0]).to.include({ finishedAtMs: now, percent: 100, etaMs: 0 });
    });

    it('keeps finished tasks for a while, the most recent ones only; a short task logs nothing', () => {
      let now = 0;
      const tracker = new ProgressTracker({ logIntervalMs: 5000, keepFinishedMs: 60_000, maxFinished: 2, now: () => now });
      const { logger, lines } = capturingLogger();
      const running = tracker.start({ kind: 'cleaning', title: 'running', total: 10, unit: 'bytes', logger });
      for (const title of ['a', 'b', 'c']) tracker.start({ kind: 'cleaning', title, total: 10, unit: 'bytes', logger }).finish();
      expect(tracker.list().map((t) => t.title)).to.deep.equal(['running', 'b', 'c']);
      now += 60_001;
      expect(tracker.list().map((t) => t.title)).to.deep.equal(['running']);
      running.finish(false); // stopped where it was
      expect(tracker.list()[0]).to.include({ done: 0, percent: 0, finishedAtMs: now });
      expect(lines.map((l) => l.msg)).to.deep.equal(['running: stopped']);
    });
  });

  it('the start-up recovery of a data dir with several partitions reports its bytes to the end', async () => {
    const dataDir = dirs.next();
    const config = topicConfig({ 'segment.bytes': '2048' });
    const first = await LogManager.open({ dataDir, defaults: config, log: silentLogger });
    for (let p = 0; p < 5; p++) {
      const log = await first.getOrCreate('rec', p);
      for (let i = 0; i < 10 * (p + 1); i++) await log.append(makeBatch({ records: 2, payload: 100 })).done;
    }
    await first.close();
    fs.rmSync(path.join(dataDir, CLEAN_SHUTDOWN_FILE)); // a crash: the logs are recovered
    const onDisk = [0, 1, 2, 3, 4].reduce((n, p) => n + segmentBytes(path.join(dataDir, `rec-${p}`)), 0);

    const tracker = new ProgressTracker({ logIntervalMs: 0 });
    const { logger, lines } = capturingLogger();
    const second = await LogManager.open({ dataDir, defaults: config, log: logger, progress: tracker });
    try {
      const [task] = tracker.list();
      expect(tracker.list()).to.have.length(1);
      expect(task).to.include({ kind: 'recovery', title: 'recovering 5 logs after an unclean shutdown', unit: 'bytes', total: onDisk, done: onDisk, percent: 100, etaMs: 0 });
      expect(task.finishedAtMs).to.be.a('number');
      const progressLines = lines.filter((l) => l.task === task.id);
      // One line per log loaded (the interval is 0), percent rising to 100, then the end.
      expect(progressLines).to.have.length(6);
      const percents = progressLines.map((l) => l.percent as number);
      expect(percents).to.deep.equal([...percents].sort((a, b) => a - b));
      expect(progressLines.at(-1)).to.include({ msg: 'recovering 5 logs after an unclean shutdown: finished', percent: 100, done: onDisk });
    } finally {
      await second.close();
    }
    // After a clean shutdown the loading is no recovery.
    const again = new ProgressTracker();
    const third = await LogManager.open({ dataDir, defaults: config, log: silentLogger, progress: again });
    await third.close();
    expect(again.list()[0]).to.include({ title: 'loading 5 logs', done: onDisk, total: onDisk });
  });

  it('a cleaning reports its progress and the cleaner metrics of what it did', async () => {
    const clock = 1_700_000_100_000;
    const dir = dirs.next();
    const log = await PartitionLog.open({
      dir, topic: 'compacted', partition: 0, logger: silentLogger, now: () => clock,
      config: topicConfig({ 'cleanup.policy': 'compact', 'min.cleanable.dirty.ratio': '0.01', 'segment.ms': '100' }),
    });
    const registry = new Registry();
    const metrics = new LogMetrics(registry);
    const tracker = new ProgressTracker();
    try {
      // 6 rounds over 20 keys, one segment each (segment.ms), then one more record in the active segment.
      for (let round = 0; round < 7; round++) {
        const keys = round < 6 ? 20 : 1;
        const batch = await buildBatch({ records: Array.from({ length: keys }, (_, k) => ({ key: `k${k}`, value: `k${k}@${round}`, timestamp: clock - 60_000 + round * 1000 })) });
        await log.append(batch).done;
      }
      const dataDir = `${dir}-data`;
      fs.mkdirSync(dataDir);
      const cleaner = await LogCleaner.open({
        dataDir, logs: () => [log], logger: silentLogger, now: () => clock, metrics, progress: tracker,
        config: { backoffMs: 60_000, ioMaxBytesPerSecond: Infinity, dedupeBufferBytes: 1 << 20, ioBufferBytes: 4096, ioBufferLoadFactor: 0.9 },
      });
      const before = log.size;
      expect(await cleaner.cleanFilthiestLog()).to.equal(true);
      const [task] = tracker.list();
      expect(tracker.list()).to.have.length(1);
      expect(task).to.include({ kind: 'cleaning', title: 'cleaning compacted-0', unit: 'bytes', percent: 100 });
      expect(task.total).to.be.above(0);
      expect(task.done).to.equal(task.total);

      const value = async (name: string) => (await registry.getSingleMetric(name)!.get()).values[0].value;
      const read = await value('kafka_log_logcleaner_bytes_read_total');
      const written = await value('kafka_log_logcleaner_bytes_written_total');
      // It read the 6 inactive segments twice (the offset map, then the recopy) and kept one round of 20 keys.
      expect(read).to.be.above(before - log.segmentList().at(-1)!.size);
      expect(written).to.be.above(0).and.below(read / 2);
      expect(await value('kafka_log_logcleaner_cleaner_recopy_percent')).to.be.above(0).and.below(100);
      expect(await value('kafka_log_logcleaner_max_buffer_utilization_percent')).to.be.above(0);
      expect(await value('kafka_log_logcleanermanager_max_dirty_percent')).to.be.above(1);
      await cleaner.close();
    } finally {
      await log.close();
    }
  });
});
