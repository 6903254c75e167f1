/**
 * The log of one partition (Kafka's UnifiedLog, for a single replica):
 * segments ordered by base offset in `<dataDir>/<topic>-<partition>/`, the
 * last one active, and the partition's producer state. This class holds the
 * producer state and composes the rest, as Kafka splits UnifiedLog, LocalLog
 * and LogLoader:
 *
 *   local-log.ts     the state they share: segments, offsets (see there), leader epochs, flush
 *   log-loader.ts    opening: interrupted swaps and deletions, crash recovery
 *   log-writer.ts    appends (ordered, coalesced), a follower's appends, roll, failed writes, durability; the loop every change runs in
 *   log-reader.ts    reads by offset and timestamp, replay, aborted transactions
 *   log-deletion.ts  DeleteRecords, retention, truncation, the cleaner's segment swaps
 *
 * Transactions. The log stores markers like any batch; what it adds is the
 * aborted-transaction index: append() takes the aborted transaction an ABORT
 * marker ends and records it in the segment the marker lands in, right after
 * the write and before the high watermark covers it, so a reader bounded by
 * the last stable offset always finds the abort of the data it returns
 * (abortedTransactions()). Which transactions are open is producer state
 * (producer-state.ts), which the log holds as Kafka's UnifiedLog does: the
 * last stable offset combines it with the high watermark. After a crash,
 * recovery cuts each recovered segment's transaction index with the log, and
 * the producer-state replay puts back the entries of the replayed range
 * (restoreAbortedTxn).
 *
 * Replication. A follower appends the leader's batches with their offsets
 * (appendAsFollower) and cuts a divergent tail (truncateTo); the producer
 * state follows both. The high watermark is still the end of what is written,
 * as for a single replica: a replicated one (the ISR's, replica/partition-replicas.ts
 * on a leader, the leader's on a follower) is not wired in yet.
 *
 * Not done (yet): preallocate (ignored: segments grow as written), unloading
 * the in-memory indexes of idle old segments, the cleaner's legacy (pre-v2)
 * tombstone rules (Fjord stores only v2 batches).
 */
import type { TopicLogConfig } from '../config/topic-config';
import { readBatchHeader, type BatchInfo } from '../records/batch';
import { readEndTxnMarker } from '../records/records';
import type { LocalLog } from './local-log';
import { loadLog, type PartitionLogOptions } from './log-loader';
import { LogDeletion } from './log-deletion';
import { LogReader, type ReadBytesResult, type ReadOptions, type ReadResult, type TimestampLookup } from './log-reader';
import type { LogSegment } from './log-segment';
import { LogWriter, type AppendResult } from './log-writer';
import { ProducerStateManager, producerBatchOf, type ReplayedBatch } from './producer-state';
import type { AbortedTxn } from './transaction-index';

/** A partition's name, `topic-partition` (Kafka's TopicPartition.toString): its directory, and the key partitions are kept by. */
export const partitionKey = (topic: string, partition: number): string => `${topic}-${partition}`;

/**
 * What the producer state needs of a batch in the log: its producer fields, offsets and, for a
 * transaction marker, what the marker says. Null for a batch without a producer, and for an empty
 * control batch (what compaction leaves of a transaction), which changes nothing, as in Kafka.
 */
function replayedBatchOf(b: BatchInfo, bytes: Buffer): ReplayedBatch | null {
  const fields = producerBatchOf(b);
  if (!fields) return null;
  const marker = b.isControl ? readEndTxnMarker(bytes) : undefined;
  if (marker === null) return null;
  return { ...fields, baseOffset: b.baseOffset, lastOffset: b.baseOffset + b.lastOffsetDelta, maxTimestamp: b.maxTimestamp, marker };
}

export class PartitionLog {
  readonly topic: string;
  readonly partition: number;

  // Replaced together, in one synchronous step, when the log moves to another log dir (takeOverFiles).
  private local: LocalLog;
  private writer: LogWriter;
  private reader: LogReader;
  private deletion: LogDeletion;
  private producers?: ProducerStateManager;
  /** The replication high watermark while the partition is replicated (see highWatermark); null on a single broker. */
  private replicatedHighWatermark: number | null = null;

