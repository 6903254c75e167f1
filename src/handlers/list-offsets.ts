// ListOffsets (key 2), versions 0-11: a translation of ReplicaManager.fetchOffsetForTimestamp and
// legacyFetchOffsetsForTimestamp (src/replica/offset-lookups.ts has the lookups).
// - v1+, per partition, by the requested timestamp (Kafka's Partition.fetchOffsetForTimestamp and
//   UnifiedLog.fetchOffsetByTimestamp):
//     -2 EARLIEST, -4 EARLIEST_LOCAL (v8+; no tiered storage, so the same): the log start offset,
//        with the earliest epoch entry's epoch when that entry starts there;
//     -1 LATEST: the high watermark for a consumer (replicaId -1) reading uncommitted, the last
//        stable offset reading committed, the log end offset for any other replicaId; with the
//        current leader epoch;
//     -3 MAX_TIMESTAMP (v7+): the first record carrying the log's largest timestamp;
//     -5 LATEST_TIERED (v9+): offset -1 (nothing is tiered);
//     -6 EARLIEST_PENDING_UPLOAD (v11+, KIP-1023): offset -1 (no remote storage, so nothing pending);
//     >= 0: the first record whose timestamp is >= the target, found inside its batch
//        (compressed or not; every record of a LogAppendTime batch carries the batch's time).
//   -1/-2/-4 answer timestamp -1. A lookup that finds nothing, or finds a record at or past the
//   last fetchable offset (the -1 answer), answers offset -1 and timestamp -1 with no error.
//   Any other negative timestamp, or a special one below its version, gets UNSUPPORTED_VERSION.
// - Leader epoch (v4+): of a found record, its batch's partition leader epoch.
// - Errors per partition: a partition named twice in the request INVALID_REQUEST (each time),
//   UNKNOWN_TOPIC_OR_PARTITION, KAFKA_STORAGE_ERROR for an offline log, and with
//   currentLeaderEpoch (v4+) FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH.
// - A topic the principal may not DESCRIBE answers TOPIC_AUTHORIZATION_FAILED for each of its
//   partitions, before any other check (Kafka's handleListOffsetRequest).
// - v0 answers OldStyleOffsets (Kafka's legacyFetchOffsetsBefore): -1 the log end offset, -2 the
//   first segment's start, else the base offsets of segments last modified at or before the
//   timestamp; newest first, at most MaxNumOffsets; capped at the high watermark for consumers.
import type { Logger } from 'pino';
import { ApiKey } from '../protocol/generated';
import type { ListOffsetsResponseListOffsetsPartitionResponse as PartitionResponse } from '../protocol/generated/ListOffsetsResponse';
import { ErrorCode } from '../common/errors';
import { NO_LEADER_EPOCH, type ReplicaManager } from '../replica/replica-manager';
import {
  EARLIEST_LOCAL_TIMESTAMP, EARLIEST_PENDING_UPLOAD_TIMESTAMP, EARLIEST_TIMESTAMP, LATEST_TIERED_TIMESTAMP, LATEST_TIMESTAMP,
  MAX_TIMESTAMP, NOT_FOUND, type OffsetLookup,
} from '../replica/offset-lookups';
import type { FetchIsolation } from '../replica/fetch-reads';
import { AclOperation, ResourceType } from '../security/acl';
import { defineHandler } from './handler';

const CONSUMER_REPLICA_ID = -1;
const READ_COMMITTED = 1;

/** The first version each special timestamp may be used at (Kafka's ReplicaManager.timestampMinSupportedVersion). */
const TIMESTAMP_MIN_VERSION = new Map<number, number>([
  [EARLIEST_TIMESTAMP, 1], [LATEST_TIMESTAMP, 1], [MAX_TIMESTAMP, 7], [EARLIEST_LOCAL_TIMESTAMP, 8],
  [LATEST_TIERED_TIMESTAMP, 9], [EARLIEST_PENDING_UPLOAD_TIMESTAMP, 11],
]);

