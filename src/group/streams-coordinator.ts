// Streams groups (KIP-1071) as Kafka 4.4's GroupMetadataManager serves them: StreamsGroupHeartbeat
// (join with epoch 0 and the topology, heartbeat, leave with -1, a static member's temporary leave
// with -2) and StreamsGroupDescribe. A heartbeat is one synchronous step, so no other request
// interleaves:
// 1. the member is created or updated; a new topology (a higher topology epoch), a change of the
//    member's metadata or of the topology's topics bumps the group epoch;
// 2. the topology is configured against the topics (./streams-topology.ts): missing internal
//    topics are created through the Controller (as Kafka's broker does) and reported as a status
//    until they exist, missing source topics too; meanwhile members get no tasks;
// 3. a group epoch past the target assignment's computes a new one (./streams-assignor.ts);
// 4. the member is reconciled towards its target (./streams-reconciliation.ts).
// Timers: each member's session (group.streams.session.timeout.ms, or the group's
// streams.session.timeout.ms) and, while it must revoke tasks, its rebalance timeout; either fences it.
// Streams groups are kept in memory: they are not written to __consumer_offsets (their committed
// offsets are, in the Empty classic group of their id, as a consumer group's).
import { ErrorCode, quoteInMessage } from '../common/errors';
import type { CoordinatorState } from './coordinator-state';
import { GroupError, unknownMemberError } from './group-error';
import { groupOverride, type ConsumerGroupTopics, type GroupConfigLookup } from './consumer-coordinator';
import { GroupState } from './group';
import { assignTasks } from './streams-assignor';
import { StreamsGroup } from './streams-group';
import {
  JOIN_EPOCH, LEAVE_EPOCH, NO_TASKS, STATIC_LEAVE_EPOCH, StreamsMemberState, isSubsetOf, newStreamsMember,
  sameMemberMetadata, sameTasks, taskSetFromWire, taskSetToWire, type Endpoint, type StreamsGroupMember, type TaskSet, type TasksTuple,
} from './streams-member';
import { reconcileStreamsMember } from './streams-reconciliation';
import {
  StreamsStatus, configureTopology, sourceTopicsOf, type InternalTopicToCreate, type StatusEntry, type StreamsTopology,
} from './streams-topology';
import { streamsRebalanceKey, streamsSessionKey } from './timers';

export interface StreamsGroupConfig {
  /** group.streams.session.timeout.ms */
  sessionTimeoutMs: number;
  /** group.streams.heartbeat.interval.ms */
  heartbeatIntervalMs: number;
  /** group.streams.num.standby.replicas */
  numStandbyReplicas: number;
  /** group.streams.initial.rebalance.delay.ms: how long a new group waits before its first assignment of tasks. */
  initialRebalanceDelayMs: number;
}

/** Creates internal topics (repartition, changelog) of a streams group; failures are only logged, the next heartbeat reports what is still missing. */
export type InternalTopicCreator = (topics: readonly InternalTopicToCreate[]) => Promise<void>;

type WireTasks = { subtopologyId: string; partitions: number[] }[];

export interface StreamsHeartbeatRequest {
  groupId: string;
  memberId: string;
  memberEpoch: number;
  endpointInformationEpoch: number;
  instanceId: string | null;
  rackId: string | null;
  /** -1: unchanged. */
  rebalanceTimeoutMs: number;
  /** Only when joining. */
  topology: StreamsTopology | null;
  sourceTopicRegexes: string[];
  /** null: unchanged since the last heartbeat. */
  activeTasks: WireTasks | null;
  standbyTasks: WireTasks | null;
  warmupTasks: WireTasks | null;
  processId: string | null;
  userEndpoint: Endpoint | null;
  clientTags: { key: string; value: string }[] | null;
  shutdownApplication: boolean;
  clientId: string;
  clientHost: string;
}

export interface EndpointPartitions {
  userEndpoint: Endpoint;
  activePartitions: { topic: string; partitions: number[] }[];
  standbyPartitions: { topic: string; partitions: number[] }[];
}

