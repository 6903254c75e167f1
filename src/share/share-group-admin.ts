// The admin side of share groups' state, as Kafka 4.4's GroupCoordinatorService answers
// DescribeShareGroupOffsets, AlterShareGroupOffsets, DeleteShareGroupOffsets and the share-state part
// of DeleteGroups: the group coordinator's view of the group (ShareGroupDirectory) decides what may
// change, the share coordinator (Persister) holds the state, and the share-partitions led here
// (SharePartitionResetter) forget what they cached of a state that was replaced or deleted.
// Authorization and the share.version gate are the handlers'.
import type { Controller } from '../cluster/controller';
import { ErrorCode, errorMessage, quoteInMessage } from '../common/errors';
import type { ShareGroupLookup } from '../group/share-membership';
import { ZERO_UUID } from '../protocol/primitives';
import type { DescribeShareGroupOffsetsResponseGroup, DescribeShareGroupOffsetsResponsePartition, DescribeShareGroupOffsetsResponseTopic } from '../protocol/generated/DescribeShareGroupOffsetsResponse';
import type { AlterShareGroupOffsetsResponse, AlterShareGroupOffsetsResponsePartition, AlterShareGroupOffsetsResponseTopic } from '../protocol/generated/AlterShareGroupOffsetsResponse';
import type { DeleteShareGroupOffsetsResponse, DeleteShareGroupOffsetsResponseTopic } from '../protocol/generated/DeleteShareGroupOffsetsResponse';
import { NO_LEADER_EPOCH, type ReplicaManager } from '../replica/replica-manager';
import { LATEST_TIMESTAMP } from '../replica/offset-lookups';
import type { Persister, SharePartitionKey } from '../share-state/persister';

/** The group coordinator's part (src/group's share groups provide it). */
export interface ShareGroupDirectory {
  shareGroup(groupId: string): ShareGroupLookup;
  /**
   * The share coordinator now holds state for these partitions (AlterShareGroupOffsets initialized
   * them): the group has state for them, as Kafka's initialized topics. An empty share group is
   * made when there is none.
   */
  markInitialized(groupId: string, topics: readonly { topicId: string; topicName: string; partitions: readonly number[] }[]): Promise<void>;
  /** Their state was deleted (DeleteShareGroupOffsets): the group has no state for these topics any more. */
  forgetTopics(groupId: string, topicIds: readonly string[]): Promise<void>;
}

/** The share-partitions led here: one whose durable state was replaced (altered) or deleted drops what it holds. */
export interface SharePartitionResetter {
  reset(key: SharePartitionKey): void;
}

/** A partition's end offset for lag: the high watermark as a consumer reading uncommitted sees it (Kafka's listLatestOffsets). */
export interface PartitionEndOffsets {
  latestOffset(topic: string, partition: number): Promise<{ errorCode: number; offset: bigint }>;
}

export interface ShareGroupAdminServices {
  readonly groups: ShareGroupDirectory;
  readonly persister: Pick<Persister, 'readSummary' | 'initialize' | 'delete'>;
  readonly controller: Pick<Controller, 'topic' | 'topicById'>;
  readonly endOffsets: PartitionEndOffsets;
  readonly sharePartitions?: SharePartitionResetter;
}

/** Kafka's PartitionFactory constants: what is answered where no state is known. */
const UNINITIALIZED_START_OFFSET = -1n;
const DEFAULT_LEADER_EPOCH = 0;
const UNINITIALIZED_LAG = -1n;
const UNINITIALIZED_DELIVERY_COMPLETE_COUNT = -1;

type Refusal = { errorCode: number; errorMessage: string | null };

/**
 * Why the group's state may not change (Kafka's shareGroup(groupId), then the group must be empty),
 * or null when it may.
 */
function refusal(group: ShareGroupLookup, groupId: string): Refusal | null {
  switch (group.found) {
    case 'share': return group.memberCount === 0 ? null : { errorCode: ErrorCode.NON_EMPTY_GROUP, errorMessage: errorMessage(ErrorCode.NON_EMPTY_GROUP) };
    case 'none': return { errorCode: ErrorCode.GROUP_ID_NOT_FOUND, errorMessage: `Group ${quoteInMessage(groupId)} not found.` };
    case 'other-type': return { errorCode: ErrorCode.GROUP_ID_NOT_FOUND, errorMessage: `Group ${quoteInMessage(groupId)} is not a share group.` };
    case 'error': return { errorCode: group.errorCode, errorMessage: errorMessage(group.errorCode) };
  }
}

/** The partitions a group has state for (none for a group that is not, or not yet, a share group). */
const statePartitionsOf = (group: ShareGroupLookup) => (group.found === 'share' ? group.statePartitions : new Map<string, readonly number[]>());

export class ShareGroupAdmin {
  constructor(private readonly s: ShareGroupAdminServices) {}

