/**
 * One segment of a partition log (Kafka's LogSegment): a run of whole v2
 * record batches in `<base>.log`, with its offset, time and transaction
 * indexes. Its files are kept by segment-files.ts, its reads and lookups are
 * in segment-reads.ts; this class holds what the segment knows in memory and
 * changes it: appends, the roll decision, loading, recovery, truncation.
 *
 * In-memory state describes what has been written: `size` grows when a write
 * completes, never before, so a reader bounded by `size` never sees bytes
 * that are not in the file. Index entries live in typed arrays and reach the
 * index files on flush, roll and close. An old segment's indexes are read
 * lazily, on first lookup; a missing or inconsistent index file is rebuilt
 * from the log then. The transaction index is small and read when the segment
 * is opened; it cannot be rebuilt from the segment alone (an entry needs the
 * transaction's first offset, maybe in an older segment), so recovery cuts it
 * with the log and the producer-state replay adds back what a crash lost
 * (PartitionLog.restoreAbortedTxn).
 *
 * The PartitionLog serializes appends, truncation and roll; SegmentFiles
 * serializes the segment's own file operations (flush, close, rename).
 */
import * as fs from 'fs';
import type { Logger } from 'pino';
import { batchBaseOffset, batchLastOffsetDelta, batchMaxTimestamp, batchSize } from './batch-header';
import { readFully } from './file-io';
import { writeFully } from '../common/durable-file';
import type { LeaderEpochCache } from './leader-epoch-cache';
import { OFFSET_INDEX_ENTRY_SIZE, OffsetIndex } from './offset-index';
import { SegmentFiles } from './segment-files';
import { HeaderReader, SegmentReads, type BatchLocation, type ReadableSegment, type SegmentRead } from './segment-reads';
import { ScanResult, ScanSettings, scanSegment } from './segment-scan';
import { NO_TIMESTAMP, TIME_INDEX_ENTRY_SIZE, TimeIndex } from './time-index';
import { TransactionIndex, type AbortedTxn } from './transaction-index';

type FileHandle = fs.promises.FileHandle;

/** Per-segment settings, fixed when the segment is created or opened (as in Kafka). */
export interface SegmentSettings {
  indexIntervalBytes: number;
  /** segment.index.bytes: the index holds this / 8 entries, the time index this / 12, before a roll. */
  segmentIndexBytes: number;
  /** Random part subtracted from segment.ms for this segment (segment.jitter.ms). */
  rollJitterMs: number;
}

/** What the log knows about an append when deciding whether to roll first (Kafka's RollParams). */
export interface RollCheck {
  segmentBytes: number;
  segmentMs: number;
  /** Bytes the segment will hold before this append (size plus appends grouped ahead of it). */
  projectedSize: number;
  appendBytes: number;
  /** Largest timestamp and last offset in the append. */
  maxTimestamp: number;
  lastOffset: number;
  /** The rolling timestamp the segment will have if it is empty now (the first grouped append's). */
  firstAppendTimestamp: number;
  now: number;
}

/** The outcome of validating a segment (recover()). */
export interface RecoveryResult {
  truncatedBytes: number;
  /** Why the scan stopped before the end of the file, if it did. */
  problem?: string;
}

export class LogSegment implements ReadableSegment {
  /** Bytes of whole batches in the log file (everything written). */
  size = 0;
  /** Offset after the last batch, known for the active segment and for recovered ones. */
  nextOffset: number;
  /** Largest batch max timestamp and that batch's last offset; undefined until known (lazy index load). */
  maxTimestampSoFar: number | undefined = NO_TIMESTAMP;
  offsetOfMaxTimestampSoFar: number;
  /** Kafka's rollingBasedTimestamp: the first append's largest timestamp. */
  rollingBasedTimestamp: number | undefined;
  /** When this segment object was created (wall clock), for rolling when batches have no timestamps. */
  created: number;

  private offsetIndex?: OffsetIndex;
  private timeIndex?: TimeIndex;
  private loadingIndexes?: Promise<void>;
  private txnIndex = new TransactionIndex();
  private bytesSinceLastIndexEntry = 0;
  private readonly files: SegmentFiles;
  private readonly reads = new SegmentReads(this);

