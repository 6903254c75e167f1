// Consumer groups and committed offsets, persisted in the compacted internal topic __consumer_offsets
// in Kafka's own record formats (offsets-records.ts), as Kafka's group coordinator keeps them.
//
// - A group lives on partition Utils.abs(groupId.hashCode()) % offsets.topic.num.partitions (Kafka's
//   GroupCoordinatorService.partitionFor). Utils.abs maps Integer.MIN_VALUE to 0 and is Math.abs
//   otherwise: NOT the `& 0x7fffffff` of the producer's partitioner (they differ for every negative
//   hash: "my-group" hashes to -1906497762, partition 12 of 50 here, 36 with the mask).
// - Each store/delete call is one uncompressed batch of keyed records (producerId -1), appended through
//   the ReplicaManager like a Produce (so the compacted-topic key check applies). The append itself is
//   synchronous: calls land in the log in call order, which is what makes "last write wins" on load
//   mean "the coordinator's last call wins".
// - Append errors become coordinator errors as Kafka maps them:
//   offset commits (GroupMetadataManager.storeOffsets, the classic coordinator): UNKNOWN_TOPIC_OR_PARTITION,
//     NOT_ENOUGH_REPLICAS(_AFTER_APPEND) -> COORDINATOR_NOT_AVAILABLE; NOT_LEADER_OR_FOLLOWER,
//     KAFKA_STORAGE_ERROR -> NOT_COORDINATOR; MESSAGE_TOO_LARGE, RECORD_LIST_TOO_LARGE, INVALID_FETCH_SIZE
//     -> INVALID_COMMIT_OFFSET_SIZE; anything else as is. (Kafka 4's new runtime answers
//     UNKNOWN_SERVER_ERROR for the too-large case instead; the classic code is the informative one.)
//   group metadata (GroupMetadataManager.storeGroup): the same, except REQUEST_TIMED_OUT ->
//     REBALANCE_IN_PROGRESS and the too-large errors -> UNKNOWN_SERVER_ERROR.
//   deletions (Kafka 4, CoordinatorOperationExceptionHelper; the classic coordinator only logged
//     tombstone failures): UNKNOWN_TOPIC_OR_PARTITION, NOT_ENOUGH_REPLICAS(_AFTER_APPEND),
//     REQUEST_TIMED_OUT -> COORDINATOR_NOT_AVAILABLE; NOT_LEADER_OR_FOLLOWER, KAFKA_STORAGE_ERROR ->
//     NOT_COORDINATOR; too large -> UNKNOWN_SERVER_ERROR.
// - Loading replays each partition from its log start to its high watermark: the last value per key
//   wins, a tombstone removes the key (the consumer group records of ./consumer-records.ts too),
//   records of a type this broker does not know (share and streams groups) are skipped as Kafka's
//   loader skips them. Transactional batches (TxnOffsetCommit) are
//   held per producer until their COMMIT marker (applied unless a later non-transactional value exists,
//   as OffsetMetadataManager.replayEndTransactionMarker does) or ABORT marker (dropped); an offset
//   tombstone also drops the held offsets of its partition, as Kafka's replay does. Those without a
//   marker yet come back as the group's pending transactional offsets, for the marker to come.
//   Every loaded offset carries its place in the log, which is what "later" means above.
// - TxnOffsetCommit's batch is transactional (the producer's id and epoch, baseSequence 0 as Kafka's
//   coordinator writes it); every write here is appended with origin 'coordinator', so it carries no
//   sequence to check (Kafka's AppendOrigin.COORDINATOR), only the producer's epoch.
import type { Logger } from 'pino';
import type { Controller, Outcome } from '../cluster/controller';
import { coordinatorPartitionFor } from '../cluster/coordinator-partition';
import { GROUP_METADATA_TOPIC_NAME } from '../cluster/topic-names';
import { ErrorCode } from '../common/errors';
import type { BatchInfo } from '../records/batch';
import { decodeRecords, readEndTxnMarker, type BuildRecord } from '../records/records';
import { appendInternalRecords, commonCoordinatorError, coordinatorAppendError, isTooLarge } from '../replica/internal-append';
import type { Partition, ReplicaManager } from '../replica/replica-manager';
import { replayBatches } from '../storage/replay';
import {
  decodeGroupMetadataValue,
  decodeKey,
  decodeOffsetCommitValue,
  encodeGroupMetadataKey,
  encodeGroupMetadataValue,
  encodeOffsetCommitKey,
  encodeOffsetCommitValue,
} from './offsets-records';
import { decodeConsumerGroupRecord, encodeConsumerGroupRecord, type ConsumerGroupRecord } from './consumer-records';
import {
  offsetKey, type ConsumerGroupSnapshot, type GroupSnapshot, type LoadedGroup, type LoadedOffset, type OffsetAndMetadata, type OffsetsStore,
  type TopicPartitionKey, type TopicPartitionOffset, type TxnProducer,
} from './store';

