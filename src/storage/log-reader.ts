/**
 * Reads of a partition log: whole batches by offset (Fetch), by timestamp
 * (ListOffsets), batch by batch (producer-state replay), and the aborted
 * transactions a read_committed fetch needs. Reads never wait for the writer:
 * they stop at the high watermark's position in the files (LocalLog.hwMark),
 * and retry when a segment was deleted or cut under them.
 */
import type * as fs from 'fs';
import { batchLastOffsetDelta, batchMaxTimestamp } from './batch-header';
import { readFully } from './file-io';
import type { LocalLog } from './local-log';
import type { LogSegment } from './log-segment';
import { NO_TIMESTAMP } from './time-index';
import { EMPTY_BUFFER } from '../protocol/primitives';
import type { AbortedTxn } from './transaction-index';

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
  file: fs.promises.FileHandle;
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

export class LogReader {
  constructor(private readonly log: LocalLog) {}

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
      throw this.log.ioError('Reading', e);
    }
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
        // Nothing to read takes no buffer (a pooled one would sit idle through a long poll).
        const records = size === 0 ? EMPTY_BUFFER : (options.allocate ?? Buffer.allocUnsafe)(size);
        let at = 0;
        for (const r of ranges) {
          const bytesRead = await readFully(r.file, records, at, r.length, r.position);
          if (bytesRead < r.length) throw new Error(`short read at position ${r.position}`);
          at += r.length;
        }
        return { ...rest, records };
      } catch (e) {
        if (attempt >= 2) throw this.log.ioError('Reading', e);
      }
    }
  }

  private async locate(fetchOffset: number, maxBytes: number, options: ReadOptions): Promise<ReadResult> {
    const log = this.log;
    const snapshot: OffsetsSnapshot = { highWatermark: log.highWatermark, logStartOffset: log.logStartOffset, logEndOffset: log.logEndOffset };
    const hwMark = log.hwMark;
    if (fetchOffset < snapshot.logStartOffset || fetchOffset > snapshot.logEndOffset) return { ...snapshot, outOfRange: true };
    const result: ReadResult = { ...snapshot, outOfRange: false, firstOffset: -1, ranges: [], size: 0 };
    const maxOffset = Math.min(options.maxOffset ?? snapshot.highWatermark, snapshot.highWatermark);
    const minOneMessage = options.minOneMessage ?? true;
    const first = log.floorSegmentIndex(fetchOffset);
    const segments = log.segments.slice(Math.max(0, first));
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
   * Replays the log from the batch containing fromOffset up to the high
   * watermark, one batch at a time: `visit` gets a view of the batch's
   * 61-byte header, or the whole batch for a control batch; the view is valid
   * only during the call. For rebuilding state from the log (producer state
   * after a restart).
   */
  async forEachBatch(fromOffset: number, visit: (batch: Buffer) => void): Promise<void> {
    const log = this.log;
    const hw = log.highWatermark;
    const hwMark = log.hwMark;
    const segments = log.segments.slice(Math.max(0, log.floorSegmentIndex(fromOffset)));
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
    const segments = this.log.segments;
    const found: AbortedTxn[] = [];
    for (let i = Math.max(0, this.log.floorSegmentIndex(fetchOffset)); i < segments.length; i++) {
      if (segments[i].collectAbortedTxns(fetchOffset, upperBoundOffset, found)) break;
    }
    return found;
  }

  /**
   * ListOffsets by timestamp: the first batch (from startingOffset, default
   * the log start offset) with a max timestamp >= timestamp, or null. Kafka
   * answers with the first RECORD whose timestamp is >= the target; that
   * record is in this batch, unless every such record is below
   * startingOffset: then ask again from the batch's lastOffset + 1.
   */
  async offsetForTimestamp(timestamp: number, startingOffset = this.log.logStartOffset): Promise<TimestampLookup | null> {
    const segments = this.log.segments.slice();
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
    for (const s of this.log.segments.slice()) {
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
}
