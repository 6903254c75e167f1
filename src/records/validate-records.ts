// Kafka's record-level checks on a produced batch (LogValidator.validateRecord and the batch iterators):
// validateRecords, and validateRecordsInline, which spares small batches a trip to the thread pool.
import { ErrorCode } from '../common/errors';
import { BatchInfo, Compression, NO_TIMESTAMP, RECORDS_OFFSET, TimestampType, TimestampTypeId } from './batch';
import { decompress, decompressSync, hasSyncCodec, OutputLimitError } from './compression';
import { contextOf, InvalidRecordError, walkRecords } from './decode-records';

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
