// DeleteRecords (key 21), versions 0-2.
// - Per partition, moves the log start offset up to the requested offset (Kafka's
//   Partition.deleteRecordsOnLeader): -1 means the high watermark; an offset past the high
//   watermark, or another negative one, is OFFSET_OUT_OF_RANGE; one at or below the current log
//   start offset changes nothing. Segments entirely below the new start are deleted.
// - The answer's low watermark is the log start offset afterwards (the only replica's), once it
//   is durable; -1 with an error.
// - Errors: UNKNOWN_TOPIC_OR_PARTITION, INVALID_TOPIC_EXCEPTION for internal topics,
//   POLICY_VIOLATION when cleanup.policy lacks delete, KAFKA_STORAGE_ERROR for an offline log.
// - A partition named twice is deleted once, to the last offset given (Kafka keys the request
//   by partition); the answer groups partitions by topic in request order.
// - With one replica there is nothing to wait for: timeoutMs is not used.
// - A topic the principal may not DELETE: TOPIC_AUTHORIZATION_FAILED for its partitions, before
//   any other check (Kafka's handleDeleteRecordsRequest).
import type { Logger } from 'pino';
import { ApiKey } from '../protocol/generated';
import type { DeleteRecordsResponseDeleteRecordsPartitionResult as PartitionResult } from '../protocol/generated/DeleteRecordsResponse';
import { ErrorCode } from '../common/errors';
import type { Controller } from '../cluster/controller';
import { isInternalTopic } from '../cluster/topic-names';
import type { ReplicaManager } from '../replica/replica-manager';
import { AclOperation, ResourceType } from '../security/acl';
import { defineHandler } from './handler';

/** DeleteRecordsRequest.HIGH_WATERMARK. */
const HIGH_WATERMARK = -1;

export interface DeleteRecordsServices {
  readonly controller: Pick<Controller, 'topic'>;
  readonly replicas: Pick<ReplicaManager, 'partition'>;
  readonly log: Pick<Logger, 'error'>;
}

export const deleteRecords = defineHandler(ApiKey.DeleteRecords, { minVersion: 0, maxVersion: 2 }, (s: DeleteRecordsServices) => async (req, ctx) => {
  const byTopic = new Map<string, Map<number, number>>();
  for (const t of req.topics) {
    let partitions = byTopic.get(t.name);
    if (!partitions) byTopic.set(t.name, (partitions = new Map()));
    for (const p of t.partitions) partitions.set(p.partitionIndex, Number(p.offset));
  }
  const topics = [];
  for (const [name, partitions] of byTopic) {
    if (!ctx.authorize(AclOperation.DELETE, ResourceType.TOPIC, name)) {
      topics.push({ name, partitions: [...partitions.keys()].map((partitionIndex) =>
        ({ partitionIndex, lowWatermark: -1n, errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED })) });
      continue;
    }
    const results = await Promise.all([...partitions].map(([index, offset]) => deleteOne(s, name, index, offset)));
    topics.push({ name, partitions: results });
  }
  return { throttleTimeMs: 0, topics };
});

async function deleteOne(s: DeleteRecordsServices, topic: string, index: number, requested: number): Promise<PartitionResult> {
  const failed = (errorCode: number): PartitionResult => ({ partitionIndex: index, lowWatermark: -1n, errorCode });
  const meta = s.controller.topic(topic)?.partitions[index];
  const partition = meta ? s.replicas.partition(topic, index) : undefined;
  if (!meta || !partition) return failed(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  if (isInternalTopic(topic)) return failed(ErrorCode.INVALID_TOPIC_EXCEPTION);
  const { log } = partition;
  if (log.offline) return failed(ErrorCode.KAFKA_STORAGE_ERROR);
  if (!log.config.delete) return failed(ErrorCode.POLICY_VIOLATION);
  const offset = requested === HIGH_WATERMARK ? log.highWatermark : requested;
  if (offset < 0) return failed(ErrorCode.OFFSET_OUT_OF_RANGE);
  try {
    const lowWatermark = await log.deleteRecordsBefore(offset);
    return { partitionIndex: index, lowWatermark: BigInt(lowWatermark), errorCode: ErrorCode.NONE };
  } catch (err) {
    const code = (err as { errorCode?: unknown }).errorCode;
    if (typeof code === 'number') return failed(code);
    s.log.error({ err, topic, partition: index }, 'DeleteRecords failed');
    return failed(ErrorCode.UNKNOWN_SERVER_ERROR);
  }
}
