// Offset lookups in one partition's log, for ListOffsets and OffsetForLeaderEpoch (Kafka's
// Partition.fetchOffsetForTimestamp, legacyFetchOffsetsForTimestamp and lastOffsetForLeaderEpoch,
// with UnifiedLog's lookups under them). The ReplicaManager finds the partition and its leader epoch.
import { stat } from 'node:fs/promises';
import * as path from 'node:path';
import { decodeRecords } from '../records/records';
import { PARTITION_LEADER_EPOCH_OFFSET } from '../records/batch';
import type { PartitionLog, TimestampLookup } from '../storage';
import { LOG_FILE_SUFFIX, segmentFileName } from '../storage/segment-files';

// The special timestamps of a lookup (Kafka's ListOffsetsRequest).
export const LATEST_TIMESTAMP = -1;
export const EARLIEST_TIMESTAMP = -2;
export const MAX_TIMESTAMP = -3;
export const EARLIEST_LOCAL_TIMESTAMP = -4;
export const LATEST_TIERED_TIMESTAMP = -5;
export const EARLIEST_PENDING_UPLOAD_TIMESTAMP = -6;

/** A record found by a lookup; all -1 when none is. */
export interface FoundOffset {
  offset: number;
  timestamp: number;
  /** -1 when unknown. */
  leaderEpoch: number;
}

export const NOT_FOUND: FoundOffset = { offset: -1, timestamp: -1, leaderEpoch: -1 };

/** What a ListOffsets lookup answers for one partition. */
export type OffsetLookup = FoundOffset & { errorCode: number };

/**
 * Kafka's Partition.fetchOffsetForTimestamp in a log we lead at `leaderEpoch`:
 *   -2 EARLIEST, -4 EARLIEST_LOCAL (no tiered storage, so the same): the log start offset, with the
 *      earliest epoch entry's epoch when that entry starts there;
 *   -1 LATEST: lastFetchableOffset (the high watermark, last stable offset or log end offset, by
 *      who asks), with the current leader epoch;
 *   -3 MAX_TIMESTAMP: the first record carrying the log's largest timestamp;
 *   -5 LATEST_TIERED: offset -1 (nothing is tiered);
 *   -6 EARLIEST_PENDING_UPLOAD (KIP-1023): offset -1 (no remote storage, nothing waits for upload);
 *   >= 0: the first record whose timestamp is >= the target, found inside its batch (compressed or
 *      not; every record of a LogAppendTime batch carries the batch's time).
 * -1/-2/-4 answer timestamp -1. A lookup that finds nothing, or finds a record at or past
 * lastFetchableOffset, answers NOT_FOUND. Other negative timestamps are the caller's to refuse.
 */
export async function offsetForTimestamp(
  log: PartitionLog, leaderEpoch: number, timestamp: number, lastFetchableOffset: number,
): Promise<FoundOffset> {
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
    case EARLIEST_PENDING_UPLOAD_TIMESTAMP:
      return NOT_FOUND;
  }
  const found = timestamp === MAX_TIMESTAMP ? await recordWithMaxTimestamp(log) : await firstRecordAtOrAfter(log, timestamp);
  return found && found.offset < lastFetchableOffset ? found : NOT_FOUND;
}

/** The first record (from the log start offset) whose timestamp is >= target (FileRecords.searchForTimestamp). */
async function firstRecordAtOrAfter(log: PartitionLog, target: number): Promise<FoundOffset | null> {
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
async function recordWithMaxTimestamp(log: PartitionLog): Promise<FoundOffset | null> {
  const batch = await log.batchWithMaxTimestamp();
  if (!batch) return null;
  const record = (await decodeRecords(batch.batch)).find((r) => r.timestamp === batch.maxTimestamp);
  return record ? { offset: record.offset, timestamp: batch.maxTimestamp, leaderEpoch: batchEpoch(batch) } : null;
}

function batchEpoch(batch: TimestampLookup): number {
  const epoch = batch.batch.readInt32BE(PARTITION_LEADER_EPOCH_OFFSET);
  return epoch >= 0 ? epoch : -1;
}

/**
 * Kafka's UnifiedLog.legacyFetchOffsetsBefore (ListOffsets v0): -1 the log end offset, -2 the first
 * segment's start, else the base offsets of segments last modified at or before the timestamp;
 * newest first, at most maxNumOffsets.
 */
export async function legacyOffsetsBefore(log: PartitionLog, timestamp: number, maxNumOffsets: number): Promise<number[]> {
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

/**
 * Kafka's Partition.lastOffsetForLeaderEpoch in a log we lead at `leaderEpoch` (OffsetForLeaderEpoch):
 * the largest epoch <= the requested one and its end offset (where the next epoch starts, or the log
 * end offset for the latest epoch). An epoch below every known one answers itself with the first
 * known start offset; one above every known one, or -1, answers -1/-1.
 */
export function lastOffsetForLeaderEpoch(log: PartitionLog, leaderEpoch: number, requestedEpoch: number): { epoch: number; endOffset: number } {
  return endOffsetFor(leaderEpochEntries(log, leaderEpoch), requestedEpoch, log.logEndOffset);
}

interface EpochEntry {
  epoch: number;
  startOffset: number;
}

/**
 * The epoch cache as Kafka's leader holds it: the log's entries (from the batches written) plus
 * the current leader epoch at the log end offset when no batch of it was written yet (Kafka
 * assigns it on becoming leader, dropping entries that do not start below it).
 */
function leaderEpochEntries(log: PartitionLog, leaderEpoch: number): EpochEntry[] {
  const entries = log.leaderEpochEntries().map((e) => ({ epoch: e.epoch, startOffset: e.startOffset }));
  const latest = entries.length > 0 ? entries[entries.length - 1].epoch : -1;
  if (leaderEpoch > latest) {
    const leo = log.logEndOffset;
    while (entries.length > 0 && entries[entries.length - 1].startOffset >= leo) entries.pop();
    entries.push({ epoch: leaderEpoch, startOffset: leo });
  }
  return entries;
}

/** Kafka's LeaderEpochFileCache.endOffsetFor over `entries`; -1/-1 when undefined. */
function endOffsetFor(entries: EpochEntry[], requestedEpoch: number, logEndOffset: number): { epoch: number; endOffset: number } {
  const undefinedAnswer = { epoch: -1, endOffset: -1 };
  if (requestedEpoch === -1) return undefinedAnswer;
  if (entries.length > 0 && entries[entries.length - 1].epoch === requestedEpoch) return { epoch: requestedEpoch, endOffset: logEndOffset };
  const higher = entries.findIndex((e) => e.epoch > requestedEpoch);
  if (higher < 0) return undefinedAnswer;
  if (higher === 0) return { epoch: requestedEpoch, endOffset: entries[0].startOffset };
  return { epoch: entries[higher - 1].epoch, endOffset: entries[higher].startOffset };
}
