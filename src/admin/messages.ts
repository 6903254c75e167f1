/**
 * Records of any Kafka-compatible cluster: produce some, read a partition without a group (fetch
 * from its leader at an offset, or at the offset ListOffsets gives for a timestamp), or consume as
 * a member of a group that commits what it read. For `fjord produce`, `fjord consume` and the
 * console's message browser.
 */
import { IS_CONTROL, UserError, murmur2, type Consumer, type ClusterTopicMetadata } from '@platformatic/kafka';
import type { KafkaConnection } from './connection';
import { AdminError } from './errors';

export interface BrowsedRecord {
  topic: string;
  partition: number;
  offset: bigint;
  timestamp: bigint;
  key: Buffer | null;
  value: Buffer | null;
  headers: { key: string; value: Buffer | null }[];
}

export interface RecordToProduce {
  key: Buffer | null;
  value: Buffer | null;
  headers?: { key: string; value: Buffer }[];
  /** Default: by the key's murmur2 hash as Kafka's clients do, round robin without a key. */
  partition?: number;
  timestampMs?: number;
}

export interface WrittenRecord {
  partition: number;
  offset: bigint;
}

// ListOffsets' special timestamps.
const LATEST_TIMESTAMP = -1n;
const EARLIEST_TIMESTAMP = -2n;
// The group a reader without a group names: it never joins it nor commits to it.
const NO_GROUP = 'fjord-reader-without-group';
const FETCH_MAX_BYTES = 1024 * 1024;

type FetchResponse = Awaited<ReturnType<Consumer['fetch']>>;

/** Metadata of topics (partitions, leaders, topic ids); an unknown one is UNKNOWN_TOPIC_OR_PARTITION. */
export async function topicsMetadata(c: KafkaConnection, topics: string[]): Promise<Map<string, ClusterTopicMetadata>> {
  let metadata;
  try {
    metadata = await c.admin().metadata({ topics });
  } catch (e) {
    // @platformatic/kafka turns the broker's UNKNOWN_TOPIC_OR_PARTITION into "Unknown topic NAME.".
    if (e instanceof UserError && e.message.startsWith('Unknown topic')) throw new AdminError(e.message, 'UNKNOWN_TOPIC_OR_PARTITION');
    throw e;
  }
  for (const topic of topics) if (!metadata.topics.has(topic)) throw new AdminError(`Unknown topic ${topic}.`, 'UNKNOWN_TOPIC_OR_PARTITION');
  return metadata.topics;
}

async function topicMetadata(c: KafkaConnection, topic: string): Promise<ClusterTopicMetadata> {
  return (await topicsMetadata(c, [topic])).get(topic) as ClusterTopicMetadata;
}

function checkPartition(meta: ClusterTopicMetadata, topic: string, partition: number): void {
  if (!Number.isInteger(partition) || partition < 0 || partition >= meta.partitionsCount) {
    throw new AdminError(`Topic ${topic} has no partition ${partition} (it has ${meta.partitionsCount}).`, 'UNKNOWN_TOPIC_OR_PARTITION');
  }
}

/**
 * Writes records to one topic, in batches of `batchSize`, in order; answers each record's partition
 * and offset (`onProgress` gets how many are written).
 */
export async function produceMessages(c: KafkaConnection, topic: string, records: RecordToProduce[], onProgress?: (done: number) => void, batchSize = 1000): Promise<WrittenRecord[]> {
  const meta = await topicMetadata(c, topic);
  for (const r of records) if (r.partition !== undefined) checkPartition(meta, topic, r.partition);
  const producer = c.producer();
  const written: WrittenRecord[] = [];
  let roundRobin = 0;
  for (let i = 0; i < records.length; i += batchSize) {
    const batch = records.slice(i, i + batchSize).map((r) => {
      // Chosen here rather than by the client so that each record's offset can be told.
      const partition = r.partition ?? (r.key ? (murmur2(r.key, false) & 0x7fffffff) % meta.partitionsCount : roundRobin++ % meta.partitionsCount);
      return {
        topic,
        partition,
        key: r.key ?? undefined,
        value: r.value ?? undefined,
        headers: new Map((r.headers ?? []).map((h) => [Buffer.from(h.key), h.value])),
        timestamp: r.timestampMs === undefined ? undefined : BigInt(r.timestampMs),
      };
    });
    // acks=all, kafka-console-producer's default; the client reads acks per send, not from the producer's options.
    const result = await producer.send({ messages: batch, acks: -1 });
    const next = new Map((result.offsets ?? []).map((o) => [o.partition, o.offset]));
    for (const m of batch) {
      const offset = next.get(m.partition);
      if (offset === undefined) throw new AdminError(`The broker did not acknowledge partition ${m.partition} of ${topic}.`);
      written.push({ partition: m.partition, offset });
      next.set(m.partition, offset + 1n);
    }
    onProgress?.(written.length);
  }
  return written;
}

