// Record batch v2 (magic 2): header layout, the Produce path's header-only scan, in-place offset assignment,
// and the header reader that storage recovery uses.
//
// Numbers, not bigints: baseOffset, timestamps and producerId are int64 on the wire but are returned as
// JavaScript numbers, exact while |v| <= 2^53 - 1 (Number.MAX_SAFE_INTEGER). Offsets and epoch-millisecond
// timestamps stay far below that, and producer ids are allocated by the broker from 0 (-1 means none). A
// header whose int64 field is outside that range is refused (INVALID_RECORD from scanBatches; 'corrupt' from
// readBatchHeader), where Kafka would accept it: no client writes such values, and a rounded producer id
// would silently merge two producers.
//
// Kafka rules, verified in Kafka's source (apache/kafka):
// - ProduceRequest.validateRecords (v3+): no batch -> INVALID_RECORD "... must have at least one record batch
//   per partition"; first batch magic != 2 -> INVALID_RECORD; zstd before produce v7 ->
//   UNSUPPORTED_COMPRESSION_TYPE; a second batch -> INVALID_RECORD "... exactly one record batch per partition".
// - ByteBufferLogInputStream.nextBatch/nextBatchSize, which those iterate with: fewer than 12 bytes left ->
//   no more batches; batch length < 14 (LegacyRecord.RECORD_OVERHEAD_V0) -> CORRUPT_MESSAGE; fewer than 17
//   bytes left -> no more batches; magic < 0 or > 2 -> CORRUPT_MESSAGE; a batch running past the end -> no more
//   batches. So a first batch that runs past the buffer is INVALID_RECORD (no batch at all), and trailing
//   bytes after a complete first batch that do not form a batch are dropped: UnifiedLog.trimInvalidBytes
//   appends only the valid bytes. `validBytes` in the scan result is that length.
// - UnifiedLog.analyzeAndValidateRecords, per batch in order: baseOffset != 0 from a client -> INVALID_RECORD
//   (current trunk); size (batchLength + 12) > max.message.bytes -> MESSAGE_TOO_LARGE; size < 61 or CRC
//   mismatch (DefaultRecordBatch.isValid) -> CORRUPT_MESSAGE; CompressionType.forId on ids 5-7 throws
//   IllegalArgumentException, which ReplicaManager answers with UNKNOWN_SERVER_ERROR.
// - LogValidator.validateBatch (client origin): lastOffsetDelta + 1 <= 0, recordCount <= 0, or
//   recordCount != lastOffsetDelta + 1 -> INVALID_RECORD; a control batch -> INVALID_RECORD; producerId >= 0
//   with baseSequence < 0 -> INVALID_RECORD.
// - DefaultRecordBatch.setMaxTimestamp: rewrites attributes (timestamp type) and maxTimestamp only, and the
//   CRC only when one of them changed; baseTimestamp is never touched ("always the create time of the first
//   record"). setLastOffset/setPartitionLeaderEpoch write fields outside the CRC.
// - ReplicaManager: a partition's error_message in the ProduceResponse is set only for record-level errors
//   (RecordValidationException: validateRecords's results that carry recordErrors); for every error here
//   Kafka sends error_message null. The messages here are Kafka's texts, for logs.
import { ErrorCode } from '../common/errors';
import { crc32c } from './crc32c';

// ---------------------------------------------------------------------------------------------------------
// Layout
// ---------------------------------------------------------------------------------------------------------

