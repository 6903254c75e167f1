// Kafka's transaction coordinator (TransactionCoordinator and TransactionStateManager), transaction
// versions 1 and 2. Version 1 clients add partitions with AddPartitionsToTxn and end a transaction with
// EndTxn (v4 and before). Version 2 (KIP-890 part 2) clients' partitions are added by the partition
// leaders as they write (Produce v12+, TxnOffsetCommit v5+: addPartitions with version 2), and EndTxn
// v5 bumps the epoch at every end. As in Kafka, the request's version says which rules apply; the
// finalized transaction.version feature picks the log format and the rules of the coordinator's own
// aborts. Each transaction keeps the version of the client that last changed it (ClientTransactionVersion),
// which its markers and its completion follow, so a downgrade lets the transactions in flight finish.
//
// - It coordinates the ids of the __transaction_state partitions this broker leads: onElection loads
//   a partition (COORDINATOR_LOAD_IN_PROGRESS meanwhile), onResignation drops it; ids of a partition
//   not hosted get NOT_COORDINATOR. The partition's leader epoch is the coordinator epoch of its
//   markers, which fences the markers of a previous coordinator (Kafka's coordinatorEpoch).
// - Every state change is a transition of one TransactionMetadata (transaction-metadata.ts), prepared
//   synchronously (it is then "pending": other requests for the id answer CONCURRENT_TRANSACTIONS),
//   written to __transaction_state, and applied only once the write succeeded. No answer depends on
//   a state that is not in the log yet.
// - InitProducerId bumps the epoch, which fences the previous producer with the same transactional id.
//   With a transaction Ongoing, it first fences that transaction's producer with a new epoch and aborts
//   it, and answers CONCURRENT_TRANSACTIONS: the client retries and then gets the epoch after that.
// - EndTxn writes PrepareCommit/PrepareAbort, then a COMMIT/ABORT marker into every partition of the
//   transaction (and into __consumer_offsets for its offsets), then CompleteCommit/CompleteAbort. With
//   version 2 the Prepare state holds the bumped epoch, which the markers carry (a partition leader then
//   refuses the transaction's late writes), and the answer gives the client its next producer id and
//   epoch: a new producer id at epoch 0 once the epoch runs out. The answer goes back once the markers are in (Kafka answers after the Prepare write; answering after
//   the markers spares the client the CONCURRENT_TRANSACTIONS retries of its next transaction). A
//   marker that fails is retried until it is written; a partition whose topic is gone is skipped.
// - After a restart or a leader change, transactions found in PrepareCommit/PrepareAbort when a
//   partition loads get their markers and their Complete state: a crash anywhere in EndTxn ends with
//   the transaction committed or aborted as asked.
// - Every transaction.abort.timed.out.transaction.cleanup.interval.ms, Ongoing transactions older than
//   their timeout are aborted with a bumped epoch (the producer is fenced). Every
//   transaction.remove.expired.transaction.cleanup.interval.ms, ids idle for transactional.id.expiration.ms
//   (and not in a transaction) are removed with a tombstone.
import type { Logger } from 'pino';
import { ErrorCode } from '../common/errors';
import { coordinatorPartitionFor } from '../cluster/coordinator-partition';
import { TRANSACTION_STATE_TOPIC_NAME } from '../cluster/topic-names';
import { NO_PRODUCER_EPOCH, NO_PRODUCER_ID } from '../records/batch';
import { CoordinatorPartitions } from '../replica/coordinator-partitions';
import {
  EPOCH_BUMP_TRANSACTION_VERSION, MAX_PRODUCER_EPOCH, TransactionMetadata, TransactionState, stateName, topicPartitionKey, type Prepared, type TopicPartition,
  type TxnTransit,
} from './transaction-metadata';
import type { TransactionLogValue } from './transaction-log-records';
import type { LoadedTransaction, TransactionStore } from './transaction-state-log';

/** How long a failed marker or Complete write waits before it is tried again. */
const RETRY_BACKOFF_MS = 100;

export interface TransactionCoordinatorConfig {
  /** transaction.max.timeout.ms */
  maxTimeoutMs: number;
  /** transactional.id.expiration.ms */
  transactionalIdExpirationMs: number;
  /** transaction.abort.timed.out.transaction.cleanup.interval.ms */
  abortTimedOutIntervalMs: number;
  /** transaction.remove.expired.transaction.cleanup.interval.ms */
  removeExpiredIntervalMs: number;
  /** The finalized transaction.version feature level (UpdateFeatures changes it); 2 unless given. */
  transactionVersion?: () => number;
}

export interface TxnMarkerRequest {
  producerId: number;
  producerEpoch: number;
  coordinatorEpoch: number;
  commit: boolean;
  /** The transaction's client transaction version (WriteTxnMarkers v2): from 2, leaders want a bumped epoch. */
  transactionVersion: number;
  partitions: TopicPartition[];
}

