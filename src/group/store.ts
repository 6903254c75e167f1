// What the coordinator keeps of groups and offsets, and what it needs from their persistence:
// OffsetsLog (./offsets-log.ts, Kafka's records in __consumer_offsets) in the broker, an in-memory
// fake in unit tests. Every store method answers a Kafka error code, already as the client should
// see it (0 once the write is in the log).
import type { TxnProducer } from '../replica/internal-append';
import type { TopicPartitions } from './consumer-member';
import type { ConsumerGroupRecord, CurrentAssignment, MemberSubscription } from './consumer-records';

export type { TxnProducer };

export interface OffsetAndMetadata {
  offset: number;
  leaderEpoch: number;
  metadata: string;
  commitTimestamp: number;
  /** -1: none. */
  expireTimestamp: number;
}

export interface GroupMemberSnapshot {
  memberId: string;
  groupInstanceId: string | null;
  clientId: string;
  clientHost: string;
  rebalanceTimeoutMs: number;
  sessionTimeoutMs: number;
  subscription: Buffer;
  assignment: Buffer;
}

/** A group as __consumer_offsets records it (its GroupMetadataValue). */
export interface GroupSnapshot {
  protocolType: string;
  generationId: number;
  protocolName: string | null;
  leader: string | null;
  currentStateTimestamp: number;
  members: GroupMemberSnapshot[];
}

export interface TopicPartitionKey {
  topic: string;
  partition: number;
}

export type TopicPartitionOffset = OffsetAndMetadata & TopicPartitionKey;

/** An offset read back from the log, with the log offset of its record (which of two writes is later). */
export type LoadedOffset = TopicPartitionOffset & { logOffset: number };

/** A consumer group (KIP-848) as its records in __consumer_offsets leave it. */
export interface ConsumerGroupSnapshot {
  groupEpoch: number;
  metadataHash: bigint;
  /** -1: no target assignment record. */
  assignmentEpoch: number;
  /** When the target assignment was computed (wall clock ms; 0: not known). */
  assignmentTimestamp: number;
  members: Map<string, MemberSubscription>;
  currentAssignments: Map<string, CurrentAssignment>;
  targetAssignment: Map<string, TopicPartitions>;
  /** Each regular expression -> the topics it matched and when (wall clock ms). */
  regexes: Map<string, { topics: string[]; timestamp: number }>;
}

export interface LoadedGroup {
  groupId: string;
  group: GroupSnapshot | null;
  /** Absent or null: no consumer group of the id. */
  consumerGroup?: ConsumerGroupSnapshot | null;
  /** Keyed by offsetKey. */
  offsets: Map<string, LoadedOffset>;
  /** Transactional offsets whose transaction has no marker in the log yet: by producer id, then key. */
  pendingTxnOffsets: Map<number, Map<string, LoadedOffset>>;
}

/** The key of a partition in the maps of offsets (':' cannot appear in a topic name). */
export const offsetKey = (topic: string, partition: number): string => `${topic}:${partition}`;

export interface OffsetsStore {
  storeOffsets(groupId: string, offsets: TopicPartitionOffset[]): Promise<number>;
  /** One transactional batch of the producer's (TxnOffsetCommit). */
  storeTxnOffsets(groupId: string, producer: TxnProducer, offsets: TopicPartitionOffset[]): Promise<number>;
  storeGroup(groupId: string, group: GroupSnapshot): Promise<number>;
  /** A consumer group's records (KIP-848), in one batch. */
  storeConsumerGroup(groupId: string, records: ConsumerGroupRecord[]): Promise<number>;
  /** Tombstones for each of `offsetKeys`, for a consumer group's records (`consumerTombstones`), and for the group. */
  deleteGroup(groupId: string, offsetKeys: TopicPartitionKey[], consumerTombstones?: ConsumerGroupRecord[]): Promise<number>;
  deleteOffsets(groupId: string, keys: TopicPartitionKey[]): Promise<number>;
  /** The groups of one partition of __consumer_offsets, read back from its log. */
  loadPartition(index: number): Promise<LoadedGroup[]>;
}