export const BASE_OFFSET_OFFSET = 0; // int64
export const BATCH_LENGTH_OFFSET = 8; // int32: bytes after this field
export const PARTITION_LEADER_EPOCH_OFFSET = 12; // int32
export const MAGIC_OFFSET = 16; // int8
export const CRC_OFFSET = 17; // uint32, CRC-32C of [ATTRIBUTES_OFFSET, end of batch)
export const ATTRIBUTES_OFFSET = 21; // int16
export const LAST_OFFSET_DELTA_OFFSET = 23; // int32
export const BASE_TIMESTAMP_OFFSET = 27; // int64 (Kafka: firstTimestamp)
export const MAX_TIMESTAMP_OFFSET = 35; // int64
export const PRODUCER_ID_OFFSET = 43; // int64
export const PRODUCER_EPOCH_OFFSET = 51; // int16
export const BASE_SEQUENCE_OFFSET = 53; // int32
export const RECORDS_COUNT_OFFSET = 57; // int32
export const RECORDS_OFFSET = 61;
/** Size of the v2 header: a batch is at least this long. */
export const RECORD_BATCH_OVERHEAD = 61;
/** baseOffset + batchLength: the bytes not counted by batchLength. */
export const LOG_OVERHEAD = 12;
/** Bytes needed to read the magic byte. */
export const HEADER_SIZE_UP_TO_MAGIC = 17;
/** The smallest batchLength any magic allows (LegacyRecord.RECORD_OVERHEAD_V0). */
export const MIN_BATCH_LENGTH = 14;

export const MAGIC_V2 = 2;

// Attributes
export const COMPRESSION_CODEC_MASK = 0x07; // bits 0-2
export const TIMESTAMP_TYPE_MASK = 0x08; // bit 3: 0 CreateTime, 1 LogAppendTime
export const TRANSACTIONAL_FLAG_MASK = 0x10; // bit 4
export const CONTROL_FLAG_MASK = 0x20; // bit 5
export const DELETE_HORIZON_FLAG_MASK = 0x40; // bit 6: baseTimestamp holds the delete horizon (KIP-534)

export const Compression = { NONE: 0, GZIP: 1, SNAPPY: 2, LZ4: 3, ZSTD: 4 } as const;
export const TimestampType = { CREATE_TIME: 0, LOG_APPEND_TIME: 1 } as const;
export type TimestampTypeId = (typeof TimestampType)[keyof typeof TimestampType];

export const NO_TIMESTAMP = -1;
export const NO_PRODUCER_ID = -1;
export const NO_PRODUCER_EPOCH = -1;
export const NO_SEQUENCE = -1;
export const NO_PARTITION_LEADER_EPOCH = -1;

/** Kafka's default max.message.bytes (1 MB + 12). */
export const DEFAULT_MAX_MESSAGE_BYTES = 1048588;

// ---------------------------------------------------------------------------------------------------------
// Types
// ---------------------------------------------------------------------------------------------------------

/** One batch's header, read without touching its records. */
export interface BatchInfo {
  /** Byte offset of the batch in the buffer it was read from. */
  position: number;
  /** Whole batch size in bytes: batchLength + 12. */
  size: number;
  baseOffset: number;
  partitionLeaderEpoch: number;
  magic: number;
  /** Stored CRC (unsigned). */
  crc: number;
  attributes: number;
  /** attributes & 7; 5-7 are not codecs. */
  compression: number;
  timestampType: TimestampTypeId;
  isTransactional: boolean;
  isControl: boolean;
  hasDeleteHorizon: boolean;
  lastOffsetDelta: number;
  /** Timestamp of the first record (or the delete horizon when hasDeleteHorizon); -1 if none. */
  baseTimestamp: number;
  maxTimestamp: number;
  producerId: number;
  producerEpoch: number;
  baseSequence: number;
  recordCount: number;
}

export interface ScanOptions {
  /** max.message.bytes of the topic: a batch of more bytes (batchLength + 12) is MESSAGE_TOO_LARGE. */
  maxBatchBytes?: number;
  /** Produce v3+ rule: exactly one batch per partition (default true). */
  requireSingleBatch?: boolean;
  /** The Produce request version: zstd before v7 is UNSUPPORTED_COMPRESSION_TYPE (default: no check). */
  produceVersion?: number;
  /** Check each batch's CRC (default true). */
  verifyCrc?: boolean;
  /**
   * Apply the rules Kafka applies to client appends (default true): baseOffset 0, recordCount ==
   * lastOffsetDelta + 1 > 0, no control batch, a sequence when there is a producer id.
   */
  fromClient?: boolean;
}

