// A broker's part in a cluster, as the metadata in etcd drives it (Kafka's ReplicaManager.applyDelta,
// and before KRaft the LeaderAndIsr / StopReplica requests the controller sent): after every change
// of the metadata cache it brings this broker's replicas in line with the partition states there.
//
// - A partition assigned here whose state names this broker leader: the replica manager makes it
//   the leader (at that epoch; a newer ISR or replica set of the same epoch is passed on); one whose
//   leader is another broker (or none): a follower. A partition this broker held and no longer does
//   (a reassignment moved it) is stopped and its log deleted, as Kafka's StopReplica with delete;
//   partitions never assigned here are left alone.
// - The coordinators follow the leadership of their topics' partitions (__consumer_offsets for
//   groups, __transaction_state for transactions, __share_group_state for share-partitions' state):
//   elected where this broker leads, resigned where it stops leading (Kafka's GroupCoordinator/
//   TransactionCoordinator/ShareCoordinator onElection/onResignation).
// - A topic deleted, or deleted and created again under its name (a new topic id), has its local
//   logs deleted; config changes reach the logs.
//
// Changes are applied one round at a time; a change seen during a round starts another after it,
// from the cache as it is then, so rounds never interleave and the last one sees the last state.
import type { Logger } from 'pino';
import { ErrorCode } from './common/errors';
import type { BrokerConfig } from './config/broker-config';
import { Controller } from './cluster/controller';
import { ClusterController } from './cluster/etcd/cluster-controller';
import { EtcdCluster } from './cluster/etcd/etcd-cluster';
import { EtcdMetadata } from './cluster/etcd/etcd-metadata';
import type { MetadataCache } from './cluster/etcd/metadata-cache';
import { generateClusterId, type TopicRecord } from './cluster/metadata-store';
import { SUPPORTED_FEATURES } from './cluster/features';
import { GROUP_METADATA_TOPIC_NAME, SHARE_GROUP_STATE_TOPIC_NAME, TRANSACTION_STATE_TOPIC_NAME } from './cluster/topic-names';
import type { AlterPartitionResult } from './replica/partition-replicas';
import { ReplicaFetcherManager } from './replica/replica-fetcher-manager';
import { ReplicaManager } from './replica/replica-manager';
import type { BrokerMetrics } from './metrics/broker-metrics';
import { replicationQuotasOf } from './replica/replication-quota';
import { PRODUCER_ID_BLOCK_SIZE, ProducerIdManager } from './txn/producer-ids';
import { connectToLeaderOver } from './net/leader-connection';
import { RemoteTxnMarkerChannel } from './net/txn-marker-channel';
import { RemoteAddPartitionsToTxn } from './net/txn-partition-adds';
import { RemoteDeadLetterProduce } from './net/dead-letter-producer';
import { RemoteShareStateChannel } from './net/share-state-rpc';
import { freePort } from './local-etcd';
import { interBrokerSaslClient } from './security/sasl-config';
import { LeaderEndOffsets } from './net/leader-end-offsets';
import { localEndOffsets } from './share/share-group-admin';
import { clientTls } from './security/tls';

/** A coordinator that follows the leadership of its internal topic's partitions. */
export interface PartitionCoordinator {
  onElection(partition: number, leaderEpoch: number): void;
  onResignation(partition: number, leaderEpoch: number): void;
}

export interface ClusterMemberOptions {
  nodeId: number;
  cache: MetadataCache;
  /** The topics as records (the Controller's view of the cache). */
  topics: { topic(name: string): TopicRecord | undefined; topics(): TopicRecord[] };
  replicas: Pick<ReplicaManager, 'makeLeader' | 'makeFollower' | 'replicaRemoved' | 'topicDeleted' | 'configsChanged' | 'partitionsCreated'>;
  groups: PartitionCoordinator;
  transactions: PartitionCoordinator;
  shareCoordinator: PartitionCoordinator;
  logger: Logger;
}

export class ClusterMember {
  /** Per topic name, the record last applied (its id tells a re-created topic from the old one). */
  private readonly appliedTopics = new Map<string, TopicRecord>();
  /** Per partition of this broker, the state last applied ("leader/leaderEpoch/partitionEpoch"). */
  private readonly appliedStates = new Map<string, string>();
  private running: Promise<void> | null = null;
  private again = false;
  private stopped = false;

