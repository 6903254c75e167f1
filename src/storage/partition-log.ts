/**
 * The log of one partition (Kafka's UnifiedLog + LocalLog + LogLoader, for a
 * single replica): segments ordered by base offset in `<dataDir>/<topic>-<partition>/`,
 * the last one active.
 *
 * Offsets. `logEndOffset` is the next offset to assign; `highWatermark` is
 * the end of what has been written (Fjord has one replica, so a write is
 * committed once it is in the file). Readers are bounded by the high
 * watermark, so they never see bytes not yet written. `logStartOffset` is
 * the first offset readable (DeleteRecords moves it); `recoveryPoint` is
 * the offset below which everything is fsynced.
 *
 * Appends. `append()` assigns offsets synchronously, in call order: it
 * stamps each batch's baseOffset (outside the CRC) and returns the base and
 * last offset at once; the file writes run in that same order in one writer
 * loop, and `done` settles when the write (and any fsync flush.messages
 * asks for) completes. Appends queued while a write is running are
 * coalesced into one positional writev. Roll decisions happen in the writer,
 * against the real segment. Truncation is queued in the same loop, so it is
 * ordered with appends.
 *
 * A failed write (a full disk: ENOSPC, a short write, any I/O error while
 * appending). An append is acknowledged only once every byte of it is in the
 * file. When a write fails, nothing of it stays: the active segment is cut
 * back to its last whole write, the failed appends and every append queued
 * behind them (their offsets follow the failed ones) fail with
 * KAFKA_STORAGE_ERROR, and the log end offset goes back to the high
 * watermark. No client was told of those offsets (a produce is answered only
 * once its write is done, a retried batch only once the first copy's is) and
 * no reader saw them (reads stop at the high watermark), so the next append
 * takes them again and no acknowledged offset is ever reused. The log then
 * refuses appends until resumeWrites(): the ReplicaManager first rebuilds the
 * partition's producer state, which had recorded the failed batches. Reads
 * carry on throughout. Kafka instead marks the whole log dir offline until a
 * restart; Fjord keeps it online because the cut above leaves the log exactly
 * as a restart's recovery would (and with the same producer state), so
 * appends work again as soon as space is freed. Only when the cut itself, an
 * fsync of the log, or another operation fails (other than for want of
 * space) does the log go offline for good (KAFKA_STORAGE_ERROR for reads and
 * writes until a restart), as Kafka's does.
 *
 * Durability (what survives what):
 *  - A completed write is in the OS page cache: it survives a crash of the
 *    broker process (kill -9, an exception), since the kernel writes it out.
 *  - Only fsynced data survives a power loss or kernel crash. By default
 *    (flush.messages and flush.ms unset, as in Kafka) data is fsynced when its
 *    segment rolls, on clean shutdown, and never on the append path: Kafka
 *    relies on replication for that, and Fjord has no replicas, so set
 *    flush.messages=1 for acknowledged-means-on-disk (each append, or each
 *    coalesced group of appends, then waits for an fsync), or flush.ms for a
 *    bounded loss window.
 *  - After a crash, recovery validates everything after the recovery point
 *    and cuts the log at the first torn or corrupt batch, so the log is always
 *    a clean prefix of what was written.
 *  - DeleteRecords resolves once the new log start offset is durable.
 *
 * Transactions. The log stores markers like any batch; what it adds is the
 * aborted-transaction index: append() takes the aborted transaction an ABORT
 * marker ends and records it in the segment the marker lands in, right after
 * the write and before the high watermark covers it, so a reader bounded by
 * the last stable offset always finds the abort of the data it returns
 * (abortedTransactions()). Which transactions are open, and so the last stable
 * offset, is producer state (producer-state.ts; the ReplicaManager combines it
 * with the high watermark). After a crash, recovery cuts each recovered
 * segment's transaction index with the log, and the producer-state replay
 * puts back the entries of the replayed range (restoreAbortedTxn).
 *
 * Cleanup. deleteOldSegments() is retention (retention.ms, retention.bytes:
 * whole segments, the log start offset moves, files renamed then removed
 * after file.delete.delay.ms, as DeleteRecords does); the LogManager calls it
 * every log.retention.check.interval.ms. The log cleaner (compaction.ts) writes
 * compacted segments beside the log and hands them to replaceSegments(),
 * which swaps them in crash-safely; open() finishes or undoes a swap a crash
 * interrupted (completeSwaps). Appends and reads never wait for the cleaner.
 *
 * Not done (yet): preallocate (ignored: segments grow as written), unloading
 * the in-memory indexes of idle old segments, the cleaner's legacy (pre-v2)
 * tombstone rules (Fjord stores only v2 batches).
 */
import * as fs from 'fs';
import * as path from 'path';
import type { Logger } from 'pino';
import type { TopicLogConfig } from '../config/topic-config';
import {
  BATCH_HEADER_SIZE,
  MAGIC_V2,
  batchLastOffsetDelta,
  batchLeaderEpoch,
  batchMagic,
  batchMaxTimestamp,
  batchSize,
  setBatchBaseOffset,
} from './batch-header';
import { CorruptCheckpointError, fsyncDirectory } from './checkpoint-file';
import { StorageError } from './errors';
import { LEADER_EPOCH_CHECKPOINT_FILE, LeaderEpochCache } from './leader-epoch-cache';
import { readFully } from './file-io';
import { isOutOfSpace } from '../common/durable-file';
import { CLEANED_FILE_SUFFIX, DELETED_FILE_SUFFIX, LogSegment, SWAP_FILE_SUFFIX, SegmentSettings } from './log-segment';
import { NO_TIMESTAMP } from './time-index';
import type { AbortedTxn } from './transaction-index';

type FileHandle = fs.promises.FileHandle;

/** Most appends written by one writev. */
const MAX_COALESCED_APPENDS = 256;

export interface PartitionLogOptions {
  dir: string;
  topic: string;
  partition: number;
  config: TopicLogConfig;
  logger: Logger;
  /** Offsets below this were fsynced (recovery-point checkpoint). Default 0: validate everything. */
  recoveryPoint?: number;
  /** From the log-start-offset checkpoint. Default: the first segment's base offset. */
  logStartOffset?: number;
  /** The data dir had the clean-shutdown marker: nothing to validate. */
  hadCleanShutdown?: boolean;
  /** Makes a moved log start offset durable (LogManager writes its checkpoint). */
  persistLogStartOffset?: () => Promise<void>;
  /** Wall clock in ms (tests replace it). */
  now?: () => number;
}

