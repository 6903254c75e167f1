/**
 * The log cleaner (Kafka's LogCleaner and LogCleanerManager, one cleaner
 * thread): picks the dirtiest compacted log and cleans it (compaction.ts), over
 * and over, sleeping log.cleaner.backoff.ms when none needs it. Off the
 * request path: it runs on timers and awaits I/O between chunks, throttled
 * to log.cleaner.io.max.bytes.per.second.
 *
 * Which log: among the logs with cleanup.policy compact (or compact,delete),
 * the one with the largest dirty ratio (bytes of the segments from the first
 * dirty offset to the first uncleanable one, over the bytes from the log
 * start to there) above min.cleanable.dirty.ratio, or any with dirty bytes
 * whose oldest dirty segment began more than max.compaction.lag.ms ago. The
 * first uncleanable offset is the lowest of the last stable offset, the
 * active segment's base offset, and the base offset of the first dirty
 * segment holding a record newer than min.compaction.lag.ms.
 *
 * Where the last cleaning of each log ended (its next first dirty offset) is
 * kept in `<dataDir>/cleaner-offset-checkpoint`, as Kafka's; an entry outside
 * [log start, log end] (a truncation, a re-created topic) counts as the log start.
 * A log whose cleaning fails (a corrupt segment) is left alone until a
 * restart, as Kafka marks it uncleanable.
 */
import * as path from 'path';
import { setImmediate as yieldToEventLoop, setTimeout as sleep } from 'timers/promises';
import type { Logger } from 'pino';
import type { ProgressTracker } from '../metrics/progress';
import type { LogMetrics } from '../metrics/state-instruments';
import { CheckpointFile, CorruptCheckpointError, checkpointNumber, readCheckpoint } from './checkpoint-file';
import { CleaningAbortedError, cleanLog, type CleaningResult } from './compaction';
import { partitionKey, type PartitionLog } from './partition-log';
import type { ProducerStateManager } from './producer-state';
import { isOutOfSpace } from '../common/durable-file';

export const CLEANER_OFFSET_CHECKPOINT_FILE = 'cleaner-offset-checkpoint';

/** The broker's log.cleaner.* settings. */
export interface CleanerConfig {
  backoffMs: number;
  /** log.cleaner.io.max.bytes.per.second (Infinity: no limit). */
  ioMaxBytesPerSecond: number;
  dedupeBufferBytes: number;
  ioBufferBytes: number;
  ioBufferLoadFactor: number;
}

export interface LogCleanerOptions {
  dataDir: string;
  config: CleanerConfig;
  /** Every log (the cleaner picks the compacted ones). */
  logs: () => PartitionLog[];
  /**
   * A partition's producer state, for its last stable offset and live
   * producers; a log it has none for yet (still loading) is not cleaned.
   * Without it (a LogManager on its own) logs are cleaned without.
   */
  producers?: (log: PartitionLog) => ProducerStateManager | undefined;
  logger: Logger;
  now?: () => number;
  /** Where the cleanings are measured (Kafka's LogCleaner metrics). */
  metrics?: LogMetrics;
  /** Where each cleaning reports its progress (bytes read of those it is expected to read). */
  progress?: ProgressTracker;
}

/** A log's cleanable range (Kafka's LogToClean). */
interface LogToClean {
  log: PartitionLog;
  firstDirtyOffset: number;
  firstUncleanableOffset: number;
  /** Bytes of the segments before the dirty ones, and of the dirty ones. */
  cleanBytes: number;
  cleanableBytes: number;
  ratio: number;
  /** max.compaction.lag.ms has passed for its oldest dirty segment. */
  overdue: boolean;
}

/** Kafka's Throttler: sleeps when the bytes seen this second exceed the rate; yields to the event loop otherwise. */
export class Throttler {
  private periodStart = performance.now();
  private bytes = 0;

  constructor(private readonly bytesPerSecond: number) {}

  async throttle(bytes: number): Promise<void> {
    this.bytes += bytes;
    const elapsed = performance.now() - this.periodStart;
    const due = (this.bytes / this.bytesPerSecond) * 1000;
    if (due > elapsed) await sleep(due - elapsed);
    else await yieldToEventLoop();
    if (elapsed >= 1000) {
      this.periodStart = performance.now();
      this.bytes = 0;
    }
  }
}

const key = (log: PartitionLog) => partitionKey(log.topic, log.partition);

export class LogCleaner {
  private readonly checkpoint: CheckpointFile;
  private readonly firstDirty = new Map<string, number>();
  private readonly uncleanable = new WeakSet<PartitionLog>();
  private readonly throttler: Throttler;
  private readonly now: () => number;
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  /** Passes run one at a time (the timer's and any caller's). */
  private passes: Promise<unknown> = Promise.resolve();
  private stopped = false;
  /** The log being cleaned now, if any. */
  private inProgress?: PartitionLog;

