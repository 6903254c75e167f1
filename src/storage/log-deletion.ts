/**
 * What takes data out of a partition log: DeleteRecords (the log start
 * offset), retention (deleteOldSegments: retention.ms, retention.bytes; the
 * LogManager calls it every log.retention.check.interval.ms), truncation, and
 * the cleaner's segment swaps (compaction.ts writes compacted segments beside
 * the log and hands them to replaceSegments, which swaps them in crash-safely;
 * log-loader.ts finishes or undoes a swap a crash interrupted). Each runs as a
 * task in the writer loop, so it is ordered with appends and with the others.
 *
 * A segment taken out of the log is retired: its files are renamed to
 * `*.deleted` at once, and closed and removed after file.delete.delay.ms, so
 * reads already holding it complete (Kafka's asynchronous segment deletion).
 * Appends and reads never wait for any of this.
 */
import { fsyncDirectory } from './checkpoint-file';
import { StorageError } from './errors';
import type { LocalLog } from './local-log';
import type { LogSegment } from './log-segment';
import { CLEANED_FILE_SUFFIX, SWAP_FILE_SUFFIX } from './segment-files';
import type { LogWriter } from './log-writer';

interface Retiring {
  segment: LogSegment;
  timer?: NodeJS.Timeout;
  done: Promise<void>;
  finish: () => void;
}

/** Kafka's LogSegment.largestTimestamp: the largest record timestamp, or the file's modification time when there is none. */
async function largestTimestampOrFileTime(segment: LogSegment): Promise<number> {
  const ts = await segment.largestTimestamp();
  return ts >= 0 ? ts : (await segment.fileHandle.stat()).mtimeMs;
}

export class LogDeletion {
  private retiring = new Set<Retiring>();

  constructor(
    private readonly log: LocalLog,
    private readonly writer: LogWriter,
  ) {}

  /**
   * DeleteRecords: moves the log start offset up to `offset` (<= high
   * watermark, else OFFSET_OUT_OF_RANGE) and deletes the segments entirely
   * below it. Resolves with the new log start offset once it is durable.
   */
  async deleteRecordsBefore(offset: number): Promise<number> {
    const log = this.log;
    this.writer.ensureWritable();
    if (offset < 0 || offset > log.highWatermark) {
      throw new StorageError(
        'OFFSET_OUT_OF_RANGE',
        `Cannot increment the log start offset to ${offset} of partition ${log.topic}-${log.partition} since it is larger than the high watermark ${log.highWatermark}`,
      );
    }
    await this.advanceLogStartOffset(offset);
    return log.logStartOffset;
  }

  /**
   * Moves the log start offset up to `offset` (never back), retires the segments wholly below it
   * and resolves once the new start is durable: what DeleteRecords and retention both do.
   */
  private async advanceLogStartOffset(offset: number): Promise<void> {
    const log = this.log;
    if (offset <= log.logStartOffset) return;
    log.logStartOffset = offset;
    log.epochs.truncateFromStart(offset);
    const renames: Array<Promise<void>> = [];
    while (log.segments.length > 1 && log.segments[1].baseOffset <= offset) renames.push(this.retire(log.segments.shift()!));
    await Promise.all(renames);
    await log.persistLogStartOffset?.();
  }

  /**
   * Retention (Kafka's deleteOldSegments), for cleanup.policy with delete:
   * removes the oldest segments while retention.ms (against a segment's
   * largest timestamp, its file time when it has none) or retention.bytes
   * says so, and moves the log start offset past them. Whole segments only,
   * below the high watermark. When every segment has expired the active one is
   * rolled first, as Kafka does: the log starts over, empty, at its end offset,
   * and the segment taking appends is never the one deleted. Resolves with the
   * number of segments deleted.
   */
  deleteOldSegments(): Promise<number> {
    if (!this.log.config.delete || !this.log.isOpen) return Promise.resolve(0);
    let deleted = 0;
    return this.writer.enqueueTask(async () => {
      deleted = await this.deleteExpiredSegments();
    }).then(() => deleted);
  }

  private async deleteExpiredSegments(): Promise<number> {
    const log = this.log;
    const { retentionMs, retentionBytes } = log.config;
    const now = log.now();
    let excessBytes = retentionBytes >= 0 ? log.size - retentionBytes : 0;
    const doomed: LogSegment[] = [];
    for (let i = 0; i < log.segments.length; i++) {
      const segment = log.segments[i];
      const last = i === log.segments.length - 1;
      if (log.highWatermark < (last ? segment.nextOffset : log.segments[i + 1].baseOffset) || (last && segment.size === 0)) break;
      const expired = retentionMs >= 0 && now - (await largestTimestampOrFileTime(segment)) > retentionMs;
      if (!expired && excessBytes < segment.size) break;
      excessBytes -= segment.size;
      doomed.push(segment);
    }
    if (doomed.length === 0) return 0;
    if (doomed.length === log.segments.length) await this.writer.roll(log.activeSegment.nextOffset);
    const previousStart = log.logStartOffset;
    // The log start is inside the first segment, so the segment after the doomed ones starts past it.
    await this.advanceLogStartOffset(log.segments[doomed.length].baseOffset);
    log.logger.info(
      { dir: log.dir, segments: doomed.map((s) => s.baseOffset), bytes: doomed.reduce((n, s) => n + s.size, 0), retentionMs, retentionBytes, logStartOffset: log.logStartOffset, previousLogStartOffset: previousStart },
      'deleted segments past retention',
    );
    return doomed.length;
  }