export interface ScanOk {
  ok: true;
  batches: BatchInfo[];
  totalRecords: number;
  /** Bytes of the complete batches; trailing bytes past this are dropped, as Kafka does. */
  validBytes: number;
  /** Smallest baseTimestamp over the batches (-1 when none has one). */
  firstTimestamp: number;
  /** Largest maxTimestamp over the batches (-1 when none has one). */
  maxTimestamp: number;
  /** Index in `batches` of the batch holding maxTimestamp (-1 when none). */
  batchIndexOfMaxTimestamp: number;
}

export interface ScanError {
  ok: false;
  errorCode: number;
  errorMessage: string;
  /** Index of the batch at fault, when one is. */
  batchIndex?: number;
}

export type ScanResult = ScanOk | ScanError;

// ---------------------------------------------------------------------------------------------------------
// Field access
// ---------------------------------------------------------------------------------------------------------

/** int64 at `pos` as a number; NaN when outside the safe-integer range. */
export function readInt64(buf: Buffer, pos: number): number {
  const hi = buf.readInt32BE(pos);
  const lo = buf.readUInt32BE(pos + 4);
  if (hi > 0x1fffff || hi < -0x200000) return NaN;
  return hi * 0x100000000 + lo;
}

/** Write a safe integer as int64 at `pos`. */
export function writeInt64(buf: Buffer, pos: number, v: number): void {
  if (!Number.isSafeInteger(v)) throw new RangeError(`int64 value must be a safe integer: ${v}`);
  const lo = v % 0x100000000;
  const hi = (v - lo) / 0x100000000;
  // For negative v, lo is negative or zero: borrow from hi.
  if (lo < 0) {
    buf.writeInt32BE(hi - 1, pos);
    buf.writeUInt32BE(lo + 0x100000000, pos + 4);
  } else {
    buf.writeInt32BE(hi, pos);
    buf.writeUInt32BE(lo, pos + 4);
  }
}

/** Header fields of the batch at `pos`; the caller has checked that 61 bytes are there. */
function headerAt(buf: Buffer, pos: number): BatchInfo {
  const attributes = buf.readInt16BE(pos + ATTRIBUTES_OFFSET);
  return {
    position: pos,
    size: buf.readInt32BE(pos + BATCH_LENGTH_OFFSET) + LOG_OVERHEAD,
    baseOffset: readInt64(buf, pos + BASE_OFFSET_OFFSET),
    partitionLeaderEpoch: buf.readInt32BE(pos + PARTITION_LEADER_EPOCH_OFFSET),
    magic: buf.readInt8(pos + MAGIC_OFFSET),
    crc: buf.readUInt32BE(pos + CRC_OFFSET),
    attributes,
    compression: attributes & COMPRESSION_CODEC_MASK,
    timestampType: attributes & TIMESTAMP_TYPE_MASK ? TimestampType.LOG_APPEND_TIME : TimestampType.CREATE_TIME,
    isTransactional: (attributes & TRANSACTIONAL_FLAG_MASK) !== 0,
    isControl: (attributes & CONTROL_FLAG_MASK) !== 0,
    hasDeleteHorizon: (attributes & DELETE_HORIZON_FLAG_MASK) !== 0,
    lastOffsetDelta: buf.readInt32BE(pos + LAST_OFFSET_DELTA_OFFSET),
    baseTimestamp: readInt64(buf, pos + BASE_TIMESTAMP_OFFSET),
    maxTimestamp: readInt64(buf, pos + MAX_TIMESTAMP_OFFSET),
    producerId: readInt64(buf, pos + PRODUCER_ID_OFFSET),
    producerEpoch: buf.readInt16BE(pos + PRODUCER_EPOCH_OFFSET),
    baseSequence: buf.readInt32BE(pos + BASE_SEQUENCE_OFFSET),
    recordCount: buf.readInt32BE(pos + RECORDS_COUNT_OFFSET),
  };
}

