// The share coordinator (Kafka's ShareCoordinatorService and ShareCoordinatorShard): the durable state
// of the share-partitions whose keys fall on the __share_group_state partitions this broker leads.
//
// - onElection loads a partition (COORDINATOR_LOAD_IN_PROGRESS meanwhile) by replaying its records;
//   onResignation drops it; keys of a partition not hosted get NOT_COORDINATOR; a closed coordinator
//   COORDINATOR_NOT_AVAILABLE ("Share coordinator is not available.").
// - Per key, as the shard keeps it: the state (the last snapshot with the updates since merged over
//   it), the highest leader epoch and state epoch recorded, and the updates since the last snapshot.
//   A snapshot record replaces the state (a tombstone removes the key); an update merges its batches
//   over it (state-batches.ts), its start offset and leader epoch taken unless -1.
// - A write becomes one record: a ShareSnapshot once share.coordinator.snapshot.update.records.per.snapshot
//   updates followed the last one, else a ShareUpdate holding only the write's batches. The start
//   offset never moves back (the higher of the stored and the written); deliveryCompleteCount is the
//   written one, the higher of both at an unchanged start, the stored one for a start behind it.
// - Operations on one key run one after the other (each record computed from the state its
//   predecessor left, appended, then applied), as Kafka's runtime runs a shard's operations; a write
//   whose partition resigned meanwhile answers NOT_COORDINATOR and changes nothing.
// - Checks and answers as Kafka 4.4's shard: INVALID_REQUEST for a negative partition, leader epoch
//   (read, write) or state epoch (write, initialize), and for reading or writing a key never
//   initialized; FENCED_LEADER_EPOCH for a read or write below the recorded leader epoch,
//   FENCED_STATE_EPOCH for a write or initialize below the recorded state epoch;
//   UNKNOWN_TOPIC_OR_PARTITION for a topic id or partition the metadata does not have. A read at a
//   new leader epoch records it (a record, as a write with no batches). Deleting an unknown key
//   succeeds and writes nothing; otherwise a tombstone.
// - Pruning (Kafka's ShareCoordinatorOffsetsManager and prune job): every key's state is rebuilt from
//   its latest snapshot on, so the records below the lowest of those snapshots' offsets (a tombstone
//   counting once, at its offset) are redundant; every share.coordinator.state.topic.prune.interval.ms
//   each loaded partition's log start moves up to it.
import type { Logger } from 'pino';
import type { TopicRecord } from '../cluster/metadata-store';
import { SHARE_GROUP_STATE_TOPIC_NAME } from '../cluster/topic-names';
import { ErrorCode, errorMessage } from '../common/errors';
import { CoordinatorPartitions } from '../replica/coordinator-partitions';
import type { PersisterError, ReadResult, SharePartitionKey, StateBatch, StateSummary } from './persister';
import { coordinatorKey, shareStatePartitionFor, type PlacedRecord, type ShareStateStore } from './share-state-log';
import type { ShareSnapshot, ShareStateRecord } from './share-state-records';
import { combineStateBatches } from './state-batches';

/** Kafka's messages for the requests it refuses as INVALID_REQUEST (ShareCoordinatorShard's exceptions). */
export const NEGATIVE_PARTITION_ID = 'The partition id cannot be a negative number.';
export const NEGATIVE_LEADER_EPOCH = 'The leader epoch cannot be a negative number.';
export const NEGATIVE_STATE_EPOCH = 'The state epoch cannot be a negative number.';
export const WRITE_UNINITIALIZED_SHARE_PARTITION = 'Write operation on uninitialized share partition not allowed.';
export const READ_UNINITIALIZED_SHARE_PARTITION = 'Read operation on uninitialized share partition not allowed.';
const NOT_AVAILABLE_MESSAGE = 'Share coordinator is not available.';

export interface ShareCoordinatorConfig {
  /** share.coordinator.state.topic.num.partitions: the partition count while the topic does not exist. */
  numPartitions: number;
  /** share.coordinator.snapshot.update.records.per.snapshot */
  updatesPerSnapshot: number;
  /** share.coordinator.state.topic.prune.interval.ms */
  pruneIntervalMs: number;
}

/** What a write carries (WriteShareGroupState's partition data). */
export interface StateChange {
  readonly stateEpoch: number;
  readonly leaderEpoch: number;
  readonly startOffset: bigint;
  readonly deliveryCompleteCount: number;
  readonly stateBatches: readonly StateBatch[];
}

