// What a fetch reads (the reading half of Kafka's ReplicaManager.fetchMessages): one partition's
// log within a byte limit and the isolation level's bound, and a request's partitions within the
// request-wide byte budget. ReplicaManager.fetchMessages puts these together with the long poll.
//
// - Byte limits: the whole answer gets the request's budget, each partition its own limit; the first
//   partition with data returns at least its first whole batch even when that batch is larger than
//   both (KIP-74), later partitions stop at the limits.
// - A fetch from the middle of a batch returns that whole batch; the client skips the records before
//   its offset.
// - read_committed: no data at or past the last stable offset, and the aborted transactions
//   overlapping the batches returned, from the transaction index.
import { ErrorCode } from '../common/errors';
import { EMPTY_BUFFER } from '../protocol/primitives';
import { StorageError, type PartitionLog } from '../storage';
import { batchBaseOffset, batchLastOffsetDelta, batchSize } from '../storage/batch-header';
import type { AbortedTxn } from '../storage/transaction-index';

/**
 * How far a read may go (Kafka's FetchIsolation): a consumer reading uncommitted to the high
 * watermark, read_committed to the last stable offset, a replica to the log end.
 */
export type FetchIsolation = 'high-watermark' | 'txn-committed' | 'log-end';

/** A fetch as a whole, whoever sends it. */
export interface FetchParams {
  /** How long to wait for minBytes; 0 answers at once. */
  maxWaitMs: number;
  minBytes: number;
  /** The budget of the whole answer. */
  maxBytes: number;
  /** Reads stop at the high watermark, the last stable offset, or for a follower at the log end. */
  isolation: FetchIsolation;
  /** The follower fetching (Kafka's replica id); absent or -1 for a consumer. */
  replicaId?: number;
  /** Where the records read go: buffers the connection takes back once the response is written. */
  allocate: (size: number) => Buffer;
  /** Told when the fetch has waited in the purgatory, from `sinceMs` (performance.now()) until now: the request's remote time. */
  waited?: (sinceMs: number) => void;
}

/** One partition of a fetch. */
export interface FetchPartition {
  topic: string;
  partition: number;
  fetchOffset: number;
  /** The partition's own byte limit. */
  maxBytes: number;
  /** -1 when the fetcher does not know it. */
  currentLeaderEpoch: number;
  /** A follower's latest leader epoch (Fetch v12+, KIP-320); -1 or absent when unknown. */
  lastFetchedEpoch?: number;
  /** A follower's high watermark (Fetch v18+, KIP-1166); absent when it did not say. */
  replicaHighWatermark?: number;
}

/** What a fetch answers for one partition; offsets are -1 when an error leaves them unknown. */
export interface FetchPartitionResult {
  errorCode: number;
  highWatermark: number;
  lastStableOffset: number;
  logStartOffset: number;
  /** read_committed: the aborted transactions overlapping the records; null for other reads. */
  abortedTransactions: AbortedTxn[] | null;
  /** Whole batches; empty, never null, when there are none. */
  records: Buffer;
  /** To a follower whose log diverges from the leader's: where its last fetched epoch ends here (no records then). */
  divergingEpoch?: { epoch: number; endOffset: number };
}

export const failedRead = (errorCode: number, isolation: FetchIsolation): FetchPartitionResult => ({
  errorCode, highWatermark: -1, lastStableOffset: -1, logStartOffset: -1,
  abortedTransactions: isolation === 'txn-committed' ? [] : null, records: EMPTY_BUFFER,
});

/**
 * Reads one partition's log from `fetchOffset`: at most maxBytes (at least one batch with
 * minOneMessage), up to the high watermark, or for read_committed the last stable offset `lso`
 * (taken before the read: every transaction aborted below it is in the transaction index by then).
 */
