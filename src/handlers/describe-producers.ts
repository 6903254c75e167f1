// DescribeProducers (key 61), version 0.
// - Per requested partition, in request order, its active producers from the partition's
//   producer state (Kafka's UnifiedLog.activeProducers): producer id and epoch, the last
//   sequence written (-1 when none is kept), the last timestamp, the coordinator epoch of its
//   last transaction marker (-1 before any) and the first offset of its open transaction (-1
//   when none).
// - Errors per partition, as Kafka's KafkaApis and ReplicaManager.getPartitionOrError answer:
//   UNKNOWN_TOPIC_OR_PARTITION for a partition the metadata does not know, NOT_LEADER_OR_FOLLOWER
//   for one it knows but this broker does not host (yet), KAFKA_STORAGE_ERROR for an offline log.
// - A topic the principal may not DESCRIBE: TOPIC_AUTHORIZATION_FAILED for each of its partitions.
import { ApiKey } from '../protocol/generated';
import type { DescribeProducersResponsePartitionResponse as PartitionResponse } from '../protocol/generated/DescribeProducersResponse';
import { ErrorCode } from '../common/errors';
import type { Controller } from '../cluster/controller';
import type { ReplicaManager } from '../replica/replica-manager';
import { AclOperation, ResourceType } from '../security/acl';
import { defineHandler } from './handler';

export interface DescribeProducersServices {
  readonly controller: Pick<Controller, 'topic'>;
  readonly replicas: Pick<ReplicaManager, 'partition'>;
}

export const describeProducers = defineHandler(ApiKey.DescribeProducers, { minVersion: 0, maxVersion: 0 },
  (s: DescribeProducersServices) => (req, ctx) => ({
    throttleTimeMs: 0,
    topics: req.topics.map((t) => ({
      name: t.name,
      partitions: ctx.authorize(AclOperation.DESCRIBE, ResourceType.TOPIC, t.name)
        ? t.partitionIndexes.map((p) => describePartition(s, t.name, p))
        : t.partitionIndexes.map((partitionIndex) => ({ partitionIndex, errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED, errorMessage: null, activeProducers: [] })),
    })),
  }));

function describePartition(s: DescribeProducersServices, topic: string, index: number): PartitionResponse {
  const failed = (errorCode: number): PartitionResponse => ({ partitionIndex: index, errorCode, errorMessage: null, activeProducers: [] });
  if (!s.controller.topic(topic)?.partitions[index]) return failed(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  const partition = s.replicas.partition(topic, index);
  if (!partition) return failed(ErrorCode.NOT_LEADER_OR_FOLLOWER);
  if (partition.log.offline) return failed(ErrorCode.KAFKA_STORAGE_ERROR);
  const activeProducers = [...partition.log.producerState.activeProducers().values()].map((e) => ({
    producerId: BigInt(e.producerId),
    producerEpoch: e.producerEpoch,
    lastSequence: e.batches.length > 0 ? e.batches[e.batches.length - 1].lastSeq : -1,
    lastTimestamp: BigInt(e.lastTimestamp),
    coordinatorEpoch: e.coordinatorEpoch,
    currentTxnStartOffset: BigInt(e.currentTxnFirstOffset ?? -1),
  }));
  return { partitionIndex: index, errorCode: ErrorCode.NONE, errorMessage: null, activeProducers };
}
