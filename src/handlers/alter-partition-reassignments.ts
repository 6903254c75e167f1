// AlterPartitionReassignments (key 45), versions 0-1 (KIP-455; v1 adds KIP-860's
// allowReplicationFactorChange, echoed in the response).
// - Per partition, a target replica list starts a reassignment (replacing one in progress); null
//   cancels the one in progress. The answer comes once the change is in the cluster's metadata; the
//   active controller completes it once the new replicas are in sync (ListPartitionReassignments
//   shows it until then).
// - Errors per partition, with Kafka's KRaft messages: UNKNOWN_TOPIC_OR_PARTITION (topic or partition),
//   INVALID_REPLICA_ASSIGNMENT (an empty list, a broker named twice or not registered, a cancel that
//   would need an unclean election), INVALID_REPLICATION_FACTOR (the target changes the replication
//   factor while allowReplicationFactorChange is false), NO_REASSIGNMENT_IN_PROGRESS (cancelling none).
// - A single broker: the only valid target is [itself], which changes nothing.
// - Without ALTER on the cluster: CLUSTER_AUTHORIZATION_FAILED for the request and each partition, nothing changed.
import { ApiKey } from '../protocol/generated';
import type { Controller } from '../cluster/controller';
import { ErrorCode } from '../common/errors';
import { AclOperation } from '../security/acl';
import { authorizeCluster, CLUSTER_AUTHORIZATION_MESSAGE } from './shared/authorization';
import { defineHandler } from './handler';

export interface AlterPartitionReassignmentsServices {
  readonly controller: Pick<Controller, 'alterPartitionReassignments'>;
}

export const alterPartitionReassignments = defineHandler(ApiKey.AlterPartitionReassignments, { minVersion: 0, maxVersion: 1 },
  (s: AlterPartitionReassignmentsServices) => async (req, ctx) => {
    const allowReplicationFactorChange = req.allowReplicationFactorChange ?? true;
    if (!authorizeCluster(ctx, AclOperation.ALTER)) {
      const refused = { errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, errorMessage: CLUSTER_AUTHORIZATION_MESSAGE };
      return {
        throttleTimeMs: 0, allowReplicationFactorChange, ...refused,
        responses: req.topics.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, ...refused })) })),
      };
    }
    const responses = [];
    for (const topic of req.topics) {
      const targets = topic.partitions.map((p) => ({ partition: p.partitionIndex, replicas: p.replicas ?? null }));
      const outcomes = await s.controller.alterPartitionReassignments(topic.name, targets, allowReplicationFactorChange);
      responses.push({
        name: topic.name,
        partitions: topic.partitions.map((p, i) => ({ partitionIndex: p.partitionIndex, errorCode: outcomes[i].errorCode, errorMessage: outcomes[i].errorMessage })),
      });
    }
    return { throttleTimeMs: 0, allowReplicationFactorChange, errorCode: 0, errorMessage: null, responses };
  });
