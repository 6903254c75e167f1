// The partitions this broker leads: their logs, their idempotent-producer state, and the
// delayed fetches waiting on them (Kafka's ReplicaManager). Produce appends here; Fetch reads here
// (fetchMessages, with fetch-reads.ts and delayed-fetch.ts), and so do the offset lookups of
// ListOffsets and OffsetForLeaderEpoch (offset-lookups.ts); the Controller tells it when topics
// come and go.
//
// Appends to a partition take their turns in arrival order: the producer-state check, offset
// assignment, the producer-state update and the write of one append happen with no await in
// between, so requests that race for a partition get offsets in arrival order and a retried batch
// is recognised even while the first copy is still being written. A compressed batch must be
// decompressed and its records checked first; that runs off the event loop (libuv's thread pool)
// while the partition's later appends, of any origin (a client's, a coordinator's, a transaction
// marker), queue behind it. With nothing queued and no records to read, an append runs to its
// write synchronously: the uncompressed Produce path pays for none of this.
//
// A failed write (a full disk) drops the appends it held and those behind it (PartitionLog),
// which then refuses appends until this file has rebuilt the partition's producer state from the
// log, exactly as after a restart: the state had recorded the dropped batches, and a producer's
// retry of one must be appended, not answered as a duplicate. A retried batch whose first copy is
// still being written is acknowledged only once that write is done.
//
// Start-up: open() returns before the logs are loaded (after a crash, recovered); each partition
// goes online as soon as its log and producer state are ready, and until then requests for it get
// NOT_LEADER_OR_FOLLOWER (partitionLoading()). `loaded` settles once all are online; the
// coordinators start after it.
//
// A partition's producer state and last stable offset belong to its log (PartitionLog, as Kafka's
// UnifiedLog); this layer loads the state when the partition goes online and checks appends against it.
import type { Logger } from 'pino';
import type { BrokerConfig } from '../config/broker-config';
import { feedsTopicDefaults, resolveTopicConfig, type TopicLogConfig } from '../config/topic-config';
import type { MetadataStore, TopicRecord } from '../cluster/metadata-store';
import type { TopicStorage } from '../cluster/controller';
import { ErrorCode } from '../common/errors';
import { scanBatches, assignOffsets, checkTimestamps, Compression, TimestampType, type BatchInfo } from '../records/batch';
import {
  buildEndTxnMarker, validateRecords, validateRecordsInline, type RecordValidationError, type RecordValidationOk,
} from '../records/records';
import { LogManager, StorageError, partitionKey, type PartitionLog } from '../storage';
import { producerBatchOf, type TxnMarker } from '../storage/producer-state';
import { Timer } from './delayed/timing-wheel';
import { DelayedOperationPurgatory } from './delayed/purgatory';
import { DelayedFetch } from './delayed-fetch';
import {
  divergingEpoch, failedRead, logOffsets, readLog, readWithinBudget, type FetchIsolation, type FetchParams, type FetchPartition, type FetchPartitionResult,
} from './fetch-reads';
import { legacyOffsetsBefore, NOT_FOUND, lastOffsetForLeaderEpoch, offsetForTimestamp, type OffsetLookup } from './offset-lookups';
import { PartitionReplicas } from './partition-replicas';
import {
  failedAppend, FIRST_ADDING_PRODUCE_VERSION, NO_LEADER_EPOCH, refusedAppend, type AppendOptions, type AppendResult, type LeaderPartition,
  type Partition, type PartitionAppend, type TransactionPartitionAdder, type TransactionVerifier,
} from './partition';
import {
  DelayedProduce, type PartitionAssignment, type ReplicationOptions,
} from './replication';
import type { FollowerPartition } from './replica-fetcher';
import { throttledPartitionsOf, type ReplicationQuotas } from './replication-quota';
import { BrokerMetrics } from '../metrics/broker-metrics';
import { registerCollected } from '../metrics/instruments';

/**
 * The most a compressed batch may decompress to while it is validated (Kafka streams it and has no
 * bound): a 1 MB batch of ordinary data stays far below it, a decompression bomb is refused.
 */
const MAX_DECOMPRESSED_BATCH_BYTES = 128 * 1024 * 1024;

export {
  failedAppend, FIRST_ADDING_PRODUCE_VERSION, NO_LEADER_EPOCH, type AppendOptions, type AppendResult, type LeaderPartition, type Partition,
  type PartitionAppend, type TransactionPartitionAdder, type TransactionVerifier, type TxnMarker,
} from './partition';

/** What an append waits for before its turn: its records' validation, its partition's addition to a transaction. */
type AppendCheck = Pick<RecordValidationOk, 'ok'> | RecordValidationError;
const CHECKED: AppendCheck = { ok: true };

/**
 * Append errors Kafka's ReplicaManager does not count as failed produce requests (its
 * appendToLocalLog answers them without marking FailedProduceRequestsPerSec): the partition is not
 * here, the batch is too large or corrupt, the disk failed.
 */
const UNCOUNTED_APPEND_ERRORS: ReadonlySet<number> = new Set([
  ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.MESSAGE_TOO_LARGE, ErrorCode.RECORD_LIST_TOO_LARGE,
  ErrorCode.CORRUPT_MESSAGE, ErrorCode.KAFKA_STORAGE_ERROR, ErrorCode.UNKNOWN_TOPIC_ID,
]);

/** The same for reads (Kafka's readFromLocalLog): only an unexpected error marks FailedFetchRequestsPerSec. */
const UNCOUNTED_READ_ERRORS: ReadonlySet<number> = new Set([
  ErrorCode.NONE, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.UNKNOWN_LEADER_EPOCH,
  ErrorCode.FENCED_LEADER_EPOCH, ErrorCode.REPLICA_NOT_AVAILABLE, ErrorCode.KAFKA_STORAGE_ERROR, ErrorCode.INCONSISTENT_TOPIC_ID,
  ErrorCode.OFFSET_OUT_OF_RANGE, ErrorCode.UNKNOWN_TOPIC_ID,
]);

export class ReplicaManager implements TopicStorage {
  private readonly partitions = new Map<string, Partition>();
  /** Partitions going online (adopt()). */
  private readonly adopting = new Map<string, Promise<void>>();
  /** Settles once every partition of the metadata is online after start-up; rejects if a log could not be loaded. */
  loaded: Promise<void> = Promise.resolve();
  private loading = true;
  readonly timer = new Timer();
  readonly fetchPurgatory = new DelayedOperationPurgatory('Fetch', this.timer);
  /** Produce requests with acks=all waiting for the in-sync replicas (cluster only). */
  readonly producePurgatory = new DelayedOperationPurgatory('Produce', this.timer);
  /** Set in a cluster (enableReplication): partitions then have roles. */
  private replication?: ReplicationOptions;
  private isrExpiryTimer?: NodeJS.Timeout;
  /** Per partition, the role change being applied: changes apply one at a time, in call order. */
  private readonly roleChanges = new Map<string, Promise<void>>();
  /** Set by the broker while transaction.partition.verification.enable is true. */
  verifyTransaction: TransactionVerifier | undefined;
  /** Set by the broker: adds the partitions of transaction version 2 writes to their transactions. */
  addToTransaction: TransactionPartitionAdder | undefined;
  /** Told when a partition stops being led here (see onLeadershipEnded). */
  private readonly leadershipEndedListeners: Array<(topic: string, partition: number) => void> = [];

