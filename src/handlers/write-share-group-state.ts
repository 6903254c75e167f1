// WriteShareGroupState (key 85), versions 0-1.
// - Share-partition leader to share coordinator: the batches replace, offset by offset, what was
//   stored (the higher delivery count, then state, wins an overlap); a start offset moves the start
//   forward (never back) and drops what is below it. v1 carries DeliveryCompleteCount (-1 in v0).
// - Per partition: INVALID_REQUEST for a negative partition, leader epoch or state epoch, and for a
//   share-partition never initialized; FENCED_LEADER_EPOCH / FENCED_STATE_EPOCH below the recorded
//   epochs; UNKNOWN_TOPIC_OR_PARTITION; NOT_COORDINATOR / COORDINATOR_LOAD_IN_PROGRESS.
// - CLUSTER_ACTION on the cluster, else CLUSTER_AUTHORIZATION_FAILED for every partition; no group id,
//   topics or partitions: no results (handlers/shared/share-state-requests.ts).
import { ApiKey } from '../protocol/generated';
import type { ShareCoordinator } from '../share-state';
import { defineHandler } from './handler';
import { answerSharePartitions } from './shared/share-state-requests';

export interface WriteShareGroupStateServices {
  readonly shareCoordinator: Pick<ShareCoordinator, 'write'>;
}

export const writeShareGroupState = defineHandler(ApiKey.WriteShareGroupState, { minVersion: 0, maxVersion: 1 },
  (s: WriteShareGroupStateServices) => async (req, ctx) => ({
    results: await answerSharePartitions(req, ctx, async (key, p) => ({
      partition: p.partition,
      ...await s.shareCoordinator.write(key, {
        stateEpoch: p.stateEpoch, leaderEpoch: p.leaderEpoch, startOffset: p.startOffset,
        deliveryCompleteCount: p.deliveryCompleteCount ?? -1, stateBatches: p.stateBatches,
      }),
    }), (partition, errorCode, errorMessage) => ({ partition, errorCode, errorMessage })),
  }));
