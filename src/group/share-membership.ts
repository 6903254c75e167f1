// Share groups' membership (KIP-932) as Kafka 4.4's GroupMetadataManager serves it:
// ShareGroupHeartbeat (join with epoch 0 and the client's own member id, heartbeat, leave with -1)
// and ShareGroupDescribe. A heartbeat is one synchronous step, so no other request interleaves:
// 1. the member is created or updated; a new member, a changed subscription, a change of the
//    subscribed topics (name, id, partition count) or share-partitions newly initialized bump the
//    group epoch;
// 2. a group epoch past the target assignment's computes a new one with the `simple` assignor
//    (./share-assignor.ts) over the initialized share-partitions, at most once per
//    share.assignment.interval.ms;
// 3. the member takes its target at once (share members own no partition exclusively: there is no
//    revocation phase), restricted to the topics it subscribes to.
// Then the subscribed partitions the share coordinator does not hold yet are initialized through
// the ShareStateInitializer (InitializeShareGroupState, in the background as in Kafka: the answer
// does not wait; a later heartbeat sees them initialized and assigns them).
// Timers: each member's session (the group's share.session.timeout.ms, else
// group.share.session.timeout.ms) fences it. Share groups are kept in memory (not in
// __consumer_offsets): members join again after a restart.
import { ErrorCode, quoteInMessage } from '../common/errors';
import type { CoordinatorState } from './coordinator-state';
import { GroupError, unknownMemberError } from './group-error';
import { groupOverride, type ConsumerGroupTopics, type DescribedPartitions, type GroupConfigLookup } from './consumer-coordinator';
import { toWire, type TopicPartitions } from './consumer-member';
import { assignSharePartitions, SHARE_ASSIGNOR_NAME } from './share-assignor';
import { ShareGroup, type ShareGroupMember } from './share-group';
import { shareSessionKey } from './timers';

export interface ShareGroupConfig {
  /** group.share.session.timeout.ms */
  sessionTimeoutMs: number;
  /** group.share.heartbeat.interval.ms */
  heartbeatIntervalMs: number;
  /** group.share.max.size */
  maxSize: number;
  /** group.share.assignment.interval.ms */
  assignmentIntervalMs: number;
}

/**
 * Initializes share-partitions at the share coordinator (InitializeShareGroupState with the group
 * epoch as state epoch and start offset -1, for share.auto.offset.reset to decide): resolves once
 * all are initialized, rejects if any is refused (none then counts as initialized; a later
 * heartbeat asks again).
 */
export type ShareStateInitializer = (groupId: string, stateEpoch: number, topics: readonly { topicId: string; partitions: readonly number[] }[]) => Promise<void>;

export interface ShareHeartbeatRequest {
  groupId: string;
  memberId: string;
  memberEpoch: number;
  rackId: string | null;
  /** null: unchanged since the last heartbeat. */
  subscribedTopicNames: readonly string[] | null;
  clientId: string;
  clientHost: string;
}

type WireAssignment = { topicId: string; partitions: number[] }[];

export interface ShareHeartbeatResult {
  errorCode: number;
  errorMessage: string | null;
  memberId: string | null;
  memberEpoch: number;
  heartbeatIntervalMs: number;
  /** Sent when joining, on a heartbeat with the subscription, or when it changed; else null. */
  assignment: WireAssignment | null;
}

export interface ShareGroupDescription {
  errorCode: number;
  errorMessage: string | null;
  groupId: string;
  groupState: string;
  groupEpoch: number;
  assignmentEpoch: number;
  assignorName: string;
  members: {
    memberId: string; rackId: string | null; memberEpoch: number; clientId: string; clientHost: string;
    subscribedTopicNames: string[]; assignment: DescribedPartitions[];
  }[];
}

