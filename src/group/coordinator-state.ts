// What the two halves of the group coordinator share (the rebalance protocol in ./rebalance.ts,
// committed offsets in ./offsets.ts): the groups, their timers, the store they are written to, the
// partitions of __consumer_offsets this broker hosts (Kafka's CoordinatorRuntime contexts), the
// settings, and the checks both make before touching a group.
import type { Logger } from 'pino';
import { ErrorCode } from '../common/errors';
import { coordinatorPartitionFor } from '../cluster/coordinator-partition';
import type { Timer } from '../replica/delayed/timing-wheel';
import type { ConsumerGroup } from './consumer-group';
import type { ConsumerGroupRecord } from './consumer-records';
import type { ShareGroup } from './share-group';
import type { StreamsGroup } from './streams-group';
import { ClassicGroup, GroupState } from './group';
import type { OffsetsStore, TopicPartitionKey } from './store';
import { GroupTimers, groupTimersPrefix } from './timers';
import type { GroupMetrics } from '../metrics/state-instruments';

export interface GroupCoordinatorConfig {
  minSessionTimeoutMs: number;
  maxSessionTimeoutMs: number;
  maxSize: number;
  initialRebalanceDelayMs: number;
  offsetMetadataMaxBytes: number;
  offsetsRetentionMs: number;
  offsetsRetentionCheckIntervalMs: number;
  /** Consumer groups (KIP-848): group.consumer.session.timeout.ms, .heartbeat.interval.ms, .max.size, .assignors. */
  consumerSessionTimeoutMs: number;
  consumerHeartbeatIntervalMs: number;
  consumerMaxSize: number;
  consumerAssignors: readonly string[];
  /** group.consumer.migration.policy: disabled, downgrade, upgrade or bidirectional. */
  consumerMigrationPolicy: string;
  /** group.consumer.assignment.interval.ms: the least time between two target assignments of a group. */
  consumerAssignmentIntervalMs: number;
  /** Streams groups (KIP-1071): group.streams.session.timeout.ms, .heartbeat.interval.ms, .num.standby.replicas, .initial.rebalance.delay.ms. */
  streamsSessionTimeoutMs: number;
  streamsHeartbeatIntervalMs: number;
  streamsNumStandbyReplicas: number;
  streamsInitialRebalanceDelayMs: number;
  /** Share groups (KIP-932): group.share.session.timeout.ms, .heartbeat.interval.ms, .max.size, .assignment.interval.ms. */
  shareSessionTimeoutMs: number;
  shareHeartbeatIntervalMs: number;
  shareMaxSize: number;
  shareAssignmentIntervalMs: number;
}

/**
 * A partition of __consumer_offsets this broker leads (Kafka's CoordinatorContext). Each election
 * makes a new one, so a load or a write that outlives its partition's leadership can tell.
 */
export interface HostedPartition {
  readonly index: number;
  /** The leader epoch of the election (a later one while hosted raises it). */
  epoch: number;
  /** Loading: its groups are being read back from the log; active: they are served. */
  status: 'loading' | 'active';
  /** Transactions that ended while it loaded, applied once it is loaded. */
  readonly endedWhileLoading: { producerId: number; commit: boolean }[];
}

export class CoordinatorState {
  /** The groups of the active hosted partitions. */
  readonly groups = new Map<string, ClassicGroup>();
  /**
   * The consumer groups (KIP-848) of the active hosted partitions. They share the id space with
   * the classic groups: an id here may also be in `groups`, as an Empty classic group that only
   * holds the committed offsets.
   */
  readonly consumerGroups = new Map<string, ConsumerGroup>();
  /** The streams groups (KIP-1071), in the same id space, their committed offsets held likewise by an Empty classic group. */
  readonly streamsGroups = new Map<string, StreamsGroup>();
  /** The share groups (KIP-932), in the same id space; they commit no offsets (their state is the share coordinator's). */
  readonly shareGroups = new Map<string, ShareGroup>();
  readonly timers: GroupTimers;
  readonly hosted = new Map<number, HostedPartition>();
  closed = false;
  /** __consumer_offsets once known (GroupCoordinator.useOffsetsTopic); null: not yet, or deleted. */
  store: OffsetsStore | null = null;
  /** The partitions of __consumer_offsets, over which groups are spread. */
  numPartitions = 1;

  constructor(
    readonly config: GroupCoordinatorConfig,
    timer: Timer,
    readonly log: Logger,
    /** Wall clock (commit timestamps, state timestamps, retention). */
    readonly now: () => number,
    /** Where completed rebalances are counted (the broker's metrics). */
    readonly metrics?: GroupMetrics,
  ) {
    this.timers = new GroupTimers(timer);
  }

  /** The partition of __consumer_offsets that holds the group (Kafka's GroupCoordinatorService.partitionFor). */
  partitionFor(groupId: string): number {
    return coordinatorPartitionFor(groupId, this.numPartitions);
  }