  private constructor(local: LocalLog, writer?: LogWriter, deletion?: LogDeletion) {
    this.topic = local.topic;
    this.partition = local.partition;
    this.local = local;
    this.writer = writer ?? new LogWriter(local);
    this.reader = new LogReader(local);
    this.deletion = deletion ?? new LogDeletion(local, this.writer);
  }

  /** The partition's directory, `<logDir>/<topic>-<partition>` (or a future log's `...-future`). */
  get dir(): string {
    return this.local.dir;
  }

  /** Times the log was truncated (a follower cutting a divergent tail): a copy of it must start over. */
  get truncations(): number {
    return this.local.truncations;
  }

  /**
   * Moves this log onto the files of `future`, a copy of it in another log dir (AlterReplicaLogDirs),
   * once `catchUp` has copied to it everything written here. Runs as a task of this log's writer:
   * appends made meanwhile wait, their offsets assigned, and then go to the future's files (Kafka
   * holds the partition's lock for its swap). The swap itself is one synchronous step: callers keep
   * their PartitionLog, appends and reads go to the new files from the next call on. Resolves with
   * the old files as a PartitionLog of their own, for the caller to close and delete once reads in
   * flight are done; or undefined when the copy is not complete after catchUp (false from it, a
   * task queued here, a log offline): the caller tries again.
   */
  async moveOnto(future: PartitionLog, catchUp: () => Promise<boolean>): Promise<PartitionLog | undefined> {
    let old: PartitionLog | undefined;
    const writer = this.writer;
    await writer.enqueueTask(async () => {
      // A failed copy must not fail the task: that would take this log offline.
      if (!(await catchUp().catch(() => false))) return;
      if (this.writer !== writer || future.logEndOffset !== this.local.highWatermark || !future.writer.idle || this.offline || future.offline) return;
      if (!writer.handOverQueuedAppends(future.writer)) return;
      old = this.takeOverFiles(future);
      // The new dir has no producer-state snapshot: without one a restart would replay the whole log.
      this.producers?.writeSnapshot(this.dir, this.logEndOffset).catch(() => undefined);
    });
    return old;
  }

  /**
   * moveOnto's swap: the copy gets what only this log knows (the log start offset, the leader
   * epochs as this log has them, a new leader's included, the config), then this log takes its parts.
   */
  private takeOverFiles(future: PartitionLog): PartitionLog {
    const old = new PartitionLog(this.local, this.writer, this.deletion);
    const to = future.local;
    // This log's leader epochs, as they are: assigning them in order replaces what the copy derived from its batches.
    for (const e of this.local.epochs.all()) to.epochs.assign(e.epoch, e.startOffset);
    to.logStartOffset = Math.max(to.logStartOffset, this.local.logStartOffset);
    to.config = this.local.config;
    this.local = to;
    this.writer = future.writer;
    this.reader = future.reader;
    this.deletion = future.deletion;
    return old;
  }

  /** Opens (or creates) the log in opts.dir, recovering it after a crash (see log-loader.ts). */
  static async open(opts: PartitionLogOptions): Promise<PartitionLog> {
    return new PartitionLog(await loadLog(opts));
  }

  // ---------------------------------------------------------------- state

  get config(): TopicLogConfig {
    return this.local.config;
  }

  /** New settings apply from the next append (segment sizes, flushing) or the next segment (index settings). */
  updateConfig(config: TopicLogConfig): void {
    this.local.config = config;
  }

  get logStartOffset(): number {
    return this.local.logStartOffset;
  }

  /** Base offset of the segment taking appends: it changes when the log rolls. */
  get activeSegmentBaseOffset(): number {
    return this.local.activeSegment.baseOffset;
  }

  /** The next offset to assign (Kafka's LEO). */
  get logEndOffset(): number {
    return this.local.logEndOffset;
  }