  private readonly expiryTimer: NodeJS.Timeout;

  private constructor(
    readonly logs: LogManager,
    /** The topics and partitions that exist, and their leader epochs. */
    private readonly metadata: Pick<MetadataStore, 'topic'>,
    private readonly config: BrokerConfig,
    private readonly logger: Logger,
    /** Where appends and reads are counted per topic (BrokerTopicMetrics); the purgatories' sizes are read from here. */
    private readonly metrics: BrokerMetrics,
  ) {
    registerCollected(metrics.registry, {
      name: 'kafka_server_delayedoperationpurgatory_purgatorysize', type: 'gauge',
      help: 'Operations waiting in a purgatory, once per key they watch (PurgatorySize)',
      read: () => [this.fetchPurgatory, this.producePurgatory].map((p) => ({ labels: { delayedOperation: p.name }, value: p.watched() })),
    });
    registerCollected(metrics.registry, {
      name: 'kafka_server_delayedoperationpurgatory_numdelayedoperations', type: 'gauge',
      help: 'Operations waiting in a purgatory for their timeout (NumDelayedOperations)',
      read: () => [this.fetchPurgatory, this.producePurgatory].map((p) => ({ labels: { delayedOperation: p.name }, value: p.numDelayed() })),
    });
    // Idle producer ids are forgotten after producer.id.expiration.ms, checked as often as Kafka does.
    this.expiryTimer = setInterval(() => this.removeExpiredProducers(Date.now()),
      config.getInt('producer.id.expiration.check.interval.ms'));
    this.expiryTimer.unref();
    config.on('change', this.brokerConfigChanged);
  }

  /**
   * Dynamic log.* broker configs reach the logs at once, as Kafka's DynamicLogConfig: every topic's
   * effective config is resolved again (its overrides still win).
   */
  private readonly brokerConfigChanged = (names: string[]): void => {
    if (!names.some(feedsTopicDefaults)) return;
    this.logs.updateDefaults(resolveTopicConfig(this.config, {}));
    for (const name of new Set(this.logs.allLogs().map((l) => l.topic))) {
      const topic = this.metadata.topic(name);
      if (topic) this.logs.updateConfig(name, this.topicConfig(topic));
    }
  };

  removeExpiredProducers(nowMs: number): void {
    const expirationMs = this.config.getInt('producer.id.expiration.ms');
    for (const p of this.partitions.values()) p.log.producerState.removeExpired(nowMs, expirationMs);
  }

  /**
   * Starts opening (and after a crash recovering) every log in the background and resolves at once
   * (see `loaded`). As each log is ready its producer state is rebuilt from the latest snapshot and
   * the log after it, and the partition goes online: until then partitionLoading() says so, and
   * requests for it get a retriable error, as Kafka answers for a partition it does not host yet.
   */
  static async open(config: BrokerConfig, metadata: Pick<MetadataStore, 'topic' | 'topics'>, log: Logger,
    replication?: ReplicationOptions, clusterId?: string, metrics = new BrokerMetrics(config.nodeId)): Promise<ReplicaManager> {
    const topics = metadata.topics();
    const byName = new Map(topics.map((t) => [t.name, t]));
    // The LogManager's callbacks may run before the ReplicaManager exists: until then, logs wait in loadedEarly.
    let manager: ReplicaManager | undefined = undefined;
    const loadedEarly: PartitionLog[] = [];
    const goOnline = (l: PartitionLog) => {
      const topic = byName.get(l.topic);
      if (topic) manager!.adopt(topic, l.partition).catch(() => undefined); // `loaded` reports the failure
    };
    const logs = await LogManager.start({
      dataDir: config.dataDir,
      logDirs: config.logDirs,
      identity: clusterId === undefined ? undefined : { nodeId: config.nodeId, clusterId },
      moveBytesPerSecond: () => config.getLong('replica.alter.log.dirs.io.max.bytes.per.second'),
      defaults: resolveTopicConfig(config, {}),
      configFor: (topic) => resolveTopicConfig(config, byName.get(topic)?.configs ?? {}),
      log,
      retentionCheckIntervalMs: config.getLong('log.retention.check.interval.ms'),
      cleaner: config.getBool('log.cleaner.enable') ? {
        backoffMs: config.getLong('log.cleaner.backoff.ms'),
        ioMaxBytesPerSecond: config.getDouble('log.cleaner.io.max.bytes.per.second'),
        dedupeBufferBytes: config.getLong('log.cleaner.dedupe.buffer.size'),
        ioBufferBytes: config.getInt('log.cleaner.io.buffer.size'),
        ioBufferLoadFactor: config.getDouble('log.cleaner.io.buffer.load.factor'),
      } : undefined,
      producers: (l) => manager?.partition(l.topic, l.partition)?.log.producerState,
      onLogLoaded: (l) => (manager ? goOnline(l) : loadedEarly.push(l)),
      metrics: metrics?.log,
      progress: metrics?.progress,
    });
    const opened = new ReplicaManager(logs, metadata, config, log, metrics);
    if (replication) opened.enableReplication(replication);
    manager = opened;
    loadedEarly.forEach(goOnline);
    opened.loaded = (async () => {
      await logs.loaded;
      // Logs of topics the metadata no longer knows were deleted while we were down.
      const orphans = new Set(logs.allLogs().map((l) => l.topic).filter((t) => !byName.has(t)));
      for (const topic of orphans) await logs.deleteTopic(topic);
      // In a cluster, logs of partitions no longer assigned here were moved away by a reassignment
      // while we were down (Kafka's stray replicas): deleted.
      if (replication) {
        const stray = logs.allLogs().filter((l) => byName.has(l.topic) && !byName.get(l.topic)!.partitions[l.partition]?.replicas.includes(config.nodeId));
        for (const l of stray) await opened.replicaRemoved(l.topic, l.partition);
      }
      for (const topic of topics) await opened.partitionsCreated(topic, 0);
      opened.loading = false;
    })();
    opened.loaded.catch(() => undefined); // the broker awaits it
    return opened;
  }

  /** True while the partition is not online yet because the broker is still loading it. */
  partitionLoading(topic: string, index: number): boolean {
    const key = partitionKey(topic, index);
    return !this.partitions.has(key) && (this.loading || this.adopting.has(key));
  }