export const OFFSETS_TOPIC = GROUP_METADATA_TOPIC_NAME;
/** offsets.topic.segment.bytes default. */
export const DEFAULT_OFFSETS_TOPIC_SEGMENT_BYTES = 104857600;

/** The topic configs Kafka gives __consumer_offsets (GroupCoordinatorService.groupMetadataTopicConfigs). */
export function offsetsTopicConfigs(segmentBytes = DEFAULT_OFFSETS_TOPIC_SEGMENT_BYTES): Record<string, string> {
  return { 'cleanup.policy': 'compact', 'compression.type': 'producer', 'segment.bytes': String(segmentBytes) };
}

// ---------------------------------------------------------------------------------------------------------
// Error mapping
// ---------------------------------------------------------------------------------------------------------

/** GroupMetadataManager.storeOffsets' putCacheCallback. */
export function offsetCommitAppendError(code: number): number {
  if (code === ErrorCode.NONE) return code;
  return commonCoordinatorError(code) ?? (isTooLarge(code) ? ErrorCode.INVALID_COMMIT_OFFSET_SIZE : code);
}

/** GroupMetadataManager.storeGroup's putCacheCallback. */
export function groupMetadataAppendError(code: number): number {
  if (code === ErrorCode.NONE) return code;
  if (code === ErrorCode.REQUEST_TIMED_OUT) return ErrorCode.REBALANCE_IN_PROGRESS;
  return commonCoordinatorError(code) ?? (isTooLarge(code) ? ErrorCode.UNKNOWN_SERVER_ERROR : code);
}

/** Tombstone writes: Kafka 4's mapping for every coordinator write (CoordinatorOperationExceptionHelper). */
export const deletionAppendError = coordinatorAppendError;

// ---------------------------------------------------------------------------------------------------------
// Loading state
// ---------------------------------------------------------------------------------------------------------

type ParsedRecord =
  | { kind: 'offset'; groupId: string; topic: string; partition: number; value: OffsetAndMetadata | null; logOffset: number }
  | { kind: 'group'; groupId: string; value: GroupSnapshot | null }
  | ConsumerGroupRecord;

interface GroupState {
  group: GroupSnapshot | null;
  consumerGroup: ConsumerGroupSnapshot | null;
  offsets: Map<string, LoadedOffset>;
  pendingTxnOffsets: Map<number, Map<string, LoadedOffset>>;
}

/** Kafka's replay (OffsetMetadataManager.replay / replayEndTransactionMarker), record by record in log order. */
class LoadState {
  readonly groups = new Map<string, GroupState>();
  /** The groups each producer has transactional offsets pending in. */
  private readonly openTransactions = new Map<number, Set<string>>();

  private stateOf(groupId: string): GroupState {
    let s = this.groups.get(groupId);
    if (!s) {
      s = { group: null, consumerGroup: null, offsets: new Map(), pendingTxnOffsets: new Map() };
      this.groups.set(groupId, s);
    }
    return s;
  }