  /**
   * Offsets below it are committed and readable by consumers. On a single broker that is what is
   * written; a replicated partition's is the smaller of that and the high watermark replication
   * sets (setReplicatedHighWatermark: the leader's from its in-sync replicas, a follower's from its
   * leader).
   */
  get highWatermark(): number {
    const written = this.local.highWatermark;
    return this.replicatedHighWatermark === null ? written : Math.min(written, this.replicatedHighWatermark);
  }

  /** Offsets below it are in the log file (replication reads go this far). */
  get writtenEndOffset(): number {
    return this.local.highWatermark;
  }

  /**
   * Makes the partition replicated with this high watermark (null: back to the written end).
   * Transactions whose marker is now below it are over for read_committed readers.
   */
  setReplicatedHighWatermark(highWatermark: number | null): void {
    this.replicatedHighWatermark = highWatermark;
    this.producers?.onHighWatermarkUpdated(this.highWatermark);
  }

  /**
   * Records that the leader epoch `epoch` starts at `startOffset` (Kafka's
   * maybeAssignEpochStartOffset): a new leader's epoch starts at its log end, so that followers
   * asking where an older epoch ends get an answer before its first append.
   */
  assignEpochStartOffset(epoch: number, startOffset: number): void {
    if (epoch > (this.local.epochs.latestEpoch() ?? -1)) this.local.epochs.assign(epoch, startOffset);
  }

  /** Offsets below it are fsynced. */
  get recoveryPoint(): number {
    return this.local.recoveryPoint;
  }

  get lastFlushTime(): number {
    return this.local.lastFlushTime;
  }

  /** Bytes in all segments (DescribeLogDirs). */
  get size(): number {
    return this.local.size;
  }

  /** The segments, oldest first (the last is active): a copy, for the cleaner. */
  segmentList(): LogSegment[] {
    return this.local.segments.slice();
  }

  /** False once closing or offline: the cleaner leaves it alone. */
  get isOpen(): boolean {
    return this.local.isOpen;
  }

  /** Base offset and size of each segment, oldest first. */
  segmentInfo(): Array<{ baseOffset: number; size: number }> {
    return this.local.segments.map((s) => ({ baseOffset: s.baseOffset, size: s.size }));
  }

  /** The log is offline after an I/O error. */
  get offline(): boolean {
    return this.local.failure !== undefined;
  }

  // ---------------------------------------------------------------- producer state

  /**
   * The partition's idempotent producers and open transactions (Kafka's
   * UnifiedLog.producerStateManager), once loadProducerState() has run.
   */
  get producerState(): ProducerStateManager {
    if (!this.producers) throw new Error(`The producer state of ${this.dir} is not loaded`);
    return this.producers;
  }

  /**
   * (Re)builds the producer state (Kafka's LogLoader + rebuildProducerState):
   * the latest snapshot at or below the log end, then every batch after it
   * replayed from the log, markers with the coordinator epoch their record
   * carries. Aborted transactions met on the way go back into the transaction
   * index (a crash loses the entries not flushed). After a replay the state is
   * snapshotted at the log end, in the background, so that the next crash
   * replays only what comes after (a failed write, a full disk, only means a
   * longer replay then). Runs once the log is open, and after a failed write
   * (the state had recorded the dropped batches); call with no append in flight.
   */
  async loadProducerState(): Promise<void> {
    const end = this.logEndOffset;
    const loaded = ProducerStateManager.loadLatest(this.dir, end);
    const state = loaded?.state ?? new ProducerStateManager();
    const from = Math.max(loaded?.offset ?? 0, this.logStartOffset);
    if (from < end) {
      await this.forEachBatch(from, (buf) => {
        const read = readBatchHeader(buf, 0, { verifyCrc: false });
        const replayed = read.status === 'ok' ? replayedBatchOf(read.batch, buf) : null;
        const completed = replayed && state.replayBatchHeader(replayed);
        if (completed?.isAborted) this.restoreAbortedTxn(completed);
      });
      state.writeSnapshot(this.dir, end).catch(() => undefined);
    }
    this.producers = state;
  }

