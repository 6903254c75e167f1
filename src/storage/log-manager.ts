/**
 * All partition logs of one data directory (Kafka's LogManager).
 *
 * Layout, as Kafka's:
 *   <dataDir>/<topic>-<partition>/                 one PartitionLog each
 *   <dataDir>/<topic>-<partition>.<uuid>-delete/   a deleted partition, removed in the background
 *   <dataDir>/recovery-point-offset-checkpoint     "topic partition offset": below it, each log is fsynced
 *   <dataDir>/log-start-offset-checkpoint          "topic partition offset": each log's start offset
 *   <dataDir>/.kafka_cleanshutdown                 written by close(), removed by open()
 * The data dir is shared with the metadata store; other entries are ignored.
 *
 * Start-up: with the clean-shutdown marker, logs are opened without
 * validation; without it (a crash), each log validates the segments after
 * its checkpointed recovery point and cuts a torn or corrupt tail. The
 * marker is removed (and the removal fsynced) before any log is opened, so a
 * crash later on is always recovered. Directories left by an interrupted
 * topic deletion are removed. start() does the loading in the background,
 * a few logs at a time, telling the caller as each is ready, so that the
 * broker can serve the partitions already loaded (open() waits for all).
 *
 * Checkpoints: recovery points every recoveryPointCheckpointIntervalMs (as
 * Kafka's log.flush.offset.checkpoint.interval.ms) and on close; a stale one
 * only means more validation after a crash. Log start offsets are written
 * whenever one moves, before DeleteRecords answers, and on close. Both are
 * rewritten after a topic deletion, so a re-created topic never inherits them.
 *
 * Flushing: a timer flushes each log whose flush.ms has elapsed since its
 * last flush (checked every flushCheckIntervalMs, Kafka's
 * log.flush.scheduler.interval.ms). See log-writer.ts for what each
 * setting guarantees.
 *
 * Cleanup: every retentionCheckIntervalMs (log.retention.check.interval.ms)
 * each log with cleanup.policy delete drops the segments past retention.ms /
 * retention.bytes (PartitionLog.deleteOldSegments); with log.cleaner.enable
 * the log cleaner (log-cleaner.ts) compacts the logs with cleanup.policy
 * compact. Both run on timers, off the request path, and stop on close.
 */
import { randomUUID } from 'crypto';
import * as fs from 'fs';
import * as path from 'path';
import type { Logger } from 'pino';
import type { TopicLogConfig } from '../config/topic-config';
import { CheckpointFile, CorruptCheckpointError, checkpointNumber, fsyncDirectory, readCheckpoint } from './checkpoint-file';
import { StorageError } from './errors';
import { writeFileAtomically } from '../common/durable-file';
import { LogCleaner, type CleanerConfig } from './log-cleaner';
import { PartitionLog, partitionKey } from './partition-log';
import type { ProducerStateManager } from './producer-state';

export const CLEAN_SHUTDOWN_FILE = '.kafka_cleanshutdown';
export const RECOVERY_POINT_CHECKPOINT_FILE = 'recovery-point-offset-checkpoint';
export const LOG_START_OFFSET_CHECKPOINT_FILE = 'log-start-offset-checkpoint';
export const DELETE_DIR_SUFFIX = '-delete';

const PARTITION_DIR_RE = /^([a-zA-Z0-9._-]+)-(\d+)$/;
const DELETE_DIR_RE = /^.+-\d+\.[0-9a-f]{32}-delete$/;
const TOPIC_NAME_RE = /^[a-zA-Z0-9._-]+$/;
/** Logs opened at the same time during start-up (I/O overlaps; validation is CPU-bound). */
const OPEN_CONCURRENCY = 4;