/** Writes transaction markers into data partitions (./markers.ts in the broker, a fake in tests). */
export interface TxnMarkerWriter {
  /** Resolves to the partitions whose marker could not be written yet and must be tried again. */
  write(marker: TxnMarkerRequest): Promise<TopicPartition[]>;
}

export interface ProducerIdSource {
  nextId(): Promise<number>;
}

export interface InitProducerIdResult {
  errorCode: number;
  producerId: number;
  producerEpoch: number;
}

/** EndTxn's answer: with transaction version 2, the producer id and epoch the client goes on with (-1 otherwise). */
export type EndTxnResult = InitProducerIdResult;

export interface TransactionDescription {
  errorCode: number;
  transactionalId: string;
  state: string;
  timeoutMs: number;
  startTimeMs: number;
  producerId: number;
  producerEpoch: number;
  partitions: TopicPartition[];
}

export interface TransactionListing {
  errorCode: number;
  unknownStateFilters: string[];
  transactions: { transactionalId: string; producerId: number; state: string }[];
}

/**
 * PRODUCER_FENCED as a request version can carry it (KIP-588): versions before
 * `firstVersionWithFenced` get INVALID_PRODUCER_EPOCH instead, as Kafka answers them.
 */
export function producerFencedForVersion(errorCode: number, apiVersion: number, firstVersionWithFenced: number): number {
  return errorCode === ErrorCode.PRODUCER_FENCED && apiVersion < firstVersionWithFenced ? ErrorCode.INVALID_PRODUCER_EPOCH : errorCode;
}

/**
 * The coordinator's answer to a partition leader's verification or addition, as the writer (Produce,
 * TxnOffsetCommit) answers it: Kafka's AddPartitionsToTxnManager and ReplicaManager turn a fenced
 * producer into INVALID_PRODUCER_EPOCH, and errors that only mean "not now" into NOT_ENOUGH_REPLICAS,
 * which every client retries.
 */
export function transactionalWriteError(errorCode: number): number {
  switch (errorCode) {
    case ErrorCode.PRODUCER_FENCED:
      return ErrorCode.INVALID_PRODUCER_EPOCH;
    case ErrorCode.CONCURRENT_TRANSACTIONS:
    case ErrorCode.NETWORK_EXCEPTION:
    case ErrorCode.COORDINATOR_LOAD_IN_PROGRESS:
    case ErrorCode.COORDINATOR_NOT_AVAILABLE:
    case ErrorCode.NOT_COORDINATOR:
      return ErrorCode.NOT_ENOUGH_REPLICAS;
    default:
      return errorCode;
  }
}

const initError = (errorCode: number): InitProducerIdResult => ({ errorCode, producerId: NO_PRODUCER_ID, producerEpoch: NO_PRODUCER_EPOCH });
const endError = initError;

/** What EndTxn does once checked: answer at once, or write this Prepare state (maybe from no open transaction). */
type EndDecision = { answer: number } | { next: TransactionState.PrepareCommit | TransactionState.PrepareAbort; noPartitionAdded: boolean };

/** The state names a ListTransactions filter may name. */
const STATE_NAMES = new Set(Object.values(TransactionState).filter((v): v is string => typeof v === 'string'));

/**
 * A __transaction_state partition this broker leads (Kafka's TxnMetadataCacheEntry, plus its loading
 * state). An election makes a new one; a write that finds another in its place answers NOT_COORDINATOR.
 */
interface TxnPartition {
  readonly index: number;
  /** The partition's leader epoch: the coordinator epoch of the markers its transactions send. */
  readonly leaderEpoch: number;
  loading: boolean;
  readonly transactions: Map<string, TransactionMetadata>;
}

export class TransactionCoordinator {
  /** The partitions this broker leads, loaded or loading. */
  private readonly partitions: CoordinatorPartitions<TxnPartition, LoadedTransaction[]>;
  private closed = false;
  private readonly timers: NodeJS.Timeout[] = [];
  /** Marker and Complete writes still running, awaited by close(). */
  private readonly completions = new Set<Promise<void>>();

  constructor(
    private readonly config: TransactionCoordinatorConfig,
    private readonly markers: TxnMarkerWriter,
    private readonly producerIds: ProducerIdSource,
    private readonly store: TransactionStore,
    private readonly log?: Logger,
    private readonly now: () => number = Date.now,
  ) {
    this.partitions = new CoordinatorPartitions(TRANSACTION_STATE_TOPIC_NAME, 'transaction coordinator', {
      create: (index, leaderEpoch) => ({ index, leaderEpoch, loading: true, transactions: new Map() }),
      read: (index) => this.store.loadPartition(index),
      apply: (entry, loaded) => this.applyLoaded(entry, loaded),
    }, log);
  }

  /** The finalized transaction.version: the rules of the coordinator's own aborts. */
  private get transactionVersion(): number {
    return this.config.transactionVersion?.() ?? EPOCH_BUMP_TRANSACTION_VERSION;
  }