  /**
   * The last stable offset (Kafka's UnifiedLog.lastStableOffset): read_committed
   * readers stop before the first offset of the oldest transaction not over
   * yet, and never pass the high watermark.
   */
  get lastStableOffset(): number {
    const hw = this.highWatermark;
    const firstUnstable = this.producerState.firstUnstableOffset();
    return firstUnstable === undefined ? hw : Math.min(firstUnstable, hw);
  }

  // ---------------------------------------------------------------- leader epochs

  latestEpoch(): number | undefined {
    return this.local.epochs.latestEpoch();
  }

  epochForOffset(offset: number): number | undefined {
    return this.local.epochs.epochForOffset(offset);
  }

  /** OffsetForLeaderEpoch: see LeaderEpochCache.endOffsetFor; -1/-1 when unknown. */
  endOffsetForEpoch(epoch: number): { epoch: number; endOffset: number } {
    return this.local.epochs.endOffsetFor(epoch, this.local.logEndOffset);
  }

  leaderEpochEntries(): ReadonlyArray<{ epoch: number; startOffset: number }> {
    return this.local.epochs.all();
  }

  // ---------------------------------------------------------------- appends (log-writer.ts)

  /** See LogWriter.append. */
  append(batches: Buffer, abortedTxn?: AbortedTxn): AppendResult {
    return this.writer.append(batches, abortedTxn);
  }

  /**
   * Appends batches fetched from the leader as they are (Kafka's
   * UnifiedLog.appendAsFollower): see LogWriter.appendAsFollower for the
   * checks. Their leader epochs go to the leader-epoch cache, and the
   * producer state, once loaded, records each batch as the leader did
   * (markers included, an ABORT's transaction into the transaction index);
   * a transaction a marker ends stays unstable until the marker is written.
   * Reads batch headers only, and a marker's one record.
   */
  appendAsFollower(batches: Buffer): AppendResult {
    const producers = this.producers;
    const appended = this.writer.appendAsFollower(batches, (batch, bytes) => {
      const replayed = producers && replayedBatchOf(batch, bytes);
      const completed = replayed ? producers.applyReplicatedBatch(replayed) : null;
      return completed?.isAborted ? completed : undefined;
    });
    if (producers) appended.done.then(() => producers.onHighWatermarkUpdated(this.highWatermark), () => undefined);
    return appended;
  }

  /** See LogWriter.whenWritten. */
  whenWritten(end: number): Promise<void> {
    return this.writer.whenWritten(end);
  }

  /** True after a failed write, until resumeWrites(): appends are refused, reads go on. */
  get refusingWrites(): boolean {
    return this.writer.refusingWrites;
  }

  /** Takes appends again after a failed write (the caller has rebuilt what recorded the failed appends). */
  resumeWrites(): void {
    this.writer.resumeWrites();
  }

  /**
   * fsyncs everything appended so far (waiting for pending writes, without
   * holding up later appends) and moves the recovery point up to it.
   */
  async flush(): Promise<void> {
    await this.writer.enqueueTask(async () => undefined);
    await this.local.flushUpTo(this.local.highWatermark);
  }

  // ---------------------------------------------------------------- reads (log-reader.ts)

  /** See LogReader.read. */
  read(fetchOffset: number, maxBytes: number, options?: ReadOptions): Promise<ReadResult> {
    return this.reader.read(fetchOffset, maxBytes, options);
  }

  /** See LogReader.readBytes. */
  readBytes(fetchOffset: number, maxBytes: number, options?: ReadOptions): Promise<ReadBytesResult> {
    return this.reader.readBytes(fetchOffset, maxBytes, options);
  }

  /** See LogReader.forEachBatch. */
  forEachBatch(fromOffset: number, visit: (batch: Buffer) => void): Promise<void> {
    return this.reader.forEachBatch(fromOffset, visit);
  }

  /** See LogReader.abortedTransactions. */
  abortedTransactions(fetchOffset: number, upperBoundOffset: number): AbortedTxn[] {
    return this.reader.abortedTransactions(fetchOffset, upperBoundOffset);
  }