/** Offsets of partitions at a ListOffsets timestamp (LATEST, EARLIEST or a time), by partition. */
async function offsetsAt(c: KafkaConnection, topic: string, partitions: number[], timestamp: bigint): Promise<Map<number, bigint>> {
  const listed = await c.admin().listOffsets({ topics: [{ name: topic, partitions: partitions.map((partitionIndex) => ({ partitionIndex, timestamp })) }] });
  return new Map(listed.flatMap((t) => t.partitions.map((p) => [p.partitionIndex, p.offset] as const)));
}

/** Where to start reading: an offset (kept within the log), the earliest, the latest, or the first record at or after a time. */
export type StartPosition = { offset: bigint } | { timestampMs: number } | 'earliest' | 'latest';

async function startOffsets(c: KafkaConnection, topic: string, partitions: number[], start: StartPosition): Promise<Map<number, bigint>> {
  const earliest = await offsetsAt(c, topic, partitions, EARLIEST_TIMESTAMP);
  const latest = await offsetsAt(c, topic, partitions, LATEST_TIMESTAMP);
  if (start === 'earliest') return earliest;
  if (start === 'latest') return latest;
  const wanted = 'offset' in start ? new Map(partitions.map((p) => [p, start.offset])) : await offsetsAt(c, topic, partitions, BigInt(start.timestampMs));
  return new Map(partitions.map((p) => {
    const low = earliest.get(p) ?? 0n;
    const high = latest.get(p) ?? 0n;
    const w = wanted.get(p) ?? -1n;
    // No record at or after the time: from the end.
    return [p, w < 0n ? high : w < low ? low : w > high ? high : w];
  }));
}

/**
 * Reads partitions of a topic without a group, fetching from each leader, and ends after
 * `idleTimeoutMs` (Infinity: never) without a record (or when the consumer of the generator stops).
 */
export async function* readPartitions(
  c: KafkaConnection,
  opts: { topic: string; partitions?: number[]; start: StartPosition; idleTimeoutMs: number },
): AsyncGenerator<BrowsedRecord> {
  const { topic } = opts;
  const meta = await topicMetadata(c, topic);
  for (const p of opts.partitions ?? []) checkPartition(meta, topic, p);
  const partitions = opts.partitions ?? [...Array(meta.partitionsCount).keys()];
  const next = await startOffsets(c, topic, partitions, opts.start);
  const consumer = c.consumer({ groupId: NO_GROUP });
  let lastRecordAt = Date.now();
  while (Date.now() - lastRecordAt < opts.idleTimeoutMs) {
    const wait = Math.max(1, Math.min(500, opts.idleTimeoutMs - (Date.now() - lastRecordAt)));
    const fetched = await fetchOnce(consumer, topic, meta, partitions, next, wait);
    for (const r of fetched) {
      next.set(r.partition, r.offset + 1n);
      yield r;
    }
    if (fetched.length) lastRecordAt = Date.now();
  }
}

/** One Fetch to each leader of the partitions, from the offsets in `next` (moved past control batches). */
async function fetchOnce(consumer: Consumer, topic: string, meta: ClusterTopicMetadata, partitions: number[], next: Map<number, bigint>, maxWaitTime: number): Promise<BrowsedRecord[]> {
  const byLeader = new Map<number, number[]>();
  for (const p of partitions) {
    const leader = meta.partitions[p]?.leader ?? -1;
    if (leader < 0) throw new AdminError(`Partition ${topic}-${p} has no leader.`, 'LEADER_NOT_AVAILABLE');
    byLeader.set(leader, [...(byLeader.get(leader) ?? []), p]);
  }
  const responses = await Promise.all([...byLeader].map(([node, ps]) =>
    consumer.fetch({
      node,
      maxWaitTime,
      minBytes: 1,
      maxBytes: FETCH_MAX_BYTES,
      isolationLevel: 0,
      topics: [{
        topicId: meta.id,
        partitions: ps.map((partition) => ({
          partition, currentLeaderEpoch: -1, fetchOffset: next.get(partition) ?? 0n, lastFetchedEpoch: -1, partitionMaxBytes: FETCH_MAX_BYTES,
        })),
      }],
    })));
  return responses.flatMap((response) => recordsOf(response, topic, next));
}

function recordsOf(response: FetchResponse, topic: string, next: Map<number, bigint>): BrowsedRecord[] {
  const records: BrowsedRecord[] = [];
  for (const t of response.responses) {
    for (const p of t.partitions) {
      const from = next.get(p.partitionIndex) ?? 0n;
      for (const batch of p.records ?? []) {
        // A control batch (transaction marker) holds no record for people, but reading goes past it.
        const batchEnd = batch.firstOffset + BigInt(batch.lastOffsetDelta) + 1n;
        if (batch.attributes & IS_CONTROL) {
          if (batchEnd > (next.get(p.partitionIndex) ?? 0n)) next.set(p.partitionIndex, batchEnd);
          continue;
        }
        for (const r of batch.records) {
          const offset = batch.firstOffset + BigInt(r.offsetDelta);
          if (offset < from) continue;
          records.push({
            topic,
            partition: p.partitionIndex,
            offset,
            timestamp: batch.firstTimestamp + r.timestampDelta,
            key: r.key,
            value: r.value,
            headers: r.headers.map(([k, v]) => ({ key: k?.toString('utf8') ?? '', value: v })),
          });
        }
      }
    }
  }
  return records;
}

