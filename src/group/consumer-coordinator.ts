// Consumer groups (KIP-848) as Kafka 4's GroupMetadataManager serves them: ConsumerGroupHeartbeat
// (join with epoch 0, heartbeat, leave with -1, a static member's temporary leave with -2) and
// ConsumerGroupDescribe. A heartbeat is one synchronous step, so no other request interleaves:
// 1. the member is created or updated; a changed subscription, or a change of the subscribed
//    topics themselves (created, deleted, more partitions; a new topic matching a regex), bumps
//    the group epoch;
// 2. a group epoch past the target assignment's computes a new target with the server assignor,
//    at most once per consumer.assignment.interval.ms (sooner, a timer computes it at the interval's end);
// 3. the member is reconciled towards its target (./reconciliation.ts).
// Timers: each member's session (group.consumer.session.timeout.ms, or the group's
// consumer.session.timeout.ms) and, while it must revoke partitions, its rebalance timeout; either
// fences it: it leaves the group and the group epoch is bumped.
import { ErrorCode, quoteInMessage } from '../common/errors';
import { generateClusterId, type TopicRecord } from '../cluster/metadata-store';
import type { ConsumerGroupAssignor } from './assignors';
import { ConsumerGroup, type ConsumerGroupImage } from './consumer-group';
import { groupHash, partitionRacks, topicHash, type RackOf } from './metadata-hash';
import {
  JOIN_EPOCH, LEAVE_EPOCH, MemberState, STATIC_LEAVE_EPOCH, newMember, sameAssignment, sameSubscription, toWire,
  withoutEpochs, type ConsumerGroupMember, type TopicPartitions,
} from './consumer-member';
import type { CoordinatorState } from './coordinator-state';
import { GroupError, unknownMemberError } from './group-error';
import type { ConsumerGroupSnapshot } from './store';
import { CONSUMER_PROTOCOL_TYPE, decodeAssignment, decodeSubscription, encodeAssignment } from './consumer-protocol';
import { GroupMember, GroupState, joinError, syncError, type ClassicGroup, type JoinResult, type SyncResult } from './group';
import type { JoinRequest, LeaveResult, MemberIdentity, RebalanceManager, SyncRequest } from './rebalance';
import { reconcile, type ReconciliationTarget } from './reconciliation';
import { compileRe2Pattern, Re2SyntaxError, type Re2Pattern } from '../common/re2-pattern';
import { consumerAssignmentKey, consumerJoinKey, consumerRebalanceKey, consumerSessionKey, consumerSyncKey } from './timers';

export interface ConsumerGroupConfig {
  /** group.consumer.session.timeout.ms */
  sessionTimeoutMs: number;
  /** group.consumer.heartbeat.interval.ms */
  heartbeatIntervalMs: number;
  /** group.consumer.max.size */
  maxSize: number;
  /** group.consumer.assignors: the first is the default. */
  assignors: readonly ConsumerGroupAssignor[];
  /** group.consumer.migration.policy */
  migrationPolicy: string;
  /** group.consumer.assignment.interval.ms (a group's consumer.assignment.interval.ms overrides it). */
  assignmentIntervalMs: number;
}

/** The topics of the cluster, as the Controller's metadata has them, and its brokers' racks. */
export interface ConsumerGroupTopics {
  topic(name: string): TopicRecord | undefined;
  topics(): readonly TopicRecord[];
  brokers(): readonly { nodeId: number; rack: string | null }[];
}

/** A group's own config overrides (GROUP config resources), raw as set: consumer.session.timeout.ms, consumer.heartbeat.interval.ms. */
export type GroupConfigLookup = (groupId: string) => Readonly<Record<string, string>> | undefined;

export interface ConsumerHeartbeatRequest {
  apiVersion: number;
  groupId: string;
  memberId: string;
  memberEpoch: number;
  instanceId: string | null;
  rackId: string | null;
  /** -1: unchanged. */
  rebalanceTimeoutMs: number;
  /** null: unchanged. */
  subscribedTopicNames: string[] | null;
  /** null: unchanged (v0 has none). */
  subscribedTopicRegex: string | null;
  serverAssignor: string | null;
  /** The partitions the member owns; null: unchanged since its last heartbeat. */
  topicPartitions: { topicId: string; partitions: number[] }[] | null;
  clientId: string;
  clientHost: string;
}

export interface ConsumerHeartbeatResult {
  errorCode: number;
  errorMessage: string | null;
  memberId: string | null;
  memberEpoch: number;
  heartbeatIntervalMs: number;
  /** Sent when joining, on a full request, or when the member's assignment changed; else null. */
  assignment: { topicId: string; partitions: number[] }[] | null;
}

export interface DescribedPartitions {
  topicId: string;
  topicName: string;
  partitions: number[];
}

export interface ConsumerGroupDescription {
  errorCode: number;
  errorMessage: string | null;
  groupId: string;
  groupState: string;
  groupEpoch: number;
  assignmentEpoch: number;
  assignorName: string;
  members: {
    memberId: string; instanceId: string | null; rackId: string | null; memberEpoch: number; clientId: string;
    clientHost: string; subscribedTopicNames: string[]; subscribedTopicRegex: string | null;
    assignment: DescribedPartitions[]; targetAssignment: DescribedPartitions[];
    /** Kafka's MemberType: 0 a member of the classic protocol, 1 of ConsumerGroupHeartbeat. */
    memberType: number;
  }[];
}

/** How soon a timer operation (a fencing, a deferred assignment) whose records could not be written is tried again (Kafka's coordinator timer retry backoff). */
const TIMER_RETRY_BACKOFF_MS = 500;

/** Kafka's REGEX_BATCH_REFRESH_INTERVAL_MS: how stale the topics a regular expression matched may get. */
const REGEX_REFRESH_INTERVAL_MS = 10_000;

export class ConsumerGroupManager {
  /** Each topic's hash by name, with what it was computed from (its id, and its partitions' racks). */
  private readonly topicHashes = new Map<string, { key: string; hash: bigint }>();

  constructor(
    private readonly state: CoordinatorState,
    private readonly config: ConsumerGroupConfig,
    /** Hands a classic group's members over when it is upgraded, takes them back when downgraded. */
    private readonly rebalance: Pick<RebalanceManager, 'handOverMembers' | 'adoptMembers'>,
    private readonly topics: ConsumerGroupTopics,
    private readonly groupConfig: GroupConfigLookup = () => undefined,
  ) {}

