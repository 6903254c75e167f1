// One consumer group (KIP-848, Kafka's ConsumerGroup): its members, the group epoch (bumped when
// membership, subscriptions or the subscribed topics change), the target assignment and its
// epoch, who owns which partition now (and at which epoch), and the topics its regular
// expressions resolved to. Like ClassicGroup it does no I/O and holds no timers.
import { ErrorCode } from '../common/errors';
import {
  isReconciledTo, sameAssignment, sameSubscription, type ConsumerGroupMember, type EpochedPartitions, type TopicPartitions,
} from './consumer-member';
import { CONSUMER_PROTOCOL_TYPE } from './consumer-protocol';
import type { ConsumerGroupRecord } from './consumer-records';

/** Kafka's ConsumerGroupState, as DescribeGroups, ListGroups and ConsumerGroupDescribe spell it. */
export enum ConsumerGroupState {
  Empty = 'Empty',
  /** The group epoch moved past the target assignment's: a new one is due. */
  Assigning = 'Assigning',
  /** Some member has not reached the target assignment yet. */
  Reconciling = 'Reconciling',
  Stable = 'Stable',
  Dead = 'Dead',
}

const partitionKey = (topicId: string, partition: number): string => `${topicId}:${partition}`;

export class ConsumerGroup {
  groupEpoch = 0;
  /** The epoch of the target assignment. */
  assignmentEpoch = 0;
  /** When the target assignment was computed (wall clock ms; group.consumer.assignment.interval.ms counts from it). */
  assignmentTimestamp = 0;
  readonly members = new Map<string, ConsumerGroupMember>();
  /** group.instance.id -> member id. */
  private readonly staticMembers = new Map<string, string>();
  /** The target assignment, by member id. */
  readonly targetAssignment = new Map<string, TopicPartitions>();
  /** Owned partitions (assigned or being revoked) -> the owner's member epoch. */
  private readonly partitionEpochs = new Map<string, number>();
  /** Each subscribed regular expression -> the topic names it matched at the last refresh. */
  readonly resolvedRegexes = new Map<string, ReadonlySet<string>>();
  /** When the regular expressions were last resolved against the topics (wall clock ms). */
  lastRegexRefreshMs = -1;
  /** A hash of what the target assignment was computed from: the subscribed topics' ids and partition counts. */
  metadataHash = 0n;
  /** Set once deleted: requests holding it must not use it. */
  dead = false;
  /**
   * What the log lacks after a failed write the group could not be put back from (it had changed
   * again meanwhile): the changes since this image (null: all of the group) go with its next write.
   */
  unwrittenSince: ConsumerGroupImage | null | undefined = undefined;

  constructor(readonly groupId: string) {}

  get state(): ConsumerGroupState {
    if (this.dead) return ConsumerGroupState.Dead;
    if (this.members.size === 0) return ConsumerGroupState.Empty;
    if (this.groupEpoch > this.assignmentEpoch) return ConsumerGroupState.Assigning;
    for (const m of this.members.values()) if (!isReconciledTo(m, this.assignmentEpoch)) return ConsumerGroupState.Reconciling;
    return ConsumerGroupState.Stable;
  }

  staticMember(instanceId: string): ConsumerGroupMember | undefined {
    const memberId = this.staticMembers.get(instanceId);
    return memberId === undefined ? undefined : this.members.get(memberId);
  }

  /** Adds the member, or replaces the one of the same id; its partitions' owner epochs follow. */
  updateMember(member: ConsumerGroupMember): void {
    const old = this.members.get(member.memberId);
    if (old) this.releasePartitions(old);
    this.members.set(member.memberId, member);
    if (member.instanceId !== null) this.staticMembers.set(member.instanceId, member.memberId);
    this.ownPartitions(member.assigned, member.memberEpoch);
    this.ownPartitions(member.pendingRevocation, member.memberEpoch);
  }

  removeMember(memberId: string): void {
    const old = this.members.get(memberId);
    if (!old) return;
    this.releasePartitions(old);
    this.members.delete(memberId);
    if (old.instanceId !== null && this.staticMembers.get(old.instanceId) === memberId) this.staticMembers.delete(old.instanceId);
  }

