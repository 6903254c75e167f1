/**
 * Moving a partition's log to another log dir while it keeps serving (AlterReplicaLogDirs; Kafka's
 * future replica and ReplicaAlterLogDirsThread).
 *
 * A copy, the future log, is opened empty in `<targetDir>/<topic>-<partition>.<uuid>-future`
 * with its own producer state. A loop reads whole batches from the current log (up to what is
 * written) and appends them to the future as a follower appends its leader's: batches unchanged,
 * offsets kept (a gap where retention or DeleteRecords moved the start), leader epochs and
 * transaction index entries recorded as they come. Appends, reads, retention go on meanwhile on
 * the current log. Once the future has everything written (Kafka checks equal log end offsets
 * under the partition's lock), the PartitionLog takes the future's files over
 * (PartitionLog.moveOnto): in a task of its writer, so that appends wait meanwhile, the last
 * written batches are copied, the waiting appends handed to the future's writer and the files
 * swapped in one synchronous step; every holder of the PartitionLog keeps it. The LogManager then
 * retires the old files (closed, renamed `-delete`, removed). The moved log keeps its `-future`
 * directory name until the next start, which renames it (log-manager.ts): until the old
 * directory is gone, a crash leaves the current log authoritative and the copy is dropped.
 *
 * A truncation of the current log (a follower cutting a divergent tail) starts the copy over.
 * Throttled by replica.alter.log.dirs.io.max.bytes.per.second, read at each chunk.
 */
import * as fs from 'fs';
import type { Logger } from 'pino';
import { setTimeout as sleep } from 'timers/promises';
import { StorageError } from './errors';
import type { PartitionLog } from './partition-log';

/** Most bytes read from the current log at a time. */
const CHUNK_BYTES = 1024 * 1024;
/** How long the copier waits when it has copied everything written so far. */
const CAUGHT_UP_POLL_MS = 5;

export interface ReplicaMoveOptions {
  log: PartitionLog;
  targetDir: string;
  logger: Logger;
  /** Bytes per second the copy may read (replica.alter.log.dirs.io.max.bytes.per.second). */
  bytesPerSecond: () => number;
  /** Opens the empty future log in the target dir. */
  openFuture: () => Promise<PartitionLog>;
  /** False while something else is in the middle of work on the current log's files (the cleaner). */
  mayTakeOver: () => boolean;
  /** Disposes of the old files after the swap. */
  retire: (old: PartitionLog) => Promise<void>;
}

export class ReplicaMove {
  readonly targetDir: string;
  /** The copy, while the move is in progress. */
  future?: PartitionLog;
  /** Settles once the move is done or stopped (rejects if it failed). */
  readonly finished: Promise<void>;
  private resolveFinished!: () => void;
  private rejectFinished!: (e: unknown) => void;
  private stopping = false;
  /** start() until the copy exists and copying began (or was given up). */
  private starting?: Promise<void>;
  private running?: Promise<void>;
  /** The throttle's current second: when it began and the bytes copied in it. */
  private period = { start: performance.now(), bytes: 0 };
  private readonly stopped = new AbortController();

  constructor(private readonly opts: ReplicaMoveOptions) {
    this.targetDir = opts.targetDir;
    this.finished = new Promise<void>((resolve, reject) => {
      this.resolveFinished = resolve;
      this.rejectFinished = reject;
    });
    this.finished.catch(() => undefined);
  }

  /** Opens the copy (resolves once it exists: DescribeLogDirs shows it), then copies in the background. */
  start(): Promise<void> {
    const started = this.openAndRun();
    this.starting = started.catch(() => undefined);
    return started;
  }

  private async openAndRun(): Promise<void> {
    try {
      await this.openFuture();
    } catch (e) {
      await this.dropFuture().catch(() => undefined);
      this.rejectFinished(e);
      throw new StorageError('KAFKA_STORAGE_ERROR', `Could not create the future log of ${this.opts.log.topic}-${this.opts.log.partition} in ${this.targetDir}`, { cause: e });
    }
    if (this.stopping) {
      // Cancelled (another AlterReplicaLogDirs, a topic deletion) while the copy was being created.
      await this.dropFuture();
      this.resolveFinished();
      return;
    }
    this.running = this.run().then(this.resolveFinished, (e: unknown) => {
      this.opts.logger.error({ dir: this.future?.dir, err: e }, 'moving a log to another log dir failed');
      return this.dropFuture().finally(() => this.rejectFinished(e));
    });
  }

