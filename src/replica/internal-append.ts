// The coordinators' own writes to their internal topics (__consumer_offsets, __transaction_state,
// __share_group_state) and their replay of them, and the share groups' dead-letter records to a DLQ
// partition led here:
// one uncompressed batch of records, appended through the ReplicaManager like a Produce (so
// the compacted-topic key check applies), awaited until it is in the log and, in a cluster, in every
// in-sync replica's (Kafka's coordinators write with acks=all).
import type { Logger } from 'pino';
import { ErrorCode } from '../common/errors';
import { buildBatchSync, type BuildRecord } from '../records/records';
import { StorageError } from '../storage';
import { replayKeyedRecords } from '../storage/replay';
import type { Partition, ReplicaManager } from './replica-manager';

/** Produce version the appends are validated as (v3+: one batch; zstd allowed). */
const APPEND_PRODUCE_VERSION = 11;

/** How long a write waits for the in-sync replicas (Kafka's offsets.commit.timeout.ms default). */
const REPLICATION_TIMEOUT_MS = 5000;

export interface InternalAppendResult {
  /** The append's own error code; callers map it to what their clients should see. */
  errorCode: number;
  errorMessage: string | null;
  /** The offset of the batch's last record (-1 when it was not appended). */
  lastOffset: number;
}

/** The producer of a transactional batch (TxnOffsetCommit's offsets). */
export interface TxnProducer {
  producerId: number;
  producerEpoch: number;
}

/**
 * The append takes its place in the partition's order synchronously, at call time: calls land in the
 * log in call order (queued, like any append, behind a compressed batch still being checked).
 * With `producer`, the batch is that producer's transactional batch; the coordinator's batches carry
 * no sequence of their own (base sequence 0, as Kafka's coordinators write them), so they are
 * appended with origin 'coordinator' and only the epoch is checked.
 */
export async function appendInternalRecords(replicas: ReplicaManager, partition: Partition, records: BuildRecord[],
  producer?: TxnProducer): Promise<InternalAppendResult> {
  const nowMs = Date.now();
  let appended;
  try {
    const transactional = producer ? { ...producer, baseSequence: 0, isTransactional: true } : {};
    const batch = buildBatchSync({ records: records.map((r) => ({ ...r, timestamp: nowMs })), nowMs, ...transactional });
    appended = await replicas.append(partition, batch, replicas.leaderEpoch(partition), { produceVersion: APPEND_PRODUCE_VERSION, nowMs, origin: 'coordinator' });
  } catch (e) {
    return failed(e, ErrorCode.UNKNOWN_SERVER_ERROR);
  }
  if (appended.errorCode !== ErrorCode.NONE) return { errorCode: appended.errorCode, errorMessage: appended.errorMessage, lastOffset: -1 };
  try {
    await appended.done;
  } catch (e) {
    return failed(e, ErrorCode.KAFKA_STORAGE_ERROR);
  }
  const errorCode = await replicas.waitForInSyncReplicas(partition, appended.lastOffset, REPLICATION_TIMEOUT_MS);
  return { errorCode, errorMessage: null, lastOffset: appended.lastOffset };
}

function failed(e: unknown, otherwise: number): InternalAppendResult {
  return { errorCode: e instanceof StorageError ? e.errorCode : otherwise, errorMessage: e instanceof Error ? e.message : String(e), lastOffset: -1 };
}

// How an append error reaches a coordinator's client. The coordinators map the errors they share the same way:

/** The unavailable-partition errors: the client should find the coordinator again, or retry. */
export function commonCoordinatorError(code: number): number | null {
  switch (code) {
    case ErrorCode.UNKNOWN_TOPIC_OR_PARTITION:
    case ErrorCode.NOT_ENOUGH_REPLICAS:
    case ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND:
      return ErrorCode.COORDINATOR_NOT_AVAILABLE;
    case ErrorCode.NOT_LEADER_OR_FOLLOWER:
    case ErrorCode.KAFKA_STORAGE_ERROR:
      return ErrorCode.NOT_COORDINATOR;
    default:
      return null;
  }
}

export const isTooLarge = (code: number): boolean =>
  code === ErrorCode.MESSAGE_TOO_LARGE || code === ErrorCode.RECORD_LIST_TOO_LARGE || code === ErrorCode.INVALID_FETCH_SIZE;

/**
 * Kafka 4's mapping for a coordinator write (CoordinatorOperationExceptionHelper), which is also the
 * transaction coordinator's (TransactionStateManager.appendTransactionToLog): a timeout makes the
 * coordinator unavailable, a write too large is the server's error.
 */
export function coordinatorAppendError(code: number): number {
  if (code === ErrorCode.NONE) return code;
  if (code === ErrorCode.REQUEST_TIMED_OUT) return ErrorCode.COORDINATOR_NOT_AVAILABLE;
  return commonCoordinatorError(code) ?? (isTooLarge(code) ? ErrorCode.UNKNOWN_SERVER_ERROR : code);
}

/**
 * One record of a coordinator whose topic holds no transactions (__transaction_state,
 * __share_group_state) appended to its partition hosted here: the error code its client should see
 * and the record's offset. A failed append is logged with `context`.
 */
export async function appendCoordinatorRecord(replicas: ReplicaManager, topic: string, index: number, record: BuildRecord,
  context: Record<string, unknown>, log?: Logger): Promise<{ errorCode: number; offset: number }> {
  const partition = replicas.partition(topic, index);
  if (!partition) return { errorCode: coordinatorAppendError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION), offset: -1 };
  const result = await appendInternalRecords(replicas, partition, [record]);
  if (result.errorCode !== ErrorCode.NONE) {
    log?.warn({ ...context, partition: index, errorCode: result.errorCode, reason: result.errorMessage }, `writing to ${topic} failed`);
  }
  return { errorCode: coordinatorAppendError(result.errorCode), offset: result.lastOffset };
}

/**
 * Replays the keyed records of such a coordinator's partition hosted here (rejects if it is not),
 * logging what it skips and where an unreadable batch stopped it.
 */
export async function replayCoordinatorPartition(replicas: ReplicaManager, topic: string, index: number,
  visit: (key: Buffer, value: Buffer | null, offset: number) => void, log?: Logger): Promise<void> {
  const p = replicas.partition(topic, index);
  if (!p) throw new Error(`${topic}-${index} is not hosted by this broker`);
  const end = await replayKeyedRecords(p.log, visit, (skip) => log?.warn({ ...skip, partition: index }, `skipping an unreadable part of ${topic}`));
  if (end < p.log.writtenEndOffset) {
    log?.error({ partition: index, offset: end }, `unreadable batch in ${topic}; stopped loading the partition there`);
  }
}
