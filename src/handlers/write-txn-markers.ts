// WriteTxnMarkers (key 27), versions 0-1.
// - What a transaction coordinator sends a partition leader: write this COMMIT or ABORT marker into
//   these partitions. Fjord's own coordinator writes its markers through the same code; this handler
//   serves tools and tests that send the request themselves.
// - Per partition: NONE once the marker is in the log; UNKNOWN_TOPIC_OR_PARTITION; INVALID_PRODUCER_EPOCH
//   for a marker older than the producer's epoch; TRANSACTION_COORDINATOR_FENCED for an older
//   coordinator epoch; KAFKA_STORAGE_ERROR; INVALID_PRODUCER_ID_MAPPING for a producer id past 2^53, which
//   this broker never hands out and cannot write. A marker into __consumer_offsets also commits or drops
//   the producer's pending transactional offsets.
import { ApiKey } from '../protocol/generated';
import { ErrorCode } from '../common/errors';
import type { ReplicaManager } from '../replica/replica-manager';
import type { GroupCoordinator } from '../group';
import { writeTxnMarker } from '../txn/markers';
import { defineHandler } from './handler';

/** writeTxnMarker, shared with the transaction coordinator, takes both whole. */
export interface WriteTxnMarkersServices {
  readonly replicas: ReplicaManager;
  readonly groups: GroupCoordinator;
}

export const writeTxnMarkers = defineHandler(ApiKey.WriteTxnMarkers, { minVersion: 0, maxVersion: 1 }, (s: WriteTxnMarkersServices) => async (req) => {
  const markers = await Promise.all(req.markers.map(async (m) => {
    const marker = { producerId: Number(m.producerId), producerEpoch: m.producerEpoch, coordinatorEpoch: m.coordinatorEpoch, commit: m.transactionResult };
    const knownRange = Number.isSafeInteger(marker.producerId);
    const topics = await Promise.all(m.topics.map(async (t) => ({
      name: t.name,
      partitions: await Promise.all(t.partitionIndexes.map(async (partitionIndex) => ({
        partitionIndex,
        errorCode: knownRange
          ? await writeTxnMarker(s.replicas, s.groups, { topic: t.name, partition: partitionIndex }, marker)
          : ErrorCode.INVALID_PRODUCER_ID_MAPPING,
      }))),
    })));
    return { producerId: m.producerId, topics };
  }));
  return { markers };
});