  private constructor(
    dir: string,
    readonly baseOffset: number,
    file: FileHandle,
    readonly settings: SegmentSettings,
    private readonly logger: Logger,
    now: number,
    fileSuffix: string,
  ) {
    this.nextOffset = baseOffset;
    this.offsetOfMaxTimestampSoFar = baseOffset;
    this.created = now;
    this.files = new SegmentFiles(dir, baseOffset, file, fileSuffix, () => ({ offsetIndex: this.offsetIndex, timeIndex: this.timeIndex, txnIndex: this.txnIndex }));
  }

  get logPath(): string {
    return this.files.logPath;
  }

  /** The open log file, for callers that read byte ranges themselves. */
  get fileHandle(): FileHandle {
    return this.files.log;
  }

  private get maxIndexEntries(): number {
    return Math.floor(this.settings.segmentIndexBytes / OFFSET_INDEX_ENTRY_SIZE);
  }

  private get maxTimeIndexEntries(): number {
    return Math.floor(this.settings.segmentIndexBytes / TIME_INDEX_ENTRY_SIZE);
  }

  private scanSettings(): ScanSettings {
    return { indexIntervalBytes: this.settings.indexIntervalBytes, maxIndexEntries: this.maxIndexEntries, maxTimeIndexEntries: this.maxTimeIndexEntries };
  }

  /** A new, empty segment (replacing any leftover files of that name); fileSuffix for the cleaner's output. */
  static async create(dir: string, baseOffset: number, settings: SegmentSettings, logger: Logger, now: number, fileSuffix = ''): Promise<LogSegment> {
    const file = await fs.promises.open(SegmentFiles.logPath(dir, baseOffset, fileSuffix), 'w+', 0o644);
    const segment = new LogSegment(dir, baseOffset, file, settings, logger, now, fileSuffix);
    segment.offsetIndex = new OffsetIndex(baseOffset, segment.maxIndexEntries);
    segment.timeIndex = new TimeIndex(baseOffset, segment.maxTimeIndexEntries);
    await segment.files.createIndexFiles();
    return segment;
  }

  /**
   * An existing segment. Its indexes are not read yet; its largest timestamp
   * comes from the time index's last entry (always written when a segment
   * stops being active).
   */
  static async open(dir: string, baseOffset: number, settings: SegmentSettings, logger: Logger, now: number, fileSuffix = ''): Promise<LogSegment> {
    const file = await fs.promises.open(SegmentFiles.logPath(dir, baseOffset, fileSuffix), 'r+');
    const segment = new LogSegment(dir, baseOffset, file, settings, logger, now, fileSuffix);
    try {
      segment.size = (await file.stat()).size;
      await segment.readLastTimeIndexEntry();
      segment.txnIndex = (await segment.files.readTxnIndex(logger)) ?? segment.txnIndex;
    } catch (e) {
      await file.close();
      throw e;
    }
    return segment;
  }

  private async readLastTimeIndexEntry(): Promise<void> {
    let fh: FileHandle | undefined;
    try {
      fh = await fs.promises.open(this.files.timeIndexPath, 'r');
      const length = (await fh.stat()).size;
      if (length % TIME_INDEX_ENTRY_SIZE !== 0) {
        this.maxTimestampSoFar = undefined; // damaged: known once the index is rebuilt
      } else if (length > 0) {
        const entry = Buffer.allocUnsafe(TIME_INDEX_ENTRY_SIZE);
        await readFully(fh, entry, 0, TIME_INDEX_ENTRY_SIZE, length - TIME_INDEX_ENTRY_SIZE);
        this.maxTimestampSoFar = TimeIndex.decode(entry, this.baseOffset, 1).lastEntry().timestamp;
        this.offsetOfMaxTimestampSoFar = this.baseOffset + entry.readInt32BE(8);
      }
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
      this.maxTimestampSoFar = this.size === 0 ? NO_TIMESTAMP : undefined;
    } finally {
      await fh?.close();
    }
  }

  // ---------------------------------------------------------------- indexes

  /** Reads (or rebuilds) the index files on first use. */
  async loadIndexes(): Promise<{ offsetIndex: OffsetIndex; timeIndex: TimeIndex }> {
    if (!this.offsetIndex || !this.timeIndex) {
      this.loadingIndexes ??= this.readIndexFiles();
      await this.loadingIndexes;
    }
    return { offsetIndex: this.offsetIndex!, timeIndex: this.timeIndex! };
  }