  constructor(private readonly options: ClusterMemberOptions) {}

  /** Applies the metadata now and after every change of the cache. */
  start(): Promise<void> {
    this.options.cache.on('change', this.poke);
    this.poke();
    return this.settled();
  }

  /** Stops following the cache; resolves once a round in progress has finished. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.options.cache.off('change', this.poke);
    await this.settled();
  }

  /** Resolves once no round is in progress (every change seen so far applied). */
  async settled(): Promise<void> {
    while (this.running) await this.running;
  }

  private readonly poke = (): void => {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = (async () => {
      do {
        this.again = false;
        try {
          await this.round();
        } catch (err) {
          this.options.logger.error({ err }, 'could not apply the cluster metadata');
        }
      } while (this.again && !this.stopped);
      this.running = null;
    })();
  };

  private async round(): Promise<void> {
    const { nodeId, cache, replicas } = this.options;
    const current = new Map(this.options.topics.topics().map((t) => [t.name, t]));
    for (const [name, applied] of this.appliedTopics) {
      const now = current.get(name);
      if (now?.id === applied.id) continue;
      await this.removeTopic(applied);
    }
    for (const topic of current.values()) {
      const applied = this.appliedTopics.get(topic.name);
      if (applied) await this.removeMovedReplicas(topic);
      if (!topic.partitions.some((p) => p.replicas.includes(nodeId))) {
        if (applied && !topic.partitions.some((p) => this.appliedStates.has(`${topic.name}-${p.index}`))) this.appliedTopics.delete(topic.name);
        continue;
      }
      this.appliedTopics.set(topic.name, topic);
      if (applied && !sameConfigs(applied.configs, topic.configs)) replicas.configsChanged(topic);
      for (const p of topic.partitions) {
        if (!p.replicas.includes(nodeId)) continue;
        const state = cache.partitionState(topic.name, p.index);
        if (!state) continue; // the controller has not given it a state yet
        const key = `${topic.name}-${p.index}`;
        // The replicas too: a reassignment changes them within a leader epoch, and the leader tracks its followers.
        const applies = `${state.leader}/${state.leaderEpoch}/${state.partitionEpoch}/${p.replicas.join(',')}`;
        if (this.appliedStates.get(key) === applies) continue;
        const assignment = { ...state, replicas: p.replicas };
        this.options.logger.debug({ topic: topic.name, partition: p.index, ...state }, state.leader === nodeId ? 'becoming leader' : 'becoming follower');
        if (state.leader === nodeId) {
          await replicas.makeLeader(topic, p.index, assignment);
          this.coordinatorOf(topic.name)?.onElection(p.index, state.leaderEpoch);
        } else {
          // Resigned first: the coordinator's writes must stop before the log may be truncated.
          this.coordinatorOf(topic.name)?.onResignation(p.index, state.leaderEpoch);
          await replicas.makeFollower(topic, p.index, assignment);
        }
        this.appliedStates.set(key, applies);
        this.options.logger.debug({ topic: topic.name, partition: p.index }, 'role applied');
      }
    }
  }

  /**
   * The partitions of `topic` this broker held and no longer does (a reassignment moved them, or
   * a cancel dropped an adding replica): the coordinator resigns, the replica stops and its log is
   * deleted. One the state still names this broker leader of stays until the controller has moved
   * the leadership (it writes both at once on completion; a cancel's state follows its topic write).
   */
  private async removeMovedReplicas(topic: TopicRecord): Promise<void> {
    const { nodeId, cache, replicas } = this.options;
    for (const p of topic.partitions) {
      const key = `${topic.name}-${p.index}`;
      if (p.replicas.includes(nodeId) || !this.appliedStates.has(key)) continue;
      const state = cache.partitionState(topic.name, p.index);
      if (state?.leader === nodeId) continue;
      this.appliedStates.delete(key);
      this.coordinatorOf(topic.name)?.onResignation(p.index, state?.leaderEpoch ?? p.leaderEpoch);
      this.options.logger.info({ topic: topic.name, partition: p.index }, 'replica moved away: stopping it and deleting its log');
      await replicas.replicaRemoved(topic.name, p.index);
    }
  }

