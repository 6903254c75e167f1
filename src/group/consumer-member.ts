// One member of a consumer group (KIP-848, Kafka's ConsumerGroupMember): what it subscribes to,
// its epochs, where its reconciliation stands, and the partitions it owns. Members are immutable
// values: a heartbeat builds the updated member from the current one, compares the two (a changed
// subscription bumps the group epoch) and then puts it in the group.

/** Partitions by topic id (32 hex chars, as the metadata keeps them). */
export type TopicPartitions = Map<string, Set<number>>;

/** Partitions by topic id, each with the member epoch at which it was assigned to the member. */
export type EpochedPartitions = Map<string, Map<number, number>>;

/** Kafka's MemberState (./consumer-records.ts has the int8 its records carry). */
export enum MemberState {
  /** Must revoke partitions before it gets anything new. */
  UnrevokedPartitions = 'unrevoked_partitions',
  /** At the target epoch, waiting for partitions other members still own. */
  UnreleasedPartitions = 'unreleased_partitions',
  Stable = 'stable',
}

/** Epoch of a member joining (or rejoining after being fenced). */
export const JOIN_EPOCH = 0;
/** Epoch of a member leaving the group. */
export const LEAVE_EPOCH = -1;
/** Epoch of a static member leaving for a while (its instance id stays reserved for a replacement). */
export const STATIC_LEAVE_EPOCH = -2;

/** What a member that joined with JoinGroup (the classic protocol) asked for. */
export interface ClassicMemberMetadata {
  readonly sessionTimeoutMs: number;
  readonly protocols: readonly { readonly name: string; readonly metadata: Buffer }[];
}

export interface ConsumerGroupMember {
  readonly memberId: string;
  readonly instanceId: string | null;
  readonly rackId: string | null;
  readonly clientId: string;
  readonly clientHost: string;
  readonly rebalanceTimeoutMs: number;
  readonly serverAssignor: string | null;
  /** Sorted, without duplicates. */
  readonly subscribedTopicNames: readonly string[];
  /** '' when none. */
  readonly subscribedTopicRegex: string;
  readonly memberEpoch: number;
  readonly previousMemberEpoch: number;
  readonly state: MemberState;
  readonly assigned: EpochedPartitions;
  readonly pendingRevocation: EpochedPartitions;
  /** Set for a member of the classic protocol (JoinGroup, SyncGroup, Heartbeat); null for ConsumerGroupHeartbeat's. */
  readonly classic: ClassicMemberMetadata | null;
}

export function newMember(memberId: string): ConsumerGroupMember {
  return {
    memberId, instanceId: null, rackId: null, clientId: '', clientHost: '', rebalanceTimeoutMs: -1,
    serverAssignor: null, subscribedTopicNames: [], subscribedTopicRegex: '', memberEpoch: JOIN_EPOCH,
    previousMemberEpoch: JOIN_EPOCH, state: MemberState.Stable, assigned: new Map(), pendingRevocation: new Map(), classic: null,
  };
}

/** Kafka's Builder.updateMemberEpoch: the epoch it had becomes the previous one (even if unchanged). */
export function withMemberEpoch(m: ConsumerGroupMember, memberEpoch: number): ConsumerGroupMember {
  return { ...m, memberEpoch, previousMemberEpoch: m.memberEpoch };
}

/** What the member asks for: a change of any of these is a change of subscription. */
export function sameSubscription(a: ConsumerGroupMember, b: ConsumerGroupMember): boolean {
  return a.subscribedTopicRegex === b.subscribedTopicRegex &&
    a.subscribedTopicNames.length === b.subscribedTopicNames.length &&
    a.subscribedTopicNames.every((t, i) => t === b.subscribedTopicNames[i]);
}

/** Whether the member is at `targetEpoch` with nothing left to reconcile. */
export function isReconciledTo(m: ConsumerGroupMember, targetEpoch: number): boolean {
  return m.state === MemberState.Stable && m.memberEpoch === targetEpoch;
}

export function withoutEpochs(partitions: EpochedPartitions): TopicPartitions {
  return new Map([...partitions].map(([topicId, p]) => [topicId, new Set(p.keys())]));
}

export function sameAssignment(a: EpochedPartitions, b: EpochedPartitions): boolean {
  if (a.size !== b.size) return false;
  for (const [topicId, partitions] of a) {
    const other = b.get(topicId);
    if (!other || other.size !== partitions.size) return false;
    for (const p of partitions.keys()) if (!other.has(p)) return false;
  }
  return true;
}

/** As the protocol carries them: each topic's partitions, sorted. */
export function toWire(partitions: TopicPartitions | EpochedPartitions): { topicId: string; partitions: number[] }[] {
  return [...partitions].map(([topicId, p]) => ({ topicId, partitions: [...p.keys()].sort((x, y) => x - y) }));
}
