/**
 * The active controller's work in cluster mode (Kafka's KRaft ReplicationControlManager as it reacts
 * to brokers and topics; before KRaft, KafkaController's event handling over ZooKeeper). It runs on
 * every broker and acts only while EtcdCluster.isController holds: on winning, and on each change of
 * the metadata cache, it computes from the cache what the partitions' states must become and writes
 * that with writeAsController (fenced by its epoch):
 *
 * - a partition without a state (a new topic or partition): leader = its first live replica, ISR =
 *   its live replicas in assignment order, leader epoch 0. When none of its replicas is live, the
 *   leader is -1 and the ISR the whole assignment (an empty log: any replica is in sync), so the
 *   first one back leads cleanly. (KRaft refuses to create such a topic; placement here only uses
 *   live brokers, so it arises from a manual assignment racing a broker's death.)
 * - a leader or ISR member not registered (its session gone): Kafka's handleBrokerFenced for it
 *   (partition-change.ts brokerFenced): out of the ISR unless last, a new leader from the ISR;
 * - a partition without a leader with a live replica: handleBrokerUnfenced (brokerUnfenced);
 * - unclean.leader.election.enable from the topic's override, else the broker's config;
 * - a reassignment (partition-reassignment.ts) whose adding replicas are all in the ISR: completed,
 *   the topic's new replica sets and the partitions' new states in one transaction;
 * - ISR members and a leader outside the partition's replicas (a cancelled reassignment cut them):
 *   dropped, a new leader elected from the rest of the ISR.
 *
 * The rules are functions of the cache alone, so running a round twice (a new controller redoing
 * its predecessor's last one) changes nothing the second time. A round is one transaction (split
 * only past etcd's per-transaction op limit), each topic's part conditioned on the topic's key as
 * read; a stale answer (a leader's ISR change or a topic change got in first) is followed by a new
 * round once the cache shows what won.
 */
import type { Logger } from '../../common/logger';
import type { BrokerConfig } from '../../config/broker-config';
import { NO_LEADER, brokerFenced, brokerUnfenced, type PartitionState } from '../partition-change';
import { NotControllerError, type ControllerOp, type EtcdCluster } from './etcd-cluster';
import { LeaderBalancer } from './leader-balancer';
import type { MetadataCache } from './metadata-cache';
import type { TopicAssignment } from './layout';
import { completeReassignment, fitToReplicas, reassignmentInProgress } from '../partition-reassignment';

/** Below etcd's default --max-txn-ops (128), counting the two compares that fence the controller. */
const MAX_OPS_PER_TXN = 120;
/** Retry delay after a failed write (etcd unreachable, ...). */
const RETRY_MS = 500;

/** One transaction of a round: its ops and, for the log, the partition changes they make. */
export interface RoundBatch {
  ops: ControllerOp[];
  elections: Election[];
}

/** One partition's change in a round, for the log. */
interface Election {
  topic: string;
  partition: number;
  from: { leader: number; isr: readonly number[] } | null;
  to: Omit<PartitionState, 'replicas' | 'partitionEpoch'>;
  /** The replicas a completed reassignment left. */
  reassignedTo?: readonly number[];
}

export class ClusterController {
  private started = false;
  /** The rounds in progress; a change seen meanwhile sets `again` rather than start a second. */
  private running: Promise<void> | null = null;
  private again = false;
  private retryTimer: NodeJS.Timeout | null = null;
  /** Auto leader rebalance, started and stopped with this. */
  private readonly leaderBalancer: LeaderBalancer;

  constructor(
    private readonly cluster: EtcdCluster,
    private readonly config: BrokerConfig,
    private readonly logger?: Logger,
  ) {
    this.leaderBalancer = new LeaderBalancer(cluster, config, logger);
  }

  /** Starts following the cache; this broker acts whenever it is the controller. */
  start(): void {
    if (this.started) return;
    this.started = true;
    this.cluster.cache.on('change', this.poke);
    this.cluster.on('controllerChange', this.poke);
    this.config.on('change', this.configChanged);
    this.leaderBalancer.start();
    this.poke();
  }