  /** `producerId` null: a record of a non-transactional batch. */
  apply(r: ParsedRecord, producerId: number | null): void {
    const s = this.stateOf(r.groupId);
    if (r.kind === 'group') {
      s.group = r.value;
      return;
    }
    if (r.kind !== 'offset') {
      s.consumerGroup = replayConsumerGroupRecord(s.consumerGroup, r);
      return;
    }
    const key = offsetKey(r.topic, r.partition);
    if (r.value === null) {
      // A tombstone removes the partition's offset, committed or still pending.
      s.offsets.delete(key);
      for (const [pid, pending] of s.pendingTxnOffsets) {
        pending.delete(key);
        if (pending.size === 0) s.pendingTxnOffsets.delete(pid);
      }
      return;
    }
    const offset = { ...r.value, topic: r.topic, partition: r.partition, logOffset: r.logOffset };
    if (producerId === null) {
      s.offsets.set(key, offset);
      return;
    }
    let pending = s.pendingTxnOffsets.get(producerId);
    if (!pending) s.pendingTxnOffsets.set(producerId, (pending = new Map()));
    pending.set(key, offset);
    let groups = this.openTransactions.get(producerId);
    if (!groups) this.openTransactions.set(producerId, (groups = new Set()));
    groups.add(r.groupId);
  }

  /** A COMMIT marker applies the producer's pending offsets unless a later commit is there; ABORT drops them. */
  endTransaction(producerId: number, commit: boolean): void {
    for (const groupId of this.openTransactions.get(producerId) ?? []) {
      const s = this.stateOf(groupId);
      const pending = s.pendingTxnOffsets.get(producerId);
      s.pendingTxnOffsets.delete(producerId);
      if (!commit || !pending) continue;
      for (const [key, o] of pending) {
        const existing = s.offsets.get(key);
        if (!existing || existing.logOffset < o.logOffset) s.offsets.set(key, o);
      }
    }
    this.openTransactions.delete(producerId);
  }

  result(): LoadedGroup[] {
    const out: LoadedGroup[] = [];
    for (const [groupId, s] of this.groups) {
      if (s.group === null && s.consumerGroup === null && s.offsets.size === 0 && s.pendingTxnOffsets.size === 0) continue;
      out.push({ groupId, ...s });
    }
    return out;
  }
}

/** Kafka's replay of the consumer group records: the last value per key, tombstones removing theirs. */
function replayConsumerGroupRecord(snapshot: ConsumerGroupSnapshot | null, r: ConsumerGroupRecord): ConsumerGroupSnapshot | null {
  if (r.kind === 'groupEpoch' && r.value === null) return null;
  const g: ConsumerGroupSnapshot = snapshot ?? {
    groupEpoch: 0, metadataHash: 0n, assignmentEpoch: -1, assignmentTimestamp: 0, members: new Map(), currentAssignments: new Map(),
    targetAssignment: new Map(), regexes: new Map(),
  };
  const put = <K, V>(map: Map<K, V>, key: K, value: V | null): void => {
    if (value === null) map.delete(key);
    else map.set(key, value);
  };
  switch (r.kind) {
    case 'groupEpoch':
      g.groupEpoch = r.value!.epoch;
      g.metadataHash = r.value!.metadataHash;
      break;
    case 'member':
      put(g.members, r.memberId, r.value);
      break;
    case 'currentAssignment':
      put(g.currentAssignments, r.memberId, r.value);
      break;
    case 'targetMember':
      put(g.targetAssignment, r.memberId, r.value);
      break;
    case 'targetEpoch':
      g.assignmentEpoch = r.value?.assignmentEpoch ?? -1;
      g.assignmentTimestamp = r.value?.assignmentTimestamp ?? 0;
      break;
    case 'regex':
      put(g.regexes, r.regex, r.value && { topics: r.value.topics, timestamp: r.value.timestamp });
      break;
  }
  return g;
}

