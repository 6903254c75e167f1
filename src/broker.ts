// A Fjord broker: configuration, the metadata and the controller that changes it, the partition logs
// (ReplicaManager), the coordinators, the API handlers and the TCP listener. `startBroker` is the one
// entry point, used by the CLI, by our tests and by any Node project that wants a Kafka in-process.
// Alone (the default), the metadata is a file in the data dir and the broker leads every partition;
// with etcd.connect it joins a cluster (cluster-member.ts): the metadata lives in etcd, partitions
// are replicated, and the coordinators follow the leadership of their topics' partitions.
import { mkdtemp, rm } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Logger } from 'pino';
import { BrokerConfig, DEFAULT_ADVERTISED_HOST, formatListeners } from './config/broker-config';
import { MetadataStore } from './cluster/metadata-store';
import { Controller } from './cluster/controller';
import { LocalMetadata } from './cluster/metadata-backend';
import { Features, etcdFeatureLevels, storeFeatureLevels } from './cluster/features';
import { ReplicaManager } from './replica/replica-manager';
import { BrokerMetrics } from './metrics/broker-metrics';
import { registerStateMetrics } from './ops/state-metrics';
import { DataDirLock } from './storage/dir-lock';
import { ProducerIdManager } from './txn/producer-ids';
import { createLogger } from './common/logger';
import { Listener, ListenerShared } from './net/listener';
import { ALLOW_EVERYTHING, type Authorizer } from './security/acl';
import { ClientQuotas } from './cluster/client-quota-manager';
import { isSaslProtocol, saslListenerSettings } from './security/sasl-config';
import type { ScramCredentialLookup } from './security/sasl';
import { serverTls } from './security/tls';
import { parseSuperUsers, StandardAuthorizer } from './security/standard-authorizer';
import { Router } from './net/router';
import { FetchSessionCache } from './replica/fetch-sessions';
import { createHandlers } from './handlers';
import { attachOffsetsTopic, createGroupCoordinator, ensureOffsetsTopic, startGroupCoordinator, type GroupCoordinator } from './group';
import {
  createTransactionCoordinator, createTxnPartitionAdds, transactionCoordinatorStarter, type RemotePartitionAdds, type TransactionCoordinator,
  type TxnPartitionAdds,
} from './txn';
import type { TxnMarkerChannel } from './txn/markers';
import type { CoordinatorStarter } from './replica/coordinator-starter';
import { createShareCoordinator, createSharePersister, shareCoordinatorStarter, type RemoteShareState, type ShareCoordinator } from './share-state';
import { ClusterMember, joinCluster, type PartitionCoordinator } from './cluster-member';
import { GROUP_METADATA_TOPIC_NAME } from './cluster/topic-names';
import { DeadLetterQueueWriter, type RemoteDeadLetterProducer } from './share/dead-letter-queue';
import type { ArchiveListener } from './share/share-partition';
import { shareGroupSettings } from './config/group-config';
import type { Persister } from './share-state/persister';
import { shareStateInitializer } from './share-state/group-state-initializer';
import { createSharePartition } from './share/in-flight-records';
import { SharePartitionManager } from './share/share-partition-manager';
import { localEndOffsets, ShareGroupAdmin, type PartitionEndOffsets } from './share/share-group-admin';
import { startBrokerHttpListener } from './ops/broker-http';
import type { RunningHttpListener } from './ops/http-listener';

export interface StartBrokerOptions {
  /** A built config, or Kafka-named properties (`{ 'num.partitions': '3' }`). */
  config?: BrokerConfig | Record<string, string>;
  host?: string;
  /** 0 (the default in-process) picks a free port. */
  port?: number;
  advertisedHost?: string;
  /** Without it (and without log.dirs), a temporary directory removed by close(). */
  dataDir?: string;
  nodeId?: number;
  logger?: Logger;
  logLevel?: string;
  /** The authorizer every request is checked by, in place of the one the config names (tests). */
  authorizer?: Authorizer;
  /** Where share-partitions keep their state, in place of the share coordinator (tests). */
  sharePersister?: Persister;
}

