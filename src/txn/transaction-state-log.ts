// Transaction metadata persisted in the compacted internal topic __transaction_state, in Kafka's
// record formats (transaction-log-records.ts), as Kafka's TransactionStateManager keeps it.
//
// - A transactional id lives on partition Utils.abs(id.hashCode()) % transaction.state.log.num.partitions.
// - Each write is one uncompressed batch holding one record (key: the id; value: its state, or null
//   to remove the id), appended through the ReplicaManager; the append is synchronous, so writes land
//   in call order and "last value wins" on load means "the coordinator's last write wins".
// - Append errors become coordinator errors as Kafka's appendTransactionToLog maps them
//   (coordinatorAppendError): UNKNOWN_TOPIC_OR_PARTITION, NOT_ENOUGH_REPLICAS(_AFTER_APPEND),
//   REQUEST_TIMED_OUT -> COORDINATOR_NOT_AVAILABLE; NOT_LEADER_OR_FOLLOWER, KAFKA_STORAGE_ERROR ->
//   NOT_COORDINATOR; MESSAGE_TOO_LARGE, RECORD_LIST_TOO_LARGE -> UNKNOWN_SERVER_ERROR; anything else as is.
// - Loading replays one partition (the coordinator loads each partition it is elected leader of) from
//   its log start to its high watermark; records of a type this broker does not know are skipped, as
//   Kafka's loader skips them.
import type { Logger } from 'pino';
import type { Controller, Outcome } from '../cluster/controller';
import { TRANSACTION_STATE_TOPIC_NAME } from '../cluster/topic-names';
import { appendCoordinatorRecord, replayCoordinatorPartition } from '../replica/internal-append';
import type { ReplicaManager } from '../replica/replica-manager';
import {
  decodeTransactionLogKey, decodeTransactionLogValue, encodeTransactionLogKey, encodeTransactionLogValue, transactionLogValueVersion,
  type TransactionLogValue,
} from './transaction-log-records';

export const TRANSACTION_STATE_TOPIC = TRANSACTION_STATE_TOPIC_NAME;

/** The topic configs Kafka gives __transaction_state (TransactionStateManager.transactionTopicConfigs). */
export function transactionStateTopicConfigs(segmentBytes: number, minInsyncReplicas: number): Record<string, string> {
  return {
    'cleanup.policy': 'compact', 'compression.type': 'uncompressed', 'unclean.leader.election.enable': 'false',
    'min.insync.replicas': String(minInsyncReplicas), 'segment.bytes': String(segmentBytes),
  };
}

export interface LoadedTransaction {
  transactionalId: string;
  value: TransactionLogValue;
}

/** What the coordinator needs from persistence: this class in the broker, a fake in unit tests. */
export interface TransactionStore {
  /** The partition count of __transaction_state; 0 while it does not exist. */
  readonly numPartitions: number;
  /** Writes the id's new state (null removes it) to its partition; resolves to an error code as the client should see it. */
  write(partition: number, transactionalId: string, value: TransactionLogValue | null): Promise<number>;
  /** The latest state of every id of one partition; rejects if the partition is not hosted here. */
  loadPartition(partition: number): Promise<LoadedTransaction[]>;
}

export class TransactionStateLog implements TransactionStore {
  constructor(
    private readonly replicas: ReplicaManager,
    private readonly controller: Pick<Controller, 'topic'>,
    /** The finalized transaction.version, which picks the value version written. */
    private readonly transactionVersion: () => number,
    private readonly log?: Logger,
  ) {}

  get numPartitions(): number {
    return this.controller.topic(TRANSACTION_STATE_TOPIC)?.partitions.length ?? 0;
  }

  /** Creates __transaction_state with Kafka's configs unless it exists; an existing topic keeps its partition count. */
  static ensureTopic(controller: Controller, o: { numPartitions: number; replicationFactor: number; segmentBytes: number; minInsyncReplicas: number }): Promise<Outcome> {
    return controller.ensureInternalTopic(TRANSACTION_STATE_TOPIC, o.numPartitions, o.replicationFactor,
      transactionStateTopicConfigs(o.segmentBytes, o.minInsyncReplicas));
  }

  async write(index: number, transactionalId: string, value: TransactionLogValue | null): Promise<number> {
    const record = { key: encodeTransactionLogKey(transactionalId), value: value && encodeTransactionLogValue(value, transactionLogValueVersion(this.transactionVersion())) };
    return (await appendCoordinatorRecord(this.replicas, TRANSACTION_STATE_TOPIC, index, record, { transactionalId }, this.log)).errorCode;
  }

  async loadPartition(index: number): Promise<LoadedTransaction[]> {
    const latest = new Map<string, TransactionLogValue | null>();
    await replayCoordinatorPartition(this.replicas, TRANSACTION_STATE_TOPIC, index, (key, value) => {
      const id = decodeTransactionLogKey(key);
      if (id !== null) latest.set(id, value && decodeTransactionLogValue(value));
    }, this.log);
    const out: LoadedTransaction[] = [];
    for (const [transactionalId, value] of latest) if (value) out.push({ transactionalId, value });
    return out;
  }
}