function unsafeField(b: BatchInfo): string | null {
  if (Number.isNaN(b.baseOffset)) return 'baseOffset';
  if (Number.isNaN(b.baseTimestamp)) return 'baseTimestamp';
  if (Number.isNaN(b.maxTimestamp)) return 'maxTimestamp';
  if (Number.isNaN(b.producerId)) return 'producerId';
  return null;
}

/** CRC-32C the batch at `pos` of `size` bytes should carry. */
export function computeBatchCrc(buf: Buffer, pos: number, size: number): number {
  return crc32c(buf, pos + ATTRIBUTES_OFFSET, pos + size);
}

/** The attributes Kafka writes for these properties (DefaultRecordBatch.computeAttributes). */
export function computeAttributes(
  compression: number,
  timestampType: TimestampTypeId,
  isTransactional: boolean,
  isControl: boolean,
  hasDeleteHorizon = false,
): number {
  let a = compression & COMPRESSION_CODEC_MASK;
  if (timestampType === TimestampType.LOG_APPEND_TIME) a |= TIMESTAMP_TYPE_MASK;
  if (isTransactional) a |= TRANSACTIONAL_FLAG_MASK;
  if (isControl) a |= CONTROL_FLAG_MASK;
  if (hasDeleteHorizon) a |= DELETE_HORIZON_FLAG_MASK;
  return a;
}

// ---------------------------------------------------------------------------------------------------------
// scanBatches: the Produce path
// ---------------------------------------------------------------------------------------------------------

function fail(errorCode: number, errorMessage: string, batchIndex?: number): ScanError {
  return batchIndex === undefined ? { ok: false, errorCode, errorMessage } : { ok: false, errorCode, errorMessage, batchIndex };
}

/**
 * Walk the batches of one partition's `records` bytes of a Produce request, header by header, without
 * reading records and without copying. Applies Kafka's checks in Kafka's order (see the top of this file).
 * Record-level checks (record structure, per-record timestamps, keys on compacted topics) are in
 * validateRecords (validate-records.ts), which has to read, and maybe decompress, the records.
 */