export interface StreamsHeartbeatResult {
  errorCode: number;
  errorMessage: string | null;
  memberId: string;
  memberEpoch: number;
  heartbeatIntervalMs: number;
  acceptableRecoveryLag: number;
  taskOffsetIntervalMs: number;
  status: StatusEntry[];
  /** Sent when joining, when the member's tasks changed, or when what it owns is not what it has; else null. */
  activeTasks: WireTasks | null;
  standbyTasks: WireTasks | null;
  warmupTasks: WireTasks | null;
  endpointInformationEpoch: number;
  partitionsByUserEndpoint: EndpointPartitions[] | null;
}

export interface StreamsGroupDescription {
  errorCode: number;
  errorMessage: string | null;
  groupId: string;
  groupState: string;
  groupEpoch: number;
  assignmentEpoch: number;
  topology: StreamsTopology | null;
  members: {
    memberId: string; memberEpoch: number; instanceId: string | null; rackId: string | null; clientId: string; clientHost: string;
    topologyEpoch: number; processId: string; userEndpoint: Endpoint | null; clientTags: { key: string; value: string }[];
    assignment: { activeTasks: WireTasks; standbyTasks: WireTasks; warmupTasks: WireTasks };
    targetAssignment: { activeTasks: WireTasks; standbyTasks: WireTasks; warmupTasks: WireTasks };
  }[];
}

/** Kafka's defaults that Kafka Streams gets in each answer (it has no broker config for them either). */
const ACCEPTABLE_RECOVERY_LAG = 10_000;
const TASK_OFFSET_INTERVAL_MS = 60_000;
const SHUTDOWN_DETAIL = 'A KafkaStreams instance encountered a fatal error and requested a shutdown for the entire application.';

/** An answer's defaults (Kafka's response data as constructed): errors and leaves carry only these. */
const NOTHING: StreamsHeartbeatResult = {
  errorCode: ErrorCode.NONE, errorMessage: null, memberId: '', memberEpoch: 0, heartbeatIntervalMs: 0, acceptableRecoveryLag: -1,
  taskOffsetIntervalMs: 0, status: [], activeTasks: null, standbyTasks: null, warmupTasks: null, endpointInformationEpoch: 0,
  partitionsByUserEndpoint: null,
};
const ASSIGNMENT_DELAYED_DETAIL = 'Assignment delayed due to the configured initial rebalance delay.';

export class StreamsGroupManager {
  constructor(
    private readonly state: CoordinatorState,
    private readonly config: StreamsGroupConfig,
    private readonly topics: ConsumerGroupTopics,
    private readonly createInternalTopics: InternalTopicCreator,
    private readonly groupConfig: GroupConfigLookup = () => undefined,
  ) {}

  heartbeat(req: StreamsHeartbeatRequest): StreamsHeartbeatResult {
    try {
      if (this.state.closed) throw new GroupError(ErrorCode.COORDINATOR_NOT_AVAILABLE);
      validate(req);
      const statusError = this.state.validateStatus(req.groupId, false);
      if (statusError) throw new GroupError(statusError);
      return req.memberEpoch === LEAVE_EPOCH || req.memberEpoch === STATIC_LEAVE_EPOCH ? this.leave(req) : this.memberHeartbeat(req);
    } catch (err) {
      if (!(err instanceof GroupError)) throw err;
      return { ...NOTHING, errorCode: err.code, errorMessage: err.message || null };
    }
  }