/** One partition's keys (Kafka's ShareCoordinatorShard). */
export class ShareStateShard {
  readonly states = new Map<string, ShareSnapshot>();
  readonly leaderEpochs = new Map<string, number>();
  readonly stateEpochs = new Map<string, number>();
  readonly updateCounts = new Map<string, number>();
  /** Per key, the offset of its latest snapshot. */
  private readonly snapshotOffsets = new Map<string, number>();
  /** The lowest of snapshotOffsets as last computed; MAX_SAFE_INTEGER before any snapshot. */
  private redundantOffset = Number.MAX_SAFE_INTEGER;

  constructor(private readonly updatesPerSnapshot: number) {}

  /** Records below this offset are needed by no key's state; null while there is none such. */
  lastRedundantOffset(): number | null {
    return this.redundantOffset <= 0 || this.redundantOffset === Number.MAX_SAFE_INTEGER ? null : this.redundantOffset;
  }

  /** ShareCoordinatorOffsetsManager.updateState: a snapshot (or tombstone) of the key at this offset. */
  private snapshotAt(id: string, offset: number, tombstone: boolean): void {
    this.snapshotOffsets.set(id, offset);
    let lowest = Number.MAX_SAFE_INTEGER;
    for (const o of this.snapshotOffsets.values()) lowest = Math.min(lowest, o);
    this.redundantOffset = lowest;
    if (tombstone) this.snapshotOffsets.delete(id);
  }

  replay(record: ShareStateRecord, offset: number): void {
    const id = coordinatorKey(record.key);
    if (record.type === 'snapshot') {
      this.snapshotAt(id, offset, record.value === null);
      if (record.value === null) {
        this.states.delete(id);
        this.leaderEpochs.delete(id);
        this.stateEpochs.delete(id);
        this.updateCounts.delete(id);
        return;
      }
      raise(this.leaderEpochs, id, record.value.leaderEpoch);
      raise(this.stateEpochs, id, record.value.stateEpoch);
      this.states.set(id, record.value);
      // As Kafka's shard: the count restarts only once it reached the limit (an initialization keeps it).
      const updates = this.updateCounts.get(id);
      if (updates !== undefined && updates >= this.updatesPerSnapshot) this.updateCounts.set(id, 0);
      return;
    }
    const update = record.value;
    if (update === null) return; // Kafka writes no update tombstones
    raise(this.leaderEpochs, id, update.leaderEpoch);
    const current = this.states.get(id);
    if (!current) {
      this.states.set(id, { ...update, stateEpoch: 0, createTimestamp: 0, writeTimestamp: 0 });
    } else {
      const startOffset = update.startOffset === -1n ? current.startOffset : update.startOffset;
      this.states.set(id, {
        ...current, startOffset, deliveryCompleteCount: update.deliveryCompleteCount,
        leaderEpoch: update.leaderEpoch === -1 ? current.leaderEpoch : update.leaderEpoch,
        stateBatches: combineStateBatches(current.stateBatches, update.stateBatches, startOffset),
      });
    }
    this.updateCounts.set(id, (this.updateCounts.get(id) ?? 0) + 1);
  }

  /** The record a write (or a read at a new leader epoch, `newLeaderEpoch`) makes of a key that has a state. */
  recordFor(key: SharePartitionKey, change: StateChange, newLeaderEpoch: boolean, now: number): ShareStateRecord {
    const id = coordinatorKey(key);
    const current = this.states.get(id)!;
    const leaderEpoch = newLeaderEpoch ? change.leaderEpoch : current.leaderEpoch;
    const startOffset = change.startOffset > current.startOffset ? change.startOffset : current.startOffset;
    let deliveryCompleteCount = change.deliveryCompleteCount;
    if (change.startOffset === current.startOffset) deliveryCompleteCount = Math.max(change.deliveryCompleteCount, current.deliveryCompleteCount);
    else if (change.startOffset < current.startOffset) deliveryCompleteCount = current.deliveryCompleteCount;
    if ((this.updateCounts.get(id) ?? 0) >= this.updatesPerSnapshot) {
      return {
        type: 'snapshot', key,
        value: {
          snapshotEpoch: current.snapshotEpoch + 1, stateEpoch: current.stateEpoch, leaderEpoch, startOffset, deliveryCompleteCount,
          createTimestamp: now, writeTimestamp: now, stateBatches: combineStateBatches(current.stateBatches, change.stateBatches, startOffset),
        },
      };
    }
    return {
      type: 'update', key,
      value: {
        snapshotEpoch: current.snapshotEpoch, leaderEpoch, startOffset, deliveryCompleteCount,
        stateBatches: combineStateBatches([], change.stateBatches, startOffset),
      },
    };
  }
}