  /**
   * The group changes at once (a later heartbeat sees it); the answer waits for its records to be
   * in __consumer_offsets, and a failed write answers its error with the group put back as it was.
   */
  async heartbeat(req: ConsumerHeartbeatRequest): Promise<ConsumerHeartbeatResult> {
    const failed = (code: number, message = ''): ConsumerHeartbeatResult =>
      ({ errorCode: code, errorMessage: message || null, memberId: null, memberEpoch: 0, heartbeatIntervalMs: 0, assignment: null });
    let result: ConsumerHeartbeatResult;
    let group: ConsumerGroup;
    let before: ConsumerGroupImage | null;
    const existed = this.state.consumerGroups.has(req.groupId);
    try {
      if (this.state.closed) throw new GroupError(ErrorCode.COORDINATOR_NOT_AVAILABLE);
      this.validate(req);
      const statusError = this.state.validateStatus(req.groupId, false);
      if (statusError) throw new GroupError(statusError);
      const leaving = req.memberEpoch === LEAVE_EPOCH || req.memberEpoch === STATIC_LEAVE_EPOCH;
      group = leaving ? this.consumerGroup(req.groupId) : this.getOrMaybeCreateGroup(req.groupId, req.memberEpoch === JOIN_EPOCH);
      // An upgraded group is one before the heartbeat: put back, it stays one (its records then go with its next write).
      before = this.state.consumerGroups.get(req.groupId) === group ? group.image() : null;
      result = leaving ? await this.leave(group, req) : this.memberHeartbeat(group, req);
    } catch (err) {
      if (!(err instanceof GroupError)) throw err;
      // An upgraded group stays one even if the heartbeat that upgraded it is refused.
      const upgraded = existed ? undefined : this.state.consumerGroups.get(req.groupId);
      if (upgraded) await this.persist(upgraded, null);
      return failed(err.code, err.message);
    }
    // A group downgraded meanwhile (its last consumer member left) was written as it went.
    if (this.state.consumerGroups.get(req.groupId) !== group) return result;
    const code = await this.persist(group, existed ? before : null, before);
    return code === ErrorCode.NONE ? result : failed(code);
  }

  /**
   * Writes what changed in the group since `before` (null: all of it), with what earlier failed
   * writes left out. A failed write puts the group back as `revertTo` has it (null: no group),
   * as Kafka reverts its timeline, unless the group changed again meanwhile (its next write then
   * carries what this one could not).
   */
  private async persist(group: ConsumerGroup, before: ConsumerGroupImage | null, revertTo = before): Promise<number> {
    const from = group.unwrittenSince === undefined ? before : group.unwrittenSince;
    group.unwrittenSince = undefined;
    const records = group.recordsSince(from);
    if (records.length === 0) return ErrorCode.NONE;
    const after = group.image();
    const code = await this.state.write(group.groupId, (store) => store.storeConsumerGroup(group.groupId, records));
    if (code === ErrorCode.NONE || this.state.consumerGroups.get(group.groupId) !== group) return code;
    if (group.changedSince(after)) {
      group.unwrittenSince = from;
    } else if (revertTo === null) {
      this.state.dropConsumerGroup(group.groupId);
    } else {
      group.restore(revertTo);
      this.restoreTimers(group, after);
      if (from !== revertTo) group.unwrittenSince = from;
    }
    return code;
  }

  /** The timers of the members a restore changed: those gone stop, those back start again. */
  private restoreTimers(group: ConsumerGroup, after: ConsumerGroupImage): void {
    for (const memberId of after.members.keys()) if (!group.members.has(memberId)) this.cancelTimers(group.groupId, memberId);
    for (const member of group.members.values()) {
      if (after.members.get(member.memberId) === member) continue;
      this.scheduleSessionTimeout(group.groupId, member.memberId, member.classic?.sessionTimeoutMs ?? this.sessionTimeoutMs(group.groupId));
      if (member.classic === null) this.scheduleRebalanceTimeout(group, member);
    }
  }

  /** Kafka's throwIfConsumerGroupHeartbeatRequestIsInvalid, with its messages. */
  private validate(req: ConsumerHeartbeatRequest): void {
    const invalid = (message: string): never => {
      throw new GroupError(ErrorCode.INVALID_REQUEST, message);
    };
    // v1 (KIP-1082): the client makes its own member id, even to join.
    if ((req.apiVersion >= 1 || req.memberEpoch > 0 || req.memberEpoch === LEAVE_EPOCH) && req.memberId === '') invalid('MemberId can\'t be empty.');
    if (req.groupId === '') invalid('GroupId can\'t be empty.');
    if (req.instanceId === '') invalid('InstanceId can\'t be empty.');
    if (req.rackId === '') invalid('RackId can\'t be empty.');
    if (req.memberEpoch === JOIN_EPOCH) {
      if (req.rebalanceTimeoutMs === -1) invalid('RebalanceTimeoutMs must be provided in first request.');
      if (req.topicPartitions === null || req.topicPartitions.length > 0) invalid('TopicPartitions must be empty when (re-)joining.');
      if (req.subscribedTopicNames === null && req.subscribedTopicRegex === null) {
        invalid('Either SubscribedTopicNames or SubscribedTopicRegex must be non-null when (re-)joining.');
      }
    } else if (req.memberEpoch === STATIC_LEAVE_EPOCH) {
      if (req.instanceId === null) invalid('InstanceId can\'t be null.');
    } else if (req.memberEpoch < STATIC_LEAVE_EPOCH) {
      invalid('MemberEpoch is invalid.');
    }
    if (req.serverAssignor !== null && !this.config.assignors.some((a) => a.name === req.serverAssignor)) {
      throw new GroupError(ErrorCode.UNSUPPORTED_ASSIGNOR, `ServerAssignor ${quoteInMessage(req.serverAssignor)} is not supported. ` +
        `Supported assignors: ${this.config.assignors.map((a) => a.name).join(', ')}.`);
    }
  }

  // ================================================================= joining and heartbeats

  private memberHeartbeat(group: ConsumerGroup, req: ConsumerHeartbeatRequest): ConsumerHeartbeatResult {
    const joining = req.memberEpoch === JOIN_EPOCH;
    if (group.members.size >= this.config.maxSize && (req.memberId === '' || !group.members.has(req.memberId))) {
      throw new GroupError(ErrorCode.GROUP_MAX_SIZE_REACHED,
        `The consumer group has reached its maximum capacity of ${this.config.maxSize} members.`);
    }
    const memberId = req.memberId === '' ? generateClusterId() : req.memberId;
    const { member, replaced } = req.instanceId === null
      ? { member: this.dynamicMember(group, memberId, req, joining), replaced: undefined }
      : this.staticMember(group, memberId, req.instanceId, req, joining);

    // 1. The member as it asks to be now.
    const updated: ConsumerGroupMember = {
      ...member,
      instanceId: req.instanceId ?? member.instanceId,
      rackId: req.rackId ?? member.rackId,
      rebalanceTimeoutMs: req.rebalanceTimeoutMs === -1 ? member.rebalanceTimeoutMs : req.rebalanceTimeoutMs,
      serverAssignor: req.serverAssignor ?? member.serverAssignor,
      subscribedTopicNames: req.subscribedTopicNames === null ? member.subscribedTopicNames : [...new Set(req.subscribedTopicNames)].sort(),
      subscribedTopicRegex: req.subscribedTopicRegex ?? member.subscribedTopicRegex,
      clientId: req.clientId,
      clientHost: req.clientHost,
      classic: null,
    };
    const reconciled = this.updateMember(group, member, updated, replaced, req.topicPartitions);
    if (reconciled !== updated) this.scheduleRebalanceTimeout(group, reconciled);
    this.scheduleSessionTimeout(group.groupId, memberId, this.sessionTimeoutMs(group.groupId));

    const isFullRequest = req.rebalanceTimeoutMs !== -1 && (req.subscribedTopicNames !== null || req.subscribedTopicRegex !== null) &&
      req.topicPartitions !== null;
    const sendAssignment = joining || isFullRequest || !sameAssignment(member.assigned, reconciled.assigned);
    return {
      errorCode: ErrorCode.NONE, errorMessage: null, memberId, memberEpoch: reconciled.memberEpoch,
      heartbeatIntervalMs: this.heartbeatIntervalMs(group.groupId), assignment: sendAssignment ? toWire(reconciled.assigned) : null,
    };
  }