  /** A dynamic unclean.leader.election.enable may make leaderless partitions electable: a round looks. */
  private readonly configChanged = (names: string[]): void => {
    if (names.includes('unclean.leader.election.enable')) this.poke();
  };

  /** Stops acting; resolves once a round in progress has finished. */
  async stop(): Promise<void> {
    this.started = false;
    this.cluster.cache.off('change', this.poke);
    this.cluster.off('controllerChange', this.poke);
    this.config.off('change', this.configChanged);
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    await Promise.all([this.running, this.leaderBalancer.stop()]);
  }

  private readonly poke = (): void => {
    if (!this.started || !this.cluster.isController) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.rounds().finally(() => {
      this.running = null;
    });
  };

  private async rounds(): Promise<void> {
    do {
      this.again = false;
      await this.round();
    } while (this.again && this.started && this.cluster.isController);
  }

  private async round(): Promise<void> {
    const batches = planRound(this.cluster.cache, (configs) => this.uncleanElectionEnabled(configs));
    try {
      for (const { ops, elections } of batches) {
        // Stale: the cache is behind etcd, and its 'change' brings the next round.
        if ((await this.cluster.writeAsController(ops)) === false) return;
        for (const e of elections) this.logElection(e);
      }
    } catch (err) {
      if (err instanceof NotControllerError) {
        this.logger?.info({ brokerId: this.cluster.nodeId }, 'no longer the controller: stopping its work');
        return;
      }
      this.logger?.warn({ err }, 'controller write failed; retrying');
      this.retryTimer ??= setTimeout(() => {
        this.retryTimer = null;
        this.poke();
      }, RETRY_MS);
    }
  }

  private uncleanElectionEnabled(topicConfigs: Readonly<Record<string, string>>): boolean {
    const override = topicConfigs['unclean.leader.election.enable'];
    return override !== undefined ? override.trim().toLowerCase() === 'true' : this.config.getBool('unclean.leader.election.enable');
  }

  private logElection({ topic, partition, from, to, reassignedTo }: Election): void {
    const fields = { topic, partition, oldLeader: from?.leader ?? null, newLeader: to.leader, leaderEpoch: to.leaderEpoch, isr: to.isr };
    if (reassignedTo) this.logger?.info({ ...fields, replicas: reassignedTo }, 'partition reassignment completed');
    else if (from === null) this.logger?.info(fields, 'partition state created');
    else if (to.leader !== NO_LEADER && !from.isr.includes(to.leader)) this.logger?.warn(fields, 'unclean leader election: records only the old ISR had are lost');
    else if (to.leader !== from.leader) this.logger?.info(fields, 'partition leader elected');
    else this.logger?.info(fields, 'partition ISR changed');
  }
}

/**
 * The writes one round makes, from the cache alone: per topic a `topicUnchanged` condition and its
 * partitions' new states, packed into transactions of at most MAX_OPS_PER_TXN ops.
 */