export interface AppendResult {
  baseOffset: number;
  lastOffset: number;
  /** Settles when the batches are in the file (and fsynced, if flush.messages asked for it). */
  done: Promise<void>;
}

export interface ReadOptions {
  /** Return the first batch even if it is larger than maxBytes (KIP-74). Default true. */
  minOneMessage?: boolean;
  /** Read only batches below this offset (the last stable offset); capped at the high watermark. */
  maxOffset?: number;
  /** readBytes: where the bytes go (a pooled buffer, see BufferPool); default Buffer.allocUnsafe. */
  allocate?: (size: number) => Buffer;
}

/** A byte range of a segment file. The handle may be closed once its segment is deleted; prefer readBytes. */
export interface FileRange {
  file: FileHandle;
  position: number;
  length: number;
}

interface OffsetsSnapshot {
  highWatermark: number;
  logStartOffset: number;
  logEndOffset: number;
}

export type ReadResult =
  | (OffsetsSnapshot & { outOfRange: true })
  | (OffsetsSnapshot & {
      outOfRange: false;
      /** Base offset of the first batch returned (may be below the fetch offset); -1 when nothing is returned. */
      firstOffset: number;
      ranges: FileRange[];
      size: number;
    });

export type ReadBytesResult =
  | (OffsetsSnapshot & { outOfRange: true })
  | (OffsetsSnapshot & { outOfRange: false; firstOffset: number; records: Buffer });

/** A batch found by timestamp (ListOffsets); the caller finds the record in it. */
export interface TimestampLookup {
  baseOffset: number;
  lastOffset: number;
  maxTimestamp: number;
  /** The whole batch, as stored. */
  batch: Buffer;
}

interface PendingAppend {
  kind: 'append';
  batches: Buffer;
  baseOffset: number;
  nextOffset: number;
  maxTimestamp: number;
  /** The transaction an ABORT marker in these batches ends, for the segment's transaction index. */
  abortedTxn?: AbortedTxn;
  /** PartitionLog.truncations when the offsets were assigned. */
  truncations: number;
  resolve: () => void;
  reject: (e: unknown) => void;
}

interface PendingTask {
  kind: 'task';
  run: () => Promise<void>;
  resolve: () => void;
  reject: (e: unknown) => void;
}

interface Retiring {
  segment: LogSegment;
  timer?: NodeJS.Timeout;
  done: Promise<void>;
  finish: () => void;
}

const SEGMENT_FILE_RE = /^(\d{20})\.(log|index|timeindex|txnindex)$/;
const SWAP_LOG_FILE_RE = /^(\d{20})\.log\.swap$/;

/** Kafka's LogSegment.largestTimestamp: the largest record timestamp, or the file's modification time when there is none. */
async function largestTimestampOrFileTime(segment: LogSegment): Promise<number> {
  const ts = await segment.largestTimestamp();
  return ts >= 0 ? ts : (await segment.fileHandle.stat()).mtimeMs;
}

function rollJitter(config: TopicLogConfig): number {
  const max = Math.min(config.segmentJitterMs, config.segmentMs);
  return max > 0 ? Math.floor(Math.random() * max) : 0;
}

export class PartitionLog {
  readonly topic: string;
  readonly partition: number;
  readonly dir: string;

  private configValue: TopicLogConfig;
  private readonly logger: Logger;
  private readonly now: () => number;
  private readonly persistLogStartOffset?: () => Promise<void>;

  private segments: LogSegment[] = [];
  private nextOffset = 0;
  private hw = 0;
  /**
   * Where the high watermark is in the files, updated with it: a segment's
   * size grows a moment before the high watermark moves (and a truncation
   * lowers the high watermark before the file is cut), so readers stop here.
   * Undefined while a truncation is pending.
   */
  private hwMark?: { segment: LogSegment; position: number };
  private startOffset = 0;
  private recoveryPointValue = 0;
  private readonly epochs: LeaderEpochCache;

  private queue: Array<PendingAppend | PendingTask> = [];
  private writerRunning = false;
  private idleWaiters: Array<() => void> = [];
  /** Set when the log went offline for good (see the file comment). */
  private failure?: StorageError;
  /** Set after a failed write, until resumeWrites(). */
  private writesRefused?: StorageError;
  /** The latest append's `done`: a retried batch still being written waits for it. */
  private lastAppendDone: Promise<void> = Promise.resolve();
  private state: 'open' | 'closing' | 'closed' = 'open';

  private flushChain: Promise<void> = Promise.resolve();
  private lastFlushTimeValue: number;
  /** A segment file was created or removed since the last directory fsync. */
  private dirChanged = false;
  /** Bumped by truncateTo, so a flush that started before it does not move the recovery point. */
  private truncations = 0;
  private retiring = new Set<Retiring>();

  private constructor(opts: PartitionLogOptions, epochs: LeaderEpochCache) {
    this.topic = opts.topic;
    this.partition = opts.partition;
    this.dir = opts.dir;
    this.configValue = opts.config;
    this.logger = opts.logger;
    this.now = opts.now ?? Date.now;
    this.persistLogStartOffset = opts.persistLogStartOffset;
    this.epochs = epochs;
    this.lastFlushTimeValue = this.now();
  }

  // ---------------------------------------------------------------- loading

  /**
   * Opens (or creates) the log in opts.dir, as Kafka's LogLoader does:
   * removes leftovers of interrupted deletions and orphan index files; after
   * an unclean shutdown validates every segment from the one holding the
   * recovery point on (see LogSegment.recover), truncating at the first bad
   * batch and deleting every later segment; rebuilds missing or inconsistent
   * indexes (old segments: on first use).
   */
  static async open(opts: PartitionLogOptions): Promise<PartitionLog> {
    await fs.promises.mkdir(opts.dir, { recursive: true });
    let epochs: LeaderEpochCache;
    try {
      epochs = await LeaderEpochCache.load(opts.dir);
    } catch (e) {
      if (!(e instanceof CorruptCheckpointError)) throw e;
      opts.logger.warn({ dir: opts.dir, err: e.message }, `ignoring a corrupt ${LEADER_EPOCH_CHECKPOINT_FILE}`);
      epochs = LeaderEpochCache.empty(opts.dir);
    }
    const log = new PartitionLog(opts, epochs);
    try {
      await log.load(opts);
    } catch (e) {
      await Promise.all(log.segments.map((s) => s.closeWithoutWriting().catch(() => undefined)));
      throw e;
    }
    return log;
  }