export interface RunningBroker {
  host: string;
  port: number;
  /** host:port as clients should dial it. */
  bootstrap: string;
  broker: Broker;
  /** The first listener's (the one host, port and bootstrap name). */
  listener: Listener;
  /** Every listener by name, with the address it is bound to (host as clients dial it). */
  listeners: ReadonlyMap<string, { listener: Listener; host: string; port: number }>;
  /** The HTTP listener of /metrics and the console (http.listener), as bound; null when off. */
  http: { host: string; port: number } | null;
  close(): Promise<void>;
}

/**
 * Requests decoded and unanswered on one connection before it stops reading. Kafka reads one at a
 * time; a few more let pipelined Produce requests overlap (clients send up to 5).
 */
const MAX_IN_FLIGHT_PER_CONNECTION = 100;

/**
 * How long a TLS handshake may take (or connections.max.idle.ms if lower). Kafka bounds it only by
 * connections.max.idle.ms (10 minutes); a stalled handshake holds a socket and its counts, so less.
 */
const TLS_HANDSHAKE_TIMEOUT_MS = 10_000;

/** How long a fetch session must sit unused before a full cache may evict it (Kafka's default). */
const FETCH_SESSION_MIN_EVICTION_MS = 120_000;

/** What the broker is built from; the modes differ in how these are made (see startBroker). */
export interface BrokerParts {
  clusterId: string;
  /** What the broker measures of itself (made first: the parts record into it). */
  metrics: BrokerMetrics;
  controller: Controller;
  replicas: ReplicaManager;
  producerIds: ProducerIdManager;
  /** The cluster's feature flags (UpdateFeatures, ApiVersions; transaction.version, group.version). */
  features: Features;
  /** A single broker's metadata store (its tests change leader epochs through it). */
  store?: MetadataStore;
  /** In a cluster: transaction markers for partitions other brokers lead. */
  remoteMarkers?: TxnMarkerChannel;
  /** In a cluster: the partition adds of transaction version 2 writes whose ids other brokers coordinate. */
  remotePartitionAdds?: RemotePartitionAdds;
  /** In a cluster: the share groups' dead-letter records for partitions other brokers lead. */
  remoteDeadLetters?: RemoteDeadLetterProducer;
  /** In a cluster: the share coordinators of other brokers (the persister's RPCs). */
  remoteShareState?: RemoteShareState;
  /** In a cluster: partitions' end offsets from their leaders (DescribeShareGroupOffsets' lag). */
  endOffsets?: PartitionEndOffsets;
}

export class Broker {
  readonly router: Router;
  readonly fetchSessions: FetchSessionCache;
  /** What this broker measures of itself: its /metrics. */
  readonly metrics: BrokerMetrics;
  readonly clusterId: string;
  readonly controller: Controller;
  readonly replicas: ReplicaManager;
  readonly producerIds: ProducerIdManager;
  readonly features: Features;
  readonly store: MetadataStore | undefined;
  /** Consumer groups and their committed offsets (src/group); started by startBroker. */
  readonly groups: GroupCoordinator;
  /** Transactions (src/txn); loaded at start if __transaction_state exists, else on first use. */
  readonly transactions: TransactionCoordinator;
  /** The partitions transaction version 2 producers write to, added to their transactions. */
  readonly partitionAdds: TxnPartitionAdds;
  private readonly transactionsStarter: CoordinatorStarter;
  /** Share-partitions' durable state (src/share-state): the coordinator of the __share_group_state partitions led here. */
  readonly shareCoordinator: ShareCoordinator;
  /** What share-partitions read and write their state through: this broker's share coordinator or the one of their key. */
  readonly sharePersister: Persister & { close(): void };
  private readonly shareCoordinatorStarter: CoordinatorStarter;
  /** Asked by every handler (ctx.authorize); ALLOW_EVERYTHING unless authorizer.class.name is set. */
  readonly authorizer: Authorizer;
  /** Where CreateAcls and DeleteAcls write, once an authorizer is configured; null: they answer SECURITY_DISABLED. */
  readonly aclStore: Controller | null;
  /** The client quotas every connection's requests count against (AlterClientQuotas through any broker changes them). */
  readonly quotas: ClientQuotas;
  /** The share groups' dead-letter queue (KIP-1191): the share-partitions' ArchiveListener is its onArchived. */
  readonly deadLetterQueue: DeadLetterQueueWriter;
  /** Share groups' share-partitions and share sessions: the ShareFetch and ShareAcknowledge path (src/share). */
  readonly sharePartitions: SharePartitionManager;
  /** Share groups' state as the admin APIs see and change it (DescribeShareGroupOffsets, Alter..., Delete...). */
  readonly shareGroupAdmin: ShareGroupAdmin;

