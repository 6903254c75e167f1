// A Fjord broker: configuration, the durable metadata store, the controller that changes it,
// the partition logs (ReplicaManager), the API handlers and the TCP listener. `startBroker` is
// the one entry point, used by the CLI, by our tests and by any Node project that wants a Kafka
// in-process.
import { mkdtemp, rm } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Logger } from 'pino';
import { BrokerConfig } from './config/broker-config';
import { MetadataStore } from './cluster/metadata-store';
import { Controller } from './cluster/controller';
import { LocalMetadata } from './cluster/metadata-backend';
import { ReplicaManager } from './replica/replica-manager';
import { DataDirLock } from './storage/dir-lock';
import { ProducerIdManager } from './txn/producer-ids';
import { createLogger } from './common/logger';
import { Listener } from './net/listener';
import { Router } from './net/router';
import { FetchSessionCache } from './replica/fetch-sessions';
import { createHandlers } from './handlers';
import { createGroupCoordinator, startGroupCoordinator, type GroupCoordinator } from './group';
import { createTransactionCoordinator, TransactionCoordinatorStarter, type TransactionCoordinator } from './txn';

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
}

export interface RunningBroker {
  host: string;
  port: number;
  /** host:port as clients should dial it. */
  bootstrap: string;
  broker: Broker;
  listener: Listener;
  close(): Promise<void>;
}

/**
 * Requests decoded and unanswered on one connection before it stops reading. Kafka reads one at a
 * time; a few more let pipelined Produce requests overlap (clients send up to 5).
 */
const MAX_IN_FLIGHT_PER_CONNECTION = 100;

/** How long a fetch session must sit unused before a full cache may evict it (Kafka's default). */
const FETCH_SESSION_MIN_EVICTION_MS = 120_000;

export class Broker {
  readonly router: Router;
  readonly fetchSessions: FetchSessionCache;
  /** Consumer groups and their committed offsets (src/group); started by startBroker. */
  readonly groups: GroupCoordinator;
  /** Transactions (src/txn); loaded at start if __transaction_state exists, else on first use. */
  readonly transactions: TransactionCoordinator;
  private readonly transactionsStarter: TransactionCoordinatorStarter;

  constructor(
    readonly config: BrokerConfig,
    readonly log: Logger,
    readonly store: MetadataStore,
    readonly controller: Controller,
    readonly replicas: ReplicaManager,
    readonly producerIds: ProducerIdManager,
  ) {
    this.groups = createGroupCoordinator(config, replicas, log);
    this.transactions = createTransactionCoordinator(config, controller, replicas, this.groups, producerIds, log);
    this.transactionsStarter = new TransactionCoordinatorStarter(this.transactions, config, controller, replicas, log);
    if (config.getBool('transaction.partition.verification.enable')) {
      replicas.verifyTransaction = (transactionalId, producerId, producerEpoch, topic, partition, produceVersion) =>
        this.transactions.verifyTransactionalWrite(transactionalId, producerId, producerEpoch, topic, partition, produceVersion >= 11);
    }
    this.router = new Router(createHandlers(this));
    this.fetchSessions = new FetchSessionCache(config.getInt('max.incremental.fetch.session.cache.slots'), FETCH_SESSION_MIN_EVICTION_MS);
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

  get nodeId(): number {
    return this.config.nodeId;
  }

  get clusterId(): string {
    return this.store.clusterId;
  }
}

export async function startBroker(opts: StartBrokerOptions = {}): Promise<RunningBroker> {
  const started = process.hrtime.bigint();
  const log = opts.logger ?? createLogger({ level: opts.logLevel ?? 'warn' });
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

  // Cluster mode's control plane exists (src/cluster/etcd) but the broker does not run on it yet:
  // refuse rather than start a lone broker the user believes is part of a cluster.
  if (config.etcdConnect) {
    throw new Error(`etcd.connect is set (${config.getString('etcd.connect')}), but cluster mode is not available in this version yet: remove it to run a single broker`);
  }
  // Before anything reads or writes the data dir: a second process on it is refused.
  const lock = await DataDirLock.acquire(config.dataDir);
  let store: MetadataStore;
  let replicas: ReplicaManager;
  let producerIds: ProducerIdManager;
  try {
    store = await MetadataStore.open(config.dataDir, config.nodeId);
    replicas = await ReplicaManager.open(config, store, log);
    producerIds = await ProducerIdManager.open(config.dataDir);
  } catch (e) {
    await lock.release();
    throw e;
  }
  const listen = config.listener;
  const advertised = config.advertisedListener;
  const self = { nodeId: config.nodeId, host: advertised.host, port: advertised.port, rack: null };
  const broker = new Broker(config, log, store, new Controller(new LocalMetadata(store, self, replicas), config), replicas, producerIds);
  // The listener opens while the logs load (after a crash, while they are recovered): a partition
  // not loaded yet answers a retriable error. Once they are, the group coordinator creates
  // __consumer_offsets if needed and loads it (COORDINATOR_LOAD_IN_PROGRESS meanwhile).
  const groupsStarted = replicas.loaded.then(() => startGroupCoordinator(broker.groups, config, broker.controller, replicas, log), () => undefined);
  // After the groups: markers that finish an interrupted transaction complete its pending offsets.
  const transactionsStarted = groupsStarted.then(() => broker.startTransactions(true));
  const listener = new Listener(broker.router, {
    maxRequestBytes: config.getInt('socket.request.max.bytes'),
    idleMs: config.getLong('connections.max.idle.ms'),
    maxInFlight: MAX_IN_FLIGHT_PER_CONNECTION,
    maxConnections: config.getInt('max.connections'),
    maxConnectionsPerIp: config.getInt('max.connections.per.ip'),
    maxConnectionsPerIpOverrides: config.maxConnectionsPerIpOverrides,
    maxQueuedRequests: config.getInt('queued.max.requests'),
    maxQueuedBytes: config.getLong('queued.max.request.bytes'),
  }, log);
  const port = await listener.listen(listen.host, listen.port);
  if (self.port === 0) self.port = port;
  log.info({ port, startupMs: Number(process.hrtime.bigint() - started) / 1e6 }, 'listener open');
  try {
    await replicas.loaded;
  } catch (e) {
    // A log could not be loaded: stop as close() does, and fail the start.
    await listener.close();
    broker.groups.close();
    await transactionsStarted;
    await broker.stopTransactions();
    await replicas.close().catch(() => undefined);
    await lock.release();
    throw e;
  }

  const host = listen.host === '' ? advertised.host : listen.host;
  log.info({ host, port, advertised: `${self.host}:${self.port}`, nodeId: config.nodeId, clusterId: store.clusterId,
    dataDir: config.dataDir, startupMs: Number(process.hrtime.bigint() - started) / 1e6 }, 'broker listening');

  let closing: Promise<void> | undefined;
  return {
    host,
    port,
    bootstrap: `${host}:${port}`,
    broker,
    listener,
    close() {
      closing ??= (async () => {
        await listener.close();
        broker.groups.close();
        await groupsStarted;
        await transactionsStarted;
        await broker.stopTransactions();
        await replicas.close();
        try {
          await store.close();
        } finally {
          await lock.release();
        }
        if (tempDir) await rm(tempDir, { recursive: true, force: true });
      })();
      return closing;
    },
  };
}