  private constructor(private readonly opts: LogCleanerOptions) {
    this.checkpoint = new CheckpointFile(path.join(opts.dataDir, CLEANER_OFFSET_CHECKPOINT_FILE));
    this.throttler = new Throttler(opts.config.ioMaxBytesPerSecond);
    this.now = opts.now ?? Date.now;
  }

  /** Reads the checkpoint; the first pass runs after log.cleaner.backoff.ms (call start()). */
  static async open(opts: LogCleanerOptions): Promise<LogCleaner> {
    const cleaner = new LogCleaner(opts);
    const file = cleaner.checkpoint.file;
    try {
      for (const [topic, partition, offset] of await readCheckpoint(file, 3)) {
        cleaner.firstDirty.set(partitionKey(topic, checkpointNumber(file, partition)), checkpointNumber(file, offset));
      }
    } catch (e) {
      if (!(e instanceof CorruptCheckpointError)) throw e;
      opts.logger.warn({ file, err: e.message }, 'ignoring a corrupt cleaner checkpoint: every compacted log is cleaned from its start');
    }
    return cleaner;
  }

  start(): void {
    this.schedule(this.opts.config.backoffMs);
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.runOnce().then((cleaned) => this.schedule(cleaned ? 0 : this.opts.config.backoffMs));
    }, delayMs);
    this.timer.unref();
  }

  private async runOnce(): Promise<boolean> {
    try {
      return await this.cleanFilthiestLog();
    } catch (e) {
      this.opts.logger.error({ err: e }, 'log cleaner pass failed');
      return false;
    }
  }

  /** Stops after the cleaning in progress (which stops at its next chunk if its log is closing). */
  async close(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  /** Cleans the dirtiest log that needs it; false when none does. */
  cleanFilthiestLog(): Promise<boolean> {
    const pass = this.passes.then(() => this.cleanOne());
    this.passes = pass.catch(() => undefined);
    return pass;
  }

  private async cleanOne(): Promise<boolean> {
    const now = this.now();
    const chosen = await this.grabFilthiestCompactedLog(now);
    if (!chosen) return false;
    const { log } = chosen;
    const started = performance.now();
    this.inProgress = log;
    // It reads the dirty segments to build its offset map, then recopies the clean and dirty ones.
    const progress = this.opts.progress?.start({
      kind: 'cleaning', unit: 'bytes', logger: this.opts.logger,
      title: `cleaning ${key(log)}`, total: chosen.cleanBytes + 2 * chosen.cleanableBytes,
    });
    let completed = false;
    try {
      const result = await cleanLog({
        log,
        firstDirtyOffset: chosen.firstDirtyOffset,
        firstUncleanableOffset: chosen.firstUncleanableOffset,
        producers: this.opts.producers?.(log),
        now,
        maxMapBytes: this.opts.config.dedupeBufferBytes,
        mapLoadFactor: this.opts.config.ioBufferLoadFactor,
        ioBufferBytes: this.opts.config.ioBufferBytes,
        throttle: (bytes) => {
          progress?.advance(bytes);
          return this.throttler.throttle(bytes);
        },
        stopping: () => this.stopped,
        logger: this.opts.logger,
      });
      const ms = performance.now() - started;
      completed = true;
      this.record(result, ms);
      if (result.endOffset === chosen.firstDirtyOffset) return false;
      if (result.complete) {
        this.firstDirty.set(key(log), result.endOffset);
        await this.checkpointOffsets();
      }
      this.opts.logger.info(
        {
          topic: log.topic, partition: log.partition, firstDirtyOffset: chosen.firstDirtyOffset, endOffset: result.endOffset, dirtyRatio: Number(chosen.ratio.toFixed(3)),
          segmentsBefore: result.segmentsBefore, segmentsAfter: result.segmentsAfter, bytesBefore: result.bytesBefore, bytesAfter: result.bytesAfter,
          recordsRead: result.recordsRead, recordsKept: result.recordsKept, complete: result.complete, ms: Math.round(ms),
          readMBps: Number((result.bytesRead / 1048576 / Math.max(ms / 1000, 0.001)).toFixed(1)),
        },
        'cleaned log',
      );
    } catch (e) {
      if (e instanceof CleaningAbortedError || !log.isOpen) return false; // closed, deleted or shutting down: nothing wrong with it
      if (isOutOfSpace(e)) {
        // The cleaned copy did not fit (it was dropped, the log is untouched): try again on a later pass.
        this.opts.logger.warn({ topic: log.topic, partition: log.partition, err: e }, 'cleaning failed for want of space; will retry');
        return false;
      }
      this.uncleanable.add(log);
      this.opts.logger.error({ topic: log.topic, partition: log.partition, err: e }, 'cleaning failed; the log is left uncleaned until restart');
    } finally {
      this.inProgress = undefined;
      progress?.finish(completed);
    }
    return true;
  }

  /** Kafka's LogCleaner metrics of the last cleaning, and the bytes it moved. */
  private record(result: CleaningResult, ms: number): void {
    const metrics = this.opts.metrics;
    if (!metrics) return;
    metrics.cleanerBytesRead.inc(result.bytesRead);
    metrics.cleanerBytesWritten.inc(result.bytesAfter);
    metrics.cleanerRecopyPercent.set(result.bytesBefore > 0 ? (100 * result.bytesAfter) / result.bytesBefore : 0);
    metrics.cleanerMaxCleanTimeSecs.set(ms / 1000);
    metrics.cleanerMaxBufferUtilizationPercent.set(100 * result.mapUtilization);
  }

  /** True while `log` is being cleaned (its files must not be swapped for another copy meanwhile). */
  isCleaning(log: PartitionLog): boolean {
    return this.inProgress === log;
  }

  /** Forgets a deleted partition's checkpoint entry, so a topic re-created with its name is cleaned from its start. */
  async forget(topic: string, partition: number): Promise<void> {
    if (this.firstDirty.delete(partitionKey(topic, partition))) await this.checkpointOffsets();
  }

  private checkpointOffsets(): Promise<void> {
    return this.checkpoint.write(() => {
      const entries: Array<[string, number, number]> = [];
      for (const log of this.opts.logs()) {
        const offset = this.firstDirty.get(key(log));
        if (offset !== undefined) entries.push([log.topic, log.partition, offset]);
      }
      return entries;
    });
  }

  /** Kafka's grabFilthiestCompactedLog (see the file comment). */
  private async grabFilthiestCompactedLog(now: number): Promise<LogToClean | undefined> {
    let best: LogToClean | undefined;
    let maxRatio = 0;
    for (const log of this.opts.logs()) {
      if (!log.config.compact || !log.isOpen || this.uncleanable.has(log)) continue;
      if (this.opts.producers && !this.opts.producers(log)) continue;
      const candidate = await this.cleanableRange(log, now);
      maxRatio = Math.max(maxRatio, candidate.ratio);
      if (candidate.cleanableBytes === 0) continue;
      if (!candidate.overdue && candidate.ratio <= log.config.minCleanableDirtyRatio) continue;
      if (!best || candidate.ratio > best.ratio) best = candidate;
    }
    this.opts.metrics?.cleanerMaxDirtyPercent.set(100 * maxRatio);
    return best;
  }

  /** Kafka's cleanableOffsets and LogToClean sizes for one log. */
  private async cleanableRange(log: PartitionLog, now: number): Promise<LogToClean> {
    const segments = log.segmentList();
    const checkpointed = this.firstDirty.get(key(log));
    const firstDirtyOffset = checkpointed !== undefined && checkpointed >= log.logStartOffset && checkpointed <= log.logEndOffset ? checkpointed : log.logStartOffset;
    const firstUnstable = this.opts.producers?.(log)?.firstUnstableOffset();
    let firstUncleanableOffset = Math.min(log.highWatermark, firstUnstable ?? Infinity, segments[segments.length - 1].baseOffset);
    const { minCompactionLagMs, maxCompactionLagMs } = log.config;
    let overdue = false;
    for (let i = 0; i < segments.length - 1; i++) {
      const s = segments[i];
      if (segments[i + 1].baseOffset <= firstDirtyOffset || s.baseOffset >= firstUncleanableOffset) continue;
      if (minCompactionLagMs > 0 && (await s.largestTimestamp()) > now - minCompactionLagMs) {
        firstUncleanableOffset = Math.min(firstUncleanableOffset, s.baseOffset);
        break;
      }
      if (!overdue && maxCompactionLagMs < now) {
        const first = await s.findBatch(s.baseOffset);
        overdue = first !== null && first.maxTimestamp >= 0 && first.maxTimestamp < now - maxCompactionLagMs;
      }
    }
    let cleanBytes = 0;
    let cleanableBytes = 0;
    for (let i = 0; i < segments.length; i++) {
      const s = segments[i];
      const nextBase = i + 1 < segments.length ? segments[i + 1].baseOffset : Infinity;
      if (s.baseOffset >= firstUncleanableOffset) break;
      if (nextBase <= firstDirtyOffset) cleanBytes += s.size;
      else cleanableBytes += s.size;
    }
    if (firstUncleanableOffset <= firstDirtyOffset) cleanableBytes = 0;
    const total = cleanBytes + cleanableBytes;
    return { log, firstDirtyOffset, firstUncleanableOffset, cleanBytes, cleanableBytes, ratio: total > 0 ? cleanableBytes / total : 0, overdue };
  }
}