  constructor(
    readonly config: BrokerConfig,
    readonly log: Logger,
    parts: BrokerParts,
    /** An authorizer to use instead of the one authorizer.class.name makes (tests). */
    authorizerOverride?: Authorizer,
    /** A persister to use instead of the share coordinator's (tests). */
    sharePersisterOverride?: Persister,
  ) {
    ({ clusterId: this.clusterId, controller: this.controller, replicas: this.replicas, producerIds: this.producerIds, features: this.features } = parts);
    this.store = parts.store;
    this.metrics = parts.metrics;
    const { controller, replicas, producerIds } = parts;
    const inCluster = config.etcdConnect !== null;
    // Share groups initialize their share-partitions' state through the persister (made below: called later).
    this.groups = createGroupCoordinator(config, replicas, controller, log, {
      initializeShareState: (groupId, stateEpoch, topics) => shareStateInitializer(sharePersisterOverride ?? this.sharePersister)(groupId, stateEpoch, topics),
      // A share group's share-partition state goes before the group (DeleteGroups).
      onShareGroupDeleted: (groupId, topics) => this.shareGroupAdmin.deleteGroupState(groupId, topics),
      metrics: parts.metrics.group,
    });
    this.transactions = createTransactionCoordinator(config, controller, replicas, this.groups, producerIds, log, parts.remoteMarkers,
      () => this.features.transactionVersion());
    // In a cluster the replica layer elects the coordinator's partitions: the starter only creates the topic.
    this.transactionsStarter = transactionCoordinatorStarter(this.transactions, config, controller, replicas, log, !inCluster);
    // As the transaction coordinator: __share_group_state created on first use, elected here on a single broker.
    this.shareCoordinator = createShareCoordinator(config, controller, replicas, log);
    this.shareCoordinatorStarter = shareCoordinatorStarter(this.shareCoordinator, config, controller, replicas, log, !inCluster);
    this.sharePersister = createSharePersister(this.shareCoordinator, config.nodeId, controller, this.shareCoordinatorStarter, log, parts.remoteShareState);
    // KIP-890 part 1's check asks the local coordinator; in a cluster the transactional id's may be
    // another broker's (Kafka asks it with AddPartitionsToTxn verifyOnly), so it is off there for now.
    if (config.getBool('transaction.partition.verification.enable') && !inCluster) {
      replicas.verifyTransaction = (transactionalId, producerId, producerEpoch, topic, partition, produceVersion) =>
        this.transactions.verifyTransactionalWrite(transactionalId, producerId, producerEpoch, topic, partition, produceVersion >= 11);
    }
    // Transaction version 2 writes (Produce v12+, TxnOffsetCommit v5+) have their partitions added by
    // the ids' coordinators.
    this.partitionAdds = createTxnPartitionAdds(this.transactions, config.nodeId, controller, parts.remotePartitionAdds);
    replicas.addToTransaction = (transactionalId, producerId, producerEpoch, topic, partition) =>
      this.partitionAdds.add(transactionalId, producerId, producerEpoch, { topic, partition });
    const authorizer = startAuthorizer(config, controller, log);
    this.authorizer = authorizerOverride ?? authorizer ?? ALLOW_EVERYTHING;
    this.aclStore = authorizer ? controller : null;
    this.quotas = new ClientQuotas(
      { samples: config.getInt('quota.window.num'), windowMs: 1000 * config.getInt('quota.window.size.seconds') },
      { samples: config.getInt('controller.quota.window.num'), windowMs: 1000 * config.getInt('controller.quota.window.size.seconds') },
      () => controller.clientQuotas());
    controller.onClientQuotasChanged(() => this.quotas.quotasChanged());
    this.deadLetterQueue = new DeadLetterQueueWriter({
      nodeId: config.nodeId, config, controller, replicas, remote: parts.remoteDeadLetters, log,
      enabled: () => this.features.shareVersion() >= 2,
    });
    this.sharePartitions = createSharePartitionManager(config, controller, replicas, sharePersisterOverride ?? this.sharePersister, log,
      this.deadLetterQueue.onArchived);
    this.shareGroupAdmin = new ShareGroupAdmin({
      groups: this.groups, persister: sharePersisterOverride ?? this.sharePersister, controller,
      endOffsets: parts.endOffsets ?? localEndOffsets(replicas), sharePartitions: this.sharePartitions,
    });
    this.router = new Router(createHandlers(this));
    this.fetchSessions = new FetchSessionCache(config.getInt('max.incremental.fetch.session.cache.slots'), FETCH_SESSION_MIN_EVICTION_MS);
  }

