// Fetch (key 1), versions 4-18.
// - Topics by name (v4-12) or by id (v13+; UNKNOWN_TOPIC_ID for an unknown id).
// - Fetch sessions (v7+, KIP-227) through the broker's FetchSessionCache.
// - The partitions are read by ReplicaManager.fetchMessages: byte limits (min(request max_bytes,
//   fetch.max.bytes) for the whole answer and each partition's own limit, KIP-74's first batch),
//   the long poll on min_bytes and max_wait_ms, the read_committed bound and aborted transactions.
// - Per partition: high watermark, last stable offset, log start offset; OFFSET_OUT_OF_RANGE,
//   UNKNOWN_TOPIC_OR_PARTITION, and the current leader epoch check (FENCED_LEADER_EPOCH /
//   UNKNOWN_LEADER_EPOCH). No data is an empty records field, never null, as Kafka sends.
// - isolation_level READ_COMMITTED (1): the aborted transactions (producer id, first offset)
//   overlapping the batches returned; the client drops those producers' records up to their
//   ABORT marker. READ_UNCOMMITTED answers abortedTransactions null.
// - A partition with an unknown topic id is an error like any other: the request does not wait.
// - Authorization (Kafka's handleFetchRequest): a follower's fetch needs CLUSTER_ACTION on the
//   cluster, else every partition is TOPIC_AUTHORIZATION_FAILED; a consumer's needs READ on each
//   topic (asked once per topic), else TOPIC_AUTHORIZATION_FAILED for its partitions, after
//   UNKNOWN_TOPIC_ID. Refused partitions are answered without being read and do not cut the
//   wait for the others short; a fetch with nothing readable answers at once.
// - v18: a follower reports its high watermark per partition (KIP-1166); one below the leader's is
//   answered at once, and a waiting fetch ends when the leader's passes it, so followers learn
//   of a new high watermark without waiting out max_wait_ms.
import { ApiKey } from '../protocol/generated';
import type { FetchRequest } from '../protocol/generated/FetchRequest';
import type { FetchResponse, FetchResponsePartitionData } from '../protocol/generated/FetchResponse';
import { ErrorCode } from '../common/errors';
import { ZERO_UUID } from '../protocol/primitives';
import type { BrokerConfig } from '../config/broker-config';
import type { Controller } from '../cluster/controller';
import type { ReplicaManager } from '../replica/replica-manager';
import { failedRead, type FetchIsolation, type FetchPartitionResult } from '../replica/fetch-reads';
import {
  partitionKey as sessionKey, type FetchContext, type FetchPartitionRequest, type FetchSessionCache,
} from '../replica/fetch-sessions';
import { AclOperation, CLUSTER_RESOURCE_NAME, ResourceType } from '../security/acl';
import { defineHandler, type RequestContext } from './handler';

const READ_COMMITTED = 1;
/** Fetch v18's HighWatermark default: the follower does not say. */
const UNKNOWN_HIGH_WATERMARK = (1n << 63n) - 1n;

export interface FetchServices {
  readonly config: Pick<BrokerConfig, 'getInt'>;
  readonly controller: Pick<Controller, 'topicById'>;
  readonly fetchSessions: Pick<FetchSessionCache, 'newContext'>;
  readonly replicas: Pick<ReplicaManager, 'fetchMessages'>;
}

export const fetch = defineHandler(ApiKey.Fetch, { minVersion: 4, maxVersion: 18 }, (s: FetchServices) => async (req, ctx): Promise<FetchResponse> => {
  const usesTopicIds = ctx.apiVersion >= 13;
  // A follower (v15+ names itself in replicaState) reads to the log end and tells the leader what it has.
  const replicaId = fetchReplicaId(req, ctx.apiVersion);
  const requested = resolvePartitions(s, req, usesTopicIds, replicaId >= 0);
  const forgotten = req.forgottenTopicsData.flatMap((t) =>
    t.partitions.map((p) => sessionKey(usesTopicIds ? t.topicId ?? ZERO_UUID : t.topic ?? '', p)));
  const context = s.fetchSessions.newContext(req.sessionId ?? 0, req.sessionEpoch ?? -1, usesTopicIds, requested, forgotten);
  if (context.errorCode !== ErrorCode.NONE) {
    return { throttleTimeMs: 0, errorCode: context.errorCode, sessionId: 0, responses: [] };
  }
  const isolation: FetchIsolation = replicaId >= 0 ? 'log-end' : (req.isolationLevel ?? 0) === READ_COMMITTED ? 'txn-committed' : 'high-watermark';
  // Partitions of topic ids we do not know have no name, and partitions the principal may not
  // fetch: answered here, not read. An unknown id, like any partition's error, means no waiting.
  const refused = refusedPartitions(context.partitions, replicaId >= 0, ctx);
  const readable = refused === undefined ? context.partitions : context.partitions.filter((p) => !refused.has(p));
  const unknownId = refused !== undefined && [...refused.values()].includes(ErrorCode.UNKNOWN_TOPIC_ID);
  const read = await s.replicas.fetchMessages({
    maxWaitMs: unknownId || readable.length === 0 ? 0 : req.maxWaitMs,
    minBytes: req.minBytes,
    maxBytes: Math.min(req.maxBytes ?? 0x7fffffff, s.config.getInt('fetch.max.bytes')),
    isolation,
    replicaId,
    allocate: ctx.responseBuffer,
    waited: ctx.waitedRemotely,
  }, readable);
  let next = 0;
  const results = refused === undefined ? read : context.partitions.map((p) => {
    const error = refused.get(p);
    return error === undefined ? read[next++] : failedRead(error, isolation);
  });
  return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, sessionId: context.sessionId, responses: groupByTopic(context, results) };
});

