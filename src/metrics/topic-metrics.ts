/**
 * Kafka's BrokerTopicMetrics: bytes and messages in, bytes out, rejected bytes, produce and fetch
 * requests per topic, and the same over all topics (the series without a topic label, as Kafka's
 * MBean without one). Counted per partition append or read, never per record: the replica layer
 * holds a topic's TopicMeters (found once per partition) and adds to its plain numbers.
 */
import type { Registry } from 'prom-client';
import { registerCollected } from './instruments';

/** One topic's counts (or all topics'). */
export class TopicMeters {
  bytesIn = 0;
  messagesIn = 0;
  bytesOut = 0;
  bytesRejected = 0;
  totalProduceRequests = 0;
  failedProduceRequests = 0;
  totalFetchRequests = 0;
  failedFetchRequests = 0;
  replicationBytesIn = 0;
  replicationBytesOut = 0;
}

type MeterName = keyof TopicMeters;

/** Each counter: its name after the JMX name (kafka.server:type=BrokerTopicMetrics,name=...PerSec), and what it counts. */
const COUNTERS: readonly [MeterName, string, string][] = [
  ['bytesIn', 'kafka_server_brokertopicmetrics_bytesin_total', 'Bytes of record batches appended from clients (BytesInPerSec)'],
  ['messagesIn', 'kafka_server_brokertopicmetrics_messagesin_total', 'Records appended (MessagesInPerSec)'],
  ['bytesOut', 'kafka_server_brokertopicmetrics_bytesout_total', 'Bytes of records sent to consumers in fetch responses (BytesOutPerSec)'],
  ['bytesRejected', 'kafka_server_brokertopicmetrics_bytesrejected_total', 'Bytes of record batches refused as too large or invalid (BytesRejectedPerSec)'],
  ['totalProduceRequests', 'kafka_server_brokertopicmetrics_totalproducerequests_total', 'Partition appends asked by produce requests (TotalProduceRequestsPerSec)'],
  ['failedProduceRequests', 'kafka_server_brokertopicmetrics_failedproducerequests_total', 'Partition appends that failed (FailedProduceRequestsPerSec)'],
  ['totalFetchRequests', 'kafka_server_brokertopicmetrics_totalfetchrequests_total', 'Partition reads asked by fetch requests (TotalFetchRequestsPerSec)'],
  ['failedFetchRequests', 'kafka_server_brokertopicmetrics_failedfetchrequests_total', 'Partition reads answered with an error (FailedFetchRequestsPerSec)'],
  ['replicationBytesIn', 'kafka_server_brokertopicmetrics_replicationbytesin_total', 'Bytes of records a follower appended from its leaders (ReplicationBytesInPerSec)'],
  ['replicationBytesOut', 'kafka_server_brokertopicmetrics_replicationbytesout_total', 'Bytes of records sent to followers (ReplicationBytesOutPerSec)'],
];

export class TopicMetrics {
  /** The series without a topic label: every topic's counts together. */
  readonly allTopics = new TopicMeters();
  private readonly topics = new Map<string, TopicMeters>();

  constructor(registry: Registry) {
    for (const [field, name, help] of COUNTERS) {
      registerCollected(registry, {
        name, help, type: 'counter',
        read: () => {
          const values = [{ labels: {}, value: this.allTopics[field] }];
          for (const [topic, m] of this.topics) values.push({ labels: { topic }, value: m[field] });
          return values;
        },
      });
    }
  }

  /** The topic's meters, made at its first use here; callers keep them for the topic's partitions. */
  topic(name: string): TopicMeters {
    let meters = this.topics.get(name);
    if (!meters) this.topics.set(name, (meters = new TopicMeters()));
    return meters;
  }

  /** The topic's meters if it has any here (a fetch may name any topic: it must not make series). */
  find(name: string): TopicMeters | undefined {
    return this.topics.get(name);
  }

  /** The topic was deleted: its series go (a re-created topic starts from zero). */
  remove(name: string): void {
    this.topics.delete(name);
  }

  /** A batch appended as leader: `bytes` as stored, `records` in it. */
  appended(topic: TopicMeters, bytes: number, records: number): void {
    topic.bytesIn += bytes;
    topic.messagesIn += records;
    topic.totalProduceRequests++;
    const all = this.allTopics;
    all.bytesIn += bytes;
    all.messagesIn += records;
    all.totalProduceRequests++;
  }

  /**
   * An append refused: a failed produce request unless Kafka does not count its error as one (the
   * partition is not here, the batch too large); `rejectedBytes` when it was too large, else 0.
   */
  appendFailed(topic: TopicMeters, kind: 'failed' | 'uncounted', rejectedBytes: number): void {
    const all = this.allTopics;
    topic.totalProduceRequests++;
    all.totalProduceRequests++;
    if (kind === 'failed') {
      topic.failedProduceRequests++;
      all.failedProduceRequests++;
    }
    topic.bytesRejected += rejectedBytes;
    all.bytesRejected += rejectedBytes;
  }

  /**
   * A partition read for a fetch: records sent to a consumer (bytes out) or to a follower
   * (replication bytes out). `topic` undefined: not hosted here, counted in all topics only.
   */
  read(topic: TopicMeters | undefined, bytes: number, failed: boolean, follower: boolean): void {
    this.count(this.allTopics, bytes, failed, follower);
    if (topic) this.count(topic, bytes, failed, follower);
  }

  private count(m: TopicMeters, bytes: number, failed: boolean, follower: boolean): void {
    m.totalFetchRequests++;
    if (failed) m.failedFetchRequests++;
    if (follower) m.replicationBytesOut += bytes;
    else m.bytesOut += bytes;
  }

  /** Records a follower appended from its leader; `topic` undefined: deleted meanwhile, counted in all topics only. */
  replicated(topic: TopicMeters | undefined, bytes: number): void {
    if (topic) topic.replicationBytesIn += bytes;
    this.allTopics.replicationBytesIn += bytes;
  }
}
