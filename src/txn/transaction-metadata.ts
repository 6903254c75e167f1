// One transactional id's state, as Kafka's TransactionMetadata keeps it, and the transitions between
// states. A transition is two steps, as in Kafka: `prepare...` computes the next state and marks it
// pending (so that any other request for this id answers CONCURRENT_TRANSACTIONS meanwhile); the
// coordinator writes it to __transaction_state; then `completeTransition` makes it current, or
// `cancelTransition` drops it when the write failed. Everything here is synchronous.
import { ErrorCode } from '../common/errors';
import { NO_PRODUCER_EPOCH, NO_PRODUCER_ID } from '../records/batch';

/** Kafka's TransactionState ids, which are also the transactionStatus byte of the log records. */
export enum TransactionState {
  Empty = 0,
  Ongoing = 1,
  PrepareCommit = 2,
  PrepareAbort = 3,
  CompleteCommit = 4,
  CompleteAbort = 5,
  Dead = 6,
  PrepareEpochFence = 7,
}

/** The name Kafka reports (DescribeTransactions, ListTransactions): the enum key, e.g. "CompleteCommit". */
export const stateName = (s: TransactionState): string => TransactionState[s];

/** Kafka's TransactionState.validPreviousStates. */
const VALID_PREVIOUS: Record<TransactionState, TransactionState[]> = {
  [TransactionState.Empty]: [TransactionState.Empty, TransactionState.CompleteCommit, TransactionState.CompleteAbort],
  [TransactionState.Ongoing]: [TransactionState.Ongoing, TransactionState.Empty, TransactionState.CompleteCommit, TransactionState.CompleteAbort],
  [TransactionState.PrepareCommit]: [TransactionState.Ongoing],
  [TransactionState.PrepareAbort]: [TransactionState.Ongoing, TransactionState.PrepareEpochFence],
  [TransactionState.CompleteCommit]: [TransactionState.PrepareCommit],
  [TransactionState.CompleteAbort]: [TransactionState.PrepareAbort],
  [TransactionState.Dead]: [TransactionState.Empty, TransactionState.CompleteAbort, TransactionState.CompleteCommit],
  [TransactionState.PrepareEpochFence]: [TransactionState.Ongoing],
};

export interface TopicPartition {
  topic: string;
  partition: number;
}

export const topicPartitionKey = (tp: TopicPartition): string => `${tp.topic}:${tp.partition}`;

/** The state a transition leads to: what is written to the log, then applied. */
export interface TxnTransit {
  producerId: number;
  lastProducerId: number;
  producerEpoch: number;
  lastProducerEpoch: number;
  txnTimeoutMs: number;
  state: TransactionState;
  partitions: TopicPartition[];
  txnStartTimestamp: number;
  txnLastUpdateTimestamp: number;
}

/** Kafka's TransactionMetadata.isEpochExhausted: the last two epochs are kept for fencing. */
export const isEpochExhausted = (epoch: number): boolean => epoch >= 32767 - 1;

/** An error code instead of a transit. */
export type Prepared = TxnTransit | { errorCode: number };

export class TransactionMetadata {
  producerId: number;
  lastProducerId: number = NO_PRODUCER_ID;
  producerEpoch: number;
  lastProducerEpoch: number = NO_PRODUCER_EPOCH;
  txnTimeoutMs: number;
  state: TransactionState;
  /** Keyed by topicPartitionKey. */
  partitions = new Map<string, TopicPartition>();
  txnStartTimestamp = -1;
  txnLastUpdateTimestamp: number;
  /** The state being written to the log, if any. */
  pendingState: TransactionState | undefined;
  /** An epoch fence whose write failed: the epoch was bumped but never returned; do not bump it again. */
  hasFailedEpochFence = false;

  constructor(readonly transactionalId: string, init: {
    producerId: number; producerEpoch: number; txnTimeoutMs: number; state: TransactionState;
    txnLastUpdateTimestamp: number; txnStartTimestamp?: number; partitions?: TopicPartition[];
  }) {
    this.producerId = init.producerId;
    this.producerEpoch = init.producerEpoch;
    this.txnTimeoutMs = init.txnTimeoutMs;
    this.state = init.state;
    this.txnLastUpdateTimestamp = init.txnLastUpdateTimestamp;
    this.txnStartTimestamp = init.txnStartTimestamp ?? -1;
    for (const tp of init.partitions ?? []) this.partitions.set(topicPartitionKey(tp), tp);
  }

  get pendingTransitionInProgress(): boolean {
    return this.pendingState !== undefined;
  }

  get isProducerEpochExhausted(): boolean {
    return isEpochExhausted(this.producerEpoch);
  }

  /** The current state as a transit (what a fresh write of it would hold). */
  private current(): TxnTransit {
    return {
      producerId: this.producerId, lastProducerId: this.lastProducerId, producerEpoch: this.producerEpoch,
      lastProducerEpoch: this.lastProducerEpoch, txnTimeoutMs: this.txnTimeoutMs, state: this.state,
      partitions: [...this.partitions.values()], txnStartTimestamp: this.txnStartTimestamp,
      txnLastUpdateTimestamp: this.txnLastUpdateTimestamp,
    };
  }

  /** Marks `next` pending; throws on a transition Kafka never makes (a bug, not a client error). */
  private prepareTransitionTo(next: TxnTransit): TxnTransit {
    if (this.pendingState !== undefined) {
      throw new Error(`transactional id ${this.transactionalId}: transition to ${stateName(next.state)} while ${stateName(this.pendingState)} is pending`);
    }
    if (!VALID_PREVIOUS[next.state].includes(this.state)) {
      throw new Error(`transactional id ${this.transactionalId}: illegal transition ${stateName(this.state)} -> ${stateName(next.state)}`);
    }
    this.pendingState = next.state;
    return next;
  }

