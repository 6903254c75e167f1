// Replication throttling (Kafka's ReplicationQuotaManager, KIP-73): one quota for what this broker
// sends its followers as a leader and one for what it fetches as a follower. Each is a byte rate
// measured over `replication.quota.window.num` windows of `replication.quota.window.size.seconds`
// (Kafka's SimpleRate over a SampledStat: the sum of the live windows over the time since the oldest
// began, at least one window), against a bound read at every check (`leader.replication.throttled.rate`,
// `follower.replication.throttled.rate`: dynamic broker configs; Long.MAX_VALUE, the default, never binds).
//
// Only the replicas a topic names are throttled: its `leader.replication.throttled.replicas` /
// `follower.replication.throttled.replicas`, a list of `partition:brokerId` of which a broker keeps the
// partitions listed with its own id, or `*` for every partition (Kafka's parseThrottledPartitions).
// The replica manager sets them from the topic configs (markThrottled / removeThrottle). Who skips
// what while a quota is exceeded (replicas out of the ISR only) is the leader's reads and the
// follower's fetcher's business; bytes of throttled partitions are recorded whether or not they were held back.
import type { BrokerConfig } from '../config/broker-config';

/** The partitions of a topic throttled on this broker: all of them, or these. */
export type ThrottledPartitions = '*' | readonly number[];

/** What the leader's reads and a follower's fetcher ask of a quota (Kafka's ReplicaQuota). */
export interface ReplicaQuota {
  isThrottled(topic: string, partition: number): boolean;
  isQuotaExceeded(): boolean;
  /** Bytes sent (leader) or received (follower) for throttled partitions, counted even over the bound. */
  record(bytes: number): void;
}

export interface ReplicationQuotaOptions {
  /** The bound in bytes per second, read at every check (the config may change at any time). */
  rate: () => number;
  /** replication.quota.window.num */
  windows: number;
  /** replication.quota.window.size.seconds, in milliseconds. */
  windowMs: number;
  /** The clock (Date.now; a fake one in tests). */
  now?: () => number;
}

/** One window of the measure (Kafka's SampledStat.Sample). */
interface Sample {
  startMs: number;
  lastEventMs: number;
  bytes: number;
}

/**
 * A topic's throttled partitions on `brokerId` from the raw value of one of the two topic configs;
 * undefined when the config is unset or empty (no throttle). The value was validated when set.
 */
export function throttledPartitionsOf(value: string | undefined, brokerId: number): ThrottledPartitions | undefined {
  const trimmed = value?.trim() ?? '';
  if (trimmed === '') return undefined;
  if (trimmed === '*') return '*';
  const partitions: number[] = [];
  for (const entry of trimmed.split(',')) {
    const [partition, broker] = entry.trim().split(':');
    if (broker !== undefined && Number(broker) === brokerId) partitions.push(Number(partition));
  }
  return partitions;
}

export class ReplicationQuota implements ReplicaQuota {
  private readonly throttled = new Map<string, ThrottledPartitions>();
  /** A ring of windows plus one (Kafka keeps an extra so the oldest live one is never recycled early). */
  private readonly samples: Sample[] = [];
  private current = 0;
  private readonly now: () => number;

  constructor(private readonly opts: ReplicationQuotaOptions) {
    this.now = opts.now ?? Date.now;
  }

  markThrottled(topic: string, partitions: ThrottledPartitions): void {
    this.throttled.set(topic, partitions);
  }

  removeThrottle(topic: string): void {
    this.throttled.delete(topic);
  }

  isThrottled(topic: string, partition: number): boolean {
    const partitions = this.throttled.get(topic);
    return partitions !== undefined && (partitions === '*' || partitions.includes(partition));
  }

  /** The bound in bytes per second now. */
  get bound(): number {
    return this.opts.rate();
  }

  isQuotaExceeded(): boolean {
    return this.measuredRate() > this.bound;
  }

  record(bytes: number): void {
    const now = this.now();
    let sample = this.currentSample(now);
    if (now - sample.startMs >= this.opts.windowMs) sample = this.advance(now);
    sample.bytes += bytes;
    sample.lastEventMs = now;
  }

  /** The rate in bytes per second over the live windows (Kafka's SimpleRate). */
  measuredRate(): number {
    const now = this.now();
    this.purgeObsolete(now);
    let total = 0;
    let oldestStart = this.currentSample(now).startMs;
    for (const s of this.samples) {
      total += s.bytes;
      oldestStart = Math.min(oldestStart, s.startMs);
    }
    const elapsedMs = Math.max(now - oldestStart, this.opts.windowMs);
    return total / (elapsedMs / 1000);
  }

  private currentSample(now: number): Sample {
    if (this.samples.length === 0) this.samples.push({ startMs: now, lastEventMs: now, bytes: 0 });
    return this.samples[this.current];
  }

  private advance(now: number): Sample {
    this.current = (this.current + 1) % (this.opts.windows + 1);
    const fresh = { startMs: now, lastEventMs: now, bytes: 0 };
    if (this.current >= this.samples.length) this.samples.push(fresh);
    else this.samples[this.current] = fresh;
    return fresh;
  }

  /** Windows without an event for the whole measured span start over from now. */
  private purgeObsolete(now: number): void {
    const expireAgeMs = this.opts.windows * this.opts.windowMs;
    for (const [i, s] of this.samples.entries()) {
      if (now - s.lastEventMs >= expireAgeMs) this.samples[i] = { startMs: now, lastEventMs: now, bytes: 0 };
    }
  }
}

/** The two quotas of a broker (Kafka's QuotaFactory leader and follower replication quotas). */
export interface ReplicationQuotas {
  readonly leader: ReplicationQuota;
  readonly follower: ReplicationQuota;
}

/**
 * The broker's quotas from its config: the windows are fixed at start-up (as Kafka's), the rates are
 * read from the config at every check, so a dynamic change applies at once.
 */
export function replicationQuotasOf(config: Pick<BrokerConfig, 'getInt' | 'getLong'>): ReplicationQuotas {
  const windows = config.getInt('replication.quota.window.num');
  const windowMs = 1000 * config.getInt('replication.quota.window.size.seconds');
  return {
    leader: new ReplicationQuota({ rate: () => config.getLong('leader.replication.throttled.rate'), windows, windowMs }),
    follower: new ReplicationQuota({ rate: () => config.getLong('follower.replication.throttled.rate'), windows, windowMs }),
  };
}