  /**
   * Kafka's three steps for a member as it asks to be now (`updated`, replacing `replaced` if a
   * static member takes over): the group epoch, bumped by a changed subscription or subscribed
   * topics; a new target assignment if the epoch moved past it; the member reconciled towards its
   * target (`owned`: what it says it owns). Everything is checked before the group changes, in one
   * go; the member as reconciled.
   */
  private updateMember(group: ConsumerGroup, member: ConsumerGroupMember, updated: ConsumerGroupMember,
    replaced: ConsumerGroupMember | undefined, owned: ReconciliationTarget['owned']): ConsumerGroupMember {
    const memberId = updated.memberId;
    const subscriptionChanged = !sameSubscription(member, updated);
    const members = new Map(group.members);
    if (replaced) members.delete(replaced.memberId);
    members.set(memberId, updated);
    const resolvedRegexes = this.resolveRegexes(group, member, updated, members);
    const metadataHash = this.metadataHash(group, members, resolvedRegexes ?? group.resolvedRegexes);
    const bumpEpoch = group.groupEpoch === 0 || subscriptionChanged || resolvedRegexes !== null || metadataHash !== group.metadataHash;
    const groupEpoch = bumpEpoch ? group.groupEpoch + 1 : group.groupEpoch;
    // A new group epoch is a rebalance of a consumer group (Kafka's consumer-group-rebalance sensor).
    if (bumpEpoch) this.state.metrics?.completedRebalances.inc({ type: 'consumer' });

    // 2. The target assignment, new if the group epoch moved past it.
    const regexes = resolvedRegexes ?? group.resolvedRegexes;
    let targetAssignment: Map<string, TopicPartitions> | null = null;
    const assignmentDue = groupEpoch > group.assignmentEpoch && this.assignmentDue(group);
    if (assignmentDue) {
      const previous = new Map(group.targetAssignment);
      // A replacing static member takes over the target of the member it replaces.
      if (replaced) previous.set(memberId, previous.get(replaced.memberId) ?? new Map());
      targetAssignment = this.assign(group, members, regexes, previous);
    }
    const targetEpoch = targetAssignment ? groupEpoch : group.assignmentEpoch;
    const target = (targetAssignment ?? group.targetAssignment).get(memberId) ??
      (replaced ? group.targetAssignment.get(replaced.memberId) : undefined) ?? new Map<string, Set<number>>();

    // 3. The member towards its target.
    const reconciled = reconcile(updated, {
      epoch: targetEpoch,
      partitions: target,
      subscribedTopicIds: this.topicIds(group.memberTopicNamesWith(updated, regexes)),
      ownerEpoch: (topicId, p) => group.ownerEpoch(topicId, p),
      owned,
      enforceSubscription: subscriptionChanged,
    });

    // Everything checked: the group changes in one go.
    if (!this.state.consumerGroups.has(group.groupId)) this.state.consumerGroups.set(group.groupId, group);
    group.groupEpoch = groupEpoch;
    group.metadataHash = metadataHash;
    if (resolvedRegexes) {
      group.resolvedRegexes.clear();
      for (const [regex, topics] of resolvedRegexes) group.resolvedRegexes.set(regex, topics);
      group.lastRegexRefreshMs = this.state.now();
    }
    if (replaced) {
      group.removeMember(replaced.memberId);
      group.targetAssignment.delete(replaced.memberId);
      group.targetAssignment.set(memberId, target);
      this.cancelTimers(group.groupId, replaced.memberId);
    }
    if (targetAssignment) this.installTargetAssignment(group, targetAssignment, groupEpoch);
    else if (groupEpoch > group.assignmentEpoch) this.scheduleAssignment(group);
    group.updateMember(reconciled);
    return reconciled;
  }

  /**
   * Kafka 4.4's assignment batching (KIP-1263): a group gets a new target assignment at most once
   * per consumer.assignment.interval.ms; a group epoch bumped sooner waits for the interval's end
   * (scheduleAssignment), its members reconciling towards the target they have meanwhile.
   */
  private assignmentDue(group: ConsumerGroup): boolean {
    const intervalMs = groupOverride(this.groupConfig(group.groupId), 'consumer.assignment.interval.ms') ?? this.config.assignmentIntervalMs;
    return group.assignmentEpoch === 0 || this.state.now() - group.assignmentTimestamp >= intervalMs;
  }

  private installTargetAssignment(group: ConsumerGroup, targetAssignment: ReadonlyMap<string, TopicPartitions>, epoch: number): void {
    group.targetAssignment.clear();
    for (const [id, partitions] of targetAssignment) group.targetAssignment.set(id, partitions);
    group.assignmentEpoch = epoch;
    group.assignmentTimestamp = this.state.now();
  }

  /** The deferred target assignment, at the end of the interval since the last one (once per group). */
  private scheduleAssignment(group: ConsumerGroup): void {
    const key = consumerAssignmentKey(group.groupId);
    if (this.state.timers.has(key)) return;
    const intervalMs = groupOverride(this.groupConfig(group.groupId), 'consumer.assignment.interval.ms') ?? this.config.assignmentIntervalMs;
    const delayMs = Math.max(group.assignmentTimestamp + intervalMs - this.state.now(), 0);
    this.state.timers.schedule(key, delayMs, () => void this.assignOnTimer(group.groupId));
  }

  /** The target assignment the interval held back, written as Kafka's timer operations are (tried again if the write fails). */
  private async assignOnTimer(groupId: string): Promise<void> {
    const group = this.state.consumerGroups.get(groupId);
    if (!group || group.groupEpoch <= group.assignmentEpoch) return;
    const before = group.image();
    this.installTargetAssignment(group, this.assign(group, group.members, group.resolvedRegexes, group.targetAssignment), group.groupEpoch);
    const code = await this.persist(group, before);
    if (code === ErrorCode.NONE) return;
    this.state.log.warn({ groupId, errorCode: code }, 'could not write the target assignment of a consumer group');
    if (code !== ErrorCode.NOT_COORDINATOR && code !== ErrorCode.COORDINATOR_LOAD_IN_PROGRESS && group.groupEpoch > group.assignmentEpoch) {
      this.state.timers.schedule(consumerAssignmentKey(groupId), TIMER_RETRY_BACKOFF_MS, () => void this.assignOnTimer(groupId));
    }
  }

