// Records inside a v2 batch (DefaultRecord): reading them when a feature needs them, Kafka's record-level
// validation, and building batches (tests, control markers, internal topics).
//
// Record layout (all varints zigzag, as Kafka's ByteUtils writes them):
//   length varint (bytes after it) | attributes int8 (unused, 0) | timestampDelta varlong | offsetDelta varint
//   | keyLength varint (-1: null) | key | valueLength varint (-1: null) | value
//   | headerCount varint | headers: [keyLength varint (>= 0) | key utf8 | valueLength varint (-1: null) | value]
// A record's timestamp is baseTimestamp + timestampDelta, or the batch maxTimestamp in a LogAppendTime batch;
// its offset is baseOffset + offsetDelta.
//
// Kafka's checks, from DefaultRecord.readFrom and DefaultRecordBatch's iterators: a varint of more than 5
// bytes (varlong: 10), a record running past the data, a body whose fields do not add up to its length, a
// negative header count or header key length -> "invalid record structure"; fewer records than the count
// ("premature EOF") or bytes left after the count ("records still remaining") -> INVALID_RECORD; a negative
// count is invalid and a count of 0 reads nothing. Key and value lengths below 0 all mean null.
import { ErrorCode } from '../common/errors';
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
  readBatchHeader,
  RECORD_BATCH_OVERHEAD,
  RECORDS_OFFSET,
  TimestampType,
  TimestampTypeId,
  writeInt64,
} from './batch';
import { compress, compressSync, decompress, decompressSync, DecompressOptions, hasSyncCodec, OutputLimitError } from './compression';

export interface RecordHeader {
  key: string;
  value: Buffer | null;
}

export interface DecodedRecord {
  offset: number;
  offsetDelta: number;
  timestamp: number;
  /** Views into the batch (uncompressed) or into the decompressed data: copy them to keep them past it. */
  key: Buffer | null;
  value: Buffer | null;
  headers: RecordHeader[];
}

/** A record's bytes do not parse: Kafka's InvalidRecordException, INVALID_RECORD on the wire. */
export class InvalidRecordError extends Error {
  readonly errorCode = ErrorCode.INVALID_RECORD;
  constructor(message: string) {
    super(message);
    this.name = 'InvalidRecordError';
  }
}

// ---------------------------------------------------------------------------------------------------------
// Varints (no allocation: the position after a read is left in `cur`)
// ---------------------------------------------------------------------------------------------------------

let cur = 0;

function structure(): InvalidRecordError {
  return new InvalidRecordError('Found invalid record structure');
}

/** Zigzag varint (at most 5 bytes) at `pos` of buf[.., end); sets `cur` past it. */
function readVarint(buf: Buffer, pos: number, end: number): number {
  let value = 0;
  let shift = 0;
  for (;;) {
    if (pos >= end) throw new InvalidRecordError('Incorrect declared batch size, premature EOF reached');
    const b = buf[pos++];
    if ((b & 0x80) === 0) {
      value |= b << shift;
      break;
    }
    value |= (b & 0x7f) << shift;
    shift += 7;
    if (shift > 28) throw structure();
  }
  cur = pos;
  return (value >>> 1) ^ -(value & 1);
}

/** Zigzag varlong (at most 10 bytes) as a number, exact within +-2^53; sets `cur`. */
function readVarlong(buf: Buffer, pos: number, end: number): number {
  let raw = 0;
  let mul = 1;
  for (let i = 0; ; i++) {
    if (pos >= end) throw new InvalidRecordError('Incorrect declared batch size, premature EOF reached');
    const b = buf[pos++];
    raw += (b & 0x7f) * mul;
    if ((b & 0x80) === 0) break;
    mul *= 128;
    if (i >= 9) throw structure();
  }
  cur = pos;
  return raw % 2 === 0 ? raw / 2 : -(raw + 1) / 2;
}

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

// ---------------------------------------------------------------------------------------------------------
// Walking records
// ---------------------------------------------------------------------------------------------------------

interface WalkContext {
  baseOffset: number;
  baseTimestamp: number;
  /** The batch maxTimestamp when the batch is LogAppendTime, else null. */
  logAppendTime: number | null;
  count: number;
}

/** Called per record; key/value/headers are only materialised when `full`. */
type RecordVisitor = (
  index: number,
  offsetDelta: number,
  timestamp: number,
  keyStart: number,
  keyLen: number,
  valueStart: number,
  valueLen: number,
  headers: RecordHeader[] | null,
) => void;