export interface LogManagerOptions {
  dataDir: string;
  /** Config of a topic without overrides: resolveTopicConfig(brokerConfig). */
  defaults: TopicLogConfig;
  log: Logger;
  /** Config of a topic found on disk at open (overrides applied); default `defaults`. */
  configFor?: (topic: string) => TopicLogConfig;
  /** How often flush.ms is checked (Kafka's log.flush.scheduler.interval.ms); default 1000. */
  flushCheckIntervalMs?: number;
  /** How often recovery points are checkpointed; default 60000. */
  recoveryPointCheckpointIntervalMs?: number;
  /** How often retention is enforced (log.retention.check.interval.ms); default 300000. */
  retentionCheckIntervalMs?: number;
  /** The log cleaner's settings; without them (log.cleaner.enable=false) compacted topics are not cleaned. */
  cleaner?: CleanerConfig;
  /** A partition's producer state (the cleaner keeps live producers' last batches and stops at the last stable offset). */
  producers?: (log: PartitionLog) => ProducerStateManager | undefined;
  /** Wall clock in ms (tests replace it). */
  now?: () => number;
  /** start(): called as each log found at start-up is loaded. */
  onLogLoaded?: (log: PartitionLog) => void;
}

interface Deferred<T> {
  promise: Promise<T>;
  resolve: (v: T) => void;
  reject: (e: unknown) => void;
}