  /**
   * Kafka's ConsumerGroup.validateOffsetCommit: a commit without member epoch (-1: the admin
   * client, or a consumer outside group management) only while the group is empty, a
   * transactional one without any member fields (TxnOffsetCommit before v3) always; else the
   * member's (not in a transaction, not of the classic protocol: with OffsetCommit v9+), at its
   * current epoch (a member of the classic protocol: ILLEGAL_GENERATION, as its generation). A
   * member of ConsumerGroupHeartbeat may commit at an older epoch, partition by partition
   * (`partitionCommitError`).
   */
  validateOffsetCommit(memberId: string, groupInstanceId: string | null, memberEpoch: number, isTransactional: boolean, apiVersion = 0): number {
    if (memberEpoch < 0 && this.members.size === 0) return ErrorCode.NONE;
    if (isTransactional && memberEpoch === -1 && memberId === '' && groupInstanceId === null) return ErrorCode.NONE;
    const member = this.members.get(memberId);
    if (!member) return ErrorCode.UNKNOWN_MEMBER_ID;
    if (!isTransactional && member.classic === null && apiVersion < 9) return ErrorCode.UNSUPPORTED_VERSION;
    if (member.classic === null && memberEpoch < member.memberEpoch) return ErrorCode.NONE;
    return epochError(member, memberEpoch);
  }

  /**
   * Kafka 4.4's assignment epoch check (KIP-1251) of one partition of a commit that
   * validateOffsetCommit let through: at an epoch older than the member's, the partition must be
   * one the member owned then, assigned to it (or being revoked) at that epoch or before; else
   * STALE_MEMBER_EPOCH. `topicId` undefined: a topic the cluster does not know.
   */
  partitionCommitError(memberId: string, memberEpoch: number, topicId: string | undefined, partition: number): number {
    const member = this.members.get(memberId);
    if (!member || member.classic !== null || memberEpoch >= member.memberEpoch) return ErrorCode.NONE;
    const assignmentEpoch = topicId === undefined
      ? undefined
      : member.assigned.get(topicId)?.get(partition) ?? member.pendingRevocation.get(topicId)?.get(partition);
    return assignmentEpoch !== undefined && assignmentEpoch <= memberEpoch ? ErrorCode.NONE : ErrorCode.STALE_MEMBER_EPOCH;
  }

  /**
   * Kafka's supportsClassicProtocols: a member of the classic protocol may join with the consumer
   * protocol type and one protocol every classic member already there supports.
   */
  supportsClassicProtocols(protocolType: string, protocolNames: readonly string[]): boolean {
    if (protocolType !== CONSUMER_PROTOCOL_TYPE || protocolNames.length === 0) return false;
    const classicMembers = [...this.members.values()].filter((m) => m.classic !== null);
    return protocolNames.some((name) => classicMembers.every((m) => m.classic!.protocols.some((p) => p.name === name)));
  }

  /** Whether some member subscribes to the topic (by name or through its regular expression). */
  isSubscribedToTopic(topic: string): boolean {
    for (const m of this.members.values()) if (this.memberTopicNamesWith(m).has(topic)) return true;
    return false;
  }

  /** Kafka's validateOffsetFetch: no member id and no epoch (the admin client, or a client that does not say) may fetch; else a member at its epoch. */
  validateOffsetFetch(memberId: string | null, memberEpoch: number): number {
    if (memberId === null && memberEpoch < 0) return ErrorCode.NONE;
    const member = memberId === null ? undefined : this.members.get(memberId);
    if (!member) return ErrorCode.UNKNOWN_MEMBER_ID;
    return epochError(member, memberEpoch);
  }

  /** The epoch of the partition's owner, -1 when nobody owns it. */
  ownerEpoch(topicId: string, partition: number): number {
    return this.partitionEpochs.get(partitionKey(topicId, partition)) ?? -1;
  }

  /** The topic names the member subscribes to: its names and what its regular expression resolved to in `regexes`. */
  memberTopicNamesWith(member: ConsumerGroupMember, regexes: ReadonlyMap<string, ReadonlySet<string>> = this.resolvedRegexes): Set<string> {
    const names = new Set(member.subscribedTopicNames);
    if (member.subscribedTopicRegex !== '') for (const t of regexes.get(member.subscribedTopicRegex) ?? []) names.add(t);
    return names;
  }

  /** What the group's records hold, to tell afterwards what changed (`recordsSince`). */
  image(): ConsumerGroupImage {
    return {
      groupEpoch: this.groupEpoch, metadataHash: this.metadataHash, assignmentEpoch: this.assignmentEpoch, assignmentTimestamp: this.assignmentTimestamp,
      members: new Map(this.members), targetAssignment: new Map(this.targetAssignment), resolvedRegexes: new Map(this.resolvedRegexes),
      lastRegexRefreshMs: this.lastRegexRefreshMs,
    };
  }