  /** The finalized group.version (ConsumerGroupHeartbeat is served from 1). */
  groupVersion(): number {
    return this.features.groupVersion();
  }

  /** The finalized streams.version (StreamsGroupHeartbeat is served from 1). */
  streamsVersion(): number {
    return this.features.streamsVersion();
  }

  /** The finalized share.version (ShareGroupHeartbeat is served from 1). */
  shareVersion(): number {
    return this.features.shareVersion();
  }

  /** Creates __transaction_state if needed and loads the transaction coordinator; at most once. */
  startTransactions(onlyIfExists = false): Promise<void> {
    return this.transactionsStarter.start(onlyIfExists);
  }

  /** Stops the transaction coordinator, and its start-up if one is in flight. */
  async stopTransactions(): Promise<void> {
    const closed = this.transactions.close();
    await this.transactionsStarter.settled();
    await closed;
  }

  /** Creates __share_group_state if needed and loads the share coordinator; at most once. */
  startShareCoordinator(onlyIfExists = false): Promise<void> {
    return this.shareCoordinatorStarter.start(onlyIfExists);
  }

  /** Stops the share coordinator and its persister's retries, and its start-up if one is in flight. */
  async stopShareCoordinator(): Promise<void> {
    this.sharePersister.close();
    const closed = this.shareCoordinator.close();
    await this.shareCoordinatorStarter.settled();
    await closed;
  }

  get nodeId(): number {
    return this.config.nodeId;
  }
}

/**
 * The share fetch path: share-partitions made on first fetch with the group's share.* configs
 * (read at each use, so changes apply at once) and the persister, started by share.auto.offset.reset
 * through the replica layer's offset lookups; what they archive goes to the dead-letter queue.
 */
function createSharePartitionManager(
  config: BrokerConfig, controller: Controller, replicas: ReplicaManager, persister: Persister, log: Logger,
  onArchived: ArchiveListener,
): SharePartitionManager {
  const settings = (groupId: string) => shareGroupSettings(config, controller.groupConfigs(groupId));
  const manager: SharePartitionManager = new SharePartitionManager({
    replicas, logger: log, settings,
    maxSessions: () => config.getInt('group.share.max.share.sessions'),
    createPartition: (spec) => createSharePartition({
      ...spec, persister, logger: log, onArchived,
      settings: () => settings(spec.key.groupId),
      resetOffset: (to) => manager.resetOffset(spec.topicName, spec.key.partition, to),
    }),
  });
  return manager;
}

/**
 * The StandardAuthorizer when authorizer.class.name names it (the config refuses any other class),
 * fed the cluster's ACLs now and after every change, wherever it was made; null without one.
 */
function startAuthorizer(config: BrokerConfig, controller: Controller, log: Logger): StandardAuthorizer | null {
  if (config.getString('authorizer.class.name') === '') return null;
  const authorizer = new StandardAuthorizer({
    superUsers: parseSuperUsers(config.getString('super.users')),
    allowEveryoneIfNoAclFound: config.getBool('allow.everyone.if.no.acl.found'),
    logger: log,
  });
  const apply = () => authorizer.setAcls(controller.acls());
  controller.onAclsChanged(apply);
  apply();
  return authorizer;
}

