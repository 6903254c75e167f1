// A streams group's topology (what Kafka Streams sends when a member joins) and its configuration
// against the topics that exist (Kafka's InternalTopicManager.configureTopics): how many tasks
// each subtopology has, which internal topics (repartition, changelog) are missing and with
// how many partitions they are to be created, and the statuses the heartbeat reports meanwhile.

export interface TopicInfo {
  readonly name: string;
  /** 0: not fixed by the topology. */
  readonly partitions: number;
  /** 0: the broker's default. */
  readonly replicationFactor: number;
  readonly topicConfigs: readonly { key: string; value: string }[];
}

export interface Subtopology {
  readonly subtopologyId: string;
  readonly sourceTopics: readonly string[];
  readonly repartitionSinkTopics: readonly string[];
  readonly stateChangelogTopics: readonly TopicInfo[];
  readonly repartitionSourceTopics: readonly TopicInfo[];
  /** Indexes into sourceTopics and repartitionSourceTopics. */
  readonly copartitionGroups: readonly { sourceTopics: number[]; repartitionSourceTopics: number[] }[];
}

export interface StreamsTopology {
  readonly epoch: number;
  readonly subtopologies: readonly Subtopology[];
}

/** Kafka's StreamsGroupHeartbeatResponse.Status codes. */
export enum StreamsStatus {
  StaleTopology = 0,
  MissingSourceTopics = 1,
  IncorrectlyPartitionedTopics = 2,
  MissingInternalTopics = 3,
  ShutdownApplication = 4,
  AssignmentDelayed = 5,
}

export interface StatusEntry {
  readonly statusCode: StreamsStatus;
  readonly statusDetail: string;
}

export interface InternalTopicToCreate {
  readonly name: string;
  readonly numPartitions: number;
  /** -1: the broker's default.replication.factor. */
  readonly replicationFactor: number;
  readonly configs: Record<string, string>;
}

export interface ConfiguredTopology {
  /** Each subtopology's task count; null while the topology cannot be served (statuses say why). */
  readonly tasks: ReadonlyMap<string, number> | null;
  readonly statuses: readonly StatusEntry[];
  readonly internalTopicsToCreate: readonly InternalTopicToCreate[];
}

/**
 * Configures `topology` against the topics as they are (`partitionsOf`: a topic's partition count,
 * undefined if it does not exist). Source topics must exist; repartition topics take their fixed
 * count or the most partitions of the subtopologies writing to them; changelog topics have one
 * partition per task.
 */
export function configureTopology(topology: StreamsTopology, partitionsOf: (topic: string) => number | undefined): ConfiguredTopology {
  const repartitionTopics = new Map<string, TopicInfo>();
  for (const s of topology.subtopologies) for (const t of s.repartitionSourceTopics) repartitionTopics.set(t.name, t);
  // Every source topic must exist, even one named as a repartition topic too (as Kafka's configureTopics).
  const missingSources = [...new Set(topology.subtopologies.flatMap((s) => s.sourceTopics))]
    .filter((t) => partitionsOf(t) === undefined).sort();
  if (missingSources.length > 0) {
    return { tasks: null, internalTopicsToCreate: [], statuses: [{ statusCode: StreamsStatus.MissingSourceTopics, statusDetail: `Source topics ${missingSources.join(', ')} are missing.` }] };
  }

  // Repartition topics without a fixed count: the most partitions of what writes to them, until nothing changes.
  const repartitionCounts = new Map<string, number>();
  for (const [name, info] of repartitionTopics) if (info.partitions > 0) repartitionCounts.set(name, info.partitions);
  const sourceCount = (s: Subtopology): number | undefined => {
    const counts = [...s.sourceTopics.map((t) => partitionsOf(t)!),
      ...s.repartitionSourceTopics.map((t) => repartitionCounts.get(t.name))];
    return counts.some((c) => c === undefined) || counts.length === 0 ? undefined : Math.max(...(counts as number[]));
  };
  for (let changed = true; changed;) {
    changed = false;
    for (const s of topology.subtopologies) {
      const n = sourceCount(s);
      if (n === undefined) continue;
      for (const sink of s.repartitionSinkTopics) {
        if (!repartitionTopics.has(sink) || repartitionTopics.get(sink)!.partitions > 0) continue;
        if ((repartitionCounts.get(sink) ?? 0) < n) {
          repartitionCounts.set(sink, n);
          changed = true;
        }
      }
    }
  }
  // Copartitioned repartition topics without a fixed count follow the group's other topics.
  for (const s of topology.subtopologies) {
    for (const g of s.copartitionGroups) {
      const fixed = [...g.sourceTopics.map((i) => partitionsOf(s.sourceTopics[i])),
        ...g.repartitionSourceTopics.map((i) => s.repartitionSourceTopics[i]).filter((t) => t.partitions > 0).map((t) => t.partitions)];
      const counts = fixed.filter((c): c is number => c !== undefined);
      if (new Set(counts).size > 1) {
        return { tasks: null, internalTopicsToCreate: [], statuses: [{ statusCode: StreamsStatus.IncorrectlyPartitionedTopics,
          statusDetail: `Following topics do not have the same number of partitions: [${g.sourceTopics.map((i) => s.sourceTopics[i]).sort().join(', ')}]` }] };
      }
      if (counts.length > 0) {
        for (const i of g.repartitionSourceTopics) {
          const t = s.repartitionSourceTopics[i];
          if (t.partitions === 0) repartitionCounts.set(t.name, counts[0]);
        }
      }
    }
  }

  const tasks = new Map<string, number>();
  const wanted: InternalTopicToCreate[] = [];
  const toCreate = (info: TopicInfo, numPartitions: number): InternalTopicToCreate => ({
    name: info.name, numPartitions, replicationFactor: info.replicationFactor > 0 ? info.replicationFactor : -1,
    configs: Object.fromEntries(info.topicConfigs.map((c) => [c.key, c.value])),
  });
  for (const [name, info] of repartitionTopics) {
    const n = repartitionCounts.get(name);
    if (n === undefined) {
      return { tasks: null, internalTopicsToCreate: [], statuses: [{ statusCode: StreamsStatus.MissingSourceTopics, statusDetail: `Repartition topic ${name} has no partition count.` }] };
    }
    wanted.push(toCreate(info, n));
  }
  for (const s of topology.subtopologies) {
    const n = sourceCount(s)!;
    tasks.set(s.subtopologyId, n);
    for (const c of s.stateChangelogTopics) wanted.push(toCreate(c, n));
  }

  const missing = wanted.filter((t) => partitionsOf(t.name) === undefined);
  const wrong = wanted.filter((t) => partitionsOf(t.name) !== undefined && partitionsOf(t.name) !== t.numPartitions).map((t) => t.name).sort();
  const statuses: StatusEntry[] = [];
  if (missing.length > 0) statuses.push({ statusCode: StreamsStatus.MissingInternalTopics, statusDetail: `Internal topics are missing: ${missing.map((t) => t.name).sort().join(', ')}` });
  if (wrong.length > 0) statuses.push({ statusCode: StreamsStatus.IncorrectlyPartitionedTopics, statusDetail: `Following topics are incorrectly partitioned: ${wrong.join(', ')}` });
  return { tasks: statuses.length > 0 ? null : tasks, statuses, internalTopicsToCreate: missing };
}

/** The source topics (repartition sources included) of each subtopology, for endpoints' partitions. */
export function sourceTopicsOf(s: Subtopology): string[] {
  return [...new Set([...s.sourceTopics, ...s.repartitionSourceTopics.map((t) => t.name)])];
}
