/**
 * All partition logs of the log dirs (log.dirs; Kafka's LogManager).
 *
 * Layout of each log dir, as Kafka's:
 *   <logDir>/<topic>-<partition>/                 one PartitionLog each
 *   <logDir>/<topic>-<partition>.<uuid>-delete/   a deleted partition, removed in the background
 *   <logDir>/<topic>-<partition>.<uuid>-future/   a copy being made by a move to this dir (see replica-move.ts)
 *   <logDir>/recovery-point-offset-checkpoint     "topic partition offset": below it, each log of the dir is fsynced
 *   <logDir>/log-start-offset-checkpoint          "topic partition offset": each log's start offset
 *   <logDir>/cleaner-offset-checkpoint            the log cleaner's (log-cleaner.ts)
 *   <logDir>/.kafka_cleanshutdown                 written by close(), removed by open()
 *   <logDir>/meta.properties                      node.id, cluster.id, directory.id, version=1 (KIP-858), as Kafka
 *                                                 writes it; in the first dir (the data dir) the metadata store owns it
 * The data dir, the first, is shared with the metadata store; other entries are ignored.
 *
 * Several dirs: a new partition goes to the online dir with the fewest partitions (futures
 * counted), as Kafka's nextLogDirs. A partition found in two dirs at start-up is refused, as
 * Kafka refuses it. A dir that cannot be read at start-up is offline (logged): nothing is placed
 * or moved there, DescribeLogDirs says KAFKA_STORAGE_ERROR; the data dir must be readable.
 * moveLog() copies a partition's log to another dir while it keeps serving (replica-move.ts).
 *
 * Start-up, in each dir: with the clean-shutdown marker, logs are opened without
 * validation; without it (a crash), each log validates the segments after
 * its checkpointed recovery point and cuts a torn or corrupt tail. The
 * marker is removed (and the removal fsynced) before any log is opened, so a
 * crash later on is always recovered. Directories left by an interrupted
 * topic deletion are removed, and so are the copies of an interrupted move
 * (a `-future` dir alone is a finished move: see settleFutureDirs). start() does the loading in the background,
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
 * the log cleaner (log-cleaner.ts), one per dir with its checkpoint there,
 * compacts the logs with cleanup.policy compact, but not one being moved.
 * Both run on timers, off the request path, and stop on close.
 */
import { randomUUID } from 'crypto';
import * as fs from 'fs';
import * as path from 'path';
import type { Logger } from 'pino';
import type { TopicLogConfig } from '../config/topic-config';
import type { ProgressTask, ProgressTracker } from '../metrics/progress';
import type { LogMetrics } from '../metrics/state-instruments';
import { CheckpointFile, CorruptCheckpointError, checkpointNumber, fsyncDirectory, readCheckpoint } from './checkpoint-file';
import { formatProperties, parseProperties } from '../config/properties';
import { StorageError } from './errors';
import { writeFileAtomically } from '../common/durable-file';
import { randomKafkaUuid } from '../common/kafka-uuid';
import { LogCleaner, type CleanerConfig } from './log-cleaner';
import { PartitionLog, partitionKey } from './partition-log';
import { ReplicaMove } from './replica-move';
import type { ProducerStateManager } from './producer-state';

export const CLEAN_SHUTDOWN_FILE = '.kafka_cleanshutdown';
export const RECOVERY_POINT_CHECKPOINT_FILE = 'recovery-point-offset-checkpoint';
export const LOG_START_OFFSET_CHECKPOINT_FILE = 'log-start-offset-checkpoint';
export const DELETE_DIR_SUFFIX = '-delete';
export const FUTURE_DIR_SUFFIX = '-future';
export const META_PROPERTIES_FILE = 'meta.properties';