export function scanBatches(records: Buffer, opts: ScanOptions = {}): ScanResult {
  const maxBatchBytes = opts.maxBatchBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
  const requireSingle = opts.requireSingleBatch ?? true;
  const verifyCrc = opts.verifyCrc ?? true;
  const fromClient = opts.fromClient ?? true;
  const version = opts.produceVersion;
  const vtext = version === undefined ? '3+' : String(version);

  const batches: BatchInfo[] = [];
  const len = records.length;
  let pos = 0;
  let totalRecords = 0;
  let firstTimestamp = NO_TIMESTAMP;
  let maxTimestamp = NO_TIMESTAMP;
  let batchIndexOfMaxTimestamp = -1;

  // 1. Iterate as ByteBufferLogInputStream does, with ProduceRequest.validateRecords's checks.
  for (;;) {
    const remaining = len - pos;
    if (remaining < LOG_OVERHEAD) break;
    const batchLength = records.readInt32BE(pos + BATCH_LENGTH_OFFSET);
    if (batchLength < MIN_BATCH_LENGTH) {
      return fail(
        ErrorCode.CORRUPT_MESSAGE,
        `Record size ${batchLength} is less than the minimum record overhead (${MIN_BATCH_LENGTH})`,
        batches.length,
      );
    }
    if (remaining < HEADER_SIZE_UP_TO_MAGIC) break;
    const magic = records.readInt8(pos + MAGIC_OFFSET);
    if (magic < 0 || magic > MAGIC_V2) {
      return fail(ErrorCode.CORRUPT_MESSAGE, `Invalid magic found in record: ${magic}`, batches.length);
    }
    const size = batchLength + LOG_OVERHEAD;
    if (remaining < size) break;

    if (batches.length === 0) {
      if (magic !== MAGIC_V2) {
        return fail(
          ErrorCode.INVALID_RECORD,
          `Produce requests with version ${vtext} are only allowed to contain record batches with magic version 2`,
          0,
        );
      }
    } else if (requireSingle) {
      return fail(
        ErrorCode.INVALID_RECORD,
        `Produce requests with version ${vtext} are only allowed to contain exactly one record batch per partition`,
        1,
      );
    } else if (magic !== MAGIC_V2) {
      // LogValidator.validateBatch: every batch has the first batch's magic.
      return fail(ErrorCode.INVALID_RECORD, `Batch magic ${magic} is not the same as the first batch's magic byte 2`, batches.length);
    }

    if (size < RECORD_BATCH_OVERHEAD) {
      // Kafka reads the attributes of such a batch in validateRecords, then isValid() fails it.
      if (batches.length === 0 && version !== undefined && version < 7 && size >= ATTRIBUTES_OFFSET + 2) {
        if ((records.readInt16BE(pos + ATTRIBUTES_OFFSET) & COMPRESSION_CODEC_MASK) === Compression.ZSTD) {
          return fail(
            ErrorCode.UNSUPPORTED_COMPRESSION_TYPE,
            `Produce requests with version ${version} are not allowed to use ZStandard compression`,
            0,
          );
        }
      }
      return fail(
        ErrorCode.CORRUPT_MESSAGE,
        `Record batch is corrupt (the size ${size} is smaller than the minimum allowed overhead ${RECORD_BATCH_OVERHEAD})`,
        batches.length,
      );
    }
    const b = headerAt(records, pos);
    if (batches.length === 0 && version !== undefined && version < 7 && b.compression > Compression.ZSTD) {
      // validateRecords asks the first batch for its CompressionType, which throws for ids 5-7.
      return fail(ErrorCode.UNKNOWN_SERVER_ERROR, `Unknown compression type id: ${b.compression}`, 0);
    }
    if (batches.length === 0 && version !== undefined && version < 7 && b.compression === Compression.ZSTD) {
      return fail(
        ErrorCode.UNSUPPORTED_COMPRESSION_TYPE,
        `Produce requests with version ${version} are not allowed to use ZStandard compression`,
        0,
      );
    }
    batches.push(b);
    pos += size;
  }

  if (batches.length === 0) {
    return fail(ErrorCode.INVALID_RECORD, `Produce requests with version ${vtext} must have at least one record batch per partition`);
  }

  // 2. UnifiedLog.analyzeAndValidateRecords, then 3. LogValidator.validateBatch, batch by batch.
  for (let i = 0; i < batches.length; i++) {
    const b = batches[i];
    if (fromClient && b.baseOffset !== 0) {
      return fail(
        ErrorCode.INVALID_RECORD,
        `The baseOffset of the record batch in the append should be 0, but it is ${Number.isNaN(b.baseOffset) ? 'out of range' : b.baseOffset}`,
        i,
      );
    }
    if (b.size > maxBatchBytes) {
      return fail(
        ErrorCode.MESSAGE_TOO_LARGE,
        `The record batch size in the append is ${b.size} bytes which exceeds the maximum configured value of ${maxBatchBytes}.`,
        i,
      );
    }
    if (verifyCrc) {
      const computed = computeBatchCrc(records, b.position, b.size);
      if (computed !== b.crc) {
        return fail(ErrorCode.CORRUPT_MESSAGE, `Record is corrupt (stored crc = ${b.crc}, computed crc = ${computed})`, i);
      }
    }
    if (b.compression > Compression.ZSTD) {
      return fail(ErrorCode.UNKNOWN_SERVER_ERROR, `Unknown compression type id: ${b.compression}`, i);
    }
    const unsafe = unsafeField(b);
    if (unsafe !== null) {
      return fail(ErrorCode.INVALID_RECORD, `Record batch field ${unsafe} is outside the range this broker supports (|v| < 2^53)`, i);
    }
    if (fromClient) {
      const countFromOffsets = b.lastOffsetDelta + 1;
      if (countFromOffsets <= 0) {
        return fail(ErrorCode.INVALID_RECORD, `Batch has an invalid offset range: [${b.baseOffset}, ${b.baseOffset + b.lastOffsetDelta}]`, i);
      }
      if (b.recordCount <= 0) {
        return fail(ErrorCode.INVALID_RECORD, `Invalid reported count for record batch: ${b.recordCount}`, i);
      }
      if (countFromOffsets !== b.recordCount) {
        return fail(
          ErrorCode.INVALID_RECORD,
          `Inconsistent batch offset range [${b.baseOffset}, ${b.baseOffset + b.lastOffsetDelta}] and count of records ${b.recordCount}`,
          i,
        );
      }
      if (b.isControl) {
        return fail(ErrorCode.INVALID_RECORD, 'Clients are not allowed to write control records', i);
      }
      if (b.producerId > NO_PRODUCER_ID && b.baseSequence < 0) {
        return fail(ErrorCode.INVALID_RECORD, `Invalid sequence number ${b.baseSequence} in record batch with producerId ${b.producerId}`, i);
      }
    }
    totalRecords += b.recordCount;
    if (b.baseTimestamp !== NO_TIMESTAMP && (firstTimestamp === NO_TIMESTAMP || b.baseTimestamp < firstTimestamp)) {
      firstTimestamp = b.baseTimestamp;
    }
    if (b.maxTimestamp > maxTimestamp) {
      maxTimestamp = b.maxTimestamp;
      batchIndexOfMaxTimestamp = i;
    }
  }

  return { ok: true, batches, totalRecords, validBytes: pos, firstTimestamp, maxTimestamp, batchIndexOfMaxTimestamp };
}

