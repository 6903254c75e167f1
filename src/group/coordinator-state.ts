// What the two halves of the group coordinator share (the rebalance protocol in ./rebalance.ts,
// committed offsets in ./offsets.ts): the groups, their timers, the store they are written to, the
// coordinator's status and settings, and the checks both make before touching a group.
import type { Logger } from 'pino';
import { ErrorCode } from '../common/errors';
import { coordinatorPartitionFor } from '../cluster/coordinator-partition';
import type { Timer } from '../replica/delayed/timing-wheel';
import { ClassicGroup, GroupState } from './group';
import type { OffsetsStore, TopicPartitionKey } from './store';
import { GroupTimers, groupTimersPrefix } from './timers';

export interface GroupCoordinatorConfig {
  minSessionTimeoutMs: number;
  maxSessionTimeoutMs: number;
  maxSize: number;
  initialRebalanceDelayMs: number;
  offsetMetadataMaxBytes: number;
  offsetsRetentionMs: number;
  offsetsRetentionCheckIntervalMs: number;
}

export type CoordinatorStatus = 'loading' | 'active' | 'closed';

export class CoordinatorState {
  readonly groups = new Map<string, ClassicGroup>();
  readonly timers: GroupTimers;
  status: CoordinatorStatus = 'loading';
  /** Set by the coordinator's load(): nothing is written before the groups are read back. */
  store!: OffsetsStore;
  /** The partitions of __consumer_offsets, over which groups are spread. */
  numPartitions = 1;

  constructor(
    readonly config: GroupCoordinatorConfig,
    timer: Timer,
    readonly log: Logger,
    /** Wall clock (commit timestamps, state timestamps, retention). */
    readonly now: () => number,
  ) {
    this.timers = new GroupTimers(timer);
  }

  /** The partition of __consumer_offsets that holds the group (Kafka's GroupCoordinatorService.partitionFor). */
  partitionFor(groupId: string): number {
    return coordinatorPartitionFor(groupId, this.numPartitions);
  }

  validateStatus(groupId: string, emptyIdAllowed: boolean): number {
    if (!emptyIdAllowed && groupId === '') return ErrorCode.INVALID_GROUP_ID;
    if (this.status === 'loading') return ErrorCode.COORDINATOR_LOAD_IN_PROGRESS;
    if (this.status === 'closed') return ErrorCode.COORDINATOR_NOT_AVAILABLE;
    return ErrorCode.NONE;
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
    const code = await this.write(() => this.store.deleteGroup(group.groupId, offsetKeys));
    if (this.groups.get(group.groupId) === group) this.groups.delete(group.groupId);
    return code;
  }

  /** A store call whose failure (a thrown error) becomes UNKNOWN_SERVER_ERROR. */
  async write(op: () => Promise<number>): Promise<number> {
    try {
      return await op();
    } catch (err) {
      this.log.error({ err }, 'writing to __consumer_offsets failed');
      return ErrorCode.UNKNOWN_SERVER_ERROR;
    }
  }
}
