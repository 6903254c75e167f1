// ListOffsets (key 2), versions 0-10.
// - v1+, per partition, by the requested timestamp (Kafka's Partition.fetchOffsetForTimestamp and
//   UnifiedLog.fetchOffsetByTimestamp):
//     -2 EARLIEST, -4 EARLIEST_LOCAL (v8+; no tiered storage, so the same): the log start offset,
//        with the earliest epoch entry's epoch when that entry starts there;
//     -1 LATEST: the high watermark for a consumer (replicaId -1) reading uncommitted, the last
//        stable offset reading committed, the log end offset for any other replicaId; with the
//        current leader epoch;
//     -3 MAX_TIMESTAMP (v7+): the first record carrying the log's largest timestamp;
//     -5 LATEST_TIERED (v9+): offset -1 (nothing is tiered);
//     >= 0: the first record whose timestamp is >= the target, found inside its batch
//        (compressed or not; every record of a LogAppendTime batch carries the batch's time).
//   -1/-2/-4 answer timestamp -1. A lookup that finds nothing, or finds a record at or past the
//   last fetchable offset (the -1 answer), answers offset -1 and timestamp -1 with no error.
//   Any other negative timestamp, or a special one below its version, gets UNSUPPORTED_VERSION.
// - Leader epoch (v4+): of a found record, its batch's partition leader epoch.
// - Errors per partition: a partition named twice in the request INVALID_REQUEST (each time),
//   UNKNOWN_TOPIC_OR_PARTITION, KAFKA_STORAGE_ERROR for an offline log, and with
//   currentLeaderEpoch (v4+) FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH.
// - v0 answers OldStyleOffsets (Kafka's legacyFetchOffsetsBefore): -1 the log end offset, -2 the
//   first segment's start, else the base offsets of segments last modified at or before the
//   timestamp; newest first, at most MaxNumOffsets; capped at the high watermark for consumers.
import { stat } from 'node:fs/promises';
import * as path from 'node:path';
import { ApiKey } from '../protocol/generated';
import type { ListOffsetsRequest } from '../protocol/generated/ListOffsetsRequest';
import type {
  ListOffsetsResponse, ListOffsetsResponseListOffsetsPartitionResponse as PartitionResponse,
} from '../protocol/generated/ListOffsetsResponse';
import { ErrorCode } from '../common/errors';
import { decodeRecords } from '../records/records';
import { PARTITION_LEADER_EPOCH_OFFSET } from '../records/batch';
import type { PartitionLog, TimestampLookup } from '../storage';
import { LOG_FILE_SUFFIX, segmentFileName } from '../storage/log-segment';
import type { HandlerFactory } from './handler';
import type { Broker } from '../broker';
import { leaderEpochEntries } from './offset-for-leader-epoch';
import { leaderPartition, NO_LEADER_EPOCH } from './shared/leader-partition';
import { lastStableOffset, type Partition } from '../replica/replica-manager';

export const LATEST_TIMESTAMP = -1;
export const EARLIEST_TIMESTAMP = -2;
export const MAX_TIMESTAMP = -3;
export const EARLIEST_LOCAL_TIMESTAMP = -4;
export const LATEST_TIERED_TIMESTAMP = -5;
export const EARLIEST_PENDING_UPLOAD_TIMESTAMP = -6;
const CONSUMER_REPLICA_ID = -1;
const READ_COMMITTED = 1;

/** The first version each special timestamp may be used at (Kafka's ReplicaManager.timestampMinSupportedVersion). */
const TIMESTAMP_MIN_VERSION = new Map<number, number>([
  [EARLIEST_TIMESTAMP, 1], [LATEST_TIMESTAMP, 1], [MAX_TIMESTAMP, 7], [EARLIEST_LOCAL_TIMESTAMP, 8],
  [LATEST_TIERED_TIMESTAMP, 9], [EARLIEST_PENDING_UPLOAD_TIMESTAMP, 11],
]);

interface Found {
  offset: number;
  timestamp: number;
  /** -1 when unknown. */
  leaderEpoch: number;
}

const NOT_FOUND: Found = { offset: -1, timestamp: -1, leaderEpoch: -1 };