  /** The __transaction_state partition of a transactional id. */
  partitionFor(transactionalId: string): number {
    return coordinatorPartitionFor(transactionalId, this.store.numPartitions);
  }

  /** Whether this broker coordinates the ids of this partition now (elected, and loaded). */
  isLoaded(partition: number): boolean {
    return !this.closed && this.partitions.isLoaded(partition);
  }

  /**
   * Kafka's onElection: this broker became the leader of a __transaction_state partition at this
   * leader epoch. Loads its transactional ids in the background (COORDINATOR_LOAD_IN_PROGRESS
   * meanwhile), then finishes the commits and aborts it finds prepared. Ignored if older than the
   * epoch last seen for the partition, or if that epoch is already loaded or loading.
   */
  onElection(partition: number, leaderEpoch: number): void {
    if (!this.closed && this.partitions.elect(partition, leaderEpoch)) this.startTimers();
  }

  /**
   * Kafka's onResignation: this broker no longer leads the partition. Its ids are dropped at once
   * (NOT_COORDINATOR); a load, write or marker round in flight for them finds its entry gone and stops.
   */
  onResignation(partition: number, leaderEpoch: number): void {
    this.partitions.resign(partition, leaderEpoch);
  }

  /** Takes the partition's ids read back, then finishes the transactions a crash or a leader change interrupted. */
  private applyLoaded(entry: TxnPartition, loaded: LoadedTransaction[]): void {
    if (this.closed) return;
    for (const { transactionalId, value } of loaded) {
      entry.transactions.set(transactionalId, new TransactionMetadata(transactionalId, {
        producerId: value.producerId, producerEpoch: value.producerEpoch, txnTimeoutMs: value.transactionTimeoutMs,
        state: value.state, partitions: value.partitions, txnStartTimestamp: value.startTimestampMs,
        txnLastUpdateTimestamp: value.lastUpdateTimestampMs, lastProducerId: value.previousProducerId,
        nextProducerId: value.nextProducerId, clientTransactionVersion: value.clientTransactionVersion,
      }));
    }
    entry.loading = false;
    this.log?.info({ partition: entry.index, leaderEpoch: entry.leaderEpoch, transactionalIds: loaded.length }, 'loaded a __transaction_state partition');
    for (const meta of entry.transactions.values()) {
      if (meta.state === TransactionState.PrepareCommit || meta.state === TransactionState.PrepareAbort) {
        this.log?.info({ transactionalId: meta.transactionalId, state: stateName(meta.state) }, 'completing a transaction its previous coordinator left prepared');
        void this.completeTransaction(entry, meta, meta.state === TransactionState.PrepareCommit);
      }
    }
  }

  /** The expiry timers, from the first election on (Kafka starts them with the coordinator). */
  private startTimers(): void {
    if (this.timers.length > 0) return;
    this.every(this.config.abortTimedOutIntervalMs, () => this.abortTimedOutTransactions());
    this.every(this.config.removeExpiredIntervalMs, () => this.removeExpiredTransactionalIds());
  }

  private every(ms: number, run: () => void): void {
    const t = setInterval(run, ms);
    t.unref();
    this.timers.push(t);
  }

  /** Settles once no partition load is in flight. */
  loadsSettled(): Promise<void> {
    return this.partitions.settled();
  }

  /**
   * __transaction_state was deleted: every partition is dropped and its epochs forgotten (a topic
   * created again starts its own). Marker writes in flight stop retrying.
   */
  unload(): void {
    this.partitions.clear();
  }

  /** Stops the timers and waits for the loads and marker writes in flight (they stop retrying). */
  async close(): Promise<void> {
    this.closed = true;
    for (const t of this.timers) clearInterval(t);
    await this.loadsSettled();
    await Promise.allSettled([...this.completions]);
  }

  /** Loaded partitions, for the timers and ListTransactions. */
  private loadedPartitions(): TxnPartition[] {
    return this.closed ? [] : [...this.partitions.values()].filter((p) => !p.loading);
  }

  /** The id's partition and metadata (undefined if unknown), or the error to answer (Kafka's getTransactionState). */
  private lookup(transactionalId: string): { entry: TxnPartition; meta: TransactionMetadata | undefined } | number {
    const entry = this.closed || this.store.numPartitions === 0 ? undefined : this.partitions.get(this.partitionFor(transactionalId));
    if (!entry) return ErrorCode.NOT_COORDINATOR;
    if (entry.loading) return ErrorCode.COORDINATOR_LOAD_IN_PROGRESS;
    return { entry, meta: entry.transactions.get(transactionalId) };
  }

  /** Whether the id's metadata is still the one its partition holds (no resignation or new election since). */
  private isCurrent(entry: TxnPartition, meta: TransactionMetadata): boolean {
    return !this.closed && this.partitions.isCurrent(entry) && entry.transactions.get(meta.transactionalId) === meta;
  }

