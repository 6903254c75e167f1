// Fetch (key 1), versions 4-17.
// - Topics by name (v4-12) or by id (v13+; UNKNOWN_TOPIC_ID for an unknown id).
// - Fetch sessions (v7+, KIP-227) through the broker's FetchSessionCache.
// - Byte limits: min(request max_bytes, fetch.max.bytes) for the whole answer and each partition's
//   own limit; the first partition with data returns at least its first whole batch even when
//   that batch is larger than both limits (KIP-74), later partitions stop at the limits.
// - A fetch from the middle of a batch returns that whole batch; the client skips the records
//   before its offset.
// - Long polling: when fewer than min_bytes are available, the request waits on the fetch
//   purgatory until appends bring enough bytes or max_wait_ms passes, then reads again.
// - Per partition: high watermark, last stable offset, log start offset; OFFSET_OUT_OF_RANGE,
//   UNKNOWN_TOPIC_OR_PARTITION, and the current leader epoch check (FENCED_LEADER_EPOCH /
//   UNKNOWN_LEADER_EPOCH). No data is an empty records field, never null, as Kafka sends.
// - isolation_level READ_COMMITTED (1): no data at or past the last stable offset, and the
//   aborted transactions (producer id, first offset) overlapping the batches returned, from the
//   transaction index; the client drops those producers' records up to their ABORT marker.
//   READ_UNCOMMITTED answers abortedTransactions null. A read_committed long poll counts the
//   bytes appended to a partition only once its last stable offset has moved, so it wakes when
//   a marker ends the transaction it waits behind (Kafka counts the bytes below the LSO: with a
//   large min_bytes, data appended before the poll started is not counted here).
import { ApiKey } from '../protocol/generated';
import type { FetchRequest } from '../protocol/generated/FetchRequest';
import type { FetchResponse, FetchResponsePartitionData } from '../protocol/generated/FetchResponse';
import { ErrorCode } from '../common/errors';
import { EMPTY_BUFFER, ZERO_UUID } from '../protocol/primitives';
import { StorageError } from '../storage';
import { DelayedOperation } from '../replica/delayed/purgatory';
import { partitionKey as sessionKey, type FetchContext, type FetchPartitionRequest } from '../replica/fetch-sessions';
import { batchBaseOffset, batchLastOffsetDelta, batchSize } from '../storage/batch-header';
import { lastStableOffset, partitionKey, type Partition } from '../replica/replica-manager';
import { leaderPartition } from './shared/leader-partition';
import type { HandlerFactory } from './handler';
import type { Broker } from '../broker';

const READ_COMMITTED = 1;

export const fetch: HandlerFactory = (broker) => ({
  apiKey: ApiKey.Fetch,
  name: 'Fetch',
  minVersion: 4,
  maxVersion: 17,
  async handle(req: FetchRequest, ctx): Promise<FetchResponse> {
    const v = ctx.apiVersion;
    const usesTopicIds = v >= 13;
    const requested = resolvePartitions(broker, req, usesTopicIds);
    const forgotten = req.forgottenTopicsData.flatMap((t) =>
      t.partitions.map((p) => sessionKey(usesTopicIds ? t.topicId ?? ZERO_UUID : t.topic ?? '', p)));
    const context = broker.fetchSessions.newContext(req.sessionId ?? 0, req.sessionEpoch ?? -1, usesTopicIds, requested, forgotten);
    if (context.errorCode !== ErrorCode.NONE) {
      return { throttleTimeMs: 0, errorCode: context.errorCode, sessionId: 0, responses: [] };
    }
    const limits: FetchLimits = {
      maxBytes: Math.min(req.maxBytes ?? 0x7fffffff, broker.config.getInt('fetch.max.bytes')),
      readCommitted: (req.isolationLevel ?? 0) === READ_COMMITTED,
      allocate: ctx.responseBuffer,
    };

    let reads = await readAll(broker, context.partitions, limits);
    const available = reads.reduce((n, r) => n + r.data.records!.length, 0);
    const hasError = reads.some((r) => r.data.errorCode !== ErrorCode.NONE);
    if (req.maxWaitMs > 0 && available < req.minBytes && !hasError && context.partitions.length > 0) {
      await waitForData(broker, context.partitions, req.maxWaitMs, req.minBytes - available, limits.readCommitted);
      reads = await readAll(broker, context.partitions, limits);
    }
    return {
      throttleTimeMs: 0,
      errorCode: ErrorCode.NONE,
      sessionId: context.sessionId,
      responses: groupByTopic(context, reads),
    };
  },
});