  /**
   * Kafka's getOrMaybeCreateConsumerGroup: a group id of a classic group is not a consumer group,
   * except an empty one, which a joining member turns into one (its committed offsets stay).
   */
  private getOrMaybeCreateGroup(groupId: string, create: boolean): ConsumerGroup {
    const group = this.state.consumerGroups.get(groupId);
    if (group) return group;
    if (this.state.streamsGroups.has(groupId) || this.state.shareGroups.has(groupId)) {
      throw new GroupError(ErrorCode.GROUP_ID_NOT_FOUND, `Group ${quoteInMessage(groupId)} is not a consumer group.`);
    }
    const classic = this.state.groups.get(groupId);
    const classicLive = classic !== undefined && !classic.is(GroupState.Dead);
    if (!create) {
      throw new GroupError(ErrorCode.GROUP_ID_NOT_FOUND, classicLive ? `Group ${quoteInMessage(groupId)} is not a consumer group.` : `Consumer group ${quoteInMessage(groupId)} not found.`);
    }
    if (classicLive && !classic.is(GroupState.Empty)) return this.upgrade(classic);
    return new ConsumerGroup(groupId);
  }

  /**
   * The online upgrade (Kafka's validateOnlineUpgrade and convertToConsumerGroup): a classic group
   * of the consumer protocol becomes a consumer group whose members keep the classic protocol, at
   * their generation as member epoch with their assignment; the classic group is left Empty with
   * the offsets, its record tombstoned. Its members learn of the new epoch on their next heartbeat.
   */
  private upgrade(classic: ClassicGroup): ConsumerGroup {
    const groupId = classic.groupId;
    const refuse = (reason: string): never => {
      throw new GroupError(ErrorCode.GROUP_ID_NOT_FOUND, `Cannot upgrade classic group ${quoteInMessage(groupId)} to consumer group because ${reason}.`);
    };
    if (this.config.migrationPolicy !== 'upgrade' && this.config.migrationPolicy !== 'bidirectional') refuse('online upgrade is disabled');
    if (!classic.usesConsumerProtocol()) refuse('the group does not use the consumer embedded protocol');
    if (classic.members.size > this.config.maxSize) refuse('the group size exceeds the consumer group maximum size');
    const group = new ConsumerGroup(groupId);
    const epoch = classic.generationId;
    const topicIds = (partitions: { topic: string; partitions: number[] }[]): [string, number[]][] => partitions.flatMap((t) => {
      const topic = this.topics.topic(t.topic);
      return topic ? [[topic.id, t.partitions] as [string, number[]]] : [];
    });
    const members = [...classic.members.values()].map((m) => {
      const protocolName = classic.protocolName ?? m.protocols[0]?.name ?? '';
      const subscription = decodeSubscription(m.metadata(protocolName));
      const assignment = decodeAssignment(m.assignment.length > 0 ? m.assignment : encodeAssignment([], 0));
      if (subscription === null || assignment === null) return refuse('the embedded consumer protocol is malformed');
      const assigned = new Map(topicIds(assignment).map(([id, ps]) => [id, new Map(ps.map((p) => [p, epoch]))]));
      const member: ConsumerGroupMember = {
        ...newMember(m.memberId), instanceId: m.groupInstanceId, rackId: subscription.rackId, clientId: m.clientId, clientHost: m.clientHost,
        rebalanceTimeoutMs: m.rebalanceTimeoutMs, subscribedTopicNames: [...new Set(subscription.topics)].sort(),
        memberEpoch: epoch, previousMemberEpoch: epoch, assigned,
        classic: { sessionTimeoutMs: m.sessionTimeoutMs, protocols: m.protocols },
      };
      return member;
    });
    this.rebalance.handOverMembers(classic);
    void this.state.write(groupId, (store) => store.deleteGroup(groupId, []));
    group.groupEpoch = epoch;
    group.assignmentEpoch = epoch;
    group.assignmentTimestamp = this.state.now();
    for (const member of members) {
      group.updateMember(member);
      group.targetAssignment.set(member.memberId, withoutEpochs(member.assigned));
      this.scheduleSessionTimeout(groupId, member.memberId, member.classic!.sessionTimeoutMs);
    }
    group.metadataHash = this.metadataHash(group, group.members, group.resolvedRegexes);
    this.state.consumerGroups.set(groupId, group);
    return group;
  }

  private dynamicMember(group: ConsumerGroup, memberId: string, req: ConsumerHeartbeatRequest, joining: boolean): ConsumerGroupMember {
    const member = group.members.get(memberId);
    if (!member) {
      if (!joining) throw unknownMemberError(group.groupId, memberId);
      return newMember(memberId);
    }
    this.checkMemberEpoch(member, req);
    return member;
  }

  /** A static member's heartbeat; joining again after a temporary leave (-2), it replaces the previous member of its instance id. */
  private staticMember(group: ConsumerGroup, memberId: string, instanceId: string, req: ConsumerHeartbeatRequest, joining: boolean):
    { member: ConsumerGroupMember; replaced?: ConsumerGroupMember } {
    const existing = group.staticMember(instanceId);
    if (joining) {
      if (!existing) return { member: group.members.get(memberId) ?? newMember(memberId) };
      if (existing.memberId === memberId) {
        this.checkMemberEpoch(existing, req);
        return { member: existing };
      }
      if (existing.memberEpoch !== STATIC_LEAVE_EPOCH) {
        throw new GroupError(ErrorCode.UNRELEASED_INSTANCE_ID, `Static member ${quoteInMessage(memberId)} with instance id ${quoteInMessage(instanceId)} ` +
          `cannot join the group because the instance id is owned by ${quoteInMessage(existing.memberId)} member.`);
      }
      // The replacement starts from what the previous member owned.
      return { member: { ...existing, memberId, memberEpoch: JOIN_EPOCH, previousMemberEpoch: JOIN_EPOCH }, replaced: existing };
    }
    if (!existing) throw new GroupError(ErrorCode.UNKNOWN_MEMBER_ID, `Instance id ${quoteInMessage(instanceId)} is unknown.`);
    if (existing.memberId !== memberId) {
      throw new GroupError(ErrorCode.FENCED_INSTANCE_ID,
        `Static member ${quoteInMessage(memberId)} with instance id ${quoteInMessage(instanceId)} was fenced by member ${quoteInMessage(existing.memberId)}.`);
    }
    this.checkMemberEpoch(existing, req);
    return { member: existing };
  }

