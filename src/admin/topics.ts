/**
 * Topics of a cluster as `fjord topics` and the console show them: partitions with their leader,
 * replicas, ISR, offsets and size on disk; and creating, deleting and growing topics.
 *
 * Offsets come from ListOffsets on each partition's leader (earliest, latest: the high watermark);
 * sizes from DescribeLogDirs on every broker (the leader's replica), null where a broker refuses
 * it (e.g. not authorized) or does not report the partition.
 */
import { describeLogDirsV4, listOffsetsV9 } from '@platformatic/kafka';
import { AdminError, toAdminError } from './errors';
import type { KafkaConnection } from './connection';
import { brokerConnection, clusterMetadata, type MetadataResponse } from './brokers';

export interface PartitionInfo {
  partition: number;
  leader: number;
  leaderEpoch: number;
  replicas: number[];
  isr: number[];
  offlineReplicas: number[];
  underReplicated: boolean;
  earliestOffset: bigint;
  latestOffset: bigint;
  sizeBytes: number | null;
}

export interface TopicDescription {
  name: string;
  topicId: string;
  internal: boolean;
  partitions: PartitionInfo[];
}

export interface TopicSummary {
  name: string;
  topicId: string;
  internal: boolean;
  partitions: number;
  replicationFactor: number;
  underReplicatedPartitions: number;
  /** Sum over partitions of latest - earliest offset (control records included, as Kafka's offsets count them). */
  messages: bigint;
  sizeBytes: number | null;
}

const EARLIEST = -2n;
const LATEST = -1n;
const READ_UNCOMMITTED = 0;
/** Offsets of a partition whose leader is offline or that answered with an error: unknown. */
const UNKNOWN_OFFSET = -1n;

/** Every topic (internal ones when `includeInternal`), by name. */
export async function listTopics(c: KafkaConnection, opts: { includeInternal?: boolean } = {}): Promise<TopicSummary[]> {
  const metadata = await clusterMetadata(c);
  const names = metadata.topics.filter((t) => opts.includeInternal || !t.isInternal).map((t) => t.name as string);
  const described = await describeFromMetadata(c, metadata, names);
  return described.map((t) => ({
    name: t.name,
    topicId: t.topicId,
    internal: t.internal,
    partitions: t.partitions.length,
    replicationFactor: t.partitions[0]?.replicas.length ?? 0,
    underReplicatedPartitions: t.partitions.filter((p) => p.underReplicated).length,
    messages: t.partitions.reduce((sum, p) => sum + (p.latestOffset >= p.earliestOffset && p.earliestOffset >= 0n ? p.latestOffset - p.earliestOffset : 0n), 0n),
    sizeBytes: t.partitions.some((p) => p.sizeBytes === null) ? null : t.partitions.reduce((sum, p) => sum + (p.sizeBytes ?? 0), 0),
  }));
}

/** The named topics, in the order given; a name the cluster does not know is UNKNOWN_TOPIC_OR_PARTITION. */
export async function describeTopics(c: KafkaConnection, names: string[]): Promise<TopicDescription[]> {
  return describeFromMetadata(c, await clusterMetadata(c), names);
}

async function describeFromMetadata(c: KafkaConnection, metadata: MetadataResponse, names: string[]): Promise<TopicDescription[]> {
  const byName = new Map(metadata.topics.map((t) => [t.name as string, t]));
  const topics: TopicDescription[] = names.map((name) => {
    const t = byName.get(name);
    if (!t) throw new AdminError(`Topic '${name}' does not exist.`, 'UNKNOWN_TOPIC_OR_PARTITION');
    const partitions = [...t.partitions].sort((a, b) => a.partitionIndex - b.partitionIndex).map((p) => ({
      partition: p.partitionIndex,
      leader: p.leaderId,
      leaderEpoch: p.leaderEpoch,
      replicas: p.replicaNodes,
      isr: p.isrNodes,
      offlineReplicas: p.offlineReplicas,
      underReplicated: p.isrNodes.length < p.replicaNodes.length,
      earliestOffset: UNKNOWN_OFFSET,
      latestOffset: UNKNOWN_OFFSET,
      sizeBytes: null,
    }));
    return { name, topicId: t.topicId, internal: t.isInternal, partitions };
  });
  await Promise.all([fillOffsets(c, metadata, topics), fillSizes(c, metadata, topics)]);
  return topics;
}

