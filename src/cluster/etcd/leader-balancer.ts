/**
 * Auto leader rebalance on the active controller (Kafka 4.4's QuorumController
 * maybeScheduleNextBalancePartitionLeaders and ReplicationControlManager.maybeBalancePartitionLeaders):
 * every `leader.imbalance.check.interval.seconds`, while `auto.leader.rebalance.enable` holds, a
 * preferred leader election for each partition not led by its first replica, which moves
 * leadership back when that replica is alive and in the ISR (partition-change.ts
 * preferredLeaderElection). A partition whose preferred replica cannot lead yet is left for a
 * later pass.
 *
 * Kafka 4.4 has no per-broker threshold: `leader.imbalance.per.broker.percentage` belonged to the
 * ZooKeeper-era KafkaController (checkAndTriggerAutoLeaderRebalance rebalanced a broker's
 * partitions only once more than that share of them were led elsewhere) and is gone from 4.4, so a
 * single imbalanced partition is enough. As in Kafka, one pass makes at most
 * MAX_ELECTIONS_PER_PASS elections; a pass that stopped there is followed by the next at once.
 *
 * The configs are read when used (they may change at runtime). Each election is its own fenced
 * controller write, conditioned on the partition's epoch and its topic's key as computed from: a
 * stale one is skipped, the next pass sees what won.
 */
import type { Logger } from '../../common/logger';
import type { BrokerConfig } from '../../config/broker-config';
import { preferredLeaderElection } from '../partition-change';
import { NotControllerError, type ControllerOp, type EtcdCluster } from './etcd-cluster';
import type { MetadataCache } from './metadata-cache';

/** Kafka's QuorumController.MAX_ELECTIONS_PER_IMBALANCE. */
export const MAX_ELECTIONS_PER_PASS = 1000;
/** Kafka's delay before a pass that follows one cut short. */
const IMMEDIATE_PASS_MS = 10;

/** One preferred leader election a pass writes. */
export interface PlannedElection {
  topic: string;
  partition: number;
  oldLeader: number;
  newLeader: number;
  leaderEpoch: number;
  ops: ControllerOp[];
}

export class LeaderBalancer {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private started = false;

  constructor(
    private readonly cluster: EtcdCluster,
    private readonly config: BrokerConfig,
    private readonly logger?: Logger,
  ) {}

  start(): void {
    if (this.started) return;
    this.started = true;
    this.schedule(this.intervalMs());
  }

  /** Stops the checks; resolves once a pass in progress has finished. */
  async stop(): Promise<void> {
    this.started = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }

  private intervalMs(): number {
    return this.config.getLong('leader.imbalance.check.interval.seconds') * 1000;
  }

  private schedule(delayMs: number): void {
    if (!this.started) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.running = this.pass().then((cutShort) => {
        this.running = null;
        this.schedule(cutShort ? IMMEDIATE_PASS_MS : this.intervalMs());
      });
    }, delayMs);
    this.timer.unref();
  }

  /** One pass; true when it stopped at MAX_ELECTIONS_PER_PASS. */
  private async pass(): Promise<boolean> {
    if (!this.cluster.isController || !this.config.getBool('auto.leader.rebalance.enable')) return false;
    try {
      const elections = planPreferredElections(this.cluster.cache);
      for (const e of elections.slice(0, MAX_ELECTIONS_PER_PASS)) {
        if (!this.started) return false;
        if ((await this.cluster.writeAsController(e.ops)) === false) continue;
        this.logger?.info({ topic: e.topic, partition: e.partition, oldLeader: e.oldLeader, newLeader: e.newLeader, leaderEpoch: e.leaderEpoch },
          'preferred leader elected (auto leader rebalance)');
      }
      return elections.length > MAX_ELECTIONS_PER_PASS;
    } catch (err) {
      if (!(err instanceof NotControllerError)) this.logger?.warn({ err }, 'auto leader rebalance failed; the next check retries');
      return false;
    }
  }
}

/**
 * The preferred leader elections the cache calls for (Kafka's imbalancedPartitions, each one's
 * election when it changes something), each a topicUnchanged condition and a partition state.
 */
export function planPreferredElections(cache: Pick<MetadataCache, 'brokers' | 'topics' | 'topicModRevision' | 'partitionState'>): PlannedElection[] {
  const live = new Set(cache.brokers().map((b) => b.brokerId));
  const isAlive = (id: number): boolean => live.has(id);
  const elections: PlannedElection[] = [];
  for (const topic of cache.topics()) {
    const modRevision = cache.topicModRevision(topic.name)!;
    topic.replicas.forEach((replicas, partition) => {
      const stored = cache.partitionState(topic.name, partition);
      if (!stored || stored.leader === replicas[0]) return;
      const next = preferredLeaderElection({ ...stored, replicas }, isAlive);
      // Only a move to the preferred replica: a leaderless partition is the active controller's.
      if (!next || next.leader !== replicas[0]) return;
      const state = { leader: next.leader, leaderEpoch: next.leaderEpoch, isr: [...next.isr] };
      elections.push({
        topic: topic.name, partition, oldLeader: stored.leader, newLeader: next.leader, leaderEpoch: next.leaderEpoch,
        ops: [
          { type: 'topicUnchanged', name: topic.name, modRevision },
          { type: 'putPartitionState', topicId: topic.id, partition, expectedPartitionEpoch: stored.partitionEpoch, state },
        ],
      });
    });
  }
  return elections;
}