function raise(map: Map<string, number>, id: string, value: number): void {
  const current = map.get(id);
  if (current === undefined || current < value) map.set(id, value);
}

/** A __share_group_state partition this broker leads; an election makes a new one. */
interface HostedPartition {
  readonly index: number;
  readonly leaderEpoch: number;
  loading: boolean;
  readonly shard: ShareStateShard;
  /** The offset its log start was last moved to (-1: not yet). */
  prunedTo: number;
}

type Check = { errorCode: number; errorMessage: string | null };

const fail = (errorCode: number, message?: string): Check => ({ errorCode, errorMessage: message ?? errorMessage(errorCode) });
const OK: PersisterError = { errorCode: ErrorCode.NONE, errorMessage: null };

export class ShareCoordinator {
  /** The partitions this broker leads, loaded or loading. */
  private readonly partitions: CoordinatorPartitions<HostedPartition, PlacedRecord[]>;
  /** Per key, the operation last queued (operations on one key run in turn). */
  private readonly queues = new Map<string, Promise<unknown>>();
  private closed = false;
  private pruneTimer: NodeJS.Timeout | undefined;
  private pruning: Promise<void> | undefined;

  constructor(
    private readonly config: ShareCoordinatorConfig,
    private readonly store: ShareStateStore,
    private readonly metadata: { topicById(id: string): TopicRecord | undefined },
    private readonly log?: Logger,
    private readonly now: () => number = Date.now,
  ) {
    this.partitions = new CoordinatorPartitions(SHARE_GROUP_STATE_TOPIC_NAME, 'share coordinator', {
      create: (index, leaderEpoch) => ({ index, leaderEpoch, loading: true, shard: new ShareStateShard(this.config.updatesPerSnapshot), prunedTo: -1 }),
      read: (index) => this.store.loadPartition(index),
      apply: (entry, records) => this.applyLoaded(entry, records),
    }, log);
  }

  /** The __share_group_state partition of a key (the topic's partition count, or the configured one before it exists). */
  partitionFor(key: SharePartitionKey): number {
    return shareStatePartitionFor(key, this.store.numPartitions || this.config.numPartitions);
  }

  /** Whether this broker serves the keys of this partition now (elected, and loaded). */
  isLoaded(partition: number): boolean {
    return !this.closed && this.partitions.isLoaded(partition);
  }

  onElection(partition: number, leaderEpoch: number): void {
    if (!this.closed && this.partitions.elect(partition, leaderEpoch)) this.startPruning();
  }

  onResignation(partition: number, leaderEpoch: number): void {
    this.partitions.resign(partition, leaderEpoch);
  }

  /** Replays the partition's records read back. */
  private applyLoaded(entry: HostedPartition, records: PlacedRecord[]): void {
    for (const { record, offset } of records) entry.shard.replay(record, offset);
    entry.loading = false;
    this.log?.info({ partition: entry.index, leaderEpoch: entry.leaderEpoch, keys: entry.shard.states.size }, 'loaded a __share_group_state partition');
  }

  loadsSettled(): Promise<void> {
    return this.partitions.settled();
  }

  /** __share_group_state was deleted: every partition is dropped and its epochs forgotten. */
  unload(): void {
    this.partitions.clear();
  }

  /** The prune job, from the first election on (Kafka schedules it at start-up). */
  private startPruning(): void {
    if (this.pruneTimer) return;
    this.pruneTimer = setInterval(() => void this.prune(), this.config.pruneIntervalMs);
    this.pruneTimer.unref();
  }

