// InitializeShareGroupState (key 83), version 0.
// - Broker to share coordinator (the group coordinator, AlterShareGroupOffsets): each share-partition
//   (re)starts at StartOffset with StateEpoch, its batches dropped (a snapshot record).
// - Per partition: FENCED_STATE_EPOCH below the recorded state epoch; INVALID_REQUEST for a negative
//   partition or state epoch; UNKNOWN_TOPIC_OR_PARTITION for a topic id or partition the metadata does
//   not have; NOT_COORDINATOR / COORDINATOR_LOAD_IN_PROGRESS where this broker does not serve the key (yet).
// - CLUSTER_ACTION on the cluster, else CLUSTER_AUTHORIZATION_FAILED for every partition; no group id,
//   topics or partitions: no results (handlers/shared/share-state-requests.ts).
import { ApiKey } from '../protocol/generated';
import type { ShareCoordinator } from '../share-state';
import { defineHandler } from './handler';
import { answerSharePartitions } from './shared/share-state-requests';

export interface InitializeShareGroupStateServices {
  readonly shareCoordinator: Pick<ShareCoordinator, 'initialize'>;
}

export const initializeShareGroupState = defineHandler(ApiKey.InitializeShareGroupState, { minVersion: 0, maxVersion: 0 },
  (s: InitializeShareGroupStateServices) => async (req, ctx) => ({
    results: await answerSharePartitions(req, ctx,
      async (key, p) => ({ partition: p.partition, ...await s.shareCoordinator.initialize(key, p.stateEpoch, p.startOffset) }),
      (partition, errorCode, errorMessage) => ({ partition, errorCode, errorMessage })),
  }));
