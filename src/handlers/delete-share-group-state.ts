// DeleteShareGroupState (key 86), version 0.
// - Broker to share coordinator (a share group or its offsets deleted): each share-partition's state
//   goes (a tombstone); one with no state succeeds without a record.
// - Per partition: INVALID_REQUEST for a negative partition; UNKNOWN_TOPIC_OR_PARTITION for a topic id
//   or partition the metadata does not have; NOT_COORDINATOR / COORDINATOR_LOAD_IN_PROGRESS.
// - CLUSTER_ACTION on the cluster, else CLUSTER_AUTHORIZATION_FAILED for every partition; no group id,
//   topics or partitions: no results (handlers/shared/share-state-requests.ts).
import { ApiKey } from '../protocol/generated';
import type { ShareCoordinator } from '../share-state';
import { defineHandler } from './handler';
import { answerSharePartitions } from './shared/share-state-requests';

export interface DeleteShareGroupStateServices {
  readonly shareCoordinator: Pick<ShareCoordinator, 'delete'>;
}

export const deleteShareGroupState = defineHandler(ApiKey.DeleteShareGroupState, { minVersion: 0, maxVersion: 0 },
  (s: DeleteShareGroupStateServices) => async (req, ctx) => ({
    results: await answerSharePartitions(req, ctx,
      async (key, p) => ({ partition: p.partition, ...await s.shareCoordinator.delete(key) }),
      (partition, errorCode, errorMessage) => ({ partition, errorCode, errorMessage })),
  }));