/** The follower fetching (v15+ names itself in replicaState), or -1 for a consumer. */
export function fetchReplicaId(req: FetchRequest, version: number): number {
  return version >= 15 ? req.replicaState?.replicaId ?? -1 : req.replicaId ?? -1;
}

/**
 * The partitions answered with an error instead of being read (undefined when none, the usual case):
 * an unknown topic id, or one the principal may not fetch. READ is asked once per run of a topic's
 * partitions (they come grouped by topic), CLUSTER_ACTION once for a follower.
 */
function refusedPartitions(
  partitions: FetchPartitionRequest[], fromFollower: boolean, ctx: RequestContext,
): Map<FetchPartitionRequest, number> | undefined {
  let refused: Map<FetchPartitionRequest, number> | undefined;
  const followerDenied = fromFollower && !ctx.authorize(AclOperation.CLUSTER_ACTION, ResourceType.CLUSTER, CLUSTER_RESOURCE_NAME);
  let lastTopic: string | undefined;
  let lastReadable = false;
  for (const p of partitions) {
    let error: number = ErrorCode.NONE;
    if (followerDenied) error = ErrorCode.TOPIC_AUTHORIZATION_FAILED;
    else if (p.topic === '') error = ErrorCode.UNKNOWN_TOPIC_ID;
    else if (!fromFollower) {
      if (p.topic !== lastTopic) {
        lastTopic = p.topic;
        lastReadable = ctx.authorize(AclOperation.READ, ResourceType.TOPIC, p.topic);
      }
      if (!lastReadable) error = ErrorCode.TOPIC_AUTHORIZATION_FAILED;
    }
    if (error !== ErrorCode.NONE) (refused ??= new Map()).set(p, error);
  }
  return refused;
}

/**
 * The request's partitions, topic names resolved from ids (v13+; '' for an unknown id) and int64s as
 * numbers; a follower's high watermark unless it sent the default (unknown).
 */
function resolvePartitions(s: FetchServices, req: FetchRequest, usesTopicIds: boolean, fromFollower: boolean): FetchPartitionRequest[] {
  const out: FetchPartitionRequest[] = [];
  for (const t of req.topics) {
    const topicId = t.topicId ?? ZERO_UUID;
    const name = usesTopicIds ? s.controller.topicById(topicId)?.name ?? '' : t.topic ?? '';
    for (const p of t.partitions) {
      out.push({
        topic: name, topicId, partition: p.partition, fetchOffset: Number(p.fetchOffset),
        logStartOffset: Number(p.logStartOffset ?? -1n), maxBytes: p.partitionMaxBytes,
        currentLeaderEpoch: p.currentLeaderEpoch ?? -1, lastFetchedEpoch: p.lastFetchedEpoch ?? -1,
        ...(fromFollower && p.highWatermark !== undefined && p.highWatermark !== UNKNOWN_HIGH_WATERMARK
          ? { replicaHighWatermark: Number(p.highWatermark) } : {}),
      });
    }
  }
  return out;
}

/** Groups partition answers by topic in request order; an incremental session keeps only changed ones. */
function groupByTopic(context: FetchContext, results: FetchPartitionResult[]): FetchResponse['responses'] {
  const topics: FetchResponse['responses'] = [];
  let current: FetchResponse['responses'][number] | undefined;
  context.partitions.forEach((request, i) => {
    const r = results[i];
    const include = context.include(request, {
      errorCode: r.errorCode, highWatermark: r.highWatermark, lastStableOffset: r.lastStableOffset,
      // A diverging epoch is news to the follower even with offsets unchanged.
      logStartOffset: r.logStartOffset, hasRecords: r.records.length > 0 || r.divergingEpoch !== undefined,
    });
    if (!include) return;
    if (!current || current.topic !== request.topic || current.topicId !== request.topicId) {
      current = { topic: request.topic, topicId: request.topicId, partitions: [] };
      topics.push(current);
    }
    current.partitions.push(partitionData(request.partition, r));
  });
  return topics;
}

function partitionData(partitionIndex: number, r: FetchPartitionResult): FetchResponsePartitionData {
  return {
    partitionIndex, errorCode: r.errorCode, highWatermark: BigInt(r.highWatermark), lastStableOffset: BigInt(r.lastStableOffset),
    logStartOffset: BigInt(r.logStartOffset), preferredReadReplica: -1, records: r.records,
    divergingEpoch: r.divergingEpoch && { epoch: r.divergingEpoch.epoch, endOffset: BigInt(r.divergingEpoch.endOffset) },
    abortedTransactions: r.abortedTransactions?.map((t) => ({ producerId: BigInt(t.producerId), firstOffset: BigInt(t.firstOffset) })) ?? null,
  };
}