  /** Bytes the offset and time indexes take (Kafka's sizeInBytes): the cleaner keeps a merged segment's within segment.index.bytes. */
  async indexSizes(): Promise<{ offsetIndexBytes: number; timeIndexBytes: number }> {
    const { offsetIndex, timeIndex } = await this.loadIndexes();
    return { offsetIndexBytes: offsetIndex.entries * OFFSET_INDEX_ENTRY_SIZE, timeIndexBytes: timeIndex.entries * TIME_INDEX_ENTRY_SIZE };
  }

  /** True once the indexes are in memory. */
  get indexesLoaded(): boolean {
    return this.offsetIndex !== undefined;
  }

  private async readIndexFiles(): Promise<void> {
    const read = await this.files.readIndexes(this.size, this.maxIndexEntries, this.maxTimeIndexEntries);
    if (!('problem' in read)) {
      this.offsetIndex = read.offsetIndex;
      this.timeIndex = read.timeIndex;
      if (this.maxTimestampSoFar === undefined) {
        const last = read.timeIndex.lastEntry();
        this.maxTimestampSoFar = last.timestamp;
        this.offsetOfMaxTimestampSoFar = last.offset;
      }
      return;
    }
    this.logger.warn({ segment: this.logPath, problem: read.problem }, 'rebuilding the indexes of a segment');
    const scan = await scanSegment(this.fileHandle, this.baseOffset, this.scanSettings(), false);
    if (scan.problem !== undefined) {
      // An old segment is damaged in the middle; keep what is readable and say so.
      this.logger.error({ segment: this.logPath, position: scan.validBytes, problem: scan.problem }, 'segment is corrupt past this position; it is not readable beyond it');
      this.size = scan.validBytes;
    }
    this.applyScan(scan);
    await this.files.rewriteIndexes();
  }

  /**
   * Prepares this segment to take appends (it is, or becomes, the last one):
   * loads its indexes and reads what Kafka reads lazily (next offset, the
   * first batch's timestamp for rolling) from the batch headers after the
   * last offset index entry. The largest timestamp is the time index's last
   * entry, which closing a segment always writes; after a truncation
   * (timeIndexIsBehind) the batches after that entry are scanned too.
   */
  async loadAsActive(timeIndexIsBehind = false): Promise<void> {
    const { offsetIndex, timeIndex } = await this.loadIndexes();
    const lastEntry = offsetIndex.lookup(Number.MAX_SAFE_INTEGER);
    const timeEntry = timeIndex.lastEntry();
    const reader = new HeaderReader(this, this.size);
    let maxTimestamp = timeEntry.timestamp;
    let offsetOfMax = timeEntry.offset;
    let nextOffset = Math.max(this.baseOffset, offsetIndex.entries > 0 ? lastEntry.offset + 1 : this.baseOffset);
    const from = timeIndexIsBehind ? Math.min(lastEntry.position, offsetIndex.lookup(timeEntry.offset).position) : lastEntry.position;
    for (let position = from; position < this.size; ) {
      const batch = await reader.batchAt(position);
      if (batch.maxTimestamp > maxTimestamp) {
        maxTimestamp = batch.maxTimestamp;
        offsetOfMax = batch.lastOffset;
      }
      nextOffset = Math.max(nextOffset, batch.lastOffset + 1);
      position += batch.size;
    }
    this.nextOffset = nextOffset;
    this.maxTimestampSoFar = maxTimestamp;
    this.offsetOfMaxTimestampSoFar = offsetOfMax;
    this.bytesSinceLastIndexEntry = offsetIndex.entries > 0 ? this.size - lastEntry.position : this.size;
    this.rollingBasedTimestamp = this.size > 0 ? (await reader.batchAt(0)).maxTimestamp : undefined;
  }

  private applyScan(scan: ScanResult): void {
    this.offsetIndex = scan.offsetIndex;
    this.timeIndex = scan.timeIndex;
    this.nextOffset = scan.nextOffset;
    this.maxTimestampSoFar = scan.maxTimestamp;
    this.offsetOfMaxTimestampSoFar = scan.offsetOfMaxTimestamp;
    this.rollingBasedTimestamp = scan.firstTimestamp;
    this.bytesSinceLastIndexEntry = scan.bytesSinceLastIndexEntry;
  }

  // ---------------------------------------------------------------- appends