  /**
   * Writes `transit` and applies it; on failure the metadata stays as it was. If the partition was
   * resigned (or loaded again) while the write was in flight, nothing is applied: NOT_COORDINATOR.
   */
  private async persist(entry: TxnPartition, meta: TransactionMetadata, transit: TxnTransit): Promise<number> {
    const value: TransactionLogValue | null = transit.state === TransactionState.Dead ? null : {
      producerId: transit.producerId, previousProducerId: transit.lastProducerId, nextProducerId: transit.nextProducerId,
      producerEpoch: transit.producerEpoch, transactionTimeoutMs: transit.txnTimeoutMs, state: transit.state,
      partitions: transit.partitions, lastUpdateTimestampMs: transit.txnLastUpdateTimestamp,
      startTimestampMs: transit.txnStartTimestamp, clientTransactionVersion: transit.clientTransactionVersion,
    };
    let errorCode = await this.store.write(entry.index, meta.transactionalId, value);
    if (errorCode === ErrorCode.NONE && !this.isCurrent(entry, meta)) errorCode = ErrorCode.NOT_COORDINATOR;
    if (errorCode === ErrorCode.NONE) meta.completeTransition(transit);
    else meta.cancelTransition();
    return errorCode;
  }

  // ------------------------------------------------------------------------------------ InitProducerId

  /** `expected` is the producer id and epoch the client has (InitProducerId v3+, KIP-360), or null. */
  async initProducerId(transactionalId: string, timeoutMs: number, expected: { producerId: number; producerEpoch: number } | null): Promise<InitProducerIdResult> {
    if (transactionalId === '') return initError(ErrorCode.INVALID_REQUEST);
    if (timeoutMs <= 0 || timeoutMs > this.config.maxTimeoutMs) return initError(ErrorCode.INVALID_TRANSACTION_TIMEOUT);
    // A new producer id is fetched (maybe awaiting a block reservation) before the decision that
    // needs it; the decision is then made again from the start, as the state may have moved.
    let spareId: number | undefined;
    for (;;) {
      const found = this.lookup(transactionalId);
      if (typeof found === 'number') return initError(found);
      let { meta } = found;
      if (!meta) {
        if (spareId === undefined) {
          spareId = await this.producerIds.nextId();
          continue;
        }
        meta = new TransactionMetadata(transactionalId, {
          producerId: spareId, producerEpoch: NO_PRODUCER_EPOCH, txnTimeoutMs: timeoutMs,
          state: TransactionState.Empty, txnLastUpdateTimestamp: this.now(),
        });
        spareId = undefined;
        found.entry.transactions.set(transactionalId, meta);
      }
      const prepared = this.prepareInit(meta, timeoutMs, expected, spareId);
      if (prepared === 'needs-producer-id') {
        spareId = await this.producerIds.nextId();
        continue;
      }
      if ('errorCode' in prepared) return initError(prepared.errorCode);
      if (prepared.state === TransactionState.PrepareEpochFence) {
        const { errorCode } = await this.endTransaction(transactionalId, prepared.producerId, prepared.producerEpoch, false,
          this.transactionVersion, false);
        return initError(errorCode === ErrorCode.NONE ? ErrorCode.CONCURRENT_TRANSACTIONS : errorCode);
      }
      const errorCode = await this.persist(found.entry, meta, prepared);
      if (errorCode !== ErrorCode.NONE) return initError(errorCode);
      this.log?.info({ transactionalId, producerId: prepared.producerId, producerEpoch: prepared.producerEpoch }, 'initialized a transactional producer');
      return { errorCode, producerId: prepared.producerId, producerEpoch: prepared.producerEpoch };
    }
  }

  /** Kafka's prepareInitProducerIdTransit. */
  private prepareInit(meta: TransactionMetadata, timeoutMs: number, expected: { producerId: number; producerEpoch: number } | null,
    spareId: number | undefined): Prepared | 'needs-producer-id' {
    if (meta.pendingTransitionInProgress) return { errorCode: ErrorCode.CONCURRENT_TRANSACTIONS };
    // The expected producer is this one, or a just-created id (epoch -1), or the previous id whose epoch ran out.
    if (expected && !(meta.producerEpoch === NO_PRODUCER_EPOCH || expected.producerId === meta.producerId
      || (expected.producerId === meta.lastProducerId && expected.producerEpoch >= 32766))) {
      return { errorCode: ErrorCode.PRODUCER_FENCED };
    }
    switch (meta.state) {
      case TransactionState.PrepareAbort:
      case TransactionState.PrepareCommit:
        return { errorCode: ErrorCode.CONCURRENT_TRANSACTIONS };
      case TransactionState.CompleteAbort:
      case TransactionState.CompleteCommit:
      case TransactionState.Empty:
        if (meta.isProducerEpochExhausted && (!expected || expected.producerEpoch === meta.producerEpoch)) {
          if (spareId === undefined) return 'needs-producer-id';
          return meta.prepareProducerIdRotation(spareId, timeoutMs, this.now(), expected !== null);
        }
        return meta.prepareIncrementProducerEpoch(timeoutMs, expected?.producerEpoch ?? null, this.now());
      case TransactionState.Ongoing:
        return meta.prepareFenceProducerEpoch();
      default:
        throw new Error(`transactional id ${meta.transactionalId} is ${stateName(meta.state)}, a state it should never be found in`);
    }
  }