  /**
   * Kafka's throwIfConsumerGroupMemberEpochIsInvalid: epoch 0 rejoins; a greater epoch, or a
   * smaller one, is fenced, except the previous epoch with owned partitions within the assignment
   * (the answer that bumped the epoch may have been lost).
   */
  private checkMemberEpoch(member: ConsumerGroupMember, req: ConsumerHeartbeatRequest): void {
    const epoch = req.memberEpoch;
    if (epoch === JOIN_EPOCH || epoch === member.memberEpoch) return;
    const fenced = (relation: string): never => {
      throw new GroupError(ErrorCode.FENCED_MEMBER_EPOCH, `The consumer group member has a ${relation} member epoch (${epoch}) ` +
        `than the one known by the group coordinator (${member.memberEpoch}). The member must abandon all its partitions and rejoin.`);
    };
    if (epoch > member.memberEpoch) fenced('greater');
    const ownsSubset = req.topicPartitions !== null && req.topicPartitions.every((t) => {
      const assigned = member.assigned.get(t.topicId);
      return assigned !== undefined && t.partitions.every((p) => assigned.has(p));
    });
    if (epoch !== member.previousMemberEpoch || !ownsSubset) fenced('smaller');
  }

  // ================================================================= subscriptions and assignment

  /**
   * The regular expressions the group subscribes with, resolved again against the topics when a
   * member brings a new one or the last resolution is older than REGEX_REFRESH_INTERVAL_MS; null
   * when they need no refresh or matched the same topics. An invalid new one is refused.
   */
  private resolveRegexes(group: ConsumerGroup, member: ConsumerGroupMember, updated: ConsumerGroupMember,
    members: ReadonlyMap<string, ConsumerGroupMember>): Map<string, ReadonlySet<string>> | null {
    const regexes = new Set([...members.values()].map((m) => m.subscribedTopicRegex).filter((r) => r !== ''));
    const brandNew = updated.subscribedTopicRegex !== '' && updated.subscribedTopicRegex !== member.subscribedTopicRegex &&
      !group.resolvedRegexes.has(updated.subscribedTopicRegex);
    // Only a regex new to the group is checked: the others were when they came.
    if (brandNew) compileRegex(updated.subscribedTopicRegex);
    const stale = this.state.now() - group.lastRegexRefreshMs >= REGEX_REFRESH_INTERVAL_MS;
    const dropped = [...group.resolvedRegexes.keys()].some((r) => !regexes.has(r));
    if (!brandNew && !dropped && !(stale && regexes.size > 0)) return null;
    const names = this.topics.topics().map((t) => t.name);
    const resolved = new Map<string, ReadonlySet<string>>();
    for (const regex of regexes) {
      const re = compileRegex(regex);
      resolved.set(regex, new Set(names.filter((n) => re.matches(n))));
    }
    const same = resolved.size === group.resolvedRegexes.size && [...resolved].every(([r, topics]) => {
      const before = group.resolvedRegexes.get(r);
      return before !== undefined && before.size === topics.size && [...topics].every((t) => before.has(t));
    });
    if (same) {
      group.lastRegexRefreshMs = this.state.now();
      return null;
    }
    return resolved;
  }

  /**
   * What the target assignment depends on besides the members, hashed as Kafka 4.4 does
   * (./metadata-hash.ts): the subscribed topics that exist. 0 for none.
   */
  private metadataHash(group: ConsumerGroup, members: ReadonlyMap<string, ConsumerGroupMember>,
    regexes: ReadonlyMap<string, ReadonlySet<string>>): bigint {
    const hashes = new Map<string, bigint>();
    const racks = new Map(this.topics.brokers().map((b) => [b.nodeId, b.rack]));
    for (const m of members.values()) {
      for (const name of group.memberTopicNamesWith(m, regexes)) {
        const topic = this.topics.topic(name);
        if (topic && !hashes.has(name)) hashes.set(name, this.topicHash(topic, (nodeId) => racks.get(nodeId)));
      }
    }
    return groupHash(hashes);
  }

  /** A topic's hash, from the cache while what it hashes is the same (Kafka caches them too). */
  private topicHash(topic: TopicRecord, rackOf: RackOf): bigint {
    const racks = partitionRacks(topic, rackOf);
    const key = JSON.stringify([topic.id, racks]);
    const cached = this.topicHashes.get(topic.name);
    if (cached?.key === key) return cached.hash;
    const hash = topicHash(topic, racks);
    this.topicHashes.set(topic.name, { key, hash });
    return hash;
  }

  private topicIds(names: Iterable<string>): Set<string> {
    const ids = new Set<string>();
    for (const name of names) {
      const topic = this.topics.topic(name);
      if (topic) ids.add(topic.id);
    }
    return ids;
  }

  /** A new target assignment by the assignor most members name (else the first of group.consumer.assignors). */
  private assign(group: ConsumerGroup, members: ReadonlyMap<string, ConsumerGroupMember>,
    regexes: ReadonlyMap<string, ReadonlySet<string>>, previous: ReadonlyMap<string, TopicPartitions>): Map<string, TopicPartitions> {
    const assignor = this.assignorFor(members);
    const topics = new Map<string, number>();
    const specMembers = [...members.values()].map((m) => {
      const names = group.memberTopicNamesWith(m, regexes);
      for (const name of names) {
        const topic = this.topics.topic(name);
        if (topic) topics.set(topic.id, topic.partitions.length);
      }
      return { memberId: m.memberId, instanceId: m.instanceId, subscribedTopicIds: this.topicIds(names) };
    });
    return assignor.assign({ members: specMembers, topics, previous });
  }

  private assignorFor(members: ReadonlyMap<string, ConsumerGroupMember>): ConsumerGroupAssignor {
    const counts = new Map<string, number>();
    for (const m of members.values()) if (m.serverAssignor !== null) counts.set(m.serverAssignor, (counts.get(m.serverAssignor) ?? 0) + 1);
    let preferred: string | null = null;
    for (const [name, n] of counts) if (preferred === null || n > counts.get(preferred)!) preferred = name;
    return this.config.assignors.find((a) => a.name === preferred) ?? this.config.assignors[0];
  }

  // ================================================================= leaving and fencing