  /** Opens (or creates) the partition's log, rebuilds its producer state and puts it online; once per partition. */
  private adopt(topic: TopicRecord, index: number): Promise<void> {
    this.applyThrottles(topic);
    const key = partitionKey(topic.name, index);
    let adopting = this.adopting.get(key);
    if (!adopting) {
      adopting = (async () => {
        const log = await this.logs.getOrCreate(topic.name, index, this.topicConfig(topic));
        await log.loadProducerState();
        // In a cluster the high watermark is not known after a restart (Kafka checkpoints it; Fjord
        // does not yet): it starts at the log start and comes back with the leader's answers, or
        // with the followers' fetches if this broker leads.
        if (this.replication) log.setReplicatedHighWatermark(log.logStartOffset);
        this.partitions.set(key, {
          topic: topic.name, index, log, appendedBytes: 0, snapshotSegment: log.activeSegmentBaseOffset,
          meters: this.metrics.topics.topic(topic.name),
        });
      })().finally(() => this.adopting.delete(key));
      this.adopting.set(key, adopting);
    }
    return adopting;
  }

  partition(topic: string, index: number): Partition | undefined {
    return this.partitions.get(partitionKey(topic, index));
  }

  allPartitions(): IterableIterator<Partition> {
    return this.partitions.values();
  }

  // ------------------------------------------------------------- roles (a cluster; see replication.ts)

  /**
   * Makes this a cluster member's replica manager: partitions get roles from makeLeader and
   * makeFollower, and the leaders check their ISR every replica.lag.time.max.ms / 2, as Kafka's
   * isr-expiration task.
   */
  private enableReplication(options: ReplicationOptions): void {
    this.replication = options;
    this.isrExpiryTimer = setInterval(() => {
      for (const p of this.partitions.values()) {
        if (p.role?.kind === 'leader') void p.role.replicas.maybeShrinkIsr();
      }
    }, Math.max(1, Math.floor(options.replicaLagTimeMaxMs / 2)));
    this.isrExpiryTimer.unref();
  }

  /**
   * This broker leads the partition in `state` (Kafka's makeLeader): it stops fetching it, starts
   * the new leader epoch at its log end, and tracks its followers from the state's ISR; its high
   * watermark starts where it was and moves as the ISR catches up.
   */
  makeLeader(topic: TopicRecord, index: number, state: PartitionAssignment): Promise<void> {
    return this.inRoleTurn(topic, index, async (partition) => {
      const replication = this.replication!;
      const role = partition.role;
      if (role?.kind === 'leader' && role.leaderEpoch === state.leaderEpoch) {
        role.replicas.updateReplicas(state.replicas);
        role.replicas.updatePartitionState(state);
        return;
      }
      if (role?.kind === 'follower') await replication.fetchers.removePartitions([{ topic: topic.name, partition: index }]);
      const { log } = partition;
      log.assignEpochStartOffset(state.leaderEpoch, log.logEndOffset);
      const replicas = new PartitionReplicas({
        brokerId: replication.brokerId, replicas: state.replicas, state,
        leaderEpochStartOffset: log.logEndOffset, highWatermark: log.highWatermark,
        leaderLogEndOffset: () => log.writtenEndOffset,
        alterPartition: (proposal) => replication.alterPartition(topic.name, index, proposal),
        replicaLagTimeMaxMs: replication.replicaLagTimeMaxMs, isReplicaIsrEligible: replication.isReplicaIsrEligible, now: Date.now,
        // An older leadership's answers (an AlterPartition that was in flight) must not move the new one's.
        onHighWatermark: (hw) => partition.role?.kind === 'leader' && partition.role.replicas === replicas && this.onHighWatermark(partition, hw),
        onIsrChanged: (change) => (change === 'shrink' ? this.metrics?.replica.isrShrinks : this.metrics?.replica.isrExpands)?.inc(),
      });
      partition.role = { kind: 'leader', leaderEpoch: state.leaderEpoch, replicas };
      log.setReplicatedHighWatermark(replicas.highWatermark);
      replicas.onLeaderAppend(); // alone in the ISR, the high watermark is the log end at once
      this.roleChanged(partition);
    });
  }

  /**
   * This broker follows `state.leader` (Kafka's makeFollower): client writes and reads are refused
   * (acks=all produces waiting here answer NOT_LEADER_OR_FOLLOWER), and the fetchers fetch from the
   * leader, truncating first where the logs diverge. Without a leader (-1) it waits.
   */
  makeFollower(topic: TopicRecord, index: number, state: PartitionAssignment): Promise<void> {
    return this.inRoleTurn(topic, index, async (partition) => {
      const replication = this.replication!;
      const role = partition.role;
      if (role?.kind === 'follower' && role.leaderEpoch === state.leaderEpoch && role.leader === state.leader) return;
      const { log } = partition;
      partition.role = { kind: 'follower', leaderEpoch: state.leaderEpoch, leader: state.leader };
      log.setReplicatedHighWatermark(Math.min(log.highWatermark, log.logEndOffset));
      this.roleChanged(partition);
      if (role?.kind === 'leader') this.leadershipEnded(topic.name, index);
      // Appends taken while it led finish writing before a fetcher may truncate the log.
      await log.whenWritten(log.logEndOffset).catch(() => undefined);
      const fetched: FollowerPartition = {
        topic: topic.name, partition: index, topicId: topic.id, leaderEpoch: state.leaderEpoch, log, highWatermark: log.highWatermark,
      };
      if (state.leader >= 0 && state.leader !== replication.brokerId) replication.fetchers.addPartitions(state.leader, [fetched]);
      else await replication.fetchers.removePartitions([{ topic: topic.name, partition: index }]);
    });
  }

  /**
   * `listener` is told whenever this broker stops leading a partition: it follows now, its replica
   * moved away, or its topic was deleted (what is kept per led partition elsewhere, such as
   * share-partitions, goes then).
   */
  onLeadershipEnded(listener: (topic: string, partition: number) => void): void {
    this.leadershipEndedListeners.push(listener);
  }

  private leadershipEnded(topic: string, partition: number): void {
    for (const listener of this.leadershipEndedListeners) listener(topic, partition);
  }

  /** The replication throttles in a cluster (their measured rates, for tests and tools); undefined on a single broker. */
  get replicationQuotas(): ReplicationQuotas | undefined {
    return this.replication?.quotas;
  }

  /** A follower's high watermark, as its leader's answers give it (the fetchers call this). */
  followerHighWatermark(topic: string, index: number, highWatermark: number): void {
    const partition = this.partition(topic, index);
    if (partition?.role?.kind === 'follower') partition.log.setReplicatedHighWatermark(Math.min(highWatermark, partition.log.logEndOffset));
  }