  /**
   * DescribeShareGroupOffsets for one group: the topics named (null: every partition the group has
   * state for). As Kafka, a missing topic or a partition without state answers start offset -1
   * with no error; lag = end offset - start offset - delivery-complete count where both are known.
   */
  async describeOffsets(groupId: string, topics: readonly { topicName: string; partitions: readonly number[] }[] | null): Promise<DescribeShareGroupOffsetsResponseGroup> {
    const named: { topicName: string; topicId: string; partitions: readonly number[] }[] = [];
    const missing: DescribeShareGroupOffsetsResponseTopic[] = [];
    if (topics === null) {
      const group = this.s.groups.shareGroup(groupId);
      // Kafka reads the group's initialized partitions at its coordinator: only that may fail here.
      if (group.found === 'error') return { groupId, topics: [], errorCode: group.errorCode, errorMessage: errorMessage(group.errorCode) };
      // A topic deleted since is left out (Kafka: not in the metadata image).
      for (const [topicId, partitions] of statePartitionsOf(group)) {
        const topic = this.s.controller.topicById(topicId);
        if (topic) named.push({ topicName: topic.name, topicId, partitions });
      }
    } else {
      for (const t of topics) {
        const topic = this.s.controller.topic(t.topicName);
        if (topic) named.push({ topicName: t.topicName, topicId: topic.id, partitions: t.partitions });
        else {
          missing.push({
            topicName: t.topicName, topicId: ZERO_UUID,
            partitions: t.partitions.map((partitionIndex) => ({
              partitionIndex, startOffset: UNINITIALIZED_START_OFFSET, leaderEpoch: DEFAULT_LEADER_EPOCH, lag: UNINITIALIZED_LAG,
              errorCode: ErrorCode.NONE, errorMessage: null,
            })),
          });
        }
      }
    }
    const described = await Promise.all(named.map(async (t) => ({
      topicName: t.topicName, topicId: t.topicId,
      partitions: await Promise.all(t.partitions.map((partition) => this.describePartition({ groupId, topicId: t.topicId, partition }, t.topicName))),
    })));
    return { groupId, topics: [...described, ...missing], errorCode: ErrorCode.NONE, errorMessage: null };
  }

  private async describePartition(key: SharePartitionKey, topicName: string): Promise<DescribeShareGroupOffsetsResponsePartition> {
    const partitionIndex = key.partition;
    const summary = await this.s.persister.readSummary(key, 0);
    if (summary.errorCode !== ErrorCode.NONE) {
      // Kafka treats the share coordinator's error as no state, as OffsetFetch does.
      return { partitionIndex, startOffset: UNINITIALIZED_START_OFFSET, leaderEpoch: DEFAULT_LEADER_EPOCH, lag: UNINITIALIZED_LAG, errorCode: ErrorCode.NONE, errorMessage: null };
    }
    const known = { partitionIndex, startOffset: summary.startOffset, leaderEpoch: summary.leaderEpoch, errorCode: ErrorCode.NONE, errorMessage: null };
    if (summary.startOffset === UNINITIALIZED_START_OFFSET || summary.deliveryCompleteCount === UNINITIALIZED_DELIVERY_COMPLETE_COUNT) {
      return { ...known, lag: UNINITIALIZED_LAG };
    }
    const end = await this.s.endOffsets.latestOffset(topicName, partitionIndex);
    if (end.errorCode !== ErrorCode.NONE) {
      return { partitionIndex, startOffset: 0n, leaderEpoch: 0, lag: UNINITIALIZED_LAG, errorCode: end.errorCode, errorMessage: errorMessage(end.errorCode) };
    }
    return { ...known, lag: end.offset - summary.startOffset - BigInt(summary.deliveryCompleteCount) };
  }