function parseRecord(key: Buffer, value: Buffer | null, logOffset: number): ParsedRecord | null {
  const k = decodeKey(key);
  if (k.kind === 'unknown') return decodeConsumerGroupRecord(key, value);
  if (k.kind === 'group') {
    let group: GroupSnapshot | null = null;
    if (value !== null) {
      const { version: _v, ...snapshot } = decodeGroupMetadataValue(value);
      group = snapshot;
    }
    return { kind: 'group', groupId: k.group, value: group };
  }
  let offset: OffsetAndMetadata | null = null;
  if (value !== null) {
    const v = decodeOffsetCommitValue(value);
    offset = { offset: v.offset, leaderEpoch: v.leaderEpoch, metadata: v.metadata, commitTimestamp: v.commitTimestamp, expireTimestamp: v.expireTimestamp };
  }
  return { kind: 'offset', groupId: k.group, topic: k.topic, partition: k.partition, value: offset, logOffset };
}

// ---------------------------------------------------------------------------------------------------------
// OffsetsLog
// ---------------------------------------------------------------------------------------------------------

export class OffsetsLog implements OffsetsStore {
  constructor(
    private readonly replicas: ReplicaManager,
    /** offsets.topic.num.partitions */
    readonly numPartitions: number,
    private readonly log?: Logger,
  ) {}

  /** Kafka's GroupCoordinatorService.partitionFor: Utils.abs(groupId.hashCode()) % numPartitions. */
  static partitionFor(groupId: string, numPartitions: number): number {
    return coordinatorPartitionFor(groupId, numPartitions);
  }

  partitionFor(groupId: string): number {
    return OffsetsLog.partitionFor(groupId, this.numPartitions);
  }

  /**
   * Creates __consumer_offsets with Kafka's configs unless it exists. The replication factor is capped
   * at the live brokers (offsets.topic.replication.factor defaults to 3; this is a one-broker cluster).
   * Concurrent calls share one creation and all return once its partitions are open.
   */
  static ensureTopic(controller: Controller, numPartitions: number, replicationFactor: number,
    segmentBytes = DEFAULT_OFFSETS_TOPIC_SEGMENT_BYTES): Promise<Outcome> {
    return controller.ensureInternalTopic(OFFSETS_TOPIC, numPartitions, replicationFactor, offsetsTopicConfigs(segmentBytes));
  }

  // ------------------------------------------------------------------------------------------- writes

  storeOffsets(groupId: string, offsets: TopicPartitionOffset[]): Promise<number> {
    if (offsets.length === 0) return Promise.resolve(ErrorCode.NONE);
    return this.append(groupId, offsets.map((o) => ({
      key: encodeOffsetCommitKey(groupId, o.topic, o.partition),
      value: encodeOffsetCommitValue(o),
    })), offsetCommitAppendError);
  }

  /** TxnOffsetCommit: one transactional batch of `producer`, pending until its transaction's marker. */
  storeTxnOffsets(groupId: string, producer: TxnProducer, offsets: TopicPartitionOffset[]): Promise<number> {
    if (offsets.length === 0) return Promise.resolve(ErrorCode.NONE);
    return this.append(groupId, offsets.map((o) => ({
      key: encodeOffsetCommitKey(groupId, o.topic, o.partition),
      value: encodeOffsetCommitValue(o),
    })), offsetCommitAppendError, producer);
  }

  storeGroup(groupId: string, group: GroupSnapshot): Promise<number> {
    return this.append(groupId, [{ key: encodeGroupMetadataKey(groupId), value: encodeGroupMetadataValue(group) }], groupMetadataAppendError);
  }

