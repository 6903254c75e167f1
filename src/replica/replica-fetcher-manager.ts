// The follower side's entry (Kafka's ReplicaFetcherManager over AbstractFetcherManager): the
// fetchers of this broker, num.replica.fetchers per leader broker, each partition on the one its
// hash picks (Kafka's getFetcherId), created when a partition needs one and closed once empty.
// The replica manager calls it on leadership changes: addPartitions when this broker becomes a
// follower (or its leader or leader epoch changes), removePartitions before it becomes leader or
// deletes the partition.
import type { Logger } from '../common/logger';
import { partitionKey } from '../storage';
import {
  ReplicaFetcher, type ConnectToLeader, type FollowerPartition, type ReplicaFetcherConfig,
} from './replica-fetcher';
import type { ReplicaQuota } from './replication-quota';
import type { TopicMetrics } from '../metrics/topic-metrics';

export interface ReplicaFetcherManagerOptions {
  readonly brokerId: number;
  /** This broker's epoch (Fetch v15+ ReplicaState, KIP-903); -1 when not known. */
  readonly brokerEpoch?: bigint;
  readonly connect: ConnectToLeader;
  /** The replica.fetch.* settings and num.replica.fetchers (Kafka: 1). */
  readonly config: ReplicaFetcherConfig & { readonly numReplicaFetchers: number };
  readonly logger: Logger;
  /** A follower's high watermark moved (up with the leader's, down on truncation). */
  readonly onHighWatermark: (topic: string, partition: number, highWatermark: number) => void;
  /** The follower replication quota, shared by every fetcher (replication-quota.ts); none: nothing is throttled. */
  readonly quota?: ReplicaQuota;
  /** Where the records appended are counted (ReplicationBytesInPerSec); none: not counted. */
  readonly topicMetrics?: TopicMetrics;
}

/** Java's String.hashCode, which Kafka's getFetcherId hashes the topic name with. */
function javaStringHash(s: string): number {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (Math.imul(31, h) + s.charCodeAt(i)) | 0;
  return h;
}

/** Kafka's AbstractFetcherManager.getFetcherId: Utils.abs(31 * topic.hashCode + partition) % numFetchers. */
export function fetcherIdOf(topic: string, partition: number, numFetchers: number): number {
  const h = (Math.imul(31, javaStringHash(topic)) + partition) | 0;
  return (h === -0x80000000 ? 0 : Math.abs(h)) % numFetchers;
}

export class ReplicaFetcherManager {
  /** By `leaderId-fetcherId` (Kafka's BrokerIdAndFetcherId). */
  private readonly fetchers = new Map<string, ReplicaFetcher>();
  /** Each followed partition's fetcher, by partition key. */
  private readonly fetcherOf = new Map<string, ReplicaFetcher>();
  /** Fetchers being closed, for close(). */
  private readonly closing = new Set<Promise<void>>();

  constructor(private readonly opts: ReplicaFetcherManagerOptions) {}

  /**
   * Follows these partitions from `leaderId`. A partition fetched from another leader leaves that
   * fetcher first, and the new one waits for its write in flight; one already fetched from this
   * leader keeps its state at the same leader epoch, and starts over (truncation) at a new one.
   */
  addPartitions(leaderId: number, partitions: readonly FollowerPartition[]): void {
    const byFetcher = new Map<ReplicaFetcher, FollowerPartition[]>();
    const previousWrites = new Map<string, Promise<unknown>>();
    for (const p of partitions) {
      const key = partitionKey(p.topic, p.partition);
      const fetcher = this.fetcherFor(leaderId, p.topic, p.partition);
      const previous = this.fetcherOf.get(key);
      if (previous && previous !== fetcher) previousWrites.set(key, previous.removePartitions([p]));
      this.fetcherOf.set(key, fetcher);
      byFetcher.set(fetcher, [...(byFetcher.get(fetcher) ?? []), p]);
    }
    for (const [fetcher, group] of byFetcher) fetcher.addPartitions(group, previousWrites);
    this.closeIdleFetchers();
  }

  /** Stops following these partitions; resolves once no append or truncation of theirs is in flight. */
  async removePartitions(partitions: ReadonlyArray<{ topic: string; partition: number }>): Promise<void> {
    const removals: Array<Promise<void>> = [];
    for (const p of partitions) {
      const key = partitionKey(p.topic, p.partition);
      const fetcher = this.fetcherOf.get(key);
      if (!fetcher) continue;
      this.fetcherOf.delete(key);
      removals.push(fetcher.removePartitions([p]));
    }
    this.closeIdleFetchers();
    await Promise.all(removals);
  }

  /** The follower's high watermark of a partition this broker follows; undefined if it follows none. */
  followerHighWatermark(topic: string, partition: number): number | undefined {
    return this.fetcherOf.get(partitionKey(topic, partition))?.highWatermark(topic, partition);
  }

  /** Whether a followed partition is parked (fenced, or failed in storage) until it is added again. */
  isParked(topic: string, partition: number): boolean {
    return this.fetcherOf.get(partitionKey(topic, partition))?.isParked(topic, partition) ?? false;
  }

  /** Stops every fetcher; resolves once their loops have ended. */
  async close(): Promise<void> {
    for (const fetcher of this.fetchers.values()) this.closeFetcher(fetcher);
    this.fetchers.clear();
    this.fetcherOf.clear();
    await Promise.all(this.closing);
  }

  private fetcherFor(leaderId: number, topic: string, partition: number): ReplicaFetcher {
    const id = `${leaderId}-${fetcherIdOf(topic, partition, this.opts.config.numReplicaFetchers)}`;
    let fetcher = this.fetchers.get(id);
    if (!fetcher) {
      const { brokerId, brokerEpoch = -1n, connect, config, logger, onHighWatermark, quota, topicMetrics } = this.opts;
      fetcher = new ReplicaFetcher(leaderId, { brokerId, brokerEpoch, connect, config, logger, onHighWatermark, quota, topicMetrics });
      this.fetchers.set(id, fetcher);
    }
    return fetcher;
  }

  /** Kafka's shutdownIdleFetcherThreads. */
  private closeIdleFetchers(): void {
    for (const [id, fetcher] of this.fetchers) {
      if (fetcher.partitionCount > 0) continue;
      this.fetchers.delete(id);
      this.closeFetcher(fetcher);
    }
  }

  private closeFetcher(fetcher: ReplicaFetcher): void {
    const closed = fetcher.close();
    this.closing.add(closed);
    void closed.finally(() => this.closing.delete(closed));
  }
}