  /**
   * acks=all, before the append (Kafka's appendRecordsToLeader): NOT_ENOUGH_REPLICAS when the ISR
   * (on a single broker: the replicas) is smaller than min.insync.replicas.
   */
  checkEnoughReplicasForAppend(partition: Partition): number {
    const minIsr = partition.log.config.minInsyncReplicas;
    if (partition.role?.kind === 'leader') return partition.role.replicas.checkEnoughReplicasForAppend(minIsr);
    const replicas = this.metadata.topic(partition.topic)?.partitions[partition.index]?.replicas.length ?? 1;
    return minIsr > replicas ? ErrorCode.NOT_ENOUGH_REPLICAS : ErrorCode.NONE;
  }

  /**
   * acks=all, once the append is written: resolves with NONE when every in-sync replica has it up to
   * `lastOffset` (at once on a single broker), NOT_ENOUGH_REPLICAS_AFTER_APPEND when the ISR shrank
   * below min.insync.replicas meanwhile, REQUEST_TIMED_OUT after `timeoutMs`, NOT_LEADER_OR_FOLLOWER
   * when the partition stopped being led here.
   */
  waitForInSyncReplicas(partition: Partition, lastOffset: number, timeoutMs: number): Promise<number> {
    const role = partition.role;
    if (!role) return Promise.resolve(ErrorCode.NONE);
    const minIsr = partition.log.config.minInsyncReplicas;
    const result = () => (role.kind !== 'leader' || partition.role !== role || this.partition(partition.topic, partition.index) !== partition
      ? ErrorCode.NOT_LEADER_OR_FOLLOWER : role.replicas.acksAllResult(lastOffset, minIsr));
    return new Promise((resolve) => this.producePurgatory.tryCompleteElseWatch(new DelayedProduce(timeoutMs, result, resolve),
      [partitionKey(partition.topic, partition.index)]));
  }

  /** Runs a role change once the partition is open and the changes before it are applied. */
  private inRoleTurn(topic: TopicRecord, index: number, change: (partition: Partition) => Promise<void>): Promise<void> {
    return this.inPartitionTurn(topic.name, index, async () => {
      if (!this.partition(topic.name, index)) await this.adopt(topic, index);
      const partition = this.partition(topic.name, index);
      if (partition) await change(partition);
    });
  }

  /** Runs `step` once the partition's role changes before it are applied: they apply one at a time, in call order. */
  private inPartitionTurn(topic: string, index: number, step: () => Promise<void>): Promise<void> {
    const key = partitionKey(topic, index);
    const previous = this.roleChanges.get(key) ?? Promise.resolve();
    const next = previous.then(step);
    const settled = next.catch((err) => this.logger.error({ err, topic, partition: index }, 'could not change the partition role'));
    this.roleChanges.set(key, settled);
    void settled.finally(() => {
      if (this.roleChanges.get(key) === settled) this.roleChanges.delete(key);
    });
    return next;
  }

  /**
   * The partition is no longer assigned to this broker (a reassignment moved it away; Kafka's
   * StopReplica with deletePartition): its fetcher stops, what waits on it answers
   * NOT_LEADER_OR_FOLLOWER, and its log is deleted. In turn with its role changes.
   */
  replicaRemoved(topic: string, index: number): Promise<void> {
    const key = partitionKey(topic, index);
    return this.inPartitionTurn(topic, index, async () => {
      await this.adopting.get(key)?.catch(() => undefined);
      await this.replication?.fetchers.removePartitions([{ topic, partition: index }]);
      const partition = this.partitions.get(key);
      this.partitions.delete(key);
      this.fetchPurgatory.checkAndComplete(key);
      this.producePurgatory.checkAndComplete(key);
      if (partition) this.leadershipEnded(topic, index);
      // A snapshot still being written must not land in the directory being deleted.
      await partition?.log.producerState.snapshotsWritten();
      await this.logs.deletePartition(topic, index);
    });
  }

  /** The high watermark moved: consumers and acks=all produces waiting on the partition may go on. */
  private onHighWatermark(partition: Partition, highWatermark: number): void {
    if (this.partition(partition.topic, partition.index) !== partition) return;
    partition.log.setReplicatedHighWatermark(highWatermark);
    this.roleChanged(partition);
  }

  /** Wakes what waits on the partition to look again (its role or high watermark changed). */
  private roleChanged(partition: Partition): void {
    const key = partitionKey(partition.topic, partition.index);
    this.producePurgatory.checkAndComplete(key);
    this.fetchPurgatory.checkAndComplete(key);
  }

  // ------------------------------------------------------------- reads

  /**
   * The partition a request names, if we lead it, and its current leader epoch; else the error Kafka
   * answers (ReplicaManager.getPartitionOrException: unknown, then offline; then
   * Partition.checkCurrentLeaderEpoch: an older currentLeaderEpoch FENCED_LEADER_EPOCH, a newer one
   * UNKNOWN_LEADER_EPOCH).
   */
  leaderPartition(topic: string, index: number, currentLeaderEpoch: number): LeaderPartition | { errorCode: number } {
    const meta = this.metadata.topic(topic)?.partitions[index];
    const partition = meta ? this.partition(topic, index) : undefined;
    // Still loading at start-up: Kafka answers this for a partition it does not host (yet); clients retry.
    if (meta && !partition && this.partitionLoading(topic, index)) return { errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER };
    if (!meta || !partition) return { errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION };
    if (partition.log.offline) return { errorCode: ErrorCode.KAFKA_STORAGE_ERROR };
    const leaderEpoch = this.leaderEpoch(partition);
    if (currentLeaderEpoch !== NO_LEADER_EPOCH) {
      if (currentLeaderEpoch < leaderEpoch) return { errorCode: ErrorCode.FENCED_LEADER_EPOCH };
      if (currentLeaderEpoch > leaderEpoch) return { errorCode: ErrorCode.UNKNOWN_LEADER_EPOCH };
    }
    // Kafka checks the epoch first: a client behind on the leader's epoch learns it is fenced.
    if (!this.leads(partition)) return { errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER };
    return { partition, leaderEpoch };
  }

  /** Whether this broker leads the partition: always on a single broker; in a cluster, once made its leader. */
  private leads(partition: Partition): boolean {
    return this.replication === undefined || partition.role?.kind === 'leader';
  }

  /** The partition's current leader epoch: its role's in a cluster, the metadata's on a single broker. */
  leaderEpoch(partition: Partition): number {
    return partition.role?.leaderEpoch ?? this.metadata.topic(partition.topic)?.partitions[partition.index]?.leaderEpoch ?? 0;
  }

