// The share groups' dead-letter queue (Kafka 4.4's KIP-1191, its ShareGroupDLQStateManager): the
// records a share-partition archives because a consumer rejected them or their delivery count reached
// share.delivery.count.limit are written to the group's errors.deadletterqueue.topic.name, one DLQ
// record per archived offset, carrying the __dlq.errors.* headers (UTF-8 strings, as Kafka writes
// them) and, with errors.deadletterqueue.copy.record.enable, the source record's key and value.
// - The checks are Kafka's, in its order, at each write (the group's configs may change): no "__"
//   names, errors.deadletterqueue.topic.name.prefix, the topic's errors.deadletterqueue.group.enable,
//   and a missing topic created only with errors.deadletterqueue.auto.create.topics.enable (Kafka's
//   CreateTopics: default partitions and replication, the DLQ flag and CreateTime).
// - The DLQ partition is the source partition modulo the DLQ topic's partition count, so a source
//   partition's records keep their order: its archives queue behind each other, and those that queue
//   while one is written go out together, in as few appends as the topic's max.message.bytes allows.
// - Written where the DLQ partition's leader is: appended here (acks=all, as Kafka produces them),
//   or produced to the leader by `remote`. Retriable errors are tried again (Kafka: 5 attempts,
//   backoff from 1 s); anything else is logged and the records are archived regardless, as in Kafka:
//   the promise onArchived returns (the share-partition keeps the records ARCHIVING until it
//   settles) never rejects, and nothing of the share-partition waits on the writer synchronously.
import type { Logger } from 'pino';
import type { Controller } from '../cluster/controller';
import type { TopicRecord } from '../cluster/metadata-store';
import { ErrorCode } from '../common/errors';
import type { BrokerConfig } from '../config/broker-config';
import { deadLetterQueueConfig, type GroupConfigMap } from '../config/group-config';
import { decodeRecords, walkBatches, type BuildRecord } from '../records';
import { appendInternalRecords } from '../replica/internal-append';
import type { ReplicaManager } from '../replica/replica-manager';
import type { ArchiveCause, ArchivedRecords, ArchiveListener } from './share-partition';

/** The headers of a DLQ record (Kafka's ShareGroupDLQStateManager), every value a UTF-8 string. */
export const DLQ_HEADER = {
  topic: '__dlq.errors.topic',
  partition: '__dlq.errors.partition',
  offset: '__dlq.errors.offset',
  group: '__dlq.errors.group',
  deliveryCount: '__dlq.errors.delivery.count',
  message: '__dlq.errors.message',
} as const;

/** Kafka's ShareGroupDLQManager.CLIENT_REJECT and DELIVERY_COUNT_EXCEEDED messages. */
export const DLQ_CAUSE_MESSAGE: Readonly<Record<ArchiveCause, string>> = {
  'rejected': 'Offset rejected by client.',
  'delivery-count-exceeded': 'Offset delivery count exceeded the threshold.',
};

/** The topic config a topic needs to be a DLQ (Kafka's TopicConfig.ERRORS_DEADLETTERQUEUE_GROUP_ENABLE_CONFIG). */
export const DLQ_TOPIC_ENABLE_CONFIG = 'errors.deadletterqueue.group.enable';

/** Kafka's ShareGroupDLQStateManager: MAX_REQUEST_ATTEMPTS, REQUEST_BACKOFF_MS, REQUEST_BACKOFF_MAX_MS. */
const MAX_ATTEMPTS = 5;
const RETRY_BACKOFF_MS = 1000;
const RETRY_BACKOFF_MAX_MS = 30_000;

/** A DLQ batch's own overhead (the v2 batch header) and a record's most, beside its key, value and headers. */
const BATCH_OVERHEAD_BYTES = 61;
const RECORD_OVERHEAD_BYTES = 26;
const HEADER_OVERHEAD_BYTES = 10;

/** How much of the source log one read takes while copying records. */
const SOURCE_READ_BYTES = 1024 * 1024;

/** Errors worth another attempt: the DLQ topic just created (no leader yet), a leader moving, a peer unreachable. */
const RETRIABLE = new Set<number>([
  ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.LEADER_NOT_AVAILABLE, ErrorCode.NOT_LEADER_OR_FOLLOWER,
  ErrorCode.NOT_ENOUGH_REPLICAS, ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND, ErrorCode.REQUEST_TIMED_OUT,
  ErrorCode.NETWORK_EXCEPTION, ErrorCode.KAFKA_STORAGE_ERROR,
]);

/** The outcome of one write of DLQ records to a partition. */
export interface DeadLetterWriteResult {
  errorCode: number;
  errorMessage: string | null;
}

