/**
 * Compacting one log (Kafka's Cleaner, with the record filter it hands to
 * MemoryRecords.filterTo). log-cleaner.ts decides which log and when.
 *
 * A cleaning gets the dirty range [firstDirtyOffset, firstUncleanableOffset)
 * (never the active segment, never at or past the last stable offset):
 *  1. Offset map: the latest offset of every key in the dirty range
 *     (offset-map.ts), skipping aborted transactional data and markers.
 *  2. Every segment from the log start up to the end of the map is rewritten,
 *     in groups of neighbours whose sizes fit one segment (segment.bytes, and
 *     segment.index.bytes for each index), so small cleaned segments merge.
 *     A record stays when it is its key's latest (or past the map's end);
 *     tombstones get a delete horizon (cleaning time + delete.retention.ms, in
 *     the batch's baseTimestamp, KIP-534) on the first cleaning that keeps
 *     them and go on the first cleaning after it. Aborted transactional data
 *     goes; the marker of an aborted transaction stays while any of its data
 *     was still there (with its .txnindex entry), a COMMIT marker while a batch
 *     of its transaction was seen, and either then lives delete.retention.ms
 *     more, as tombstones do. The last batch of each live producer stays, empty
 *     if need be, so its epoch and sequence survive (producer state). A batch
 *     that loses nothing is copied as it is; one that loses records is rebuilt
 *     with its codec, producer fields and base and last offsets. Offsets never
 *     change.
 *  3. Each group is written to `<base>.log.cleaned` (+ indexes), fsynced, and
 *     swapped in (LogDeletion.replaceSegments, crash-safe).
 * Reading goes chunk by chunk (log.cleaner.io.buffer.size) through the
 * throttle, which also yields to the event loop between chunks.
 */
import type { Logger } from 'pino';
import { setImmediate as yieldToEventLoop } from 'timers/promises';
import { readBatchHeader, type BatchInfo } from '../records/batch';
import { decodeRecords, emptyBatchOf, parseControlRecordType, rebuildBatch, ControlRecordType, type DecodedRecord } from '../records/records';
import { BATCH_HEADER_SIZE, batchSize } from './batch-header';
import { StorageError } from './errors';
import type { LogSegment } from './log-segment';
import { OffsetMap } from './offset-map';
import type { PartitionLog } from './partition-log';
import type { ProducerStateManager } from './producer-state';
import type { AbortedTxn } from './transaction-index';

const INT32_MAX = 2 ** 31 - 1;
/** Longest run of record decoding between two yields to the event loop (a 512 KiB chunk of small records takes ~25 ms). */
const MAX_SLICE_MS = 5;

/** A cleaning stopped because its log closed or the cleaner is shutting down; the log is as it was. */
export class CleaningAbortedError extends Error {}

/** What a cleaning of one log needs besides the log. */
export interface CleaningContext {
  log: PartitionLog;
  /** The dirty range: from the cleaner's checkpoint to the first offset that may not be cleaned yet. */
  firstDirtyOffset: number;
  firstUncleanableOffset: number;
  /** The partition's producer state: the last batch of each live producer is kept. */
  producers?: ProducerStateManager;
  now: number;
  /** Most bytes the offset map may use (log.cleaner.dedupe.buffer.size). */
  maxMapBytes: number;
  mapLoadFactor: number;
  /** Bytes read at a time (log.cleaner.io.buffer.size). */
  ioBufferBytes: number;
  /** Called after each chunk read: throttles to log.cleaner.io.max.bytes.per.second and yields to the event loop. */
  throttle: (bytes: number) => Promise<void>;
  /** The cleaner is shutting down: stop at the next chunk. */
  stopping: () => boolean;
  logger: Logger;
}

export interface CleaningResult {
  /** The next cleaning's first dirty offset. */
  endOffset: number;
  segmentsBefore: number;
  segmentsAfter: number;
  bytesBefore: number;
  bytesAfter: number;
  bytesRead: number;
  recordsRead: number;
  recordsKept: number;
  /** How full the offset map got, 0 to 1 (the cleaner's buffer utilization). */
  mapUtilization: number;
  /** False when retention or DeleteRecords removed a segment mid-way (that group was left as it was). */
  complete: boolean;
}