/** A group as the share admin APIs (DescribeShareGroupOffsets, AlterShareGroupOffsets, DeleteShareGroupOffsets, DeleteGroups) see it. */
export type ShareGroupLookup =
  /** No group of that id. */
  | { readonly found: 'none' }
  /** A group of another kind (classic, consumer, streams): Kafka's "Group g is not a share group." */
  | { readonly found: 'other-type' }
  /** This broker does not serve the group now (NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS...). */
  | { readonly found: 'error'; readonly errorCode: number }
  | {
    readonly found: 'share';
    readonly memberCount: number;
    /** The share-partitions whose state the share coordinator holds (Kafka's initialized topics), by topic id, sorted. */
    readonly statePartitions: ReadonlyMap<string, readonly number[]>;
  };

/** Kafka's group.share.initialize.retry.interval.ms default: partitions still initializing after this long are asked for again. */
const INITIALIZE_RETRY_INTERVAL_MS = 30_000;

const LEAVE_EPOCH = -1;

const NOTHING: ShareHeartbeatResult = { errorCode: ErrorCode.NONE, errorMessage: null, memberId: null, memberEpoch: 0, heartbeatIntervalMs: 0, assignment: null };

export class ShareGroupManager {
  constructor(
    private readonly state: CoordinatorState,
    private readonly config: ShareGroupConfig,
    private readonly topics: ConsumerGroupTopics,
    /** Whether the id is a group of another kind (classic, consumer, streams). */
    private readonly otherKind: (groupId: string) => boolean,
    private readonly initializeState: ShareStateInitializer = () => Promise.resolve(),
    private readonly groupConfig: GroupConfigLookup = () => undefined,
  ) {}

  heartbeat(req: ShareHeartbeatRequest): ShareHeartbeatResult {
    try {
      if (this.state.closed) throw new GroupError(ErrorCode.COORDINATOR_NOT_AVAILABLE);
      validate(req);
      const statusError = this.state.validateStatus(req.groupId, false);
      if (statusError) throw new GroupError(statusError);
      return req.memberEpoch === LEAVE_EPOCH ? this.leave(req) : this.memberHeartbeat(req);
    } catch (err) {
      if (!(err instanceof GroupError)) throw err;
      return { ...NOTHING, errorCode: err.code, errorMessage: err.message || null };
    }
  }