/** How a broker of one mode starts and stops what the other has not. */
interface BrokerMode {
  parts: BrokerParts;
  /** The port each listener listens on, by listener name. */
  ports: ReadonlyMap<string, number>;
  /** The listener of this name is open on `port` (the one picked when 0 was asked). */
  listening(listenerName: string, port: number): void;
  /** Once the logs are loaded: starts the coordinators (and in a cluster, following the metadata). */
  start(broker: Broker): Promise<void>;
  /** Before the coordinators close: stops what drives them. */
  stop(): Promise<void>;
  /** After the replica manager closed: the metadata's own resources. */
  close(): Promise<void>;
}

/** A single broker: the metadata store in the data dir; it leads every partition and coordinates every group. */
async function singleBroker(config: BrokerConfig, log: Logger, metrics: BrokerMetrics): Promise<BrokerMode> {
  const store = await MetadataStore.open(config.dataDir, config.nodeId);
  try {
    const replicas = await ReplicaManager.open(config, store, log, undefined, store.clusterId, metrics);
    // Its endpoint of each advertised listener; the inter-broker one stands for it where no listener is named.
    const endpoints = new Map(config.advertisedListeners.map((ep) => [ep.name, { nodeId: config.nodeId, host: ep.host, port: ep.port, rack: null }]));
    const self = endpoints.get(config.interBrokerListener.name)!;
    const controller = new Controller(new LocalMetadata(store, self, replicas, endpoints), config);
    const producerIds = await ProducerIdManager.open(config.dataDir);
    const features = await Features.start(storeFeatureLevels(store), config.nodeId);
    return {
      parts: { clusterId: store.clusterId, metrics, controller, replicas, producerIds, features, store },
      ports: new Map(config.listeners.map((l) => [l.name, l.port])),
      // The group coordinator creates __consumer_offsets if needed and loads it (COORDINATOR_LOAD_IN_PROGRESS
      // meanwhile); after it, markers that finish an interrupted transaction complete its pending offsets.
      start: async (broker) => {
        await startGroupCoordinator(broker.groups, config, controller, replicas, log);
        await broker.startTransactions(true);
        await broker.startShareCoordinator(true);
      },
      // Advertised port 0 means the listener's, known once it listens.
      listening: (listenerName, port) => {
        const endpoint = endpoints.get(listenerName);
        if (endpoint && endpoint.port === 0) endpoint.port = port;
      },
      stop: async () => undefined,
      close: () => store.close(),
    };
  } catch (e) {
    await store.close();
    throw e;
  }
}

/**
 * A cluster's broker (etcd.connect): the metadata in etcd, partitions replicated; the coordinators
 * are elected partition by partition as the metadata makes this broker their topics' leaders.
 */
