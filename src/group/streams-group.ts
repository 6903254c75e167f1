// One streams group (KIP-1071, Kafka's StreamsGroup): its topology and its configuration against
// the topics, its members, the group epoch (bumped when membership, a member's metadata, the
// topology or its topics change), the target assignment and its epoch, and who owns which task
// now. Like ConsumerGroup it does no I/O and holds no timers.
import { ErrorCode } from '../common/errors';
import { StreamsMemberState, type StreamsGroupMember, type TasksTuple } from './streams-member';
import type { ConfiguredTopology, StreamsTopology } from './streams-topology';

/** Kafka's StreamsGroupState, as StreamsGroupDescribe, ListGroups and DescribeGroups spell it. */
export enum StreamsGroupState {
  Empty = 'Empty',
  /** The topology cannot be served yet (missing source or internal topics). */
  NotReady = 'NotReady',
  Assigning = 'Assigning',
  Reconciling = 'Reconciling',
  Stable = 'Stable',
  Dead = 'Dead',
}

const taskKey = (subtopologyId: string, partition: number): string => JSON.stringify([subtopologyId, partition]);

export class StreamsGroup {
  groupEpoch = 0;
  assignmentEpoch = 0;
  topology: StreamsTopology | null = null;
  configured: ConfiguredTopology | null = null;
  /** A hash of the topics the configuration was computed from (their names and partition counts). */
  metadataHash = '';
  readonly members = new Map<string, StreamsGroupMember>();
  private readonly staticMembers = new Map<string, string>();
  readonly targetAssignment = new Map<string, TasksTuple>();
  /** Active tasks -> their owner and its process. */
  private readonly activeOwners = new Map<string, { memberId: string; processId: string }>();
  /** Standby and warm-up tasks -> the processes holding them, with how many of their members do. */
  private readonly standbyHolders = new Map<string, Map<string, number>>();
  /** Bumped whenever the tasks of any member change, so members learn others' endpoints again. */
  endpointInformationEpoch = 0;
  /** Until when (wall clock ms) a new group's first assignment of tasks waits. */
  assignmentDelayedUntilMs = 0;
  /** A member asked for the whole application to shut down (until the group is empty). */
  shutdownRequested = false;
  dead = false;

  constructor(readonly groupId: string) {}

  get state(): StreamsGroupState {
    if (this.dead) return StreamsGroupState.Dead;
    if (this.members.size === 0) return StreamsGroupState.Empty;
    if (this.configured?.tasks == null) return StreamsGroupState.NotReady;
    if (this.groupEpoch > this.assignmentEpoch) return StreamsGroupState.Assigning;
    for (const m of this.members.values()) {
      if (m.state !== StreamsMemberState.Stable || m.memberEpoch !== this.assignmentEpoch) return StreamsGroupState.Reconciling;
    }
    return StreamsGroupState.Stable;
  }

  staticMember(instanceId: string): StreamsGroupMember | undefined {
    const memberId = this.staticMembers.get(instanceId);
    return memberId === undefined ? undefined : this.members.get(memberId);
  }

  updateMember(member: StreamsGroupMember): void {
    const old = this.members.get(member.memberId);
    if (old) this.release(old);
    this.members.set(member.memberId, member);
    if (member.instanceId !== null) this.staticMembers.set(member.instanceId, member.memberId);
    this.own(member);
  }

  removeMember(memberId: string): void {
    const old = this.members.get(memberId);
    if (!old) return;
    this.release(old);
    this.members.delete(memberId);
    this.targetAssignment.delete(memberId);
    if (old.instanceId !== null && this.staticMembers.get(old.instanceId) === memberId) this.staticMembers.delete(old.instanceId);
  }

  activeOwnerProcess(subtopologyId: string, partition: number): string | undefined {
    return this.activeOwners.get(taskKey(subtopologyId, partition))?.processId;
  }

  standbyOrWarmupProcesses(subtopologyId: string, partition: number): ReadonlySet<string> {
    return new Set(this.standbyHolders.get(taskKey(subtopologyId, partition))?.keys() ?? []);
  }

  /** Kafka's StreamsGroup.validateOffsetCommit (as ConsumerGroup's: a member at its epoch, OffsetCommit v9+). */
  validateOffsetCommit(memberId: string, groupInstanceId: string | null, memberEpoch: number, isTransactional: boolean, apiVersion = 0): number {
    if (memberEpoch < 0 && this.members.size === 0) return ErrorCode.NONE;
    if (isTransactional && memberEpoch === -1 && memberId === '' && groupInstanceId === null) return ErrorCode.NONE;
    const member = this.members.get(memberId);
    if (!member) return ErrorCode.UNKNOWN_MEMBER_ID;
    if (!isTransactional && apiVersion < 9) return ErrorCode.UNSUPPORTED_VERSION;
    return memberEpoch === member.memberEpoch ? ErrorCode.NONE : ErrorCode.STALE_MEMBER_EPOCH;
  }

  validateOffsetFetch(memberId: string | null, memberEpoch: number): number {
    if (memberId === null && memberEpoch < 0) return ErrorCode.NONE;
    const member = memberId === null ? undefined : this.members.get(memberId);
    if (!member) return ErrorCode.UNKNOWN_MEMBER_ID;
    return memberEpoch === member.memberEpoch ? ErrorCode.NONE : ErrorCode.STALE_MEMBER_EPOCH;
  }

  /** Whether the topology reads the topic (its committed offsets do not expire while the group lives). */
  isSubscribedToTopic(topic: string): boolean {
    return this.topology?.subtopologies.some((s) => s.sourceTopics.includes(topic) || s.repartitionSourceTopics.some((t) => t.name === topic)) ?? false;
  }

  private own(m: StreamsGroupMember): void {
    for (const tasks of [m.assigned, m.pendingRevocation]) {
      for (const [s, ps] of tasks.active) for (const p of ps) this.activeOwners.set(taskKey(s, p), { memberId: m.memberId, processId: m.processId });
      for (const set of [tasks.standby, tasks.warmup]) {
        for (const [s, ps] of set) {
          for (const p of ps) {
            const holders = this.standbyHolders.get(taskKey(s, p)) ?? new Map<string, number>();
            holders.set(m.processId, (holders.get(m.processId) ?? 0) + 1);
            this.standbyHolders.set(taskKey(s, p), holders);
          }
        }
      }
    }
  }

  private release(m: StreamsGroupMember): void {
    for (const tasks of [m.assigned, m.pendingRevocation]) {
      for (const [s, ps] of tasks.active) {
        for (const p of ps) if (this.activeOwners.get(taskKey(s, p))?.memberId === m.memberId) this.activeOwners.delete(taskKey(s, p));
      }
      for (const set of [tasks.standby, tasks.warmup]) {
        for (const [s, ps] of set) {
          for (const p of ps) {
            const holders = this.standbyHolders.get(taskKey(s, p));
            const n = holders?.get(m.processId) ?? 0;
            if (n <= 1) holders?.delete(m.processId);
            else holders!.set(m.processId, n - 1);
          }
        }
      }
    }
  }
}
