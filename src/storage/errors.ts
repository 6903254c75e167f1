/**
 * Errors storage reports to its callers, each carrying the Kafka error code a
 * handler answers with (the codes come from common/errors; storage knows
 * nothing else of the wire).
 */
import { ErrorCode } from '../common/errors';

/** The errors storage can report. */
export type StorageErrorName = 'OFFSET_OUT_OF_RANGE' | 'CORRUPT_MESSAGE' | 'RECORD_LIST_TOO_LARGE' | 'KAFKA_STORAGE_ERROR';

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