  /**
   * Reads partitions for a fetch (Kafka's ReplicaManager.fetchMessages), one result per partition in
   * order, within the fetch's byte budget (readWithinBudget). When fewer than minBytes are there and
   * no partition failed, it waits on the fetch purgatory until appends bring enough bytes or maxWaitMs
   * passes, then reads again. A read_committed wait counts the bytes appended to a partition only
   * once its last stable offset has moved, so it wakes when a marker ends the transaction it waits
   * behind (Kafka counts the bytes below the LSO: with a large minBytes, data appended before the
   * wait began is not counted here). A follower that reported a high watermark below the leader's
   * (Fetch v18+, KIP-1166) is answered at once, and a wait ends when the leader's passes it.
   *
   * Replication throttling (Kafka's shouldLeaderThrottle): a follower out of the ISR gets no records
   * of a partition its topic throttles here while the leader quota is exceeded, as if there were
   * none (it takes none of the budget, nor KIP-74's first-batch allowance); it fetches again. Such a
   * partition does not end the follower's wait either, by bytes (as Kafka's DelayedFetch) or by high
   * watermark news (the follower would only ask again at once). The records sent of throttled
   * partitions are recorded on the quota.
   */
  async fetchMessages(params: FetchParams, partitions: readonly FetchPartition[]): Promise<FetchPartitionResult[]> {
    const replicaId = params.replicaId ?? -1;
    const throttled = (p: FetchPartition): boolean => replicaId >= 0 && this.shouldLeaderThrottle(p.topic, p.partition, replicaId);
    const read = (p: FetchPartition, maxBytes: number, minOneMessage: boolean): Promise<FetchPartitionResult> => {
      const found = this.leaderPartition(p.topic, p.partition, p.currentLeaderEpoch);
      if ('errorCode' in found) return Promise.resolve(failedRead(found.errorCode, params.isolation));
      const { log, role } = found.partition;
      if (replicaId >= 0 && role?.kind === 'leader') {
        const diverging = divergingEpoch(log, p);
        // Kafka: the end of the last fetched epoch unknown here is out of range for the follower.
        if (diverging?.epoch === -1) return Promise.resolve({ ...failedRead(ErrorCode.OFFSET_OUT_OF_RANGE, params.isolation), ...logOffsets(log) });
        if (diverging) return Promise.resolve({ ...failedRead(ErrorCode.NONE, params.isolation), ...logOffsets(log), divergingEpoch: diverging });
        // A follower's fetch offset says what it has (Kafka's updateFollowerFetchState): the ISR and
        // high watermark may move before the read, which then carries the new high watermark.
        if (!role.replicas.updateFollowerFetch(replicaId, p.fetchOffset)) {
          return Promise.resolve(failedRead(ErrorCode.NOT_LEADER_OR_FOLLOWER, params.isolation));
        }
        // Read for nothing: the offsets and an out-of-range fetch offset are answered as usual.
        if (throttled(p)) return readLog(log, log.lastStableOffset, p.fetchOffset, 0, false, params);
      }
      return readLog(log, log.lastStableOffset, p.fetchOffset, maxBytes, minOneMessage, params);
    };
    let results = await readWithinBudget(partitions, params.maxBytes, read);
    const available = results.reduce((n, r) => n + r.records.length, 0);
    const hasError = results.some((r) => r.errorCode !== ErrorCode.NONE);
    const followerBehind = results.some((r, i) => r.highWatermark > (partitions[i].replicaHighWatermark ?? Infinity) && !throttled(partitions[i]));
    if (params.maxWaitMs > 0 && available < params.minBytes && !hasError && !followerBehind && partitions.length > 0) {
      const waitStarted = performance.now();
      await this.waitForData(partitions, params.maxWaitMs, params.minBytes - available, params.isolation, throttled);
      params.waited?.(waitStarted);
      results = await readWithinBudget(partitions, params.maxBytes, read);
    }
    if (replicaId >= 0) this.recordThrottledBytes(partitions, results);
    this.countReads(partitions, results, replicaId >= 0);
    return results;
  }

  /** Each partition read in its topic's meters (BrokerTopicMetrics): topics not hosted here have none. */
  private countReads(partitions: readonly FetchPartition[], results: readonly FetchPartitionResult[], follower: boolean): void {
    const topics = this.metrics.topics;
    let topic = '';
    let meters = topics.find(topic);
    for (let i = 0; i < partitions.length; i++) {
      const p = partitions[i];
      if (p.topic !== topic) {
        topic = p.topic;
        meters = topics.find(topic);
      }
      const r = results[i];
      topics.read(meters, r.records.length, !UNCOUNTED_READ_ERRORS.has(r.errorCode), follower);
    }
  }

  /**
   * Kafka's shouldLeaderThrottle: the partition is led here, the follower is not in its ISR (an
   * in-sync one is never slowed, or the ISR would thrash), its topic throttles it here, and the leader
   * quota is exceeded.
   */
  private shouldLeaderThrottle(topic: string, index: number, replicaId: number): boolean {
    const quota = this.replication?.quotas?.leader;
    const role = this.partition(topic, index)?.role;
    return quota !== undefined && role?.kind === 'leader' && !role.replicas.isr.includes(replicaId)
      && quota.isThrottled(topic, index) && quota.isQuotaExceeded();
  }

  /** The leader quota counts what a follower's answer carries of throttled partitions (Kafka's KafkaApis does). */
  private recordThrottledBytes(partitions: readonly FetchPartition[], results: readonly FetchPartitionResult[]): void {
    const quota = this.replication?.quotas?.leader;
    if (!quota) return;
    let bytes = 0;
    for (const [i, p] of partitions.entries()) if (quota.isThrottled(p.topic, p.partition)) bytes += results[i].records.length;
    if (bytes > 0) quota.record(bytes);
  }

  /**
   * Waits until appends to these partitions add `missingBytes` (read_committed: to partitions whose
   * last stable offset moved), a partition disappears or is replaced, its high watermark passes the
   * one the follower reported, or the wait ends. Partitions `throttled` at the time of a check count for nothing.
   */
  private waitForData(
    partitions: readonly FetchPartition[], maxWaitMs: number, missingBytes: number, isolation: FetchIsolation, throttled: (p: FetchPartition) => boolean,
  ): Promise<void> {
    // Bytes appended count once the bound of what the fetch may read has moved past them: the last
    // stable offset for read_committed, a replicated partition's high watermark for other consumers.
    const bound = (p: Partition): number =>
      isolation === 'txn-committed' ? p.log.lastStableOffset : isolation === 'high-watermark' && p.role ? p.log.highWatermark : -1;
    const watched = partitions.map((p) => ({ p, partition: this.partition(p.topic, p.partition) })).map(({ p, partition }) => ({
      p, partition, appendedAtStart: partition?.appendedBytes ?? 0, lsoAtStart: partition ? bound(partition) : -1,
      replicaHighWatermark: p.replicaHighWatermark ?? Infinity,
    }));
    const readableBytesSince = (): number | undefined => {
      let added = 0;
      for (const w of watched) {
        if (!w.partition) continue;
        if (this.partition(w.partition.topic, w.partition.index) !== w.partition) return undefined;
        if (throttled(w.p)) continue;
        if (w.partition.log.highWatermark > w.replicaHighWatermark) return undefined;
        // Bytes behind an open transaction (or not yet replicated) are not readable yet.
        if (w.lsoAtStart >= 0 && bound(w.partition) === w.lsoAtStart) continue;
        added += w.partition.appendedBytes - w.appendedAtStart;
      }
      return added;
    };
    const keys = [...new Set(partitions.map((p) => partitionKey(p.topic, p.partition)))];
    return new Promise((resolve) => this.fetchPurgatory.tryCompleteElseWatch(new DelayedFetch(maxWaitMs, missingBytes, readableBytesSince, resolve), keys));
  }