  /**
   * InitProducerId on an Empty or completed transaction: the next epoch (Kafka's
   * prepareIncrementProducerEpoch). With the epoch the producer believes current (KIP-360), a
   * retry of a bump it never heard back about gets the same epoch again; any other epoch is fenced.
   */
  prepareIncrementProducerEpoch(txnTimeoutMs: number, expectedEpoch: number | null, nowMs: number): Prepared {
    const bumped = this.producerEpoch + 1;
    let epoch: number;
    let lastEpoch: number;
    if (expectedEpoch === null) {
      [epoch, lastEpoch] = [bumped, NO_PRODUCER_EPOCH];
    } else if (this.producerEpoch === NO_PRODUCER_EPOCH || expectedEpoch === this.producerEpoch) {
      [epoch, lastEpoch] = [bumped, this.producerEpoch];
    } else if (expectedEpoch === this.lastProducerEpoch) {
      [epoch, lastEpoch] = [this.producerEpoch, this.lastProducerEpoch];
    } else {
      return { errorCode: ErrorCode.PRODUCER_FENCED };
    }
    return this.prepareTransitionTo({
      ...this.current(), producerEpoch: epoch, lastProducerEpoch: lastEpoch, txnTimeoutMs,
      state: TransactionState.Empty, partitions: [], txnStartTimestamp: -1, txnLastUpdateTimestamp: nowMs,
    });
  }

  /** The epoch ran out: a new producer id at epoch 0 (Kafka's prepareProducerIdRotation). */
  prepareProducerIdRotation(newProducerId: number, txnTimeoutMs: number, nowMs: number, recordLastEpoch: boolean): TxnTransit {
    return this.prepareTransitionTo({
      ...this.current(), producerId: newProducerId, lastProducerId: this.producerId, producerEpoch: 0,
      lastProducerEpoch: recordLastEpoch ? this.producerEpoch : NO_PRODUCER_EPOCH, txnTimeoutMs,
      state: TransactionState.Empty, partitions: [], txnStartTimestamp: -1, txnLastUpdateTimestamp: nowMs,
    });
  }

  /** Fences the current producer of an Ongoing transaction before aborting it; this epoch is never handed out. */
  prepareFenceProducerEpoch(): TxnTransit {
    const epoch = this.hasFailedEpochFence ? this.producerEpoch : this.producerEpoch + 1;
    return this.prepareTransitionTo({
      ...this.current(), producerEpoch: epoch, lastProducerEpoch: NO_PRODUCER_EPOCH, state: TransactionState.PrepareEpochFence,
    });
  }

  /** AddPartitionsToTxn / AddOffsetsToTxn: Ongoing with these partitions too; a new transaction starts its clock. */
  prepareAddPartitions(added: TopicPartition[], nowMs: number): TxnTransit {
    const partitions = new Map(this.partitions);
    for (const tp of added) partitions.set(topicPartitionKey(tp), tp);
    const starting = this.state === TransactionState.Empty || this.state === TransactionState.CompleteCommit
      || this.state === TransactionState.CompleteAbort;
    return this.prepareTransitionTo({
      ...this.current(), state: TransactionState.Ongoing, partitions: [...partitions.values()],
      txnStartTimestamp: starting ? nowMs : this.txnStartTimestamp, txnLastUpdateTimestamp: nowMs,
    });
  }

  prepareAbortOrCommit(next: TransactionState.PrepareCommit | TransactionState.PrepareAbort, nowMs: number): TxnTransit {
    return this.prepareTransitionTo({ ...this.current(), state: next, txnLastUpdateTimestamp: nowMs });
  }

  /** The markers are written: CompleteCommit / CompleteAbort, with no partitions left. */
  prepareComplete(nowMs: number): TxnTransit {
    const next = this.state === TransactionState.PrepareCommit ? TransactionState.CompleteCommit : TransactionState.CompleteAbort;
    return this.prepareTransitionTo({ ...this.current(), state: next, partitions: [], txnLastUpdateTimestamp: nowMs });
  }

  /** transactional.id.expiration.ms passed: the id is removed (a tombstone). */
  prepareDead(): TxnTransit {
    return this.prepareTransitionTo({ ...this.current(), state: TransactionState.Dead, partitions: [] });
  }

  /** The write of `t` succeeded. */
  completeTransition(t: TxnTransit): void {
    if (this.pendingState !== t.state) {
      throw new Error(`transactional id ${this.transactionalId}: completing ${stateName(t.state)} but ${this.pendingState === undefined ? 'nothing' : stateName(this.pendingState)} is pending`);
    }
    this.producerId = t.producerId;
    this.lastProducerId = t.lastProducerId;
    this.producerEpoch = t.producerEpoch;
    this.lastProducerEpoch = t.lastProducerEpoch;
    this.txnTimeoutMs = t.txnTimeoutMs;
    this.state = t.state;
    this.partitions = new Map(t.partitions.map((tp) => [topicPartitionKey(tp), tp]));
    this.txnStartTimestamp = t.txnStartTimestamp;
    this.txnLastUpdateTimestamp = t.txnLastUpdateTimestamp;
    this.pendingState = undefined;
    this.hasFailedEpochFence = false;
  }

  /** The write failed: the state stays as it was. */
  cancelTransition(): void {
    this.pendingState = undefined;
  }
}