/** Partitions grouped by their leader, the only broker that answers ListOffsets for them. */
function byLeader(topics: TopicDescription[]): Map<number, { topic: TopicDescription; partition: PartitionInfo }[]> {
  const leaders = new Map<number, { topic: TopicDescription; partition: PartitionInfo }[]>();
  for (const topic of topics) {
    for (const partition of topic.partitions) {
      if (partition.leader < 0) continue;
      let list = leaders.get(partition.leader);
      if (!list) leaders.set(partition.leader, (list = []));
      list.push({ topic, partition });
    }
  }
  return leaders;
}

async function fillOffsets(c: KafkaConnection, metadata: MetadataResponse, topics: TopicDescription[]): Promise<void> {
  await Promise.all([...byLeader(topics)].map(async ([leader, partitions]) => {
    const connection = await brokerConnection(c, metadata, leader);
    for (const timestamp of [EARLIEST, LATEST]) {
      const request = new Map<string, { name: string; partitions: { partitionIndex: number; currentLeaderEpoch: number; timestamp: bigint }[] }>();
      for (const { topic, partition } of partitions) {
        let t = request.get(topic.name);
        if (!t) request.set(topic.name, (t = { name: topic.name, partitions: [] }));
        t.partitions.push({ partitionIndex: partition.partition, currentLeaderEpoch: partition.leaderEpoch, timestamp });
      }
      const response = await listOffsetsV9.api.async(connection, -1, READ_UNCOMMITTED, [...request.values()]).catch((e: unknown) => {
        // A partition in error (leader moving, ...) stays at UNKNOWN_OFFSET; the others are still shown.
        const partial = (e as { response?: Awaited<ReturnType<typeof listOffsetsV9.api.async>> }).response;
        if (!partial) throw toAdminError(e);
        return partial;
      });
      for (const rt of response.topics) {
        const topic = topics.find((t) => t.name === rt.name);
        for (const rp of rt.partitions) {
          const p = topic?.partitions.find((x) => x.partition === rp.partitionIndex);
          if (!p || rp.errorCode !== 0) continue;
          if (timestamp === EARLIEST) p.earliestOffset = rp.offset;
          else p.latestOffset = rp.offset;
        }
      }
    }
  }));
}

async function fillSizes(c: KafkaConnection, metadata: MetadataResponse, topics: TopicDescription[]): Promise<void> {
  if (topics.length === 0) return;
  const request = topics.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => p.partition) }));
  await Promise.all(metadata.brokers.map(async (broker) => {
    let response: Awaited<ReturnType<typeof describeLogDirsV4.api.async>>;
    try {
      response = await describeLogDirsV4.api.async(await brokerConnection(c, metadata, broker.nodeId), request);
    } catch {
      return; // refused or unreachable: these sizes stay null
    }
    for (const dir of response.results) {
      if (dir.errorCode !== 0) continue;
      for (const rt of dir.topics) {
        const topic = topics.find((t) => t.name === rt.name);
        for (const rp of rt.partitions) {
          const p = topic?.partitions.find((x) => x.partition === rp.partitionIndex);
          // The leader's replica is the partition's size; a future replica (being moved) is not.
          if (p && p.leader === broker.nodeId && !rp.isFutureKey) p.sizeBytes = Number(rp.partitionSize);
        }
      }
    }
  }));
}

export interface CreateTopicOptions {
  name: string;
  /** Default: the cluster's num.partitions. */
  partitions?: number;
  /** Default: the cluster's default.replication.factor. */
  replicationFactor?: number;
  configs?: Record<string, string>;
}

export async function createTopic(c: KafkaConnection, opts: CreateTopicOptions): Promise<void> {
  try {
    await c.admin().createTopics({
      topics: [opts.name],
      partitions: opts.partitions,
      replicas: opts.replicationFactor,
      configs: Object.entries(opts.configs ?? {}).map(([name, value]) => ({ name, value })),
    });
  } catch (e) {
    throw toAdminError(e);
  }
}

export async function deleteTopics(c: KafkaConnection, names: string[]): Promise<void> {
  try {
    await c.admin().deleteTopics({ topics: names });
  } catch (e) {
    throw toAdminError(e);
  }
}

/** Grows a topic to `partitions` (CreatePartitions: only ever more). Its configs: alterConfigs in configs.ts. */
export async function alterTopic(c: KafkaConnection, name: string, opts: { partitions?: number }): Promise<void> {
  if (opts.partitions === undefined) return;
  try {
    await c.admin().createPartitions({ topics: [{ name, count: opts.partitions }] });
  } catch (e) {
    throw toAdminError(e);
  }
}