  private memberHeartbeat(req: StreamsHeartbeatRequest): StreamsHeartbeatResult {
    const joining = req.memberEpoch === JOIN_EPOCH;
    const group = this.getOrMaybeCreateGroup(req.groupId, joining);
    const { member, replaced } = this.memberOf(group, req, joining);
    const owned: TasksTuple | null = req.activeTasks === null ? null
      : { active: taskSetFromWire(req.activeTasks), standby: taskSetFromWire(req.standbyTasks ?? []), warmup: taskSetFromWire(req.warmupTasks ?? []) };
    if (!joining) checkMemberEpoch(member, req.memberEpoch, owned);

    const statuses: StatusEntry[] = [];
    // 1. The topology: a joining member with a newer one replaces the group's.
    let topology = group.topology;
    if (joining && req.topology !== null) {
      if (topology === null || req.topology.epoch > topology.epoch) topology = req.topology;
      else if (req.topology.epoch < topology.epoch) {
        statuses.push({ statusCode: StreamsStatus.StaleTopology, statusDetail: `The member's topology epoch ${req.topology.epoch} is behind the group's topology epoch ${topology.epoch}.` });
      }
    }
    const updated: StreamsGroupMember = {
      ...member,
      instanceId: req.instanceId ?? member.instanceId,
      rackId: req.rackId ?? member.rackId,
      rebalanceTimeoutMs: req.rebalanceTimeoutMs === -1 ? member.rebalanceTimeoutMs : req.rebalanceTimeoutMs,
      topologyEpoch: joining && req.topology !== null ? req.topology.epoch : member.topologyEpoch,
      processId: req.processId ?? member.processId,
      userEndpoint: req.userEndpoint ?? member.userEndpoint,
      clientTags: req.clientTags === null ? member.clientTags : [...req.clientTags].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)),
      clientId: req.clientId,
      clientHost: req.clientHost,
    };

    // 2. The topology against the topics as they are now.
    const metadataHash = topology === null ? '' : this.metadataHash(topology);
    const topologyChanged = topology !== group.topology || metadataHash !== group.metadataHash;
    const configured = topology === null ? null : topologyChanged || group.configured === null
      ? configureTopology(topology, (t) => this.topics.topic(t)?.partitions.length) : group.configured;
    // A new group's first assignment of tasks waits for the initial rebalance delay.
    const isNew = !this.state.streamsGroups.has(group.groupId);
    const delayedUntilMs = isNew ? this.state.now() + this.initialRebalanceDelayMs(group.groupId) : group.assignmentDelayedUntilMs;
    const delayed = this.state.now() < delayedUntilMs;
    const bumpEpoch = group.groupEpoch === 0 || replaced !== undefined || !group.members.has(updated.memberId) ||
      !sameMemberMetadata(member, updated) || topologyChanged;
    let groupEpoch = bumpEpoch ? group.groupEpoch + 1 : group.groupEpoch;

    // 3. The target assignment, new if the group epoch moved past it (no tasks while the topology is
    // not ready). While delayed, a new group's first target gives no tasks and the group epoch moves
    // past it, for the real one to be computed once the delay is over; later ones wait.
    const members = new Map(group.members);
    if (replaced) members.delete(replaced.memberId);
    members.set(updated.memberId, updated);
    let targetAssignment: Map<string, TasksTuple> | null = null;
    if (groupEpoch > group.assignmentEpoch && !(delayed && group.assignmentEpoch > 0)) {
      const previous = new Map(group.targetAssignment);
      if (replaced) previous.set(updated.memberId, previous.get(replaced.memberId) ?? NO_TASKS);
      targetAssignment = delayed
        ? new Map([...members.keys()].map((id) => [id, NO_TASKS]))
        : assignTasks({
          members: new Map([...members].map(([id, m]) => [id, { processId: m.processId, previous: previous.get(id) ?? NO_TASKS }])),
          subtopologies: configured?.tasks ?? new Map(),
          numStandbyReplicas: this.numStandbyReplicas(group.groupId),
        });
    }
    const targetEpoch = targetAssignment ? groupEpoch : group.assignmentEpoch;
    if (targetAssignment && delayed) groupEpoch++;
    const target = (targetAssignment ?? group.targetAssignment).get(updated.memberId) ?? NO_TASKS;

    // 4. The member towards its target.
    const reconciled = reconcileStreamsMember(updated, {
      epoch: targetEpoch, tasks: target, owned,
      activeOwnerProcess: (s, p) => group.activeOwnerProcess(s, p),
      standbyOrWarmupProcesses: (s, p) => group.standbyOrWarmupProcesses(s, p),
    });

    // Everything checked: the group changes in one go.
    if (!this.state.streamsGroups.has(group.groupId)) this.state.streamsGroups.set(group.groupId, group);
    group.groupEpoch = groupEpoch;
    group.assignmentDelayedUntilMs = delayedUntilMs;
    group.topology = topology;
    group.configured = configured;
    group.metadataHash = metadataHash;
    if (replaced) {
      group.removeMember(replaced.memberId);
      this.cancelTimers(group.groupId, replaced.memberId);
    }
    if (targetAssignment) {
      group.targetAssignment.clear();
      for (const [id, tasks] of targetAssignment) group.targetAssignment.set(id, tasks);
      group.assignmentEpoch = targetEpoch;
    }
    const tasksChanged = !sameTasks(member.assigned, reconciled.assigned);
    // Members learn again where tasks are when a member with an endpoint changed its tasks or its endpoint.
    const endpointChanged = member.userEndpoint?.host !== reconciled.userEndpoint?.host || member.userEndpoint?.port !== reconciled.userEndpoint?.port;
    if ((reconciled.userEndpoint !== null && tasksChanged) || endpointChanged) group.endpointInformationEpoch++;
    group.updateMember(reconciled);
    if (req.shutdownApplication) group.shutdownRequested = true;
    if (configured && configured.internalTopicsToCreate.length > 0) this.createTopics(group.groupId, configured.internalTopicsToCreate);
    this.scheduleRebalanceTimeout(group, reconciled);
    this.scheduleSessionTimeout(group.groupId, reconciled.memberId);

    if (delayed && group.groupEpoch > group.assignmentEpoch) statuses.push({ statusCode: StreamsStatus.AssignmentDelayed, statusDetail: ASSIGNMENT_DELAYED_DETAIL });
    statuses.push(...(configured?.statuses ?? []));
    if (group.shutdownRequested) statuses.push({ statusCode: StreamsStatus.ShutdownApplication, statusDetail: SHUTDOWN_DETAIL });
    const sendTasks = joining || tasksChanged || (owned !== null && !sameTasks(owned, reconciled.assigned));
    const sendEndpoints = req.endpointInformationEpoch < group.endpointInformationEpoch;
    return {
      errorCode: ErrorCode.NONE, errorMessage: null, memberId: reconciled.memberId, memberEpoch: reconciled.memberEpoch,
      heartbeatIntervalMs: this.heartbeatIntervalMs(group.groupId), acceptableRecoveryLag: ACCEPTABLE_RECOVERY_LAG,
      taskOffsetIntervalMs: TASK_OFFSET_INTERVAL_MS, status: statuses,
      activeTasks: sendTasks ? taskSetToWire(reconciled.assigned.active) : null,
      standbyTasks: sendTasks ? taskSetToWire(reconciled.assigned.standby) : null,
      warmupTasks: sendTasks ? taskSetToWire(reconciled.assigned.warmup) : null,
      endpointInformationEpoch: group.endpointInformationEpoch,
      partitionsByUserEndpoint: sendEndpoints ? this.endpoints(group) : null,
    };
  }

  /** Kafka's getOrMaybeCreateStreamsGroup: the id of a consumer group or of a live classic group is not a streams group. */
  private getOrMaybeCreateGroup(groupId: string, create: boolean): StreamsGroup {
    const group = this.state.streamsGroups.get(groupId);
    if (group) return group;
    const classic = this.state.groups.get(groupId);
    const otherKind = this.state.consumerGroups.has(groupId) || this.state.shareGroups.has(groupId) || (classic !== undefined && !classic.is(GroupState.Dead) && !classic.is(GroupState.Empty));
    if (otherKind) throw new GroupError(ErrorCode.GROUP_ID_NOT_FOUND, `Group ${quoteInMessage(groupId)} is not a streams group.`);
    if (!create) throw new GroupError(ErrorCode.GROUP_ID_NOT_FOUND, `Streams group ${quoteInMessage(groupId)} not found.`);
    return new StreamsGroup(groupId);
  }

  /** The member as the group knows it (new when joining); a static member joining under a new id replaces the one of its instance id. */
  private memberOf(group: StreamsGroup, req: StreamsHeartbeatRequest, joining: boolean): { member: StreamsGroupMember; replaced?: StreamsGroupMember } {
    const existing = group.members.get(req.memberId);
    if (req.instanceId !== null && joining) {
      const previous = group.staticMember(req.instanceId);
      if (previous && previous.memberId !== req.memberId) {
        if (previous.memberEpoch !== STATIC_LEAVE_EPOCH) {
          throw new GroupError(ErrorCode.UNRELEASED_INSTANCE_ID,
            `Static member ${quoteInMessage(previous.memberId)} with instance id ${quoteInMessage(req.instanceId)} is not released yet.`);
        }
        return { member: { ...previous, memberId: req.memberId, memberEpoch: JOIN_EPOCH, previousMemberEpoch: JOIN_EPOCH }, replaced: previous };
      }
    }
    if (existing) return { member: existing };
    if (!joining) {
      throw unknownMemberError(group.groupId, req.memberId);
    }
    return { member: newStreamsMember(req.memberId) };
  }

  /** The topology's topics as they are now: what its configuration depends on. */
  private metadataHash(topology: StreamsTopology): string {
    const names = new Set<string>();
    for (const s of topology.subtopologies) {
      for (const t of [...s.sourceTopics, ...s.repartitionSourceTopics.map((r) => r.name), ...s.stateChangelogTopics.map((c) => c.name)]) names.add(t);
    }
    return [...names].sort().map((t) => `${t}:${this.topics.topic(t)?.partitions.length ?? -1}`).join(',');
  }

  private createTopics(groupId: string, topics: readonly InternalTopicToCreate[]): void {
    void this.createInternalTopics(topics).catch((err: unknown) => {
      this.state.log.warn({ err, groupId }, 'could not create the internal topics of a streams group');
    });
  }

  /** One entry per member with an endpoint: the source partitions of its active and of its standby tasks. */
  private endpoints(group: StreamsGroup): EndpointPartitions[] {
    const subtopologies = new Map((group.topology?.subtopologies ?? []).map((s) => [s.subtopologyId, sourceTopicsOf(s)]));
    const partitions = (tasks: TaskSet[]) => {
      const byTopic = new Map<string, Set<number>>();
      for (const set of tasks) {
        for (const [s, ps] of set) for (const topic of subtopologies.get(s) ?? []) for (const p of ps) byTopic.set(topic, (byTopic.get(topic) ?? new Set()).add(p));
      }
      return [...byTopic].sort(([a], [b]) => (a < b ? -1 : 1)).map(([topic, ps]) => ({ topic, partitions: [...ps].sort((x, y) => x - y) }));
    };
    return [...group.members.values()].filter((m) => m.userEndpoint !== null).map((m) => ({
      userEndpoint: m.userEndpoint!,
      activePartitions: partitions([m.assigned.active]),
      standbyPartitions: partitions([m.assigned.standby, m.assigned.warmup]),
    }));
  }

  // ================================================================= leaving and fencing

  private leave(req: StreamsHeartbeatRequest): StreamsHeartbeatResult {
    const group = this.state.streamsGroups.get(req.groupId);
    if (!group) throw new GroupError(ErrorCode.GROUP_ID_NOT_FOUND, `Streams group ${quoteInMessage(req.groupId)} not found.`);
    const member = group.members.get(req.memberId);
    if (!member) {
      throw unknownMemberError(group.groupId, req.memberId);
    }
    if (req.memberEpoch === STATIC_LEAVE_EPOCH) {
      // Gone for a while: its instance id stays, for a replacement to take over its tasks.
      group.updateMember({ ...member, memberEpoch: STATIC_LEAVE_EPOCH, pendingRevocation: NO_TASKS });
      this.state.timers.cancel(streamsRebalanceKey(group.groupId, member.memberId));
    } else {
      this.fence(group, member);
    }
    return { ...NOTHING, memberId: req.memberId, memberEpoch: req.memberEpoch };
  }

  /** The member leaves the group: the group epoch is bumped, for a new target assignment. */
  private fence(group: StreamsGroup, member: StreamsGroupMember): void {
    group.removeMember(member.memberId);
    this.cancelTimers(group.groupId, member.memberId);
    group.groupEpoch++;
    if (member.userEndpoint !== null) group.endpointInformationEpoch++;
    if (group.members.size === 0) group.shutdownRequested = false;
  }

  private fenceOnTimeout(groupId: string, memberId: string, memberEpoch: number | null): void {
    const group = this.state.streamsGroups.get(groupId);
    const member = group?.members.get(memberId);
    if (!group || !member || (memberEpoch !== null && member.memberEpoch !== memberEpoch)) return;
    this.fence(group, member);
  }

  private scheduleSessionTimeout(groupId: string, memberId: string): void {
    this.state.timers.schedule(streamsSessionKey(groupId, memberId), this.sessionTimeoutMs(groupId), () => this.fenceOnTimeout(groupId, memberId, null));
  }

  /** A member that must revoke tasks has its rebalance timeout to do so, or is fenced. */
  private scheduleRebalanceTimeout(group: StreamsGroup, member: StreamsGroupMember): void {
    const key = streamsRebalanceKey(group.groupId, member.memberId);
    if (member.state !== StreamsMemberState.UnrevokedTasks) {
      this.state.timers.cancel(key);
      return;
    }
    if (this.state.timers.has(key)) return;
    const { groupId } = group;
    const { memberId, memberEpoch } = member;
    this.state.timers.schedule(key, member.rebalanceTimeoutMs, () => this.fenceOnTimeout(groupId, memberId, memberEpoch));
  }

  private cancelTimers(groupId: string, memberId: string): void {
    for (const key of [streamsSessionKey, streamsRebalanceKey]) this.state.timers.cancel(key(groupId, memberId));
  }

  private sessionTimeoutMs(groupId: string): number {
    return groupOverride(this.groupConfig(groupId), 'streams.session.timeout.ms') ?? this.config.sessionTimeoutMs;
  }

  private heartbeatIntervalMs(groupId: string): number {
    return groupOverride(this.groupConfig(groupId), 'streams.heartbeat.interval.ms') ?? this.config.heartbeatIntervalMs;
  }

  private initialRebalanceDelayMs(groupId: string): number {
    return groupOverride(this.groupConfig(groupId), 'streams.initial.rebalance.delay.ms') ?? this.config.initialRebalanceDelayMs;
  }

  private numStandbyReplicas(groupId: string): number {
    return groupOverride(this.groupConfig(groupId), 'streams.num.standby.replicas') ?? this.config.numStandbyReplicas;
  }

  // ================================================================= describe

  describe(groupId: string): StreamsGroupDescription {
    const none = (errorCode: number, errorMessage: string | null): StreamsGroupDescription => ({
      errorCode, errorMessage, groupId, groupState: '', groupEpoch: 0, assignmentEpoch: 0, topology: null, members: [],
    });
    const statusError = this.state.validateStatus(groupId, false);
    if (statusError) return none(statusError, null);
    const group = this.state.streamsGroups.get(groupId);
    if (!group) {
      const classic = this.state.groups.get(groupId);
      const other = this.state.consumerGroups.has(groupId) || this.state.shareGroups.has(groupId) || (classic !== undefined && !classic.is(GroupState.Dead) && !classic.is(GroupState.Empty));
      return none(ErrorCode.GROUP_ID_NOT_FOUND, other ? `Group ${quoteInMessage(groupId)} is not a streams group.` : `Group ${quoteInMessage(groupId)} not found.`);
    }
    const wire = (t: TasksTuple) => ({ activeTasks: taskSetToWire(t.active), standbyTasks: taskSetToWire(t.standby), warmupTasks: taskSetToWire(t.warmup) });
    return {
      errorCode: ErrorCode.NONE, errorMessage: null, groupId, groupState: group.state, groupEpoch: group.groupEpoch,
      assignmentEpoch: group.assignmentEpoch, topology: group.topology,
      members: [...group.members.values()].map((m) => ({
        memberId: m.memberId, memberEpoch: m.memberEpoch, instanceId: m.instanceId, rackId: m.rackId, clientId: m.clientId,
        clientHost: m.clientHost, topologyEpoch: m.topologyEpoch, processId: m.processId, userEndpoint: m.userEndpoint,
        clientTags: [...m.clientTags], assignment: wire(m.assigned), targetAssignment: wire(group.targetAssignment.get(m.memberId) ?? NO_TASKS),
      })),
    };
  }
}