export function planRound(cache: MetadataCache, uncleanElection: (topicConfigs: Readonly<Record<string, string>>) => boolean): RoundBatch[] {
  const live = new Set(cache.brokers().map((b) => b.brokerId));
  const isAlive = (id: number): boolean => live.has(id);
  const batches: RoundBatch[] = [];
  let batch: RoundBatch = { ops: [], elections: [] };
  for (const topic of cache.topics()) {
    const unclean = uncleanElection(topic.configs);
    const changes: { op: ControllerOp; election: Election }[] = [];
    const completed = new Map<number, PartitionState>();
    topic.replicas.forEach((replicas, partition) => {
      const stored = cache.partitionState(topic.name, partition);
      const reassignment = topic.reassignments?.[partition];
      const done = stored && reassignmentInProgress(reassignment) && completed.size < MAX_OPS_PER_TXN - 2
        ? completeReassignment({ ...stored, replicas }, reassignment, isAlive) : null;
      if (done) completed.set(partition, done);
      const next = done ?? (stored ? nextState({ ...stored, replicas }, isAlive, unclean) : initialState(replicas, isAlive));
      if (!next) return;
      const state = { leader: next.leader, leaderEpoch: next.leaderEpoch, isr: [...next.isr] };
      changes.push({
        op: { type: 'putPartitionState', topicId: topic.id, partition, expectedPartitionEpoch: stored?.partitionEpoch ?? -1, state },
        election: { topic: topic.name, partition, from: stored ? { leader: stored.leader, isr: stored.isr } : null, to: state,
          ...(done ? { reassignedTo: done.replicas } : {}) },
      });
    });
    const modRevision = cache.topicModRevision(topic.name)!;
    if (completed.size > 0) {
      // The new replica sets and their states in one transaction; what does not fit waits for the
      // next round, which the write's own cache change starts.
      if (batch.ops.length > 0) batches.push(batch);
      const part = [...changes.filter((c) => c.election.reassignedTo), ...changes.filter((c) => !c.election.reassignedTo)].slice(0, MAX_OPS_PER_TXN - 2);
      batches.push({
        ops: [{ type: 'topicUnchanged', name: topic.name, modRevision }, { type: 'putTopic', topic: withCompletedReassignments(topic, completed) },
          ...part.map((c) => c.op)],
        elections: part.map((c) => c.election),
      });
      batch = { ops: [], elections: [] };
      continue;
    }
    // Each transaction carrying some of the topic's partitions carries the topic's condition too.
    for (let i = 0; i < changes.length; i += MAX_OPS_PER_TXN - 1) {
      const part = changes.slice(i, i + MAX_OPS_PER_TXN - 1);
      if (batch.ops.length + part.length + 1 > MAX_OPS_PER_TXN) {
        batches.push(batch);
        batch = { ops: [], elections: [] };
      }
      batch.ops.push({ type: 'topicUnchanged', name: topic.name, modRevision }, ...part.map((c) => c.op));
      batch.elections.push(...part.map((c) => c.election));
    }
  }
  if (batch.ops.length > 0) batches.push(batch);
  return batches;
}

/** The topic with these partitions' reassignments complete: their new replica sets, their entries gone. */
function withCompletedReassignments(topic: TopicAssignment, completed: ReadonlyMap<number, PartitionState>): TopicAssignment {
  const replicas = topic.replicas.map((r, partition) => [...(completed.get(partition)?.replicas ?? r)]);
  const reassignments = Object.fromEntries(Object.entries(topic.reassignments ?? {}).filter(([partition]) => !completed.has(Number(partition))));
  const { reassignments: _, ...rest } = topic;
  return Object.keys(reassignments).length > 0 ? { ...rest, replicas, reassignments } : { ...rest, replicas };
}

/** A new partition's state: led by its first live replica, its live replicas in sync (see the header). */
function initialState(replicas: readonly number[], isAlive: (id: number) => boolean): Omit<PartitionState, 'partitionEpoch'> {
  const liveReplicas = replicas.filter(isAlive);
  if (liveReplicas.length === 0) return { replicas, leader: NO_LEADER, leaderEpoch: 0, isr: [...replicas] };
  return { replicas, leader: liveReplicas[0], leaderEpoch: 0, isr: liveReplicas };
}

/**
 * The state after fencing every dead leader or ISR member, one at a time as Kafka handles them,
 * then, for a partition left without a leader, unfencing its live replicas until one leads. Null
 * when nothing changes.
 */
function nextState(state: PartitionState, isAlive: (id: number) => boolean, unclean: boolean): PartitionState | null {
  // A cancelled reassignment cut the replica set: who left it leaves the ISR and leadership first.
  let current = fitToReplicas(state, isAlive, unclean) ?? state;
  for (const id of new Set([current.leader, ...current.isr])) {
    if (id !== NO_LEADER && !isAlive(id)) current = brokerFenced(current, id, isAlive, unclean) ?? current;
  }
  if (current.leader === NO_LEADER) {
    for (const id of state.replicas.filter(isAlive)) {
      const led = brokerUnfenced(current, id, isAlive, unclean);
      if (led) {
        current = led;
        break;
      }
    }
  }
  return current === state ? null : current;
}