/**
 * Up to `limit` records of one partition from an offset (default the earliest) or a time, without a
 * group; fewer when the partition ends first.
 */
export async function browseMessages(
  c: KafkaConnection,
  opts: { topic: string; partition: number; fromOffset?: bigint; fromTimestampMs?: number; limit: number },
): Promise<BrowsedRecord[]> {
  const { topic, partition, limit } = opts;
  const meta = await topicMetadata(c, topic);
  checkPartition(meta, topic, partition);
  const start: StartPosition = opts.fromOffset !== undefined ? { offset: opts.fromOffset } : opts.fromTimestampMs !== undefined ? { timestampMs: opts.fromTimestampMs } : 'earliest';
  const next = await startOffsets(c, topic, [partition], start);
  const end = (await offsetsAt(c, topic, [partition], LATEST_TIMESTAMP)).get(partition) ?? 0n;
  const consumer = c.consumer({ groupId: NO_GROUP });
  const records: BrowsedRecord[] = [];
  while (records.length < limit && (next.get(partition) ?? end) < end) {
    const fetched = await fetchOnce(consumer, topic, meta, [partition], next, 100);
    for (const r of fetched.slice(0, limit - records.length)) {
      records.push(r);
      next.set(partition, r.offset + 1n);
    }
  }
  return records;
}

/**
 * Consumes a topic as a member of `groupId` (classic protocol; from its committed offsets, else the
 * earliest or the latest), committing each record after it is handed on; ends after `idleTimeoutMs`
 * (Infinity: never) without a record or when the consumer of the generator stops. Records are
 * fetched as readPartitions does, from the partitions the group assigns this member, and what was
 * handed on is committed after each fetch and when the generator ends.
 */
export async function* consumeAsGroup(
  c: KafkaConnection,
  opts: { topic: string; groupId: string; fromBeginning: boolean; idleTimeoutMs: number },
): AsyncGenerator<BrowsedRecord> {
  const { topic } = opts;
  const meta = await topicMetadata(c, topic);
  const consumer = c.consumer({ groupId: opts.groupId });
  try {
    consumer.topics.track(topic);
    await consumer.joinGroup({});
    const next = new Map<number, bigint>();
    // Offsets handed on and not yet committed, by partition.
    const uncommitted = new Map<number, bigint>();
    const commit = async () => {
      if (!uncommitted.size) return;
      const offsets = [...uncommitted].map(([partition, offset]) => ({ topic, partition, offset, leaderEpoch: meta.partitions[partition]?.leaderEpoch ?? -1 }));
      uncommitted.clear();
      await consumer.commit({ offsets });
    };
    let lastRecordAt = Date.now();
    while (Date.now() - lastRecordAt < opts.idleTimeoutMs) {
      // The assignment may change when the group rebalances (the client rejoins by itself).
      const assigned = (consumer.assignments ?? []).find((a) => a.topic === topic)?.partitions ?? [];
      const unknown = assigned.filter((p) => !next.has(p));
      if (unknown.length) {
        const committed = (await consumer.listCommittedOffsets({ topics: [{ topic, partitions: unknown }] })).get(topic) ?? [];
        const fallback = await startOffsets(c, topic, unknown, opts.fromBeginning ? 'earliest' : 'latest');
        for (const p of unknown) {
          const offset = committed[p] ?? -1n;
          next.set(p, offset >= 0n ? offset : fallback.get(p) ?? 0n);
        }
      }
      const wait = Math.max(1, Math.min(500, opts.idleTimeoutMs - (Date.now() - lastRecordAt)));
      if (!assigned.length) {
        await new Promise((resolve) => setTimeout(resolve, wait));
        continue;
      }
      const fetched = await fetchOnce(consumer, topic, meta, assigned, next, wait);
      try {
        for (const r of fetched) {
          next.set(r.partition, r.offset + 1n);
          // Counted as handed on once yielded: a caller that stops after it has printed it.
          uncommitted.set(r.partition, r.offset + 1n);
          yield r;
        }
      } finally {
        // Also when the caller stops after a record (its last).
        await commit();
      }
      if (fetched.length) lastRecordAt = Date.now();
    }
  } finally {
    // Leaves the group, so that it is Empty (and its offsets can be reset) once the command is done.
    await consumer.close();
  }
}
