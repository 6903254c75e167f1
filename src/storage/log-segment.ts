/**
 * One segment of a partition log (Kafka's LogSegment): `<base>.log` holds
 * whole v2 record batches back to back, `<base>.index` and `<base>.timeindex`
 * are its sparse indexes (offset-index.ts, time-index.ts), `<base>.txnindex`
 * lists the transactions aborted by markers in it (transaction-index.ts; only
 * once there is one). The base offset, 20 digits zero-padded, names the files.
 *
 * In-memory state describes what has been written: `size` grows when a write
 * completes, never before, so a reader bounded by `size` never sees bytes
 * that are not in the file. Index entries live in typed arrays and reach the
 * index files on flush, roll and close (the files are only needed after a
 * restart, and recovery rebuilds them for every segment it validates). An
 * old segment's indexes are read lazily, on first lookup; a missing or
 * inconsistent index file is rebuilt from the log then. The transaction
 * index is small and read when the segment is opened; it cannot be rebuilt
 * from the segment alone (an entry needs the transaction's first offset, maybe
 * in an older segment), so recovery cuts it with the log and the producer-state
 * replay adds back what a crash lost (PartitionLog.restoreAbortedTxn).
 *
 * Reads return byte ranges of whole batches, found by a binary search in the
 * offset index and a forward scan of batch headers (headers only) from there.
 *
 * The cleaner's segments carry a file suffix while they are being written
 * (`.cleaned`) and swapped in (`.swap`); changeFileSuffix() renames all the
 * files, the log file last (log-loader.ts completeSwaps relies on that order).
 *
 * The PartitionLog serializes appends, truncation and roll; this class only
 * serializes its own index-file operations (flush, close, rename).
 */
import * as fs from 'fs';
import * as path from 'path';
import type { Logger } from 'pino';
import {
  BATCH_HEADER_SIZE,
  batchBaseOffset,
  batchLastOffsetDelta,
  batchMaxTimestamp,
  batchSize,
  isControlBatch,
} from './batch-header';
import { StorageError } from './errors';
import { readFully, readOptionalFile } from './file-io';
import { writeFully } from '../common/durable-file';
import type { LeaderEpochCache } from './leader-epoch-cache';
import { OFFSET_INDEX_ENTRY_SIZE, OffsetIndex } from './offset-index';
import { ScanResult, ScanSettings, scanSegment } from './segment-scan';
import { NO_TIMESTAMP, TIME_INDEX_ENTRY_SIZE, TimeIndex } from './time-index';
import { TXN_INDEX_ENTRY_SIZE, TransactionIndex, type AbortedTxn } from './transaction-index';

type FileHandle = fs.promises.FileHandle;

export const LOG_FILE_SUFFIX = '.log';
export const INDEX_FILE_SUFFIX = '.index';
export const TIME_INDEX_FILE_SUFFIX = '.timeindex';
export const TXN_INDEX_FILE_SUFFIX = '.txnindex';
/** Appended to the files of a segment that is being deleted. */
export const DELETED_FILE_SUFFIX = '.deleted';
/** Appended to the files of a segment the cleaner is writing (removed at start-up: an unfinished cleaning). */
export const CLEANED_FILE_SUFFIX = '.cleaned';
/** Appended to the files of a cleaned segment about to replace old ones (completed at start-up). */
export const SWAP_FILE_SUFFIX = '.swap';

/** Bytes read at a time when scanning batch headers (about one index interval of small batches). */
const HEADER_SCAN_CHUNK = 8192;
/**
 * Bytes read at a time when replaying every batch header of a range (forEachBatch): large, so
 * that a replay after a crash costs one read per MiB rather than one per batch (batches over
 * 8 KiB each needed a read of their own: 1 GiB of 16 KiB batches took about 10 s).
 */
const REPLAY_CHUNK = 1 << 20;

export function segmentFileName(baseOffset: number, suffix: string): string {
  return String(baseOffset).padStart(20, '0') + suffix;
}