  // ------------------------------------------------------------------------------------ AddPartitionsToTxn

  /**
   * AddPartitionsToTxn (and AddOffsetsToTxn, with the group's __consumer_offsets partition), or the
   * partitions a partition leader adds for a transaction version 2 write. `clientTransactionVersion`:
   * 0 for AddPartitionsToTxn v3 and before and AddOffsetsToTxn, 2 for the leaders' adds (as Kafka).
   */
  async addPartitions(transactionalId: string, producerId: number, producerEpoch: number, partitions: TopicPartition[],
    clientTransactionVersion = 0): Promise<number> {
    if (transactionalId === '') return ErrorCode.INVALID_REQUEST;
    const found = this.lookup(transactionalId);
    if (typeof found === 'number') return found;
    const { meta } = found;
    const refusal = this.checkProducer(meta, producerId, producerEpoch);
    if (refusal !== ErrorCode.NONE) return refusal;
    if (meta!.pendingTransitionInProgress) return ErrorCode.CONCURRENT_TRANSACTIONS;
    if (meta!.state === TransactionState.Ongoing && partitions.every((tp) => meta!.partitions.has(topicPartitionKey(tp)))) {
      return ErrorCode.NONE;
    }
    return this.persist(found.entry, meta!, meta!.prepareAddPartitions(partitions, this.now(), clientTransactionVersion));
  }

  /**
   * AddPartitionsToTxn v4+ with verifyOnly (KIP-890): which of these partitions the producer's
   * transaction has. An error code for the whole request, or one per partition (NONE or `missing`).
   */
  verifyPartitions(transactionalId: string, producerId: number, producerEpoch: number, partitions: TopicPartition[],
    missing: number): number | number[] {
    if (transactionalId === '') return ErrorCode.INVALID_REQUEST;
    const found = this.lookup(transactionalId);
    if (typeof found === 'number') return found;
    const { meta } = found;
    const refusal = this.checkProducer(meta, producerId, producerEpoch);
    if (refusal !== ErrorCode.NONE) return refusal;
    return partitions.map((tp) => (meta!.partitions.has(topicPartitionKey(tp)) ? ErrorCode.NONE : missing));
  }

  /**
   * The verification before a producer's first transactional write to a partition (Produce, and
   * TxnOffsetCommit for the group's __consumer_offsets partition), with the coordinator's answers
   * turned into the writer's errors as Kafka's AddPartitionsToTxnManager turns them: a partition not
   * in the transaction is TRANSACTION_ABORTABLE where the request version has it, else
   * INVALID_TXN_STATE; clients retry NOT_ENOUGH_REPLICAS, so errors that only mean "not now" become that.
   */
  verifyTransactionalWrite(transactionalId: string, producerId: number, producerEpoch: number, topic: string, partition: number,
    transactionAbortable: boolean): number {
    const missing = transactionAbortable ? ErrorCode.TRANSACTION_ABORTABLE : ErrorCode.INVALID_TXN_STATE;
    const answer = this.verifyPartitions(transactionalId, producerId, producerEpoch, [{ topic, partition }], missing);
    return transactionalWriteError(typeof answer === 'number' ? answer : answer[0]);
  }

  /**
   * The checks AddPartitionsToTxn and its verification share. A pending write (another
   * AddPartitionsToTxn of the same transaction, which clients send while they produce) refuses only
   * AddPartitionsToTxn: the verification reads the partitions already written, as Kafka's does.
   */
  private checkProducer(meta: TransactionMetadata | undefined, producerId: number, producerEpoch: number): number {
    if (!meta || meta.producerId !== producerId) return ErrorCode.INVALID_PRODUCER_ID_MAPPING;
    if (meta.producerEpoch !== producerEpoch) return ErrorCode.PRODUCER_FENCED;
    if (meta.state === TransactionState.PrepareCommit || meta.state === TransactionState.PrepareAbort) return ErrorCode.CONCURRENT_TRANSACTIONS;
    return ErrorCode.NONE;
  }

  // ------------------------------------------------------------------------------------ EndTxn