  private async load(opts: PartitionLogOptions): Promise<void> {
    await this.completeSwaps();
    const names = await fs.promises.readdir(this.dir);
    const logs = new Set<number>();
    const indexes: Array<[number, string]> = [];
    for (const name of names) {
      if (name.endsWith(DELETED_FILE_SUFFIX) || name.endsWith('.tmp')) {
        await fs.promises.rm(path.join(this.dir, name), { force: true });
        continue;
      }
      const m = SEGMENT_FILE_RE.exec(name);
      if (!m) continue;
      if (m[2] === 'log') logs.add(Number(m[1]));
      else indexes.push([Number(m[1]), name]);
    }
    for (const [base, name] of indexes) {
      if (!logs.has(base)) {
        this.logger.info({ dir: this.dir, file: name }, 'removing an index file without its log file');
        await fs.promises.rm(path.join(this.dir, name), { force: true });
      }
    }

    const now = this.now();
    for (const base of [...logs].sort((a, b) => a - b)) {
      this.segments.push(await LogSegment.open(this.dir, base, this.segmentSettings(), this.logger, now));
    }

    const checkpointedStart = opts.logStartOffset ?? 0;
    const recoveryPoint = opts.recoveryPoint ?? 0;
    if (!opts.hadCleanShutdown) await this.recoverUnflushed(recoveryPoint);

    if (this.segments.length === 0) {
      this.segments.push(await LogSegment.create(this.dir, checkpointedStart, this.segmentSettings(), this.logger, now));
      this.dirChanged = true;
    }
    // After recovery the last segment is ready; after a clean shutdown read its tail (an inconsistent index is rebuilt).
    const active = this.activeSegment;
    if (!active.indexesLoaded) await active.loadAsActive();
    this.nextOffset = active.nextOffset;

    this.startOffset = Math.max(checkpointedStart, this.segments[0].baseOffset);
    if (this.startOffset > this.nextOffset) {
      // The durable start offset is past the data that survived: start over there (Kafka does the same).
      this.logger.warn({ dir: this.dir, logStartOffset: this.startOffset, logEndOffset: this.nextOffset }, 'log start offset is past the log end; emptying the log');
      for (const s of this.segments) await this.deleteSegmentNow(s);
      this.segments = [await LogSegment.create(this.dir, this.startOffset, this.segmentSettings(), this.logger, now)];
      this.nextOffset = this.startOffset;
    }
    while (this.segments.length > 1 && this.segments[1].baseOffset <= this.startOffset) await this.deleteSegmentNow(this.segments.shift()!);

    this.hw = this.nextOffset;
    this.hwMark = { segment: this.activeSegment, position: this.activeSegment.size };
    this.recoveryPointValue = opts.hadCleanShutdown ? this.nextOffset : Math.min(recoveryPoint, this.nextOffset);
    this.epochs.truncateFromEnd(this.nextOffset);
    this.epochs.truncateFromStart(this.startOffset);
  }

  /**
   * Finishes or undoes a segment replacement that a crash interrupted (Kafka's
   * LogLoader does the same with the cleaner's files). replaceSegments renames
   * the cleaned files `.cleaned` -> `.swap`, the log file last; then retires
   * the old segments (their log files last); then drops the `.swap` suffix,
   * the log file last. So without `<base>.log.swap` the cleaned segment was
   * never complete: its files go and the old segments are untouched. With it,
   * the cleaned segment is whole and fsynced: the old segments it covers go
   * (for `<base>` itself only while `<base>.log` is still there: once that is
   * gone, the `<base>` index files beside it are the cleaned ones) and it is
   * renamed into place.
   */
  private async completeSwaps(): Promise<void> {
    const names = await fs.promises.readdir(this.dir);
    const swaps = names.map((n) => SWAP_LOG_FILE_RE.exec(n)).filter((m) => m !== null).map((m) => Number(m[1]));
    for (const name of names) {
      const unfinished = name.endsWith(SWAP_FILE_SUFFIX) && !swaps.includes(Number(name.slice(0, 20)));
      if (name.endsWith(CLEANED_FILE_SUFFIX) || unfinished) await fs.promises.rm(path.join(this.dir, name), { force: true });
    }
    for (const base of swaps.sort((a, b) => a - b)) {
      const swap = await LogSegment.open(this.dir, base, this.segmentSettings(), this.logger, this.now(), SWAP_FILE_SUFFIX);
      await swap.recover();
      const files = await fs.promises.readdir(this.dir);
      const oldFirstStillThere = files.includes(path.basename(swap.logPath, SWAP_FILE_SUFFIX));
      for (const name of files) {
        const m = SEGMENT_FILE_RE.exec(name);
        if (!m) continue;
        const b = Number(m[1]);
        if ((b > base && b < swap.nextOffset) || (b === base && oldFirstStillThere)) await fs.promises.rm(path.join(this.dir, name), { force: true });
      }
      await swap.changeFileSuffix('');
      await swap.close();
      this.logger.info({ dir: this.dir, segment: base, nextOffset: swap.nextOffset }, 'completed an interrupted segment swap');
    }
    if (swaps.length > 0) await fsyncDirectory(this.dir);
  }

  /** Validates the segments from the one containing the recovery point on; cuts at the first bad batch. */
  private async recoverUnflushed(recoveryPoint: number): Promise<void> {
    const first = Math.max(0, this.floorSegmentIndex(recoveryPoint));
    for (let i = first; i < this.segments.length; i++) {
      const segment = this.segments[i];
      const started = process.hrtime.bigint();
      const result = await segment.recover(this.epochs);
      this.logger.info(
        { dir: this.dir, segment: segment.baseOffset, bytes: segment.size, ms: Number(process.hrtime.bigint() - started) / 1e6 },
        'recovered unflushed segment',
      );
      if (result.truncatedBytes > 0 || result.problem !== undefined) {
        this.logger.warn(
          { dir: this.dir, segment: segment.baseOffset, truncatedBytes: result.truncatedBytes, problem: result.problem, nextOffset: segment.nextOffset },
          'truncated a torn or corrupt log tail during recovery',
        );
        for (const later of this.segments.splice(i + 1)) await this.deleteSegmentNow(later);
        break;
      }
    }
  }

