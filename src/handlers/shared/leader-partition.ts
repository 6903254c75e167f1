// The partition a request names, checked as Kafka's ReplicaManager.getPartitionOrException and
// Partition.checkCurrentLeaderEpoch do; shared by Fetch, ListOffsets and OffsetForLeaderEpoch.
import { ErrorCode } from '../../common/errors';
import type { Partition } from '../../replica/replica-manager';
import type { Broker } from '../../broker';

/** A request's currentLeaderEpoch when the client does not know it (Kafka: only -1 means absent). */
export const NO_LEADER_EPOCH = -1;

/**
 * The partition we lead and its current leader epoch, or the error Kafka answers
 * (ReplicaManager.getPartitionOrException: unknown, then offline; then Partition.checkCurrentLeaderEpoch).
 */
export function leaderPartition(
  broker: Broker, topicName: string, index: number, currentLeaderEpoch: number,
): { partition: Partition; leaderEpoch: number } | { errorCode: number } {
  const meta = broker.controller.topic(topicName)?.partitions[index];
  const partition = meta ? broker.replicas.partition(topicName, index) : undefined;
  // Still loading at start-up: Kafka answers this for a partition it does not host (yet); clients retry.
  if (meta && !partition && broker.replicas.partitionLoading(topicName, index)) return { errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER };
  if (!meta || !partition) return { errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION };
  if (partition.log.offline) return { errorCode: ErrorCode.KAFKA_STORAGE_ERROR };
  if (currentLeaderEpoch !== NO_LEADER_EPOCH) {
    if (currentLeaderEpoch < meta.leaderEpoch) return { errorCode: ErrorCode.FENCED_LEADER_EPOCH };
    if (currentLeaderEpoch > meta.leaderEpoch) return { errorCode: ErrorCode.UNKNOWN_LEADER_EPOCH };
  }
  return { partition, leaderEpoch: meta.leaderEpoch };
}
