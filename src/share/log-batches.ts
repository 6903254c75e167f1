// The share fetch path's view of the log bytes it reads: each batch's bounds from its header (no
// record is decoded, nothing decompressed), and the whole batches that overlap what was acquired.
import {
  ATTRIBUTES_OFFSET, BASE_OFFSET_OFFSET, BATCH_LENGTH_OFFSET, CONTROL_FLAG_MASK, LAST_OFFSET_DELTA_OFFSET, LOG_OVERHEAD,
  PRODUCER_ID_OFFSET, TRANSACTIONAL_FLAG_MASK,
} from '../records/batch';
import type { AcquiredRecords, LogBatchBounds } from './share-partition';

/** A batch of a read: its bounds and where its bytes are in the read's buffer. */
export interface LogBatch extends LogBatchBounds {
  readonly start: number;
  readonly end: number;
}

/** The batches of whole v2 batches read from a log, in order. */
export function logBatches(records: Buffer): LogBatch[] {
  const batches: LogBatch[] = [];
  for (let at = 0; at + LOG_OVERHEAD <= records.length;) {
    const end = at + LOG_OVERHEAD + records.readInt32BE(at + BATCH_LENGTH_OFFSET);
    if (end > records.length) break;
    const attributes = records.readInt16BE(at + ATTRIBUTES_OFFSET);
    const baseOffset = records.readBigInt64BE(at + BASE_OFFSET_OFFSET);
    batches.push({
      baseOffset, lastOffset: baseOffset + BigInt(records.readInt32BE(at + LAST_OFFSET_DELTA_OFFSET)),
      isControl: (attributes & CONTROL_FLAG_MASK) !== 0, isTransactional: (attributes & TRANSACTIONAL_FLAG_MASK) !== 0,
      producerId: records.readBigInt64BE(at + PRODUCER_ID_OFFSET), start: at, end,
    });
    at = end;
  }
  return batches;
}

/**
 * The bytes of the batches that hold acquired offsets (Kafka sends whole batches; the client keeps
 * the acquired records). One run of batches, the usual case, is a view of `records`; runs apart are
 * copied once into a buffer from `allocate`.
 */
export function acquiredBatches(
  records: Buffer, batches: readonly LogBatch[], acquired: readonly AcquiredRecords[], allocate: (size: number) => Buffer,
): Buffer {
  const runs: Array<[number, number]> = [];
  for (const batch of batches) {
    if (!acquired.some((a) => a.firstOffset <= batch.lastOffset && a.lastOffset >= batch.baseOffset)) continue;
    const last = runs[runs.length - 1];
    if (last && last[1] === batch.start) last[1] = batch.end;
    else runs.push([batch.start, batch.end]);
  }
  if (runs.length === 0) return records.subarray(0, 0);
  if (runs.length === 1) return records.subarray(runs[0][0], runs[0][1]);
  const out = allocate(runs.reduce((n, [s, e]) => n + e - s, 0));
  let at = 0;
  for (const [s, e] of runs) at += records.copy(out, at, s, e);
  return out;
}