/** Cleans ctx.log once (see the file comment). Throws StorageError when a segment cannot be read. */
export async function cleanLog(ctx: CleaningContext): Promise<CleaningResult> {
  const { log, firstDirtyOffset, firstUncleanableOffset } = ctx;
  const result: CleaningResult = {
    endOffset: firstDirtyOffset, segmentsBefore: 0, segmentsAfter: 0, bytesBefore: 0, bytesAfter: 0, bytesRead: 0, recordsRead: 0, recordsKept: 0, mapUtilization: 0, complete: true,
  };
  // Every record of the dirty range has an offset of its own: its span bounds the keys to hold.
  const mapBytes = Math.min(ctx.maxMapBytes, OffsetMap.bytesFor(firstUncleanableOffset - firstDirtyOffset, ctx.mapLoadFactor));
  const map = new OffsetMap(mapBytes, ctx.mapLoadFactor);
  await buildOffsetMap(ctx, map, result);
  result.mapUtilization = map.capacity > 0 ? map.size / map.capacity : 0;
  if (map.latestOffset < firstDirtyOffset) return result;
  result.endOffset = map.latestOffset + 1;

  const segments = log.segmentList();
  const cleanable = segments.slice(0, -1).filter((s) => s.baseOffset < result.endOffset);
  const transactions = new TransactionTracker();
  for (const group of await groupSegmentsBySize(cleanable, log.config.segmentBytes, log.config.segmentIndexBytes, firstUncleanableOffset)) {
    const next = segments[segments.indexOf(group[group.length - 1]) + 1];
    transactions.add(log.abortedTransactions(group[0].baseOffset, next.baseOffset));
    const filter = new BatchFilter(map, transactions, ctx);
    if (!(await cleanSegments(ctx, group, filter, result))) result.complete = false;
  }
  return result;
}

async function buildOffsetMap(ctx: CleaningContext, map: OffsetMap, result: CleaningResult): Promise<void> {
  const { log, firstDirtyOffset: from, firstUncleanableOffset: to } = ctx;
  const transactions = new TransactionTracker();
  transactions.add(log.abortedTransactions(from, to));
  const segments = log.segmentList();
  for (let i = 0; i < segments.length && segments[i].baseOffset < to; i++) {
    const segment = segments[i];
    if (i + 1 < segments.length && segments[i + 1].baseOffset <= from) continue;
    for await (const bytes of batchesOf(segment, ctx, result)) {
      const b = header(bytes, segment);
      const lastOffset = b.baseOffset + b.lastOffsetDelta;
      if (lastOffset < from) continue;
      if (b.baseOffset >= to) return;
      if (b.isControl) {
        transactions.onControlBatch(b, await markerType(bytes));
      } else if (!transactions.onDataBatch(b)) {
        if (map.size + b.recordCount > map.capacity) return; // full: clean up to what it holds
        for (const r of await decodeRecords(bytes)) if (r.key !== null) map.put(r.key, r.offset);
      }
      map.latestOffset = Math.max(map.latestOffset, lastOffset);
    }
  }
}

/**
 * Kafka's groupSegmentsBySize: runs of neighbouring segments whose log, offset
 * index and time index sizes each fit one segment, and whose offsets fit its
 * int32 relative offsets.
 */
export async function groupSegmentsBySize(segments: LogSegment[], maxBytes: number, maxIndexBytes: number, firstUncleanableOffset: number): Promise<LogSegment[][]> {
  const groups: LogSegment[][] = [];
  for (let i = 0; i < segments.length; ) {
    const group = [segments[i]];
    let { offsetIndexBytes, timeIndexBytes } = await segments[i].indexSizes();
    let bytes = segments[i].size;
    for (i++; i < segments.length; i++) {
      const s = segments[i];
      const sizes = await s.indexSizes();
      const lastOffset = (i + 1 < segments.length ? segments[i + 1].baseOffset : firstUncleanableOffset) - 1;
      if (bytes + s.size > maxBytes || offsetIndexBytes + sizes.offsetIndexBytes > maxIndexBytes || timeIndexBytes + sizes.timeIndexBytes > maxIndexBytes) break;
      if (s.size > 0 && lastOffset - group[0].baseOffset > INT32_MAX) break;
      group.push(s);
      bytes += s.size;
      offsetIndexBytes += sizes.offsetIndexBytes;
      timeIndexBytes += sizes.timeIndexBytes;
    }
    groups.push(group);
  }
  return groups;
}

