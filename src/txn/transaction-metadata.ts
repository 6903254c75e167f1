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
  // Transaction version 2 may abort with no transaction open (an empty abort still bumps the epoch).
  [TransactionState.PrepareAbort]: [TransactionState.Ongoing, TransactionState.PrepareEpochFence, TransactionState.Empty,
    TransactionState.CompleteCommit, TransactionState.CompleteAbort],
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
  /** Kafka's prevProducerId: the producer id before this transition (another one after a rotation). */
  lastProducerId: number;
  /** The producer id a transaction version 2 end moves to once complete, its epoch having run out; else -1. */
  nextProducerId: number;
  producerEpoch: number;
  lastProducerEpoch: number;
  txnTimeoutMs: number;
  state: TransactionState;
  partitions: TopicPartition[];
  txnStartTimestamp: number;
  txnLastUpdateTimestamp: number;
  /** The transaction version of the client's last request that changed the state (0: before KIP-890 part 2). */
  clientTransactionVersion: number;
}

/** The first transaction version that bumps the epoch at every transaction end (KIP-890 part 2). */
export const EPOCH_BUMP_TRANSACTION_VERSION = 2;

/** Short.MAX_VALUE: the last epoch of a producer id. */
export const MAX_PRODUCER_EPOCH = 32767;

/** Kafka's TransactionMetadata.isEpochExhausted: the last two epochs are kept for fencing. */
export const isEpochExhausted = (epoch: number): boolean => epoch >= MAX_PRODUCER_EPOCH - 1;

/** An error code instead of a transit. */
export type Prepared = TxnTransit | { errorCode: number };

export class TransactionMetadata {
  producerId: number;
  lastProducerId: number;
  nextProducerId: number;
  producerEpoch: number;
  lastProducerEpoch: number = NO_PRODUCER_EPOCH;
  txnTimeoutMs: number;
  state: TransactionState;
  /** Keyed by topicPartitionKey. */
  partitions = new Map<string, TopicPartition>();
  txnStartTimestamp = -1;
  txnLastUpdateTimestamp: number;
  clientTransactionVersion: number;
  /** The state being written to the log, if any. */
  pendingState: TransactionState | undefined;
  /** An epoch fence whose write failed: the epoch was bumped but never returned; do not bump it again. */
  hasFailedEpochFence = false;

  constructor(readonly transactionalId: string, init: {
    producerId: number; producerEpoch: number; txnTimeoutMs: number; state: TransactionState;
    txnLastUpdateTimestamp: number; txnStartTimestamp?: number; partitions?: TopicPartition[];
    lastProducerId?: number; nextProducerId?: number; clientTransactionVersion?: number;
  }) {
    this.producerId = init.producerId;
    this.lastProducerId = init.lastProducerId ?? NO_PRODUCER_ID;
    this.nextProducerId = init.nextProducerId ?? NO_PRODUCER_ID;
    this.clientTransactionVersion = init.clientTransactionVersion ?? 0;
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
      producerId: this.producerId, lastProducerId: this.lastProducerId, nextProducerId: this.nextProducerId,
      producerEpoch: this.producerEpoch, lastProducerEpoch: this.lastProducerEpoch, txnTimeoutMs: this.txnTimeoutMs,
      state: this.state, partitions: [...this.partitions.values()], txnStartTimestamp: this.txnStartTimestamp,
      txnLastUpdateTimestamp: this.txnLastUpdateTimestamp, clientTransactionVersion: this.clientTransactionVersion,
    };
  }

  /**
   * Marks `next` pending; throws on a transition Kafka never makes (a bug, not a client error). As in
   * Kafka, the transit's previous producer id is the id before it.
   */
  private prepareTransitionTo(next: TxnTransit): TxnTransit {
    if (this.pendingState !== undefined) {
      throw new Error(`transactional id ${this.transactionalId}: transition to ${stateName(next.state)} while ${stateName(this.pendingState)} is pending`);
    }
    if (!VALID_PREVIOUS[next.state].includes(this.state)) {
      throw new Error(`transactional id ${this.transactionalId}: illegal transition ${stateName(this.state)} -> ${stateName(next.state)}`);
    }
    this.pendingState = next.state;
    return { ...next, lastProducerId: this.producerId };
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
      ...this.current(), producerId: newProducerId, producerEpoch: 0,
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

  /**
   * AddPartitionsToTxn / AddOffsetsToTxn, or a partition a transaction version 2 write adds: Ongoing
   * with these partitions too; a new transaction starts its clock.
   */
  prepareAddPartitions(added: TopicPartition[], nowMs: number, clientTransactionVersion: number): TxnTransit {
    const partitions = new Map(this.partitions);
    for (const tp of added) partitions.set(topicPartitionKey(tp), tp);
    const starting = this.state === TransactionState.Empty || this.state === TransactionState.CompleteCommit
      || this.state === TransactionState.CompleteAbort;
    return this.prepareTransitionTo({
      ...this.current(), state: TransactionState.Ongoing, partitions: [...partitions.values()],
      txnStartTimestamp: starting ? nowMs : this.txnStartTimestamp, txnLastUpdateTimestamp: nowMs, clientTransactionVersion,
    });
  }

  /**
   * EndTxn: PrepareCommit / PrepareAbort. With transaction version 2 the epoch is bumped (the markers
   * carry the new one, which fences the transaction's late writes), and `nextProducerId` is the id to
   * move to once complete when that epoch is the last one. An abort with no transaction open (version 2)
   * starts its clock now.
   */
  prepareAbortOrCommit(next: TransactionState.PrepareCommit | TransactionState.PrepareAbort, clientTransactionVersion: number,
    nextProducerId: number, nowMs: number, noPartitionAdded: boolean): TxnTransit {
    const bump = clientTransactionVersion >= EPOCH_BUMP_TRANSACTION_VERSION;
    return this.prepareTransitionTo({
      ...this.current(), state: next, clientTransactionVersion, nextProducerId, txnLastUpdateTimestamp: nowMs,
      producerEpoch: bump ? Math.min(this.producerEpoch + 1, MAX_PRODUCER_EPOCH) : this.producerEpoch,
      lastProducerEpoch: bump ? this.producerEpoch : this.lastProducerEpoch,
      txnStartTimestamp: noPartitionAdded ? nowMs : this.txnStartTimestamp,
    });
  }

  /**
   * The markers are written: CompleteCommit / CompleteAbort, with no partitions left; a transaction
   * version 2 end whose epoch ran out moves to its next producer id at epoch 0 (the client was told so).
   */
  prepareComplete(nowMs: number): TxnTransit {
    const next = this.state === TransactionState.PrepareCommit ? TransactionState.CompleteCommit : TransactionState.CompleteAbort;
    const rotate = this.clientTransactionVersion >= EPOCH_BUMP_TRANSACTION_VERSION && this.nextProducerId !== NO_PRODUCER_ID;
    return this.prepareTransitionTo({
      ...this.current(), state: next, partitions: [], txnLastUpdateTimestamp: nowMs, nextProducerId: NO_PRODUCER_ID,
      producerId: rotate ? this.nextProducerId : this.producerId, producerEpoch: rotate ? 0 : this.producerEpoch,
    });
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
    this.nextProducerId = t.nextProducerId;
    this.clientTransactionVersion = t.clientTransactionVersion;
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