/** Parse `ctx.count` records from data[start, end); throws InvalidRecordError as Kafka's iterators do. */
function walkRecords(data: Buffer, start: number, end: number, ctx: WalkContext, full: boolean, visit: RecordVisitor): void {
  if (ctx.count < 0) throw new InvalidRecordError(`Found invalid record count ${ctx.count} in magic v2 batch`);
  if (ctx.count === 0) return;
  let pos = start;
  for (let i = 0; i < ctx.count; i++) {
    const bodySize = readVarint(data, pos, end);
    pos = cur;
    if (bodySize < 0 || end - pos < bodySize) {
      throw new InvalidRecordError(
        `Invalid record size: expected ${bodySize} bytes in record payload, but instead the buffer has only ${end - pos} remaining bytes.`,
      );
    }
    const recordStart = pos;
    const recordEnd = pos + bodySize;
    if (bodySize < 1) throw structure();
    pos++; // attributes
    const tsDelta = readVarlong(data, pos, recordEnd);
    const offsetDelta = readVarint(data, cur, recordEnd);
    const keyLen = readVarint(data, cur, recordEnd);
    const keyStart = cur;
    pos = keyLen >= 0 ? keyStart + keyLen : keyStart;
    if (pos > recordEnd) throw structure();
    const valueLen = readVarint(data, pos, recordEnd);
    const valueStart = cur;
    pos = valueLen >= 0 ? valueStart + valueLen : valueStart;
    if (pos > recordEnd) throw structure();
    const headerCount = readVarint(data, pos, recordEnd);
    pos = cur;
    if (headerCount < 0) throw new InvalidRecordError(`Found invalid number of record headers ${headerCount}`);
    if (headerCount > recordEnd - pos) {
      throw new InvalidRecordError(`Found invalid number of record headers. ${headerCount} is larger than the remaining size of the buffer`);
    }
    let headers: RecordHeader[] | null = null;
    if (full) headers = headerCount === 0 ? [] : new Array<RecordHeader>(headerCount);
    for (let h = 0; h < headerCount; h++) {
      const hkLen = readVarint(data, pos, recordEnd);
      if (hkLen < 0) throw new InvalidRecordError(`Invalid negative header key size ${hkLen}`);
      const hkStart = cur;
      pos = hkStart + hkLen;
      if (pos > recordEnd) throw structure();
      const hvLen = readVarint(data, pos, recordEnd);
      const hvStart = cur;
      pos = hvLen >= 0 ? hvStart + hvLen : hvStart;
      if (pos > recordEnd) throw structure();
      if (headers !== null) {
        headers[h] = {
          key: data.toString('utf8', hkStart, hkStart + hkLen),
          value: hvLen >= 0 ? data.subarray(hvStart, hvStart + hvLen) : null,
        };
      }
    }
    if (pos !== recordEnd) {
      throw new InvalidRecordError(
        `Invalid record size: expected to read ${bodySize} bytes in record payload, but instead read ${pos - recordStart}`,
      );
    }
    let timestamp: number;
    if (ctx.logAppendTime !== null) timestamp = ctx.logAppendTime;
    else {
      timestamp = ctx.baseTimestamp + tsDelta;
      if (!Number.isSafeInteger(timestamp)) throw structure();
    }
    visit(i, offsetDelta, timestamp, keyStart, keyLen, valueStart, valueLen, headers);
  }
  if (pos !== end) throw new InvalidRecordError('Incorrect declared batch size, records still remaining in file');
}

function contextOf(b: BatchInfo): WalkContext {
  return {
    baseOffset: b.baseOffset,
    baseTimestamp: b.baseTimestamp,
    logAppendTime: b.timestampType === TimestampType.LOG_APPEND_TIME ? b.maxTimestamp : null,
    count: b.recordCount,
  };
}

/** The batch at `pos` of `buf`, header checked (not the CRC), whole batch present. */
function batchAt(buf: Buffer, pos: number): BatchInfo {
  const r = readBatchHeader(buf, pos);
  if (r.status === 'corrupt') throw new InvalidRecordError(`Not a v2 record batch: ${r.reason}`);
  if (r.status === 'incomplete' || pos + r.batch.size > buf.length) {
    throw new InvalidRecordError('Incorrect declared batch size, premature EOF reached');
  }
  return r.batch;
}

