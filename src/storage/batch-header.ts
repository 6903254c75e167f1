/**
 * The few facts storage needs about a v2 record batch, read straight from its 61-byte header
 * (the layout lives in src/records/batch.ts). Storage never decodes records.
 */
import {
  ATTRIBUTES_OFFSET, BASE_OFFSET_OFFSET, BATCH_LENGTH_OFFSET, CONTROL_FLAG_MASK, CRC_OFFSET, LAST_OFFSET_DELTA_OFFSET,
  LOG_OVERHEAD, MAGIC_OFFSET, MAX_TIMESTAMP_OFFSET, PARTITION_LEADER_EPOCH_OFFSET, RECORDS_COUNT_OFFSET, RECORD_BATCH_OVERHEAD,
  readInt64, writeInt64,
} from '../records/batch';
import { crc32c } from '../records/crc32c';

export { MAGIC_V2 } from '../records/batch';
export const BATCH_HEADER_SIZE = RECORD_BATCH_OVERHEAD;
/** baseOffset + batchLength: the part of the header that gives the size. */
export const BATCH_SIZE_PREFIX = LOG_OVERHEAD;

export function batchBaseOffset(buf: Buffer, at: number): number {
  return readInt64(buf, at + BASE_OFFSET_OFFSET);
}

export function setBatchBaseOffset(buf: Buffer, at: number, offset: number): void {
  writeInt64(buf, at + BASE_OFFSET_OFFSET, offset);
}

/** Whole size of the batch in bytes, header included (may be garbage on a torn file: check it). */
export function batchSize(buf: Buffer, at: number): number {
  return buf.readInt32BE(at + BATCH_LENGTH_OFFSET) + BATCH_SIZE_PREFIX;
}

export function batchLeaderEpoch(buf: Buffer, at: number): number {
  return buf.readInt32BE(at + PARTITION_LEADER_EPOCH_OFFSET);
}

export function batchMagic(buf: Buffer, at: number): number {
  return buf.readInt8(at + MAGIC_OFFSET);
}

/** A control batch (transaction marker). */
export function isControlBatch(buf: Buffer, at: number): boolean {
  return (buf.readInt16BE(at + ATTRIBUTES_OFFSET) & CONTROL_FLAG_MASK) !== 0;
}

export function batchLastOffsetDelta(buf: Buffer, at: number): number {
  return buf.readInt32BE(at + LAST_OFFSET_DELTA_OFFSET);
}

export function batchMaxTimestamp(buf: Buffer, at: number): number {
  return readInt64(buf, at + MAX_TIMESTAMP_OFFSET);
}

export function batchRecordCount(buf: Buffer, at: number): number {
  return buf.readInt32BE(at + RECORDS_COUNT_OFFSET);
}

/** True when the stored CRC matches the batch's bytes (the whole batch must be in buf). */
export function batchCrcMatches(buf: Buffer, at: number, size: number): boolean {
  return buf.readUInt32BE(at + CRC_OFFSET) === crc32c(buf, at + ATTRIBUTES_OFFSET, at + size);
}