  private async openFuture(): Promise<PartitionLog> {
    const future = this.future = await this.opts.openFuture();
    await future.loadProducerState();
    return future;
  }

  /** Stops copying and deletes the copy (AlterReplicaLogDirs to another dir, topic deletion). */
  async cancel(): Promise<void> {
    await this.stop();
    await this.dropFuture();
  }

  /** Stops copying; the copy stays on disk, closed (shutdown: the next start drops it). */
  async stop(): Promise<void> {
    this.stopping = true;
    this.stopped.abort();
    await this.starting;
    await this.running;
    await this.future?.close({ flush: false });
  }

  private async dropFuture(): Promise<void> {
    const future = this.future;
    this.future = undefined;
    if (!future) return;
    await future.close({ flush: false });
    await fs.promises.rm(future.dir, { recursive: true, force: true });
  }

  private async run(): Promise<void> {
    const { log } = this.opts;
    for (let future = this.future!; !this.stopping; future = await this.openFuture()) {
      if (await this.copy(future)) return;
      if (this.stopping) return;
      this.opts.logger.info({ topic: log.topic, partition: log.partition }, 'the log was truncated during its move: copying it again');
      await this.dropFuture();
    }
  }

  /** Copies until the swap (true), a truncation of the current log (false), or stop(). */
  private async copy(future: PartitionLog): Promise<boolean> {
    const { log } = this.opts;
    const truncations = log.truncations;
    while (!this.stopping) {
      if (log.truncations !== truncations) return false;
      if (!log.isOpen) throw new Error(`The log ${log.dir} was closed during its move`);
      if (future.logEndOffset >= log.writtenEndOffset && this.opts.mayTakeOver()) {
        const old = await log.moveOnto(future, async () => {
          await this.copyWritten(future, truncations, false);
          return log.truncations === truncations && !this.stopping;
        });
        if (old) {
          this.future = undefined;
          await this.opts.retire(old);
          return true;
        }
      } else if (await this.copyWritten(future, truncations, true) > 0) {
        continue;
      }
      await sleep(CAUGHT_UP_POLL_MS); // the rest is still being written, or the start moved past the copy
    }
    return false;
  }

  /**
   * Copies what the current log has written and the future lacks, chunk by chunk (throttled
   * when `throttled`), until done or cut short by a truncation of the current log or stop().
   * Resolves with the bytes copied.
   */
  private async copyWritten(future: PartitionLog, truncations: number, throttled: boolean): Promise<number> {
    const { log } = this.opts;
    let copied = 0;
    while (future.logEndOffset < log.writtenEndOffset && !this.stopping) {
      const from = Math.max(future.logEndOffset, log.logStartOffset);
      // No more than a segment holds (the future refuses a larger append) nor than the throttle allows
      // in a second; at least one batch is read.
      const read = await log.readBytes(from, Math.min(CHUNK_BYTES, future.config.segmentBytes, throttled ? this.opts.bytesPerSecond() : Infinity));
      if (read.outOfRange || read.records.length === 0 || log.truncations !== truncations) break;
      await future.appendAsFollower(read.records).done;
      copied += read.records.length;
      if (throttled) await this.throttle(read.records.length);
    }
    return copied;
  }

  /** Kafka's Throttler (as the cleaner's), its sleep cut short by stop(). */
  private async throttle(bytes: number): Promise<void> {
    const rate = this.opts.bytesPerSecond();
    if (!(rate > 0) || rate >= Number.MAX_SAFE_INTEGER) return;
    const now = performance.now();
    if (now - this.period.start >= 1000) this.period = { start: now, bytes: 0 };
    this.period.bytes += bytes;
    const dueMs = (this.period.bytes / rate) * 1000 - (now - this.period.start);
    if (dueMs > 0) await sleep(dueMs, undefined, { signal: this.stopped.signal }).catch(() => undefined);
  }

}