export const listOffsets: HandlerFactory = (broker) => ({
  apiKey: ApiKey.ListOffsets,
  name: 'ListOffsets',
  minVersion: 0,
  maxVersion: 10,
  async handle(req: ListOffsetsRequest, ctx): Promise<ListOffsetsResponse> {
    const v = ctx.apiVersion;
    const seen = new Map<string, number>();
    if (v >= 1) {
      for (const t of req.topics) for (const p of t.partitions) {
        const key = `${t.name}\0${p.partitionIndex}`;
        seen.set(key, (seen.get(key) ?? 0) + 1);
      }
    }
    const topics = [];
    for (const t of req.topics) {
      const partitions: PartitionResponse[] = [];
      for (const p of t.partitions) {
        if (v === 0) {
          partitions.push(await listOldStyle(broker, req.replicaId, t.name, p.partitionIndex, Number(p.timestamp), p.maxNumOffsets ?? 1));
          continue;
        }
        const answer = (errorCode: number, found: Found = NOT_FOUND): PartitionResponse => ({
          partitionIndex: p.partitionIndex, errorCode, oldStyleOffsets: [], timestamp: BigInt(found.timestamp),
          offset: BigInt(found.offset), leaderEpoch: v >= 4 ? found.leaderEpoch : -1,
        });
        const timestamp = Number(p.timestamp);
        const minVersion = TIMESTAMP_MIN_VERSION.get(timestamp);
        if (seen.get(`${t.name}\0${p.partitionIndex}`)! > 1) partitions.push(answer(ErrorCode.INVALID_REQUEST));
        else if (timestamp < 0 && (minVersion === undefined || v < minVersion)) partitions.push(answer(ErrorCode.UNSUPPORTED_VERSION));
        else {
          const leader = leaderPartition(broker, t.name, p.partitionIndex, p.currentLeaderEpoch ?? NO_LEADER_EPOCH);
          if ('errorCode' in leader) partitions.push(answer(leader.errorCode));
          else {
            try {
              partitions.push(answer(ErrorCode.NONE, await lookup(leader.partition, leader.leaderEpoch, timestamp, req)));
            } catch (err) {
              partitions.push(answer(failureCode(broker, err, t.name, p.partitionIndex)));
            }
          }
        }
      }
      topics.push({ name: t.name, partitions });
    }
    return { throttleTimeMs: 0, topics };
  },
});

/** Kafka's Partition.fetchOffsetForTimestamp for one partition we lead. */
async function lookup(partition: Partition, leaderEpoch: number, timestamp: number, req: ListOffsetsRequest): Promise<Found> {
  const { log } = partition;
  const isConsumer = req.replicaId === CONSUMER_REPLICA_ID;
  const lastFetchableOffset = !isConsumer ? log.logEndOffset
    : req.isolationLevel === READ_COMMITTED ? lastStableOffset(partition) : log.highWatermark;
  switch (timestamp) {
    case LATEST_TIMESTAMP:
      return { offset: lastFetchableOffset, timestamp: -1, leaderEpoch };
    case EARLIEST_TIMESTAMP:
    case EARLIEST_LOCAL_TIMESTAMP: {
      const first = leaderEpochEntries(log, leaderEpoch)[0];
      const start = log.logStartOffset;
      return { offset: start, timestamp: -1, leaderEpoch: first && first.startOffset <= start ? first.epoch : -1 };
    }
    case LATEST_TIERED_TIMESTAMP:
      return NOT_FOUND;
  }
  const found = timestamp === MAX_TIMESTAMP ? await recordWithMaxTimestamp(log) : await firstRecordAtOrAfter(log, timestamp);
  return found && found.offset < lastFetchableOffset ? found : NOT_FOUND;
}

/** The first record (from the log start offset) whose timestamp is >= target (FileRecords.searchForTimestamp). */
async function firstRecordAtOrAfter(log: PartitionLog, target: number): Promise<Found | null> {
  const startingOffset = log.logStartOffset;
  let from = startingOffset;
  for (;;) {
    const batch = await log.offsetForTimestamp(target, from);
    if (!batch) return null;
    for (const r of await decodeRecords(batch.batch)) {
      if (r.timestamp >= target && r.offset >= startingOffset) return { offset: r.offset, timestamp: r.timestamp, leaderEpoch: batchEpoch(batch) };
    }
    // Every such record of this batch is below the log start offset: look further on.
    if (batch.lastOffset < from) return null;
    from = batch.lastOffset + 1;
  }
}