  /** Kafka's shouldRoll: size, age (by message timestamps when there are any), a full index, an offset overflow. */
  shouldRoll(check: RollCheck): boolean {
    const { offsetIndex, timeIndex } = this.activeIndexes();
    const empty = check.projectedSize === 0;
    const rollingTimestamp = this.size === 0 ? check.firstAppendTimestamp : (this.rollingBasedTimestamp ?? NO_TIMESTAMP);
    const waited = rollingTimestamp >= 0 ? check.maxTimestamp - rollingTimestamp : check.now - this.created;
    return (
      check.projectedSize > check.segmentBytes - check.appendBytes ||
      (!empty && waited > check.segmentMs - this.settings.rollJitterMs) ||
      (!empty && (offsetIndex.isFull() || timeIndex.isFull())) ||
      !offsetIndex.canAppendOffset(check.lastOffset)
    );
  }

  private activeIndexes(): { offsetIndex: OffsetIndex; timeIndex: TimeIndex } {
    if (!this.offsetIndex || !this.timeIndex) throw new Error(`Segment ${this.logPath} is not loaded as active`);
    return { offsetIndex: this.offsetIndex, timeIndex: this.timeIndex };
  }

  /**
   * Writes whole batches (already stamped with their offsets) at the end of
   * the file with one positional write, then indexes them: an offset index
   * entry (batch last offset -> batch position) whenever more than
   * index.interval.bytes were appended since the last one, and a time index
   * entry beside it when the largest timestamp grew.
   */
  async append(chunks: readonly Buffer[]): Promise<void> {
    const { offsetIndex, timeIndex } = this.activeIndexes();
    const start = this.size;
    await writeFully(this.files.log, chunks, start, this.logPath);
    let position = start;
    for (const chunk of chunks) {
      for (let at = 0; at < chunk.length; ) {
        const size = batchSize(chunk, at);
        const lastOffset = batchBaseOffset(chunk, at) + batchLastOffsetDelta(chunk, at);
        const maxTimestamp = batchMaxTimestamp(chunk, at);
        if (position === 0) this.rollingBasedTimestamp = maxTimestamp;
        if (maxTimestamp > (this.maxTimestampSoFar ?? NO_TIMESTAMP)) {
          this.maxTimestampSoFar = maxTimestamp;
          this.offsetOfMaxTimestampSoFar = lastOffset;
        }
        if (this.bytesSinceLastIndexEntry > this.settings.indexIntervalBytes) {
          offsetIndex.append(lastOffset, position);
          timeIndex.maybeAppend(this.maxTimestampSoFar!, this.offsetOfMaxTimestampSoFar);
          this.bytesSinceLastIndexEntry = 0;
        }
        this.bytesSinceLastIndexEntry += size;
        this.nextOffset = lastOffset + 1;
        position += size;
        at += size;
      }
    }
    this.size = position;
  }

  /** Records a transaction aborted by a marker in this segment (in memory; the file follows on flush, roll and close). */
  appendAbortedTxn(txn: AbortedTxn): void {
    this.txnIndex.append(txn);
  }

  /** Marker offset of the last aborted transaction recorded here, -1 when none. */
  get lastAbortedTxnOffset(): number {
    return this.txnIndex.lastOffset;
  }

  /** See TransactionIndex.collect. */
  collectAbortedTxns(fetchOffset: number, upperBoundOffset: number, into: AbortedTxn[]): boolean {
    return this.txnIndex.collect(fetchOffset, upperBoundOffset, into);
  }

  // ---------------------------------------------------------------- reads (segment-reads.ts)

  /** See SegmentReads.findBatch. */
  findBatch(offset: number, maxPosition?: number): Promise<BatchLocation | null> {
    return this.reads.findBatch(offset, maxPosition);
  }

  /** See SegmentReads.read. */
  read(startOffset: number, maxBytes: number, maxPosition: number, minOneMessage: boolean): Promise<SegmentRead | null> {
    return this.reads.read(startOffset, maxBytes, maxPosition, minOneMessage);
  }

  /** See SegmentReads.findBatchByTimestamp. */
  findBatchByTimestamp(timestamp: number, startingOffset: number): Promise<BatchLocation | null> {
    return this.reads.findBatchByTimestamp(timestamp, startingOffset);
  }

  /** See SegmentReads.forEachBatch. */
  forEachBatch(fromOffset: number, maxPosition: number, visit: (batch: Buffer) => void): Promise<void> {
    return this.reads.forEachBatch(fromOffset, maxPosition, visit);
  }