  /**
   * ListOffsets v1+ (Kafka's Partition.fetchOffsetForTimestamp, see offsetForTimestamp): the offset
   * for `timestamp` in a partition we lead, bounded by what `isolation` may read. Rejects when the
   * log cannot be read.
   */
  async fetchOffsetForTimestamp(
    topic: string, index: number, currentLeaderEpoch: number, timestamp: number, isolation: FetchIsolation,
  ): Promise<OffsetLookup> {
    const leader = this.leaderPartition(topic, index, currentLeaderEpoch);
    if ('errorCode' in leader) return { errorCode: leader.errorCode, ...NOT_FOUND };
    const { partition: p, leaderEpoch } = leader;
    const lastFetchableOffset = isolation === 'log-end' ? p.log.logEndOffset
      : isolation === 'txn-committed' ? p.log.lastStableOffset : p.log.highWatermark;
    return { errorCode: ErrorCode.NONE, ...await offsetForTimestamp(p.log, leaderEpoch, timestamp, lastFetchableOffset) };
  }

  /**
   * ListOffsets v0 (Kafka's Partition.legacyFetchOffsetsForTimestamp, see legacyOffsetsBefore),
   * capped at the high watermark for a consumer. Rejects when the log cannot be read.
   */
  async legacyFetchOffsetsForTimestamp(
    topic: string, index: number, timestamp: number, maxNumOffsets: number, isFromConsumer: boolean,
  ): Promise<{ errorCode: number; offsets: number[] }> {
    const leader = this.leaderPartition(topic, index, NO_LEADER_EPOCH);
    if ('errorCode' in leader) return { errorCode: leader.errorCode, offsets: [] };
    const { log } = leader.partition;
    const offsets = await legacyOffsetsBefore(log, timestamp, maxNumOffsets);
    const hw = log.highWatermark;
    const capped = isFromConsumer && offsets.some((o) => o > hw) ? [hw, ...offsets.filter((o) => o <= hw)] : offsets;
    return { errorCode: ErrorCode.NONE, offsets: capped };
  }

  /** OffsetForLeaderEpoch (Kafka's Partition.lastOffsetForLeaderEpoch, see lastOffsetForLeaderEpoch). */
  lastOffsetForLeaderEpoch(
    topic: string, index: number, currentLeaderEpoch: number, requestedEpoch: number,
  ): { errorCode: number; epoch: number; endOffset: number } {
    const leader = this.leaderPartition(topic, index, currentLeaderEpoch);
    if ('errorCode' in leader) return { errorCode: leader.errorCode, epoch: -1, endOffset: -1 };
    return { errorCode: ErrorCode.NONE, ...lastOffsetForLeaderEpoch(leader.partition.log, leader.leaderEpoch, requestedEpoch) };
  }

  // ------------------------------------------------------------- TopicStorage

  async partitionsCreated(topic: TopicRecord, fromPartition: number): Promise<void> {
    this.logs.updateConfig(topic.name, this.topicConfig(topic));
    for (const p of topic.partitions) {
      // In a cluster, only the partitions assigned to this broker (a single broker has them all).
      if (p.index < fromPartition || this.partition(topic.name, p.index) || !p.replicas.includes(this.config.nodeId)) continue;
      await this.adopt(topic, p.index);
    }
  }

  async topicDeleted(topic: TopicRecord): Promise<void> {
    // A topic deleted while the broker starts: its logs may still be loading.
    await this.loaded.catch(() => undefined);
    await this.replication?.fetchers.removePartitions(topic.partitions.map((p) => ({ topic: topic.name, partition: p.index })));
    this.replication?.quotas?.leader.removeThrottle(topic.name);
    this.replication?.quotas?.follower.removeThrottle(topic.name);
    const snapshots: Array<Promise<void>> = [];
    for (const p of topic.partitions) {
      const key = partitionKey(topic.name, p.index);
      const partition = this.partitions.get(key);
      if (partition) snapshots.push(partition.log.producerState.snapshotsWritten());
      this.partitions.delete(key);
      this.fetchPurgatory.checkAndComplete(key);
      this.producePurgatory.checkAndComplete(key);
      if (partition) this.leadershipEnded(topic.name, p.index);
    }
    // A snapshot still being written must not land in the directory of a topic re-created under the name.
    await Promise.all(snapshots);
    await this.logs.deleteTopic(topic.name);
    this.metrics.topics.remove(topic.name);
  }

  configsChanged(topic: TopicRecord): void {
    this.logs.updateConfig(topic.name, this.topicConfig(topic));
    this.applyThrottles(topic);
  }

  /**
   * The topic's throttled replicas on this broker, from its configs, into the quotas (Kafka's
   * TopicConfigHandler): leader.replication.throttled.replicas and follower.replication.throttled.replicas.
   */
  private applyThrottles(topic: TopicRecord): void {
    const quotas = this.replication?.quotas;
    if (!quotas) return;
    for (const [quota, name] of [[quotas.leader, 'leader.replication.throttled.replicas'], [quotas.follower, 'follower.replication.throttled.replicas']] as const) {
      const throttled = throttledPartitionsOf(topic.configs[name], this.replication!.brokerId);
      if (throttled === undefined) quota.removeThrottle(topic.name);
      else quota.markThrottled(topic.name, throttled);
    }
  }

  private topicConfig(topic: TopicRecord): TopicLogConfig {
    return resolveTopicConfig(this.config, topic.configs);
  }

  // ------------------------------------------------------------- produce