/** The first record of the batch holding the log's largest timestamp that carries it (RecordBatch.offsetOfMaxTimestamp). */
async function recordWithMaxTimestamp(log: PartitionLog): Promise<Found | null> {
  const batch = await log.batchWithMaxTimestamp();
  if (!batch) return null;
  const record = (await decodeRecords(batch.batch)).find((r) => r.timestamp === batch.maxTimestamp);
  return record ? { offset: record.offset, timestamp: batch.maxTimestamp, leaderEpoch: batchEpoch(batch) } : null;
}

function batchEpoch(batch: TimestampLookup): number {
  const epoch = batch.batch.readInt32BE(PARTITION_LEADER_EPOCH_OFFSET);
  return epoch >= 0 ? epoch : -1;
}

/** v0: Kafka's Partition.legacyFetchOffsetsForTimestamp. */
async function listOldStyle(
  broker: Broker, replicaId: number, topic: string, index: number, timestamp: number, maxNumOffsets: number,
): Promise<PartitionResponse> {
  const answer = (errorCode: number, offsets: number[] = []): PartitionResponse => ({
    partitionIndex: index, errorCode, oldStyleOffsets: offsets.map((o) => BigInt(o)), timestamp: -1n, offset: -1n, leaderEpoch: -1,
  });
  const leader = leaderPartition(broker, topic, index, NO_LEADER_EPOCH);
  if ('errorCode' in leader) return answer(leader.errorCode);
  const log = leader.partition.log;
  try {
    const offsets = await legacyOffsetsBefore(log, timestamp, maxNumOffsets);
    if (replicaId !== CONSUMER_REPLICA_ID) return answer(ErrorCode.NONE, offsets);
    const hw = log.highWatermark;
    return answer(ErrorCode.NONE, offsets.some((o) => o > hw) ? [hw, ...offsets.filter((o) => o <= hw)] : offsets);
  } catch (err) {
    return answer(failureCode(broker, err, topic, index));
  }
}

/** Kafka's UnifiedLog.legacyFetchOffsetsBefore: segment start offsets by segment file modification time. */
async function legacyOffsetsBefore(log: PartitionLog, timestamp: number, maxNumOffsets: number): Promise<number[]> {
  const segments = log.segmentInfo();
  const start = log.logStartOffset;
  const candidates = segments.map((s) => ({ offset: Math.max(s.baseOffset, start), baseOffset: s.baseOffset, mtime: -1 }));
  if (segments[segments.length - 1].size > 0) candidates.push({ offset: log.logEndOffset, baseOffset: -1, mtime: Date.now() });
  let startIndex: number;
  if (timestamp === LATEST_TIMESTAMP) startIndex = candidates.length - 1;
  else if (timestamp === EARLIEST_TIMESTAMP) startIndex = 0;
  else {
    for (const c of candidates) {
      if (c.baseOffset >= 0) c.mtime = await lastModified(path.join(log.dir, segmentFileName(c.baseOffset, LOG_FILE_SUFFIX)));
    }
    startIndex = candidates.length - 1;
    while (startIndex >= 0 && candidates[startIndex].mtime > timestamp) startIndex--;
  }
  const out: number[] = [];
  for (let i = startIndex; i >= 0 && out.length < maxNumOffsets; i--) out.push(candidates[i].offset);
  return out.sort((a, b) => b - a);
}

/** A segment file's modification time; one deleted meanwhile never matches. */
async function lastModified(file: string): Promise<number> {
  try {
    return (await stat(file)).mtimeMs;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return Infinity;
    throw err;
  }
}

function failureCode(broker: Broker, err: unknown, topic: string, partition: number): number {
  const code = (err as { errorCode?: unknown }).errorCode;
  if (typeof code === 'number') return code;
  broker.log.error({ err, topic, partition }, 'ListOffsets failed');
  return ErrorCode.UNKNOWN_SERVER_ERROR;
}