// ---------------------------------------------------------------------------------------------------------
// assignOffsets
// ---------------------------------------------------------------------------------------------------------

/**
 * Stamp the batch IN PLACE for the log, as Kafka's in-place path does (no re-encoding):
 * - baseOffset and partitionLeaderEpoch, which are outside the CRC;
 * - with `logAppendTimeMs` (the topic uses LogAppendTime): the timestamp-type bit and maxTimestamp, then the
 *   CRC. baseTimestamp keeps the first record's create time, as Kafka keeps it.
 * - without it (CreateTime) and a batch that carries the LogAppendTime bit (Kafka lets it through when its
 *   maxTimestamp is in range): the bit is cleared and the CRC recomputed, as setMaxTimestamp(CREATE_TIME, max)
 *   does. Otherwise the CRC is left as it is.
 * - `recordsMaxTimestamp` (CreateTime only): the largest record timestamp, as validateRecords computes it.
 *   Kafka writes that value (it reads every record), so a header maxTimestamp a client got wrong is
 *   corrected, with the CRC. Without it the header's own maxTimestamp is kept.
 * When the attributes are rewritten, they are recomputed from the known bits, as Kafka does (unused bits
 * 7-15 are dropped). `batch` is updated to match.
 */
export function assignOffsets(
  records: Buffer,
  batch: BatchInfo,
  baseOffset: number,
  leaderEpoch: number,
  logAppendTimeMs: number | null,
  recordsMaxTimestamp?: number,
): void {
  const pos = batch.position;
  writeInt64(records, pos + BASE_OFFSET_OFFSET, baseOffset);
  records.writeInt32BE(leaderEpoch, pos + PARTITION_LEADER_EPOCH_OFFSET);
  batch.baseOffset = baseOffset;
  batch.partitionLeaderEpoch = leaderEpoch;

  const wantType: TimestampTypeId = logAppendTimeMs !== null ? TimestampType.LOG_APPEND_TIME : TimestampType.CREATE_TIME;
  const wantMax = logAppendTimeMs !== null ? logAppendTimeMs : (recordsMaxTimestamp ?? batch.maxTimestamp);
  if (batch.timestampType === wantType && batch.maxTimestamp === wantMax) return;

  const attributes = computeAttributes(batch.compression, wantType, batch.isTransactional, batch.isControl, batch.hasDeleteHorizon);
  records.writeInt16BE(attributes, pos + ATTRIBUTES_OFFSET);
  writeInt64(records, pos + MAX_TIMESTAMP_OFFSET, wantMax);
  const crc = computeBatchCrc(records, pos, batch.size);
  records.writeUInt32BE(crc, pos + CRC_OFFSET);
  batch.attributes = attributes;
  batch.timestampType = wantType;
  batch.maxTimestamp = wantMax;
  batch.crc = crc;
}