export async function readLog(
  log: PartitionLog, lso: number, fetchOffset: number, maxBytes: number, minOneMessage: boolean, params: FetchParams,
): Promise<FetchPartitionResult> {
  const readCommitted = params.isolation === 'txn-committed';
  const answer = (errorCode: number, hw: number, logStart: number, records: Buffer = EMPTY_BUFFER): FetchPartitionResult => ({
    errorCode, highWatermark: hw, lastStableOffset: lso, logStartOffset: logStart, records, abortedTransactions: readCommitted ? [] : null,
  });
  // Taken before the read, as the LSO: a replicated partition's high watermark may be below what is written.
  const hw = log.highWatermark;
  const maxOffset = readCommitted ? lso : params.isolation === 'high-watermark' ? hw : undefined;
  try {
    const read = await log.readBytes(fetchOffset, maxBytes, { minOneMessage, maxOffset, allocate: params.allocate });
    if (read.outOfRange) return answer(ErrorCode.OFFSET_OUT_OF_RANGE, hw, read.logStartOffset);
    const result = answer(ErrorCode.NONE, hw, read.logStartOffset, read.records);
    if (readCommitted && read.records.length > 0) result.abortedTransactions = log.abortedTransactions(fetchOffset, offsetAfter(read.records));
    return result;
  } catch (err) {
    if (err instanceof StorageError) return answer(err.errorCode, log.highWatermark, log.logStartOffset);
    throw err;
  }
}

/** The offset after the last of these whole batches (a walk over their headers); `records` is not empty. */
export function offsetAfter(records: Buffer): number {
  let last = 0;
  for (let at = 0; at < records.length; at += batchSize(records, at)) last = at;
  return batchBaseOffset(records, last) + batchLastOffsetDelta(records, last) + 1;
}

/**
 * Reads every partition under the fetch's byte budget, with Kafka's sequential semantics: in
 * order, each partition gets min(what is left of the budget, its own limit), and only the first
 * partition with data may return a batch larger than that (KIP-74). `read` reads one partition at
 * a limit, with or without that first-batch allowance.
 *
 * The reads themselves run side by side (a consumer's fetch spans all its partitions, and one
 * after the other they paid one file-read round trip each; measured in the commit that made them
 * parallel): each partition whose limit still fits the budget is read at that limit as if it were
 * the first. A pass in order then keeps every answer the sequential read would have given, which
 * is all of them unless the budget binds or a later partition's first batch is over its limit;
 * those are read again.
 */
export async function readWithinBudget<P extends { maxBytes: number }>(
  partitions: readonly P[], maxBytes: number,
  read: (partition: P, maxBytes: number, minOneMessage: boolean) => Promise<FetchPartitionResult>,
): Promise<FetchPartitionResult[]> {
  const ownLimit = (partition: P) => Math.max(0, Math.min(maxBytes, partition.maxBytes));
  // Side by side only as far as the budget reaches, so that a fetch naming many partitions never
  // holds many times its budget at once; the others are read in the pass below.
  let planned = 0;
  const speculative = await Promise.all(partitions.map((partition) => {
    if (planned + ownLimit(partition) > maxBytes) return undefined;
    planned += ownLimit(partition);
    return read(partition, ownLimit(partition), true);
  }));
  let budget = maxBytes;
  let minOneMessage = true;
  const out: FetchPartitionResult[] = [];
  for (const [i, partition] of partitions.entries()) {
    const limit = Math.max(0, Math.min(budget, partition.maxBytes));
    let result = speculative[i];
    if (result === undefined || limit !== ownLimit(partition) || (!minOneMessage && result.records.length > limit)) {
      result = await read(partition, limit, minOneMessage);
    }
    const size = result.records.length;
    if (size > 0) {
      minOneMessage = false;
      budget -= size;
    }
    out.push(result);
  }
  return out;
}

/** The offsets a fetch answer carries, as the log has them now. */
export function logOffsets(log: PartitionLog): Pick<FetchPartitionResult, 'highWatermark' | 'lastStableOffset' | 'logStartOffset'> {
  return { highWatermark: log.highWatermark, lastStableOffset: log.lastStableOffset, logStartOffset: log.logStartOffset };
}

/**
 * KIP-320, on the leader (Kafka's Partition.fetchRecords): a follower whose last fetched epoch ends
 * here before its fetch offset, or is unknown here past a smaller epoch, has a tail the leader does
 * not: it is told where that epoch ends so it truncates there.
 */
export function divergingEpoch(log: PartitionLog, p: FetchPartition): { epoch: number; endOffset: number } | undefined {
  const lastFetchedEpoch = p.lastFetchedEpoch ?? -1;
  if (lastFetchedEpoch < 0) return undefined;
  const end = log.endOffsetForEpoch(lastFetchedEpoch);
  if (end.epoch < 0 || end.endOffset < 0) return { epoch: -1, endOffset: -1 };
  return end.epoch < lastFetchedEpoch || end.endOffset < p.fetchOffset ? end : undefined;
}
