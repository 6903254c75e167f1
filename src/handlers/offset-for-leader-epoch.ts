// OffsetForLeaderEpoch (key 23), versions 0-4: a translation of ReplicaManager.lastOffsetForLeaderEpoch.
// - Per partition: the largest leader epoch <= the requested one and its end offset (where the
//   next epoch starts, or the log end offset for the latest epoch), as Kafka's
//   LeaderEpochFileCache.endOffsetFor. An epoch below every known one answers itself with the
//   first known start offset; one above every known one, or -1, answers -1/-1 with no error.
// - The current leader epoch is known from the moment this broker leads the partition, starting
//   at the log end offset of that moment (Kafka's Partition.makeLeader puts it in the epoch
//   cache): an empty log answers epoch 0 with end offset 0, and a log written before a leader
//   epoch bump answers the new epoch with the log end offset, as Kafka does. The Java consumer
//   validates its position with this after a rebalance and resets on a -1 answer.
// - currentLeaderEpoch (v2+, -1 when not given): older than ours FENCED_LEADER_EPOCH, newer
//   UNKNOWN_LEADER_EPOCH. UNKNOWN_TOPIC_OR_PARTITION for partitions we do not have,
//   KAFKA_STORAGE_ERROR for an offline log.
// - Authorization (KIP-320): CLUSTER_ACTION on the cluster (followers) covers every topic; else
//   each topic needs DESCRIBE, TOPIC_AUTHORIZATION_FAILED for its partitions otherwise.
import { ApiKey } from '../protocol/generated';
import { ErrorCode } from '../common/errors';
import { NO_LEADER_EPOCH, type ReplicaManager } from '../replica/replica-manager';
import { AclOperation, CLUSTER_RESOURCE_NAME, ResourceType } from '../security/acl';
import { defineHandler } from './handler';

export interface OffsetForLeaderEpochServices {
  readonly replicas: Pick<ReplicaManager, 'lastOffsetForLeaderEpoch'>;
}

export const offsetForLeaderEpoch = defineHandler(ApiKey.OffsetForLeaderEpoch, { minVersion: 0, maxVersion: 4 },
  (s: OffsetForLeaderEpochServices) => (req, ctx) => {
    const clusterAction = ctx.authorize(AclOperation.CLUSTER_ACTION, ResourceType.CLUSTER, CLUSTER_RESOURCE_NAME);
    return {
      throttleTimeMs: 0,
      topics: req.topics.map((t) => ({
        topic: t.topic,
        partitions: clusterAction || ctx.authorize(AclOperation.DESCRIBE, ResourceType.TOPIC, t.topic) ? t.partitions.map((p) => {
          const end = s.replicas.lastOffsetForLeaderEpoch(t.topic, p.partition, p.currentLeaderEpoch ?? NO_LEADER_EPOCH, p.leaderEpoch);
          return { errorCode: end.errorCode, partition: p.partition, leaderEpoch: end.epoch, endOffset: BigInt(end.endOffset) };
        }) : t.partitions.map((p) => ({ errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED, partition: p.partition, leaderEpoch: -1, endOffset: -1n })),
      })),
    };
  });