  /** A consumer group's records; their write errors as Kafka 4's runtime maps them. */
  storeConsumerGroup(groupId: string, records: ConsumerGroupRecord[]): Promise<number> {
    if (records.length === 0) return Promise.resolve(ErrorCode.NONE);
    return this.append(groupId, records.map(encodeConsumerGroupRecord), coordinatorAppendError);
  }

  /** Tombstones for the listed offsets, a consumer group's, then the group's (the order Kafka's cleanupGroupMetadata writes). */
  deleteGroup(groupId: string, offsetKeys: TopicPartitionKey[], consumerTombstones: ConsumerGroupRecord[] = []): Promise<number> {
    const records: BuildRecord[] = offsetKeys.map((k) => ({ key: encodeOffsetCommitKey(groupId, k.topic, k.partition), value: null }));
    records.push(...consumerTombstones.map(encodeConsumerGroupRecord));
    records.push({ key: encodeGroupMetadataKey(groupId), value: null });
    return this.append(groupId, records, deletionAppendError);
  }

  deleteOffsets(groupId: string, keys: TopicPartitionKey[]): Promise<number> {
    if (keys.length === 0) return Promise.resolve(ErrorCode.NONE);
    return this.append(groupId, keys.map((k) => ({ key: encodeOffsetCommitKey(groupId, k.topic, k.partition), value: null })), deletionAppendError);
  }

  /**
   * One batch on the group's partition (transactional when `producer` is given); it takes its place in
   * the partition's order synchronously, at call time.
   */
  private async append(groupId: string, records: BuildRecord[], mapError: (code: number) => number,
    producer?: TxnProducer): Promise<number> {
    const index = this.partitionFor(groupId);
    const partition = this.replicas.partition(OFFSETS_TOPIC, index);
    if (!partition) return mapError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    const result = await appendInternalRecords(this.replicas, partition, records, producer);
    if (result.errorCode !== ErrorCode.NONE) {
      this.log?.warn({ groupId, partition: index, errorCode: result.errorCode, reason: result.errorMessage },
        'writing to __consumer_offsets failed');
    }
    return mapError(result.errorCode);
  }

  // ------------------------------------------------------------------------------------------- loading

  /** One partition (what a coordinator loads when it becomes that partition's leader). */
  async loadPartition(index: number): Promise<LoadedGroup[]> {
    const state = new LoadState();
    const p = this.replicas.partition(OFFSETS_TOPIC, index);
    if (p) await this.replay(p, state);
    return state.result();
  }

  /** Throws StorageError when the log cannot be read. */
  private async replay(p: Partition, state: LoadState): Promise<void> {
    const end = await replayBatches(p.log, (bytes, b) => this.replayBatch(bytes, b, state, p.index));
    if (end < p.log.writtenEndOffset) {
      this.log?.error({ partition: p.index, offset: end }, 'unreadable batch in __consumer_offsets; stopped loading the partition there');
    }
  }

  private async replayBatch(bytes: Buffer, b: BatchInfo, state: LoadState, partition: number): Promise<void> {
    let records;
    try {
      if (b.isControl) {
        const marker = readEndTxnMarker(bytes);
        if (marker) state.endTransaction(b.producerId, marker.commit);
        return;
      }
      records = await decodeRecords(bytes);
    } catch (e) {
      this.log?.warn({ err: e, partition, baseOffset: b.baseOffset }, 'skipping an undecodable batch of __consumer_offsets');
      return;
    }
    for (const record of records) {
      if (record.key === null) {
        this.log?.warn({ partition, offset: record.offset }, 'skipping a record without a key in __consumer_offsets');
        continue;
      }
      let parsed: ParsedRecord | null;
      try {
        parsed = parseRecord(record.key, record.value, record.offset);
      } catch (e) {
        this.log?.warn({ err: e, partition, offset: record.offset }, 'skipping an undecodable record of __consumer_offsets');
        continue;
      }
      if (parsed !== null) state.apply(parsed, b.isTransactional ? b.producerId : null);
    }
  }
}