/** Writes the kept batches of `group` to a `.cleaned` segment and swaps it in; false when the swap was called off. */
async function cleanSegments(ctx: CleaningContext, group: LogSegment[], filter: BatchFilter, result: CleaningResult): Promise<boolean> {
  const cleaned = await ctx.log.createCleanedSegment(group[0].baseOffset);
  filter.transactions.cleanedSegment = cleaned;
  try {
    for (const segment of group) {
      let pending: Buffer[] = [];
      let pendingBytes = 0;
      for await (const bytes of batchesOf(segment, ctx, result)) {
        const kept = await filter.filter(bytes, header(bytes, segment));
        if (!kept) continue;
        pending.push(kept);
        pendingBytes += kept.length;
        if (pendingBytes >= ctx.ioBufferBytes) {
          await cleaned.append(pending);
          pending = [];
          pendingBytes = 0;
        }
      }
      if (pending.length > 0) await cleaned.append(pending);
    }
    await cleaned.onBecomeInactive();
    await cleaned.flush();
    if (!ctx.log.isOpen || !(await ctx.log.replaceSegments(cleaned, group))) return false;
  } catch (e) {
    await cleaned.markDeleted().then(() => cleaned.deleteFiles()).catch(() => undefined);
    throw e;
  }
  result.segmentsBefore += group.length;
  result.segmentsAfter += 1;
  result.bytesBefore += group.reduce((n, s) => n + s.size, 0);
  result.bytesAfter += cleaned.size;
  result.recordsRead += filter.recordsRead;
  result.recordsKept += filter.recordsKept;
  filter.recordsRead = filter.recordsKept = 0;
  return true;
}

/**
 * The whole batches of an inactive segment, read `ioBufferBytes` at a time
 * (a larger batch gets a buffer of its own). Each is a view, valid until the
 * next one is asked for.
 */
async function* batchesOf(segment: LogSegment, ctx: CleaningContext, result: CleaningResult): AsyncGenerator<Buffer> {
  let buf = Buffer.allocUnsafe(ctx.ioBufferBytes);
  const end = segment.size;
  let sliceStart = performance.now();
  for (let position = 0; position < end; ) {
    if (!ctx.log.isOpen || ctx.stopping()) throw new CleaningAbortedError(`Cleaning of ${ctx.log.dir} stopped`);
    const want = Math.min(buf.length, end - position);
    const got = await segment.readInto(buf, 0, position, want);
    let at = 0;
    while (at + BATCH_HEADER_SIZE <= got) {
      const size = batchSize(buf, at);
      if (size < BATCH_HEADER_SIZE) throw new StorageError('KAFKA_STORAGE_ERROR', `Corrupt batch at position ${position + at} of ${segment.logPath}`);
      if (at + size > got) break;
      yield buf.subarray(at, at + size);
      at += size;
      if (performance.now() - sliceStart > MAX_SLICE_MS) {
        await yieldToEventLoop();
        sliceStart = performance.now();
      }
    }
    if (at === 0) {
      if (got < want || got < BATCH_HEADER_SIZE) throw new StorageError('KAFKA_STORAGE_ERROR', `Short read at position ${position} of ${segment.logPath}`);
      buf = Buffer.allocUnsafe(batchSize(buf, 0));
      continue;
    }
    position += at;
    result.bytesRead += at;
    await ctx.throttle(at);
  }
}

function header(bytes: Buffer, segment: LogSegment): BatchInfo {
  const h = readBatchHeader(bytes, 0);
  if (h.status !== 'ok') throw new StorageError('KAFKA_STORAGE_ERROR', `Corrupt batch in ${segment.logPath}`);
  return h.batch;
}

/** The ControlRecordType of a marker batch, -1 when it has no record (an earlier cleaning emptied it). */
async function markerType(bytes: Buffer): Promise<number> {
  const [record] = await decodeRecords(bytes);
  return record ? parseControlRecordType(record.key) : -1;
}

/**
 * Which transactions the batches being read belong to (Kafka's
 * CleanedTransactionMetadata): fed the aborted transactions of the range
 * from the .txnindex files, it says whether a data batch is aborted and
 * whether a marker's transaction has nothing left in the log.
 */
class TransactionTracker {
  /** Aborted transactions not reached yet, by first offset. */
  private aborted: AbortedTxn[] = [];
  /** Producer id -> the aborted transaction it is in at this point, and whether a batch of it was seen. */
  private readonly ongoingAborted = new Map<number, { txn: AbortedTxn; sawBatch: boolean }>();
  /** Producers in a committed transaction of which a batch was seen. */
  private readonly ongoingCommitted = new Set<number>();
  /** Where the .txnindex entries of markers that stay go (while rewriting). */
  cleanedSegment?: LogSegment;

  add(txns: AbortedTxn[]): void {
    this.aborted = [...this.aborted, ...txns].sort((a, b) => a.firstOffset - b.firstOffset);
  }

