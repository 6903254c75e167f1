// The incremental reconciliation of a consumer group member (Kafka's CurrentAssignmentBuilder):
// given the member as it is and the group's target assignment, the member's next state.
// - A member first revokes what it must give up: it stays in its epoch, in UNREVOKED_PARTITIONS,
//   until its heartbeat's owned partitions no longer list them.
// - Then it moves to the target epoch and gets the partitions of its target that no other member
//   owns any more; those still owned elsewhere wait (UNRELEASED_PARTITIONS) and come on a later
//   heartbeat, once released. So a partition never has two owners.
import {
  MemberState, withMemberEpoch, type ConsumerGroupMember, type EpochedPartitions, type TopicPartitions,
} from './consumer-member';

export interface ReconciliationTarget {
  epoch: number;
  partitions: TopicPartitions;
  /** The topics the member subscribes to now (by id); its target in other topics counts as empty. */
  subscribedTopicIds: ReadonlySet<string>;
  /** The epoch of the partition's current owner (this member included), -1 if nobody owns it. */
  ownerEpoch: (topicId: string, partition: number) => number;
  /** What the member's heartbeat says it owns; null when the heartbeat did not say. */
  owned: readonly { topicId: string; partitions: number[] }[] | null;
  /** The subscription changed: partitions of topics no longer subscribed are revoked at once. */
  enforceSubscription: boolean;
}

export function reconcile(member: ConsumerGroupMember, target: ReconciliationTarget): ConsumerGroupMember {
  switch (member.state) {
    case MemberState.Stable:
      if (member.memberEpoch !== target.epoch) return computeNextAssignment(member, target);
      return target.enforceSubscription ? dropUnsubscribed(member, target) : member;
    case MemberState.UnrevokedPartitions:
      if (ownsAny(target.owned, member.pendingRevocation)) {
        return target.enforceSubscription ? dropUnsubscribed(member, target) : member;
      }
      return computeNextAssignment(member, target);
    case MemberState.UnreleasedPartitions:
      return computeNextAssignment(member, target);
  }
}

/** Whether the owned partitions include any of `partitions` (not knowing counts as owning). */
function ownsAny(owned: ReconciliationTarget['owned'], partitions: EpochedPartitions): boolean {
  if (owned === null) return true;
  return owned.some((t) => {
    const pending = partitions.get(t.topicId);
    return pending !== undefined && t.partitions.some((p) => pending.has(p));
  });
}

/** The quick path when only the subscription changed: what is no longer subscribed is revoked. */
function dropUnsubscribed(member: ConsumerGroupMember, target: ReconciliationTarget): ConsumerGroupMember {
  const dropped = [...member.assigned.keys()].filter((topicId) => !target.subscribedTopicIds.has(topicId));
  if (dropped.length === 0) return member;
  const assigned = new Map(member.assigned);
  const pendingRevocation = new Map(member.pendingRevocation);
  for (const topicId of dropped) {
    pendingRevocation.set(topicId, new Map([...(pendingRevocation.get(topicId) ?? []), ...assigned.get(topicId)!]));
    assigned.delete(topicId);
  }
  const next = { ...withMemberEpoch(member, member.memberEpoch), assigned };
  return ownsAny(target.owned, pendingRevocation)
    ? { ...next, state: MemberState.UnrevokedPartitions, pendingRevocation }
    : next;
}

function computeNextAssignment(member: ConsumerGroupMember, target: ReconciliationTarget): ConsumerGroupMember {
  const assigned: EpochedPartitions = new Map();
  const pendingRevocation: EpochedPartitions = new Map();
  const pendingAssignment = new Map<string, number[]>();
  let hasUnreleased = false;

  for (const topicId of new Set([...target.partitions.keys(), ...member.assigned.keys()])) {
    const wanted = target.subscribedTopicIds.has(topicId) ? target.partitions.get(topicId) ?? new Set<number>() : new Set<number>();
    const current = member.assigned.get(topicId) ?? new Map<number, number>();
    const kept = new Map([...current].filter(([p]) => wanted.has(p)));
    const revoked = new Map([...current].filter(([p]) => !wanted.has(p)));
    const ownRevoking = member.pendingRevocation.get(topicId);
    const toAssign: number[] = [];
    for (const p of wanted) {
      if (kept.has(p)) continue;
      // Still owned by another member (a partition this member is itself revoking is not "another").
      if (target.ownerEpoch(topicId, p) !== -1 && !ownRevoking?.has(p)) hasUnreleased = true;
      else toAssign.push(p);
    }
    if (kept.size > 0) assigned.set(topicId, kept);
    if (revoked.size > 0) pendingRevocation.set(topicId, revoked);
    if (toAssign.length > 0) pendingAssignment.set(topicId, toAssign);
  }

  if (pendingRevocation.size > 0 && ownsAny(target.owned, pendingRevocation)) {
    return { ...withMemberEpoch(member, member.memberEpoch), state: MemberState.UnrevokedPartitions, assigned, pendingRevocation };
  }
  for (const [topicId, partitions] of pendingAssignment) {
    const epochs = assigned.get(topicId) ?? new Map<number, number>();
    for (const p of partitions) epochs.set(p, target.epoch);
    assigned.set(topicId, epochs);
  }
  const state = hasUnreleased ? MemberState.UnreleasedPartitions : MemberState.Stable;
  return { ...withMemberEpoch(member, target.epoch), state, assigned, pendingRevocation: new Map() };
}