const PARTITION_DIR_RE = /^([a-zA-Z0-9._-]+)-(\d+)$/;
const DELETE_DIR_RE = /^.+-\d+\.[0-9a-f]{32}-delete$/;
const FUTURE_DIR_RE = /^([a-zA-Z0-9._-]+)-(\d+)\.[0-9a-f]{32}-future$/;
const TOPIC_NAME_RE = /^[a-zA-Z0-9._-]+$/;
/** Logs opened at the same time during start-up (I/O overlaps; validation is CPU-bound). */
const OPEN_CONCURRENCY = 4;

export interface LogManagerOptions {
  /** The first log dir, where the metadata store lives too. */
  dataDir: string;
  /** Every log dir (log.dirs), absolute, dataDir first; default [dataDir]. */
  logDirs?: readonly string[];
  /** Written to meta.properties in each log dir but the data dir, checked against the one found there. */
  identity?: { nodeId: number; clusterId: string };
  /** replica.alter.log.dirs.io.max.bytes.per.second, read at each chunk a move copies. */
  moveBytesPerSecond?: () => number;
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
  /** Where flushes and the cleaner are measured (the broker's metrics). */
  metrics?: LogMetrics;
  /** Where the loading at start-up and the cleanings report their progress. */
  progress?: ProgressTracker;
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

/** What start-up finds in a log dir. */
interface DirListing {
  hadCleanShutdown: boolean;
  recoveryPoints: OffsetsByPartition;
  startOffsets: OffsetsByPartition;
  partitions: Array<{ topic: string; partition: number; name: string }>;
  futures: Array<{ topic: string; partition: number; name: string }>;
}

/** One log dir and what the manager keeps for it. */
interface LogDir {
  readonly path: string;
  readonly recoveryPointCheckpoint: CheckpointFile;
  readonly logStartOffsetCheckpoint: CheckpointFile;
  cleaner?: LogCleaner;
  /** Why the dir is offline (it could not be read at start-up); undefined while online. */
  offline?: string;
}

function newLogDir(dir: string): LogDir {
  return {
    path: dir,
    recoveryPointCheckpoint: new CheckpointFile(path.join(dir, RECOVERY_POINT_CHECKPOINT_FILE)),
    logStartOffsetCheckpoint: new CheckpointFile(path.join(dir, LOG_START_OFFSET_CHECKPOINT_FILE)),
  };
}

/** Kafka's `<topic>-<partition>.<uuid>-future` (UnifiedLog.logFutureDirName). */
export function futureDirName(topic: string, partition: number): string {
  return `${partitionKey(topic, partition)}.${randomUUID().replace(/-/g, '')}${FUTURE_DIR_SUFFIX}`;
}

/** A log dir's meta.properties names another node or cluster: the broker does not start. */
export class LogDirIdentityError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LogDirIdentityError';
  }
}

/**
 * meta.properties of a log dir other than the data dir (Kafka's MetaPropertiesEnsemble): written
 * with a new directory.id when missing; one naming another node or cluster is refused, as Kafka
 * refuses to mix data of different nodes.
 */
