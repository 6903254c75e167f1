// Reading a whole partition back, batch by batch: how the coordinators rebuild their state from
// their internal topics (__consumer_offsets, __transaction_state, __share_group_state) at start-up.
import { LOG_OVERHEAD, readBatchHeader, type BatchInfo } from '../records/batch';
import { decodeRecords } from '../records/decode-records';
import type { PartitionLog } from './partition-log';

/** How much of the log one read brings in (Kafka's offsets.load.buffer.size / transaction.state.log.load.buffer.size). */
const LOAD_BUFFER_BYTES = 5 * 1024 * 1024;

/**
 * Calls `visit` with every whole batch from the log start to the written end, in offset order (a new
 * leader loads what it has, as Kafka's coordinator loader reads to the log end, not only what its
 * high watermark has reached yet). Returns the offset it got to: the end, or the first batch it could not read. Throws StorageError when the log cannot be read.
 */
export async function replayBatches(log: PartitionLog, visit: (bytes: Buffer, batch: BatchInfo) => void | Promise<void>): Promise<number> {
  let next = log.logStartOffset;
  while (next < log.writtenEndOffset) {
    const read = await log.readBytes(next, LOAD_BUFFER_BYTES);
    if (read.outOfRange) {
      // DeleteRecords moved the log start past us meanwhile: go on from there.
      if (next < read.logStartOffset) {
        next = read.logStartOffset;
        continue;
      }
      break;
    }
    const buf = read.records;
    let pos = 0;
    while (pos + LOG_OVERHEAD <= buf.length) {
      const header = readBatchHeader(buf, pos);
      if (header.status !== 'ok' || pos + header.batch.size > buf.length) break;
      const b = header.batch;
      const end = b.baseOffset + b.lastOffsetDelta + 1;
      if (end > next) {
        await visit(buf.subarray(pos, pos + b.size), b);
        next = end;
      }
      pos += b.size;
    }
    if (pos === 0) return next;
  }
  return next;
}

/** What replayKeyedRecords could not use, for the caller to log (a coordinator skips it, as Kafka's loader does). */
export type ReplaySkip =
  | { reason: 'undecodable batch'; baseOffset: number; err: unknown }
  | { reason: 'record without a key'; offset: number }
  | { reason: 'undecodable record'; offset: number; err: unknown };

/**
 * The records of the data batches from the log start to the written end (control batches skipped),
 * in order: how a coordinator whose topic holds no transactions (__transaction_state,
 * __share_group_state) rebuilds its state. A record `visit` throws on is skipped. Returns where it
 * stopped, as replayBatches.
 */
export function replayKeyedRecords(log: PartitionLog, visit: (key: Buffer, value: Buffer | null, offset: number) => void,
  skipped: (skip: ReplaySkip) => void): Promise<number> {
  return replayBatches(log, async (bytes, batch) => {
    if (batch.isControl) return;
    let records;
    try {
      records = await decodeRecords(bytes);
    } catch (err) {
      skipped({ reason: 'undecodable batch', baseOffset: batch.baseOffset, err });
      return;
    }
    for (const record of records) {
      if (record.key === null) {
        skipped({ reason: 'record without a key', offset: record.offset });
        continue;
      }
      try {
        visit(record.key, record.value, record.offset);
      } catch (err) {
        skipped({ reason: 'undecodable record', offset: record.offset, err });
      }
    }
  });
}
