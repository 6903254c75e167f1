// Reading the records inside a v2 batch (DefaultRecord): walkRecords, the one parser, which both decoding
// (decodeRecords, for features that need the records) and validation (validate-records.ts) run.
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
import { BatchInfo, Compression, readBatchHeader, RECORDS_OFFSET, TimestampType } from './batch';
import { decompress, decompressSync, DecompressOptions } from './compression';

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
export function walkRecords(data: Buffer, start: number, end: number, ctx: WalkContext, full: boolean, visit: RecordVisitor): void {
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

export function contextOf(b: BatchInfo): WalkContext {
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