  /**
   * Validates one partition's records and appends them, as Kafka's LogValidator and
   * UnifiedLog.append do. The checks that need no records read (the batch header, CRC, sizes,
   * timestamps) answer at once. A compressed batch that validateRecordsInline does not take is
   * decompressed and its records checked off the event loop, started here, and the append queues for
   * its turn (a promise); so does any append while the partition has appends queued. Otherwise
   * everything up to the write is synchronous. The place in the partition's order is taken at call
   * time either way. A transaction version 2 producer's first transactional write to the partition
   * (Produce v12+) first has the partition added to its transaction, and queues behind that.
   */
  append(partition: Partition, records: Buffer | null, leaderEpoch: number, opts: AppendOptions): AppendResult {
    const config = partition.log.config;
    if (records === null || records.length === 0) {
      return this.appendFailed(partition, failedAppend(ErrorCode.INVALID_RECORD), 0);
    }
    const scan = scanBatches(records, { maxBatchBytes: config.maxMessageBytes, produceVersion: opts.produceVersion });
    if (!scan.ok) return this.appendFailed(partition, failedAppend(scan.errorCode), records.length);
    const batch = scan.batches[0];
    const timestampType = config.messageTimestampType === 'LogAppendTime' ? TimestampType.LOG_APPEND_TIME : TimestampType.CREATE_TIME;
    const timestampError = checkTimestamps(batch, opts.nowMs, config.messageTimestampBeforeMaxMs,
      config.messageTimestampAfterMaxMs, timestampType);
    if (timestampError) return this.appendFailed(partition, failedAppend(timestampError.errorCode), records.length);
    const bytes = records.subarray(0, scan.validBytes);
    // Records are read only when a feature needs it: compaction needs every record to have a key, and a
    // compressed batch must decompress to exactly its recordCount well-formed records (else every consumer
    // would fail at its offset forever). The batch is still stored as sent, never re-compressed. A large
    // compressed batch (or any zstd one on Node 20) is checked off the event loop while the append queues.
    let checked: Promise<AppendCheck> | undefined;
    if (batch.compression !== Compression.NONE || config.compact) {
      const checks = { nowMs: opts.nowMs, timestampType, compacted: config.compact, maxDecompressedBytes: MAX_DECOMPRESSED_BATCH_BYTES };
      const inline = validateRecordsInline(records, batch, checks);
      if (inline === null) checked = validateRecords(records, batch, checks);
      else if (!inline.ok) return this.appendFailed(partition, refusedAppend(inline), records.length);
    }
    if (batch.isTransactional && opts.produceVersion >= FIRST_ADDING_PRODUCE_VERSION) {
      const added = this.addPartitionToTransaction(partition, batch, opts);
      if (added) checked = checked ? Promise.all([checked, added]).then(([a, b]) => (a.ok ? b : a)) : added;
    }
    if (checked || partition.appendQueue) {
      return this.queue(partition, checked, () => this.write(partition, bytes, batch, leaderEpoch, opts),
        (refused) => this.appendFailed(partition, refused, records.length));
    }
    return this.write(partition, bytes, batch, leaderEpoch, opts);
  }

  /**
   * Counts a refused append in its topic's meters (BrokerTopicMetrics) and returns it: a failed
   * produce unless Kafka does not count its error as one; `bytes` rejected if it was too large.
   */
  private appendFailed(partition: Partition, append: PartitionAppend, bytes: number): PartitionAppend {
    this.metrics.topics.appendFailed(partition.meters, UNCOUNTED_APPEND_ERRORS.has(append.errorCode) ? 'uncounted' : 'failed',
      append.errorCode === ErrorCode.MESSAGE_TOO_LARGE ? bytes : 0);
    return append;
  }

  /**
   * Kafka's ReplicaManager with the ADD_PARTITION operation: unless the producer already has a
   * transaction open here at this epoch, the transaction coordinator adds the partition to its
   * transaction; undefined when there is nothing to add. A write that lands after its transaction
   * ended meets the marker's bumped epoch and is refused by the producer-state check.
   */
  private addPartitionToTransaction(partition: Partition, batch: BatchInfo, opts: AppendOptions): Promise<AppendCheck> | undefined {
    if (!this.addToTransaction || !opts.transactionalId || (opts.origin ?? 'client') !== 'client') return undefined;
    if (partition.log.producerState.hasOngoingTransaction(batch.producerId, batch.producerEpoch)) return undefined;
    return this.addToTransaction(opts.transactionalId, batch.producerId, batch.producerEpoch, partition.topic, partition.index)
      .then((errorCode): AppendCheck => (errorCode === ErrorCode.NONE ? CHECKED
        : { ok: false, errorCode, errorMessage: 'the partition could not be added to the transaction', recordErrors: [] }));
  }