/** Produces DLQ records to a partition another broker leads (net/dead-letter-producer.ts: Produce, acks=all). */
export interface RemoteDeadLetterProducer {
  produce(leaderId: number, topic: Pick<TopicRecord, 'name' | 'id'>, partition: number, records: BuildRecord[]): Promise<DeadLetterWriteResult>;
}

export interface DeadLetterQueueOptions {
  nodeId: number;
  /** errors.deadletterqueue.topic.name.prefix, errors.deadletterqueue.auto.create.topics.enable, message.max.bytes: read at each write. */
  config: Pick<BrokerConfig, 'getBool' | 'getString' | 'getInt'>;
  controller: Pick<Controller, 'topic' | 'createTopic' | 'groupConfigs'>;
  replicas: ReplicaManager;
  /** Kafka's ShareVersion.supportsShareGroupDLQ: the finalized share.version is 2 or more. */
  enabled: () => boolean;
  /** In a cluster: DLQ partitions other brokers lead. */
  remote?: RemoteDeadLetterProducer;
  log: Logger;
  /** The first retry's wait, doubled at each (tests shorten it). */
  retryBackoffMs?: number;
}

/** A DLQ write refused for good (Kafka's ConfigException of validateDlqTopic and populateDLQTopicData). */
export class DeadLetterQueueError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DeadLetterQueueError';
  }
}

/** An archive waiting for its write, and what settles onArchived's promise for it. */
interface PendingArchive {
  readonly records: ArchivedRecords;
  readonly done: () => void;
}

interface SourceQueue {
  /** Archives waiting for the write in flight, in the order they were archived. */
  pending: PendingArchive[];
  /** Settles once nothing of this source partition is waiting or being written. */
  drained: Promise<void>;
}

export class DeadLetterQueueWriter {
  /** Per source share-partition (group, topic, partition): its archives, written one write at a time. */
  private readonly queues = new Map<string, SourceQueue>();
  private closed = false;

  constructor(private readonly opts: DeadLetterQueueOptions) {}

  /**
   * The share-partitions' ArchiveListener: takes the archive and returns at once, with a promise
   * that settles (never rejects) once its records are in the DLQ or given up on; nothing to wait
   * for without a DLQ (Kafka's SharePartition.isDLQEnabledForGroup: share.version 2 and a topic set).
   */
  readonly onArchived: ArchiveListener = (records) => {
    if (this.closed || !this.opts.enabled()) return undefined;
    if (this.dlqConfig(records.key.groupId).topicName === null) return undefined;
    const id = `${records.key.groupId}\u0000${records.key.topicId}\u0000${records.key.partition}`;
    return new Promise<void>((done) => {
      const queue = this.queues.get(id);
      if (queue) {
        queue.pending.push({ records, done });
        return;
      }
      const started: SourceQueue = { pending: [{ records, done }], drained: Promise.resolve() };
      started.drained = this.drain(started).finally(() => this.queues.delete(id));
      this.queues.set(id, started);
    });
  };

  /** Settles once every archive handed over so far is written to its DLQ or given up on. */
  async idle(): Promise<void> {
    while (this.queues.size > 0) await Promise.all([...this.queues.values()].map((q) => q.drained));
  }

  /** Takes no more archives; settles once those taken are written or given up on. */
  close(): Promise<void> {
    this.closed = true;
    return this.idle();
  }

  private dlqConfig(groupId: string) {
    return deadLetterQueueConfig(this.opts.controller.groupConfigs(groupId) as GroupConfigMap);
  }

  private async drain(queue: SourceQueue): Promise<void> {
    // Yield first: the share-partition that archived goes on before anything is read or written.
    await Promise.resolve();
    while (queue.pending.length > 0) {
      const taken = queue.pending.splice(0);
      const archives = taken.map((p) => p.records);
      try {
        await this.write(archives);
      } catch (err) {
        const { key } = archives[0];
        this.opts.log.error({ err: (err as Error).message, group: key.groupId, topic: archives[0].topicName, partition: key.partition,
          offsets: archives.map((a) => `${a.firstOffset}-${a.lastOffset}`).join(',') },
        'Failed to write to DLQ, proceeding to ARCHIVED regardless.');
      }
      for (const p of taken) p.done();
    }
  }