  /** The largest timestamp in this segment (reads the indexes if it is not known yet). */
  async largestTimestamp(): Promise<number> {
    if (this.maxTimestampSoFar === undefined) await this.loadIndexes();
    return this.maxTimestampSoFar ?? NO_TIMESTAMP;
  }

  /** Reads `length` bytes at `position` into buf at `offset`; returns the bytes read (short only if the file shrank). */
  readInto(buf: Buffer, offset: number, position: number, length: number): Promise<number> {
    return readFully(this.files.log, buf, offset, length, position);
  }

  // ---------------------------------------------------------------- recovery

  /**
   * Validates the whole file batch by batch (see segment-scan.ts), rebuilds
   * both indexes from it, re-derives leader epochs, and truncates a torn or
   * corrupt tail (Kafka's LogSegment.recover).
   */
  async recover(epochs?: LeaderEpochCache): Promise<RecoveryResult> {
    const scan = await scanSegment(this.files.log, this.baseOffset, this.scanSettings(), true, epochs);
    const truncatedBytes = scan.fileSize - scan.validBytes;
    if (truncatedBytes > 0) await this.files.log.truncate(scan.validBytes);
    this.size = scan.validBytes;
    this.applyScan(scan);
    this.txnIndex.truncateTo(this.nextOffset);
    await this.files.rewriteIndexes();
    return scan.problem === undefined ? { truncatedBytes } : { truncatedBytes, problem: scan.problem };
  }

  // ---------------------------------------------------------------- truncation

  /**
   * Removes every batch containing offsets >= offset (Kafka's truncateTo):
   * cuts the file where that batch starts, drops index entries at or above
   * it, and leaves the segment ready for appends. Returns the bytes removed.
   */
  async truncateTo(offset: number, now: number): Promise<number> {
    this.reads.forgetNextRead();
    try {
      return await this.cutAt(offset, now);
    } finally {
      this.reads.forgetNextRead();
    }
  }

  private async cutAt(offset: number, now: number): Promise<number> {
    const { offsetIndex, timeIndex } = await this.loadIndexes();
    const batch = await this.findBatch(offset);
    offsetIndex.truncateTo(offset);
    timeIndex.truncateTo(offset);
    this.txnIndex.truncateTo(offset);
    let removed = 0;
    if (batch) {
      removed = this.size - batch.position;
      await this.files.log.truncate(batch.position);
      this.size = batch.position;
    }
    // Entries removed from memory may still be in the index files: cut them there too.
    await this.files.writeIndexes();
    if (this.size === 0) this.created = now;
    await this.loadAsActive(true);
    return removed;
  }

  // ---------------------------------------------------------------- files (segment-files.ts)

  /** fsyncs the log file and writes and fsyncs the index files (no-op once deleted). */
  flush(): Promise<void> {
    return this.files.flush();
  }

  /**
   * The segment stops being active (a roll): its time index gets the largest
   * timestamp as last entry, and the index files are written out (fsync
   * comes with the flush that follows a roll).
   */
  onBecomeInactive(): Promise<void> {
    if (this.timeIndex && this.maxTimestampSoFar !== undefined) this.timeIndex.maybeAppend(this.maxTimestampSoFar, this.offsetOfMaxTimestampSoFar);
    return this.files.writeIndexes();
  }

  /** Writes the indexes out (with the final time index entry) and closes the file, even when the index writes fail. */
  async close(): Promise<void> {
    try {
      if (!this.files.deleted) await this.onBecomeInactive();
    } finally {
      await this.files.close();
    }
  }

  /** Cuts whatever a failed append left in the file past the last whole write (`size`). */
  discardUnwrittenTail(): Promise<void> {
    return this.files.log.truncate(this.size);
  }

  /** See SegmentFiles.changeSuffix. */
  changeFileSuffix(suffix: string): Promise<void> {
    return this.files.changeSuffix(suffix);
  }

  /** See SegmentFiles.markDeleted. */
  markDeleted(): Promise<void> {
    return this.files.markDeleted();
  }

  /** See SegmentFiles.deleteFiles. */
  deleteFiles(): Promise<void> {
    return this.files.deleteFiles();
  }

  /** See SegmentFiles.closeWithoutWriting. */
  closeWithoutWriting(): Promise<void> {
    return this.files.closeWithoutWriting();
  }
}
