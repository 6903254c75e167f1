// ReadShareGroupState (key 84), version 0.
// - Share-partition leader to share coordinator, as it takes the partition at LeaderEpoch: the state
//   epoch, start offset and batches (offsets acknowledged, archived or delivered before). A read at a
//   leader epoch newer than the recorded one records it (later writes at an older one are fenced).
// - Per partition: INVALID_REQUEST for a negative partition or leader epoch and for a share-partition
//   never initialized ("Read operation on uninitialized share partition not allowed."); FENCED_LEADER_EPOCH
//   below the recorded leader epoch; UNKNOWN_TOPIC_OR_PARTITION; NOT_COORDINATOR / COORDINATOR_LOAD_IN_PROGRESS.
// - CLUSTER_ACTION on the cluster, else CLUSTER_AUTHORIZATION_FAILED for every partition; no group id,
//   topics or partitions: no results (handlers/shared/share-state-requests.ts).
import { ErrorCode } from '../common/errors';
import { ApiKey } from '../protocol/generated';
import type { ShareCoordinator } from '../share-state';
import { defineHandler } from './handler';
import { answerSharePartitions } from './shared/share-state-requests';

export interface ReadShareGroupStateServices {
  readonly shareCoordinator: Pick<ShareCoordinator, 'read'>;
}

export const readShareGroupState = defineHandler(ApiKey.ReadShareGroupState, { minVersion: 0, maxVersion: 0 },
  (s: ReadShareGroupStateServices) => async (req, ctx) => {
    const failed = (partition: number, errorCode: number, errorMessage: string | null) =>
      ({ partition, errorCode, errorMessage, stateEpoch: 0, startOffset: 0n, stateBatches: [] });
    return {
      results: await answerSharePartitions(req, ctx, async (key, p) => {
        const r = await s.shareCoordinator.read(key, p.leaderEpoch);
        if (!('stateBatches' in r)) return failed(p.partition, r.errorCode, r.errorMessage);
        return {
          partition: p.partition, errorCode: ErrorCode.NONE, errorMessage: null, stateEpoch: r.stateEpoch, startOffset: r.startOffset,
          stateBatches: r.stateBatches.map((b) => ({ ...b })),
        };
      }, failed),
    };
  });