/** Kafka's throwIfStreamsGroupHeartbeatRequestIsInvalid (and its check of features not supported yet), with its messages. */
function validate(req: StreamsHeartbeatRequest): void {
  const invalid = (message: string): never => {
    throw new GroupError(ErrorCode.INVALID_REQUEST, message);
  };
  if (req.sourceTopicRegexes.length > 0) invalid('Regular expressions for source topics are not supported yet.');
  if (req.memberId === '') invalid('MemberId can\'t be empty.');
  if (req.groupId === '') invalid('GroupId can\'t be empty.');
  if (req.instanceId === '') invalid('InstanceId can\'t be empty.');
  if (req.rackId === '') invalid('RackId can\'t be empty.');
  if (req.memberEpoch === JOIN_EPOCH) {
    if (req.rebalanceTimeoutMs === -1) invalid('RebalanceTimeoutMs must be provided in first request.');
    // Given, and empty (Kafka's throwIfNotEmptyCollection counts null as not empty).
    if (req.activeTasks?.length !== 0) invalid('ActiveTasks must be empty when (re-)joining.');
    if (req.standbyTasks?.length !== 0) invalid('StandbyTasks must be empty when (re-)joining.');
    if (req.warmupTasks?.length !== 0) invalid('WarmupTasks must be empty when (re-)joining.');
    if (req.topology === null) invalid('Topology must be non-null when (re-)joining.');
    else validateTopology(req.topology);
  } else if (req.memberEpoch === STATIC_LEAVE_EPOCH) {
    if (req.instanceId === null) invalid('InstanceId can\'t be null.');
  } else if (req.memberEpoch < STATIC_LEAVE_EPOCH) {
    invalid(`MemberEpoch is ${req.memberEpoch}, but must be greater than or equal to -2.`);
  }
  if (req.activeTasks !== null || req.standbyTasks !== null || req.warmupTasks !== null) {
    if (req.activeTasks === null || req.standbyTasks === null || req.warmupTasks === null) invalid('If one task-type is non-null, all must be non-null.');
  }
  if (req.memberEpoch !== JOIN_EPOCH && req.topology !== null) invalid('Topology can only be provided when (re-)joining.');
}