  /**
   * AlterShareGroupOffsets: an empty (or not yet existing) share group's partitions restart at the
   * offsets given. Partitions past the topic's count, and topics that do not exist, are
   * UNKNOWN_TOPIC_OR_PARTITION; the others are initialized at a state epoch above the stored one
   * (which fences a leader still holding the old state) and their leader here drops its cache.
   */
  async alterOffsets(groupId: string, topics: readonly { topicName: string; partitions: readonly { partitionIndex: number; startOffset: bigint }[] }[]): Promise<AlterShareGroupOffsetsResponse> {
    const group = this.s.groups.shareGroup(groupId);
    // Kafka creates the group when there is none (getOrMaybeCreateShareGroup(groupId, true)).
    const refused = group.found === 'none' ? null : refusal(group, groupId);
    if (refused) return { throttleTimeMs: 0, ...refused, responses: [] };
    const responses: AlterShareGroupOffsetsResponseTopic[] = await Promise.all(topics.map(async (t) => {
      const topic = this.s.controller.topic(t.topicName);
      const unknown = (partitionIndex: number): AlterShareGroupOffsetsResponsePartition => ({
        partitionIndex, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: errorMessage(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION),
      });
      if (!topic) return { topicName: t.topicName, topicId: ZERO_UUID, partitions: t.partitions.map((p) => unknown(p.partitionIndex)) };
      const partitions = await Promise.all(t.partitions.map(async (p): Promise<AlterShareGroupOffsetsResponsePartition> => {
        if (p.partitionIndex < 0 || p.partitionIndex >= topic.partitions.length) return unknown(p.partitionIndex);
        const errorCode = await this.initialize({ groupId, topicId: topic.id, partition: p.partitionIndex }, p.startOffset);
        return { partitionIndex: p.partitionIndex, errorCode, errorMessage: errorCode === ErrorCode.NONE ? null : errorMessage(errorCode) };
      }));
      const initialized = partitions.filter((p) => p.errorCode === ErrorCode.NONE).map((p) => p.partitionIndex);
      if (initialized.length > 0) await this.s.groups.markInitialized(groupId, [{ topicId: topic.id, topicName: t.topicName, partitions: initialized }]);
      return { topicName: t.topicName, topicId: topic.id, partitions };
    }));
    return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, errorMessage: null, responses };
  }

  private async initialize(key: SharePartitionKey, startOffset: bigint): Promise<number> {
    // The share coordinator refuses a state epoch below the stored one (FENCED_STATE_EPOCH); a
    // partition without state reads as an error here and starts at epoch 0.
    const summary = await this.s.persister.readSummary(key, 0);
    const stateEpoch = summary.errorCode === ErrorCode.NONE ? summary.stateEpoch + 1 : 0;
    const result = await this.s.persister.initialize(key, stateEpoch, startOffset);
    if (result.errorCode === ErrorCode.NONE) this.s.sharePartitions?.reset(key);
    return result.errorCode;
  }

  /**
   * DeleteShareGroupOffsets: an empty share group forgets its state for whole topics. A topic it
   * has no state for is UNKNOWN_TOPIC_OR_PARTITION "There is no offset information to delete.";
   * one that does not exist, UNKNOWN_TOPIC_OR_PARTITION with Kafka's usual message.
   */
  async deleteOffsets(groupId: string, topicNames: readonly string[]): Promise<DeleteShareGroupOffsetsResponse> {
    const group = this.s.groups.shareGroup(groupId);
    const refusedGroup = refusal(group, groupId);
    if (refusedGroup) return { throttleTimeMs: 0, ...refusedGroup, responses: [] };
    const statePartitions = statePartitionsOf(group);
    const refused: DeleteShareGroupOffsetsResponseTopic[] = [];
    const deletable: { topicName: string; topicId: string; partitions: readonly number[] }[] = [];
    for (const topicName of topicNames) {
      const topic = this.s.controller.topic(topicName);
      const partitions = topic && statePartitions.get(topic.id);
      if (!topic) refused.push({ topicName, topicId: ZERO_UUID, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: errorMessage(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION) });
      else if (!partitions) refused.push({ topicName, topicId: ZERO_UUID, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: 'There is no offset information to delete.' });
      else deletable.push({ topicName, topicId: topic.id, partitions });
    }
    const deleted = await Promise.all(deletable.map(async (t) => {
      const errorCode = await this.deleteState(groupId, t.topicId, t.partitions);
      return { topicName: t.topicName, topicId: t.topicId, errorCode, errorMessage: errorCode === ErrorCode.NONE ? null : errorMessage(errorCode) };
    }));
    // Kafka answers the deleted topics first, then those refused or failed.
    const ok = deleted.filter((t) => t.errorCode === ErrorCode.NONE);
    if (ok.length > 0) await this.s.groups.forgetTopics(groupId, ok.map((t) => t.topicId));
    const failed = deleted.filter((t) => t.errorCode !== ErrorCode.NONE);
    return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, errorMessage: null, responses: [...ok, ...refused, ...failed] };
  }

  /**
   * DeleteGroups' first step for an empty share group (Kafka deletes its state before the group):
   * the state of its partitions. NONE, or the share coordinator's first error (the group stays).
   */
  async deleteGroupState(groupId: string, topics: readonly { topicId: string; partitions: readonly number[] }[]): Promise<number> {
    const codes = await Promise.all(topics.map((t) => this.deleteState(groupId, t.topicId, t.partitions)));
    return codes.find((c) => c !== ErrorCode.NONE) ?? ErrorCode.NONE;
  }

  /** Deletes a topic's share-partitions of the group: NONE, or the first partition's error. */
  private async deleteState(groupId: string, topicId: string, partitions: readonly number[]): Promise<number> {
    const codes = await Promise.all(partitions.map(async (partition) => {
      const key = { groupId, topicId, partition };
      const result = await this.s.persister.delete(key);
      if (result.errorCode === ErrorCode.NONE) this.s.sharePartitions?.reset(key);
      return result.errorCode;
    }));
    return codes.find((c) => c !== ErrorCode.NONE) ?? ErrorCode.NONE;
  }
}

/** End offsets read from the partitions this broker leads; another's is the leader's error (NOT_LEADER_OR_FOLLOWER). */
export function localEndOffsets(replicas: Pick<ReplicaManager, 'fetchOffsetForTimestamp'>): PartitionEndOffsets {
  return {
    latestOffset: async (topic, partition) => {
      const found = await replicas.fetchOffsetForTimestamp(topic, partition, NO_LEADER_EPOCH, LATEST_TIMESTAMP, 'high-watermark');
      return { errorCode: found.errorCode, offset: BigInt(found.offset) };
    },
  };
}