export interface ListOffsetsServices {
  readonly replicas: Pick<ReplicaManager, 'fetchOffsetForTimestamp' | 'legacyFetchOffsetsForTimestamp'>;
  readonly log: Pick<Logger, 'error'>;
}

export const listOffsets = defineHandler(ApiKey.ListOffsets, { minVersion: 0, maxVersion: 11 }, (s: ListOffsetsServices) => async (req, ctx) => {
  const v = ctx.apiVersion;
  const isFromConsumer = req.replicaId === CONSUMER_REPLICA_ID;
  // Kafka's FetchIsolation for the request: only a consumer is bounded below the log end offset.
  const isolation: FetchIsolation = !isFromConsumer ? 'log-end' : req.isolationLevel === READ_COMMITTED ? 'txn-committed' : 'high-watermark';
  const seen = new Map<string, number>();
  if (v >= 1) {
    for (const t of req.topics) for (const p of t.partitions) {
      const key = `${t.name}\0${p.partitionIndex}`;
      seen.set(key, (seen.get(key) ?? 0) + 1);
    }
  }
  /** A lookup's failure: a storage error's own code, else (logged) UNKNOWN_SERVER_ERROR. */
  const failureCode = (err: unknown, topic: string, partition: number): number => {
    const code = (err as { errorCode?: unknown }).errorCode;
    if (typeof code === 'number') return code;
    s.log.error({ err, topic, partition }, 'ListOffsets failed');
    return ErrorCode.UNKNOWN_SERVER_ERROR;
  };
  const topics = [];
  for (const t of req.topics) {
    const partitions: PartitionResponse[] = [];
    if (!ctx.authorize(AclOperation.DESCRIBE, ResourceType.TOPIC, t.name)) {
      for (const p of t.partitions) {
        partitions.push({
          partitionIndex: p.partitionIndex, errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED, oldStyleOffsets: [], timestamp: -1n, offset: -1n, leaderEpoch: -1,
        });
      }
      topics.push({ name: t.name, partitions });
      continue;
    }
    for (const p of t.partitions) {
      if (v === 0) {
        const oldStyle = (errorCode: number, offsets: number[] = []): PartitionResponse => ({
          partitionIndex: p.partitionIndex, errorCode, oldStyleOffsets: offsets.map((o) => BigInt(o)), timestamp: -1n, offset: -1n, leaderEpoch: -1,
        });
        try {
          const found = await s.replicas.legacyFetchOffsetsForTimestamp(t.name, p.partitionIndex, Number(p.timestamp), p.maxNumOffsets ?? 1, isFromConsumer);
          partitions.push(oldStyle(found.errorCode, found.offsets));
        } catch (err) {
          partitions.push(oldStyle(failureCode(err, t.name, p.partitionIndex)));
        }
        continue;
      }
      const answer = (found: OffsetLookup): PartitionResponse => ({
        partitionIndex: p.partitionIndex, errorCode: found.errorCode, oldStyleOffsets: [], timestamp: BigInt(found.timestamp),
        offset: BigInt(found.offset), leaderEpoch: v >= 4 ? found.leaderEpoch : -1,
      });
      const timestamp = Number(p.timestamp);
      const minVersion = TIMESTAMP_MIN_VERSION.get(timestamp);
      if (seen.get(`${t.name}\0${p.partitionIndex}`)! > 1) partitions.push(answer({ errorCode: ErrorCode.INVALID_REQUEST, ...NOT_FOUND }));
      else if (timestamp < 0 && (minVersion === undefined || v < minVersion)) partitions.push(answer({ errorCode: ErrorCode.UNSUPPORTED_VERSION, ...NOT_FOUND }));
      else {
        try {
          partitions.push(answer(await s.replicas.fetchOffsetForTimestamp(t.name, p.partitionIndex, p.currentLeaderEpoch ?? NO_LEADER_EPOCH, timestamp, isolation)));
        } catch (err) {
          partitions.push(answer({ errorCode: failureCode(err, t.name, p.partitionIndex), ...NOT_FOUND }));
        }
      }
    }
    topics.push({ name: t.name, partitions });
  }
  return { throttleTimeMs: 0, topics };
});