/** Per-segment settings, fixed when the segment is created or opened (as in Kafka). */
export interface SegmentSettings {
  indexIntervalBytes: number;
  /** segment.index.bytes: the index holds this / 8 entries, the time index this / 12, before a roll. */
  segmentIndexBytes: number;
  /** Random part subtracted from segment.ms for this segment (segment.jitter.ms). */
  rollJitterMs: number;
}

/** Where one batch is in the segment, from its header. */
export interface BatchLocation {
  position: number;
  size: number;
  baseOffset: number;
  lastOffset: number;
  maxTimestamp: number;
}

/** A byte range of whole batches, from LogSegment.read. */
export interface SegmentRead {
  position: number;
  /** 0 when the first batch is larger than maxBytes and minOneMessage was false. */
  length: number;
  /** Base offset of the first batch (it may be below the offset asked for). */
  firstBatchOffset: number;
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

/** Reads batch headers through one small buffer, never past `limit`. */
class HeaderReader {
  private readonly buf: Buffer;
  private start = 0;
  private length = 0;

  constructor(
    private readonly file: FileHandle,
    private readonly limit: number,
    chunkBytes = HEADER_SCAN_CHUNK,
  ) {
    this.buf = Buffer.allocUnsafe(Math.min(chunkBytes, Math.max(limit, BATCH_HEADER_SIZE)));
  }

  get bytes(): Buffer {
    return this.buf;
  }

  /** Index in `bytes` of the header at `position`, or -1 at or past the limit (or on a short file). */
  async at(position: number): Promise<number> {
    if (position + BATCH_HEADER_SIZE > this.limit) return -1;
    if (position < this.start || position + BATCH_HEADER_SIZE > this.start + this.length) {
      const want = Math.min(this.buf.length, this.limit - position);
      this.start = position;
      this.length = await readFully(this.file, this.buf, 0, want, position);
      if (this.length < BATCH_HEADER_SIZE) return -1;
    }
    return position - this.start;
  }
}

/** Writes `bytes` as the whole content of `file` (an index rebuilt in memory; a crash midway only means another rebuild). */
async function replaceFile(file: string, bytes: Buffer): Promise<void> {
  const fh = await fs.promises.open(file, 'w', 0o644);
  try {
    await writeFully(fh, [bytes], 0, file);
  } finally {
    await fh.close();
  }
}

function corrupt(segment: LogSegment, position: number, what: string): StorageError {
  return new StorageError('KAFKA_STORAGE_ERROR', `Corrupt batch at position ${position} of ${segment.logPath}: ${what}`);
}

export class LogSegment {
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
  /** Set once the segment has left the log (deleted or truncated away). */
  deleted = false;
  /**
   * The batch right after the range the last read() returned (from the header read to find where
   * that range ends), so that a sequential consumer's next fetch costs no header reads; and a count
   * bumped when a truncation starts and ends, which invalidates it.
   */
  private nextRead: BatchLocation | undefined;
  private truncations = 0;

  private offsetIndex?: OffsetIndex;
  private timeIndex?: TimeIndex;
  private loadingIndexes?: Promise<void>;
  /** Entries of each index that are in its file (the file may hold more after a truncation). */
  private offsetIndexFileEntries = 0;
  private timeIndexFileEntries = 0;
  private txnIndex = new TransactionIndex();
  private txnIndexFileEntries = 0;
  private bytesSinceLastIndexEntry = 0;
  /** Serializes index-file writes, flush, rename and close. */
  private fileOps: Promise<unknown> = Promise.resolve();

  private constructor(
    private dir: string,
    readonly baseOffset: number,
    private readonly file: FileHandle,
    readonly settings: SegmentSettings,
    private readonly logger: Logger,
    now: number,
    /** '' for a segment of the log; CLEANED_FILE_SUFFIX or SWAP_FILE_SUFFIX while the cleaner replaces segments. */
    private fileSuffix: string,
  ) {
    this.nextOffset = baseOffset;
    this.offsetOfMaxTimestampSoFar = baseOffset;
    this.created = now;
  }

  get logPath(): string {
    return path.join(this.dir, segmentFileName(this.baseOffset, LOG_FILE_SUFFIX) + this.fileSuffix);
  }