  private memberHeartbeat(req: ShareHeartbeatRequest): ShareHeartbeatResult {
    const now = this.state.now();
    const joining = req.memberEpoch === 0;
    const group = this.getOrMaybeCreateGroup(req.groupId, joining);
    if (group.members.size >= this.config.maxSize && !group.members.has(req.memberId)) {
      throw new GroupError(ErrorCode.GROUP_MAX_SIZE_REACHED, `The share group has reached its maximum capacity of ${this.config.maxSize} members.`);
    }
    const existing = group.members.get(req.memberId);
    if (!existing && !joining) {
      throw unknownMemberError(req.groupId, req.memberId);
    }
    const member: ShareGroupMember = existing ?? {
      memberId: req.memberId, rackId: null, clientId: '', clientHost: '', subscribedTopicNames: [], memberEpoch: 0, previousMemberEpoch: 0, assigned: new Map(),
    };
    if (!joining) checkMemberEpoch(member, req.memberEpoch);
    const updated: ShareGroupMember = {
      ...member,
      rackId: req.rackId ?? member.rackId,
      subscribedTopicNames: req.subscribedTopicNames === null ? member.subscribedTopicNames : [...new Set(req.subscribedTopicNames)].sort(),
      clientId: req.clientId,
      clientHost: req.clientHost,
    };
    const subscriptionChanged = existing === undefined || !sameNames(member.subscribedTopicNames, updated.subscribedTopicNames);

    // 1. The group epoch.
    const members = new Map(group.members).set(updated.memberId, updated);
    const subscribed = new Set([...members.values()].flatMap((m) => m.subscribedTopicNames));
    const metadataHash = this.metadataHash(subscribed);
    const bumpEpoch = subscriptionChanged || (group.assignmentEpoch >= group.groupEpoch && this.initializedAssignmentPending(group)) ||
      metadataHash !== group.metadataHash;
    const groupEpoch = bumpEpoch ? group.groupEpoch + 1 : group.groupEpoch;

    // 2. The target assignment, new if the group epoch moved past it and the interval allows.
    let targetAssignment: Map<string, TopicPartitions> | null = null;
    const interval = this.assignmentIntervalMs(group.groupId);
    if (groupEpoch > group.assignmentEpoch && (group.assignmentTimestamp === 0 || interval === 0 || now >= group.assignmentTimestamp + interval)) {
      targetAssignment = assignSharePartitions({
        members: [...members.values()].map((m) => ({ memberId: m.memberId, subscribedTopicIds: this.topicIds(m.subscribedTopicNames) })),
        assignable: this.assignable(group, subscribed),
        previous: group.targetAssignment,
      });
    }
    const targetEpoch = targetAssignment ? groupEpoch : group.assignmentEpoch;
    const target = (targetAssignment ?? group.targetAssignment).get(updated.memberId) ?? new Map();

    // 3. The member takes its target (Kafka's ShareGroupAssignmentBuilder).
    const reconciled: ShareGroupMember = updated.memberEpoch !== targetEpoch || subscriptionChanged
      ? {
        ...updated,
        memberEpoch: targetEpoch,
        previousMemberEpoch: updated.memberEpoch !== targetEpoch ? updated.memberEpoch : updated.previousMemberEpoch,
        assigned: restrictTo(target, this.topicIds(updated.subscribedTopicNames)),
      }
      : updated;

    // Everything checked: the group changes in one go.
    if (!this.state.shareGroups.has(group.groupId)) this.state.shareGroups.set(group.groupId, group);
    group.groupEpoch = groupEpoch;
    group.metadataHash = metadataHash;
    if (targetAssignment) {
      group.targetAssignment.clear();
      for (const [id, partitions] of targetAssignment) group.targetAssignment.set(id, partitions);
      group.assignmentEpoch = targetEpoch;
      group.assignmentTimestamp = now;
    }
    group.members.set(reconciled.memberId, reconciled);
    this.scheduleSessionTimeout(group.groupId, reconciled.memberId);
    this.maybeInitialize(group, now);

    const sendAssignment = joining || req.subscribedTopicNames !== null || !samePartitions(member.assigned, reconciled.assigned);
    return {
      errorCode: ErrorCode.NONE, errorMessage: null, memberId: reconciled.memberId, memberEpoch: reconciled.memberEpoch,
      heartbeatIntervalMs: this.heartbeatIntervalMs(group.groupId), assignment: sendAssignment ? toWire(reconciled.assigned) : null,
    };
  }

  /** Kafka's getOrMaybeCreateShareGroup: any group of another kind under the id refuses. */
  private getOrMaybeCreateGroup(groupId: string, create: boolean): ShareGroup {
    const group = this.state.shareGroups.get(groupId);
    if (group) return group;
    if (this.otherKind(groupId)) throw new GroupError(ErrorCode.GROUP_ID_NOT_FOUND, `Group ${quoteInMessage(groupId)} is not a share group.`);
    if (!create) throw new GroupError(ErrorCode.GROUP_ID_NOT_FOUND, `Share group ${quoteInMessage(groupId)} not found.`);
    return new ShareGroup(groupId);
  }

  /** The ids of those of `names` that exist now. */
  private topicIds(names: readonly string[]): Set<string> {
    const ids = new Set<string>();
    for (const name of names) {
      const topic = this.topics.topic(name);
      if (topic) ids.add(topic.id);
    }
    return ids;
  }

  /** The subscribed topics as they are now: a change (created, deleted, re-created, more partitions) bumps the group epoch. */
  private metadataHash(subscribed: ReadonlySet<string>): string {
    return [...subscribed].sort().map((name) => {
      const topic = this.topics.topic(name);
      return topic ? `${name}:${topic.id}:${topic.partitions.length}` : `${name}:-`;
    }).join(',');
  }

