/**
 * The append path of a partition log, and the loop that orders every change
 * to its files.
 *
 * Appends. `append()` assigns offsets synchronously, in call order: it
 * stamps each batch's baseOffset (outside the CRC) and returns the base and
 * last offset at once; `appendAsFollower()` takes the offsets a leader
 * assigned instead (Kafka's appendAsFollower). The file writes run in call order in one writer
 * loop, and `done` settles when the write (and any fsync flush.messages
 * asks for) completes. Appends queued while a write is running are
 * coalesced into one positional writev. Roll decisions happen in the writer,
 * against the real segment. Truncation, retention and the cleaner's swaps are
 * tasks queued in the same loop (enqueueTask), so they are ordered with appends.
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
 *  - After a crash, recovery (log-loader.ts) leaves a clean prefix of what was written.
 */
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
import { walkBatches, type BatchInfo } from '../records/batch';
import { StorageError, UnexpectedAppendOffsetError } from './errors';
import { isOutOfSpace } from '../common/durable-file';
import type { LocalLog } from './local-log';
import type { LogSegment } from './log-segment';
import { NO_TIMESTAMP } from './time-index';
import type { AbortedTxn } from './transaction-index';

/** Most appends written by one writev. */
const MAX_COALESCED_APPENDS = 256;
const NO_ABORTED_TXNS: readonly AbortedTxn[] = [];

export interface AppendResult {
  baseOffset: number;
  lastOffset: number;
  /** Settles when the batches are in the file (and fsynced, if flush.messages asked for it). */
  done: Promise<void>;
}

interface PendingAppend {
  kind: 'append';
  batches: Buffer;
  baseOffset: number;
  nextOffset: number;
  maxTimestamp: number;
  /** The transactions ABORT markers in these batches end, for the segment's transaction index. */
  abortedTxns: readonly AbortedTxn[];
  /** LocalLog.truncations when the offsets were assigned. */
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

export class LogWriter {
  private queue: Array<PendingAppend | PendingTask> = [];
  private writerRunning = false;
  private idleWaiters: Array<() => void> = [];
  /** Set after a failed write, until resumeWrites(). */
  private writesRefused?: StorageError;
  /** The latest append's `done`: a retried batch still being written waits for it. */
  private lastAppendDone: Promise<void> = Promise.resolve();

  constructor(private readonly log: LocalLog) {}

  /** Throws the StorageError an append would get now: offline, refusing writes, or closed. */
  ensureWritable(): void {
    const log = this.log;
    if (log.failure) throw log.failure;
    if (this.writesRefused) throw this.writesRefused;
    if (log.state !== 'open') throw new StorageError('KAFKA_STORAGE_ERROR', `Log ${log.dir} is closed`);
  }

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
    const log = this.log;
    this.checkAppendable(batches);
    for (let at = 0; at < batches.length; ) {
      if (at + BATCH_HEADER_SIZE > batches.length) throw new StorageError('CORRUPT_MESSAGE', `Truncated batch header at byte ${at}`);
      const size = batchSize(batches, at);
      if (size < BATCH_HEADER_SIZE || at + size > batches.length) throw new StorageError('CORRUPT_MESSAGE', `Invalid batch size ${size} at byte ${at}`);
      if (batchMagic(batches, at) !== MAGIC_V2) throw new StorageError('CORRUPT_MESSAGE', `Unsupported magic ${batchMagic(batches, at)} at byte ${at}`);
      if (batchLastOffsetDelta(batches, at) < 0) throw new StorageError('CORRUPT_MESSAGE', `Negative lastOffsetDelta at byte ${at}`);
      at += size;
    }

    const baseOffset = log.logEndOffset;
    let next = baseOffset;
    let maxTimestamp = NO_TIMESTAMP;
    for (let at = 0; at < batches.length; ) {
      setBatchBaseOffset(batches, at, next);
      this.recordLeaderEpoch(batchLeaderEpoch(batches, at), next);
      maxTimestamp = Math.max(maxTimestamp, batchMaxTimestamp(batches, at));
      next += batchLastOffsetDelta(batches, at) + 1;
      at += batchSize(batches, at);
    }
    return this.enqueueAppend(batches, baseOffset, next, maxTimestamp, abortedTxn ? [abortedTxn] : NO_ABORTED_TXNS);
  }