  /**
   * EndTxn from a client, or an abort the coordinator starts itself (fencing, timeout), which carries
   * the bumped epoch. `clientTransactionVersion` is 2 for EndTxn v5 (its rules bump the epoch), 0 before,
   * the finalized level for the coordinator's own aborts. Resolves once the markers are written (or
   * their first try failed), with the producer id and epoch to go on with under version 2.
   */
  async endTransaction(transactionalId: string, producerId: number, producerEpoch: number, commit: boolean,
    clientTransactionVersion: number, fromClient = true): Promise<EndTxnResult> {
    if (transactionalId === '') return endError(ErrorCode.INVALID_REQUEST);
    const bumps = clientTransactionVersion >= EPOCH_BUMP_TRANSACTION_VERSION;
    // A new producer id is fetched (maybe awaiting a block reservation) before the decision that needs
    // it (an end that bumps the last epoch); the decision is then made again, as the state may have moved.
    let spareId: number | undefined;
    for (;;) {
      const found = this.lookup(transactionalId);
      if (typeof found === 'number') return endError(found);
      const { entry, meta } = found;
      if (!meta) return endError(ErrorCode.INVALID_PRODUCER_ID_MAPPING);
      const isEpochFence = meta.pendingState === TransactionState.PrepareEpochFence;
      const decision = bumps
        ? this.decideEndV2(meta, producerId, producerEpoch, commit, fromClient, isEpochFence)
        : this.decideEndV1(meta, producerId, producerEpoch, commit, fromClient);
      if ('answer' in decision) {
        // As Kafka: a retried end answers the id and epoch the transaction completed with.
        return decision.answer === ErrorCode.NONE
          ? { errorCode: ErrorCode.NONE, producerId: meta.producerId, producerEpoch: meta.producerEpoch }
          : endError(decision.answer);
      }
      // An end that bumps the last epoch moves to a new producer id; so does the abort of a fence that
      // took the last epoch (the abort's own bump then stays at it).
      const rotates = bumps && (isEpochFence ? producerEpoch >= MAX_PRODUCER_EPOCH : meta.isProducerEpochExhausted);
      if (rotates && spareId === undefined) {
        spareId = await this.producerIds.nextId();
        continue;
      }
      if (isEpochFence) {
        // The fence's bumped epoch becomes the transaction's, so its abort markers fence the old producer.
        meta.cancelTransition();
        meta.producerEpoch = producerEpoch;
        meta.lastProducerEpoch = NO_PRODUCER_EPOCH;
      }
      const transit = meta.prepareAbortOrCommit(decision.next, clientTransactionVersion, rotates ? spareId! : NO_PRODUCER_ID,
        this.now(), decision.noPartitionAdded);
      const errorCode = await this.persist(entry, meta, transit);
      if (errorCode !== ErrorCode.NONE) {
        if (isEpochFence) meta.hasFailedEpochFence = true;
        return endError(errorCode);
      }
      await this.completeTransaction(entry, meta, commit);
      if (!bumps) return { errorCode: ErrorCode.NONE, producerId, producerEpoch };
      // What the client goes on with: the epoch after this end, or the next producer id at epoch 0.
      return transit.nextProducerId === NO_PRODUCER_ID
        ? { errorCode: ErrorCode.NONE, producerId: transit.producerId, producerEpoch: transit.producerEpoch }
        : { errorCode: ErrorCode.NONE, producerId: transit.nextProducerId, producerEpoch: 0 };
    }
  }

  /** Kafka's endTransactionWithTV1 checks: the client's epoch must be the current one; no empty transaction ends. */
  private decideEndV1(meta: TransactionMetadata, producerId: number, producerEpoch: number, commit: boolean, fromClient: boolean): EndDecision {
    if (meta.producerId !== producerId) return { answer: ErrorCode.INVALID_PRODUCER_ID_MAPPING };
    // A client must use its current epoch; the coordinator's own aborts use the one they just bumped.
    if ((fromClient && producerEpoch !== meta.producerEpoch) || producerEpoch < meta.producerEpoch) return { answer: ErrorCode.PRODUCER_FENCED };
    if (meta.pendingTransitionInProgress && meta.pendingState !== TransactionState.PrepareEpochFence) return { answer: ErrorCode.CONCURRENT_TRANSACTIONS };
    switch (meta.state) {
      case TransactionState.Ongoing:
        return { next: commit ? TransactionState.PrepareCommit : TransactionState.PrepareAbort, noPartitionAdded: false };
      case TransactionState.CompleteCommit:
        return { answer: commit ? ErrorCode.NONE : ErrorCode.INVALID_TXN_STATE };
      case TransactionState.CompleteAbort:
        return { answer: commit ? ErrorCode.INVALID_TXN_STATE : ErrorCode.NONE };
      case TransactionState.PrepareCommit:
        return { answer: commit ? ErrorCode.CONCURRENT_TRANSACTIONS : ErrorCode.INVALID_TXN_STATE };
      case TransactionState.PrepareAbort:
        return { answer: commit ? ErrorCode.INVALID_TXN_STATE : ErrorCode.CONCURRENT_TRANSACTIONS };
      case TransactionState.Empty:
        return { answer: ErrorCode.INVALID_TXN_STATE };
      default:
        throw new Error(`transactional id ${meta.transactionalId} is ${stateName(meta.state)}, a state it should never be found in`);
    }
  }

