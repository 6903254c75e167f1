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
import { WindowedRate } from '../common/windowed-rate';

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
  /** Kafka's SimpleRate over the windows (common/windowed-rate.ts). */
  private readonly rate: WindowedRate;
  private readonly now: () => number;

  constructor(private readonly opts: ReplicationQuotaOptions) {
    this.now = opts.now ?? Date.now;
    this.rate = new WindowedRate({ samples: opts.windows, windowMs: opts.windowMs, span: 'simple' });
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
    this.rate.record(bytes, this.now());
  }

  /** The rate in bytes per second over the live windows (Kafka's SimpleRate). */
  measuredRate(): number {
    return this.rate.measure(this.now());
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