  /** A topic gone (or replaced by a new one of its name): its coordinator resigns, its logs go. */
  private async removeTopic(topic: TopicRecord): Promise<void> {
    this.appliedTopics.delete(topic.name);
    for (const p of topic.partitions) {
      const key = `${topic.name}-${p.index}`;
      if (!this.appliedStates.delete(key)) continue;
      this.coordinatorOf(topic.name)?.onResignation(p.index, p.leaderEpoch);
    }
    await this.options.replicas.topicDeleted(topic);
  }

  private coordinatorOf(topic: string): PartitionCoordinator | undefined {
    if (topic === GROUP_METADATA_TOPIC_NAME) return this.options.groups;
    if (topic === TRANSACTION_STATE_TOPIC_NAME) return this.options.transactions;
    if (topic === SHARE_GROUP_STATE_TOPIC_NAME) return this.options.shareCoordinator;
    return undefined;
  }
}

function sameConfigs(a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => a[k] === b[k]);
}

/** The parts of a broker that joined a cluster, for startBroker to build the Broker from. */
export interface ClusterParts {
  etcd: EtcdCluster;
  clusterId: string;
  controller: Controller;
  replicas: ReplicaManager;
  producerIds: ProducerIdManager;
  remoteMarkers: RemoteTxnMarkerChannel;
  remotePartitionAdds: RemoteAddPartitionsToTxn;
  remoteDeadLetters: RemoteDeadLetterProduce;
  remoteShareState: RemoteShareStateChannel;
  /** Partitions' end offsets from their leaders (DescribeShareGroupOffsets' lag). */
  endOffsets: LeaderEndOffsets;
  /** The port each listener listens on, by name (a free one picked when 0 was asked: it is registered before listening). */
  ports: ReadonlyMap<string, number>;
  /** Stops the active controller's work; then the rest closes with the broker. */
  stopController(): Promise<void>;
}

/**
 * Joins the cluster in config.etcdConnect: registers this broker (every advertised listener) in etcd,
 * takes the cluster's id, and builds the controller, the replica manager with its fetchers, the
 * producer id blocks and the transaction markers' channel to other brokers on the etcd metadata.
 */