  get indexPath(): string {
    return path.join(this.dir, segmentFileName(this.baseOffset, INDEX_FILE_SUFFIX) + this.fileSuffix);
  }

  get timeIndexPath(): string {
    return path.join(this.dir, segmentFileName(this.baseOffset, TIME_INDEX_FILE_SUFFIX) + this.fileSuffix);
  }

  get txnIndexPath(): string {
    return path.join(this.dir, segmentFileName(this.baseOffset, TXN_INDEX_FILE_SUFFIX) + this.fileSuffix);
  }

  /**
   * The log file last: renames go in this order, so while `<base>.log` keeps
   * its name every index file beside it belongs to it (start-up relies on
   * that to finish an interrupted swap, see log-loader.ts completeSwaps).
   */
  private get allPaths(): string[] {
    return [this.indexPath, this.timeIndexPath, this.txnIndexPath, this.logPath];
  }

  /** The open log file, for callers that read byte ranges themselves. */
  get fileHandle(): FileHandle {
    return this.file;
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
    const file = await fs.promises.open(path.join(dir, segmentFileName(baseOffset, LOG_FILE_SUFFIX) + fileSuffix), 'w+', 0o644);
    const segment = new LogSegment(dir, baseOffset, file, settings, logger, now, fileSuffix);
    segment.offsetIndex = new OffsetIndex(baseOffset, segment.maxIndexEntries);
    segment.timeIndex = new TimeIndex(baseOffset, segment.maxTimeIndexEntries);
    await fs.promises.writeFile(segment.indexPath, Buffer.alloc(0));
    await fs.promises.writeFile(segment.timeIndexPath, Buffer.alloc(0));
    await fs.promises.rm(segment.txnIndexPath, { force: true });
    return segment;
  }

  /**
   * An existing segment. Its indexes are not read yet; its largest timestamp
   * comes from the time index's last entry (always written when a segment
   * stops being active).
   */
  static async open(dir: string, baseOffset: number, settings: SegmentSettings, logger: Logger, now: number, fileSuffix = ''): Promise<LogSegment> {
    const file = await fs.promises.open(path.join(dir, segmentFileName(baseOffset, LOG_FILE_SUFFIX) + fileSuffix), 'r+');
    const segment = new LogSegment(dir, baseOffset, file, settings, logger, now, fileSuffix);
    try {
      segment.size = (await file.stat()).size;
      await segment.readLastTimeIndexEntry();
      await segment.readTxnIndexFile();
    } catch (e) {
      await file.close();
      throw e;
    }
    return segment;
  }

