/**
 * Storage: the partition logs on disk, as Kafka lays them out, with each
 * log's producer state. Knows nothing of the wire protocol or of groups; it
 * stores and serves whole v2 record batches by offset. May import common/,
 * records/ and config/ (error codes come from common/errors.ts).
 *
 *   log-manager.ts         every partition of a data dir: open/recover, create, delete topic or partition, close, flush timer
 *   partition-log.ts       one partition's log (Kafka's UnifiedLog), composed of the five files below
 *   local-log.ts           its state: segments, offsets, leader epochs, flush
 *   log-loader.ts          opening it: interrupted swaps and deletions, crash recovery
 *   log-writer.ts          appends (ordered, coalesced), a follower's appends (offsets as the leader's), roll, failed writes
 *   log-reader.ts          reads by offset and timestamp, replay, aborted transactions
 *   log-deletion.ts        DeleteRecords, retention, truncation, the cleaner's segment swaps
 *   log-segment.ts         one segment: its state in memory, appends, roll check, loading, recovery, truncation
 *   segment-files.ts       a segment's files: .log + .index + .timeindex (+ .txnindex), index writes, renames
 *   segment-reads.ts       a segment's lookups by offset and timestamp, reads, replay
 *   segment-scan.ts        validating a whole segment file and rebuilding its indexes (recovery)
 *   offset-index.ts        sparse offset -> position index (in memory, Kafka's file format)
 *   time-index.ts          sparse timestamp -> offset index
 *   transaction-index.ts   aborted transactions of a segment (.txnindex), for read_committed fetches
 *   leader-epoch-cache.ts  epoch -> start offset, leader-epoch-checkpoint
 *   checkpoint-file.ts     Kafka's text checkpoint files, written crash-safely
 *   batch-header.ts        the batch header fields storage reads (layout in src/records)
 *   file-io.ts             read helpers (writes go through src/common/durable-file.ts)
 *   dir-lock.ts            the data dir's `.lock`: one process per data dir
 *   producer-state.ts      idempotent producer state and open transactions (a PartitionLog holds it); recovery from snapshot + log
 *   log-cleaner.ts         which compacted log to clean and when (dirty ratio, compaction lags, checkpoint, throttle)
 *   compaction.ts          compacting one log: offset map, record filter, segment groups, swap
 *   offset-map.ts          the cleaner's key -> latest offset hash table
 */
export { LogManager, CLEAN_SHUTDOWN_FILE, LOG_START_OFFSET_CHECKPOINT_FILE, RECOVERY_POINT_CHECKPOINT_FILE } from './log-manager';
export type { LogManagerOptions } from './log-manager';
export { PartitionLog, partitionKey } from './partition-log';
export type { PartitionLogOptions } from './log-loader';
export type { AppendResult } from './log-writer';
export type { FileRange, ReadBytesResult, ReadOptions, ReadResult, TimestampLookup } from './log-reader';
export { StorageError, UnexpectedAppendOffsetError } from './errors';
export type { StorageErrorName } from './errors';
export { UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET } from './leader-epoch-cache';
export { NO_TIMESTAMP } from './time-index';