  /**
   * Appends batches a leader wrote, with the offsets it assigned (Kafka's
   * UnifiedLog.appendAsFollower): nothing in them is rewritten. Synchronously
   * checks them all first: whole v2 batches with valid CRCs
   * (CORRUPT_MESSAGE), the first at or past the log end offset
   * (UnexpectedAppendOffsetError), offsets increasing from batch to batch
   * (UNKNOWN_SERVER_ERROR, as Kafka's OffsetsOutOfOrderException). A gap is
   * accepted, as Kafka accepts it: a compacted leader log has them. Then, in
   * order, each batch's partitionLeaderEpoch goes to the leader-epoch cache
   * (Kafka's assignEpochStartOffset) and `onBatch` sees its header and bytes
   * (the producer state's update), returning the transaction an ABORT marker
   * ends, for the transaction index. Throws as append() does; nothing changes then.
   */
  appendAsFollower(batches: Buffer, onBatch: (batch: BatchInfo, bytes: Buffer) => AbortedTxn | undefined): AppendResult {
    const log = this.log;
    this.checkAppendable(batches);
    const walk = walkBatches(batches, { verifyCrc: true });
    if (walk.stop) throw new StorageError('CORRUPT_MESSAGE', `Invalid batch at byte ${walk.stop.position} of a follower append to ${log.topic}-${log.partition}: ${walk.stop.reason}`);
    const first = walk.batches[0];
    if (first.baseOffset < log.logEndOffset) {
      throw new UnexpectedAppendOffsetError(
        `Unexpected offset in append to ${log.topic}-${log.partition}. First offset ${first.baseOffset} is less than the next offset ${log.logEndOffset}.`,
        first.baseOffset, first.baseOffset + first.lastOffsetDelta,
      );
    }
    let next = first.baseOffset;
    for (const b of walk.batches) {
      if (b.lastOffsetDelta < 0) throw new StorageError('CORRUPT_MESSAGE', `Negative lastOffsetDelta at byte ${b.position}`);
      // Kafka's OffsetsOutOfOrderException, which has no error code either.
      if (b.baseOffset < next) throw new StorageError('UNKNOWN_SERVER_ERROR', `Out of order offsets found in append to ${log.topic}-${log.partition}: ${b.baseOffset} after ${next - 1}`);
      next = b.baseOffset + b.lastOffsetDelta + 1;
    }

    const abortedTxns: AbortedTxn[] = [];
    let maxTimestamp = NO_TIMESTAMP;
    for (const b of walk.batches) {
      this.recordLeaderEpoch(b.partitionLeaderEpoch, b.baseOffset);
      maxTimestamp = Math.max(maxTimestamp, b.maxTimestamp);
      const aborted = onBatch(b, batches.subarray(b.position, b.position + b.size));
      if (aborted) abortedTxns.push(aborted);
    }
    return this.enqueueAppend(batches, first.baseOffset, next, maxTimestamp, abortedTxns);
  }

  /** What both appends refuse before looking at the batches: a log not taking writes, an empty or too large append. */
  private checkAppendable(batches: Buffer): void {
    const log = this.log;
    this.ensureWritable();
    if (batches.length > log.config.segmentBytes) {
      throw new StorageError(
        'RECORD_LIST_TOO_LARGE',
        `Message batch size is ${batches.length} bytes in append to partition ${log.topic}-${log.partition} which exceeds the maximum configured segment size of ${log.config.segmentBytes}.`,
      );
    }
    if (batches.length === 0) throw new StorageError('CORRUPT_MESSAGE', 'No record batches to append');
  }

  /** A batch's leader epoch starts at `offset` when it is newer than the latest the log knows. */
  private recordLeaderEpoch(epoch: number, offset: number): void {
    const epochs = this.log.epochs;
    if (epoch >= 0 && epoch > (epochs.latestEpoch() ?? -1)) epochs.assign(epoch, offset);
  }

  /** Moves the log end offset to `nextOffset` and queues the write of batches whose offsets are set. */
  private enqueueAppend(batches: Buffer, baseOffset: number, nextOffset: number, maxTimestamp: number, abortedTxns: readonly AbortedTxn[]): AppendResult {
    const log = this.log;
    log.logEndOffset = nextOffset;
    let resolve!: () => void;
    let reject!: (e: unknown) => void;
    const done = new Promise<void>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    done.catch(() => undefined); // the caller may not await it; it still sees the rejection if it does
    this.lastAppendDone = done;
    this.queue.push({ kind: 'append', batches, baseOffset, nextOffset, maxTimestamp, abortedTxns, truncations: log.truncations, resolve, reject });
    this.startWriter();
    return { baseOffset, lastOffset: nextOffset - 1, done };
  }

  /**
   * Resolves once every offset below `end` is written, at once when it is; rejects when the
   * write holding them fails. For a retried batch whose first copy may still be in flight: it is
   * acknowledged no sooner than that copy.
   */
  whenWritten(end: number): Promise<void> {
    return end <= this.log.highWatermark ? Promise.resolve() : this.lastAppendDone;
  }

  /** True after a failed write, until resumeWrites(): appends are refused, reads go on. */
  get refusingWrites(): boolean {
    return this.writesRefused !== undefined;
  }