  /** An empty segment at baseOffset for the cleaner to write (`*.cleaned` files, this log's index settings). */
  createCleanedSegment(baseOffset: number): Promise<LogSegment> {
    return this.log.createSegment(baseOffset, CLEANED_FILE_SUFFIX);
  }

  /**
   * Puts a cleaned segment (written and fsynced by the cleaner) in place of
   * `old`, a run of inactive segments (Kafka's replaceSegments), crash-safely
   * (see log-loader.ts completeSwaps): renames it to `.swap`, swaps it into
   * the segment list in one step (in the writer loop, so retention and
   * truncation see either list), retires the old segments (readers in flight
   * keep their open files for file.delete.delay.ms), and renames it to its
   * final name. Resolves false, and drops the cleaned segment, when `old` is
   * no longer all in the log (retention or DeleteRecords removed some meanwhile).
   */
  async replaceSegments(cleaned: LogSegment, old: LogSegment[]): Promise<boolean> {
    const log = this.log;
    await cleaned.changeFileSuffix(SWAP_FILE_SUFFIX);
    await fsyncDirectory(log.dir);
    let replaced = false;
    await this.writer.enqueueTask(async () => {
      const at = log.segments.indexOf(old[0]);
      replaced = log.state === 'open' && at >= 0 && at + old.length < log.segments.length && old.every((s, i) => log.segments[at + i] === s);
      if (replaced) log.segments.splice(at, old.length, cleaned);
    });
    if (!replaced) {
      await cleaned.markDeleted();
      await cleaned.deleteFiles();
      return false;
    }
    await Promise.all(old.map((s) => this.retire(s)));
    await cleaned.changeFileSuffix('');
    await fsyncDirectory(log.dir);
    return true;
  }

  /**
   * Removes the batches containing offsets >= offset (Kafka's truncateTo);
   * the next append gets `offset`. Queued behind pending appends.
   */
  truncateTo(offset: number): Promise<void> {
    const log = this.log;
    this.writer.ensureWritable();
    if (!(offset >= 0)) throw new RangeError(`Cannot truncate to offset ${offset}`);
    if (offset >= log.logEndOffset) return Promise.resolve();
    log.logEndOffset = offset;
    log.highWatermark = Math.min(log.highWatermark, offset);
    log.hwMark = undefined;
    log.recoveryPoint = Math.min(log.recoveryPoint, offset);
    const truncation = ++log.truncations;
    log.epochs.truncateFromEnd(offset);
    const startMoved = offset < log.logStartOffset;
    if (startMoved) log.logStartOffset = offset;
    return this.writer.enqueueTask(async () => {
      while (log.segments.length > 1 && log.activeSegment.baseOffset > offset) this.retire(log.segments.pop()!);
      const active = log.activeSegment;
      if (active.baseOffset > offset) {
        log.segments = [await log.createSegment(offset)];
        this.retire(active);
        log.dirChanged = true;
      } else {
        await active.truncateTo(offset, log.now());
      }
      if (log.truncations === truncation) log.hwMark = { segment: log.activeSegment, position: log.activeSegment.size };
      if (startMoved) await log.persistLogStartOffset?.();
    });
  }

  /** Resolves when every segment deleted so far is gone from disk (file.delete.delay.ms after its deletion). */
  async segmentDeletionsSettled(): Promise<void> {
    await Promise.all([...this.retiring].map((e) => e.done));
  }

  /** Removes the files of every retired segment now, without waiting out file.delete.delay.ms (closing the log). */
  async finishAll(): Promise<void> {
    for (const entry of [...this.retiring]) await this.finishRetiring(entry);
  }

  /** Takes a segment out of the log (see the file comment). */
  private retire(segment: LogSegment): Promise<void> {
    const log = this.log;
    let finish!: () => void;
    const entry: Retiring = { segment, done: new Promise<void>((r) => (finish = r)), finish: () => finish() };
    this.retiring.add(entry);
    log.dirChanged = true;
    return segment.markDeleted().then(
      () => {
        if (!this.retiring.has(entry)) return;
        entry.timer = setTimeout(() => void this.finishRetiring(entry), log.config.fileDeleteDelayMs);
        entry.timer.unref();
      },
      (e) => {
        log.logger.error({ dir: log.dir, segment: segment.baseOffset, err: e }, 'could not rename a deleted segment');
        void this.finishRetiring(entry);
      },
    );
  }

  private async finishRetiring(entry: Retiring): Promise<void> {
    if (!this.retiring.delete(entry)) return entry.done;
    if (entry.timer) clearTimeout(entry.timer);
    try {
      await entry.segment.deleteFiles();
    } catch (e) {
      this.log.logger.error({ dir: this.log.dir, segment: entry.segment.baseOffset, err: e }, 'could not delete a segment');
    }
    entry.finish();
  }
}
