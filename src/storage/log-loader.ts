/**
 * Opening a partition log (Kafka's LogLoader): finishes or undoes what a
 * crash interrupted (segment swaps of the cleaner, deletions), validates
 * what was not fsynced, and sets the offsets from what survived.
 *
 * After a crash, recovery validates everything after the recovery point and
 * cuts the log at the first torn or corrupt batch, so the log is always a
 * clean prefix of what was written. Each recovered segment's transaction index
 * is cut with the log; the producer-state replay puts back the entries of the
 * replayed range (PartitionLog.restoreAbortedTxn).
 */
import * as fs from 'fs';
import * as path from 'path';
import { CorruptCheckpointError, fsyncDirectory } from './checkpoint-file';
import { LEADER_EPOCH_CHECKPOINT_FILE, LeaderEpochCache } from './leader-epoch-cache';
import { LocalLog, type LocalLogOptions } from './local-log';
import { LogSegment } from './log-segment';
import { CLEANED_FILE_SUFFIX, DELETED_FILE_SUFFIX, SWAP_FILE_SUFFIX } from './segment-files';

export interface PartitionLogOptions extends LocalLogOptions {
  /** Offsets below this were fsynced (recovery-point checkpoint). Default 0: validate everything. */
  recoveryPoint?: number;
  /** From the log-start-offset checkpoint. Default: the first segment's base offset. */
  logStartOffset?: number;
  /** The data dir had the clean-shutdown marker: nothing to validate. */
  hadCleanShutdown?: boolean;
}

const SEGMENT_FILE_RE = /^(\d{20})\.(log|index|timeindex|txnindex)$/;
const SWAP_LOG_FILE_RE = /^(\d{20})\.log\.swap$/;

/**
 * Opens (or creates) the log in opts.dir: removes leftovers of interrupted
 * deletions and orphan index files; after an unclean shutdown validates every
 * segment from the one holding the recovery point on (see LogSegment.recover),
 * truncating at the first bad batch and deleting every later segment; rebuilds
 * missing or inconsistent indexes (old segments: on first use).
 */
export async function loadLog(opts: PartitionLogOptions): Promise<LocalLog> {
  await fs.promises.mkdir(opts.dir, { recursive: true });
  let epochs: LeaderEpochCache;
  try {
    epochs = await LeaderEpochCache.load(opts.dir);
  } catch (e) {
    if (!(e instanceof CorruptCheckpointError)) throw e;
    opts.logger.warn({ dir: opts.dir, err: e.message }, `ignoring a corrupt ${LEADER_EPOCH_CHECKPOINT_FILE}`);
    epochs = LeaderEpochCache.empty(opts.dir);
  }
  const log = new LocalLog(opts, epochs);
  try {
    await load(log, opts);
  } catch (e) {
    await Promise.all(log.segments.map((s) => s.closeWithoutWriting().catch(() => undefined)));
    throw e;
  }
  return log;
}

async function load(log: LocalLog, opts: PartitionLogOptions): Promise<void> {
  await completeSwaps(log);
  const names = await fs.promises.readdir(log.dir);
  const logs = new Set<number>();
  const indexes: Array<[number, string]> = [];
  for (const name of names) {
    if (name.endsWith(DELETED_FILE_SUFFIX) || name.endsWith('.tmp')) {
      await fs.promises.rm(path.join(log.dir, name), { force: true });
      continue;
    }
    const m = SEGMENT_FILE_RE.exec(name);
    if (!m) continue;
    if (m[2] === 'log') logs.add(Number(m[1]));
    else indexes.push([Number(m[1]), name]);
  }
  for (const [base, name] of indexes) {
    if (!logs.has(base)) {
      log.logger.info({ dir: log.dir, file: name }, 'removing an index file without its log file');
      await fs.promises.rm(path.join(log.dir, name), { force: true });
    }
  }

  const now = log.now();
  for (const base of [...logs].sort((a, b) => a - b)) {
    log.segments.push(await LogSegment.open(log.dir, base, log.segmentSettings(), log.logger, now));
  }

  const checkpointedStart = opts.logStartOffset ?? 0;
  const recoveryPoint = opts.recoveryPoint ?? 0;
  if (!opts.hadCleanShutdown) await recoverUnflushed(log, recoveryPoint);

  if (log.segments.length === 0) {
    log.segments.push(await LogSegment.create(log.dir, checkpointedStart, log.segmentSettings(), log.logger, now));
    log.dirChanged = true;
  }
  // After recovery the last segment is ready; after a clean shutdown read its tail (an inconsistent index is rebuilt).
  const active = log.activeSegment;
  if (!active.indexesLoaded) await active.loadAsActive();
  log.logEndOffset = active.nextOffset;

  log.logStartOffset = Math.max(checkpointedStart, log.segments[0].baseOffset);
  if (log.logStartOffset > log.logEndOffset) {
    // The durable start offset is past the data that survived: start over there (Kafka does the same).
    log.logger.warn({ dir: log.dir, logStartOffset: log.logStartOffset, logEndOffset: log.logEndOffset }, 'log start offset is past the log end; emptying the log');
    for (const s of log.segments) await log.deleteSegmentNow(s);
    log.segments = [await LogSegment.create(log.dir, log.logStartOffset, log.segmentSettings(), log.logger, now)];
    log.logEndOffset = log.logStartOffset;
  }
  while (log.segments.length > 1 && log.segments[1].baseOffset <= log.logStartOffset) await log.deleteSegmentNow(log.segments.shift()!);

  log.highWatermark = log.logEndOffset;
  log.hwMark = { segment: log.activeSegment, position: log.activeSegment.size };
  log.recoveryPoint = opts.hadCleanShutdown ? log.logEndOffset : Math.min(recoveryPoint, log.logEndOffset);
  log.epochs.truncateFromEnd(log.logEndOffset);
  log.epochs.truncateFromStart(log.logStartOffset);
}