  /**
   * Kafka's endTransaction checks under transaction version 2. The epoch is bumped at every end, so a
   * retry comes with the epoch before the last bump (or, after a rotation, the previous producer id at
   * the last epoch): a retry of the end that completed answers NONE, anything else with an old epoch
   * is fenced. An abort with no transaction open is taken (and bumps the epoch); so is an abort right
   * after a completed end, at the epoch it returned.
   */
  private decideEndV2(meta: TransactionMetadata, producerId: number, producerEpoch: number, commit: boolean, fromClient: boolean,
    isEpochFence: boolean): EndDecision {
    const retryOnOverflow = !isEpochFence && meta.lastProducerId === producerId && producerEpoch === MAX_PRODUCER_EPOCH - 1 && meta.producerEpoch === 0;
    const retryOnEpochBump = !isEpochFence && meta.producerEpoch === producerEpoch + 1;
    const isRetry = retryOnEpochBump || retryOnOverflow;
    let validEpoch: boolean;
    if (isEpochFence) {
      validEpoch = (!fromClient || producerEpoch === meta.producerEpoch) && producerEpoch >= meta.producerEpoch;
    } else if (meta.state === TransactionState.PrepareCommit || meta.state === TransactionState.PrepareAbort) {
      validEpoch = retryOnEpochBump;
    } else if (meta.state === TransactionState.CompleteCommit || meta.state === TransactionState.CompleteAbort) {
      validEpoch = isRetry || producerEpoch === meta.producerEpoch;
    } else {
      validEpoch = producerEpoch === meta.producerEpoch;
    }
    if (meta.producerId !== producerId && !retryOnOverflow) return { answer: ErrorCode.INVALID_PRODUCER_ID_MAPPING };
    if (!validEpoch) return { answer: ErrorCode.PRODUCER_FENCED };
    if (meta.pendingTransitionInProgress && !isEpochFence) return { answer: ErrorCode.CONCURRENT_TRANSACTIONS };
    const abortFromNothing: EndDecision = { next: TransactionState.PrepareAbort, noPartitionAdded: true };
    switch (meta.state) {
      case TransactionState.Ongoing:
        return { next: commit ? TransactionState.PrepareCommit : TransactionState.PrepareAbort, noPartitionAdded: false };
      case TransactionState.CompleteCommit:
        if (commit) return { answer: isRetry ? ErrorCode.NONE : ErrorCode.INVALID_TXN_STATE };
        return isRetry ? { answer: ErrorCode.INVALID_TXN_STATE } : abortFromNothing;
      case TransactionState.CompleteAbort:
        if (commit) return { answer: ErrorCode.INVALID_TXN_STATE };
        return isRetry ? { answer: ErrorCode.NONE } : abortFromNothing;
      case TransactionState.PrepareCommit:
        return { answer: commit ? ErrorCode.CONCURRENT_TRANSACTIONS : ErrorCode.INVALID_TXN_STATE };
      case TransactionState.PrepareAbort:
        return { answer: commit ? ErrorCode.INVALID_TXN_STATE : ErrorCode.CONCURRENT_TRANSACTIONS };
      case TransactionState.Empty:
        return commit ? { answer: ErrorCode.INVALID_TXN_STATE } : abortFromNothing;
      default:
        throw new Error(`transactional id ${meta.transactionalId} is ${stateName(meta.state)}, a state it should never be found in`);
    }
  }

  /**
   * Writes the markers of a transaction in PrepareCommit/PrepareAbort, then its Complete state,
   * retrying until both are done, the partition is resigned or the coordinator closes. Resolves after
   * the first round. The markers carry the partition's leader epoch as their coordinator epoch.
   */
  private completeTransaction(entry: TxnPartition, meta: TransactionMetadata, commit: boolean): Promise<void> {
    let firstRoundDone!: () => void;
    const firstRound = new Promise<void>((resolve) => (firstRoundDone = resolve));
    const marker = {
      producerId: meta.producerId, producerEpoch: meta.producerEpoch, commit,
      coordinatorEpoch: entry.leaderEpoch, transactionVersion: meta.clientTransactionVersion,
    };
    let remaining = [...meta.partitions.values()];
    const run = (async () => {
      for (let round = 0; ; round++) {
        if (round > 0) {
          await new Promise((resolve) => setTimeout(resolve, RETRY_BACKOFF_MS));
          if (!this.isCurrent(entry, meta)) return; // closed or resigned: the next load finishes the job
        }
        if (remaining.length > 0) remaining = await this.markers.write({ ...marker, partitions: remaining });
        if (remaining.length === 0 && (await this.persist(entry, meta, meta.prepareComplete(this.now()))) === ErrorCode.NONE) return;
        firstRoundDone();
      }
    })().catch((err) => {
      this.log?.error({ err, transactionalId: meta.transactionalId }, 'completing a transaction failed');
    }).finally(() => {
      firstRoundDone();
      this.completions.delete(run);
    });
    this.completions.add(run);
    return firstRound;
  }