// ---------------------------------------------------------------------------------------------------------
// decodeRecords
// ---------------------------------------------------------------------------------------------------------

function collect(data: Buffer, start: number, end: number, b: BatchInfo): DecodedRecord[] {
  const out: DecodedRecord[] = [];
  walkRecords(data, start, end, contextOf(b), true, (_i, offsetDelta, timestamp, ks, kl, vs, vl, headers) => {
    out.push({
      offset: b.baseOffset + offsetDelta,
      offsetDelta,
      timestamp,
      key: kl >= 0 ? data.subarray(ks, ks + kl) : null,
      value: vl >= 0 ? data.subarray(vs, vs + vl) : null,
      headers: headers ?? [],
    });
  });
  return out;
}

/**
 * The records of one batch (`batchBytes` starts at the batch; trailing bytes are ignored), decompressed as
 * needed. Throws InvalidRecordError for malformed records, CompressionError for undecodable data.
 */
export async function decodeRecords(batchBytes: Buffer, opts?: DecompressOptions): Promise<DecodedRecord[]> {
  const b = batchAt(batchBytes, 0);
  if (b.compression === Compression.NONE) return collect(batchBytes, RECORDS_OFFSET, b.size, b);
  const data = await decompress(b.compression, batchBytes.subarray(RECORDS_OFFSET, b.size), opts);
  return collect(data, 0, data.length, b);
}

/** decodeRecords without a promise (a compressed batch needs a sync codec: hasSyncCodec in compression.ts). */
export function decodeRecordsSync(batchBytes: Buffer, opts?: DecompressOptions): DecodedRecord[] {
  const b = batchAt(batchBytes, 0);
  if (b.compression === Compression.NONE) return collect(batchBytes, RECORDS_OFFSET, b.size, b);
  const data = decompressSync(b.compression, batchBytes.subarray(RECORDS_OFFSET, b.size), opts);
  return collect(data, 0, data.length, b);
}

// ---------------------------------------------------------------------------------------------------------
// validateRecords: LogValidator's per-record checks
// ---------------------------------------------------------------------------------------------------------

export interface RecordValidationOptions {
  nowMs: number;
  /** The topic's message.timestamp.type. */
  timestampType: TimestampTypeId;
  /** message.timestamp.before.max.ms (default: no bound). */
  beforeMaxMs?: number;
  /** message.timestamp.after.max.ms (default: no bound). */
  afterMaxMs?: number;
  /** cleanup.policy contains compact: every record needs a key. */
  compacted?: boolean;
  /** Bound for decompressed bytes (see DecompressOptions). */
  maxDecompressedBytes?: number;
}

export interface RecordError {
  batchIndex: number;
  message: string;
}

export interface RecordValidationOk {
  ok: true;
  /** Largest record timestamp (-1 if none), what Kafka writes as maxTimestamp of a CreateTime batch. */
  maxTimestamp: number;
  /** offsetDelta of the first record with that timestamp (-1 if none). */
  offsetDeltaOfMaxTimestamp: number;
  /**
   * Whether the records' offsetDeltas are 0, 1, 2, ...: Kafka re-builds a compressed batch whose inner
   * offsets are not (LogValidator's in-place assignment is off), which decodeRecords + buildBatch can do.
   */
  innerOffsetsSequential: boolean;
}

export interface RecordValidationError {
  ok: false;
  errorCode: number;
  errorMessage: string;
  /** Per-record errors (ProduceResponse record_errors); empty for a structural error of the batch. */
  recordErrors: RecordError[];
}

export type RecordValidation = RecordValidationOk | RecordValidationError;