/** STREAMS_INVALID_TOPOLOGY for what no topology can be: a subtopology without id or sources, an id twice, a copartition index out of range. */
function validateTopology(topology: StreamsTopology): void {
  const ids = new Set<string>();
  const fail = (message: string): never => {
    throw new GroupError(ErrorCode.STREAMS_INVALID_TOPOLOGY, message);
  };
  for (const s of topology.subtopologies) {
    if (ids.has(s.subtopologyId)) fail(`Duplicate subtopology id ${s.subtopologyId}.`);
    ids.add(s.subtopologyId);
    if (s.sourceTopics.length === 0 && s.repartitionSourceTopics.length === 0) fail(`Subtopology ${s.subtopologyId} has no source topics.`);
    for (const g of s.copartitionGroups) {
      if (g.sourceTopics.some((i) => i < 0 || i >= s.sourceTopics.length) ||
        g.repartitionSourceTopics.some((i) => i < 0 || i >= s.repartitionSourceTopics.length)) {
        fail(`Copartition group of subtopology ${s.subtopologyId} refers to a topic that does not exist.`);
      }
    }
  }
}

/**
 * Kafka's throwIfStreamsGroupMemberEpochIsInvalid: a greater epoch than the member's is fenced; a
 * smaller one too, except the previous epoch with owned tasks within its assignment (the answer
 * that bumped the epoch may have been lost).
 */
function checkMemberEpoch(member: StreamsGroupMember, epoch: number, owned: TasksTuple | null): void {
  if (epoch === member.memberEpoch) return;
  const fenced = (relation: string): never => {
    throw new GroupError(ErrorCode.FENCED_MEMBER_EPOCH, `The streams group member has a ${relation} member epoch (${epoch}) ` +
      `than the one known by the group coordinator (${member.memberEpoch}). The member must abandon all its partitions and rejoin.`);
  };
  if (epoch > member.memberEpoch) fenced('greater');
  if (epoch !== member.previousMemberEpoch || owned === null || !isSubsetOf(owned, member.assigned)) fenced('smaller');
}