  // ------------------------------------------------------------------------------------ timers

  /** Aborts Ongoing transactions past their timeout, fencing their producer (Kafka's abortTimedOutTransactions). */
  abortTimedOutTransactions(): void {
    const now = this.now();
    for (const meta of this.loadedPartitions().flatMap((p) => [...p.transactions.values()])) {
      if (meta.state !== TransactionState.Ongoing || meta.pendingTransitionInProgress) continue;
      if (meta.txnStartTimestamp + meta.txnTimeoutMs >= now) continue;
      const fence = meta.prepareFenceProducerEpoch();
      this.log?.info({ transactionalId: meta.transactionalId, timeoutMs: meta.txnTimeoutMs }, 'aborting a transaction past its timeout');
      void this.endTransaction(meta.transactionalId, fence.producerId, fence.producerEpoch, false, this.transactionVersion, false).then(({ errorCode }) => {
        if (errorCode !== ErrorCode.NONE) this.log?.warn({ transactionalId: meta.transactionalId, errorCode }, 'aborting a timed-out transaction failed');
      });
    }
  }

  /** Removes ids not in a transaction and idle for transactional.id.expiration.ms (a tombstone each). */
  removeExpiredTransactionalIds(): void {
    const horizon = this.now() - this.config.transactionalIdExpirationMs;
    for (const entry of this.loadedPartitions()) for (const meta of entry.transactions.values()) {
      const idle = meta.state === TransactionState.Empty || meta.state === TransactionState.CompleteCommit
        || meta.state === TransactionState.CompleteAbort;
      if (!idle || meta.pendingTransitionInProgress || meta.txnLastUpdateTimestamp > horizon) continue;
      void this.persist(entry, meta, meta.prepareDead()).then((errorCode) => {
        if (errorCode === ErrorCode.NONE && this.isCurrent(entry, meta)) entry.transactions.delete(meta.transactionalId);
      });
    }
  }

  // ------------------------------------------------------------------------------------ describe, list

  describe(transactionalId: string): TransactionDescription {
    const answer = (errorCode: number, meta?: TransactionMetadata): TransactionDescription => ({
      errorCode, transactionalId, state: meta ? stateName(meta.state) : '', timeoutMs: meta?.txnTimeoutMs ?? 0,
      startTimeMs: meta?.txnStartTimestamp ?? -1, producerId: meta?.producerId ?? NO_PRODUCER_ID,
      producerEpoch: meta?.producerEpoch ?? NO_PRODUCER_EPOCH, partitions: meta ? [...meta.partitions.values()] : [],
    });
    if (this.closed) return answer(ErrorCode.COORDINATOR_NOT_AVAILABLE);
    if (transactionalId === '') return answer(ErrorCode.INVALID_REQUEST);
    const found = this.lookup(transactionalId);
    if (typeof found === 'number') return answer(found);
    const { meta } = found;
    if (!meta || meta.state === TransactionState.Dead) return answer(ErrorCode.TRANSACTIONAL_ID_NOT_FOUND);
    return answer(ErrorCode.NONE, meta);
  }

  /**
   * ListTransactions: every id matching all the filters given (states by name, producer ids,
   * started more than durationMs ago; -1 or empty: no filter), among the ids of the partitions this
   * broker leads.
   */
  list(stateFilters: string[], producerIdFilters: number[], durationMs: number): TransactionListing {
    const unknownStateFilters = stateFilters.filter((s) => !STATE_NAMES.has(s));
    const out: TransactionListing = { errorCode: ErrorCode.NONE, unknownStateFilters, transactions: [] };
    if (this.closed) return { ...out, errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE };
    // As Kafka: while any partition loads, the listing would be partial.
    if ([...this.partitions.values()].some((p) => p.loading)) return { ...out, errorCode: ErrorCode.COORDINATOR_LOAD_IN_PROGRESS };
    const states = new Set(stateFilters);
    const producerIds = new Set(producerIdFilters);
    const now = this.now();
    for (const meta of this.loadedPartitions().flatMap((p) => [...p.transactions.values()])) {
      const name = stateName(meta.state);
      if (meta.state === TransactionState.Dead) continue;
      if (states.size > 0 && !states.has(name)) continue;
      if (producerIds.size > 0 && !producerIds.has(meta.producerId)) continue;
      // As Kafka: measured from the start timestamp, -1 for an id with no transaction yet.
      if (durationMs >= 0 && now - meta.txnStartTimestamp <= durationMs) continue;
      out.transactions.push({ transactionalId: meta.transactionalId, producerId: meta.producerId, state: name });
    }
    return out;
  }
}