  private async readLastTimeIndexEntry(): Promise<void> {
    let fh: FileHandle | undefined;
    try {
      fh = await fs.promises.open(this.timeIndexPath, 'r');
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

  private async readTxnIndexFile(): Promise<void> {
    const bytes = await readOptionalFile(this.txnIndexPath);
    if (!bytes) return;
    const { index, problem } = TransactionIndex.decode(bytes);
    this.txnIndex = index;
    this.txnIndexFileEntries = index.entries;
    if (problem !== null) {
      // Keep the whole entries before the damage; the producer-state replay re-adds those it covers.
      this.logger.warn({ segment: this.logPath, problem }, 'cutting a damaged transaction index');
      await fs.promises.truncate(this.txnIndexPath, index.entries * TXN_INDEX_ENTRY_SIZE);
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
    const [indexBytes, timeIndexBytes] = await Promise.all([readOptionalFile(this.indexPath), readOptionalFile(this.timeIndexPath)]);
    let problem: string | null = null;
    let offsetIndex: OffsetIndex | undefined;
    let timeIndex: TimeIndex | undefined;
    if (!indexBytes || !timeIndexBytes) problem = `${!indexBytes ? 'offset' : 'time'} index file is missing`;
    else if (indexBytes.length % OFFSET_INDEX_ENTRY_SIZE !== 0) problem = `offset index size ${indexBytes.length} is not a multiple of ${OFFSET_INDEX_ENTRY_SIZE}`;
    else if (timeIndexBytes.length % TIME_INDEX_ENTRY_SIZE !== 0) problem = `time index size ${timeIndexBytes.length} is not a multiple of ${TIME_INDEX_ENTRY_SIZE}`;
    else {
      offsetIndex = OffsetIndex.decode(indexBytes, this.baseOffset, this.maxIndexEntries);
      timeIndex = TimeIndex.decode(timeIndexBytes, this.baseOffset, this.maxTimeIndexEntries);
      problem = offsetIndex.problem(this.size) ?? timeIndex.problem();
    }
    if (problem === null) {
      this.offsetIndex = offsetIndex;
      this.timeIndex = timeIndex;
      this.offsetIndexFileEntries = offsetIndex!.entries;
      this.timeIndexFileEntries = timeIndex!.entries;
      if (this.maxTimestampSoFar === undefined) {
        const last = timeIndex!.lastEntry();
        this.maxTimestampSoFar = last.timestamp;
        this.offsetOfMaxTimestampSoFar = last.offset;
      }
      return;
    }
    this.logger.warn({ segment: this.logPath, problem }, 'rebuilding the indexes of a segment');
    const scan = await scanSegment(this.file, this.baseOffset, this.scanSettings(), false);
    if (scan.problem !== undefined) {
      // An old segment is damaged in the middle; keep what is readable and say so.
      this.logger.error({ segment: this.logPath, position: scan.validBytes, problem: scan.problem }, 'segment is corrupt past this position; it is not readable beyond it');
      this.size = scan.validBytes;
    }
    this.applyScan(scan);
    await this.rewriteIndexFiles();
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
    const reader = new HeaderReader(this.file, this.size);
    let maxTimestamp = timeEntry.timestamp;
    let offsetOfMax = timeEntry.offset;
    let nextOffset = Math.max(this.baseOffset, offsetIndex.entries > 0 ? lastEntry.offset + 1 : this.baseOffset);
    const from = timeIndexIsBehind ? Math.min(lastEntry.position, offsetIndex.lookup(timeEntry.offset).position) : lastEntry.position;
    for (let position = from; position < this.size; ) {
      const batch = await this.headerAt(reader, position);
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
    this.rollingBasedTimestamp = this.size > 0 ? (await this.headerAt(reader, 0)).maxTimestamp : undefined;
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
    await writeFully(this.file, chunks, start, this.logPath);
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

  // ---------------------------------------------------------------- reads

  private async headerAt(reader: HeaderReader, position: number): Promise<BatchLocation> {
    const at = await reader.at(position);
    if (at < 0) throw corrupt(this, position, 'batch header runs past the end of the segment');
    return this.locationAt(reader.bytes, at, position);
  }

  private locationAt(buf: Buffer, at: number, position: number): BatchLocation {
    const size = batchSize(buf, at);
    if (size < BATCH_HEADER_SIZE) throw corrupt(this, position, `batch size ${size}`);
    const baseOffset = batchBaseOffset(buf, at);
    return { position, size, baseOffset, lastOffset: baseOffset + batchLastOffsetDelta(buf, at), maxTimestamp: batchMaxTimestamp(buf, at) };
  }

  /**
   * The batch containing `offset` (or the first one after it, if offsets
   * have a gap there) among the batches starting before maxPosition; null
   * when there is none (Kafka's translateOffset).
   */
  async findBatch(offset: number, maxPosition = this.size): Promise<BatchLocation | null> {
    const { offsetIndex } = await this.loadIndexes();
    const limit = Math.min(maxPosition, this.size);
    const next = this.nextRead;
    if (next && next.baseOffset <= offset && offset <= next.lastOffset && next.position + next.size <= limit) return next;
    const reader = new HeaderReader(this.file, limit);
    for (let position = offsetIndex.lookup(offset).position; position < limit; ) {
      const batch = await this.headerAt(reader, position);
      if (batch.lastOffset >= offset) return batch;
      position += batch.size;
    }
    return null;
  }

  /**
   * The last batch boundary in [from, limit]: where a read of whole batches starting at `from` must
   * stop; and the batch that starts there, when its header had to be read (it crosses the limit).
   */
  private async batchEndAtOrBefore(from: number, limit: number, knownBoundary: number): Promise<{ stop: number; next?: BatchLocation }> {
    if (limit >= knownBoundary) return { stop: knownBoundary };
    const { offsetIndex } = await this.loadIndexes();
    const reader = new HeaderReader(this.file, limit + BATCH_HEADER_SIZE);
    let position = Math.max(from, offsetIndex.batchStartAtOrBefore(limit));
    for (;;) {
      const at = position < limit ? await reader.at(position) : -1;
      if (at < 0) return { stop: position };
      const batch = this.locationAt(reader.bytes, at, position);
      if (position + batch.size > limit) return { stop: position, next: batch };
      position += batch.size;
    }
  }

  /**
   * Whole batches starting with the one that contains startOffset, at most
   * maxBytes of them, never at or past maxPosition (a batch boundary: the
   * high watermark's or last stable offset's position, or the segment's
   * size). With minOneMessage the first batch is returned even when it is
   * larger than maxBytes (KIP-74). Null when no batch here reaches
   * startOffset.
   */
  async read(startOffset: number, maxBytes: number, maxPosition: number, minOneMessage: boolean): Promise<SegmentRead | null> {
    const end = Math.min(maxPosition, this.size);
    const first = await this.findBatch(startOffset, end);
    if (!first) return null;
    const limit = Math.min(end, first.position + Math.max(0, maxBytes));
    const truncations = this.truncations;
    const { stop: boundary, next } = await this.batchEndAtOrBefore(first.position, limit, end);
    const stop = boundary === first.position && minOneMessage ? first.position + first.size : boundary;
    // A consumer's next fetch starts where this one stops: keep that batch's header, so that findBatch
    // finds it without reading the file again (unless a truncation began or ended meanwhile).
    if (next && next.position === stop && truncations === this.truncations) this.nextRead = next;
    return { position: first.position, length: stop - first.position, firstBatchOffset: first.baseOffset };
  }

  /**
   * The first batch whose max timestamp is >= timestamp and whose last offset
   * is >= startingOffset (Kafka's findOffsetByTimestamp stops at the batch
   * level: finding the first RECORD needs the records, which the caller
   * decodes). Null when there is none in this segment.
   */
  async findBatchByTimestamp(timestamp: number, startingOffset: number): Promise<BatchLocation | null> {
    const { offsetIndex, timeIndex } = await this.loadIndexes();
    const entry = timeIndex.lookup(timestamp);
    const reader = new HeaderReader(this.file, this.size);
    for (let position = offsetIndex.lookup(Math.max(entry.offset, startingOffset)).position; position < this.size; ) {
      const batch = await this.headerAt(reader, position);
      if (batch.maxTimestamp >= timestamp && batch.lastOffset >= startingOffset) return batch;
      position += batch.size;
    }
    return null;
  }

  /**
   * Calls visit for each batch from the one containing fromOffset up to
   * maxPosition, with a view of its 61-byte header, or of the whole batch when
   * it is a control batch (a transaction marker, whose record carries the
   * coordinator epoch). The view is valid only during the call.
   */
  async forEachBatch(fromOffset: number, maxPosition: number, visit: (batch: Buffer) => void): Promise<void> {
    const limit = Math.min(maxPosition, this.size);
    const first = await this.findBatch(fromOffset, limit);
    if (!first) return;
    const reader = new HeaderReader(this.file, limit, REPLAY_CHUNK);
    for (let position = first.position; position < limit; ) {
      const at = await reader.at(position);
      if (at < 0) throw corrupt(this, position, 'batch header runs past the end of the segment');
      const buf = reader.bytes;
      const size = batchSize(buf, at);
      if (size < BATCH_HEADER_SIZE) throw corrupt(this, position, `batch size ${size}`);
      if (isControlBatch(buf, at)) {
        const whole = Buffer.allocUnsafe(size);
        await readFully(this.file, whole, 0, size, position);
        visit(whole);
      } else {
        visit(buf.subarray(at, at + BATCH_HEADER_SIZE));
      }
      position += size;
    }
  }

  /** The largest timestamp in this segment (reads the indexes if it is not known yet). */
  async largestTimestamp(): Promise<number> {
    if (this.maxTimestampSoFar === undefined) await this.loadIndexes();
    return this.maxTimestampSoFar ?? NO_TIMESTAMP;
  }

  /** Reads `length` bytes at `position` into buf at `offset`; returns the bytes read (short only if the file shrank). */
  readInto(buf: Buffer, offset: number, position: number, length: number): Promise<number> {
    return readFully(this.file, buf, offset, length, position);
  }

  // ---------------------------------------------------------------- recovery

  /**
   * Validates the whole file batch by batch (see segment-scan.ts), rebuilds
   * both indexes from it, re-derives leader epochs, and truncates a torn or
   * corrupt tail (Kafka's LogSegment.recover).
   */
  async recover(epochs?: LeaderEpochCache): Promise<RecoveryResult> {
    const scan = await scanSegment(this.file, this.baseOffset, this.scanSettings(), true, epochs);
    const truncatedBytes = scan.fileSize - scan.validBytes;
    if (truncatedBytes > 0) await this.file.truncate(scan.validBytes);
    this.size = scan.validBytes;
    this.applyScan(scan);
    this.txnIndex.truncateTo(this.nextOffset);
    await this.rewriteIndexFiles();
    return scan.problem === undefined ? { truncatedBytes } : { truncatedBytes, problem: scan.problem };
  }

  // ---------------------------------------------------------------- truncation

  /**
   * Removes every batch containing offsets >= offset (Kafka's truncateTo):
   * cuts the file where that batch starts, drops index entries at or above
   * it, and leaves the segment ready for appends. Returns the bytes removed.
   */
  async truncateTo(offset: number, now: number): Promise<number> {
    this.forgetNextRead();
    try {
      return await this.cutAt(offset, now);
    } finally {
      this.forgetNextRead();
    }
  }

  /** Drops the remembered header: positions past a cut may hold other batches once appends resume. */
  private forgetNextRead(): void {
    this.truncations++;
    this.nextRead = undefined;
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
      await this.file.truncate(batch.position);
      this.size = batch.position;
    }
    // Entries removed from memory may still be in the index files: cut them there too.
    await this.exclusive(() => this.writeIndexTails(false));
    if (this.size === 0) this.created = now;
    await this.loadAsActive(true);
    return removed;
  }

  // ---------------------------------------------------------------- files

  /** Runs fn after every earlier index-file operation of this segment. */
  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.fileOps.then(fn, fn);
    this.fileOps = run.catch(() => undefined);
    return run;
  }

  /**
   * Brings the index files in line with memory: cuts entries a truncation
   * removed, appends the ones not written yet; with sync, fsyncs them.
   */
  private async writeIndexTails(sync: boolean): Promise<void> {
    await this.writeTxnIndexTail(sync);
    if (!this.offsetIndex || !this.timeIndex) return;
    await this.writeIndexFile(this.indexPath, this.offsetIndex, this.offsetIndexFileEntries, OFFSET_INDEX_ENTRY_SIZE, sync);
    this.offsetIndexFileEntries = this.offsetIndex.entries;
    await this.writeIndexFile(this.timeIndexPath, this.timeIndex, this.timeIndexFileEntries, TIME_INDEX_ENTRY_SIZE, sync);
    this.timeIndexFileEntries = this.timeIndex.entries;
  }

  private async writeIndexFile(
    file: string,
    index: { entries: number; encode(from: number): Buffer },
    inFile: number,
    entrySize: number,
    sync: boolean,
  ): Promise<void> {
    const entries = index.entries;
    if (entries === inFile && !sync) return;
    const fh = await fs.promises.open(file, fs.constants.O_RDWR | fs.constants.O_CREAT, 0o644);
    try {
      if (inFile > entries) await fh.truncate(entries * entrySize);
      else if (entries > inFile) await writeFully(fh, [index.encode(inFile).subarray(0, (entries - inFile) * entrySize)], inFile * entrySize, file);
      if (sync) await fh.sync();
    } finally {
      await fh.close();
    }
  }

  /** The transaction index file is created with its first entry, as Kafka does: most segments never have one. */
  private async writeTxnIndexTail(sync: boolean): Promise<void> {
    if (this.txnIndex.entries === 0 && this.txnIndexFileEntries === 0) return;
    await this.writeIndexFile(this.txnIndexPath, this.txnIndex, this.txnIndexFileEntries, TXN_INDEX_ENTRY_SIZE, sync);
    this.txnIndexFileEntries = this.txnIndex.entries;
  }

  /** Replaces the offset and time index files with the in-memory indexes; cuts the transaction index file to memory. */
  private rewriteIndexFiles(): Promise<void> {
    return this.exclusive(async () => {
      await replaceFile(this.indexPath, this.offsetIndex!.encode());
      await replaceFile(this.timeIndexPath, this.timeIndex!.encode());
      this.offsetIndexFileEntries = this.offsetIndex!.entries;
      this.timeIndexFileEntries = this.timeIndex!.entries;
      await this.writeTxnIndexTail(false);
    });
  }

  /** fsyncs the log file and writes and fsyncs the index files (no-op once deleted). */
  flush(): Promise<void> {
    return this.exclusive(async () => {
      if (this.deleted) return;
      await this.file.sync();
      await this.writeIndexTails(true);
    });
  }

  /**
   * The segment stops being active (a roll): its time index gets the largest
   * timestamp as last entry, and the index files are written out (fsync
   * comes with the flush that follows a roll).
   */
  onBecomeInactive(): Promise<void> {
    if (this.timeIndex && this.maxTimestampSoFar !== undefined) this.timeIndex.maybeAppend(this.maxTimestampSoFar, this.offsetOfMaxTimestampSoFar);
    return this.exclusive(() => this.writeIndexTails(false));
  }

  /** Writes the indexes out (with the final time index entry) and closes the file, even when the index writes fail. */
  async close(): Promise<void> {
    try {
      if (!this.deleted) await this.onBecomeInactive();
    } finally {
      await this.exclusive(() => this.file.close());
    }
  }

  /** Cuts whatever a failed append left in the file past the last whole write (`size`). */
  discardUnwrittenTail(): Promise<void> {
    return this.file.truncate(this.size);
  }

  /**
   * Renames the files from this segment's suffix to `suffix` (Kafka's
   * changeFileSuffixes), the log file last; files the segment does not have
   * (no transaction index) are skipped. The open file follows the rename.
   */
  changeFileSuffix(suffix: string): Promise<void> {
    return this.exclusive(async () => {
      for (const file of this.allPaths) {
        await fs.promises.rename(file, file.slice(0, file.length - this.fileSuffix.length) + suffix).catch((e: NodeJS.ErrnoException) => {
          if (e.code !== 'ENOENT') throw e;
        });
      }
      this.fileSuffix = suffix;
    });
  }

  /** Renames the files to `*.deleted` so a restart does not load them; the log file stays open for reads in flight. */
  markDeleted(): Promise<void> {
    this.deleted = true;
    return this.exclusive(async () => {
      for (const file of this.allPaths) {
        await fs.promises.rename(file, file + DELETED_FILE_SUFFIX).catch((e: NodeJS.ErrnoException) => {
          if (e.code !== 'ENOENT') throw e;
        });
      }
    });
  }

  /** Closes the file and removes the `*.deleted` files (after markDeleted). */
  async deleteFiles(): Promise<void> {
    await this.exclusive(async () => {
      await this.file.close();
      for (const file of this.allPaths) {
        await fs.promises.rm(file + DELETED_FILE_SUFFIX, { force: true });
      }
    });
  }

  /** Closes the file without writing anything (the directory is going away). */
  closeWithoutWriting(): Promise<void> {
    this.deleted = true;
    return this.exclusive(() => this.file.close());
  }
}