// ---------------------------------------------------------------------------------------------------------
// Timestamps (header-only)
// ---------------------------------------------------------------------------------------------------------

export interface TimestampError {
  errorCode: number;
  errorMessage: string;
}

/**
 * message.timestamp.before.max.ms / after.max.ms from the batch header alone.
 *
 * Kafka (LogValidator.validateTimestamp) checks every record: on a CreateTime topic each record timestamp
 * other than -1 must lie in [now - beforeMaxMs, now + afterMaxMs]; a batch that carries the LogAppendTime bit
 * fails when the topic is LogAppendTime, or when its record timestamp (= the batch maxTimestamp) is -1.
 * From the header this checks baseTimestamp (the first record) and maxTimestamp (the largest): exact for the
 * upper bound and for every batch whose records do not go below their first record's timestamp, which is
 * what clients that stamp at send time write. A record older than the first one in its batch escapes the
 * lower bound here; validateRecords (validate-records.ts) checks each record exactly.
 */
export function checkTimestamps(
  batch: BatchInfo,
  nowMs: number,
  beforeMaxMs: number,
  afterMaxMs: number,
  topicTimestampType: TimestampTypeId = TimestampType.CREATE_TIME,
): TimestampError | null {
  if (batch.recordCount <= 0) return null;
  const lowerBound = nowMs - beforeMaxMs;
  const upperBound = nowMs + afterMaxMs;
  const bad = (ts: number): boolean => ts !== NO_TIMESTAMP && (nowMs - ts > beforeMaxMs || ts - nowMs > afterMaxMs);
  if (batch.timestampType === TimestampType.LOG_APPEND_TIME) {
    // Every record reads the batch maxTimestamp as its timestamp.
    if (topicTimestampType === TimestampType.CREATE_TIME && batch.maxTimestamp !== NO_TIMESTAMP) {
      if (!bad(batch.maxTimestamp)) return null;
      return {
        errorCode: ErrorCode.INVALID_TIMESTAMP,
        errorMessage: `One or more records have been rejected due to invalid timestamp: timestamp ${batch.maxTimestamp} is out of range [${lowerBound}, ${upperBound}]`,
      };
    }
    return {
      errorCode: ErrorCode.INVALID_TIMESTAMP,
      errorMessage: 'One or more records have been rejected due to invalid timestamp: producer should not set timestamp type to LogAppendTime',
    };
  }
  if (topicTimestampType !== TimestampType.CREATE_TIME) return null;
  for (const ts of [batch.baseTimestamp, batch.maxTimestamp]) {
    if (bad(ts)) {
      return {
        errorCode: ErrorCode.INVALID_TIMESTAMP,
        errorMessage: `One or more records have been rejected due to invalid timestamp: timestamp ${ts} is out of range [${lowerBound}, ${upperBound}]`,
      };
    }
  }
  return null;
}

// ---------------------------------------------------------------------------------------------------------
// Storage: reading headers from a file's bytes
// ---------------------------------------------------------------------------------------------------------

export type HeaderRead =
  | { status: 'ok'; batch: BatchInfo }
  /** Fewer bytes than the header or the batch claims: a torn write at the end of a segment, or more to read. */
  | { status: 'incomplete'; needed: number }
  /** The bytes at `pos` are not a valid v2 batch (bad length, magic, CRC, or out-of-range field). */
  | { status: 'corrupt'; reason: string };