  private async deleteSegmentNow(segment: LogSegment): Promise<void> {
    await segment.markDeleted();
    await segment.deleteFiles();
    this.dirChanged = true;
  }

  private segmentSettings(): SegmentSettings {
    return {
      indexIntervalBytes: this.configValue.indexIntervalBytes,
      segmentIndexBytes: this.configValue.segmentIndexBytes,
      rollJitterMs: rollJitter(this.configValue),
    };
  }

  // ---------------------------------------------------------------- state

  get config(): TopicLogConfig {
    return this.configValue;
  }

  /** New settings apply from the next append (segment sizes, flushing) or the next segment (index settings). */
  updateConfig(config: TopicLogConfig): void {
    this.configValue = config;
  }

  get logStartOffset(): number {
    return this.startOffset;
  }

  /** Base offset of the segment taking appends: it changes when the log rolls. */
  get activeSegmentBaseOffset(): number {
    return this.activeSegment.baseOffset;
  }

  /** The next offset to assign (Kafka's LEO). */
  get logEndOffset(): number {
    return this.nextOffset;
  }

  /** Offsets below it are written and readable. */
  get highWatermark(): number {
    return this.hw;
  }

  /** Offsets below it are fsynced. */
  get recoveryPoint(): number {
    return this.recoveryPointValue;
  }

  get lastFlushTime(): number {
    return this.lastFlushTimeValue;
  }

  /** Bytes in all segments (DescribeLogDirs). */
  get size(): number {
    let total = 0;
    for (const s of this.segments) total += s.size;
    return total;
  }

  /** The segments, oldest first (the last is active): a copy, for the cleaner. */
  segmentList(): LogSegment[] {
    return this.segments.slice();
  }

  /** False once closing or offline: the cleaner leaves it alone. */
  get isOpen(): boolean {
    return this.state === 'open' && !this.failure;
  }

  /** Base offset and size of each segment, oldest first. */
  segmentInfo(): Array<{ baseOffset: number; size: number }> {
    return this.segments.map((s) => ({ baseOffset: s.baseOffset, size: s.size }));
  }

  /** The log is offline after an I/O error. */
  get offline(): boolean {
    return this.failure !== undefined;
  }

  private get activeSegment(): LogSegment {
    return this.segments[this.segments.length - 1];
  }