function validateWalk(data: Buffer, start: number, end: number, b: BatchInfo, o: RecordValidationOptions): RecordValidation {
  const before = o.beforeMaxMs ?? Infinity;
  const after = o.afterMaxMs ?? Infinity;
  const errors: RecordError[] = [];
  let anyTimestampError = false;
  let maxTs = NO_TIMESTAMP;
  let maxTsDelta = -1;
  let sequential = true;
  const lat = b.timestampType === TimestampType.LOG_APPEND_TIME;
  try {
    walkRecords(data, start, end, contextOf(b), false, (i, offsetDelta, ts, _ks, keyLen) => {
      if (offsetDelta !== i) sequential = false;
      if (o.compacted && keyLen < 0) {
        errors.push({ batchIndex: i, message: 'Compacted topic cannot accept message without key' });
        return;
      }
      if (o.timestampType === TimestampType.CREATE_TIME && ts !== NO_TIMESTAMP) {
        if (o.nowMs - ts > before || ts - o.nowMs > after) {
          anyTimestampError = true;
          errors.push({
            batchIndex: i,
            message: `Timestamp ${ts} of message with offset ${b.baseOffset + offsetDelta} is out of range. The timestamp should be within [${o.nowMs - before}, ${o.nowMs + after}]`,
          });
          return;
        }
      } else if (lat) {
        anyTimestampError = true;
        errors.push({
          batchIndex: i,
          message: 'Invalid timestamp type in message. Producer should not set timestamp type to LogAppendTime.',
        });
        return;
      }
      if (ts > maxTs) {
        maxTs = ts;
        maxTsDelta = offsetDelta;
      }
    });
  } catch (e) {
    if (e instanceof InvalidRecordError) return { ok: false, errorCode: ErrorCode.INVALID_RECORD, errorMessage: e.message, recordErrors: [] };
    throw e;
  }
  if (errors.length > 0) {
    if (anyTimestampError) {
      return {
        ok: false,
        errorCode: ErrorCode.INVALID_TIMESTAMP,
        errorMessage: 'One or more records have been rejected due to invalid timestamp',
        recordErrors: errors,
      };
    }
    const shown = errors.slice(0, 3).map((e) => `RecordError(batchIndex=${e.batchIndex}, message='${e.message}')`);
    return {
      ok: false,
      errorCode: ErrorCode.INVALID_RECORD,
      errorMessage: `One or more records have been rejected due to ${errors.length} record errors in total, and only showing the first three errors at most: [${shown.join(', ')}]`,
      recordErrors: errors,
    };
  }
  return { ok: true, maxTimestamp: maxTs, offsetDeltaOfMaxTimestamp: maxTsDelta, innerOffsetsSequential: sequential };
}

function compressedSection(records: Buffer, b: BatchInfo): Buffer {
  return records.subarray(b.position + RECORDS_OFFSET, b.position + b.size);
}

/**
 * A compressed section that does not decompress, as Kafka answers it: its codec streams throw
 * KafkaException ("Failed to decompress record stream", or from opening the stream), which the
 * ReplicaManager answers UNKNOWN_SERVER_ERROR; a stream that ends early is an EOFException, read as
 * INVALID_RECORD "premature EOF" (zlib says so with Z_BUF_ERROR; the other codecs do not tell).
 */
function undecodable(e: unknown): RecordValidationError {
  if ((e as { cause?: { code?: string } }).cause?.code === 'Z_BUF_ERROR') {
    return { ok: false, errorCode: ErrorCode.INVALID_RECORD, errorMessage: 'Incorrect declared batch size, premature EOF reached', recordErrors: [] };
  }
  return { ok: false, errorCode: ErrorCode.UNKNOWN_SERVER_ERROR, errorMessage: `Failed to decompress record stream: ${(e as Error).message}`, recordErrors: [] };
}

function validateUncompressed(records: Buffer, batch: BatchInfo, opts: RecordValidationOptions): RecordValidation {
  return validateWalk(records, batch.position + RECORDS_OFFSET, batch.position + batch.size, batch, opts);
}

/**
 * Kafka's record-level checks (LogValidator.validateRecord and the batch iterators) on the batch `batch` of
 * `records` (a scanBatches result): record structure and count, keys on compacted topics, each record's
 * timestamp. Compressed batches are decompressed (Kafka does the same on every compressed produce) off
 * the event loop, in libuv's thread pool; undecodable data is answered as undecodable() says.
 */
export async function validateRecords(records: Buffer, batch: BatchInfo, opts: RecordValidationOptions): Promise<RecordValidation> {
  if (batch.compression === Compression.NONE) return validateUncompressed(records, batch, opts);
  let data: Buffer;
  try {
    data = await decompress(batch.compression, compressedSection(records, batch), { maxOutputBytes: opts.maxDecompressedBytes });
  } catch (e) {
    return undecodable(e);
  }
  return validateWalk(data, 0, data.length, batch, opts);
}