  /** The initialized share-partitions of the subscribed topics that exist (what the assignor may hand out). */
  private assignable(group: ShareGroup, subscribed: ReadonlySet<string>): Map<string, number[]> {
    const assignable = new Map<string, number[]>();
    for (const name of subscribed) {
      const topic = this.topics.topic(name);
      const initialized = topic ? group.initialized.get(topic.id) : undefined;
      if (!topic || initialized?.topicName !== name) continue;
      assignable.set(topic.id, [...initialized.partitions].filter((p) => p < topic.partitions.length).sort((a, b) => a - b));
    }
    return assignable;
  }

  /** Kafka's initializedAssignmentPending: initialized partitions of a subscribed topic that the target assignment lacks. */
  private initializedAssignmentPending(group: ShareGroup): boolean {
    if (group.members.size === 0 || group.initialized.size === 0) return false;
    const subscribed = group.subscribedTopicNames();
    const targeted = new Map<string, Set<number>>();
    for (const assignment of group.targetAssignment.values()) {
      for (const [topicId, ps] of assignment) for (const p of ps) targeted.set(topicId, (targeted.get(topicId) ?? new Set()).add(p));
    }
    for (const [topicId, t] of group.initialized) {
      if (!subscribed.has(t.topicName)) continue;
      const have = targeted.get(topicId);
      if (!have || have.size !== t.partitions.size || [...t.partitions].some((p) => !have.has(p))) return true;
    }
    return false;
  }

  /**
   * Kafka's maybeCreateInitializeShareGroupStateRequest: the subscribed partitions neither
   * initialized nor being initialized (for less than the retry interval) are initialized now, in the
   * background; the group learns the outcome when it comes (if it still lives).
   */
  private maybeInitialize(group: ShareGroup, now: number): void {
    const toInitialize: { topicId: string; topicName: string; partitions: number[] }[] = [];
    for (const name of group.subscribedTopicNames()) {
      const topic = this.topics.topic(name);
      if (!topic) continue;
      const pending = group.initializing.get(topic.id);
      if (pending && now - pending.sinceMs >= INITIALIZE_RETRY_INTERVAL_MS) group.initializing.delete(topic.id);
      const known = group.knownPartitions(topic.id, name);
      const missing = topic.partitions.map((p) => p.index).filter((p) => !known.has(p));
      if (missing.length === 0) continue;
      const entry = group.initializing.get(topic.id);
      group.initializing.set(topic.id, { topicName: name, partitions: new Set([...entry?.partitions ?? [], ...missing]), sinceMs: now });
      toInitialize.push({ topicId: topic.id, topicName: name, partitions: missing });
    }
    if (toInitialize.length === 0) return;
    const stateEpoch = group.groupEpoch;
    void this.initializeState(group.groupId, stateEpoch, toInitialize.map(({ topicId, partitions }) => ({ topicId, partitions }))).then(
      () => {
        if (this.state.shareGroups.get(group.groupId) === group) group.markInitialized(toInitialize);
      },
      (err: unknown) => {
        this.state.log.warn({ err, groupId: group.groupId }, 'could not initialize the share-partitions of a share group');
        if (this.state.shareGroups.get(group.groupId) === group) group.unmarkInitializing(toInitialize);
      },
    );
  }

  // ================================================================= leaving and fencing

  private leave(req: ShareHeartbeatRequest): ShareHeartbeatResult {
    const group = this.existingGroup(req.groupId);
    const member = group.members.get(req.memberId);
    if (!member) throw unknownMemberError(req.groupId, req.memberId);
    this.fence(group, member.memberId);
    return { ...NOTHING, memberId: req.memberId, memberEpoch: LEAVE_EPOCH };
  }

