// ListPartitionReassignments (key 46), version 0 (KIP-455).
// - The reassignments in progress: of every topic (topics null) or of the named partitions, each
//   with its full replica set (target then the replicas being removed), adding and removing replicas.
// - Partitions not being reassigned, and unknown topics or partitions, are left out (no error), as
//   Kafka's controller answers.
// - Without DESCRIBE on the cluster: CLUSTER_AUTHORIZATION_FAILED and no topics.
import { ApiKey } from '../protocol/generated';
import type { Controller } from '../cluster/controller';
import { ErrorCode } from '../common/errors';
import { AclOperation } from '../security/acl';
import { authorizeCluster, CLUSTER_AUTHORIZATION_MESSAGE } from './shared/authorization';
import { defineHandler } from './handler';

export interface ListPartitionReassignmentsServices {
  readonly controller: Pick<Controller, 'listPartitionReassignments'>;
}

export const listPartitionReassignments = defineHandler(ApiKey.ListPartitionReassignments, { minVersion: 0, maxVersion: 0 },
  (s: ListPartitionReassignmentsServices) => (req, ctx) => {
    if (!authorizeCluster(ctx, AclOperation.DESCRIBE)) {
      return { throttleTimeMs: 0, errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, errorMessage: CLUSTER_AUTHORIZATION_MESSAGE, topics: [] };
    }
    const named = req.topics?.map((t) => ({ name: t.name, partitions: t.partitionIndexes })) ?? null;
    const topics = s.controller.listPartitionReassignments(named).map((t) => ({
      name: t.name,
      partitions: t.partitions.map((p) => ({ partitionIndex: p.partition, replicas: p.replicas, addingReplicas: p.adding, removingReplicas: p.removing })),
    }));
    return { throttleTimeMs: 0, errorCode: 0, errorMessage: null, topics };
  });
