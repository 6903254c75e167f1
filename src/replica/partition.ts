// One partition as the replica layer keeps it (Kafka's Partition): its log and what sits beside it
// (append queue, role in a cluster), and the shapes of an append's answer that the appends, the
// Produce handler and the coordinators share.
import type { RecordValidationError } from '../records/records';
import type { PartitionLog } from '../storage';
import type { AppendOrigin, TxnMarker } from '../storage/producer-state';
import type { PartitionRole } from './replication';
import type { TopicMeters } from '../metrics/topic-metrics';

export interface PartitionAppend {
  errorCode: number;
  /** Only record-level validation errors carry a message and record errors, as in Kafka. */
  errorMessage: string | null;
  recordErrors: { batchIndex: number; message: string }[];
  baseOffset: number;
  /** The offset of the append's last record (-1 on error): acks=all waits until the ISR has it. */
  lastOffset: number;
  logAppendTimeMs: number;
  logStartOffset: number;
  /** Settles when the batch is in the log (immediately for errors and duplicates). */
  done: Promise<void>;
}

export interface AppendOptions {
  produceVersion: number;
  nowMs: number;
  /**
   * Who writes (Kafka's AppendOrigin), default 'client'. The group and transaction coordinators'
   * own writes are 'coordinator': they carry no sequence numbers, so only the epoch is checked.
   */
  origin?: AppendOrigin;
  /** The Produce request's transactional id: a transactional batch is verified with it. */
  transactionalId?: string | null;
}

/**
 * Asks the transaction coordinator whether a partition is in the producer's transaction, before a
 * producer's first transactional write there (KIP-890 part 1: a write outside any transaction the
 * coordinator knows would hold the last stable offset forever). Answers NONE or the Produce error.
 */
export type TransactionVerifier = (transactionalId: string, producerId: number, producerEpoch: number,
  topic: string, partition: number, produceVersion: number) => number;

/**
 * Adds a partition to a transaction version 2 producer's transaction before its first write there
 * (Produce v12+, KIP-890 part 2: the client sends no AddPartitionsToTxn). Resolves to NONE or the
 * Produce error (Kafka's AddPartitionsToTxnManager with the ADD_PARTITION operation).
 */
export type TransactionPartitionAdder = (transactionalId: string, producerId: number, producerEpoch: number,
  topic: string, partition: number) => Promise<number>;

/** The first Produce version whose transactional batches add their partition to the transaction (KIP-890 part 2). */
export const FIRST_ADDING_PRODUCE_VERSION = 12;

export type { TxnMarker };

/** One leader partition: its log (with its producer state) and what the replica layer keeps beside it. */
export interface Partition {
  topic: string;
  index: number;
  log: PartitionLog;
  /** Bytes appended so far (delayed fetches compare against it to know when to wake). */
  appendedBytes: number;
  /** Its topic's BrokerTopicMetrics counts, found once for all its appends. */
  readonly meters: TopicMeters;
  /** Set while the producer state is rebuilt after a failed write. */
  rebuilding?: Promise<void>;
  /** The active segment when the producer state was last snapshotted: a roll takes a new snapshot. */
  snapshotSegment: number;
  /** The appends waiting their turn; undefined while none wait (see AppendQueue). */
  appendQueue?: AppendQueue;
  /** In a cluster, this broker's role for the partition; unset on a single broker, which leads it. */
  role?: PartitionRole;
}

/**
 * A partition's appends that wait their turn, in arrival order: one whose records are still being
 * decompressed and checked, and every append made behind it. Each takes its turn once the one
 * before it has had its own and its records are checked.
 */
interface AppendQueue {
  /** Settles (never rejects) once the last append queued has had its turn. */
  last: Promise<void>;
  /** Appends queued that have not had their turn yet. */
  waiting: number;
}

/** An append's answer: at once, or once the appends queued before it have had their turns. */
export type AppendResult = PartitionAppend | Promise<PartitionAppend>;

export const failedAppend = (errorCode: number): PartitionAppend => ({
  errorCode, errorMessage: null, recordErrors: [], baseOffset: -1, lastOffset: -1, logAppendTimeMs: -1, logStartOffset: -1, done: Promise.resolve(),
});

/** Records refused by validation: only record-level errors carry a message and record errors, as in Kafka. */
export function refusedAppend(checked: RecordValidationError): PartitionAppend {
  const recordLevel = checked.recordErrors.length > 0;
  return { ...failedAppend(checked.errorCode), errorMessage: recordLevel ? checked.errorMessage : null, recordErrors: checked.recordErrors };
}

/** A request's currentLeaderEpoch when the client does not know it (Kafka: only -1 means absent). */
export const NO_LEADER_EPOCH = -1;

/** A partition we lead, found for a request, and its current leader epoch. */
export interface LeaderPartition {
  partition: Partition;
  leaderEpoch: number;
}