/**
 * Compressed sections up to this size are decompressed on the calling thread, to at most
 * INLINE_MAX_OUTPUT_BYTES, when their codec has a synchronous path here (not zstd on Node 20): for
 * small batches a trip to the thread pool costs more than the decompression, even on the event loop.
 * Measured with bench/produce-load.ts on 16-record batches of 1 KB records, all through the async
 * calls: the event loop spent 7.0 ms per 1,000 records on gzip (5.8 decompressing in place) and 4.2
 * on lz4 (3.1), the broker as a whole ~1.6x as much CPU, and throughput fell by a third. On 128-record
 * batches the async calls are cheaper: gzip 1.5 ms against 4.5 on the event loop. The output cap
 * bounds the pause in place: 64 KiB inflates in ~0.2 ms.
 */
const INLINE_MAX_COMPRESSED_BYTES = 16 * 1024;
const INLINE_MAX_OUTPUT_BYTES = 64 * 1024;

/**
 * validateRecords without a promise, when that is the cheaper way: an uncompressed batch, or a small
 * compressed one (see INLINE_MAX_COMPRESSED_BYTES); null when the batch must go through validateRecords.
 */
export function validateRecordsInline(records: Buffer, batch: BatchInfo, opts: RecordValidationOptions): RecordValidation | null {
  if (batch.compression === Compression.NONE) return validateUncompressed(records, batch, opts);
  const section = compressedSection(records, batch);
  if (section.length > INLINE_MAX_COMPRESSED_BYTES || !hasSyncCodec(batch.compression)) return null;
  let data: Buffer;
  try {
    data = decompressSync(batch.compression, section, { maxOutputBytes: Math.min(INLINE_MAX_OUTPUT_BYTES, opts.maxDecompressedBytes ?? Infinity) });
  } catch (e) {
    // Over the inline cap (not necessarily over the caller's): decompressed off the event loop instead.
    if (e instanceof OutputLimitError && (opts.maxDecompressedBytes ?? Infinity) > INLINE_MAX_OUTPUT_BYTES) return null;
    return undecodable(e);
  }
  return validateWalk(data, 0, data.length, batch, opts);
}

// ---------------------------------------------------------------------------------------------------------
// buildBatch
// ---------------------------------------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------------------------------------
// Control records (transaction markers)
// ---------------------------------------------------------------------------------------------------------

export const ControlRecordType = { ABORT: 0, COMMIT: 1 } as const;

/** Key of a control record: int16 version 0, int16 type. */
export function controlRecordKey(type: number): Buffer {
  const k = Buffer.alloc(4);
  k.writeInt16BE(0, 0);
  k.writeInt16BE(type, 2);
  return k;
}

/** Type of a control record key (ControlRecordType), or -1 if the key is not one. */
export function parseControlRecordType(key: Buffer | null): number {
  if (key === null || key.length < 4 || key.readInt16BE(0) < 0) return -1;
  return key.readInt16BE(2);
}

/** The control batch that ends a transaction (EndTransactionMarker: int16 version 0, int32 coordinatorEpoch). */
export function buildEndTxnMarker(o: {
  commit: boolean;
  producerId: number;
  producerEpoch: number;
  coordinatorEpoch: number;
  baseOffset?: number;
  partitionLeaderEpoch?: number;
  timestamp?: number;
}): Buffer {
  const value = Buffer.alloc(6);
  value.writeInt16BE(0, 0);
  value.writeInt32BE(o.coordinatorEpoch, 2);
  return buildBatchSync({
    baseOffset: o.baseOffset,
    partitionLeaderEpoch: o.partitionLeaderEpoch,
    records: [{ key: controlRecordKey(o.commit ? ControlRecordType.COMMIT : ControlRecordType.ABORT), value, timestamp: o.timestamp }],
    producerId: o.producerId,
    producerEpoch: o.producerEpoch,
    baseSequence: NO_SEQUENCE,
    isTransactional: true,
    isControl: true,
  });
}

/**
 * What the transaction marker in a control batch says (its one record: key = ControlRecordType,
 * value = EndTransactionMarker), or null when the batch holds no such record (compaction can leave
 * an empty control batch).
 */
export function readEndTxnMarker(batch: Buffer): { commit: boolean; coordinatorEpoch: number } | null {
  const [record] = decodeRecordsSync(batch);
  const type = record ? parseControlRecordType(record.key) : -1;
  if ((type !== ControlRecordType.ABORT && type !== ControlRecordType.COMMIT) || record.value === null || record.value.length < 6) return null;
  return { commit: type === ControlRecordType.COMMIT, coordinatorEpoch: record.value.readInt32BE(2) };
}