  /** The member leaves the group: the group epoch is bumped (with the hash of what the others subscribe to), for a new target assignment. */
  private fence(group: ShareGroup, memberId: string): void {
    group.members.delete(memberId);
    group.targetAssignment.delete(memberId);
    this.state.timers.cancel(shareSessionKey(group.groupId, memberId));
    group.groupEpoch++;
    group.metadataHash = this.metadataHash(group.subscribedTopicNames());
  }

  private scheduleSessionTimeout(groupId: string, memberId: string): void {
    this.state.timers.schedule(shareSessionKey(groupId, memberId), this.sessionTimeoutMs(groupId), () => {
      const group = this.state.shareGroups.get(groupId);
      if (group?.members.has(memberId)) {
        this.state.log.info({ groupId, memberId }, 'share group member fenced: its session timed out');
        this.fence(group, memberId);
      }
    });
  }

  private sessionTimeoutMs(groupId: string): number {
    return groupOverride(this.groupConfig(groupId), 'share.session.timeout.ms') ?? this.config.sessionTimeoutMs;
  }

  private heartbeatIntervalMs(groupId: string): number {
    return groupOverride(this.groupConfig(groupId), 'share.heartbeat.interval.ms') ?? this.config.heartbeatIntervalMs;
  }

  private assignmentIntervalMs(groupId: string): number {
    return groupOverride(this.groupConfig(groupId), 'share.assignment.interval.ms') ?? this.config.assignmentIntervalMs;
  }

  // ================================================================= describe

  /** Kafka's shareGroup(groupId): GROUP_ID_NOT_FOUND for an unknown id or one of another kind. */
  private existingGroup(groupId: string): ShareGroup {
    const group = this.state.shareGroups.get(groupId);
    if (group) return group;
    throw new GroupError(ErrorCode.GROUP_ID_NOT_FOUND,
      this.otherKind(groupId) ? `Group ${quoteInMessage(groupId)} is not a share group.` : `Group ${quoteInMessage(groupId)} not found.`);
  }

  describe(groupId: string): ShareGroupDescription {
    const none = (errorCode: number, errorMessage: string | null): ShareGroupDescription => ({
      errorCode, errorMessage, groupId, groupState: '', groupEpoch: 0, assignmentEpoch: 0, assignorName: '', members: [],
    });
    const statusError = this.state.validateStatus(groupId, false);
    if (statusError) return none(statusError, null);
    let group: ShareGroup;
    try {
      group = this.existingGroup(groupId);
    } catch (err) {
      if (!(err instanceof GroupError)) throw err;
      return none(err.code, err.message);
    }
    const topicName = (topicId: string) => this.topics.topics().find((t) => t.id === topicId)?.name ?? group.initialized.get(topicId)?.topicName ?? '';
    return {
      errorCode: ErrorCode.NONE, errorMessage: null, groupId, groupState: group.state, groupEpoch: group.groupEpoch,
      assignmentEpoch: group.assignmentEpoch, assignorName: SHARE_ASSIGNOR_NAME,
      members: [...group.members.values()].map((m) => ({
        memberId: m.memberId, rackId: m.rackId, memberEpoch: m.memberEpoch, clientId: m.clientId, clientHost: m.clientHost,
        subscribedTopicNames: [...m.subscribedTopicNames],
        assignment: toWire(m.assigned).map((t) => ({ ...t, topicName: topicName(t.topicId) })),
      })),
    };
  }

  // ================================================================= the share admin APIs

  lookup(groupId: string): ShareGroupLookup {
    const statusError = this.state.validateStatus(groupId, false);
    if (statusError) return { found: 'error', errorCode: statusError };
    const group = this.state.shareGroups.get(groupId);
    if (!group) return this.otherKind(groupId) ? { found: 'other-type' } : { found: 'none' };
    return {
      found: 'share', memberCount: group.members.size,
      statePartitions: new Map([...group.initialized].map(([topicId, t]) => [topicId, [...t.partitions].sort((a, b) => a - b)])),
    };
  }