  /** A leave; one that downgrades the group answers once the classic group is written. */
  private async leave(group: ConsumerGroup, req: ConsumerHeartbeatRequest): Promise<ConsumerHeartbeatResult> {
    let member: ConsumerGroupMember;
    if (req.instanceId === null) {
      member = group.members.get(req.memberId) ?? throwError(unknownMemberError(group.groupId, req.memberId));
    } else {
      member = group.staticMember(req.instanceId) ?? throwError(new GroupError(ErrorCode.UNKNOWN_MEMBER_ID, `Instance id ${quoteInMessage(req.instanceId)} is unknown.`));
      if (member.memberId !== req.memberId) {
        throw new GroupError(ErrorCode.FENCED_INSTANCE_ID,
          `Static member ${quoteInMessage(req.memberId)} with instance id ${quoteInMessage(req.instanceId)} was fenced by member ${quoteInMessage(member.memberId)}.`);
      }
      if (req.memberEpoch === STATIC_LEAVE_EPOCH) {
        // Gone for a while: its instance id stays, for a replacement to take over its partitions.
        group.updateMember({ ...member, memberEpoch: STATIC_LEAVE_EPOCH, pendingRevocation: new Map() });
        this.state.timers.cancel(consumerRebalanceKey(group.groupId, member.memberId));
        return this.leaveAnswer(member.memberId, STATIC_LEAVE_EPOCH);
      }
    }
    await this.fence(group, member);
    return this.leaveAnswer(req.memberId, req.memberEpoch);
  }

  private leaveAnswer(memberId: string, memberEpoch: number): ConsumerHeartbeatResult {
    return { errorCode: ErrorCode.NONE, errorMessage: null, memberId, memberEpoch, heartbeatIntervalMs: 0, assignment: null };
  }

  /**
   * The member leaves the group (Kafka's consumerGroupFenceMember): the group epoch is bumped, for
   * a new target assignment. If that downgrades the group: the write of the classic group.
   */
  private fence(group: ConsumerGroup, member: ConsumerGroupMember): Promise<number> | null {
    group.removeMember(member.memberId);
    group.targetAssignment.delete(member.memberId);
    this.cancelTimers(group.groupId, member.memberId);
    group.metadataHash = this.metadataHash(group, group.members, group.resolvedRegexes);
    group.groupEpoch++;
    return member.classic === null ? this.maybeDowngrade(group) : null;
  }

  /**
   * The online downgrade (Kafka's validateOnlineDowngradeWithFencedMembers and
   * convertToClassicGroup): once the last member of ConsumerGroupHeartbeat has gone, a group whose
   * members all use the classic protocol becomes a classic group again (the policy allowing, and
   * within group.max.size), at the group epoch as generation with each member's target assignment,
   * and rebalances. Its records are tombstoned and the classic group's record written at once, in
   * that order (Kafka writes both with the conversion), so a restart meanwhile keeps the members;
   * that write, if it downgraded.
   */
  private maybeDowngrade(group: ConsumerGroup): Promise<number> | null {
    const members = [...group.members.values()];
    if (members.length === 0 || members.some((m) => m.classic === null) || members.length > this.state.config.maxSize) return null;
    if (this.config.migrationPolicy !== 'downgrade' && this.config.migrationPolicy !== 'bidirectional') return null;
    const { groupId } = group;
    const names = new Map(this.topics.topics().map((t) => [t.id, t.name]));
    const classicMembers = members.map((m) => {
      const protocols = m.classic!.protocols;
      const assigned = toWire(group.targetAssignment.get(m.memberId) ?? new Map())
        .flatMap((t) => (names.has(t.topicId) ? [{ topic: names.get(t.topicId)!, partitions: t.partitions }] : []));
      const version = decodeSubscription(protocols[0].metadata)?.version ?? 0;
      return new GroupMember(m.memberId, m.instanceId, m.clientId, m.clientHost, m.rebalanceTimeoutMs, m.classic!.sessionTimeoutMs,
        CONSUMER_PROTOCOL_TYPE, [...protocols], encodeAssignment(assigned, version));
    });
    const tombstones = this.state.dropConsumerGroup(groupId);
    const holder = this.state.groups.get(groupId);
    const classic = holder && !holder.is(GroupState.Dead) ? holder : this.state.createGroup(groupId);
    const record = this.rebalance.adoptMembers(classic, group.groupEpoch, classicMembers[0].protocols[0].name, classicMembers,
      `Downgrade group ${groupId} from consumer to classic for member leaving.`);
    const written = this.state.write(groupId, async (store) => {
      const code = await store.storeConsumerGroup(groupId, tombstones);
      return code === ErrorCode.NONE ? store.storeGroup(groupId, record) : code;
    });
    void written.then((code) => {
      if (code !== ErrorCode.NONE) this.state.log.warn({ groupId, errorCode: code }, 'could not write the downgrade of a consumer group');
    });
    return written;
  }

  /** Schedules (or moves) the timer `key`, which fences the member (at `memberEpoch` only, unless null). */
  private scheduleFence(key: string, delayMs: number, groupId: string, memberId: string, memberEpoch: number | null): void {
    this.state.timers.schedule(key, delayMs, () => void this.fenceOnTimeout(key, groupId, memberId, memberEpoch));
  }

  /**
   * A timer's fencing: only if the group and the member are still there (and, for the rebalance
   * timeout, still in that epoch). Its records are written as Kafka's timer operations are; one
   * that cannot be written puts the member back and is tried again after TIMER_RETRY_BACKOFF_MS,
   * unless the group's partition is no longer this broker's.
   */
  private async fenceOnTimeout(key: string, groupId: string, memberId: string, memberEpoch: number | null): Promise<void> {
    const group = this.state.consumerGroups.get(groupId);
    const member = group?.members.get(memberId);
    if (!group || !member || (memberEpoch !== null && member.memberEpoch !== memberEpoch)) return;
    const before = group.image();
    this.fence(group, member);
    // Downgraded: the classic group was written as it took over.
    if (this.state.consumerGroups.get(groupId) !== group) return;
    const code = await this.persist(group, before);
    if (code === ErrorCode.NONE) return;
    this.state.log.warn({ groupId, memberId, errorCode: code }, 'could not write the fencing of a consumer group member');
    if (code === ErrorCode.NOT_COORDINATOR || code === ErrorCode.COORDINATOR_LOAD_IN_PROGRESS) return;
    if (group.members.get(memberId) === member) this.scheduleFence(key, TIMER_RETRY_BACKOFF_MS, groupId, memberId, memberEpoch);
  }

  private scheduleSessionTimeout(groupId: string, memberId: string, timeoutMs: number): void {
    this.scheduleFence(consumerSessionKey(groupId, memberId), timeoutMs, groupId, memberId, null);
  }

  /** A member that must revoke partitions has its rebalance timeout to do so, or is fenced. */
  private scheduleRebalanceTimeout(group: ConsumerGroup, member: ConsumerGroupMember): void {
    const key = consumerRebalanceKey(group.groupId, member.memberId);
    if (member.state !== MemberState.UnrevokedPartitions) {
      this.state.timers.cancel(key);
      return;
    }
    const { groupId } = group;
    const { memberId, memberEpoch } = member;
    this.scheduleFence(key, member.rebalanceTimeoutMs, groupId, memberId, memberEpoch);
  }

  private cancelTimers(groupId: string, memberId: string): void {
    for (const key of [consumerSessionKey, consumerRebalanceKey, consumerJoinKey, consumerSyncKey]) this.state.timers.cancel(key(groupId, memberId));
  }