  /** Takes appends again after a failed write (the caller has rebuilt what recorded the failed appends). */
  resumeWrites(): void {
    this.writesRefused = undefined;
  }

  /** Runs `run` in the writer loop, after the appends and tasks queued before it. */
  enqueueTask(run: () => Promise<void>): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ kind: 'task', run, resolve, reject });
      this.startWriter();
    });
  }

  /** No append or task is queued or running. */
  get idle(): boolean {
    return !this.writerRunning;
  }

  /**
   * Hands the appends queued here (offsets assigned, not written yet) to `to`, the writer of a
   * copy of this log holding every offset written here (a move to another log dir): they are
   * written there, in order, and their callers hear from there. Only from a task of this writer's
   * loop; false, and nothing moves, while a task is queued here (its work is on these files).
   */
  handOverQueuedAppends(to: LogWriter): boolean {
    if (this.queue.some((q) => q.kind === 'task')) return false;
    const target = to.log;
    for (const item of this.queue as PendingAppend[]) to.queue.push({ ...item, truncations: target.truncations });
    this.queue = [];
    target.logEndOffset = this.log.logEndOffset;
    to.lastAppendDone = this.lastAppendDone;
    to.startWriter();
    return true;
  }

  /** Resolves when no append or task is queued or running. */
  whenIdle(): Promise<void> {
    if (!this.writerRunning) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /**
   * Starts a new active segment at newBaseOffset (Kafka's roll): the old one
   * gets its final time index entry and index files written, then is flushed
   * in the background, which moves the recovery point to newBaseOffset. Only
   * from the writer loop.
   */
  async roll(newBaseOffset: number): Promise<LogSegment> {
    const log = this.log;
    const old = log.activeSegment;
    if (old.size === 0) {
      if (old.baseOffset === newBaseOffset) return old;
      log.segments.pop();
      await log.deleteSegmentNow(old);
    } else {
      await old.onBecomeInactive();
    }
    const segment = await log.createSegment(newBaseOffset);
    log.segments.push(segment);
    log.dirChanged = true;
    log.logger.debug({ dir: log.dir, baseOffset: newBaseOffset }, 'rolled a new segment');
    log.flushUpTo(newBaseOffset).catch((e) => log.flushFailed(e));
    return segment;
  }

  private startWriter(): void {
    if (this.writerRunning) return;
    this.writerRunning = true;
    void this.runWriter();
  }

  private async runWriter(): Promise<void> {
    const log = this.log;
    while (this.queue.length > 0) {
      const head = this.queue[0];
      if (log.failure) {
        this.queue.shift();
        head.reject(log.failure);
        continue;
      }
      if (head.kind === 'task') {
        this.queue.shift();
        try {
          await head.run();
          head.resolve();
        } catch (e) {
          // Out of space, a task (retention's roll, a truncation) changed nothing it cannot redo.
          if (isOutOfSpace(e)) head.reject(log.ioError('Writing', e));
          else {
            log.goOffline(e);
            head.reject(log.failure);
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
    const log = this.log;
    const failed = group.concat(this.queue.filter((a): a is PendingAppend => a.kind === 'append'));
    this.queue = this.queue.filter((a) => a.kind !== 'append');
    const error = log.ioError('Appending to', e);
    this.writesRefused = error;
    try {
      await log.activeSegment.discardUnwrittenTail();
    } catch (cutError) {
      log.goOffline(cutError);
    }
    log.logEndOffset = log.highWatermark;
    log.epochs.truncateFromEnd(log.logEndOffset);
    log.logger.error({ dir: log.dir, err: e, failedAppends: failed.length, logEndOffset: log.logEndOffset }, 'a write failed; its appends and those queued behind it are dropped');
    for (const a of failed) a.reject(log.failure ?? error);
  }

  /** Takes the appends at the head of the queue that fit the active segment (rolling first if needed) and writes them. */
  private async writeAppends(group: PendingAppend[]): Promise<void> {
    const log = this.log;
    const config = log.config;
    const now = log.now();
    const first = this.queue[0] as PendingAppend;
    let segment = log.activeSegment;
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
    for (const a of group) for (const txn of a.abortedTxns) segment.appendAbortedTxn(txn);
    const end = group[group.length - 1].nextOffset;
    // Appends made before a truncateTo that is still queued are about to be cut: they never become readable.
    if (first.truncations === log.truncations && end > log.highWatermark) {
      log.highWatermark = end;
      log.hwMark = { segment, position: segment.size };
    }
    if (end - log.recoveryPoint >= config.flushMessages) {
      await log.flushUpTo(end).catch((e) => {
        log.flushFailed(e);
        throw e;
      });
    }
  }
}
