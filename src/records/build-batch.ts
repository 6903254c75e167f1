// Building v2 batches as the Java client's MemoryRecordsBuilder lays them out (tests, control markers,
// internal topics), and rebuilding them around fewer records (the log cleaner). The record layout is
// described in decode-records.ts.
import {
  BatchInfo,
  computeAttributes,
  computeBatchCrc,
  Compression,
  CRC_OFFSET,
  LOG_OVERHEAD,
  NO_PARTITION_LEADER_EPOCH,
  NO_PRODUCER_EPOCH,
  NO_PRODUCER_ID,
  NO_SEQUENCE,
  NO_TIMESTAMP,
  RECORD_BATCH_OVERHEAD,
  RECORDS_OFFSET,
  TimestampType,
  TimestampTypeId,
  writeInt64,
} from './batch';
import { compress, compressSync } from './compression';
import type { DecodedRecord } from './decode-records';

// Varints as a record writes them (zigzag), for values up to +-2^52: timestamp deltas can exceed 32 bits.

function sizeOfUnsignedVarint(v: number): number {
  let n = 1;
  while (v >= 0x80) {
    v = Math.floor(v / 128);
    n++;
  }
  return n;
}

function zigzag(v: number): number {
  return v >= 0 ? v * 2 : -v * 2 - 1;
}

function sizeOfVarint(v: number): number {
  return sizeOfUnsignedVarint(zigzag(v));
}

/** Write zigzag(v) as an unsigned varint at `pos`; returns the position after it. Works up to +-2^52. */
function writeVarint(buf: Buffer, pos: number, v: number): number {
  let u = zigzag(v);
  while (u >= 0x80) {
    buf[pos++] = (u % 128) | 0x80;
    u = Math.floor(u / 128);
  }
  buf[pos++] = u;
  return pos;
}

type Bytes = Buffer | string | null | undefined;

export interface BuildRecord {
  key?: Bytes;
  value?: Bytes;
  headers?: { key: string; value: Bytes }[];
  /** Create time in ms; defaults to the batch's `nowMs`. */
  timestamp?: number;
  /** Defaults to the record's index. */
  offsetDelta?: number;
}

export interface BuildBatchOptions {
  baseOffset?: number;
  partitionLeaderEpoch?: number;
  records: BuildRecord[];
  /** Attribute compression id (default none). */
  compression?: number;
  compressionLevel?: number;
  producerId?: number;
  producerEpoch?: number;
  baseSequence?: number;
  isTransactional?: boolean;
  isControl?: boolean;
  timestampType?: TimestampTypeId;
  /** For LogAppendTime batches: the batch maxTimestamp (default nowMs). */
  logAppendTimeMs?: number;
  /** Timestamp of records that have none (default Date.now()). */
  nowMs?: number;
  /**
   * The batch's lastOffsetDelta when it is not the last record's: an empty batch, or one the cleaner
   * removed records from (Kafka keeps the original last offset so producer state stays right).
   */
  lastOffsetDelta?: number;
  /** KIP-534: baseTimestamp holds this delete horizon (the record timestamps stay as they were) and the attribute bit says so. */
  deleteHorizonMs?: number;
}

function toBuf(b: Bytes): Buffer | null {
  if (b === null || b === undefined) return null;
  return typeof b === 'string' ? Buffer.from(b, 'utf8') : b;
}

interface Prepared {
  body: Buffer;
  baseTimestamp: number;
  maxTimestamp: number;
  lastOffsetDelta: number;
}

function encodeRecords(o: BuildBatchOptions): Prepared {
  const now = o.nowMs ?? Date.now();
  const n = o.records.length;
  const keys = new Array<Buffer | null>(n);
  const values = new Array<Buffer | null>(n);
  const hkeys: Buffer[][] = new Array(n);
  const hvals: (Buffer | null)[][] = new Array(n);
  const timestamps = new Array<number>(n);
  const deltas = new Array<number>(n);
  const bodySizes = new Array<number>(n);
  let baseTimestamp = NO_TIMESTAMP;
  let maxTimestamp = NO_TIMESTAMP;
  let total = 0;
  for (let i = 0; i < n; i++) {
    const r = o.records[i];
    const ts = r.timestamp ?? now;
    if (i === 0) baseTimestamp = o.deleteHorizonMs ?? ts;
    if (ts > maxTimestamp) maxTimestamp = ts;
    timestamps[i] = ts;
    deltas[i] = r.offsetDelta ?? i;
    const k = toBuf(r.key);
    const v = toBuf(r.value);
    keys[i] = k;
    values[i] = v;
    let size = 1 + sizeOfVarint(ts - baseTimestamp) + sizeOfVarint(deltas[i]);
    size += k === null ? 1 : sizeOfVarint(k.length) + k.length;
    size += v === null ? 1 : sizeOfVarint(v.length) + v.length;
    const hs = r.headers ?? [];
    size += sizeOfVarint(hs.length);
    hkeys[i] = new Array(hs.length);
    hvals[i] = new Array(hs.length);
    for (let h = 0; h < hs.length; h++) {
      const hk = Buffer.from(hs[h].key, 'utf8');
      const hv = toBuf(hs[h].value);
      hkeys[i][h] = hk;
      hvals[i][h] = hv;
      size += sizeOfVarint(hk.length) + hk.length + (hv === null ? 1 : sizeOfVarint(hv.length) + hv.length);
    }
    bodySizes[i] = size;
    total += sizeOfVarint(size) + size;
  }
  const body = Buffer.allocUnsafe(total);
  let p = 0;
  for (let i = 0; i < n; i++) {
    p = writeVarint(body, p, bodySizes[i]);
    body[p++] = 0; // attributes
    p = writeVarint(body, p, timestamps[i] - baseTimestamp);
    p = writeVarint(body, p, deltas[i]);
    const k = keys[i];
    if (k === null) p = writeVarint(body, p, -1);
    else {
      p = writeVarint(body, p, k.length);
      p += k.copy(body, p);
    }
    const v = values[i];
    if (v === null) p = writeVarint(body, p, -1);
    else {
      p = writeVarint(body, p, v.length);
      p += v.copy(body, p);
    }
    p = writeVarint(body, p, hkeys[i].length);
    for (let h = 0; h < hkeys[i].length; h++) {
      p = writeVarint(body, p, hkeys[i][h].length);
      p += hkeys[i][h].copy(body, p);
      const hv = hvals[i][h];
      if (hv === null) p = writeVarint(body, p, -1);
      else {
        p = writeVarint(body, p, hv.length);
        p += hv.copy(body, p);
      }
    }
  }
  const lastOffsetDelta = o.lastOffsetDelta ?? (n > 0 ? deltas[n - 1] : 0);
  if ((o.timestampType ?? TimestampType.CREATE_TIME) === TimestampType.LOG_APPEND_TIME) maxTimestamp = o.logAppendTimeMs ?? now;
  return { body, baseTimestamp, maxTimestamp, lastOffsetDelta };
}