/** The request's partitions, topic names resolved from ids (v13+) and int64s as numbers. */
function resolvePartitions(broker: Broker, req: FetchRequest, usesTopicIds: boolean): FetchPartitionRequest[] {
  const out: FetchPartitionRequest[] = [];
  for (const t of req.topics) {
    const topicId = t.topicId ?? ZERO_UUID;
    const name = usesTopicIds ? broker.controller.topicById(topicId)?.name ?? '' : t.topic ?? '';
    for (const p of t.partitions) {
      out.push({
        topic: name, topicId, partition: p.partition, fetchOffset: Number(p.fetchOffset),
        logStartOffset: Number(p.logStartOffset ?? -1n), maxBytes: p.partitionMaxBytes,
        currentLeaderEpoch: p.currentLeaderEpoch ?? -1, lastFetchedEpoch: p.lastFetchedEpoch ?? -1,
      });
    }
  }
  return out;
}

interface FetchLimits {
  maxBytes: number;
  readCommitted: boolean;
  /** Where the records read go: buffers the connection takes back once the response is written. */
  allocate: (size: number) => Buffer;
}

interface PartitionRead {
  request: FetchPartitionRequest;
  data: FetchResponsePartitionData;
}

/**
 * Reads every partition under the request-wide byte budget, with Kafka's sequential semantics: in
 * request order, each partition gets min(what is left of the budget, its own limit), and only the
 * first partition with data may return a batch larger than that (KIP-74).
 *
 * The reads themselves run side by side (a consumer's fetch spans all its partitions, and one
 * after the other they paid one file-read round trip each; measured in the commit that made them
 * parallel): each partition whose limit still fits the budget is read at that limit as if it were
 * the first. A pass in request
 * order then keeps every answer the sequential read would have given, which is all of them unless
 * the budget binds or a later partition's first batch is over its limit; those are read again.
 */
async function readAll(
  broker: Broker, partitions: FetchPartitionRequest[], limits: FetchLimits,
): Promise<PartitionRead[]> {
  const ownLimit = (request: FetchPartitionRequest) => Math.max(0, Math.min(limits.maxBytes, request.maxBytes));
  // Side by side only as far as the request's budget reaches, so that a request naming many partitions
  // never holds many times fetch.max.bytes at once; the others are read in the pass below.
  let planned = 0;
  const speculative = await Promise.all(partitions.map((request) => {
    if (planned + ownLimit(request) > limits.maxBytes) return undefined;
    planned += ownLimit(request);
    return readPartition(broker, request, ownLimit(request), true, limits);
  }));
  let budget = limits.maxBytes;
  let minOneMessage = true;
  const out: PartitionRead[] = [];
  for (const [i, request] of partitions.entries()) {
    const limit = Math.max(0, Math.min(budget, request.maxBytes));
    let data = speculative[i];
    if (data === undefined || limit !== ownLimit(request) || (!minOneMessage && data.records!.length > limit)) {
      data = await readPartition(broker, request, limit, minOneMessage, limits);
    }
    const size = data.records!.length;
    if (size > 0) {
      minOneMessage = false;
      budget -= size;
    }
    out.push({ request, data });
  }
  return out;
}

