// Share-partition state persisted in the internal topic __share_group_state, in Kafka's record formats
// (share-state-records.ts), as Kafka's share coordinator keeps it.
//
// - A share-partition lives on partition Utils.abs("groupId:topicId:partition".hashCode()) %
//   partitions (ShareCoordinatorService.partitionFor over SharePartitionKey.asCoordinatorKey, the topic
//   id as Kafka prints a Uuid: base64url).
// - Each write is one uncompressed batch of one record, appended through the ReplicaManager (the
//   coordinators' shared internal append: acks=all, in call order); append errors become Kafka 4's
//   coordinator errors (coordinatorAppendError).
// - The topic's configs are Kafka's: cleanup.policy=delete with retention.ms=-1 (Kafka prunes it with
//   DeleteRecords below what every share-partition's latest snapshot covers, not by compaction),
//   compression.type=producer, segment.bytes and min.insync.replicas from the share.coordinator.* configs.
// - Loading replays one partition from its log start to its end, in order (the coordinator applies
//   the records); records of a type this broker does not know are skipped.
// - Pruning moves the log start up to an offset below which no record is needed any more (the
//   coordinator's redundant offset), as Kafka's share coordinator does with DeleteRecords.
import type { Logger } from 'pino';
import type { Controller, Outcome } from '../cluster/controller';
import { coordinatorPartitionFor } from '../cluster/coordinator-partition';
import { SHARE_GROUP_STATE_TOPIC_NAME } from '../cluster/topic-names';
import { appendCoordinatorRecord, replayCoordinatorPartition } from '../replica/internal-append';
import type { ReplicaManager } from '../replica/replica-manager';
import type { SharePartitionKey } from './persister';
import { decodeShareStateRecord, encodeShareStateRecord, type ShareStateRecord } from './share-state-records';

export const SHARE_STATE_TOPIC = SHARE_GROUP_STATE_TOPIC_NAME;

/** The topic configs Kafka gives __share_group_state (ShareCoordinatorService.shareGroupStateTopicConfigs). */
export function shareStateTopicConfigs(segmentBytes: number, minInsyncReplicas: number): Record<string, string> {
  return {
    'cleanup.policy': 'delete', 'compression.type': 'producer', 'segment.bytes': String(segmentBytes),
    'min.insync.replicas': String(minInsyncReplicas), 'retention.ms': '-1',
  };
}

/** Kafka's Uuid.toString of a topic id as the protocol carries it (32 hex chars): base64url, unpadded. */
export function topicIdString(topicIdHex: string): string {
  return Buffer.from(topicIdHex, 'hex').toString('base64url');
}

/** SharePartitionKey.asCoordinatorKey: what FindCoordinator key type 2 names and what is hashed to the partition. */
export function coordinatorKey(key: SharePartitionKey): string {
  return `${key.groupId}:${topicIdString(key.topicId)}:${key.partition}`;
}

/**
 * Kafka's SharePartitionKey.getInstance(String): split on ':' (Java's split, trailing empty parts
 * dropped), at least three parts; the last an int partition, the one before a topic id
 * (Uuid.fromString: base64url of 16 bytes), the rest the group id, not blank. Null if it is not one.
 */
export function parseSharePartitionKey(key: string): SharePartitionKey | null {
  const parts = key.split(':');
  while (parts.length > 0 && parts[parts.length - 1] === '') parts.pop();
  if (parts.length < 3) return null;
  const groupId = parts.slice(0, -2).join(':');
  const topicId = parts[parts.length - 2];
  const partition = parts[parts.length - 1];
  if ([...groupId].every((ch) => ch <= ' ')) return null; // blank as Java's trim() sees it
  if (topicId.length > 24 || !/^[A-Za-z0-9_-]*={0,2}$/.test(topicId)) return null;
  const bytes = Buffer.from(topicId, 'base64url');
  if (bytes.length !== 16) return null;
  if (!/^[+-]?\d+$/.test(partition)) return null;
  const n = Number(partition);
  if (n < -2147483648 || n > 2147483647) return null;
  return { groupId, topicId: bytes.toString('hex'), partition: n };
}

/** The partition of __share_group_state that holds the share-partition's state. */
export function shareStatePartitionFor(key: SharePartitionKey, numPartitions: number): number {
  return coordinatorPartitionFor(coordinatorKey(key), numPartitions);
}

/** A record and where it is in its partition. */
export interface PlacedRecord {
  readonly record: ShareStateRecord;
  readonly offset: number;
}

/** What the coordinator needs from persistence: this class in the broker, a fake in unit tests. */
export interface ShareStateStore {
  /** The partition count of __share_group_state; 0 while it does not exist. */
  readonly numPartitions: number;
  /** Appends the record to the partition: the error code the coordinator's client should see, and its offset. */
  write(partition: number, record: ShareStateRecord): Promise<{ errorCode: number; offset: number }>;
  /** The records of one partition in log order; rejects if the partition is not hosted here. */
  loadPartition(partition: number): Promise<PlacedRecord[]>;
  /** Moves the partition's log start up to `offset` (no further than its high watermark); rejects on a storage error. */
  deleteRecordsBefore(partition: number, offset: number): Promise<void>;
}

export class ShareStateLog implements ShareStateStore {
  constructor(
    private readonly replicas: ReplicaManager,
    private readonly controller: Pick<Controller, 'topic'>,
    private readonly log?: Logger,
  ) {}

  get numPartitions(): number {
    return this.controller.topic(SHARE_STATE_TOPIC)?.partitions.length ?? 0;
  }

  /** Creates __share_group_state with Kafka's configs unless it exists (the replication factor capped at the live brokers). */
  static ensureTopic(controller: Controller, o: { numPartitions: number; replicationFactor: number; segmentBytes: number; minInsyncReplicas: number }): Promise<Outcome> {
    return controller.ensureInternalTopic(SHARE_STATE_TOPIC, o.numPartitions, o.replicationFactor,
      shareStateTopicConfigs(o.segmentBytes, o.minInsyncReplicas));
  }

  write(index: number, record: ShareStateRecord): Promise<{ errorCode: number; offset: number }> {
    return appendCoordinatorRecord(this.replicas, SHARE_STATE_TOPIC, index, encodeShareStateRecord(record), { key: record.key }, this.log);
  }

  async loadPartition(index: number): Promise<PlacedRecord[]> {
    const records: PlacedRecord[] = [];
    await replayCoordinatorPartition(this.replicas, SHARE_STATE_TOPIC, index, (key, value, offset) => {
      const record = decodeShareStateRecord(key, value);
      if (record) records.push({ record, offset });
    }, this.log);
    return records;
  }

  async deleteRecordsBefore(index: number, offset: number): Promise<void> {
    const p = this.replicas.partition(SHARE_STATE_TOPIC, index);
    if (!p) return;
    const before = Math.min(offset, p.log.highWatermark);
    if (before > p.log.logStartOffset) await p.log.deleteRecordsBefore(before);
  }
}