  /** One source partition's archives to its DLQ partition; throws what makes them go unwritten. */
  private async write(archives: readonly ArchivedRecords[]): Promise<void> {
    const { groupId, partition: sourcePartition } = archives[0].key;
    const { topicName, copyRecord } = this.dlqConfig(groupId);
    if (topicName === null) throw new DeadLetterQueueError(`Configured DLQ topic name in share group: ${groupId} is empty.`);
    let topic = this.validatedTopic(groupId, topicName);
    topic ??= await this.createTopic(groupId, topicName);
    const copies = copyRecord ? await this.readSourceRecords(archives) : new Map<number, SourceRecord>();
    const nowMs = Date.now();
    const records = archives.flatMap((a) => {
      const out: BuildRecord[] = [];
      for (let offset = Number(a.firstOffset); offset <= Number(a.lastOffset); offset++) {
        const copy = copies.get(offset);
        out.push({ key: copy?.key ?? null, value: copy?.value ?? null, headers: headersOf(a, offset), timestamp: nowMs });
      }
      return out;
    });
    const maxBytes = Number(topic.configs['max.message.bytes'] ?? this.opts.config.getInt('message.max.bytes'));
    for (const chunk of chunksWithin(records, maxBytes)) await this.send(groupId, topicName, sourcePartition, chunk);
  }

  /**
   * Kafka's validateDlqTopic, in its order: the DLQ topic if it exists and may be one, null if it
   * does not exist and may be created; throws otherwise.
   */
  private validatedTopic(groupId: string, topicName: string): TopicRecord | null {
    if (topicName.startsWith('__')) {
      throw new DeadLetterQueueError(`Configured DLQ topic name in share group: ${groupId} cannot start with __, topic: ${topicName}.`);
    }
    const topic = this.opts.controller.topic(topicName);
    if (topic && topic.configs[DLQ_TOPIC_ENABLE_CONFIG]?.toLowerCase() !== 'true') {
      throw new DeadLetterQueueError(`DLQ is not enabled on configured DLQ topic for share group: ${groupId}, topic: ${topicName}.`);
    }
    if (!topic && !this.opts.config.getBool('errors.deadletterqueue.auto.create.topics.enable')) {
      throw new DeadLetterQueueError(`DLQ topic does not exist and auto create is disabled on cluster for share group: ${groupId}, topic: ${topicName}.`);
    }
    const prefix = this.opts.config.getString('errors.deadletterqueue.topic.name.prefix');
    if (prefix !== '' && !topicName.startsWith(prefix)) {
      throw new DeadLetterQueueError(
        `Configured DLQ topic name does not comply with the DLQ topic prefix in share group: ${groupId}, topic: ${topicName}, prefix: ${prefix}.`);
    }
    return topic ?? null;
  }

  /** Kafka's createTopicBuilder: num.partitions, default.replication.factor, the DLQ flag and CreateTime. */
  private async createTopic(groupId: string, topicName: string): Promise<TopicRecord> {
    const created = await this.opts.controller.createTopic({
      name: topicName, numPartitions: -1, replicationFactor: -1, assignments: [],
      configs: { [DLQ_TOPIC_ENABLE_CONFIG]: 'true', 'message.timestamp.type': 'CreateTime' },
    }, false);
    // Another writer (or broker) may have created it meanwhile: then it is checked as any existing one.
    const topic = created.topic ?? (created.errorCode === ErrorCode.TOPIC_ALREADY_EXISTS ? this.validatedTopic(groupId, topicName) : null);
    if (!topic) throw new DeadLetterQueueError(`Unable to create DLQ topic ${topicName} for share group ${groupId}: ${created.errorMessage ?? created.errorCode}`);
    return topic;
  }

  /**
   * The source records of the archived offsets (Kafka's ShareGroupDLQRecordFetcher), read from this
   * broker's log of the source partition, decompressed as needed. What cannot be read (the
   * partition led elsewhere now, records removed by retention or compaction) is left out: those
   * DLQ records carry the headers only, as in Kafka.
   */
  private async readSourceRecords(archives: readonly ArchivedRecords[]): Promise<Map<number, SourceRecord>> {
    const found = new Map<number, SourceRecord>();
    const { topicName } = archives[0];
    const { partition } = archives[0].key;
    for (const a of archives) {
      let fetchOffset = Number(a.firstOffset);
      const last = Number(a.lastOffset);
      try {
        while (fetchOffset <= last) {
          const [read] = await this.opts.replicas.fetchMessages(
            { maxWaitMs: 0, minBytes: 0, maxBytes: SOURCE_READ_BYTES, isolation: 'high-watermark', allocate: (n) => Buffer.allocUnsafe(n) },
            [{ topic: topicName, partition, fetchOffset, maxBytes: SOURCE_READ_BYTES, currentLeaderEpoch: -1 }]);
          const { batches } = walkBatches(read.records, { verifyCrc: false });
          if (read.errorCode !== ErrorCode.NONE || batches.length === 0) break;
          for (const b of batches) {
            if (b.isControl) continue;
            for (const r of await decodeRecords(read.records.subarray(b.position, b.position + b.size))) {
              if (r.offset >= fetchOffset && r.offset <= last) found.set(r.offset, { key: copyOf(r.key), value: copyOf(r.value) });
            }
          }
          fetchOffset = batches[batches.length - 1].baseOffset + batches[batches.length - 1].lastOffsetDelta + 1;
        }
      } catch (err) {
        this.opts.log.warn({ err: (err as Error).message, topic: topicName, partition, offset: fetchOffset },
          'Unable to fetch original record data: DLQ records will be produced with headers only for them.');
      }
    }
    return found;
  }

