// The broker-side assignors of consumer groups (KIP-848; `group.consumer.assignors`, the first is
// the default, a member may name another in ServerAssignor):
// - `uniform` (Kafka's UniformAssignor): every partition of the subscribed topics to one of the
//   members subscribed to its topic, the counts as even as the subscriptions allow, and sticky:
//   a member keeps what it had in the previous target assignment unless balance needs it elsewhere.
// - `range` (Kafka's RangeAssignor): per topic, the members subscribed to it (by instance id, else
//   member id) get consecutive ranges of partitions, the first ones one more when it does not divide.
// Both are deterministic: the same input gives the same assignment.
import type { TopicPartitions } from './consumer-member';

export interface AssignmentMember {
  readonly memberId: string;
  readonly instanceId: string | null;
  readonly subscribedTopicIds: ReadonlySet<string>;
}

export interface AssignmentSpec {
  readonly members: readonly AssignmentMember[];
  /** Partition count of each subscribed topic that exists, by topic id. */
  readonly topics: ReadonlyMap<string, number>;
  /** The previous target assignment, by member id (what `uniform` sticks to). */
  readonly previous: ReadonlyMap<string, TopicPartitions>;
}

export interface ConsumerGroupAssignor {
  readonly name: string;
  /** The target assignment of every member of the spec (an empty map for a member without partitions). */
  assign(spec: AssignmentSpec): Map<string, TopicPartitions>;
}

const byId = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

function emptyAssignment(spec: AssignmentSpec): Map<string, TopicPartitions> {
  return new Map(spec.members.map((m) => [m.memberId, new Map()]));
}

function add(assignment: TopicPartitions, topicId: string, partition: number): void {
  const partitions = assignment.get(topicId);
  if (partitions) partitions.add(partition);
  else assignment.set(topicId, new Set([partition]));
}

function remove(assignment: TopicPartitions, topicId: string, partition: number): void {
  const partitions = assignment.get(topicId)!;
  partitions.delete(partition);
  if (partitions.size === 0) assignment.delete(topicId);
}

export const uniformAssignor: ConsumerGroupAssignor = {
  name: 'uniform',
  assign(spec) {
    const result = emptyAssignment(spec);
    const counts = new Map(spec.members.map((m) => [m.memberId, 0]));
    const owner = new Map<string, string>();
    const key = (topicId: string, p: number): string => `${topicId}:${p}`;
    const topicIds = [...spec.topics.keys()].sort(byId);
    const subscribers = new Map(topicIds.map((t) => [t, spec.members.filter((m) => m.subscribedTopicIds.has(t))]));
    const give = (memberId: string, topicId: string, p: number): void => {
      add(result.get(memberId)!, topicId, p);
      owner.set(key(topicId, p), memberId);
      counts.set(memberId, counts.get(memberId)! + 1);
    };
    /** The subscriber with the fewest partitions (ties: the smallest member id). */
    const leastLoaded = (topicId: string): string =>
      subscribers.get(topicId)!.map((m) => m.memberId)
        .reduce((best, id) => (counts.get(id)! < counts.get(best)! || (counts.get(id) === counts.get(best) && id < best) ? id : best));

    // Stickiness: what each member had and may still have.
    for (const m of [...spec.members].sort((a, b) => byId(a.memberId, b.memberId))) {
      for (const [topicId, partitions] of spec.previous.get(m.memberId) ?? []) {
        const count = spec.topics.get(topicId);
        if (count === undefined || !m.subscribedTopicIds.has(topicId)) continue;
        for (const p of [...partitions].sort((a, b) => a - b)) {
          if (p < count && !owner.has(key(topicId, p))) give(m.memberId, topicId, p);
        }
      }
    }
    // Then the partitions nobody has, each to the least loaded of its topic's subscribers.
    for (const topicId of topicIds) {
      if (subscribers.get(topicId)!.length === 0) continue;
      for (let p = 0; p < spec.topics.get(topicId)!; p++) if (!owner.has(key(topicId, p))) give(leastLoaded(topicId), topicId, p);
    }
    // Then balance: a partition moves while its owner has two more than another subscriber of its topic.
    for (let moved = true; moved;) {
      moved = false;
      for (const topicId of topicIds) {
        for (let p = spec.topics.get(topicId)! - 1; p >= 0; p--) {
          const from = owner.get(key(topicId, p));
          if (from === undefined) continue;
          const to = leastLoaded(topicId);
          if (counts.get(from)! <= counts.get(to)! + 1) continue;
          remove(result.get(from)!, topicId, p);
          counts.set(from, counts.get(from)! - 1);
          give(to, topicId, p);
          moved = true;
        }
      }
    }
    return result;
  },
};

export const rangeAssignor: ConsumerGroupAssignor = {
  name: 'range',
  assign(spec) {
    const result = emptyAssignment(spec);
    for (const [topicId, count] of spec.topics) {
      const members = spec.members.filter((m) => m.subscribedTopicIds.has(topicId))
        .sort((a, b) => byId(a.instanceId ?? a.memberId, b.instanceId ?? b.memberId));
      if (members.length === 0) continue;
      const quota = Math.floor(count / members.length);
      const extra = count % members.length;
      let next = 0;
      members.forEach((m, i) => {
        const n = quota + (i < extra ? 1 : 0);
        for (let p = next; p < next + n; p++) add(result.get(m.memberId)!, topicId, p);
        next += n;
      });
    }
    return result;
  },
};

export const CONSUMER_GROUP_ASSIGNORS: readonly ConsumerGroupAssignor[] = [uniformAssignor, rangeAssignor];