  /** Whether the group differs from `image` (members, assignments and regexes are immutable values: compared by identity). */
  changedSince(image: ConsumerGroupImage): boolean {
    return this.groupEpoch !== image.groupEpoch || this.metadataHash !== image.metadataHash || this.assignmentEpoch !== image.assignmentEpoch ||
      this.assignmentTimestamp !== image.assignmentTimestamp ||
      this.lastRegexRefreshMs !== image.lastRegexRefreshMs || !sameEntries(this.members, image.members) ||
      !sameEntries(this.targetAssignment, image.targetAssignment) || !sameEntries(this.resolvedRegexes, image.resolvedRegexes);
  }

  /** Puts the group back as `image` has it (Kafka reverts its timeline when a change's records cannot be written). */
  restore(image: ConsumerGroupImage): void {
    this.groupEpoch = image.groupEpoch;
    this.metadataHash = image.metadataHash;
    this.assignmentEpoch = image.assignmentEpoch;
    this.assignmentTimestamp = image.assignmentTimestamp;
    this.lastRegexRefreshMs = image.lastRegexRefreshMs;
    // Every changed member leaves first, so that no partition is released after its restored owner took it.
    const changed = [...this.members.values()].filter((m) => image.members.get(m.memberId) !== m);
    for (const m of changed) this.removeMember(m.memberId);
    for (const m of image.members.values()) if (!this.members.has(m.memberId)) this.updateMember(m);
    replaceEntries(this.targetAssignment, image.targetAssignment);
    replaceEntries(this.resolvedRegexes, image.resolvedRegexes);
  }

  /**
   * The records that take the group's log from `before` (null: nothing written yet) to now, in
   * Kafka's order: tombstones of members gone, then members, regular expressions, the group epoch,
   * the target assignment and its epoch, the current assignments.
   */
  recordsSince(before: ConsumerGroupImage | null): ConsumerGroupRecord[] {
    const groupId = this.groupId;
    const records: ConsumerGroupRecord[] = [];
    for (const memberId of before?.members.keys() ?? []) {
      if (this.members.has(memberId)) continue;
      records.push({ kind: 'currentAssignment', groupId, memberId, value: null }, { kind: 'targetMember', groupId, memberId, value: null },
        { kind: 'member', groupId, memberId, value: null });
    }
    for (const m of this.members.values()) {
      const old = before?.members.get(m.memberId);
      if (!old || !sameMemberMetadata(old, m)) records.push({ kind: 'member', groupId, memberId: m.memberId, value: memberSubscription(m) });
    }
    for (const [regex, topics] of this.resolvedRegexes) {
      if (before?.resolvedRegexes.get(regex) === topics) continue;
      records.push({ kind: 'regex', groupId, regex, value: { topics: [...topics].sort(), version: 0, timestamp: this.lastRegexRefreshMs } });
    }
    for (const regex of before?.resolvedRegexes.keys() ?? []) {
      if (!this.resolvedRegexes.has(regex)) records.push({ kind: 'regex', groupId, regex, value: null });
    }
    if (!before || before.groupEpoch !== this.groupEpoch || before.metadataHash !== this.metadataHash) {
      records.push({ kind: 'groupEpoch', groupId, value: { epoch: this.groupEpoch, metadataHash: this.metadataHash } });
    }
    for (const [memberId, partitions] of this.targetAssignment) {
      if (before?.targetAssignment.get(memberId) !== partitions) records.push({ kind: 'targetMember', groupId, memberId, value: partitions });
    }
    if (!before || before.assignmentEpoch !== this.assignmentEpoch || before.assignmentTimestamp !== this.assignmentTimestamp) {
      records.push({ kind: 'targetEpoch', groupId, value: { assignmentEpoch: this.assignmentEpoch, assignmentTimestamp: this.assignmentTimestamp } });
    }
    for (const m of this.members.values()) {
      const old = before?.members.get(m.memberId);
      if (!old || !sameCurrentAssignment(old, m)) {
        records.push({
          kind: 'currentAssignment', groupId, memberId: m.memberId, value: {
            memberEpoch: m.memberEpoch, previousMemberEpoch: m.previousMemberEpoch, state: m.state,
            assigned: m.assigned, pendingRevocation: m.pendingRevocation,
          },
        });
      }
    }
    return records;
  }

