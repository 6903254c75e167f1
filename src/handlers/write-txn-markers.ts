// WriteTxnMarkers (key 27), versions 0-2.
// - What a transaction coordinator sends a partition leader: write this COMMIT or ABORT marker into
//   these partitions. Fjord's coordinators send it to each other (src/net/txn-marker-channel.ts) and
//   write their own leaders' markers through the same local channel as this handler.
// - Per partition: NONE once the marker is in the log; NOT_LEADER_OR_FOLLOWER where this broker is
//   not the leader (the coordinator retries on the new one); UNKNOWN_TOPIC_OR_PARTITION; INVALID_PRODUCER_EPOCH
//   for a marker older than the producer's epoch (v2 with transaction version 2: not newer than it, the
//   coordinator having bumped the epoch for the marker); TRANSACTION_COORDINATOR_FENCED for an older
//   coordinator epoch; KAFKA_STORAGE_ERROR; INVALID_PRODUCER_ID_MAPPING for a producer id past 2^53, which
//   this broker never hands out and cannot write. A marker into __consumer_offsets also commits or drops
//   the producer's pending transactional offsets.
// - Without CLUSTER_ACTION on the cluster (only brokers send it): CLUSTER_AUTHORIZATION_FAILED for every partition.
import { ApiKey } from '../protocol/generated';
import { ErrorCode } from '../common/errors';
import { LocalTxnMarkerChannel, type LocalTxnMarkerServices } from '../txn/markers';
import { AclOperation } from '../security/acl';
import { authorizeCluster } from './shared/authorization';
import { defineHandler } from './handler';

/** The local marker channel, shared with the transaction coordinator, takes the replicas and groups whole. */
export type WriteTxnMarkersServices = LocalTxnMarkerServices;

export const writeTxnMarkers = defineHandler(ApiKey.WriteTxnMarkers, { minVersion: 0, maxVersion: 2 }, (s: WriteTxnMarkersServices) => {
  const local = new LocalTxnMarkerChannel(s);
  return async (req, ctx) => {
    if (!authorizeCluster(ctx, AclOperation.CLUSTER_ACTION)) {
      return {
        markers: req.markers.map((m) => ({
          producerId: m.producerId,
          topics: m.topics.map((t) => ({
            name: t.name, partitions: t.partitionIndexes.map((partitionIndex) => ({ partitionIndex, errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED })),
          })),
        })),
      };
    }
    const markers = await Promise.all(req.markers.map(async (m) => {
      const marker = {
        producerId: Number(m.producerId), producerEpoch: m.producerEpoch, coordinatorEpoch: m.coordinatorEpoch, commit: m.transactionResult,
        transactionVersion: m.transactionVersion ?? 0,
      };
      const knownRange = Number.isSafeInteger(marker.producerId);
      const topics = await Promise.all(m.topics.map(async (t) => ({
        name: t.name,
        partitions: await Promise.all(t.partitionIndexes.map(async (partitionIndex) => ({
          partitionIndex,
          errorCode: knownRange
            ? await local.writeMarker({ topic: t.name, partition: partitionIndex }, marker)
            : ErrorCode.INVALID_PRODUCER_ID_MAPPING,
        }))),
      })));
      return { producerId: m.producerId, topics };
    }));
    return { markers };
  };
});