export interface ReadHeaderOptions {
  /** Verify the CRC over the whole batch (default false: header fields only). */
  verifyCrc?: boolean;
}

/**
 * Read the v2 batch header at `pos` of `buf` (e.g. a segment file's bytes). With `verifyCrc` the whole batch
 * must be in `buf`; without it only the 61-byte header has to be, and `needed` tells how many bytes the full
 * batch needs when they are not all there.
 */
/** Whether any v2 batch of a records field is transactional (its headers only, nothing checked). */
export function hasTransactionalBatch(records: Buffer): boolean {
  // Up to the attributes: base offset 8, length 4, leader epoch 4, magic 1, crc 4, attributes 2.
  for (let pos = 0; pos + 23 <= records.length; pos += 12 + records.readInt32BE(pos + 8)) {
    if (records[pos + 16] === MAGIC_V2 && (records.readInt16BE(pos + 21) & TRANSACTIONAL_FLAG_MASK) !== 0) return true;
    if (records.readInt32BE(pos + 8) < MIN_BATCH_LENGTH) return false;
  }
  return false;
}

export function readBatchHeader(buf: Buffer, pos: number, opts: ReadHeaderOptions = {}): HeaderRead {
  const remaining = buf.length - pos;
  if (remaining < LOG_OVERHEAD) return { status: 'incomplete', needed: LOG_OVERHEAD };
  const batchLength = buf.readInt32BE(pos + BATCH_LENGTH_OFFSET);
  const size = batchLength + LOG_OVERHEAD;
  if (size < RECORD_BATCH_OVERHEAD) return { status: 'corrupt', reason: `batch size ${size} is below the v2 header size ${RECORD_BATCH_OVERHEAD}` };
  if (remaining < HEADER_SIZE_UP_TO_MAGIC) return { status: 'incomplete', needed: size };
  const magic = buf.readInt8(pos + MAGIC_OFFSET);
  if (magic !== MAGIC_V2) return { status: 'corrupt', reason: `magic ${magic} is not 2` };
  if (remaining < RECORD_BATCH_OVERHEAD) return { status: 'incomplete', needed: size };
  const b = headerAt(buf, pos);
  const unsafe = unsafeField(b);
  if (unsafe !== null) return { status: 'corrupt', reason: `${unsafe} is outside the safe integer range` };
  if (opts.verifyCrc) {
    if (remaining < size) return { status: 'incomplete', needed: size };
    const computed = computeBatchCrc(buf, pos, size);
    if (computed !== b.crc) return { status: 'corrupt', reason: `CRC mismatch (stored ${b.crc}, computed ${computed})` };
  }
  return { status: 'ok', batch: b };
}

export interface WalkResult {
  batches: BatchInfo[];
  /** Bytes from the start of `buf` covered by whole, valid batches: where a recovering log truncates. */
  validBytes: number;
  /** Why the walk stopped before the end of `buf`, if it did. */
  stop: null | { position: number; status: 'incomplete' | 'corrupt'; reason: string };
}

/** Read batch after batch from the start of `buf` (with the CRC check by default) until one is not valid. */
export function walkBatches(buf: Buffer, opts: ReadHeaderOptions = { verifyCrc: true }): WalkResult {
  const batches: BatchInfo[] = [];
  let pos = 0;
  const verifyCrc = opts.verifyCrc ?? true;
  while (pos < buf.length) {
    const r = readBatchHeader(buf, pos, { verifyCrc });
    if (r.status === 'ok' && pos + r.batch.size <= buf.length) {
      batches.push(r.batch);
      pos += r.batch.size;
      continue;
    }
    if (r.status === 'corrupt') return { batches, validBytes: pos, stop: { position: pos, status: 'corrupt', reason: r.reason } };
    return { batches, validBytes: pos, stop: { position: pos, status: 'incomplete', reason: 'truncated batch' } };
  }
  return { batches, validBytes: pos, stop: null };
}