async function clusterBroker(config: BrokerConfig, log: Logger, metrics: BrokerMetrics): Promise<BrokerMode> {
  const joined = await joinCluster(config, log, metrics);
  const features = await Features.start(etcdFeatureLevels(joined.etcd), config.nodeId).catch(async (e: unknown) => {
    await joined.stopController();
    await joined.replicas.close();
    joined.remoteMarkers.close();
    joined.remotePartitionAdds.close();
    joined.remoteShareState.close();
    joined.endOffsets.close();
    await joined.etcd.close();
    throw e;
  });
  let member: ClusterMember | undefined;
  let stopped = false;
  let signalStopped = () => {};
  const stopping = new Promise<void>((resolve) => (signalStopped = resolve));
  return {
    parts: { ...joined, metrics, features },
    ports: joined.ports,
    listening: () => undefined,
    start: async (broker) => {
      // The group coordinator takes elections once it has __consumer_offsets (its partition count).
      let offsetsAttached = false;
      const groups: PartitionCoordinator = {
        onElection: (partition, leaderEpoch) => {
          const topic = joined.controller.topic(GROUP_METADATA_TOPIC_NAME);
          if (topic && !offsetsAttached) {
            attachOffsetsTopic(broker.groups, joined.replicas, topic.partitions.length, log);
            offsetsAttached = true;
          }
          broker.groups.onElection(partition, leaderEpoch);
        },
        onResignation: (partition, leaderEpoch) => broker.groups.onResignation(partition, leaderEpoch),
      };
      member = new ClusterMember({
        nodeId: config.nodeId, cache: joined.etcd.cache, topics: joined.controller, replicas: joined.replicas,
        groups, transactions: broker.transactions, shareCoordinator: broker.shareCoordinator, logger: log,
      });
      await member.start();
      // The offsets topic, as Kafka's, waits until enough brokers are there for its replication factor
      // (or until the broker stops: close() waits for this start).
      await Promise.race([joined.etcd.cache.brokersAtLeast(config.getInt('offsets.topic.replication.factor')), stopping]);
      if (!stopped) await ensureOffsetsTopic(broker.groups, config, joined.controller, joined.replicas, log);
    },
    stop: async () => {
      stopped = true;
      signalStopped();
      await member?.stop();
      await joined.stopController();
    },
    close: async () => {
      joined.remoteMarkers.close();
      joined.remotePartitionAdds.close();
      joined.remoteDeadLetters.close();
      joined.remoteShareState.close();
      joined.endOffsets.close();
      await joined.etcd.close();
    },
  };
}

