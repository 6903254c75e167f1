/**
 * Errors storage reports to its callers, each carrying the Kafka error a
 * handler answers with (storage itself knows nothing of the wire).
 */

export const STORAGE_ERRORS = {
  OFFSET_OUT_OF_RANGE: 1,
  CORRUPT_MESSAGE: 2,
  UNKNOWN_TOPIC_OR_PARTITION: 3,
  RECORD_LIST_TOO_LARGE: 18,
  KAFKA_STORAGE_ERROR: 56,
} as const;

export type StorageErrorName = keyof typeof STORAGE_ERRORS;

export class StorageError extends Error {
  readonly errorCode: number;

  constructor(
    readonly errorName: StorageErrorName,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'StorageError';
    this.errorCode = STORAGE_ERRORS[errorName];
  }
}