  /**
   * Whether this broker serves the group now: NOT_COORDINATOR unless it hosts the group's partition,
   * COORDINATOR_LOAD_IN_PROGRESS while that partition loads (and before the topic is known at all).
   */
  validateStatus(groupId: string, emptyIdAllowed: boolean): number {
    if (!emptyIdAllowed && groupId === '') return ErrorCode.INVALID_GROUP_ID;
    if (this.closed) return ErrorCode.COORDINATOR_NOT_AVAILABLE;
    if (this.store === null) return ErrorCode.COORDINATOR_LOAD_IN_PROGRESS;
    const partition = this.hosted.get(this.partitionFor(groupId));
    if (!partition) return ErrorCode.NOT_COORDINATOR;
    return partition.status === 'loading' ? ErrorCode.COORDINATOR_LOAD_IN_PROGRESS : ErrorCode.NONE;
  }

  /** The consumer or streams group of the id: a group whose members commit and fetch offsets with member epochs. */
  modernGroup(groupId: string): ConsumerGroup | StreamsGroup | undefined {
    return this.consumerGroups.get(groupId) ?? this.streamsGroups.get(groupId);
  }

  validateMember(group: ClassicGroup, memberId: string, groupInstanceId: string | null): number {
    if (groupInstanceId !== null) {
      const current = group.staticMemberId(groupInstanceId);
      if (current === undefined) return ErrorCode.UNKNOWN_MEMBER_ID;
      if (current !== memberId) return ErrorCode.FENCED_INSTANCE_ID;
    }
    return group.has(memberId) ? ErrorCode.NONE : ErrorCode.UNKNOWN_MEMBER_ID;
  }

  createGroup(groupId: string): ClassicGroup {
    const group = new ClassicGroup(groupId, GroupState.Empty, this.now);
    this.groups.set(groupId, group);
    return group;
  }

  /**
   * The group dies at once (joins meanwhile get COORDINATOR_NOT_AVAILABLE and retry); once its
   * tombstones are written it is forgotten, and the next join starts a new one.
   */
  async removeGroup(group: ClassicGroup, offsetKeys: TopicPartitionKey[]): Promise<number> {
    group.transitionTo(GroupState.Dead);
    this.timers.cancelAll(groupTimersPrefix(group.groupId));
    // An empty consumer group of the id goes with the offsets the classic group held for it.
    const consumerTombstones = this.consumerGroups.get(group.groupId)?.members.size === 0 ? this.dropConsumerGroup(group.groupId) : [];
    if (this.streamsGroups.get(group.groupId)?.members.size === 0) this.dropStreamsGroup(group.groupId);
    const code = await this.write(group.groupId, (store) => store.deleteGroup(group.groupId, offsetKeys, consumerTombstones));
    if (this.groups.get(group.groupId) === group) this.groups.delete(group.groupId);
    return code;
  }

  /**
   * The consumer group of the id goes at once (its committed offsets, in the classic group of the
   * id, stay); the tombstones of its records, for the caller to write.
   */
  dropConsumerGroup(groupId: string): ConsumerGroupRecord[] {
    const group = this.consumerGroups.get(groupId);
    if (!group) return [];
    group.dead = true;
    this.timers.cancelAll(groupTimersPrefix(groupId));
    this.consumerGroups.delete(groupId);
    return group.tombstones();
  }

  /** The streams group of the id goes at once (its committed offsets, in the classic group of the id, stay). */
  dropStreamsGroup(groupId: string): void {
    const group = this.streamsGroups.get(groupId);
    if (!group) return;
    group.dead = true;
    this.timers.cancelAll(groupTimersPrefix(groupId));
    this.streamsGroups.delete(groupId);
  }

  /** The share group of the id goes at once. */
  dropShareGroup(groupId: string): void {
    const group = this.shareGroups.get(groupId);
    if (!group) return;
    group.dead = true;
    this.timers.cancelAll(groupTimersPrefix(groupId));
    this.shareGroups.delete(groupId);
  }

  /**
   * A write of the group's to the store: a thrown error becomes UNKNOWN_SERVER_ERROR, and a write
   * whose partition resigned meanwhile (even if elected again since) NOT_COORDINATOR, as Kafka's
   * runtime fails the writes of an unloaded partition, so that callers change nothing in memory.
   */
  async write(groupId: string, op: (store: OffsetsStore) => Promise<number>): Promise<number> {
    const partition = this.hosted.get(this.partitionFor(groupId));
    if (!partition || this.store === null) return ErrorCode.NOT_COORDINATOR;
    let code: number;
    try {
      code = await op(this.store);
    } catch (err) {
      this.log.error({ err }, 'writing to __consumer_offsets failed');
      code = ErrorCode.UNKNOWN_SERVER_ERROR;
    }
    return this.hosted.get(partition.index) === partition ? code : ErrorCode.NOT_COORDINATOR;
  }
}