  private sessionTimeoutMs(groupId: string): number {
    return groupOverride(this.groupConfig(groupId), 'consumer.session.timeout.ms') ?? this.config.sessionTimeoutMs;
  }

  private heartbeatIntervalMs(groupId: string): number {
    return groupOverride(this.groupConfig(groupId), 'consumer.heartbeat.interval.ms') ?? this.config.heartbeatIntervalMs;
  }

  /** A group read back from __consumer_offsets: its members' sessions start again (and the rebalance timeouts of those revoking). */
  loadGroup(groupId: string, snapshot: ConsumerGroupSnapshot): void {
    const group = new ConsumerGroup(groupId);
    group.groupEpoch = snapshot.groupEpoch;
    group.metadataHash = snapshot.metadataHash;
    group.assignmentEpoch = Math.max(snapshot.assignmentEpoch, 0);
    group.assignmentTimestamp = snapshot.assignmentTimestamp;
    for (const [regex, resolved] of snapshot.regexes) {
      group.resolvedRegexes.set(regex, new Set(resolved.topics));
      group.lastRegexRefreshMs = Math.max(group.lastRegexRefreshMs, resolved.timestamp);
    }
    for (const [memberId, partitions] of snapshot.targetAssignment) group.targetAssignment.set(memberId, partitions);
    for (const [memberId, subscription] of snapshot.members) {
      const member: ConsumerGroupMember = {
        ...newMember(memberId), ...subscription, subscribedTopicNames: [...subscription.subscribedTopicNames].sort(),
        ...snapshot.currentAssignments.get(memberId),
      };
      group.updateMember(member);
      this.scheduleSessionTimeout(groupId, memberId, member.classic?.sessionTimeoutMs ?? this.sessionTimeoutMs(groupId));
      if (member.classic === null) this.scheduleRebalanceTimeout(group, member);
    }
    this.state.consumerGroups.set(groupId, group);
  }

  // ================================================================= classic members (JoinGroup, SyncGroup, Heartbeat, LeaveGroup)