export async function joinCluster(config: BrokerConfig, log: Logger, metrics: BrokerMetrics): Promise<ClusterParts> {
  const nodeId = config.nodeId;
  // Every connection to another broker goes to its inter-broker listener, over TLS if that is SSL or SASL_SSL.
  const { securityProtocol } = config.interBrokerListener;
  const secure = securityProtocol === 'SSL' || securityProtocol === 'SASL_SSL';
  // On a SASL one, they authenticate as the username of its JAAS config (sasl.mechanism.inter.broker.protocol).
  const interBroker = { tls: secure ? clientTls(config, config.interBrokerListener.name) : undefined, sasl: interBrokerSaslClient(config) };
  // The registration names the ports before the listeners open: a free one is picked for port 0.
  const ports = new Map<string, number>();
  for (const l of config.listeners) ports.set(l.name, l.port === 0 ? await freePort(l.host) : l.port);
  const connect = config.etcdConnect!;
  const etcd = await EtcdCluster.start({
    connect, nodeId, logger: log,
    endpoints: config.advertisedListeners.map((ep) => ({ ...ep, port: ep.port === 0 ? ports.get(ep.name)! : ep.port })),
    rack: (config.get('broker.rack') as string | null), sessionTimeoutMs: config.getInt('broker.session.timeout.ms'),
    supportedFeatures: [...SUPPORTED_FEATURES],
  }).catch((err: Error) => {
    // A duplicate node id says so itself; anything else here is etcd out of reach.
    if (err.name === 'DuplicateBrokerError') throw err;
    throw new Error(`cannot join the cluster: etcd at ${connect.endpoints.join(',')}${connect.prefix} did not answer (${err.message})`);
  });
  try {
    const clusterId = await etcd.clusterId(generateClusterId());
    const metadata = new EtcdMetadata(etcd, { listenerName: config.interBrokerListener.name, logger: log.child({ component: 'controller' }) });
    const controller = new Controller(metadata, config);
    const clusterController = new ClusterController(etcd, config, log.child({ component: 'controller' }));
    const quotas = replicationQuotasOf(config);
    const fetchers = new ReplicaFetcherManager({
      brokerId: nodeId, quota: quotas.follower, topicMetrics: metrics.topics,
      connect: connectToLeaderOver((id) => metadata.brokers().find((b) => b.nodeId === id), {
        ...interBroker, clientId: `fjord-replica-fetcher-${nodeId}`, connectTimeoutMs: 10_000,
        requestTimeoutMs: Math.max(config.getInt('replica.socket.timeout.ms'), config.getInt('replica.fetch.wait.max.ms') + 1000),
      }),
      config: {
        fetchWaitMaxMs: config.getInt('replica.fetch.wait.max.ms'), fetchMinBytes: config.getInt('replica.fetch.min.bytes'),
        fetchMaxBytes: config.getInt('replica.fetch.max.bytes'), fetchResponseMaxBytes: config.getInt('replica.fetch.response.max.bytes'),
        fetchBackoffMs: config.getInt('replica.fetch.backoff.ms'), numReplicaFetchers: config.getInt('num.replica.fetchers'),
      },
      logger: log.child({ component: 'replica-fetcher' }),
      // Called only once fetching has begun, which the replica manager below starts.
      onHighWatermark: (topic, partition, hw) => replicas.followerHighWatermark(topic, partition, hw),
    });
    const replicas = await ReplicaManager.open(config, controller, log, {
      brokerId: nodeId, fetchers, quotas, replicaLagTimeMaxMs: config.getLong('replica.lag.time.max.ms'),
      isReplicaIsrEligible: (id) => etcd.cache.broker(id) !== undefined,
      alterPartition: (topic, partition, proposal) => alterPartition(etcd, controller, nodeId, topic, partition, proposal),
    }, clusterId, metrics);
    clusterController.start();
    return {
      etcd, clusterId, controller, replicas, ports,
      producerIds: new ProducerIdManager(() => etcd.reserveProducerIdBlock(PRODUCER_ID_BLOCK_SIZE)),
      remoteMarkers: new RemoteTxnMarkerChannel(controller,
        { ...interBroker, clientId: `fjord-txn-markers-${nodeId}`, connectTimeoutMs: 10_000, requestTimeoutMs: 30_000 }, log),
      remotePartitionAdds: new RemoteAddPartitionsToTxn(controller,
        { ...interBroker, clientId: `fjord-txn-partition-adds-${nodeId}`, connectTimeoutMs: 10_000, requestTimeoutMs: 30_000 }, log),
      // Kafka's DLQ produce waits up to 30 s for acks=all: the request's own timeout is past it.
      remoteDeadLetters: new RemoteDeadLetterProduce(controller,
        { ...interBroker, clientId: `fjord-share-dlq-${nodeId}`, connectTimeoutMs: 10_000, requestTimeoutMs: 35_000 }, log),
      remoteShareState: new RemoteShareStateChannel(controller,
        { ...interBroker, clientId: `fjord-share-state-${nodeId}`, connectTimeoutMs: 10_000, requestTimeoutMs: 30_000 }, log),
      endOffsets: new LeaderEndOffsets(nodeId, controller, localEndOffsets(replicas),
        { ...interBroker, clientId: `fjord-end-offsets-${nodeId}`, connectTimeoutMs: 10_000, requestTimeoutMs: 30_000 }, log),
      stopController: () => clusterController.stop(),
    };
  } catch (e) {
    await etcd.close();
    throw e;
  }
}

/**
 * Kafka's AlterPartition, as the leader sends it: the ISR written in etcd if the partition epoch is
 * still the one it saw. As Kafka's controller, it refuses a replica that is not a registered broker
 * (INELIGIBLE_REPLICA): one cut off from etcd may still fetch, but the controller counts it dead.
 */
async function alterPartition(etcd: EtcdCluster, controller: Controller, nodeId: number, topic: string, partition: number,
  proposal: { leaderEpoch: number; partitionEpoch: number; isr: number[] }): Promise<AlterPartitionResult> {
  const id = controller.topic(topic)?.id;
  if (id === undefined) return { errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION };
  if (proposal.isr.some((replica) => etcd.cache.broker(replica) === undefined)) return { errorCode: ErrorCode.INELIGIBLE_REPLICA };
  const result = await etcd.alterPartitionState(id, partition, proposal.partitionEpoch,
    { leader: nodeId, leaderEpoch: proposal.leaderEpoch, isr: proposal.isr });
  return result.ok ? { state: result.state } : { errorCode: ErrorCode.INVALID_UPDATE_VERSION, state: result.current ?? undefined };
}
