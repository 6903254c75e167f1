// ReadShareGroupStateSummary (key 87), versions 0-1.
// - Broker to share coordinator (DescribeShareGroupOffsets): each share-partition's state epoch, leader
//   epoch and start offset, without the batches; v1 adds DeliveryCompleteCount. A share-partition with
//   no state: start offset -1, epochs 0. It reads only: no leader epoch is recorded or checked.
// - Per partition: INVALID_REQUEST for a negative partition; UNKNOWN_TOPIC_OR_PARTITION;
//   NOT_COORDINATOR / COORDINATOR_LOAD_IN_PROGRESS.
// - CLUSTER_ACTION on the cluster, else CLUSTER_AUTHORIZATION_FAILED for every partition; no group id,
//   topics or partitions: no results (handlers/shared/share-state-requests.ts).
import { ApiKey } from '../protocol/generated';
import type { ShareCoordinator } from '../share-state';
import { defineHandler } from './handler';
import { answerSharePartitions } from './shared/share-state-requests';

export interface ReadShareGroupStateSummaryServices {
  readonly shareCoordinator: Pick<ShareCoordinator, 'readSummary'>;
}

export const readShareGroupStateSummary = defineHandler(ApiKey.ReadShareGroupStateSummary, { minVersion: 0, maxVersion: 1 },
  (s: ReadShareGroupStateSummaryServices) => async (req, ctx) => ({
    results: await answerSharePartitions(req, ctx,
      async (key, p) => ({ partition: p.partition, ...await s.shareCoordinator.readSummary(key, p.leaderEpoch) }),
      (partition, errorCode, errorMessage) => ({ partition, errorCode, errorMessage, stateEpoch: 0, leaderEpoch: 0, startOffset: 0n, deliveryCompleteCount: 0 })),
  }));