async function ensureMetaProperties(dir: string, identity: { nodeId: number; clusterId: string }): Promise<void> {
  const file = path.join(dir, META_PROPERTIES_FILE);
  let text: string | undefined;
  try {
    text = await fs.promises.readFile(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
  if (text === undefined) {
    await writeFileAtomically(file, formatProperties([
      ['cluster.id', identity.clusterId], ['directory.id', randomKafkaUuid()], ['node.id', String(identity.nodeId)], ['version', '1'],
    ], ['', new Date().toString()]));
    return;
  }
  const props = parseProperties(text);
  const nodeId = props.get('node.id')?.trim();
  if (nodeId !== undefined && nodeId !== String(identity.nodeId)) {
    throw new LogDirIdentityError(`Stored node id ${nodeId} in ${file} doesn't match the configured node.id ${identity.nodeId}`);
  }
  const clusterId = props.get('cluster.id')?.trim();
  if (clusterId !== undefined && clusterId !== identity.clusterId) {
    throw new LogDirIdentityError(`Invalid cluster.id in ${file}. Expected ${identity.clusterId}, but read ${clusterId}`);
  }
}


/** Kafka's LocalLog.logDeleteDirName: `<topic>-<partition>.<uuid>-delete`, the topic cut to keep the name within 255 bytes. */
function deleteDirName(topic: string, partition: number): string {
  const suffix = `-${partition}.${randomUUID().replace(/-/g, '')}${DELETE_DIR_SUFFIX}`;
  return topic.slice(0, Math.max(0, 255 - suffix.length)) + suffix;
}

/**
 * The progress task of the start-up loading: bytes of the segments of the logs to open (measured
 * first: a recovery's time goes with them), done as each log is loaded. After a crash it is a
 * recovery (each log validates its unflushed segments); after a clean shutdown, a quick load.
 */
async function startLoadingTask(
  tracker: ProgressTracker, toOpen: ReadonlyArray<{ dir: LogDir; name: string; hadCleanShutdown: boolean }>, logger: Logger,
): Promise<ProgressTask> {
  const sizes = await Promise.all(toOpen.map(async ({ dir, name }) => {
    const partitionDir = path.join(dir.path, name);
    let bytes = 0;
    for (const file of await fs.promises.readdir(partitionDir).catch(() => [])) {
      if (file.endsWith('.log')) bytes += await fs.promises.stat(path.join(partitionDir, file)).then((s) => s.size, () => 0);
    }
    return bytes;
  }));
  const recovering = toOpen.some((l) => !l.hadCleanShutdown);
  return tracker.start({
    kind: 'recovery', unit: 'bytes', total: sizes.reduce((a, b) => a + b, 0), logger,
    title: `${recovering ? 'recovering' : 'loading'} ${toOpen.length} log${toOpen.length === 1 ? '' : 's'}${recovering ? ' after an unclean shutdown' : ''}`,
  });
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
  /** The first log dir. */
  readonly dataDir: string;
  /** Every log dir, the data dir first. */
  readonly logDirs: readonly string[];
  private readonly dirs: LogDir[];
  private readonly logger: Logger;
  private readonly now: () => number;
  private defaults: TopicLogConfig;
  private readonly configFor?: (topic: string) => TopicLogConfig;
  private readonly moveBytesPerSecond: () => number;
  private readonly metrics?: LogMetrics;

  private readonly topics = new Map<string, Map<number, PartitionLog>>();
  private readonly topicConfigs = new Map<string, TopicLogConfig>();
  private readonly creating = new Map<string, Promise<PartitionLog>>();
  /** The dir each partition being created goes to (counted by the placement of the next ones). */
  private readonly placing = new Map<string, LogDir>();
  /** Logs found at start-up and not loaded yet, with their dir and checkpointed offsets. */
  private readonly notLoaded = new Map<string, { dir: LogDir; recoveryPoint?: number; logStartOffset?: number }>();
  /** The moves to another dir in progress, by partition. */
  private readonly moves = new Map<string, ReplicaMove>();
  /** Settles when every log found at start-up is loaded (see start()). */
  loaded: Promise<void> = Promise.resolve();
  private readonly deletions = new Set<Promise<void>>();

  private readonly timers: NodeJS.Timeout[] = [];
  private closed = false;

  private constructor(opts: LogManagerOptions) {
    this.dataDir = opts.dataDir;
    this.logDirs = opts.logDirs ?? [opts.dataDir];
    if (this.logDirs[0] !== opts.dataDir) throw new Error('The data dir must be the first log dir');
    this.dirs = this.logDirs.map(newLogDir);
    this.logger = opts.log;
    this.now = opts.now ?? Date.now;
    this.defaults = opts.defaults;
    this.configFor = opts.configFor;
    this.moveBytesPerSecond = opts.moveBytesPerSecond ?? (() => Number.MAX_VALUE);
    this.metrics = opts.metrics;
  }

  /** Loads every `<topic>-<partition>` directory of every log dir (see the file comment); resolves once all are loaded. */
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
    const manager = new LogManager(opts);
    const listings: Array<{ dir: LogDir; listed: DirListing }> = [];
    for (const dir of manager.dirs) {
      try {
        listings.push({ dir, listed: await manager.listDir(dir, dir.path === opts.dataDir ? undefined : opts.identity) });
      } catch (e) {
        if (dir.path === opts.dataDir || e instanceof LogDirIdentityError) throw e;
        dir.offline = (e as Error).message;
        opts.log.error({ dir: dir.path, err: e }, 'log dir offline: it could not be read');
      }
    }
    const found = new Map<string, string>();
    for (const { dir, listed } of listings) {
      for (const { topic, partition, name } of listed.partitions) {
        const key = partitionKey(topic, partition);
        const other = found.get(key);
        if (other !== undefined) {
          // Kafka's message: the broker does not start.
          throw new Error(`Duplicate log directories for ${key} are found in both ${other} and ${path.join(dir.path, name)}. ` +
            'It is likely because log directory failure happened while broker was replacing current replica with future replica. ' +
            'Recover broker from this failure by manually deleting one of the two directories for this partition. ' +
            'It is recommended to delete the partition in the log directory that is known to have failed recently.');
        }
        found.set(key, path.join(dir.path, name));
      }
    }
    for (const { dir, listed } of listings) await manager.settleFutureDirs(dir, listed, found);

    const toOpen: Array<{ topic: string; partition: number; dir: LogDir; name: string; hadCleanShutdown: boolean; loaded: Deferred<PartitionLog> }> = [];
    for (const { dir, listed } of listings) {
      for (const { topic, partition, name } of listed.partitions) {
        const key = partitionKey(topic, partition);
        const loaded = deferred<PartitionLog>();
        toOpen.push({ topic, partition, dir, name, hadCleanShutdown: listed.hadCleanShutdown, loaded });
        manager.creating.set(key, loaded.promise);
        manager.notLoaded.set(key, { dir, recoveryPoint: listed.recoveryPoints.get(key), logStartOffset: listed.startOffsets.get(key) });
      }
    }

    let next = 0;
    let progress: ProgressTask | undefined;
    const worker = async () => {
      while (next < toOpen.length && !manager.closed) {
        const { topic, partition, dir, name, hadCleanShutdown, loaded } = toOpen[next++];
        const key = partitionKey(topic, partition);
        try {
          const { recoveryPoint, logStartOffset } = manager.notLoaded.get(key)!;
          const log = await manager.openLog(path.join(dir.path, name), topic, partition, manager.configOf(topic),
            { hadCleanShutdown, recoveryPoint, logStartOffset });
          manager.addLog(log);
          manager.notLoaded.delete(key);
          progress?.advance(log.size);
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
        if (opts.progress && toOpen.length > 0) progress = await startLoadingTask(opts.progress, toOpen, opts.log);
        await Promise.all(Array.from({ length: OPEN_CONCURRENCY }, worker));
        progress?.finish();
      } catch (e) {
        progress?.finish(false);
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
        for (const dir of manager.onlineDirs()) {
          dir.cleaner = await LogCleaner.open({
            dataDir: dir.path, config: opts.cleaner, producers: opts.producers, logger: opts.log, now: opts.now,
            metrics: opts.metrics, progress: opts.progress,
            // A log being moved is left alone: its files are about to be swapped.
            logs: () => manager.allLogs().filter((l) => manager.dirOf(l) === dir && !manager.moves.has(partitionKey(l.topic, l.partition))),
          });
          dir.cleaner.start();
        }
      }
      opts.log.info(
        { logDirs: manager.logDirs, partitions: toOpen.length, ms: Number(process.hrtime.bigint() - started) / 1e6 },
        'logs loaded',
      );
    })();
    manager.loaded.catch(() => undefined); // the caller awaits it; a failure must not go unhandled meanwhile
    for (const { loaded } of toOpen) loaded.promise.catch(() => undefined);
    return manager;
  }

  /**
   * Reads a log dir at start-up: its meta.properties, clean-shutdown marker (removed, durably,
   * before any log can take an append: a crash from then on must be recovered), checkpoints, and
   * the partitions in it. Directories of interrupted deletions are removed in the background.
   */
  private async listDir(dir: LogDir, identity: LogManagerOptions['identity']): Promise<DirListing> {
    await fs.promises.mkdir(dir.path, { recursive: true });
    if (identity) await ensureMetaProperties(dir.path, identity);
    const marker = path.join(dir.path, CLEAN_SHUTDOWN_FILE);
    const hadCleanShutdown = await exists(marker);
    const recoveryPoints = await this.readOffsets(dir, RECOVERY_POINT_CHECKPOINT_FILE);
    const startOffsets = await this.readOffsets(dir, LOG_START_OFFSET_CHECKPOINT_FILE);
    if (hadCleanShutdown) {
      await fs.promises.rm(marker, { force: true });
      await fsyncDirectory(dir.path);
    }
    const partitions: Array<{ topic: string; partition: number; name: string }> = [];
    const futures: Array<{ topic: string; partition: number; name: string }> = [];
    for (const entry of await fs.promises.readdir(dir.path, { withFileTypes: true })) {
      if (!entry.isDirectory()) continue;
      if (DELETE_DIR_RE.test(entry.name)) {
        this.removeDirectoryInBackground(path.join(dir.path, entry.name));
        continue;
      }
      const future = FUTURE_DIR_RE.exec(entry.name);
      if (future) {
        futures.push({ topic: future[1], partition: Number(future[2]), name: entry.name });
        continue;
      }
      const m = PARTITION_DIR_RE.exec(entry.name);
      if (m) partitions.push({ topic: m[1], partition: Number(m[2]), name: entry.name });
    }
    return { hadCleanShutdown, recoveryPoints, startOffsets, partitions, futures };
  }

  /**
   * The `-future` dirs found at start-up. Beside its partition's log (a move cut short by the
   * restart) the copy is dropped: the current log stays authoritative and a new AlterReplicaLogDirs
   * starts the move over (Kafka resumes the copy instead). Alone, it is a moved log that served
   * until the restart (a move keeps the copy's dir name until then; its old log was deleted): it
   * takes its partition's name and loads as any other.
   */
  private async settleFutureDirs(dir: LogDir, listed: DirListing, found: Map<string, string>): Promise<void> {
    for (const { topic, partition, name } of listed.futures) {
      const key = partitionKey(topic, partition);
      const from = path.join(dir.path, name);
      if (found.has(key)) {
        this.logger.info({ dir: from, current: found.get(key) }, 'dropping the copy of an unfinished log dir move');
        this.removeDirectoryInBackground(from);
        continue;
      }
      await fs.promises.rename(from, path.join(dir.path, key));
      await fsyncDirectory(dir.path);
      found.set(key, path.join(dir.path, key));
      listed.partitions.push({ topic, partition, name: key });
    }
  }

  /** True while the log of this partition, found at start-up, is still being loaded. */
  isLoading(topic: string, partition: number): boolean {
    return this.notLoaded.has(partitionKey(topic, partition));
  }

  private async readOffsets(dir: LogDir, file: string): Promise<OffsetsByPartition> {
    const full = path.join(dir.path, file);
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

  /** The log cleaner of the data dir, when log.cleaner.enable (each log dir has its own). */
  get logCleaner(): LogCleaner | undefined {
    return this.dirs[0].cleaner;
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
    dir: string,
    topic: string,
    partition: number,
    config: TopicLogConfig,
    state: { hadCleanShutdown: boolean; recoveryPoint?: number; logStartOffset?: number },
  ): Promise<PartitionLog> {
    return PartitionLog.open({
      dir, topic, partition, config, logger: this.logger, now: this.now, metrics: this.metrics,
      // Looked up at each write: a moved log persists its start offset in its new dir.
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

  // ---------------------------------------------------------------- log dirs

  private onlineDirs(): LogDir[] {
    return this.dirs.filter((d) => d.offline === undefined);
  }

  /** The log dir a log lives in (its directory's parent). */
  private dirOf(log: PartitionLog): LogDir | undefined {
    const parent = path.dirname(log.dir);
    return this.dirs.find((d) => d.path === parent);
  }

  /** The log dir a log lives in. */
  logDirOf(log: PartitionLog): string {
    return path.dirname(log.dir);
  }

  /**
   * False for a dir that could not be read at start-up, or one holding a log gone offline (an I/O
   * error: Kafka would take the whole dir offline). Throws LOG_DIR_NOT_FOUND for a path that is
   * not a log dir, as Kafka's LogManager.isLogDirOnline.
   */
  isLogDirOnline(logDir: string): boolean {
    const dir = this.dirs.find((d) => d.path === logDir);
    if (!dir) throw new StorageError('LOG_DIR_NOT_FOUND', `Log dir ${logDir} is not found in the config.`);
    if (dir.offline !== undefined) return false;
    return !this.allLogs().some((l) => l.offline && this.dirOf(l) === dir);
  }

  /**
   * Kafka's nextLogDirs: the online dir holding the fewest partitions (being created, moved there,
   * or there), the first in log.dirs order on a tie.
   */
  private nextLogDir(): LogDir {
    const counts = new Map<LogDir, number>(this.onlineDirs().map((d) => [d, 0]));
    const count = (d: LogDir | undefined) => {
      if (d && counts.has(d)) counts.set(d, counts.get(d)! + 1);
    };
    for (const log of this.allLogs()) count(this.dirOf(log));
    for (const { dir } of this.notLoaded.values()) count(dir);
    for (const dir of this.placing.values()) count(dir);
    for (const move of this.moves.values()) count(this.dirs.find((d) => d.path === move.targetDir));
    let best: LogDir | undefined;
    for (const [dir, n] of counts) if (best === undefined || n < counts.get(best)!) best = dir;
    if (!best) throw new StorageError('KAFKA_STORAGE_ERROR', `No log directory is online among ${this.logDirs.join(',')}`);
    return best;
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
      const dir = this.nextLogDir();
      this.placing.set(key, dir);
      // A new directory has nothing to trust: recoveryPoint 0 validates whatever might be there.
      creating = this.openLog(path.join(dir.path, key), topic, partition, this.configOf(topic), { hadCleanShutdown: false, recoveryPoint: 0 })
        .then(async (log) => {
          await fsyncDirectory(dir.path); // the new partition directory itself must survive a power loss
          this.addLog(log);
          return log;
        })
        .finally(() => {
          this.creating.delete(key);
          this.placing.delete(key);
        });
      this.creating.set(key, creating);
    }
    return creating;
  }

  /** Every open log (DescribeLogDirs); not the copies being made by moves (futureLogs()). */
  allLogs(): PartitionLog[] {
    const out: PartitionLog[] = [];
    for (const partitions of this.topics.values()) out.push(...partitions.values());
    return out;
  }

  /** The copies being made by moves in progress (DescribeLogDirs shows them with isFuture). */
  futureLogs(): PartitionLog[] {
    const out: PartitionLog[] = [];
    for (const move of this.moves.values()) if (move.future) out.push(move.future);
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
   * Deletes a topic's logs as Kafka does: a move of one of them is cancelled (its copy deleted),
   * each partition is closed, its directory renamed to `<topic>-<partition>.<uuid>-delete` (so a
   * restart never loads it and finishes the deletion), and removed in the background. Resolves
   * once the renames are durable.
   */
  async deleteTopic(topic: string): Promise<void> {
    this.ensureOpen();
    await Promise.allSettled([...this.creating.entries()].filter(([k]) => k.startsWith(topic + '-')).map(([, p]) => p));
    const partitions = this.topics.get(topic);
    this.topicConfigs.delete(topic);
    if (!partitions) return;
    for (const log of partitions.values()) await this.moves.get(partitionKey(topic, log.partition))?.cancel();
    this.topics.delete(topic);
    const touched = new Set<string>();
    for (const log of partitions.values()) touched.add(await this.renameForDeletion(log));
    for (const dir of touched) await fsyncDirectory(dir);
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
    await this.moves.get(partitionKey(topic, partition))?.cancel();
    partitions.delete(partition);
    if (partitions.size === 0) this.topics.delete(topic);
    await fsyncDirectory(await this.renameForDeletion(log));
    await Promise.all([this.checkpointRecoveryPoints(), this.checkpointLogStartOffsets()]);
    this.logger.info({ topic, partition }, 'deleted partition log');
  }

  /**
   * Closes a log being deleted, renames its directory to its `-delete` name in its log dir and
   * starts removing it in the background; returns the log dir (to fsync).
   */
  private async renameForDeletion(log: PartitionLog): Promise<string> {
    const dir = this.dirOf(log);
    await log.close({ flush: false });
    await dir?.cleaner?.forget(log.topic, log.partition);
    const parent = path.dirname(log.dir);
    const target = path.join(parent, deleteDirName(log.topic, log.partition));
    await fs.promises.rename(log.dir, target);
    this.removeDirectoryInBackground(target);
    return parent;
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

  // ---------------------------------------------------------------- moves between log dirs

  /**
   * AlterReplicaLogDirs for one partition (Kafka's ReplicaManager.alterReplicaLogDirs): starts
   * copying its log to `logDir` (replica-move.ts), unless it is there already or being moved
   * there; a move to another dir is cancelled first. Throws StorageError LOG_DIR_NOT_FOUND,
   * KAFKA_STORAGE_ERROR (the dir, or the log, is offline) or REPLICA_NOT_AVAILABLE (no such log).
   * The move goes on in the background; whenMoved() tells when it is done.
   */
  async moveLog(topic: string, partition: number, logDir: string): Promise<void> {
    this.ensureOpen();
    if (!this.isLogDirOnline(logDir)) throw new StorageError('KAFKA_STORAGE_ERROR', `Log directory ${logDir} is offline`);
    const log = this.get(topic, partition);
    const key = partitionKey(topic, partition);
    if (!log) throw new StorageError('REPLICA_NOT_AVAILABLE', `Replica for partition ${key} is not available on this broker`);
    if (log.offline) throw new StorageError('KAFKA_STORAGE_ERROR', `The log of ${key} is offline`);
    // Another request may start a move while this one waits for a cancel: look again after each.
    for (let running = this.moves.get(key); running; running = this.moves.get(key)) {
      if (running.targetDir === logDir) return;
      await running.cancel();
      if (this.moves.get(key) === running) this.moves.delete(key);
    }
    if (this.logDirOf(log) === logDir || this.get(topic, partition) !== log) return;
    const target = this.dirs.find((d) => d.path === logDir)!;
    const move = new ReplicaMove({
      log, targetDir: logDir, logger: this.logger, bytesPerSecond: this.moveBytesPerSecond,
      openFuture: () => this.openLog(path.join(logDir, futureDirName(topic, partition)), topic, partition, log.config,
        { hadCleanShutdown: false, recoveryPoint: 0 }),
      // The old dir's cleaner must not be halfway through this log when its files are swapped.
      mayTakeOver: () => !this.dirOf(log)?.cleaner?.isCleaning(log),
      retire: (old) => this.retireMovedLog(old, target),
    });
    this.moves.set(key, move);
    move.finished.finally(() => {
      if (this.moves.get(key) === move) this.moves.delete(key);
    }).catch(() => undefined);
    await move.start();
  }

  /** Resolves when the move of this partition in progress (if any) has finished or stopped. */
  async whenMoved(topic: string, partition: number): Promise<void> {
    await this.moves.get(partitionKey(topic, partition))?.finished.catch(() => undefined);
  }

  /**
   * After a swap: the old files are closed (a read in flight on them completes first: a FileHandle
   * closes once its pending operations are done; later reads go to the new files), their directory
   * renamed to `-delete`, durably, and removed in the background; both dirs' checkpoints are
   * rewritten (the partition is now listed in its new dir's). Until the rename is durable, a crash
   * leaves the old directory authoritative (the appends since the swap are lost, as they would be
   * on a crash before it).
   */
  private async retireMovedLog(old: PartitionLog, target: LogDir): Promise<void> {
    const from = path.dirname(old.dir);
    await old.close({ flush: false });
    const doomed = path.join(from, deleteDirName(old.topic, old.partition));
    await fs.promises.rename(old.dir, doomed);
    await fsyncDirectory(from);
    this.removeDirectoryInBackground(doomed);
    await Promise.all([this.checkpointRecoveryPoints(), this.checkpointLogStartOffsets()]);
    this.logger.info({ topic: old.topic, partition: old.partition, from, to: target.path }, 'moved a log to another log dir');
  }

  // ---------------------------------------------------------------- checkpoints

  /** Each online dir's recovery-point-offset-checkpoint, with the logs in that dir. */
  async checkpointRecoveryPoints(): Promise<void> {
    await Promise.all(this.onlineDirs().map((dir) =>
      dir.recoveryPointCheckpoint.write(() => this.checkpointEntries(dir, (l) => l.recoveryPoint, (o) => o.recoveryPoint))));
  }

  /** Each online dir's log-start-offset-checkpoint, with the logs in that dir. */
  async checkpointLogStartOffsets(): Promise<void> {
    await Promise.all(this.onlineDirs().map((dir) =>
      dir.logStartOffsetCheckpoint.write(() => this.checkpointEntries(dir, (l) => l.logStartOffset, (o) => o.logStartOffset))));
  }

  /** Every loaded log's value, and the value read at start-up for each log still loading, of one dir. */
  private checkpointEntries(
    dir: LogDir,
    ofLog: (log: PartitionLog) => number,
    ofNotLoaded: (offsets: { recoveryPoint?: number; logStartOffset?: number }) => number | undefined,
  ): Array<[string, number, number]> {
    const entries: Array<[string, number, number]> = this.allLogs()
      .filter((l) => this.dirOf(l) === dir)
      .map((l) => [l.topic, l.partition, ofLog(l)]);
    for (const [key, offsets] of this.notLoaded) {
      if (offsets.dir !== dir) continue;
      const value = ofNotLoaded(offsets);
      const m = PARTITION_DIR_RE.exec(key);
      if (value !== undefined && m) entries.push([m[1], Number(m[2]), value]);
    }
    return entries;
  }

  /** Total and free bytes of a log dir's file system (DescribeLogDirs v4); the data dir's by default. */
  async diskUsage(logDir: string = this.dataDir): Promise<{ totalBytes: number; usableBytes: number }> {
    const s = await fs.promises.statfs(logDir);
    return { totalBytes: s.blocks * s.bsize, usableBytes: s.bavail * s.bsize };
  }

  // ---------------------------------------------------------------- close

  /**
   * Clean shutdown: stops the moves (their copies stay, to be dropped at the next start), waits
   * for pending appends, flushes and closes every log, writes the checkpoints, then the
   * clean-shutdown marker of each dir (only if every log closed cleanly).
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const t of this.timers) clearInterval(t);
    await Promise.all([...this.moves.values()].map((m) => m.stop()));
    await Promise.all(this.dirs.map((d) => d.cleaner?.close()));
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
      await Promise.all(this.onlineDirs().map((dir) =>
        writeFileAtomically(path.join(dir.path, CLEAN_SHUTDOWN_FILE), JSON.stringify({ version: 0, brokerEpoch: -1 }))
          .catch((e) => this.logger.error({ err: e, dir: dir.path }, 'could not write the clean-shutdown marker; the next start recovers the logs'))));
    }
  }
}