  /** See LogReader.offsetForTimestamp. */
  offsetForTimestamp(timestamp: number, startingOffset?: number): Promise<TimestampLookup | null> {
    return this.reader.offsetForTimestamp(timestamp, startingOffset);
  }

  /** See LogReader.batchWithMaxTimestamp. */
  batchWithMaxTimestamp(): Promise<TimestampLookup | null> {
    return this.reader.batchWithMaxTimestamp();
  }

  /**
   * Puts an aborted transaction found by replaying the log (producer-state
   * recovery) back into the transaction index of the segment holding its
   * marker, unless that index already has it (it reached the file before the
   * crash).
   */
  restoreAbortedTxn(txn: AbortedTxn): void {
    const segment = this.local.segments[this.local.floorSegmentIndex(txn.lastOffset)];
    if (segment && segment.lastAbortedTxnOffset < txn.lastOffset) segment.appendAbortedTxn(txn);
  }

  // ---------------------------------------------------------------- deletion and truncation (log-deletion.ts)

  /** See LogDeletion.deleteRecordsBefore. */
  deleteRecordsBefore(offset: number): Promise<number> {
    return this.deletion.deleteRecordsBefore(offset);
  }

  /** See LogDeletion.deleteOldSegments. */
  deleteOldSegments(): Promise<number> {
    return this.deletion.deleteOldSegments();
  }

  /** See LogDeletion.createCleanedSegment. */
  createCleanedSegment(baseOffset: number): Promise<LogSegment> {
    return this.deletion.createCleanedSegment(baseOffset);
  }

  /** See LogDeletion.replaceSegments. */
  replaceSegments(cleaned: LogSegment, old: LogSegment[]): Promise<boolean> {
    return this.deletion.replaceSegments(cleaned, old);
  }

  /**
   * Removes the batches at and after `offset` (Kafka's UnifiedLog.truncateTo,
   * what a follower does with a divergent tail): segments and their indexes,
   * the leader-epoch cache and the high watermark as LogDeletion.truncateTo
   * says; then the producer state, once loaded, is rebuilt to the new end
   * (the snapshots past it deleted first). The offsets change at once; the
   * promise settles once files and producer state follow: append again only
   * then (the follower truncates, then fetches).
   */
  truncateTo(offset: number): Promise<void> {
    const truncated = this.deletion.truncateTo(offset);
    const producers = this.producers;
    if (!producers) return truncated;
    return truncated.then(async () => {
      // A snapshot still being written may describe the removed tail: let it land, then loading deletes it.
      await producers.snapshotsWritten();
      await this.loadProducerState();
    });
  }

  /** See LogDeletion.segmentDeletionsSettled. */
  segmentDeletionsSettled(): Promise<void> {
    return this.deletion.segmentDeletionsSettled();
  }

  // ---------------------------------------------------------------- close

  /**
   * Waits for pending appends, then (unless flush is false) fsyncs and
   * writes the indexes out, and closes every file. Segments awaiting
   * deletion are removed now.
   */
  async close(options: { flush?: boolean } = {}): Promise<void> {
    const local = this.local;
    const writer = this.writer;
    const deletion = this.deletion;
    if (local.state !== 'open') return;
    local.state = 'closing';
    await writer.whenIdle();
    let write = options.flush !== false && !local.failure;
    let unclean: unknown;
    if (write) {
      await local.flushUpTo(local.highWatermark).catch((e) => {
        unclean = e;
        write = false;
      });
    }
    await local.flushChain;
    for (const s of local.segments) {
      try {
        if (write) await s.close();
        else await s.closeWithoutWriting();
      } catch (e) {
        unclean ??= e;
        local.logger.error({ dir: local.dir, segment: s.baseOffset, err: e }, 'error closing a segment');
      }
    }
    await deletion.finishAll();
    await local.epochs.persisted().catch(() => undefined);
    local.state = 'closed';
    // Files not written out (a full disk): the caller must not mark the shutdown clean, so the next start recovers.
    if (unclean !== undefined && options.flush !== false) throw local.ioError('Closing', unclean);
  }
}
