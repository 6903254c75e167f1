// What the coordinator needs from the persistence of groups and offsets: OffsetsLog
// (./offsets-log.ts, Kafka's records in __consumer_offsets) in the broker, an in-memory fake in
// unit tests. Every method answers a Kafka error code, already as the client should see it
// (0 once the write is in the log).
import type { GroupSnapshot, LoadedGroup, TopicPartitionOffset, TxnProducer } from './offsets-log';

export type {
  GroupMemberSnapshot, GroupSnapshot, LoadedGroup, LoadedOffset, OffsetAndMetadata, TopicPartitionOffset, TxnProducer,
} from './offsets-log';

export interface TopicPartitionKey {
  topic: string;
  partition: number;
}

export interface OffsetsStore {
  storeOffsets(groupId: string, offsets: TopicPartitionOffset[]): Promise<number>;
  /** One transactional batch of the producer's (TxnOffsetCommit). */
  storeTxnOffsets(groupId: string, producer: TxnProducer, offsets: TopicPartitionOffset[]): Promise<number>;
  storeGroup(groupId: string, group: GroupSnapshot): Promise<number>;
  /** Tombstones for each of `offsetKeys` and for the group. */
  deleteGroup(groupId: string, offsetKeys: TopicPartitionKey[]): Promise<number>;
  deleteOffsets(groupId: string, keys: TopicPartitionKey[]): Promise<number>;
  loadAll(): Promise<LoadedGroup[]>;
}