  /** Index of the last segment whose base offset is <= offset, or -1. */
  private floorSegmentIndex(offset: number): number {
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

  private ensureWritable(): void {
    if (this.failure) throw this.failure;
    if (this.writesRefused) throw this.writesRefused;
    if (this.state !== 'open') throw new StorageError('KAFKA_STORAGE_ERROR', `Log ${this.dir} is closed`);
  }

  private snapshot(): OffsetsSnapshot {
    return { highWatermark: this.hw, logStartOffset: this.startOffset, logEndOffset: this.nextOffset };
  }

  // ---------------------------------------------------------------- leader epochs

  latestEpoch(): number | undefined {
    return this.epochs.latestEpoch();
  }

  epochForOffset(offset: number): number | undefined {
    return this.epochs.epochForOffset(offset);
  }

  /** OffsetForLeaderEpoch: see LeaderEpochCache.endOffsetFor; -1/-1 when unknown. */
  endOffsetForEpoch(epoch: number): { epoch: number; endOffset: number } {
    return this.epochs.endOffsetFor(epoch, this.nextOffset);
  }

  leaderEpochEntries(): ReadonlyArray<{ epoch: number; startOffset: number }> {
    return this.epochs.all();
  }

  // ---------------------------------------------------------------- appends

  /**
   * Appends validated v2 batches. Synchronously: checks the framing (whole
   * batches, magic 2), assigns offsets from the log end offset, writes each
   * batch's baseOffset field, records new leader epochs from the batches'
   * partitionLeaderEpoch. Throws StorageError (RECORD_LIST_TOO_LARGE when
   * larger than segment.bytes, CORRUPT_MESSAGE for bad framing,
   * KAFKA_STORAGE_ERROR when offline or closed); nothing is assigned then.
   * `abortedTxn`: the batches are an ABORT marker ending that transaction
   * (its lastOffset is the marker's offset); it goes into the transaction
   * index of the segment the marker is written to.
   */
  append(batches: Buffer, abortedTxn?: AbortedTxn): AppendResult {
    this.ensureWritable();
    if (batches.length > this.configValue.segmentBytes) {
      throw new StorageError(
        'RECORD_LIST_TOO_LARGE',
        `Message batch size is ${batches.length} bytes in append to partition ${this.topic}-${this.partition} which exceeds the maximum configured segment size of ${this.configValue.segmentBytes}.`,
      );
    }
    if (batches.length === 0) throw new StorageError('CORRUPT_MESSAGE', 'No record batches to append');
    for (let at = 0; at < batches.length; ) {
      if (at + BATCH_HEADER_SIZE > batches.length) throw new StorageError('CORRUPT_MESSAGE', `Truncated batch header at byte ${at}`);
      const size = batchSize(batches, at);
      if (size < BATCH_HEADER_SIZE || at + size > batches.length) throw new StorageError('CORRUPT_MESSAGE', `Invalid batch size ${size} at byte ${at}`);
      if (batchMagic(batches, at) !== MAGIC_V2) throw new StorageError('CORRUPT_MESSAGE', `Unsupported magic ${batchMagic(batches, at)} at byte ${at}`);
      if (batchLastOffsetDelta(batches, at) < 0) throw new StorageError('CORRUPT_MESSAGE', `Negative lastOffsetDelta at byte ${at}`);
      at += size;
    }

    const baseOffset = this.nextOffset;
    let next = baseOffset;
    let maxTimestamp = NO_TIMESTAMP;
    for (let at = 0; at < batches.length; ) {
      setBatchBaseOffset(batches, at, next);
      const epoch = batchLeaderEpoch(batches, at);
      if (epoch >= 0 && epoch > (this.epochs.latestEpoch() ?? -1)) this.epochs.assign(epoch, next);
      maxTimestamp = Math.max(maxTimestamp, batchMaxTimestamp(batches, at));
      next += batchLastOffsetDelta(batches, at) + 1;
      at += batchSize(batches, at);
    }
    this.nextOffset = next;

    let resolve!: () => void;
    let reject!: (e: unknown) => void;
    const done = new Promise<void>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    done.catch(() => undefined); // the caller may not await it; it still sees the rejection if it does
    this.lastAppendDone = done;
    this.queue.push({ kind: 'append', batches, baseOffset, nextOffset: next, maxTimestamp, abortedTxn, truncations: this.truncations, resolve, reject });
    this.startWriter();
    return { baseOffset, lastOffset: next - 1, done };
  }

  /**
   * Resolves once every offset below `end` is written, at once when it is; rejects when the
   * write holding them fails. For a retried batch whose first copy may still be in flight: it is
   * acknowledged no sooner than that copy.
   */
  whenWritten(end: number): Promise<void> {
    return end <= this.hw ? Promise.resolve() : this.lastAppendDone;
  }

  /** True after a failed write, until resumeWrites(): appends are refused, reads go on. */
  get refusingWrites(): boolean {
    return this.writesRefused !== undefined;
  }

  /** Takes appends again after a failed write (the caller has rebuilt what recorded the failed appends). */
  resumeWrites(): void {
    this.writesRefused = undefined;
  }

  private enqueueTask(run: () => Promise<void>): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ kind: 'task', run, resolve, reject });
      this.startWriter();
    });
  }

  private startWriter(): void {
    if (this.writerRunning) return;
    this.writerRunning = true;
    void this.runWriter();
  }

  private async runWriter(): Promise<void> {
    while (this.queue.length > 0) {
      const head = this.queue[0];
      if (this.failure) {
        this.queue.shift();
        head.reject(this.failure);
        continue;
      }
      if (head.kind === 'task') {
        this.queue.shift();
        try {
          await head.run();
          head.resolve();
        } catch (e) {
          // Out of space, a task (retention's roll, a truncation) changed nothing it cannot redo.
          if (isOutOfSpace(e)) head.reject(this.ioError('Writing', e));
          else {
            this.goOffline(e);
            head.reject(this.failure);
          }
        }
        continue;
      }
      const group: PendingAppend[] = [];
      try {
        await this.writeAppends(group);
        for (const a of group) a.resolve();
      } catch (e) {
        await this.abandonAppends(group, e);
      }
    }
    this.writerRunning = false;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const w of waiters) w();
  }

  /**
   * After a failed write (see the file comment): cuts the active segment back to its last whole
   * write, rejects `group` and every append queued behind it, moves the log end offset back to the
   * high watermark and refuses appends until resumeWrites().
   */
  private async abandonAppends(group: PendingAppend[], e: unknown): Promise<void> {
    const failed = group.concat(this.queue.filter((a): a is PendingAppend => a.kind === 'append'));
    this.queue = this.queue.filter((a) => a.kind !== 'append');
    const error = this.ioError('Appending to', e);
    this.writesRefused = error;
    try {
      await this.activeSegment.discardUnwrittenTail();
    } catch (cutError) {
      this.goOffline(cutError);
    }
    this.nextOffset = this.hw;
    this.epochs.truncateFromEnd(this.nextOffset);
    this.logger.error({ dir: this.dir, err: e, failedAppends: failed.length, logEndOffset: this.nextOffset }, 'a write failed; its appends and those queued behind it are dropped');
    for (const a of failed) a.reject(this.failure ?? error);
  }

  private ioError(what: string, e: unknown): StorageError {
    return e instanceof StorageError ? e : new StorageError('KAFKA_STORAGE_ERROR', `${what} ${this.dir} failed: ${(e as Error).message}`, { cause: e });
  }

  /** Takes the appends at the head of the queue that fit the active segment (rolling first if needed) and writes them. */
  private async writeAppends(group: PendingAppend[]): Promise<void> {
    const config = this.configValue;
    const now = this.now();
    const first = this.queue[0] as PendingAppend;
    let segment = this.activeSegment;
    const check = (a: PendingAppend, projectedSize: number) =>
      segment.shouldRoll({
        segmentBytes: config.segmentBytes,
        segmentMs: config.segmentMs,
        projectedSize,
        appendBytes: a.batches.length,
        maxTimestamp: a.maxTimestamp,
        lastOffset: a.nextOffset - 1,
        firstAppendTimestamp: first.maxTimestamp,
        now,
      });
    if (check(first, segment.size)) segment = await this.roll(first.baseOffset);

    let bytes = 0;
    while (this.queue.length > 0 && group.length < MAX_COALESCED_APPENDS) {
      const a = this.queue[0];
      if (a.kind !== 'append' || (group.length > 0 && check(a, segment.size + bytes))) break;
      this.queue.shift();
      group.push(a);
      bytes += a.batches.length;
    }
    await segment.append(group.map((a) => a.batches));
    for (const a of group) if (a.abortedTxn) segment.appendAbortedTxn(a.abortedTxn);
    const end = group[group.length - 1].nextOffset;
    // Appends made before a truncateTo that is still queued are about to be cut: they never become readable.
    if (first.truncations === this.truncations && end > this.hw) {
      this.hw = end;
      this.hwMark = { segment, position: segment.size };
    }
    if (end - this.recoveryPointValue >= config.flushMessages) {
      await this.flushUpTo(end).catch((e) => {
        this.flushFailed(e);
        throw e;
      });
    }
  }

  /**
   * Starts a new active segment at newBaseOffset (Kafka's roll): the old one
   * gets its final time index entry and index files written, then is flushed
   * in the background, which moves the recovery point to newBaseOffset.
   */
  private async roll(newBaseOffset: number): Promise<LogSegment> {
    const old = this.activeSegment;
    if (old.size === 0) {
      if (old.baseOffset === newBaseOffset) return old;
      this.segments.pop();
      await this.deleteSegmentNow(old);
    } else {
      await old.onBecomeInactive();
    }
    const segment = await LogSegment.create(this.dir, newBaseOffset, this.segmentSettings(), this.logger, this.now());
    this.segments.push(segment);
    this.dirChanged = true;
    this.logger.debug({ dir: this.dir, baseOffset: newBaseOffset }, 'rolled a new segment');
    this.flushUpTo(newBaseOffset).catch((e) => this.flushFailed(e));
    return segment;
  }

  /**
   * Without space, a flush could not write index tails: nothing is lost (the recovery point stays,
   * so a crash rebuilds them). A failed fsync of the log may have lost data: offline.
   */
  private flushFailed(e: unknown): void {
    if (isOutOfSpace(e)) this.logger.warn({ dir: this.dir, err: e }, 'flush failed for want of space; the recovery point stays');
    else this.goOffline(e);
  }

  private goOffline(e: unknown): void {
    if (this.failure) return;
    this.failure = this.ioError('I/O in log', e);
    this.logger.error({ dir: this.dir, err: e }, 'log is offline after an I/O error');
  }

  /** Resolves when no append or task is queued or running. */
  private whenWriterIdle(): Promise<void> {
    if (!this.writerRunning) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  // ---------------------------------------------------------------- flush

  /**
   * fsyncs everything appended so far (waiting for pending writes, without
   * holding up later appends) and moves the recovery point up to it.
   */
  async flush(): Promise<void> {
    await this.enqueueTask(async () => undefined);
    await this.flushUpTo(this.hw);
  }

  private flushUpTo(upTo: number): Promise<void> {
    const run = this.flushChain.then(() => this.doFlush(upTo));
    this.flushChain = run.catch(() => undefined);
    return run;
  }

  private async doFlush(upTo: number): Promise<void> {
    if (upTo <= this.recoveryPointValue && !this.dirChanged) return;
    const truncations = this.truncations;
    const segments = this.segments.slice();
    for (let i = 0; i < segments.length; i++) {
      if (segments[i].baseOffset >= upTo) break;
      if (i + 1 < segments.length && segments[i + 1].baseOffset <= this.recoveryPointValue) continue; // already flushed
      await segments[i].flush();
    }
    await this.epochs.persisted();
    if (this.dirChanged) {
      this.dirChanged = false;
      await fsyncDirectory(this.dir);
    }
    if (truncations === this.truncations) this.recoveryPointValue = Math.max(this.recoveryPointValue, Math.min(upTo, this.hw));
    this.lastFlushTimeValue = this.now();
  }

  // ---------------------------------------------------------------- reads

  /**
   * Byte ranges of whole batches from the one containing fetchOffset, up to
   * maxBytes (at least one batch with minOneMessage), never reaching
   * maxOffset or the high watermark; may span segments. outOfRange when
   * fetchOffset < logStartOffset or > logEndOffset (Kafka answers
   * OFFSET_OUT_OF_RANGE); fetchOffset at or past the high watermark reads
   * nothing.
   */
  async read(fetchOffset: number, maxBytes: number, options: ReadOptions = {}): Promise<ReadResult> {
    try {
      return await this.locate(fetchOffset, maxBytes, options);
    } catch (e) {
      throw this.readError(e);
    }
  }

  private readError(e: unknown): StorageError {
    if (e instanceof StorageError) return e;
    return new StorageError('KAFKA_STORAGE_ERROR', `Reading ${this.dir} failed: ${(e as Error).message}`, { cause: e });
  }

  private async locate(fetchOffset: number, maxBytes: number, options: ReadOptions): Promise<ReadResult> {
    const snapshot = this.snapshot();
    const hwMark = this.hwMark;
    if (fetchOffset < snapshot.logStartOffset || fetchOffset > snapshot.logEndOffset) return { ...snapshot, outOfRange: true };
    const result: ReadResult = { ...snapshot, outOfRange: false, firstOffset: -1, ranges: [], size: 0 };
    const maxOffset = Math.min(options.maxOffset ?? snapshot.highWatermark, snapshot.highWatermark);
    const minOneMessage = options.minOneMessage ?? true;
    const first = this.floorSegmentIndex(fetchOffset);
    const segments = this.segments.slice(Math.max(0, first));
    let offset = fetchOffset;
    for (let i = 0; i < segments.length && offset < maxOffset; i++) {
      const segment = segments[i];
      const nextBase = i + 1 < segments.length ? segments[i + 1].baseOffset : Infinity;
      let maxPosition = segment === hwMark?.segment ? hwMark.position : segment.size;
      if (maxOffset < nextBase && (maxOffset < snapshot.highWatermark || !hwMark)) {
        // A last stable offset below the high watermark (or a pending truncation): find its position.
        const stop = await segment.findBatch(maxOffset, maxPosition);
        if (stop) maxPosition = stop.position;
      }
      const read = await segment.read(offset, maxBytes - result.size, maxPosition, minOneMessage && result.ranges.length === 0);
      offset = nextBase;
      if (!read) continue;
      if (read.length === 0) break;
      if (result.firstOffset < 0) result.firstOffset = read.firstBatchOffset;
      result.ranges.push({ file: segment.fileHandle, position: read.position, length: read.length });
      result.size += read.length;
      if (read.position + read.length < maxPosition || result.size >= maxBytes) break;
    }
    return result;
  }

  /**
   * read() into one Buffer (fs reads: the bytes come through the OS page
   * cache, no copy of the log is kept in memory). Retries when a segment was
   * deleted or cut while it was being read.
   */
  async readBytes(fetchOffset: number, maxBytes: number, options: ReadOptions = {}): Promise<ReadBytesResult> {
    for (let attempt = 0; ; attempt++) {
      try {
        const result = await this.locate(fetchOffset, maxBytes, options);
        if (result.outOfRange) return result;
        const { ranges, size, ...rest } = result;
        const records = (options.allocate ?? Buffer.allocUnsafe)(size);
        let at = 0;
        for (const r of ranges) {
          const bytesRead = await readFully(r.file, records, at, r.length, r.position);
          if (bytesRead < r.length) throw new Error(`short read at position ${r.position}`);
          at += r.length;
        }
        return { ...rest, records };
      } catch (e) {
        if (attempt >= 2) throw this.readError(e);
      }
    }
  }

  /**
   * Replays the log from the batch containing fromOffset up to the high
   * watermark, one batch at a time: `visit` gets a view of the batch's
   * 61-byte header, or the whole batch for a control batch; the view is valid
   * only during the call. For rebuilding state from the log (producer state
   * after a restart).
   */
  async forEachBatch(fromOffset: number, visit: (batch: Buffer) => void): Promise<void> {
    const hw = this.hw;
    const hwMark = this.hwMark;
    const segments = this.segments.slice(Math.max(0, this.floorSegmentIndex(fromOffset)));
    for (let i = 0; i < segments.length && segments[i].baseOffset < hw; i++) {
      const segment = segments[i];
      let maxPosition = segment === hwMark?.segment ? hwMark.position : segment.size;
      if (!hwMark && (i + 1 === segments.length || hw < segments[i + 1].baseOffset)) {
        const stop = await segment.findBatch(hw, maxPosition);
        if (stop) maxPosition = stop.position;
      }
      await segment.forEachBatch(i === 0 ? fromOffset : segment.baseOffset, maxPosition, visit);
    }
  }

  /**
   * The aborted transactions overlapping [fetchOffset, upperBoundOffset), for
   * a read_committed fetch (Kafka's collectAbortedTransactions): from the
   * segment holding fetchOffset on, until an entry shows that every later one
   * starts at or past the bound.
   */
  abortedTransactions(fetchOffset: number, upperBoundOffset: number): AbortedTxn[] {
    const found: AbortedTxn[] = [];
    for (let i = Math.max(0, this.floorSegmentIndex(fetchOffset)); i < this.segments.length; i++) {
      if (this.segments[i].collectAbortedTxns(fetchOffset, upperBoundOffset, found)) break;
    }
    return found;
  }

  /**
   * Puts an aborted transaction found by replaying the log (producer-state
   * recovery) back into the transaction index of the segment holding its
   * marker, unless that index already has it (it reached the file before the
   * crash).
   */
  restoreAbortedTxn(txn: AbortedTxn): void {
    const segment = this.segments[this.floorSegmentIndex(txn.lastOffset)];
    if (segment && segment.lastAbortedTxnOffset < txn.lastOffset) segment.appendAbortedTxn(txn);
  }

  /**
   * ListOffsets by timestamp: the first batch (from startingOffset, default
   * the log start offset) with a max timestamp >= timestamp, or null. Kafka
   * answers with the first RECORD whose timestamp is >= the target; that
   * record is in this batch, unless every such record is below
   * startingOffset: then ask again from the batch's lastOffset + 1.
   */
  async offsetForTimestamp(timestamp: number, startingOffset = this.startOffset): Promise<TimestampLookup | null> {
    const segments = this.segments.slice();
    for (let i = 0; i < segments.length; i++) {
      if (i + 1 < segments.length && segments[i + 1].baseOffset <= startingOffset) continue;
      if ((await segments[i].largestTimestamp()) < timestamp) continue;
      const batch = await segments[i].findBatchByTimestamp(timestamp, startingOffset);
      if (batch) return this.readBatch(segments[i], batch.position, batch.size);
    }
    return null;
  }

  /** ListOffsets MAX_TIMESTAMP: the batch holding the largest timestamp (the first such), or null for an empty log. */
  async batchWithMaxTimestamp(): Promise<TimestampLookup | null> {
    let best: LogSegment | undefined;
    let bestTimestamp = NO_TIMESTAMP;
    for (const s of this.segments.slice()) {
      if (s.size === 0) continue;
      const ts = await s.largestTimestamp();
      if (!best || ts > bestTimestamp) {
        best = s;
        bestTimestamp = ts;
      }
    }
    if (!best) return null;
    const batch = await best.findBatch(best.offsetOfMaxTimestampSoFar);
    return batch ? this.readBatch(best, batch.position, batch.size) : null;
  }

  private async readBatch(segment: LogSegment, position: number, size: number): Promise<TimestampLookup> {
    const batch = Buffer.allocUnsafe(size);
    await segment.readInto(batch, 0, position, size);
    const baseOffset = batch.readInt32BE(0) * 4294967296 + batch.readUInt32BE(4);
    return { baseOffset, lastOffset: baseOffset + batchLastOffsetDelta(batch, 0), maxTimestamp: batchMaxTimestamp(batch, 0), batch };
  }

  // ---------------------------------------------------------------- deletion and truncation

  /**
   * DeleteRecords: moves the log start offset up to `offset` (<= high
   * watermark, else OFFSET_OUT_OF_RANGE) and deletes the segments entirely
   * below it. Resolves with the new log start offset once it is durable.
   */
  async deleteRecordsBefore(offset: number): Promise<number> {
    this.ensureWritable();
    if (offset < 0 || offset > this.hw) {
      throw new StorageError(
        'OFFSET_OUT_OF_RANGE',
        `Cannot increment the log start offset to ${offset} of partition ${this.topic}-${this.partition} since it is larger than the high watermark ${this.hw}`,
      );
    }
    await this.advanceLogStartOffset(offset);
    return this.startOffset;
  }

  /**
   * Moves the log start offset up to `offset` (never back), retires the segments wholly below it
   * and resolves once the new start is durable: what DeleteRecords and retention both do.
   */
  private async advanceLogStartOffset(offset: number): Promise<void> {
    if (offset <= this.startOffset) return;
    this.startOffset = offset;
    this.epochs.truncateFromStart(offset);
    const renames: Array<Promise<void>> = [];
    while (this.segments.length > 1 && this.segments[1].baseOffset <= offset) renames.push(this.retire(this.segments.shift()!));
    await Promise.all(renames);
    await this.persistLogStartOffset?.();
  }

  /**
   * Retention (Kafka's deleteOldSegments), for cleanup.policy with delete:
   * removes the oldest segments while retention.ms (against a segment's
   * largest timestamp, its file time when it has none) or retention.bytes
   * says so, and moves the log start offset past them. Whole segments only,
   * below the high watermark. When every segment has expired the active one is
   * rolled first, as Kafka does: the log starts over, empty, at its end offset,
   * and the segment taking appends is never the one deleted. Runs in the writer
   * loop, so it is ordered with appends, truncation and the cleaner's swaps.
   * Resolves with the number of segments deleted.
   */
  deleteOldSegments(): Promise<number> {
    if (!this.configValue.delete || !this.isOpen) return Promise.resolve(0);
    let deleted = 0;
    return this.enqueueTask(async () => {
      deleted = await this.deleteExpiredSegments();
    }).then(() => deleted);
  }

  private async deleteExpiredSegments(): Promise<number> {
    const { retentionMs, retentionBytes } = this.configValue;
    const now = this.now();
    let excessBytes = retentionBytes >= 0 ? this.size - retentionBytes : 0;
    const doomed: LogSegment[] = [];
    for (let i = 0; i < this.segments.length; i++) {
      const segment = this.segments[i];
      const last = i === this.segments.length - 1;
      if (this.hw < (last ? segment.nextOffset : this.segments[i + 1].baseOffset) || (last && segment.size === 0)) break;
      const expired = retentionMs >= 0 && now - (await largestTimestampOrFileTime(segment)) > retentionMs;
      if (!expired && excessBytes < segment.size) break;
      excessBytes -= segment.size;
      doomed.push(segment);
    }
    if (doomed.length === 0) return 0;
    if (doomed.length === this.segments.length) await this.roll(this.activeSegment.nextOffset);
    const previousStart = this.startOffset;
    // The log start is inside the first segment, so the segment after the doomed ones starts past it.
    await this.advanceLogStartOffset(this.segments[doomed.length].baseOffset);
    this.logger.info(
      { dir: this.dir, segments: doomed.map((s) => s.baseOffset), bytes: doomed.reduce((n, s) => n + s.size, 0), retentionMs, retentionBytes, logStartOffset: this.startOffset, previousLogStartOffset: previousStart },
      'deleted segments past retention',
    );
    return doomed.length;
  }

  /** An empty segment at baseOffset for the cleaner to write (`*.cleaned` files, this log's index settings). */
  createCleanedSegment(baseOffset: number): Promise<LogSegment> {
    return LogSegment.create(this.dir, baseOffset, this.segmentSettings(), this.logger, this.now(), CLEANED_FILE_SUFFIX);
  }

  /**
   * Puts a cleaned segment (written and fsynced by the cleaner) in place of
   * `old`, a run of inactive segments (Kafka's replaceSegments), crash-safely
   * (see completeSwaps): renames it to `.swap`, swaps it into the segment list
   * in one step (in the writer loop, so retention and truncation see either
   * list), retires the old segments (readers in flight keep their open files
   * for file.delete.delay.ms), and renames it to its final name. Resolves
   * false, and drops the cleaned segment, when `old` is no longer all in the
   * log (retention or DeleteRecords removed some meanwhile).
   */
  async replaceSegments(cleaned: LogSegment, old: LogSegment[]): Promise<boolean> {
    await cleaned.changeFileSuffix(SWAP_FILE_SUFFIX);
    await fsyncDirectory(this.dir);
    let replaced = false;
    await this.enqueueTask(async () => {
      const at = this.segments.indexOf(old[0]);
      replaced = this.state === 'open' && at >= 0 && at + old.length < this.segments.length && old.every((s, i) => this.segments[at + i] === s);
      if (replaced) this.segments.splice(at, old.length, cleaned);
    });
    if (!replaced) {
      await cleaned.markDeleted();
      await cleaned.deleteFiles();
      return false;
    }
    await Promise.all(old.map((s) => this.retire(s)));
    await cleaned.changeFileSuffix('');
    await fsyncDirectory(this.dir);
    return true;
  }

  /**
   * Removes the batches containing offsets >= offset (Kafka's truncateTo);
   * the next append gets `offset`. Queued behind pending appends.
   */
  truncateTo(offset: number): Promise<void> {
    this.ensureWritable();
    if (!(offset >= 0)) throw new RangeError(`Cannot truncate to offset ${offset}`);
    if (offset >= this.nextOffset) return Promise.resolve();
    this.nextOffset = offset;
    this.hw = Math.min(this.hw, offset);
    this.hwMark = undefined;
    this.recoveryPointValue = Math.min(this.recoveryPointValue, offset);
    const truncation = ++this.truncations;
    this.epochs.truncateFromEnd(offset);
    const startMoved = offset < this.startOffset;
    if (startMoved) this.startOffset = offset;
    return this.enqueueTask(async () => {
      while (this.segments.length > 1 && this.activeSegment.baseOffset > offset) this.retire(this.segments.pop()!);
      const active = this.activeSegment;
      if (active.baseOffset > offset) {
        this.segments = [await LogSegment.create(this.dir, offset, this.segmentSettings(), this.logger, this.now())];
        this.retire(active);
        this.dirChanged = true;
      } else {
        await active.truncateTo(offset, this.now());
      }
      if (this.truncations === truncation) this.hwMark = { segment: this.activeSegment, position: this.activeSegment.size };
      if (startMoved) await this.persistLogStartOffset?.();
    });
  }

  /**
   * Takes a segment out of the log: its files are renamed to `*.deleted` at
   * once, and closed and removed after file.delete.delay.ms, so reads
   * already holding it complete (Kafka's asynchronous segment deletion).
   */
  private retire(segment: LogSegment): Promise<void> {
    let finish!: () => void;
    const entry: Retiring = { segment, done: new Promise<void>((r) => (finish = r)), finish: () => finish() };
    this.retiring.add(entry);
    this.dirChanged = true;
    return segment.markDeleted().then(
      () => {
        if (!this.retiring.has(entry)) return;
        entry.timer = setTimeout(() => void this.finishRetiring(entry), this.configValue.fileDeleteDelayMs);
        entry.timer.unref();
      },
      (e) => {
        this.logger.error({ dir: this.dir, segment: segment.baseOffset, err: e }, 'could not rename a deleted segment');
        void this.finishRetiring(entry);
      },
    );
  }

  private async finishRetiring(entry: Retiring): Promise<void> {
    if (!this.retiring.delete(entry)) return entry.done;
    if (entry.timer) clearTimeout(entry.timer);
    try {
      await entry.segment.deleteFiles();
    } catch (e) {
      this.logger.error({ dir: this.dir, segment: entry.segment.baseOffset, err: e }, 'could not delete a segment');
    }
    entry.finish();
  }

  /** Resolves when every segment deleted so far is gone from disk (file.delete.delay.ms after its deletion). */
  async segmentDeletionsSettled(): Promise<void> {
    await Promise.all([...this.retiring].map((e) => e.done));
  }

  // ---------------------------------------------------------------- close

  /**
   * Waits for pending appends, then (unless flush is false) fsyncs and
   * writes the indexes out, and closes every file. Segments awaiting
   * deletion are removed now.
   */
  async close(options: { flush?: boolean } = {}): Promise<void> {
    if (this.state !== 'open') return;
    this.state = 'closing';
    await this.whenWriterIdle();
    let write = options.flush !== false && !this.failure;
    let unclean: unknown;
    if (write) {
      await this.flushUpTo(this.hw).catch((e) => {
        unclean = e;
        write = false;
      });
    }
    await this.flushChain;
    for (const s of this.segments) {
      try {
        if (write) await s.close();
        else await s.closeWithoutWriting();
      } catch (e) {
        unclean ??= e;
        this.logger.error({ dir: this.dir, segment: s.baseOffset, err: e }, 'error closing a segment');
      }
    }
    for (const entry of [...this.retiring]) await this.finishRetiring(entry);
    await this.epochs.persisted().catch(() => undefined);
    this.state = 'closed';
    // Files not written out (a full disk): the caller must not mark the shutdown clean, so the next start recovers.
    if (unclean !== undefined && options.flush !== false) throw this.ioError('Closing', unclean);
  }
}