async function readPartition(
  broker: Broker, request: FetchPartitionRequest, maxBytes: number, minOneMessage: boolean, limits: FetchLimits,
): Promise<FetchResponsePartitionData> {
  const { readCommitted, allocate } = limits;
  const answer = (errorCode: number, hw = -1, lso = -1, logStart = -1, records: Buffer = EMPTY_BUFFER): FetchResponsePartitionData => ({
    partitionIndex: request.partition, errorCode, highWatermark: BigInt(hw), lastStableOffset: BigInt(lso),
    logStartOffset: BigInt(logStart), preferredReadReplica: -1, records, abortedTransactions: readCommitted ? [] : null,
  });
  if (request.topic === '') return answer(ErrorCode.UNKNOWN_TOPIC_ID);
  const found = leaderPartition(broker, request.topic, request.partition, request.currentLeaderEpoch);
  if ('errorCode' in found) return answer(found.errorCode);
  const log = found.partition.log;
  // Taken before the read: every transaction aborted below it is in the transaction index by now.
  const lso = lastStableOffset(found.partition);
  try {
    const read = await log.readBytes(request.fetchOffset, maxBytes, { minOneMessage, maxOffset: readCommitted ? lso : undefined, allocate });
    if (read.outOfRange) return answer(ErrorCode.OFFSET_OUT_OF_RANGE, read.highWatermark, lso, read.logStartOffset);
    const data = answer(ErrorCode.NONE, read.highWatermark, lso, read.logStartOffset, read.records);
    if (readCommitted && read.records.length > 0) {
      data.abortedTransactions = log.abortedTransactions(request.fetchOffset, offsetAfter(read.records))
        .map((t) => ({ producerId: BigInt(t.producerId), firstOffset: BigInt(t.firstOffset) }));
    }
    return data;
  } catch (err) {
    if (err instanceof StorageError) return answer(err.errorCode, log.highWatermark, lso, log.logStartOffset);
    throw err;
  }
}

/** The offset after the last of these whole batches (a walk over their headers). */
function offsetAfter(records: Buffer): number {
  let last = 0;
  for (let at = 0; at < records.length; at += batchSize(records, at)) last = at;
  return batchBaseOffset(records, last) + batchLastOffsetDelta(records, last) + 1;
}

interface WatchedPartition {
  partition: Partition | undefined;
  appendedAtStart: number;
  /** For a read_committed fetch, the last stable offset when the wait began; else -1. */
  lsoAtStart: number;
}

/**
 * Waits until appends to these partitions add `missingBytes` (read_committed: to partitions whose
 * last stable offset moved), a partition disappears, or the wait ends.
 */
function waitForData(
  broker: Broker, partitions: FetchPartitionRequest[], maxWaitMs: number, missingBytes: number, readCommitted: boolean,
): Promise<void> {
  return new Promise((resolve) => {
    const watched = partitions.map((p): WatchedPartition => {
      const partition = broker.replicas.partition(p.topic, p.partition);
      return {
        partition, appendedAtStart: partition?.appendedBytes ?? 0,
        lsoAtStart: readCommitted && partition ? lastStableOffset(partition) : -1,
      };
    });
    const keys = [...new Set(partitions.map((p) => partitionKey(p.topic, p.partition)))];
    broker.replicas.fetchPurgatory.tryCompleteElseWatch(new DelayedFetch(maxWaitMs, watched, missingBytes, broker, resolve), keys);
  });
}

class DelayedFetch extends DelayedOperation {
  constructor(
    delayMs: number,
    private readonly watched: WatchedPartition[],
    private readonly missingBytes: number,
    private readonly broker: Broker,
    private readonly done: () => void,
  ) {
    super(delayMs);
  }

  tryComplete(): boolean {
    let added = 0;
    for (const w of this.watched) {
      if (!w.partition) continue;
      // A partition deleted (or recreated) while we wait answers at once, with its new state.
      if (this.broker.replicas.partition(w.partition.topic, w.partition.index) !== w.partition) return this.forceComplete();
      // Bytes behind an open transaction are not readable yet.
      if (w.lsoAtStart >= 0 && lastStableOffset(w.partition) === w.lsoAtStart) continue;
      added += w.partition.appendedBytes - w.appendedAtStart;
    }
    return added >= this.missingBytes ? this.forceComplete() : false;
  }

  onComplete(): void {
    this.done();
  }

  onExpiration(): void {}
}

/** Groups partition answers by topic in request order; an incremental session keeps only changed ones. */
function groupByTopic(context: FetchContext, reads: PartitionRead[]): FetchResponse['responses'] {
  const topics: FetchResponse['responses'] = [];
  let current: FetchResponse['responses'][number] | undefined;
  for (const { request, data } of reads) {
    const include = context.include(request, {
      errorCode: data.errorCode, highWatermark: Number(data.highWatermark), lastStableOffset: Number(data.lastStableOffset),
      logStartOffset: Number(data.logStartOffset), hasRecords: data.records!.length > 0,
    });
    if (!include) continue;
    if (!current || current.topic !== request.topic || current.topicId !== request.topicId) {
      current = { topic: request.topic, topicId: request.topicId, partitions: [] };
      topics.push(current);
    }
    current.partitions.push(data);
  }
  return topics;
}
