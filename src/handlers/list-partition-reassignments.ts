// ListPartitionReassignments (key 46), version 0 (KIP-455).
// - The reassignments in progress: of every topic (topics null) or of the named partitions, each
//   with its full replica set (target then the replicas being removed), adding and removing replicas.
// - Partitions not being reassigned, and unknown topics or partitions, are left out (no error), as
//   Kafka's controller answers.
import { ApiKey } from '../protocol/generated';
import type { Controller } from '../cluster/controller';
import { defineHandler } from './handler';

export interface ListPartitionReassignmentsServices {
  readonly controller: Pick<Controller, 'listPartitionReassignments'>;
}

export const listPartitionReassignments = defineHandler(ApiKey.ListPartitionReassignments, { minVersion: 0, maxVersion: 0 },
  (s: ListPartitionReassignmentsServices) => (req) => {
    const named = req.topics?.map((t) => ({ name: t.name, partitions: t.partitionIndexes })) ?? null;
    const topics = s.controller.listPartitionReassignments(named).map((t) => ({
      name: t.name,
      partitions: t.partitions.map((p) => ({ partitionIndex: p.partition, replicas: p.replicas, addingReplicas: p.adding, removingReplicas: p.removing })),
    }));
    return { throttleTimeMs: 0, errorCode: 0, errorMessage: null, topics };
  });