/**
 * Finishes or undoes a segment replacement that a crash interrupted (Kafka's
 * LogLoader does the same with the cleaner's files). LogDeletion.replaceSegments
 * renames the cleaned files `.cleaned` -> `.swap`, the log file last; then
 * retires the old segments (their log files last); then drops the `.swap`
 * suffix, the log file last. So without `<base>.log.swap` the cleaned segment
 * was never complete: its files go and the old segments are untouched. With
 * it, the cleaned segment is whole and fsynced: the old segments it covers go
 * (for `<base>` itself only while `<base>.log` is still there: once that is
 * gone, the `<base>` index files beside it are the cleaned ones) and it is
 * renamed into place.
 */
async function completeSwaps(log: LocalLog): Promise<void> {
  const names = await fs.promises.readdir(log.dir);
  const swaps = names.map((n) => SWAP_LOG_FILE_RE.exec(n)).filter((m) => m !== null).map((m) => Number(m[1]));
  for (const name of names) {
    const unfinished = name.endsWith(SWAP_FILE_SUFFIX) && !swaps.includes(Number(name.slice(0, 20)));
    if (name.endsWith(CLEANED_FILE_SUFFIX) || unfinished) await fs.promises.rm(path.join(log.dir, name), { force: true });
  }
  for (const base of swaps.sort((a, b) => a - b)) {
    const swap = await LogSegment.open(log.dir, base, log.segmentSettings(), log.logger, log.now(), SWAP_FILE_SUFFIX);
    await swap.recover();
    const files = await fs.promises.readdir(log.dir);
    const oldFirstStillThere = files.includes(path.basename(swap.logPath, SWAP_FILE_SUFFIX));
    for (const name of files) {
      const m = SEGMENT_FILE_RE.exec(name);
      if (!m) continue;
      const b = Number(m[1]);
      if ((b > base && b < swap.nextOffset) || (b === base && oldFirstStillThere)) await fs.promises.rm(path.join(log.dir, name), { force: true });
    }
    await swap.changeFileSuffix('');
    await swap.close();
    log.logger.info({ dir: log.dir, segment: base, nextOffset: swap.nextOffset }, 'completed an interrupted segment swap');
  }
  if (swaps.length > 0) await fsyncDirectory(log.dir);
}

/** Validates the segments from the one containing the recovery point on; cuts at the first bad batch. */
async function recoverUnflushed(log: LocalLog, recoveryPoint: number): Promise<void> {
  const first = Math.max(0, log.floorSegmentIndex(recoveryPoint));
  for (let i = first; i < log.segments.length; i++) {
    const segment = log.segments[i];
    const started = process.hrtime.bigint();
    const result = await segment.recover(log.epochs);
    log.logger.info(
      { dir: log.dir, segment: segment.baseOffset, bytes: segment.size, ms: Number(process.hrtime.bigint() - started) / 1e6 },
      'recovered unflushed segment',
    );
    if (result.truncatedBytes > 0 || result.problem !== undefined) {
      log.logger.warn(
        { dir: log.dir, segment: segment.baseOffset, truncatedBytes: result.truncatedBytes, problem: result.problem, nextOffset: segment.nextOffset },
        'truncated a torn or corrupt log tail during recovery',
      );
      for (const later of log.segments.splice(i + 1)) await log.deleteSegmentNow(later);
      break;
    }
  }
}
