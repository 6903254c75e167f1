// What a follower's fetcher sends its leader, at the version the connection chose: the Fetch request
// (Kafka's ReplicaFetcherThread.buildFetch), OffsetForLeaderEpoch (its fetchEpochEndOffsets) and
// ListOffsets (fetchLatestOffset / fetchEarliestOffset), and the matching of the answers to the
// partitions asked about. Fetches are full ones, without a fetch session (KIP-227): every request
// names every partition, which the protocol allows at any version.
import type { ApiKey, ApiRequestMap } from '../protocol/generated';
import type { FetchResponse, FetchResponsePartitionData } from '../protocol/generated/FetchResponse';
import { batchSize, BATCH_HEADER_SIZE } from '../storage/batch-header';

/** One partition in a follower's request: its names and the leader epoch it follows. */
export interface FetchedPartition {
  readonly topic: string;
  readonly topicId: string;
  readonly partition: number;
  readonly leaderEpoch: number;
}

/** A partition's part of a Fetch request. */
export interface PartitionFetch {
  readonly target: FetchedPartition;
  readonly fetchOffset: number;
  /** The epoch of the follower's last batch (Fetch v12+, KIP-320); undefined when its log has none. */
  readonly lastFetchedEpoch: number | undefined;
  readonly logStartOffset: number;
  /** The follower's high watermark, sent from Fetch v18 (KIP-1166) so the leader answers when it is behind. */
  readonly highWatermark?: number;
}

/** replica.fetch.* settings of a Fetch request. */
export interface FetchLimits {
  readonly maxWaitMs: number;
  readonly minBytes: number;
  readonly maxBytes: number;
  readonly partitionMaxBytes: number;
}

/** Who fetches: the follower's broker id and epoch (Fetch v15+ ReplicaState, KIP-903; -1 when unknown). */
export interface Replica {
  readonly brokerId: number;
  readonly brokerEpoch: bigint;
}

/** Topics are named by id from Fetch v13, by name before. */
const fetchTopicKey = (version: number, topic: string, topicId: string): string => (version >= 13 ? topicId : topic);

/** A Fetch request for these partitions at `version`, grouped by topic in the given order. */
export function buildFetchRequest(version: number, replica: Replica, limits: FetchLimits, partitions: readonly PartitionFetch[]): ApiRequestMap[typeof ApiKey.Fetch] {
  const topics = new Map<string, ApiRequestMap[typeof ApiKey.Fetch]['topics'][number]>();
  for (const p of partitions) {
    const key = fetchTopicKey(version, p.target.topic, p.target.topicId);
    let topic = topics.get(key);
    if (!topic) {
      topic = version >= 13 ? { topicId: p.target.topicId, partitions: [] } : { topic: p.target.topic, partitions: [] };
      topics.set(key, topic);
    }
    topic.partitions.push({
      partition: p.target.partition,
      currentLeaderEpoch: p.target.leaderEpoch,
      fetchOffset: BigInt(p.fetchOffset),
      lastFetchedEpoch: version >= 12 ? p.lastFetchedEpoch ?? -1 : -1,
      logStartOffset: BigInt(p.logStartOffset),
      partitionMaxBytes: limits.partitionMaxBytes,
      ...(version >= 18 && p.highWatermark !== undefined ? { highWatermark: BigInt(p.highWatermark) } : {}),
    });
  }
  return {
    ...(version >= 15
      ? { replicaState: { replicaId: replica.brokerId, replicaEpoch: replica.brokerEpoch } }
      : { replicaId: replica.brokerId }),
    maxWaitMs: limits.maxWaitMs,
    minBytes: limits.minBytes,
    maxBytes: limits.maxBytes,
    isolationLevel: 0, // a replica reads everything written, up to the log end
    sessionId: 0,
    sessionEpoch: -1, // no fetch session: a full fetch every time
    topics: [...topics.values()],
    forgottenTopicsData: [],
  };
}

/** The answer to each partition of `partitions` that the response holds. */
export function fetchAnswers<P extends PartitionFetch>(version: number, partitions: readonly P[], response: FetchResponse): Array<[P, FetchResponsePartitionData]> {
  const asked = new Map(partitions.map((p) => [`${fetchTopicKey(version, p.target.topic, p.target.topicId)}:${p.target.partition}`, p]));
  const answers: Array<[P, FetchResponsePartitionData]> = [];
  for (const topic of response.responses) {
    const topicKey = version >= 13 ? topic.topicId ?? '' : topic.topic ?? '';
    for (const data of topic.partitions) {
      const p = asked.get(`${topicKey}:${data.partitionIndex}`);
      if (p) answers.push([p, data]);
    }
  }
  return answers;
}

/** OffsetForLeaderEpoch for one partition: the end of `epoch` in the leader's log, asked as a replica. */
export function offsetForLeaderEpochRequest(brokerId: number, target: FetchedPartition, epoch: number): ApiRequestMap[typeof ApiKey.OffsetForLeaderEpoch] {
  return {
    replicaId: brokerId,
    topics: [{ topic: target.topic, partitions: [{ partition: target.partition, currentLeaderEpoch: target.leaderEpoch, leaderEpoch: epoch }] }],
  };
}

/** ListOffsets' special timestamps: the leader's log end offset, its log start offset. */
export const LATEST_TIMESTAMP = -1n;
export const EARLIEST_TIMESTAMP = -2n;

/** ListOffsets for one partition, as a replica (which reads up to the log end, with no isolation). */
export function listOffsetsRequest(brokerId: number, target: FetchedPartition, timestamp: bigint): ApiRequestMap[typeof ApiKey.ListOffsets] {
  return {
    replicaId: brokerId,
    isolationLevel: 0,
    topics: [{ name: target.topic, partitions: [{ partitionIndex: target.partition, currentLeaderEpoch: target.leaderEpoch, timestamp }] }],
  };
}

/**
 * The whole batches at the start of fetched records: a leader may end a response with part of a
 * batch (cut at the byte limit), which the follower ignores, as Kafka's MemoryRecords iteration does.
 */
export function wholeBatches(records: Buffer): Buffer {
  let end = 0;
  while (records.length - end >= BATCH_HEADER_SIZE) {
    const size = batchSize(records, end);
    if (size < BATCH_HEADER_SIZE || end + size > records.length) break;
    end += size;
  }
  return end === records.length ? records : records.subarray(0, end);
}