function assemble(o: BuildBatchOptions, p: Prepared, section: Buffer): Buffer {
  const size = RECORD_BATCH_OVERHEAD + section.length;
  const buf = Buffer.allocUnsafe(size);
  writeInt64(buf, 0, o.baseOffset ?? 0);
  buf.writeInt32BE(size - LOG_OVERHEAD, 8);
  buf.writeInt32BE(o.partitionLeaderEpoch ?? NO_PARTITION_LEADER_EPOCH, 12);
  buf.writeInt8(2, 16);
  const attributes = computeAttributes(
    o.compression ?? Compression.NONE,
    o.timestampType ?? TimestampType.CREATE_TIME,
    o.isTransactional ?? false,
    o.isControl ?? false,
    o.deleteHorizonMs !== undefined,
  );
  buf.writeInt16BE(attributes, 21);
  buf.writeInt32BE(p.lastOffsetDelta, 23);
  writeInt64(buf, 27, p.baseTimestamp);
  writeInt64(buf, 35, p.maxTimestamp);
  writeInt64(buf, 43, o.producerId ?? NO_PRODUCER_ID);
  buf.writeInt16BE(o.producerEpoch ?? NO_PRODUCER_EPOCH, 51);
  buf.writeInt32BE(o.baseSequence ?? NO_SEQUENCE, 53);
  buf.writeInt32BE(o.records.length, 57);
  section.copy(buf, RECORDS_OFFSET);
  buf.writeUInt32BE(computeBatchCrc(buf, 0, size), CRC_OFFSET);
  return buf;
}

/** Build one v2 batch as the Java client's MemoryRecordsBuilder lays it out (baseTimestamp = first record's). */
export async function buildBatch(o: BuildBatchOptions): Promise<Buffer> {
  const p = encodeRecords(o);
  const codec = o.compression ?? Compression.NONE;
  const section = codec === Compression.NONE ? p.body : await compress(codec, p.body, o.compressionLevel);
  return assemble(o, p, section);
}

/** buildBatch without a promise (throws CompressionError for zstd on Node 20). */
export function buildBatchSync(o: BuildBatchOptions): Buffer {
  const p = encodeRecords(o);
  const codec = o.compression ?? Compression.NONE;
  const section = codec === Compression.NONE ? p.body : compressSync(codec, p.body, o.compressionLevel);
  return assemble(o, p, section);
}

/**
 * A batch rebuilt around some of its records (what the log cleaner writes, as Kafka's MemoryRecords.filterTo):
 * the same base and last offset, producer fields, leader epoch, codec and timestamp type; `records` keep their
 * offsets and timestamps. Re-compressed with the batch's codec at its default level.
 */
export function rebuildBatch(b: BatchInfo, records: DecodedRecord[], deleteHorizonMs?: number): Promise<Buffer> {
  return buildBatch({
    baseOffset: b.baseOffset,
    partitionLeaderEpoch: b.partitionLeaderEpoch,
    records: records.map((r) => ({ key: r.key, value: r.value, headers: r.headers, timestamp: r.timestamp, offsetDelta: r.offsetDelta })),
    compression: b.compression,
    producerId: b.producerId,
    producerEpoch: b.producerEpoch,
    baseSequence: b.baseSequence,
    isTransactional: b.isTransactional,
    isControl: b.isControl,
    timestampType: b.timestampType,
    logAppendTimeMs: b.maxTimestamp,
    lastOffsetDelta: b.lastOffsetDelta,
    deleteHorizonMs,
  });
}

/**
 * The batch with no records left (Kafka's DefaultRecordBatch.writeEmptyHeader): kept by the cleaner when it is
 * the last batch of a live producer, so the producer's epoch and sequence survive compaction. Both timestamps
 * are the batch's max timestamp (retention by time still sees it); no codec.
 */
export function emptyBatchOf(b: BatchInfo): Buffer {
  const empty: Prepared = { body: Buffer.alloc(0), baseTimestamp: b.maxTimestamp, maxTimestamp: b.maxTimestamp, lastOffsetDelta: b.lastOffsetDelta };
  return assemble({
    baseOffset: b.baseOffset, partitionLeaderEpoch: b.partitionLeaderEpoch, records: [], producerId: b.producerId, producerEpoch: b.producerEpoch,
    baseSequence: b.baseSequence, isTransactional: b.isTransactional, isControl: b.isControl, timestampType: b.timestampType,
  }, empty, empty.body);
}
