// Share groups' partition assignor `simple` (KIP-932, Kafka 4.4's SimpleAssignor with its
// homogeneous and heterogeneous builders). Unlike a consumer group's, a partition may go to several
// members: each partition is shared by ceil(members / partitions) of the members subscribed to its
// topic, each member gets its share of those assignments (counts differing by one at most), and the
// previous target assignment is kept as far as that balance allows. When every member subscribes
// to the same topics they are balanced over all those partitions together (homogeneous), else each
// topic is balanced over its own subscribers (heterogeneous).
//
// The steps are Kafka's: keep what each member had of the partitions it may still have, revoke from
// members holding more than their count, revoke from partitions shared more than desired, then
// hand the remaining assignments round-robin to the members still short. Kafka walks Java hash maps
// where this walks members and topics sorted by id, so which member of equals gets which partition
// may differ; the counts and the stickiness do not.
import type { TopicPartitions } from './consumer-member';

export const SHARE_ASSIGNOR_NAME = 'simple';

export interface ShareAssignmentSpec {
  readonly members: readonly { readonly memberId: string; readonly subscribedTopicIds: ReadonlySet<string> }[];
  /** The partitions that may be assigned, by topic id (those of the subscribed topics whose share state is initialized). */
  readonly assignable: ReadonlyMap<string, readonly number[]>;
  /** The previous target assignment, by member id. */
  readonly previous: ReadonlyMap<string, TopicPartitions>;
}

const byId = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
const partitionKey = (topicId: string, partition: number): string => JSON.stringify([topicId, partition]);

/** Every member's target assignment (an empty map for a member without partitions). */
export function assignSharePartitions(spec: ShareAssignmentSpec): Map<string, TopicPartitions> {
  const members = [...spec.members].sort((a, b) => byId(a.memberId, b.memberId));
  const result = new Map<string, TopicPartitions>(members.map((m) => [m.memberId, new Map()]));
  if (members.length === 0) return result;
  const targets = (topicIds: Iterable<string>) => [...topicIds].sort(byId)
    .flatMap((topicId) => (spec.assignable.get(topicId) ?? []).map((partition) => ({ topicId, partition })));
  const first = members[0].subscribedTopicIds;
  const homogeneous = members.every((m) => m.subscribedTopicIds.size === first.size && [...first].every((t) => m.subscribedTopicIds.has(t)));
  if (homogeneous) {
    balance(targets(first), members.map((m) => m.memberId), spec.previous, result);
  } else {
    for (const topicId of [...new Set(members.flatMap((m) => [...m.subscribedTopicIds]))].sort(byId)) {
      const subscribers = members.filter((m) => m.subscribedTopicIds.has(topicId)).map((m) => m.memberId);
      balance(targets([topicId]), subscribers, spec.previous, result);
    }
  }
  return result;
}

/** One builder's run: `partitions` over `memberIds` (Kafka's member indices are positions in this list), into `result`. */
function balance(
  partitions: readonly { topicId: string; partition: number }[], memberIds: readonly string[],
  previous: ReadonlyMap<string, TopicPartitions>, result: Map<string, TopicPartitions>,
): void {
  if (partitions.length === 0 || memberIds.length === 0) return;
  const numMembers = memberIds.length;
  const desiredSharing = Math.floor((numMembers + partitions.length - 1) / partitions.length);
  // Kafka's arithmetic in doubles, so the counts come out the same.
  const precise = desiredSharing * partitions.length / numMembers;
  const desired = memberIds.map((_, i) => Math.ceil(precise * (i + 1)) - Math.ceil(precise * i));
  const byKey = new Map(partitions.map((p) => [partitionKey(p.topicId, p.partition), p]));
  const byPartition = new Map<string, Set<number>>();
  const byMember = memberIds.map(() => new Set<string>());

  // 1. What each member had of these partitions.
  memberIds.forEach((memberId, i) => {
    for (const [topicId, ps] of previous.get(memberId) ?? []) {
      for (const p of ps) {
        const key = partitionKey(topicId, p);
        if (!byKey.has(key)) continue;
        byMember[i].add(key);
        byPartition.set(key, (byPartition.get(key) ?? new Set()).add(i));
      }
    }
  });
  // 2. Members holding more than their count give up the excess.
  byMember.forEach((held, i) => {
    for (const key of held) {
      if (held.size <= desired[i]) break;
      held.delete(key);
      byPartition.get(key)!.delete(i);
    }
  });
  // 3. Partitions shared by more members than desired lose the excess.
  for (const [key, holders] of byPartition) {
    for (const i of holders) {
      if (holders.size <= desiredSharing) break;
      holders.delete(i);
      byMember[i].delete(key);
    }
  }
  // 4. The remaining assignments, round-robin over the members still short of their count.
  for (const key of byKey.keys()) if (!byPartition.has(key)) byPartition.set(key, new Set());
  const unfilled = memberIds.map((_, i) => i).filter((i) => byMember[i].size < desired[i]);
  let next = 0;
  let assignedThisRound = false;
  for (const [key, holders] of byPartition) {
    let toMake = desiredSharing - holders.size;
    while (toMake > 0 && unfilled.length > 0) {
      if (next >= unfilled.length) {
        // A partition none of the short members can take (they all have it): left short, as in Kafka.
        if (!assignedThisRound) break;
        next = 0;
        assignedThisRound = false;
      }
      const i = unfilled[next];
      if (holders.has(i)) {
        next++;
        continue;
      }
      holders.add(i);
      byMember[i].add(key);
      toMake--;
      assignedThisRound = true;
      if (byMember[i].size >= desired[i]) unfilled.splice(next, 1);
      else next++;
    }
    if (unfilled.length === 0) break;
  }

  memberIds.forEach((memberId, i) => {
    const assignment = result.get(memberId)!;
    for (const key of byMember[i]) {
      const { topicId, partition } = byKey.get(key)!;
      const ps = assignment.get(topicId);
      if (ps) ps.add(partition);
      else assignment.set(topicId, new Set([partition]));
    }
  });
}