  private reach(offset: number): void {
    while (this.aborted.length > 0 && this.aborted[0].firstOffset <= offset) {
      const txn = this.aborted.shift()!;
      if (!this.ongoingAborted.has(txn.producerId)) this.ongoingAborted.set(txn.producerId, { txn, sawBatch: false });
    }
  }

  /** True when the batch is aborted transactional data (it can go). */
  onDataBatch(b: BatchInfo): boolean {
    this.reach(b.baseOffset + b.lastOffsetDelta);
    if (!b.isTransactional) return false;
    const aborted = this.ongoingAborted.get(b.producerId);
    if (aborted) {
      aborted.sawBatch = true;
      return true;
    }
    this.ongoingCommitted.add(b.producerId);
    return false;
  }

  /** True when the marker's transaction has no data left before it, so the marker may go (after its delete horizon). */
  onControlBatch(b: BatchInfo, type: number): boolean {
    this.reach(b.baseOffset + b.lastOffsetDelta);
    if (type === ControlRecordType.ABORT) {
      const aborted = this.ongoingAborted.get(b.producerId);
      this.ongoingAborted.delete(b.producerId);
      if (aborted?.sawBatch) {
        this.cleanedSegment?.appendAbortedTxn(aborted.txn);
        return false;
      }
      return true;
    }
    if (type === ControlRecordType.COMMIT) return !this.ongoingCommitted.delete(b.producerId);
    return type === -1;
  }
}

/** The cleaner's record filter (Kafka's RecordFilter in Cleaner.cleanInto, applied as MemoryRecords.filterTo does). */
class BatchFilter {
  recordsRead = 0;
  recordsKept = 0;

  constructor(
    private readonly map: OffsetMap,
    readonly transactions: TransactionTracker,
    private readonly ctx: CleaningContext,
  ) {}

  /** The batch to write in place of `bytes`: the same bytes (copied), a rebuilt or empty batch, or null to drop it. */
  async filter(bytes: Buffer, b: BatchInfo): Promise<Buffer | null> {
    const records = await decodeRecords(bytes);
    this.recordsRead += records.length;
    const canDiscard = b.isControl
      ? this.transactions.onControlBatch(b, records.length > 0 ? parseControlRecordType(records[0].key) : -1)
      : this.transactions.onDataBatch(b);
    const pastHorizon = b.hasDeleteHorizon && b.baseTimestamp <= this.ctx.now;
    const discardRecords = b.isControl ? canDiscard && pastHorizon : canDiscard;
    const lastOfProducer = this.isLastBatchOfProducer(b);
    if (discardRecords && !lastOfProducer) return null;

    const kept = discardRecords ? [] : records.filter((r) => b.isControl || this.retainRecord(b, r));
    this.recordsKept += kept.length;
    const hasTombstone = !b.isControl && kept.some((r) => r.value === null);
    const setHorizon = !b.hasDeleteHorizon && (hasTombstone || (b.isControl && canDiscard));
    if (kept.length === records.length && !setHorizon) return Buffer.from(bytes);
    if (kept.length > 0) return rebuildBatch(b, kept, setHorizon ? this.ctx.now + this.ctx.log.config.deleteRetentionMs : b.hasDeleteHorizon ? b.baseTimestamp : undefined);
    return lastOfProducer ? emptyBatchOf(b) : null;
  }

  /** Kafka's Cleaner.shouldRetainRecord: the key's latest record, and for a tombstone only until its batch's delete horizon. */
  private retainRecord(b: BatchInfo, r: DecodedRecord): boolean {
    if (r.offset > this.map.latestOffset) return true;
    if (r.key === null) return false;
    if (r.offset < this.map.get(r.key)) return false;
    return r.value !== null || !b.hasDeleteHorizon || this.ctx.now < b.baseTimestamp;
  }

  /**
   * The batch holding a live producer's last data (or, for a producer with
   * no data batch known, its marker at the current epoch): kept, empty if
   * need be, so a restart rebuilds that producer's state from the log.
   */
  private isLastBatchOfProducer(b: BatchInfo): boolean {
    if (b.producerId < 0) return false;
    const entry = this.ctx.producers?.activeProducers().get(b.producerId);
    if (!entry) return false;
    const lastData = entry.batches.length > 0 ? entry.batches[entry.batches.length - 1].lastOffset : -1;
    return lastData >= 0 ? b.baseOffset + b.lastOffsetDelta === lastData : b.isControl && b.producerEpoch === entry.producerEpoch;
  }
}