  /** Writes one chunk to the DLQ partition's leader, retrying what is retriable. */
  private async send(groupId: string, topicName: string, sourcePartition: number, records: BuildRecord[]): Promise<void> {
    let backoffMs = this.opts.retryBackoffMs ?? RETRY_BACKOFF_MS;
    for (let attempt = 1; ; attempt++) {
      const result = await this.sendOnce(groupId, topicName, sourcePartition, records);
      if (result.errorCode === ErrorCode.NONE) return;
      // Closing: what is still failing is given up on at once rather than holding the broker's stop.
      if (!RETRIABLE.has(result.errorCode) || attempt >= MAX_ATTEMPTS || this.closed) {
        throw new DeadLetterQueueError(`Unable to produce to DLQ topic ${topicName} (error ${result.errorCode}${result.errorMessage ? `: ${result.errorMessage}` : ''}) after ${attempt} attempt(s).`);
      }
      await new Promise((resolve) => setTimeout(resolve, backoffMs));
      backoffMs = Math.min(backoffMs * 2, RETRY_BACKOFF_MAX_MS);
    }
  }

  private async sendOnce(groupId: string, topicName: string, sourcePartition: number, records: BuildRecord[]): Promise<DeadLetterWriteResult> {
    // The metadata again at each attempt: the topic just created may have its leaders now, or others.
    const topic = this.validatedTopic(groupId, topicName);
    if (!topic || topic.partitions.length === 0) return { errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: null };
    const partition = sourcePartition % topic.partitions.length;
    const leader = topic.partitions[partition].leader;
    if (leader === this.opts.nodeId) {
      const found = this.opts.replicas.leaderPartition(topicName, partition, -1);
      if ('errorCode' in found) return { errorCode: found.errorCode, errorMessage: null };
      return appendInternalRecords(this.opts.replicas, found.partition, records);
    }
    if (leader < 0 || !this.opts.remote) return { errorCode: ErrorCode.LEADER_NOT_AVAILABLE, errorMessage: null };
    return this.opts.remote.produce(leader, topic, partition, records);
  }
}

interface SourceRecord {
  key: Buffer | null;
  value: Buffer | null;
}

const copyOf = (b: Buffer | null): Buffer | null => (b === null ? null : Buffer.from(b));

/** Kafka's ProduceRequestHandler.headers: every value the UTF-8 string of the number or name. */
function headersOf(a: ArchivedRecords, offset: number): { key: string; value: Buffer }[] {
  return [
    { key: DLQ_HEADER.topic, value: Buffer.from(a.topicName, 'utf8') },
    { key: DLQ_HEADER.partition, value: Buffer.from(String(a.key.partition), 'utf8') },
    { key: DLQ_HEADER.offset, value: Buffer.from(String(offset), 'utf8') },
    { key: DLQ_HEADER.group, value: Buffer.from(a.key.groupId, 'utf8') },
    { key: DLQ_HEADER.deliveryCount, value: Buffer.from(String(a.deliveryCount), 'utf8') },
    { key: DLQ_HEADER.message, value: Buffer.from(DLQ_CAUSE_MESSAGE[a.cause], 'utf8') },
  ];
}

/** Splits records into batches of at most maxBytes each (at least one record each, as Kafka's topicProduceData). */
function chunksWithin(records: BuildRecord[], maxBytes: number): BuildRecord[][] {
  const chunks: BuildRecord[][] = [];
  let current: BuildRecord[] = [];
  let size = BATCH_OVERHEAD_BYTES;
  for (const r of records) {
    const bytes = recordBytes(r);
    if (current.length > 0 && size + bytes > maxBytes) {
      chunks.push(current);
      current = [];
      size = BATCH_OVERHEAD_BYTES;
    }
    current.push(r);
    size += bytes;
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}

/** A record's size in a batch, at most (its varints at their longest). */
function recordBytes(r: BuildRecord): number {
  const len = (b: BuildRecord['value']) => (b == null ? 0 : typeof b === 'string' ? Buffer.byteLength(b) : b.length);
  return RECORD_OVERHEAD_BYTES + len(r.key) + len(r.value)
    + (r.headers ?? []).reduce((n, h) => n + HEADER_OVERHEAD_BYTES + Buffer.byteLength(h.key) + len(h.value), 0);
}
