/**
 * Errors storage reports to its callers, each carrying the Kafka error code a
 * handler answers with (the codes come from common/errors; storage knows
 * nothing else of the wire).
 */
import { ErrorCode } from '../common/errors';

/** The errors storage can report. */
export type StorageErrorName = 'OFFSET_OUT_OF_RANGE' | 'CORRUPT_MESSAGE' | 'RECORD_LIST_TOO_LARGE' | 'KAFKA_STORAGE_ERROR' | 'UNKNOWN_SERVER_ERROR'
  | 'LOG_DIR_NOT_FOUND' | 'REPLICA_NOT_AVAILABLE';

export class StorageError extends Error {
  readonly errorCode: number;

  constructor(
    readonly errorName: StorageErrorName,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'StorageError';
    this.errorCode = ErrorCode[errorName];
  }
}

/**
 * A follower append whose first offset is below the log end offset (Kafka's
 * UnexpectedAppendOffsetException, which has no error code of its own: a
 * client would see UNKNOWN_SERVER_ERROR). The offsets let the fetcher handle
 * Kafka's one recoverable case: an empty log whose start falls inside the
 * leader's first batch (a DeleteRecords on the leader) starts over at the batch.
 */
export class UnexpectedAppendOffsetError extends StorageError {
  constructor(
    message: string,
    readonly firstOffset: number,
    readonly lastOffset: number,
  ) {
    super('UNKNOWN_SERVER_ERROR', message);
    this.name = 'UnexpectedAppendOffsetError';
  }
}