function deferred<T>(): Deferred<T> {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

type OffsetsByPartition = Map<string, number>;


/** Kafka's LocalLog.logDeleteDirName: `<topic>-<partition>.<uuid>-delete`, the topic cut to keep the name within 255 bytes. */
function deleteDirName(topic: string, partition: number): string {
  const suffix = `-${partition}.${randomUUID().replace(/-/g, '')}${DELETE_DIR_SUFFIX}`;
  return topic.slice(0, Math.max(0, 255 - suffix.length)) + suffix;
}

async function exists(file: string): Promise<boolean> {
  try {
    await fs.promises.access(file);
    return true;
  } catch {
    return false;
  }
}

export class LogManager {
  readonly dataDir: string;
  private readonly logger: Logger;
  private readonly now: () => number;
  private defaults: TopicLogConfig;
  private readonly configFor?: (topic: string) => TopicLogConfig;

  private readonly topics = new Map<string, Map<number, PartitionLog>>();
  private readonly topicConfigs = new Map<string, TopicLogConfig>();
  private readonly creating = new Map<string, Promise<PartitionLog>>();
  /** Logs found at start-up and not loaded yet, with their checkpointed offsets. */
  private readonly notLoaded = new Map<string, { recoveryPoint?: number; logStartOffset?: number }>();
  /** Settles when every log found at start-up is loaded (see start()). */
  loaded: Promise<void> = Promise.resolve();
  private readonly deletions = new Set<Promise<void>>();

  private readonly recoveryPointCheckpoint: CheckpointFile;
  private readonly logStartOffsetCheckpoint: CheckpointFile;
  private readonly timers: NodeJS.Timeout[] = [];
  private cleaner?: LogCleaner;
  private closed = false;

  private constructor(opts: LogManagerOptions) {
    this.dataDir = opts.dataDir;
    this.logger = opts.log;
    this.now = opts.now ?? Date.now;
    this.defaults = opts.defaults;
    this.configFor = opts.configFor;
    this.recoveryPointCheckpoint = new CheckpointFile(path.join(this.dataDir, RECOVERY_POINT_CHECKPOINT_FILE));
    this.logStartOffsetCheckpoint = new CheckpointFile(path.join(this.dataDir, LOG_START_OFFSET_CHECKPOINT_FILE));
  }

  /** Loads every `<topic>-<partition>` directory of dataDir (see the file comment); resolves once all are loaded. */
  static async open(opts: LogManagerOptions): Promise<LogManager> {
    const manager = await LogManager.start(opts);
    await manager.loaded;
    return manager;
  }

  /**
   * open() that resolves as soon as the directories are listed: the logs are opened (after a
   * crash, recovered) in the background, OPEN_CONCURRENCY at a time, `opts.onLogLoaded` hears of
   * each as it is ready, and `loaded` settles when all are (rejects if one fails: then every log
   * is closed). Meanwhile get() knows only the loaded logs, isLoading() the others, getOrCreate()
   * waits for them, and the checkpoints keep the values of those not loaded yet.
   */
  static async start(opts: LogManagerOptions): Promise<LogManager> {
    const started = process.hrtime.bigint();
    await fs.promises.mkdir(opts.dataDir, { recursive: true });
    const manager = new LogManager(opts);
    const marker = path.join(opts.dataDir, CLEAN_SHUTDOWN_FILE);
    const hadCleanShutdown = await exists(marker);
    const recoveryPoints = await manager.readOffsets(RECOVERY_POINT_CHECKPOINT_FILE);
    const startOffsets = await manager.readOffsets(LOG_START_OFFSET_CHECKPOINT_FILE);
    if (hadCleanShutdown) {
      // Before any log can take an append: a crash from now on must be recovered.
      await fs.promises.rm(marker, { force: true });
      await fsyncDirectory(opts.dataDir);
    }

    const toOpen: Array<{ topic: string; partition: number; loaded: Deferred<PartitionLog> }> = [];
    for (const entry of await fs.promises.readdir(opts.dataDir, { withFileTypes: true })) {
      if (!entry.isDirectory()) continue;
      if (DELETE_DIR_RE.test(entry.name)) {
        manager.removeDirectoryInBackground(path.join(opts.dataDir, entry.name));
        continue;
      }
      const m = PARTITION_DIR_RE.exec(entry.name);
      if (!m) continue;
      const key = partitionKey(m[1], Number(m[2]));
      const loaded = deferred<PartitionLog>();
      toOpen.push({ topic: m[1], partition: Number(m[2]), loaded });
      manager.creating.set(key, loaded.promise);
      manager.notLoaded.set(key, { recoveryPoint: recoveryPoints.get(key), logStartOffset: startOffsets.get(key) });
    }

    let next = 0;
    const worker = async () => {
      while (next < toOpen.length && !manager.closed) {
        const { topic, partition, loaded } = toOpen[next++];
        const key = partitionKey(topic, partition);
        try {
          const log = await manager.openLog(topic, partition, manager.configOf(topic), { hadCleanShutdown, ...manager.notLoaded.get(key) });
          manager.addLog(log);
          manager.notLoaded.delete(key);
          loaded.resolve(log);
          opts.onLogLoaded?.(log);
        } catch (e) {
          loaded.reject(e);
          throw e;
        } finally {
          manager.creating.delete(key);
        }
      }
    };
    manager.loaded = (async () => {
      try {
        await Promise.all(Array.from({ length: OPEN_CONCURRENCY }, worker));
      } catch (e) {
        // Leave the checkpoints alone: they still describe the logs that did not load.
        manager.closed = true;
        for (const { loaded } of toOpen) loaded.reject(e);
        await Promise.allSettled(manager.allLogs().map((l) => l.close({ flush: false })));
        throw e;
      }
      if (manager.closed) {
        // Closed while loading: the logs never opened are left as they are on disk.
        const closedError = new StorageError('KAFKA_STORAGE_ERROR', 'The log manager is closed');
        for (const { topic, partition, loaded } of toOpen) {
          loaded.reject(closedError);
          manager.creating.delete(partitionKey(topic, partition));
        }
        return;
      }
      manager.startTimers(opts);
      if (opts.cleaner) {
        manager.cleaner = await LogCleaner.open({
          dataDir: opts.dataDir, config: opts.cleaner, logs: () => manager.allLogs(), producers: opts.producers, logger: opts.log, now: opts.now,
        });
        manager.cleaner.start();
      }
      opts.log.info(
        { dataDir: opts.dataDir, partitions: toOpen.length, cleanShutdown: hadCleanShutdown, ms: Number(process.hrtime.bigint() - started) / 1e6 },
        'logs loaded',
      );
    })();
    manager.loaded.catch(() => undefined); // the caller awaits it; a failure must not go unhandled meanwhile
    for (const { loaded } of toOpen) loaded.promise.catch(() => undefined);
    return manager;
  }

  /** True while the log of this partition, found at start-up, is still being loaded. */
  isLoading(topic: string, partition: number): boolean {
    return this.notLoaded.has(partitionKey(topic, partition));
  }

  private async readOffsets(file: string): Promise<OffsetsByPartition> {
    const full = path.join(this.dataDir, file);
    const out: OffsetsByPartition = new Map();
    try {
      for (const [topic, partition, offset] of await readCheckpoint(full, 3)) {
        out.set(partitionKey(topic, checkpointNumber(full, partition)), checkpointNumber(full, offset));
      }
    } catch (e) {
      if (!(e instanceof CorruptCheckpointError)) throw e;
      // Kafka resets to 0 too: for recovery points that means validating everything.
      this.logger.warn({ file: full, err: e.message }, 'ignoring a corrupt checkpoint file');
      out.clear();
    }
    return out;
  }

  private startTimers(opts: LogManagerOptions): void {
    const flushTimer = setInterval(() => void this.flushDueLogs(), opts.flushCheckIntervalMs ?? 1000);
    const checkpointTimer = setInterval(() => {
      this.checkpointRecoveryPoints().catch((e) => this.logger.error({ err: e }, 'could not write the recovery point checkpoint'));
    }, opts.recoveryPointCheckpointIntervalMs ?? 60_000);
    const retentionTimer = setInterval(() => void this.deleteOldSegments(), opts.retentionCheckIntervalMs ?? 300_000);
    flushTimer.unref();
    checkpointTimer.unref();
    retentionTimer.unref();
    this.timers.push(flushTimer, checkpointTimer, retentionTimer);
  }

  /** The log cleaner, when log.cleaner.enable. */
  get logCleaner(): LogCleaner | undefined {
    return this.cleaner;
  }

  /** Retention on every log (Kafka's LogManager.cleanupLogs); resolves with the number of segments deleted. */
  async deleteOldSegments(): Promise<number> {
    let deleted = 0;
    for (const log of this.allLogs()) {
      try {
        deleted += await log.deleteOldSegments();
      } catch (e) {
        this.logger.error({ dir: log.dir, err: e }, 'retention failed');
      }
    }
    return deleted;
  }

  /** Flushes every log whose flush.ms has elapsed since its last flush and that has unflushed data. */
  async flushDueLogs(): Promise<void> {
    const now = this.now();
    const flushes: Array<Promise<void>> = [];
    for (const log of this.allLogs()) {
      if (log.offline || log.highWatermark <= log.recoveryPoint) continue;
      if (now - log.lastFlushTime < log.config.flushMs) continue;
      flushes.push(log.flush().catch((e) => this.logger.error({ dir: log.dir, err: e }, 'scheduled flush failed')));
    }
    await Promise.all(flushes);
  }

  private configOf(topic: string): TopicLogConfig {
    return this.topicConfigs.get(topic) ?? this.configFor?.(topic) ?? this.defaults;
  }

  private openLog(
    topic: string,
    partition: number,
    config: TopicLogConfig,
    state: { hadCleanShutdown: boolean; recoveryPoint?: number; logStartOffset?: number },
  ): Promise<PartitionLog> {
    return PartitionLog.open({
      dir: path.join(this.dataDir, partitionKey(topic, partition)),
      topic,
      partition,
      config,
      logger: this.logger,
      now: this.now,
      persistLogStartOffset: () => this.checkpointLogStartOffsets(),
      ...state,
    });
  }

  private addLog(log: PartitionLog): void {
    let partitions = this.topics.get(log.topic);
    if (!partitions) this.topics.set(log.topic, (partitions = new Map()));
    partitions.set(log.partition, log);
  }

  private ensureOpen(): void {
    if (this.closed) throw new StorageError('KAFKA_STORAGE_ERROR', 'The log manager is closed');
  }

  // ---------------------------------------------------------------- partitions

  get(topic: string, partition: number): PartitionLog | undefined {
    return this.topics.get(topic)?.get(partition);
  }

  /** The partition's log, created (empty, at offset 0) if it does not exist. `config` also becomes the topic's config. */
  async getOrCreate(topic: string, partition: number, config?: TopicLogConfig): Promise<PartitionLog> {
    this.ensureOpen();
    if (!TOPIC_NAME_RE.test(topic) || topic === '.' || topic === '..') throw new Error(`Invalid topic name for a log directory: '${topic}'`);
    if (!Number.isInteger(partition) || partition < 0) throw new Error(`Invalid partition ${partition}`);
    if (config) this.updateConfig(topic, config);
    const existing = this.get(topic, partition);
    if (existing) return existing;
    const key = partitionKey(topic, partition);
    let creating = this.creating.get(key);
    if (!creating) {
      // A new directory has nothing to trust: recoveryPoint 0 validates whatever might be there.
      creating = this.openLog(topic, partition, this.configOf(topic), { hadCleanShutdown: false, recoveryPoint: 0 })
        .then(async (log) => {
          await fsyncDirectory(this.dataDir); // the new partition directory itself must survive a power loss
          this.addLog(log);
          return log;
        })
        .finally(() => this.creating.delete(key));
      this.creating.set(key, creating);
    }
    return creating;
  }

  /** Every open log (DescribeLogDirs). */
  allLogs(): PartitionLog[] {
    const out: PartitionLog[] = [];
    for (const partitions of this.topics.values()) out.push(...partitions.values());
    return out;
  }

  /** Applies a topic's effective config to its logs (and to partitions created later). */
  updateConfig(topic: string, config: TopicLogConfig): void {
    this.topicConfigs.set(topic, config);
    for (const log of this.topics.get(topic)?.values() ?? []) log.updateConfig(config);
  }

  /** New broker-level defaults, for topics without a config of their own. */
  updateDefaults(defaults: TopicLogConfig): void {
    this.defaults = defaults;
    for (const [topic, partitions] of this.topics) {
      if (this.topicConfigs.has(topic)) continue;
      const config = this.configOf(topic);
      for (const log of partitions.values()) log.updateConfig(config);
    }
  }

  /**
   * Deletes a topic's logs as Kafka does: each partition is closed, its
   * directory renamed to `<topic>-<partition>.<uuid>-delete` (so a restart
   * never loads it and finishes the deletion), and removed in the
   * background. Resolves once the renames are durable.
   */
  async deleteTopic(topic: string): Promise<void> {
    this.ensureOpen();
    await Promise.allSettled([...this.creating.entries()].filter(([k]) => k.startsWith(topic + '-')).map(([, p]) => p));
    const partitions = this.topics.get(topic);
    this.topicConfigs.delete(topic);
    if (!partitions) return;
    this.topics.delete(topic);
    for (const log of partitions.values()) {
      await log.close({ flush: false });
      await this.cleaner?.forget(topic, log.partition);
      const target = path.join(this.dataDir, deleteDirName(topic, log.partition));
      await fs.promises.rename(log.dir, target);
      this.removeDirectoryInBackground(target);
    }
    await fsyncDirectory(this.dataDir);
    await Promise.all([this.checkpointRecoveryPoints(), this.checkpointLogStartOffsets()]);
    this.logger.info({ topic, partitions: partitions.size }, 'deleted topic logs');
  }

  /**
   * Deletes one partition's log (its replica moved to other brokers: Kafka's StopReplica with
   * deletePartition), as deleteTopic deletes each: closed, renamed to its `-delete` name, removed
   * in the background. Resolves once the rename is durable; nothing to do for a log not open here.
   */
  async deletePartition(topic: string, partition: number): Promise<void> {
    this.ensureOpen();
    await this.creating.get(partitionKey(topic, partition))?.catch(() => undefined);
    const partitions = this.topics.get(topic);
    const log = partitions?.get(partition);
    if (!partitions || !log) return;
    partitions.delete(partition);
    if (partitions.size === 0) this.topics.delete(topic);
    await log.close({ flush: false });
    await this.cleaner?.forget(topic, partition);
    const target = path.join(this.dataDir, deleteDirName(topic, partition));
    await fs.promises.rename(log.dir, target);
    this.removeDirectoryInBackground(target);
    await fsyncDirectory(this.dataDir);
    await Promise.all([this.checkpointRecoveryPoints(), this.checkpointLogStartOffsets()]);
    this.logger.info({ topic, partition }, 'deleted partition log');
  }

  private removeDirectoryInBackground(dir: string): void {
    const removal = fs.promises
      .rm(dir, { recursive: true, force: true })
      .catch((e) => this.logger.error({ dir, err: e }, 'could not remove a deleted log directory'))
      .finally(() => this.deletions.delete(removal));
    this.deletions.add(removal);
  }

  /** Resolves when every directory deletion started so far has finished. */
  async deletionsSettled(): Promise<void> {
    await Promise.all([...this.deletions]);
  }

  // ---------------------------------------------------------------- checkpoints

  checkpointRecoveryPoints(): Promise<void> {
    return this.recoveryPointCheckpoint.write(() => this.checkpointEntries((l) => l.recoveryPoint, (o) => o.recoveryPoint));
  }

  checkpointLogStartOffsets(): Promise<void> {
    return this.logStartOffsetCheckpoint.write(() => this.checkpointEntries((l) => l.logStartOffset, (o) => o.logStartOffset));
  }

  /** Every loaded log's value, and the value read at start-up for each log still loading. */
  private checkpointEntries(
    ofLog: (log: PartitionLog) => number,
    ofNotLoaded: (offsets: { recoveryPoint?: number; logStartOffset?: number }) => number | undefined,
  ): Array<[string, number, number]> {
    const entries: Array<[string, number, number]> = this.allLogs().map((l) => [l.topic, l.partition, ofLog(l)]);
    for (const [key, offsets] of this.notLoaded) {
      const value = ofNotLoaded(offsets);
      const m = PARTITION_DIR_RE.exec(key);
      if (value !== undefined && m) entries.push([m[1], Number(m[2]), value]);
    }
    return entries;
  }

  /** Total and free bytes of the data dir's file system (DescribeLogDirs v4). */
  async diskUsage(): Promise<{ totalBytes: number; usableBytes: number }> {
    const s = await fs.promises.statfs(this.dataDir);
    return { totalBytes: s.blocks * s.bsize, usableBytes: s.bavail * s.bsize };
  }

  // ---------------------------------------------------------------- close

  /**
   * Clean shutdown: waits for pending appends, flushes and closes every log,
   * writes both checkpoints, then the clean-shutdown marker (only if every
   * log closed cleanly).
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const t of this.timers) clearInterval(t);
    await this.cleaner?.close();
    await Promise.allSettled([...this.creating.values()]);
    let clean = true;
    await Promise.all(
      this.allLogs().map(async (log) => {
        try {
          if (log.offline) clean = false;
          await log.close();
        } catch (e) {
          clean = false;
          this.logger.error({ dir: log.dir, err: e }, 'error closing a log');
        }
      }),
    );
    try {
      await Promise.all([this.checkpointRecoveryPoints(), this.checkpointLogStartOffsets()]);
    } catch (e) {
      // A full disk: the old checkpoints stay, and without the marker the next start recovers.
      clean = false;
      this.logger.error({ err: e }, 'could not write the checkpoints at shutdown');
    }
    await this.deletionsSettled();
    if (clean) {
      // Atomically: a marker cut short by a full disk must not exist (it would skip recovery).
      await writeFileAtomically(path.join(this.dataDir, CLEAN_SHUTDOWN_FILE), JSON.stringify({ version: 0, brokerEpoch: -1 }))
        .catch((e) => this.logger.error({ err: e }, 'could not write the clean-shutdown marker; the next start recovers the logs'));
    }
  }
}
