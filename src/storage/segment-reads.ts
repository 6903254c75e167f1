/**
 * Reads and lookups in one log segment: the batch holding an offset, byte
 * ranges of whole batches (Fetch), the batch holding a timestamp
 * (ListOffsets), and every batch header of a range (producer-state replay).
 * A lookup is a binary search in the offset index, then a forward scan of
 * batch headers (headers only) from there. They read only what a write has
 * completed: a LogSegment's `size` grows once its write is done.
 */
import type * as fs from 'fs';
import {
  BATCH_HEADER_SIZE,
  batchBaseOffset,
  batchLastOffsetDelta,
  batchMaxTimestamp,
  batchSize,
  isControlBatch,
} from './batch-header';
import { StorageError } from './errors';
import { readFully } from './file-io';
import type { OffsetIndex } from './offset-index';
import type { TimeIndex } from './time-index';

/** Bytes read at a time when scanning batch headers (about one index interval of small batches). */
const HEADER_SCAN_CHUNK = 8192;
/**
 * Bytes read at a time when replaying every batch header of a range (forEachBatch): large, so
 * that a replay after a crash costs one read per MiB rather than one per batch (batches over
 * 8 KiB each needed a read of their own: 1 GiB of 16 KiB batches took about 10 s).
 */
const REPLAY_CHUNK = 1 << 20;

/** What the reads need of their segment (a LogSegment). */
export interface ReadableSegment {
  /** Bytes of whole batches in the log file. */
  readonly size: number;
  readonly fileHandle: fs.promises.FileHandle;
  readonly logPath: string;
  /** Reads (or rebuilds) the indexes on first use. */
  loadIndexes(): Promise<{ offsetIndex: OffsetIndex; timeIndex: TimeIndex }>;
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

function corrupt(segment: ReadableSegment, position: number, what: string): StorageError {
  return new StorageError('KAFKA_STORAGE_ERROR', `Corrupt batch at position ${position} of ${segment.logPath}: ${what}`);
}

/** Reads a segment's batch headers through one small buffer, never past `limit`. */
export class HeaderReader {
  private readonly buf: Buffer;
  private start = 0;
  private length = 0;

  constructor(
    private readonly segment: ReadableSegment,
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
      this.length = await readFully(this.segment.fileHandle, this.buf, 0, want, position);
      if (this.length < BATCH_HEADER_SIZE) return -1;
    }
    return position - this.start;
  }

  /** The batch whose header is at `position`; throws when the header is not all there. */
  async batchAt(position: number): Promise<BatchLocation> {
    const at = await this.at(position);
    if (at < 0) throw corrupt(this.segment, position, 'batch header runs past the end of the segment');
    return this.locationAt(at, position);
  }

  /** The batch whose header is at index `at` of `bytes` (file position `position`). */
  locationAt(at: number, position: number): BatchLocation {
    const buf = this.buf;
    const size = batchSize(buf, at);
    if (size < BATCH_HEADER_SIZE) throw corrupt(this.segment, position, `batch size ${size}`);
    const baseOffset = batchBaseOffset(buf, at);
    return { position, size, baseOffset, lastOffset: baseOffset + batchLastOffsetDelta(buf, at), maxTimestamp: batchMaxTimestamp(buf, at) };
  }
}

export class SegmentReads {
  /**
   * The batch right after the range the last read() returned (from the header read to find where
   * that range ends), so that a sequential consumer's next fetch costs no header reads; and a count
   * bumped when a truncation starts and ends, which invalidates it.
   */
  private nextRead: BatchLocation | undefined;
  private truncations = 0;

  constructor(private readonly segment: ReadableSegment) {}

  /** Drops the remembered header (a truncation starts or ends): positions past a cut may hold other batches once appends resume. */
  forgetNextRead(): void {
    this.truncations++;
    this.nextRead = undefined;
  }

  /**
   * The batch containing `offset` (or the first one after it, if offsets
   * have a gap there) among the batches starting before maxPosition; null
   * when there is none (Kafka's translateOffset).
   */
  async findBatch(offset: number, maxPosition = this.segment.size): Promise<BatchLocation | null> {
    const { offsetIndex } = await this.segment.loadIndexes();
    const limit = Math.min(maxPosition, this.segment.size);
    const next = this.nextRead;
    if (next && next.baseOffset <= offset && offset <= next.lastOffset && next.position + next.size <= limit) return next;
    const reader = new HeaderReader(this.segment, limit);
    for (let position = offsetIndex.lookup(offset).position; position < limit; ) {
      const batch = await reader.batchAt(position);
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
    const { offsetIndex } = await this.segment.loadIndexes();
    const reader = new HeaderReader(this.segment, limit + BATCH_HEADER_SIZE);
    let position = Math.max(from, offsetIndex.batchStartAtOrBefore(limit));
    for (;;) {
      const at = position < limit ? await reader.at(position) : -1;
      if (at < 0) return { stop: position };
      const batch = reader.locationAt(at, position);
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
    const end = Math.min(maxPosition, this.segment.size);
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
    const { offsetIndex, timeIndex } = await this.segment.loadIndexes();
    const entry = timeIndex.lookup(timestamp);
    const reader = new HeaderReader(this.segment, this.segment.size);
    for (let position = offsetIndex.lookup(Math.max(entry.offset, startingOffset)).position; position < this.segment.size; ) {
      const batch = await reader.batchAt(position);
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
    const limit = Math.min(maxPosition, this.segment.size);
    const first = await this.findBatch(fromOffset, limit);
    if (!first) return;
    const reader = new HeaderReader(this.segment, limit, REPLAY_CHUNK);
    for (let position = first.position; position < limit; ) {
      const at = await reader.at(position);
      if (at < 0) throw corrupt(this.segment, position, 'batch header runs past the end of the segment');
      const buf = reader.bytes;
      const size = batchSize(buf, at);
      if (size < BATCH_HEADER_SIZE) throw corrupt(this.segment, position, `batch size ${size}`);
      if (isControlBatch(buf, at)) {
        const whole = Buffer.allocUnsafe(size);
        await readFully(this.segment.fileHandle, whole, 0, size, position);
        visit(whole);
      } else {
        visit(buf.subarray(at, at + BATCH_HEADER_SIZE));
      }
      position += size;
    }
  }
}