  /**
   * Runs `turn` once the appends queued on the partition before it have had theirs and `checked`
   * (this append's record validation, already running) has settled; records that fail it are refused
   * there, and the appends behind go on. An append whose partition was deleted while it waited fails
   * as Kafka's ReplicaManager answers for a partition it does not host.
   */
  private queue(partition: Partition, checked: Promise<AppendCheck> | undefined, turn: () => PartitionAppend,
    refuse: (append: PartitionAppend) => PartitionAppend = (append) => append): Promise<PartitionAppend> {
    const queue = (partition.appendQueue ??= { last: Promise.resolve(), waiting: 0 });
    queue.waiting++;
    const result = Promise.all([checked, queue.last]).then(([valid]) => {
      const current = this.partition(partition.topic, partition.index);
      if (current !== partition) return failedAppend(current ? ErrorCode.NOT_LEADER_OR_FOLLOWER : ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
      return valid && !valid.ok ? refuse(refusedAppend(valid)) : turn();
    });
    queue.last = result.then(() => undefined, () => undefined).finally(() => {
      if (--queue.waiting === 0 && partition.appendQueue === queue) partition.appendQueue = undefined;
    });
    return result;
  }

  /**
   * An append's turn (Kafka's UnifiedLog.append after validation): the producer-state check, the
   * transaction verification, offsets, the write and the producer-state update, with no await between.
   */
  private write(partition: Partition, bytes: Buffer, batch: BatchInfo, leaderEpoch: number, opts: AppendOptions): PartitionAppend {
    const { log } = partition;
    if (!this.leads(partition)) return this.appendFailed(partition, failedAppend(ErrorCode.NOT_LEADER_OR_FOLLOWER), 0);
    const logAppendTime = log.config.messageTimestampType === 'LogAppendTime';
    const producerBatch = producerBatchOf(batch);
    if (producerBatch) {
      const transactionV2 = producerBatch.isTransactional && opts.produceVersion >= FIRST_ADDING_PRODUCE_VERSION;
      const check = log.producerState.checkBatch(producerBatch, opts.origin, transactionV2);
      if (check.kind === 'duplicate') {
        this.metrics.topics.appended(partition.meters, 0, 0);
        return { errorCode: ErrorCode.NONE, errorMessage: null, recordErrors: [], baseOffset: check.firstOffset, lastOffset: check.lastOffset,
          logAppendTimeMs: logAppendTime ? check.timestamp : -1, logStartOffset: log.logStartOffset,
          done: log.whenWritten(check.lastOffset + 1) };
      }
      if (check.kind === 'error') return this.appendFailed(partition, failedAppend(check.errorCode), 0);
      if (producerBatch.isTransactional && opts.transactionalId && this.verifyTransaction && (opts.origin ?? 'client') === 'client'
        && !log.producerState.hasOngoingTransaction(producerBatch.producerId, producerBatch.producerEpoch)) {
        const errorCode = this.verifyTransaction(opts.transactionalId, producerBatch.producerId, producerBatch.producerEpoch,
          partition.topic, partition.index, opts.produceVersion);
        if (errorCode !== ErrorCode.NONE) return this.appendFailed(partition, failedAppend(errorCode), 0);
      }
    }

    assignOffsets(bytes, batch, log.logEndOffset, leaderEpoch, logAppendTime ? opts.nowMs : null);
    let appended;
    try {
      appended = log.append(bytes);
    } catch (err) {
      if (err instanceof StorageError) return this.appendFailed(partition, failedAppend(err.errorCode), 0);
      throw err;
    }
    this.metrics.topics.appended(partition.meters, bytes.length, appended.lastOffset - appended.baseOffset + 1);
    if (producerBatch) {
      log.producerState.recordBatch(producerBatch, appended.baseOffset, appended.lastOffset,
        logAppendTime ? opts.nowMs : batch.maxTimestamp);
    }
    const done = appended.done.then(() => this.onAppended(partition, bytes.length), (e) => this.onWriteFailed(partition, e));
    done.catch(() => undefined); // acks=0 never awaits it: a failed write must not be an unhandled rejection
    return {
      errorCode: ErrorCode.NONE, errorMessage: null, recordErrors: [], baseOffset: appended.baseOffset, lastOffset: appended.lastOffset,
      logAppendTimeMs: logAppendTime ? opts.nowMs : -1, logStartOffset: log.logStartOffset, done,
    };
  }

  /**
   * Writes a COMMIT or ABORT marker for a producer's transaction (Kafka: the WriteTxnMarkers
   * path, ReplicaManager.appendRecords with origin COORDINATOR): checks it against the producer
   * state (an older producer epoch is INVALID_PRODUCER_EPOCH, an older coordinator epoch
   * TRANSACTION_COORDINATOR_FENCED), assigns its offset, ends the transaction and, for an abort,
   * records it in the transaction index. A producer without an open transaction here still gets
   * its marker written. The last stable offset moves once the marker is written. Like any append, it
   * queues behind the partition's appends waiting their turn (a promise then).
   */
  appendTxnMarker(partition: Partition, marker: TxnMarker, nowMs: number): AppendResult {
    if (partition.appendQueue) return this.queue(partition, undefined, () => this.writeTxnMarker(partition, marker, nowMs));
    return this.writeTxnMarker(partition, marker, nowMs);
  }

  private writeTxnMarker(partition: Partition, marker: TxnMarker, nowMs: number): PartitionAppend {
    const { log } = partition;
    if (!this.leads(partition)) return failedAppend(ErrorCode.NOT_LEADER_OR_FOLLOWER);
    const producers = log.producerState;
    const offset = log.logEndOffset;
    const check = producers.checkMarker(marker, offset);
    if (check.kind === 'error') return failedAppend(check.errorCode);
    // Stamped with the log's latest leader epoch: the current one (a new leader records its epoch's start).
    const bytes = buildEndTxnMarker({
      ...marker, baseOffset: offset, partitionLeaderEpoch: log.latestEpoch() ?? 0, timestamp: nowMs,
    });
    const completed = check.completed;
    let appended;
    try {
      appended = log.append(bytes, completed?.isAborted ? completed : undefined);
    } catch (err) {
      if (err instanceof StorageError) return failedAppend(err.errorCode);
      throw err;
    }
    producers.recordMarker(marker, completed, nowMs);
    const done = appended.done.then(() => {
      producers.onHighWatermarkUpdated(log.highWatermark);
      this.onAppended(partition, bytes.length);
    }, (e) => this.onWriteFailed(partition, e));
    done.catch(() => undefined);
    return {
      errorCode: ErrorCode.NONE, errorMessage: null, recordErrors: [], baseOffset: appended.baseOffset, lastOffset: appended.lastOffset,
      logAppendTimeMs: -1, logStartOffset: log.logStartOffset, done,
    };
  }

  /**
   * Bytes are in the log: delayed fetches on the partition may have what they wait for. After a
   * roll, the producer state is snapshotted at the log end, as Kafka does at every roll, so that
   * recovery after a crash replays at most the active segment.
   */
  private onAppended(partition: Partition, bytes: number): void {
    partition.appendedBytes += bytes;
    if (partition.role?.kind === 'leader') partition.role.replicas.onLeaderAppend();
    this.fetchPurgatory.checkAndComplete(partitionKey(partition.topic, partition.index));
    const { log } = partition;
    if (log.activeSegmentBaseOffset !== partition.snapshotSegment) {
      partition.snapshotSegment = log.activeSegmentBaseOffset;
      const end = log.logEndOffset;
      log.producerState.writeSnapshot(log.dir, end, log.whenWritten(end))
        .catch((err) => this.logger.warn({ dir: log.dir, err }, 'could not write the producer-state snapshot at a roll'));
    }
  }

  /** An append failed: rebuild the producer state once (see the file comment), then pass the error on. */
  private onWriteFailed(partition: Partition, e: unknown): never {
    const { log } = partition;
    if (log.refusingWrites && !partition.rebuilding) {
      partition.rebuilding = log.loadProducerState().then(() => log.resumeWrites(), (err) => {
        // The log cannot even be read back: it stays refusing writes, as an offline log would.
        this.logger.error({ dir: log.dir, err }, 'could not rebuild producer state after a failed write');
      }).finally(() => {
        partition.rebuilding = undefined;
      });
    }
    throw e;
  }

  async close(): Promise<void> {
    this.config.off('change', this.brokerConfigChanged);
    clearInterval(this.expiryTimer);
    clearInterval(this.isrExpiryTimer);
    await this.replication?.fetchers.close();
    this.producePurgatory.shutdown();
    this.loading = false;
    this.fetchPurgatory.shutdown();
    this.timer.close();
    for (const p of this.partitions.values()) {
      await p.rebuilding;
      const producers = p.log.producerState;
      await producers.snapshotsWritten();
      if (producers.activeProducers().size === 0) continue;
      // Without it (a full disk) the next start replays more of the log.
      await producers.writeSnapshot(p.log.dir, p.log.logEndOffset)
        .catch((err) => this.logger.warn({ dir: p.log.dir, err }, 'could not write the producer-state snapshot'));
    }
    await this.logs.close();
  }
}