  /** Moves each loaded partition's log start up to its redundant offset; a round at a time. */
  prune(): Promise<void> {
    this.pruning ??= (async () => {
      for (const entry of this.partitions.values()) {
        const offset = entry.loading ? null : entry.shard.lastRedundantOffset();
        if (this.closed || offset === null || offset <= entry.prunedTo) continue;
        try {
          await this.store.deleteRecordsBefore(entry.index, offset);
          entry.prunedTo = offset;
        } catch (err) {
          this.log?.warn({ err, partition: entry.index, offset }, 'pruning a __share_group_state partition failed');
        }
      }
    })().finally(() => (this.pruning = undefined));
    return this.pruning;
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.pruneTimer);
    await this.pruning;
    await this.loadsSettled();
    await Promise.allSettled([...this.queues.values()]);
  }

  // ------------------------------------------------------------------------------------------- operations

  /** ReadShareGroupState (readStateAndMaybeUpdateLeaderEpoch). */
  read(key: SharePartitionKey, leaderEpoch: number): Promise<ReadResult> {
    return this.run(key, async (entry) => {
      const id = coordinatorKey(key);
      const invalid = key.partition < 0 ? fail(ErrorCode.INVALID_REQUEST, NEGATIVE_PARTITION_ID)
        : leaderEpoch < 0 ? fail(ErrorCode.INVALID_REQUEST, NEGATIVE_LEADER_EPOCH)
          : !entry.shard.states.has(id) ? fail(ErrorCode.INVALID_REQUEST, READ_UNINITIALIZED_SHARE_PARTITION)
            : (entry.shard.leaderEpochs.get(id) ?? -1) > leaderEpoch ? fail(ErrorCode.FENCED_LEADER_EPOCH)
              : this.unknownPartition(key);
      if (invalid) return invalid;
      const state = entry.shard.states.get(id)!;
      // ReadShareGroupState does not carry the delivery complete count (the summary does): unknown here too.
      const result: ReadResult = {
        errorCode: ErrorCode.NONE, stateEpoch: state.stateEpoch, leaderEpoch, startOffset: state.startOffset,
        deliveryCompleteCount: -1, stateBatches: state.stateBatches,
      };
      if (entry.shard.leaderEpochs.get(id) === leaderEpoch) return result;
      this.log?.info({ key: id, leaderEpoch }, 'read with a new leader epoch: recording it');
      const record = entry.shard.recordFor(key, {
        stateEpoch: state.stateEpoch, leaderEpoch, startOffset: state.startOffset, deliveryCompleteCount: state.deliveryCompleteCount, stateBatches: [],
      }, true, this.now());
      const code = await this.append(entry, record);
      return code === ErrorCode.NONE ? result : fail(code);
    }, (c) => c);
  }

  /** WriteShareGroupState. */
  write(key: SharePartitionKey, change: StateChange): Promise<PersisterError> {
    return this.run(key, async (entry) => {
      const id = coordinatorKey(key);
      const invalid = key.partition < 0 ? fail(ErrorCode.INVALID_REQUEST, NEGATIVE_PARTITION_ID)
        : change.leaderEpoch < 0 ? fail(ErrorCode.INVALID_REQUEST, NEGATIVE_LEADER_EPOCH)
          : change.stateEpoch < 0 ? fail(ErrorCode.INVALID_REQUEST, NEGATIVE_STATE_EPOCH)
            : !entry.shard.states.has(id) ? fail(ErrorCode.INVALID_REQUEST, WRITE_UNINITIALIZED_SHARE_PARTITION)
              : (entry.shard.leaderEpochs.get(id) ?? -1) > change.leaderEpoch ? fail(ErrorCode.FENCED_LEADER_EPOCH)
                : (entry.shard.stateEpochs.get(id) ?? -1) > change.stateEpoch ? fail(ErrorCode.FENCED_STATE_EPOCH)
                  : this.unknownPartition(key);
      if (invalid) return invalid;
      const code = await this.append(entry, entry.shard.recordFor(key, change, false, this.now()));
      return code === ErrorCode.NONE ? OK : fail(code);
    }, (c) => c);
  }

  /** InitializeShareGroupState: a snapshot starting at startOffset at this state epoch, without batches. */
  initialize(key: SharePartitionKey, stateEpoch: number, startOffset: bigint): Promise<PersisterError> {
    return this.run(key, async (entry) => {
      const id = coordinatorKey(key);
      const invalid = key.partition < 0 ? fail(ErrorCode.INVALID_REQUEST, NEGATIVE_PARTITION_ID)
        : stateEpoch < 0 ? fail(ErrorCode.INVALID_REQUEST, NEGATIVE_STATE_EPOCH)
          : (entry.shard.stateEpochs.get(id) ?? -1) > stateEpoch ? fail(ErrorCode.FENCED_STATE_EPOCH)
            : this.unknownPartition(key);
      if (invalid) return invalid;
      const current = entry.shard.states.get(id);
      const now = this.now();
      const code = await this.append(entry, {
        type: 'snapshot', key,
        value: {
          snapshotEpoch: current ? current.snapshotEpoch + 1 : 0, stateEpoch, leaderEpoch: 0, startOffset,
          deliveryCompleteCount: startOffset === -1n ? -1 : 0, createTimestamp: now, writeTimestamp: now, stateBatches: [],
        },
      });
      return code === ErrorCode.NONE ? OK : fail(code);
    }, (c) => c);
  }

  /** DeleteShareGroupState. */
  delete(key: SharePartitionKey): Promise<PersisterError> {
    return this.run(key, async (entry) => {
      const invalid = key.partition < 0 ? fail(ErrorCode.INVALID_REQUEST, NEGATIVE_PARTITION_ID) : this.unknownPartition(key);
      if (invalid) return invalid;
      if (!entry.shard.states.has(coordinatorKey(key))) return OK;
      const code = await this.append(entry, { type: 'snapshot', key, value: null });
      return code === ErrorCode.NONE ? OK : fail(code);
    }, (c) => c);
  }

  /** ReadShareGroupStateSummary: what is stored, without the batches (a read only: at any leader epoch, none recorded). */
  readSummary(key: SharePartitionKey, _leaderEpoch: number): Promise<StateSummary> {
    const summary = (c: Check): StateSummary => ({ ...c, stateEpoch: 0, leaderEpoch: 0, startOffset: -1n, deliveryCompleteCount: -1 });
    const entry = this.hosted(key);
    if (!('shard' in entry)) return Promise.resolve(summary(entry));
    const invalid = key.partition < 0 ? fail(ErrorCode.INVALID_REQUEST, NEGATIVE_PARTITION_ID) : this.unknownPartition(key);
    if (invalid) return Promise.resolve(summary(invalid));
    const state = entry.shard.states.get(coordinatorKey(key));
    if (!state) return Promise.resolve(summary({ errorCode: ErrorCode.NONE, errorMessage: null }));
    return Promise.resolve({
      errorCode: ErrorCode.NONE, errorMessage: null, stateEpoch: state.stateEpoch, leaderEpoch: state.leaderEpoch,
      startOffset: state.startOffset, deliveryCompleteCount: state.deliveryCompleteCount,
    });
  }

  // ------------------------------------------------------------------------------------------- machinery

  /** The hosted partition of the key, or the error the runtime answers (not hosted, loading, closed). */
  private hosted(key: SharePartitionKey): HostedPartition | Check {
    if (this.closed) return fail(ErrorCode.COORDINATOR_NOT_AVAILABLE, NOT_AVAILABLE_MESSAGE);
    const entry = this.partitions.get(this.partitionFor(key));
    if (!entry) return fail(ErrorCode.NOT_COORDINATOR);
    return entry.loading ? fail(ErrorCode.COORDINATOR_LOAD_IN_PROGRESS) : entry;
  }

  private unknownPartition(key: SharePartitionKey): Check | null {
    const topic = this.metadata.topicById(key.topicId);
    return topic && key.partition < topic.partitions.length ? null : fail(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  }

  /**
   * Runs `op` on the key's hosted partition once the key's earlier operations are done; the
   * runtime's error (via `onError`) if the partition is not served, or no longer by then.
   */
  private run<T>(key: SharePartitionKey, op: (entry: HostedPartition) => Promise<T>, onError: (c: Check) => T): Promise<T> {
    const id = coordinatorKey(key);
    const previous = this.queues.get(id) ?? Promise.resolve();
    const next = previous.then(async () => {
      const entry = this.hosted(key);
      if (!('shard' in entry)) return onError(entry);
      try {
        return await op(entry);
      } catch (err) {
        this.log?.error({ err, key: id }, 'a share coordinator operation failed');
        return onError(fail(ErrorCode.UNKNOWN_SERVER_ERROR));
      }
    });
    this.queues.set(id, next);
    void next.finally(() => {
      if (this.queues.get(id) === next) this.queues.delete(id);
    });
    return next;
  }

  /** Appends the record, then applies it, unless the partition resigned meanwhile (NOT_COORDINATOR). */
  private async append(entry: HostedPartition, record: ShareStateRecord): Promise<number> {
    const { errorCode, offset } = await this.store.write(entry.index, record);
    if (!this.partitions.isCurrent(entry)) return ErrorCode.NOT_COORDINATOR;
    if (errorCode === ErrorCode.NONE) entry.shard.replay(record, offset);
    return errorCode;
  }
}