  /**
   * Kafka's classicGroupJoinToConsumerGroup: a member of the classic protocol joins a consumer
   * group and is a member like the others (its subscription and owned partitions read from its
   * ConsumerProtocolSubscription); the answer comes at once, with its member epoch as generation,
   * no leader and no members: the member syncs to get its assignment.
   */
  async classicJoin(group: ConsumerGroup, req: JoinRequest): Promise<JoinResult> {
    const unknownMember = req.memberId === '';
    const memberId = unknownMember ? generateClusterId() : req.memberId;
    if (group.members.size >= this.config.maxSize && !group.members.has(memberId)) return joinError(memberId, ErrorCode.GROUP_MAX_SIZE_REACHED);
    const supported = group.supportsClassicProtocols(req.protocolType, req.protocols.map((p) => p.name));
    const subscription = supported ? decodeSubscription(req.protocols[0].metadata) : null;
    if (subscription === null) return joinError(memberId, ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
    // JoinGroup v4+ (KIP-394): a dynamic member without id is handed one first.
    if (unknownMember && req.requireKnownMemberId && req.groupInstanceId === null) return joinError(memberId, ErrorCode.MEMBER_ID_REQUIRED);

    const before = group.image();
    const existing = req.groupInstanceId === null ? group.members.get(memberId) : group.staticMember(req.groupInstanceId);
    // A static member of a new member id takes over the previous one's partitions.
    const replaced = existing && existing.memberId !== memberId ? existing : undefined;
    const member = replaced ? { ...replaced, memberId, memberEpoch: JOIN_EPOCH, previousMemberEpoch: JOIN_EPOCH } : existing ?? newMember(memberId);
    const updated: ConsumerGroupMember = {
      ...member,
      instanceId: req.groupInstanceId ?? member.instanceId,
      rackId: subscription.rackId ?? member.rackId,
      rebalanceTimeoutMs: req.rebalanceTimeoutMs,
      subscribedTopicNames: [...new Set(subscription.topics)].sort(),
      subscribedTopicRegex: '',
      clientId: req.clientId,
      clientHost: req.clientHost,
      classic: { sessionTimeoutMs: req.sessionTimeoutMs, protocols: req.protocols },
    };
    const owned = subscription.ownedPartitions.flatMap((t) => {
      const topic = this.topics.topic(t.topic);
      return topic ? [{ topicId: topic.id, partitions: t.partitions }] : [];
    });
    const reconciled = this.updateMember(group, member, updated, replaced, owned);
    const code = await this.persist(group, before);
    if (code !== ErrorCode.NONE) return joinError(memberId, code);
    const { groupId } = group;
    this.state.timers.cancel(consumerJoinKey(groupId, memberId));
    this.scheduleSessionTimeout(groupId, memberId, req.sessionTimeoutMs);
    this.scheduleFence(consumerSyncKey(groupId, memberId), req.rebalanceTimeoutMs, groupId, memberId, null);
    return {
      errorCode: ErrorCode.NONE, memberId, generationId: reconciled.memberEpoch, protocolType: CONSUMER_PROTOCOL_TYPE,
      protocolName: req.protocols[0].name, leader: '', skipAssignment: false, members: [],
    };
  }

  /** Kafka's classicGroupSyncToConsumerGroup: the member's assigned partitions, as ConsumerProtocolAssignment bytes. */
  classicSync(group: ConsumerGroup, req: SyncRequest): SyncResult {
    const member = group.members.get(req.memberId);
    const error = this.classicMemberError(member, req.generationId, req.groupInstanceId);
    if (error) return syncError(error);
    const protocol = member!.classic!.protocols[0];
    if ((req.protocolType !== null && req.protocolType !== CONSUMER_PROTOCOL_TYPE) || (req.protocolName !== null && req.protocolName !== protocol.name)) {
      return syncError(ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
    }
    const rebalance = this.rebalanceInProgress(group, member!);
    if (rebalance) return syncError(rebalance);
    this.state.timers.cancel(consumerSyncKey(group.groupId, req.memberId));
    this.scheduleSessionTimeout(group.groupId, req.memberId, member!.classic!.sessionTimeoutMs);
    const names = new Map(this.topics.topics().map((t) => [t.id, t.name]));
    const assigned = toWire(member!.assigned).flatMap((t) => (names.has(t.topicId) ? [{ topic: names.get(t.topicId)!, partitions: t.partitions }] : []));
    const version = decodeSubscription(protocol.metadata)?.version ?? 0;
    return { errorCode: ErrorCode.NONE, protocolType: CONSUMER_PROTOCOL_TYPE, protocolName: protocol.name, assignment: encodeAssignment(assigned, version) };
  }

  /** Kafka's classicGroupHeartbeatToConsumerGroup: REBALANCE_IN_PROGRESS tells the member to join again. */
  classicHeartbeat(group: ConsumerGroup, memberId: string, groupInstanceId: string | null, generationId: number): number {
    const member = group.members.get(memberId);
    const error = this.classicMemberError(member, generationId, groupInstanceId) || this.rebalanceInProgress(group, member!);
    if (error) return error;
    this.scheduleSessionTimeout(group.groupId, memberId, member!.classic!.sessionTimeoutMs);
    return ErrorCode.NONE;
  }

  /**
   * Kafka's classicGroupLeaveToConsumerGroup: each member (by id, or by instance id) leaves, as
   * with epoch -1. The answer waits for the records; a failed write is its error, the members back.
   */
  async classicLeave(group: ConsumerGroup, leaving: MemberIdentity[]): Promise<LeaveResult> {
    const before = group.image();
    const members = leaving.map((m) => {
      const member = m.groupInstanceId === null ? group.members.get(m.memberId) : group.staticMember(m.groupInstanceId);
      if (!member) return { ...m, errorCode: ErrorCode.UNKNOWN_MEMBER_ID };
      if (m.groupInstanceId !== null && m.memberId !== '' && m.memberId !== member.memberId) return { ...m, errorCode: ErrorCode.FENCED_INSTANCE_ID };
      this.fence(group, member);
      return { ...m, errorCode: ErrorCode.NONE };
    });
    const code = await this.persist(group, before);
    return code === ErrorCode.NONE ? { errorCode: ErrorCode.NONE, members } : { errorCode: code, members: [] };
  }

  /** A classic member's request: the member must be there, of the classic protocol, at the generation (its epoch). */
  private classicMemberError(member: ConsumerGroupMember | undefined, generationId: number, groupInstanceId: string | null): number {
    if (!member || member.classic === null) return ErrorCode.UNKNOWN_MEMBER_ID;
    if (groupInstanceId !== null && member.instanceId !== groupInstanceId) return ErrorCode.FENCED_INSTANCE_ID;
    return generationId === member.memberEpoch ? ErrorCode.NONE : ErrorCode.ILLEGAL_GENERATION;
  }

  /**
   * Kafka's throwIfRebalanceInProgress: a group epoch past the member's means it must join again
   * (unless it is revoking, which its next join reports); it has its rebalance timeout to do so.
   * Also (ours) when partitions it waits for (UNRELEASED_PARTITIONS) have been released: a classic
   * member only learns of its assignment by joining and syncing.
   */
  private rebalanceInProgress(group: ConsumerGroup, member: ConsumerGroupMember): number {
    const behind = group.groupEpoch > member.memberEpoch && member.state !== MemberState.UnrevokedPartitions;
    if (!behind && !this.hasReleasedPartitions(group, member)) return ErrorCode.NONE;
    const key = consumerJoinKey(group.groupId, member.memberId);
    const { groupId } = group;
    const { memberId } = member;
    if (!this.state.timers.has(key)) this.scheduleFence(key, member.rebalanceTimeoutMs, groupId, memberId, null);
    return ErrorCode.REBALANCE_IN_PROGRESS;
  }

  /** A member waiting for partitions (UNRELEASED_PARTITIONS) of which some are free now. */
  private hasReleasedPartitions(group: ConsumerGroup, member: ConsumerGroupMember): boolean {
    if (member.state !== MemberState.UnreleasedPartitions) return false;
    for (const [topicId, partitions] of group.targetAssignment.get(member.memberId) ?? []) {
      for (const p of partitions) if (!member.assigned.get(topicId)?.has(p) && group.ownerEpoch(topicId, p) === -1) return true;
    }
    return false;
  }

  // ================================================================= ConsumerGroupDescribe

  private consumerGroup(groupId: string): ConsumerGroup {
    const group = this.state.consumerGroups.get(groupId);
    if (group) return group;
    if (this.state.streamsGroups.has(groupId) || this.state.shareGroups.has(groupId)) {
      throw new GroupError(ErrorCode.GROUP_ID_NOT_FOUND, `Group ${quoteInMessage(groupId)} is not a consumer group.`);
    }
    const classic = this.state.groups.get(groupId);
    if (classic && !classic.is(GroupState.Dead)) throw new GroupError(ErrorCode.GROUP_ID_NOT_FOUND, `Group ${quoteInMessage(groupId)} is not a consumer group.`);
    throw new GroupError(ErrorCode.GROUP_ID_NOT_FOUND, `Group ${quoteInMessage(groupId)} not found.`);
  }

  describe(groupId: string): ConsumerGroupDescription {
    const blank = { groupId, groupState: '', groupEpoch: 0, assignmentEpoch: 0, assignorName: '', members: [] };
    const statusError = this.state.validateStatus(groupId, true);
    if (statusError) return { ...blank, errorCode: statusError, errorMessage: null };
    let group: ConsumerGroup;
    try {
      group = this.consumerGroup(groupId);
    } catch (err) {
      if (!(err instanceof GroupError)) throw err;
      return { ...blank, errorCode: err.code, errorMessage: err.message };
    }
    const names = new Map(this.topics.topics().map((t) => [t.id, t.name]));
    const described = (partitions: TopicPartitions): DescribedPartitions[] =>
      toWire(partitions).flatMap((t) => (names.has(t.topicId) ? [{ ...t, topicName: names.get(t.topicId)! }] : []));
    return {
      errorCode: ErrorCode.NONE,
      errorMessage: null,
      groupId,
      groupState: group.state,
      groupEpoch: group.groupEpoch,
      assignmentEpoch: group.assignmentEpoch,
      assignorName: this.assignorFor(group.members).name,
      members: [...group.members.values()].map((m) => ({
        memberId: m.memberId, instanceId: m.instanceId, rackId: m.rackId, memberEpoch: m.memberEpoch, clientId: m.clientId,
        clientHost: m.clientHost, subscribedTopicNames: [...m.subscribedTopicNames],
        subscribedTopicRegex: m.subscribedTopicRegex === '' ? null : m.subscribedTopicRegex,
        assignment: described(withoutEpochs(m.assigned)), targetAssignment: described(group.targetAssignment.get(m.memberId) ?? new Map()),
        memberType: m.classic === null ? 1 : 0,
      })),
    };
  }
}

/** The regex as Kafka reads it (RE2/J, whole topic names), or INVALID_REGULAR_EXPRESSION with Kafka's message. */
function compileRegex(regex: string): Re2Pattern {
  try {
    return compileRe2Pattern(regex);
  } catch (err) {
    if (!(err instanceof Re2SyntaxError)) throw err;
    throw new GroupError(ErrorCode.INVALID_REGULAR_EXPRESSION,
      `SubscribedTopicRegex \`${quoteInMessage(regex)}\` is not a valid regular expression: ${err.description}.`);
  }
}

function throwError(err: Error): never {
  throw err;
}

/** A group config override as a number (GROUP config resources hold raw strings), undefined when not set. */
export function groupOverride(configs: Readonly<Record<string, string>> | undefined, name: string): number | undefined {
  const raw = configs?.[name];
  return raw === undefined ? undefined : Number(raw);
}
