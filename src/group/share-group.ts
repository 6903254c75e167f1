// One share group (KIP-932, Kafka's ShareGroup): its members (immutable values), the group epoch
// (bumped when membership, a subscription or the subscribed topics change, or when share-partitions
// become initialized), the target assignment and its epoch, and its share-partitions' initialization
// (Kafka's ShareGroupStatePartitionMetadata): a partition is assigned to members only once the share
// coordinator holds its state. Like ConsumerGroup it does no I/O and holds no timers.
import type { TopicPartitions } from './consumer-member';

/** Kafka's ShareGroupState, as ShareGroupDescribe, ListGroups and DescribeGroups spell it. */
export enum ShareGroupState {
  Empty = 'Empty',
  Stable = 'Stable',
  Dead = 'Dead',
}

/** The protocol type ListGroups shows for a share group (Kafka's ShareGroup.PROTOCOL_TYPE). */
export const SHARE_PROTOCOL_TYPE = 'share';

export interface ShareGroupMember {
  readonly memberId: string;
  readonly rackId: string | null;
  readonly clientId: string;
  readonly clientHost: string;
  /** Sorted. */
  readonly subscribedTopicNames: readonly string[];
  readonly memberEpoch: number;
  readonly previousMemberEpoch: number;
  /** What the member was last given: its target assignment restricted to its subscribed topics. */
  readonly assigned: TopicPartitions;
}

/** Share-partitions of one topic, by topic id. */
export interface TopicShareState {
  readonly topicName: string;
  readonly partitions: Set<number>;
}

export class ShareGroup {
  groupEpoch = 0;
  assignmentEpoch = 0;
  /** When the target assignment was last computed (0: never), for share.assignment.interval.ms. */
  assignmentTimestamp = 0;
  /** The subscribed topics' names, ids and partition counts at the last group epoch: a change bumps it. */
  metadataHash = '';
  readonly members = new Map<string, ShareGroupMember>();
  readonly targetAssignment = new Map<string, TopicPartitions>();
  /** Share-partitions whose state the share coordinator holds (assignable), by topic id. */
  readonly initialized = new Map<string, TopicShareState>();
  /** Share-partitions being initialized, by topic id, with when it was asked (retried after a while). */
  readonly initializing = new Map<string, TopicShareState & { readonly sinceMs: number }>();
  dead = false;

  constructor(readonly groupId: string) {}

  get state(): ShareGroupState {
    if (this.dead) return ShareGroupState.Dead;
    return this.members.size === 0 ? ShareGroupState.Empty : ShareGroupState.Stable;
  }

  /** The topics any member subscribes to. */
  subscribedTopicNames(): Set<string> {
    return new Set([...this.members.values()].flatMap((m) => m.subscribedTopicNames));
  }

  isSubscribedToTopic(topic: string): boolean {
    return [...this.members.values()].some((m) => m.subscribedTopicNames.includes(topic));
  }

  /** The partitions of `topicId` initialized or being initialized (those of `topicName` only, when given: not of a deleted topic of the id's old name). */
  knownPartitions(topicId: string, topicName?: string): Set<number> {
    const of = (t: TopicShareState | undefined) => (t && (topicName === undefined || t.topicName === topicName) ? [...t.partitions] : []);
    return new Set([...of(this.initialized.get(topicId)), ...of(this.initializing.get(topicId))]);
  }

  /** Marks partitions initialized (those of a topic id whose name changed start over: a topic deleted and created again). */
  markInitialized(topics: readonly { topicId: string; topicName: string; partitions: readonly number[] }[]): void {
    for (const t of topics) {
      const pending = this.initializing.get(t.topicId);
      for (const p of t.partitions) pending?.partitions.delete(p);
      if (pending?.partitions.size === 0) this.initializing.delete(t.topicId);
      const current = this.initialized.get(t.topicId);
      const entry = current?.topicName === t.topicName ? current : { topicName: t.topicName, partitions: new Set<number>() };
      for (const p of t.partitions) entry.partitions.add(p);
      this.initialized.set(t.topicId, entry);
    }
  }

  /** Forgets partitions being initialized (the share coordinator refused them: a later heartbeat asks again). */
  unmarkInitializing(topics: readonly { topicId: string; partitions: readonly number[] }[]): void {
    for (const t of topics) {
      const pending = this.initializing.get(t.topicId);
      for (const p of t.partitions) pending?.partitions.delete(p);
      if (pending?.partitions.size === 0) this.initializing.delete(t.topicId);
    }
  }
}
