// AlterReplicaLogDirs (key 34), versions 1-2 (Kafka 4 removed version 0).
// - Per partition, the log dir to move its replica to (Kafka's ReplicaManager.alterReplicaLogDirs):
//   the path must be one of log.dirs, absolute, as configured (LOG_DIR_NOT_FOUND otherwise) and
//   online (KAFKA_STORAGE_ERROR); the topic and partition must exist (UNKNOWN_TOPIC_OR_PARTITION)
//   and be hosted here (REPLICA_NOT_AVAILABLE, also while it is still loading). NONE when the
//   replica is there already or being moved there.
// - NONE starts the move, which goes on in the background while the partition keeps serving
//   (storage/replica-move.ts): DescribeLogDirs shows the future replica until it is done. A move
//   to another dir than the one in progress replaces it.
// - A partition named under two dirs goes to the last one (Kafka keys the request by partition);
//   the answer groups partitions by topic in request order.
// - Not done: Kafka remembers the dir asked for a partition not created here yet and creates it
//   there; Fjord answers REPLICA_NOT_AVAILABLE and forgets it.
// - Without ALTER on the cluster: every partition CLUSTER_AUTHORIZATION_FAILED, nothing moved.
import type { Logger } from 'pino';
import { ApiKey } from '../protocol/generated';
import type { AlterReplicaLogDirsResponseAlterReplicaLogDirTopicResult as TopicResult } from '../protocol/generated/AlterReplicaLogDirsResponse';
import { ErrorCode } from '../common/errors';
import type { Controller } from '../cluster/controller';
import type { ReplicaManager } from '../replica/replica-manager';
import type { LogManager } from '../storage';
import { AclOperation } from '../security/acl';
import { authorizeCluster } from './shared/authorization';
import { defineHandler } from './handler';

export interface AlterReplicaLogDirsServices {
  readonly controller: Pick<Controller, 'topic'>;
  readonly replicas: Pick<ReplicaManager, 'partition'> & { readonly logs: Pick<LogManager, 'moveLog' | 'isLogDirOnline'> };
  readonly log: Pick<Logger, 'error'>;
}

export const alterReplicaLogDirs = defineHandler(ApiKey.AlterReplicaLogDirs, { minVersion: 1, maxVersion: 2 },
  (s: AlterReplicaLogDirsServices) => async (req, ctx) => {
    const authorized = authorizeCluster(ctx, AclOperation.ALTER);
    const byTopic = new Map<string, Map<number, string>>();
    for (const dir of req.dirs) {
      for (const t of dir.topics) {
        let partitions = byTopic.get(t.name);
        if (!partitions) byTopic.set(t.name, (partitions = new Map()));
        for (const p of t.partitions) partitions.set(p, dir.path);
      }
    }
    const results: TopicResult[] = [];
    for (const [topicName, partitions] of byTopic) {
      const answers = [];
      for (const [partitionIndex, logDir] of partitions) answers.push({ partitionIndex, errorCode: authorized ? await moveOne(s, topicName, partitionIndex, logDir) : ErrorCode.CLUSTER_AUTHORIZATION_FAILED });
      results.push({ topicName, partitions: answers });
    }
    return { throttleTimeMs: 0, results };
  });

async function moveOne(s: AlterReplicaLogDirsServices, topic: string, index: number, logDir: string): Promise<number> {
  try {
    // The dir first, as Kafka checks it (isLogDirOnline throws LOG_DIR_NOT_FOUND for a path not in log.dirs).
    if (!s.replicas.logs.isLogDirOnline(logDir)) return ErrorCode.KAFKA_STORAGE_ERROR;
    if (!s.controller.topic(topic)?.partitions[index]) return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
    if (!s.replicas.partition(topic, index)) return ErrorCode.REPLICA_NOT_AVAILABLE;
    await s.replicas.logs.moveLog(topic, index, logDir);
    return ErrorCode.NONE;
  } catch (err) {
    const code = (err as { errorCode?: unknown }).errorCode;
    if (typeof code === 'number') return code;
    s.log.error({ err, topic, partition: index, logDir }, 'AlterReplicaLogDirs failed');
    return ErrorCode.UNKNOWN_SERVER_ERROR;
  }
}