  /**
   * AlterShareGroupOffsets initialized these share-partitions: the group has state for them (an
   * Empty share group is made if the id has none, as Kafka's getOrMaybeCreatePersistedShareGroup).
   */
  markInitialized(groupId: string, topics: readonly { topicId: string; topicName: string; partitions: readonly number[] }[]): void {
    if (this.state.validateStatus(groupId, false) !== ErrorCode.NONE || this.otherKind(groupId)) return;
    let group = this.state.shareGroups.get(groupId);
    if (!group) {
      group = new ShareGroup(groupId);
      this.state.shareGroups.set(groupId, group);
    }
    const held = group.initialized;
    const added = topics.some((t) => t.partitions.some((p) => held.get(t.topicId)?.topicName !== t.topicName || !held.get(t.topicId)!.partitions.has(p)));
    group.markInitialized(topics);
    // Partitions new to the group bump its epoch, as Kafka's initializeShareGroupState; an empty
    // group has nothing to assign, so its assignment is at that epoch too.
    if (!added) return;
    group.groupEpoch++;
    if (group.members.size === 0) group.assignmentEpoch = group.groupEpoch;
  }

  /** DeleteShareGroupOffsets deleted these topics' share state: the group has none for them any more. */
  forgetTopics(groupId: string, topicIds: readonly string[]): void {
    const group = this.state.shareGroups.get(groupId);
    for (const topicId of topicIds) {
      group?.initialized.delete(topicId);
      group?.initializing.delete(topicId);
    }
  }
}

/** Kafka's throwIfShareGroupHeartbeatRequestIsInvalid, with its messages. */
function validate(req: ShareHeartbeatRequest): void {
  const invalid = (message: string): never => {
    throw new GroupError(ErrorCode.INVALID_REQUEST, message);
  };
  if (req.memberId === '') invalid('MemberId can\'t be empty.');
  if (req.groupId === '') invalid('GroupId can\'t be empty.');
  if (req.rackId === '') invalid('RackId can\'t be empty.');
  if (req.memberEpoch === 0) {
    if (req.subscribedTopicNames === null || req.subscribedTopicNames.length === 0) invalid('SubscribedTopicNames must be set in first request.');
  } else if (req.memberEpoch < LEAVE_EPOCH) {
    invalid('MemberEpoch is invalid.');
  }
}

/** Kafka's throwIfShareGroupMemberEpochIsInvalid: a greater epoch is fenced, a smaller one unless it is the previous one. */
function checkMemberEpoch(member: ShareGroupMember, epoch: number): void {
  if (epoch > member.memberEpoch) {
    throw new GroupError(ErrorCode.FENCED_MEMBER_EPOCH, `The share group member has a greater member epoch (${epoch}) than the one known by the ` +
      `group coordinator (${member.memberEpoch}). The member must abandon all its partitions and rejoin.`);
  }
  if (epoch < member.memberEpoch && epoch !== member.previousMemberEpoch) {
    throw new GroupError(ErrorCode.FENCED_MEMBER_EPOCH, `The share group member has a smaller member epoch (${epoch}) than the one known by the ` +
      `group coordinator (${member.memberEpoch}), and it does not match the previous member epoch (${member.previousMemberEpoch}). ` +
      'The member must abandon all its partitions and rejoin.');
  }
}

function sameNames(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((name, i) => name === b[i]);
}

function samePartitions(a: TopicPartitions, b: TopicPartitions): boolean {
  if (a.size !== b.size) return false;
  for (const [topicId, ps] of a) {
    const other = b.get(topicId);
    if (!other || other.size !== ps.size || [...ps].some((p) => !other.has(p))) return false;
  }
  return true;
}

/** The partitions of `assignment` in the topics `topicIds`. */
function restrictTo(assignment: TopicPartitions, topicIds: ReadonlySet<string>): TopicPartitions {
  return new Map([...assignment].filter(([topicId]) => topicIds.has(topicId)).map(([topicId, ps]) => [topicId, new Set(ps)]));
}