  /** The tombstones of every record of the group (Kafka's createGroupTombstoneRecords). */
  tombstones(): ConsumerGroupRecord[] {
    const groupId = this.groupId;
    const records: ConsumerGroupRecord[] = [];
    for (const memberId of new Set([...this.members.keys(), ...this.targetAssignment.keys()])) {
      records.push({ kind: 'currentAssignment', groupId, memberId, value: null }, { kind: 'targetMember', groupId, memberId, value: null },
        { kind: 'member', groupId, memberId, value: null });
    }
    for (const regex of this.resolvedRegexes.keys()) records.push({ kind: 'regex', groupId, regex, value: null });
    records.push({ kind: 'targetEpoch', groupId, value: null }, { kind: 'groupEpoch', groupId, value: null });
    return records;
  }

  private ownPartitions(partitions: EpochedPartitions, epoch: number): void {
    for (const [topicId, ps] of partitions) for (const p of ps.keys()) this.partitionEpochs.set(partitionKey(topicId, p), epoch);
  }

  private releasePartitions(member: ConsumerGroupMember): void {
    for (const partitions of [member.assigned, member.pendingRevocation]) {
      for (const [topicId, ps] of partitions) {
        for (const p of ps.keys()) this.partitionEpochs.delete(partitionKey(topicId, p));
      }
    }
  }
}

/** Kafka's validateMemberEpoch: the member's epoch or nothing, told as its protocol tells it. */
function epochError(member: ConsumerGroupMember, epoch: number): number {
  if (epoch === member.memberEpoch) return ErrorCode.NONE;
  return member.classic === null ? ErrorCode.STALE_MEMBER_EPOCH : ErrorCode.ILLEGAL_GENERATION;
}

/** The parts of a group its records hold (ConsumerGroup.image). */
export interface ConsumerGroupImage {
  readonly groupEpoch: number;
  readonly metadataHash: bigint;
  readonly assignmentEpoch: number;
  readonly assignmentTimestamp: number;
  readonly members: ReadonlyMap<string, ConsumerGroupMember>;
  readonly targetAssignment: ReadonlyMap<string, TopicPartitions>;
  readonly resolvedRegexes: ReadonlyMap<string, ReadonlySet<string>>;
  readonly lastRegexRefreshMs: number;
}

function sameEntries<K, V>(a: ReadonlyMap<K, V>, b: ReadonlyMap<K, V>): boolean {
  if (a.size !== b.size) return false;
  for (const [k, v] of a) if (b.get(k) !== v) return false;
  return true;
}

function replaceEntries<K, V>(target: Map<K, V>, source: ReadonlyMap<K, V>): void {
  target.clear();
  for (const [k, v] of source) target.set(k, v);
}

function memberSubscription(m: ConsumerGroupMember) {
  return {
    instanceId: m.instanceId, rackId: m.rackId, clientId: m.clientId, clientHost: m.clientHost, subscribedTopicNames: [...m.subscribedTopicNames],
    subscribedTopicRegex: m.subscribedTopicRegex, rebalanceTimeoutMs: m.rebalanceTimeoutMs, serverAssignor: m.serverAssignor,
    classic: m.classic,
  };
}

/** What the member record holds is the same. */
function sameMemberMetadata(a: ConsumerGroupMember, b: ConsumerGroupMember): boolean {
  return sameSubscription(a, b) && a.instanceId === b.instanceId && a.rackId === b.rackId && a.clientId === b.clientId &&
    a.clientHost === b.clientHost && a.rebalanceTimeoutMs === b.rebalanceTimeoutMs && a.serverAssignor === b.serverAssignor &&
    sameClassicMetadata(a.classic, b.classic);
}

function sameClassicMetadata(a: ConsumerGroupMember['classic'], b: ConsumerGroupMember['classic']): boolean {
  if (a === null || b === null) return a === b;
  return a.sessionTimeoutMs === b.sessionTimeoutMs && a.protocols.length === b.protocols.length &&
    a.protocols.every((p, i) => p.name === b.protocols[i].name && p.metadata.equals(b.protocols[i].metadata));
}

/** What the current assignment record holds is the same. */
function sameCurrentAssignment(a: ConsumerGroupMember, b: ConsumerGroupMember): boolean {
  return a.memberEpoch === b.memberEpoch && a.previousMemberEpoch === b.previousMemberEpoch && a.state === b.state &&
    sameAssignment(a.assigned, b.assigned) && sameAssignment(a.pendingRevocation, b.pendingRevocation);
}
