/**
 * The state of one partition's log (Kafka's LocalLog): its segments, its
 * offsets, its leader epochs, whether it is open or offline, and the flush
 * that moves its recovery point. The parts of a PartitionLog (log-loader.ts,
 * log-writer.ts, log-reader.ts, log-deletion.ts) all work on this one object;
 * it holds no logic of theirs.
 *
 * Offsets. `logEndOffset` is the next offset to assign; `highWatermark` is
 * the end of what has been written (Fjord has one replica, so a write is
 * committed once it is in the file). Readers are bounded by the high
 * watermark, so they never see bytes not yet written. `logStartOffset` is
 * the first offset readable (DeleteRecords and retention move it);
 * `recoveryPoint` is the offset below which everything is fsynced.
 */
import type { Logger } from 'pino';
import type { LogMetrics } from '../metrics/state-instruments';
import type { TopicLogConfig } from '../config/topic-config';
import { fsyncDirectory } from './checkpoint-file';
import { StorageError } from './errors';
import type { LeaderEpochCache } from './leader-epoch-cache';
import { isOutOfSpace } from '../common/durable-file';
import { LogSegment, type SegmentSettings } from './log-segment';

/** What a partition log is, whatever state it is found in. */
export interface LocalLogOptions {
  dir: string;
  topic: string;
  partition: number;
  config: TopicLogConfig;
  logger: Logger;
  /** Makes a moved log start offset durable (LogManager writes its checkpoint). */
  persistLogStartOffset?: () => Promise<void>;
  /** Wall clock in ms (tests replace it). */
  now?: () => number;
  /** Where flush times are recorded (the broker's). */
  metrics?: LogMetrics;
}

function rollJitter(config: TopicLogConfig): number {
  const max = Math.min(config.segmentJitterMs, config.segmentMs);
  return max > 0 ? Math.floor(Math.random() * max) : 0;
}

export class LocalLog {
  readonly topic: string;
  readonly partition: number;
  readonly dir: string;
  /** New settings apply from the next append (segment sizes, flushing) or the next segment (index settings). */
  config: TopicLogConfig;
  readonly logger: Logger;
  readonly now: () => number;
  readonly persistLogStartOffset?: () => Promise<void>;
  private readonly metrics?: LogMetrics;

  /** Ordered by base offset; the last one is active (takes appends). */
  segments: LogSegment[] = [];
  logEndOffset = 0;
  highWatermark = 0;
  /**
   * Where the high watermark is in the files, updated with it: a segment's
   * size grows a moment before the high watermark moves (and a truncation
   * lowers the high watermark before the file is cut), so readers stop here.
   * Undefined while a truncation is pending.
   */
  hwMark?: { segment: LogSegment; position: number };
  logStartOffset = 0;
  recoveryPoint = 0;
  /** Set when the log went offline for good (see log-writer.ts). */
  failure?: StorageError;
  state: 'open' | 'closing' | 'closed' = 'open';
  /** A segment file was created or removed since the last directory fsync. */
  dirChanged = false;
  /** Bumped by truncateTo, so that work started before a truncation (a flush, a write) does not move offsets past it. */
  truncations = 0;
  lastFlushTime: number;
  /** The flushes, one after another. */
  flushChain: Promise<void> = Promise.resolve();

  constructor(
    opts: LocalLogOptions,
    readonly epochs: LeaderEpochCache,
  ) {
    this.topic = opts.topic;
    this.partition = opts.partition;
    this.dir = opts.dir;
    this.config = opts.config;
    this.logger = opts.logger;
    this.now = opts.now ?? Date.now;
    this.persistLogStartOffset = opts.persistLogStartOffset;
    this.metrics = opts.metrics;
    this.lastFlushTime = this.now();
  }

  get activeSegment(): LogSegment {
    return this.segments[this.segments.length - 1];
  }

  /** Index of the last segment whose base offset is <= offset, or -1. */
  floorSegmentIndex(offset: number): number {
    let lo = 0;
    let hi = this.segments.length - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if (this.segments[mid].baseOffset <= offset) {
        found = mid;
        lo = mid + 1;
      } else {
        hi = mid - 1;
      }
    }
    return found;
  }

  /** Bytes in all segments. */
  get size(): number {
    let total = 0;
    for (const s of this.segments) total += s.size;
    return total;
  }

  /** False once closing or offline. */
  get isOpen(): boolean {
    return this.state === 'open' && !this.failure;
  }

  segmentSettings(): SegmentSettings {
    return {
      indexIntervalBytes: this.config.indexIntervalBytes,
      segmentIndexBytes: this.config.segmentIndexBytes,
      rollJitterMs: rollJitter(this.config),
    };
  }

  /** A new, empty segment at baseOffset with this log's settings (not yet in `segments`); fileSuffix for the cleaner's. */
  createSegment(baseOffset: number, fileSuffix?: string): Promise<LogSegment> {
    return LogSegment.create(this.dir, baseOffset, this.segmentSettings(), this.logger, this.now(), fileSuffix);
  }

  /** Removes a segment's files at once (no reader can hold it: loading, or an empty segment replaced by a roll). */
  async deleteSegmentNow(segment: LogSegment): Promise<void> {
    await segment.markDeleted();
    await segment.deleteFiles();
    this.dirChanged = true;
  }

  ioError(what: string, e: unknown): StorageError {
    return e instanceof StorageError ? e : new StorageError('KAFKA_STORAGE_ERROR', `${what} ${this.dir} failed: ${(e as Error).message}`, { cause: e });
  }

  goOffline(e: unknown): void {
    if (this.failure) return;
    this.failure = this.ioError('I/O in log', e);
    this.logger.error({ dir: this.dir, err: e }, 'log is offline after an I/O error');
  }

  // ---------------------------------------------------------------- flush

  /** fsyncs the segments up to `upTo` after any flush already running, and moves the recovery point. */
  flushUpTo(upTo: number): Promise<void> {
    const run = this.flushChain.then(() => this.doFlush(upTo));
    this.flushChain = run.catch(() => undefined);
    return run;
  }

  /**
   * Without space, a flush could not write index tails: nothing is lost (the recovery point stays,
   * so a crash rebuilds them). A failed fsync of the log may have lost data: offline.
   */
  flushFailed(e: unknown): void {
    if (isOutOfSpace(e)) this.logger.warn({ dir: this.dir, err: e }, 'flush failed for want of space; the recovery point stays');
    else this.goOffline(e);
  }

  private async doFlush(upTo: number): Promise<void> {
    if (upTo <= this.recoveryPoint && !this.dirChanged) return;
    const started = performance.now();
    const truncations = this.truncations;
    const segments = this.segments.slice();
    for (let i = 0; i < segments.length; i++) {
      if (segments[i].baseOffset >= upTo) break;
      if (i + 1 < segments.length && segments[i + 1].baseOffset <= this.recoveryPoint) continue; // already flushed
      await segments[i].flush();
    }
    await this.epochs.persisted();
    if (this.dirChanged) {
      this.dirChanged = false;
      await fsyncDirectory(this.dir);
    }
    if (truncations === this.truncations) this.recoveryPoint = Math.max(this.recoveryPoint, Math.min(upTo, this.highWatermark));
    this.lastFlushTime = this.now();
    this.metrics?.flushTimeMs.observe(performance.now() - started);
  }
}