export async function startBroker(opts: StartBrokerOptions = {}): Promise<RunningBroker> {
  const started = process.hrtime.bigint();
  let log = opts.logger ?? createLogger({ level: opts.logLevel ?? 'warn' });
  let tempDir: string | undefined;
  let config: BrokerConfig;
  if (opts.config instanceof BrokerConfig) {
    config = opts.config;
  } else {
    const props = opts.config ?? {};
    let dataDir = opts.dataDir;
    if (dataDir === undefined && props['log.dirs'] === undefined && props['log.dir'] === undefined) {
      dataDir = tempDir = await mkdtemp(path.join(os.tmpdir(), 'fjord-'));
    }
    config = BrokerConfig.load({
      sets: props,
      flags: {
        host: opts.host ?? '127.0.0.1', port: opts.port ?? 0, advertisedHost: opts.advertisedHost,
        dataDir, nodeId: opts.nodeId,
      },
    });
  }

  // Several brokers of a cluster may share a process (tests, startCluster): their lines say whose they are.
  if (config.etcdConnect) log = log.child({ nodeId: config.nodeId });
  // TLS settings are checked (key stores read) before anything starts: a bad one fails the start, as in Kafka.
  const serverTlsOf = new Map(config.listeners.map((l) =>
    [l.name, l.securityProtocol === 'SSL' || l.securityProtocol === 'SASL_SSL' ? serverTls(config, l.name) : null]));
  // So are each SASL listener's mechanisms and JAAS configs. SCRAM logins read the controller's
  // credentials, set below once it exists (before any listener opens).
  let scramCredentials: ScramCredentialLookup | null = null;
  const scramLookup: ScramCredentialLookup = { scramCredential: (user, mechanism) => scramCredentials?.scramCredential(user, mechanism) ?? null };
  const saslOf = new Map(config.listeners.map((l) =>
    [l.name, isSaslProtocol(l.securityProtocol) ? saslListenerSettings(config, l.name, scramLookup) : undefined]));
  // Before anything reads or writes the log dirs: a second process on one of them is refused.
  const lock = await DataDirLock.acquireAll(config.logDirs);
  const metrics = new BrokerMetrics(config.nodeId);
  let mode: BrokerMode;
  try {
    mode = config.etcdConnect ? await clusterBroker(config, log, metrics) : await singleBroker(config, log, metrics);
  } catch (e) {
    await lock.release();
    throw e;
  }
  const { replicas } = mode.parts;
  const broker = new Broker(config, log, mode.parts, opts.authorizer, opts.sharePersister);
  registerStateMetrics(broker.metrics.registry, broker);
  scramCredentials = broker.controller;
  // The listener opens while the logs load (after a crash, while they are recovered): a partition
  // not loaded yet answers a retriable error. Once they are, the coordinators start.
  const coordinatorsStarted = replicas.loaded.then(() => mode.start(broker), () => undefined)
    .catch((err) => log.error({ err }, 'the coordinators could not start'));
  const limits = {
    maxRequestBytes: config.getInt('socket.request.max.bytes'),
    idleMs: config.getLong('connections.max.idle.ms'),
    maxInFlight: MAX_IN_FLIGHT_PER_CONNECTION,
    // Read at each accept, so that a dynamic change applies to the next connection, as in Kafka.
    get maxConnections() {
      return config.getInt('max.connections');
    },
    get maxConnectionsPerIp() {
      return config.getInt('max.connections.per.ip');
    },
    maxConnectionsPerIpOverrides: config.maxConnectionsPerIpOverrides,
    maxQueuedRequests: config.getInt('queued.max.requests'),
    maxQueuedBytes: config.getLong('queued.max.request.bytes'),
    handshakeTimeoutMs: Math.min(TLS_HANDSHAKE_TIMEOUT_MS, config.getLong('connections.max.idle.ms')),
  };
  const listeners = new Map<string, { listener: Listener; host: string; port: number }>();
  const shared = new ListenerShared(limits);
  let http: RunningHttpListener | null = null;
  const closeListeners = async () => {
    await http?.close();
    await Promise.all([...listeners.values()].map((l) => l.listener.close()));
  };
  try {
    for (const l of config.listeners) {
      const listener = new Listener(broker.router, limits, log,
        { listenerName: l.name, securityProtocol: l.securityProtocol, authorizer: broker.authorizer, quotas: broker.quotas, sasl: saslOf.get(l.name), metrics },
        serverTlsOf.get(l.name), shared);
      const port = await listener.listen(l.host, mode.ports.get(l.name)!);
      const advertised = config.advertisedListeners.find((ep) => ep.name === l.name);
      listeners.set(l.name, { listener, host: l.host === '' ? advertised?.host ?? DEFAULT_ADVERTISED_HOST : l.host, port });
      mode.listening(l.name, port);
      log.info({ listener: l.name, securityProtocol: l.securityProtocol, port, startupMs: Number(process.hrtime.bigint() - started) / 1e6 }, 'listener open');
    }
    // Before the logs are loaded: the console shows the recovery's progress.
    http = await startBrokerHttpListener(config, broker.metrics, listeners, log);
    await replicas.loaded;
  } catch (e) {
    // A port taken or a log that could not be loaded: stop as close() does, and fail the start.
    await closeListeners();
    await mode.stop();
    broker.groups.close();
    broker.sharePartitions.close();
    await coordinatorsStarted;
    await broker.stopTransactions();
    await broker.stopShareCoordinator();
    await replicas.close().catch(() => undefined);
    await mode.close().catch(() => undefined);
    await lock.release();
    throw e;
  }

  const { listener, host, port } = listeners.get(config.listener.name)!;
  log.info({ host, port, advertised: formatListeners(config.advertisedListeners.map((ep) => ({ ...ep, port: ep.port || listeners.get(ep.name)!.port }))),
    nodeId: config.nodeId, clusterId: broker.clusterId, dataDir: config.dataDir, startupMs: Number(process.hrtime.bigint() - started) / 1e6 }, 'broker listening');

  let closing: Promise<void> | undefined;
  return {
    host,
    port,
    bootstrap: `${host}:${port}`,
    broker,
    listener,
    listeners,
    http: http && { host: http.host, port: http.port },
    close() {
      closing ??= (async () => {
        await closeListeners();
        await mode.stop();
        broker.groups.close();
        broker.sharePartitions.close();
        await coordinatorsStarted;
        await broker.stopTransactions();
        await broker.deadLetterQueue.close();
        await broker.stopShareCoordinator();
        await replicas.close();
        try {
          await mode.close();
        } finally {
          await lock.release();
        }
        if (tempDir) await rm(tempDir, { recursive: true, force: true });
      })();
      return closing;
    },
  };
}
