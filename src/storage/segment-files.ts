/**
 * The files of one log segment: `<base>.log` holds whole v2 record batches
 * back to back, `<base>.index` and `<base>.timeindex` are its sparse indexes
 * (offset-index.ts, time-index.ts), `<base>.txnindex` lists the transactions
 * aborted by markers in it (transaction-index.ts; only once there is one). The
 * base offset, 20 digits zero-padded, names the files.
 *
 * The indexes live in memory (LogSegment) and reach their files on flush, roll
 * and close: the files are only needed after a restart, and recovery rebuilds
 * them for every segment it validates. This class keeps the files in line with
 * memory, and runs every operation on them (index writes, flush, rename,
 * close) one after another.
 *
 * The cleaner's segments carry a file suffix while they are being written
 * (`.cleaned`) and swapped in (`.swap`); changeSuffix() renames all the
 * files, the log file last (log-loader.ts completeSwaps relies on that order).
 */
import * as fs from 'fs';
import * as path from 'path';
import type { Logger } from 'pino';
import { readOptionalFile } from './file-io';
import { writeFully } from '../common/durable-file';
import { OFFSET_INDEX_ENTRY_SIZE, OffsetIndex } from './offset-index';
import { TIME_INDEX_ENTRY_SIZE, TimeIndex } from './time-index';
import { TXN_INDEX_ENTRY_SIZE, TransactionIndex } from './transaction-index';

type FileHandle = fs.promises.FileHandle;

export const LOG_FILE_SUFFIX = '.log';
export const INDEX_FILE_SUFFIX = '.index';
export const TIME_INDEX_FILE_SUFFIX = '.timeindex';
export const TXN_INDEX_FILE_SUFFIX = '.txnindex';
/** Appended to the files of a segment that is being deleted. */
export const DELETED_FILE_SUFFIX = '.deleted';
/** Appended to the files of a segment the cleaner is writing (removed at start-up: an unfinished cleaning). */
export const CLEANED_FILE_SUFFIX = '.cleaned';
/** Appended to the files of a cleaned segment about to replace old ones (completed at start-up). */
export const SWAP_FILE_SUFFIX = '.swap';

export function segmentFileName(baseOffset: number, suffix: string): string {
  return String(baseOffset).padStart(20, '0') + suffix;
}

/** A segment's indexes in memory; the offset and time indexes are undefined until an old segment's are read. */
export interface SegmentIndexes {
  offsetIndex?: OffsetIndex;
  timeIndex?: TimeIndex;
  txnIndex: TransactionIndex;
}

/** Writes `bytes` as the whole content of `file` (an index rebuilt in memory; a crash midway only means another rebuild). */
async function replaceFile(file: string, bytes: Buffer): Promise<void> {
  const fh = await fs.promises.open(file, 'w', 0o644);
  try {
    await writeFully(fh, [bytes], 0, file);
  } finally {
    await fh.close();
  }
}

/** Brings an index file from `inFile` entries to the index's: cut, or the missing entries appended; with sync, fsynced. */
async function writeIndexFile(
  file: string,
  index: { entries: number; encode(from: number): Buffer },
  inFile: number,
  entrySize: number,
  sync: boolean,
): Promise<void> {
  const entries = index.entries;
  if (entries === inFile && !sync) return;
  const fh = await fs.promises.open(file, fs.constants.O_RDWR | fs.constants.O_CREAT, 0o644);
  try {
    if (inFile > entries) await fh.truncate(entries * entrySize);
    else if (entries > inFile) await writeFully(fh, [index.encode(inFile).subarray(0, (entries - inFile) * entrySize)], inFile * entrySize, file);
    if (sync) await fh.sync();
  } finally {
    await fh.close();
  }
}

export class SegmentFiles {
  /** Set once the files are renamed to `*.deleted` or closed unwritten: a flush then does nothing. */
  deleted = false;
  /** Entries of each index that are in its file (the file may hold more after a truncation). */
  private offsetIndexEntries = 0;
  private timeIndexEntries = 0;
  private txnIndexEntries = 0;
  /** Serializes index-file writes, flush, rename and close. */
  private ops: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly dir: string,
    private readonly baseOffset: number,
    /** The open log file. */
    readonly log: FileHandle,
    /** '' for a segment of the log; CLEANED_FILE_SUFFIX or SWAP_FILE_SUFFIX while the cleaner replaces segments. */
    private suffix: string,
    /** The indexes in memory, as they are when a file operation runs. */
    private readonly indexes: () => SegmentIndexes,
  ) {}

  static logPath(dir: string, baseOffset: number, suffix: string): string {
    return path.join(dir, segmentFileName(baseOffset, LOG_FILE_SUFFIX) + suffix);
  }

  get logPath(): string {
    return SegmentFiles.logPath(this.dir, this.baseOffset, this.suffix);
  }

  get indexPath(): string {
    return path.join(this.dir, segmentFileName(this.baseOffset, INDEX_FILE_SUFFIX) + this.suffix);
  }

  get timeIndexPath(): string {
    return path.join(this.dir, segmentFileName(this.baseOffset, TIME_INDEX_FILE_SUFFIX) + this.suffix);
  }

  get txnIndexPath(): string {
    return path.join(this.dir, segmentFileName(this.baseOffset, TXN_INDEX_FILE_SUFFIX) + this.suffix);
  }

  /**
   * The log file last: renames go in this order, so while `<base>.log` keeps
   * its name every index file beside it belongs to it (start-up relies on
   * that to finish an interrupted swap, see log-loader.ts completeSwaps).
   */
  private get allPaths(): string[] {
    return [this.indexPath, this.timeIndexPath, this.txnIndexPath, this.logPath];
  }

  /** A new segment's index files: empty, and no transaction index (replacing leftovers of that name). */
  async createIndexFiles(): Promise<void> {
    await fs.promises.writeFile(this.indexPath, Buffer.alloc(0));
    await fs.promises.writeFile(this.timeIndexPath, Buffer.alloc(0));
    await fs.promises.rm(this.txnIndexPath, { force: true });
  }

  /** The transaction index file, or undefined when there is none; a damaged tail is cut off. */
  async readTxnIndex(logger: Logger): Promise<TransactionIndex | undefined> {
    const bytes = await readOptionalFile(this.txnIndexPath);
    if (!bytes) return undefined;
    const { index, problem } = TransactionIndex.decode(bytes);
    this.txnIndexEntries = index.entries;
    if (problem !== null) {
      // Keep the whole entries before the damage; the producer-state replay re-adds those it covers.
      logger.warn({ segment: this.logPath, problem }, 'cutting a damaged transaction index');
      await fs.promises.truncate(this.txnIndexPath, index.entries * TXN_INDEX_ENTRY_SIZE);
    }
    return index;
  }

  /**
   * The offset and time index files, checked against a log of `logSize` bytes;
   * or why they cannot be used (missing, torn, inconsistent): then rebuild them.
   */
  async readIndexes(logSize: number, maxIndexEntries: number, maxTimeIndexEntries: number): Promise<{ offsetIndex: OffsetIndex; timeIndex: TimeIndex } | { problem: string }> {
    const [indexBytes, timeIndexBytes] = await Promise.all([readOptionalFile(this.indexPath), readOptionalFile(this.timeIndexPath)]);
    if (!indexBytes || !timeIndexBytes) return { problem: `${!indexBytes ? 'offset' : 'time'} index file is missing` };
    if (indexBytes.length % OFFSET_INDEX_ENTRY_SIZE !== 0) return { problem: `offset index size ${indexBytes.length} is not a multiple of ${OFFSET_INDEX_ENTRY_SIZE}` };
    if (timeIndexBytes.length % TIME_INDEX_ENTRY_SIZE !== 0) return { problem: `time index size ${timeIndexBytes.length} is not a multiple of ${TIME_INDEX_ENTRY_SIZE}` };
    const offsetIndex = OffsetIndex.decode(indexBytes, this.baseOffset, maxIndexEntries);
    const timeIndex = TimeIndex.decode(timeIndexBytes, this.baseOffset, maxTimeIndexEntries);
    const problem = offsetIndex.problem(logSize) ?? timeIndex.problem();
    if (problem !== null) return { problem };
    this.offsetIndexEntries = offsetIndex.entries;
    this.timeIndexEntries = timeIndex.entries;
    return { offsetIndex, timeIndex };
  }

  /** Brings the index files in line with memory (cuts entries a truncation removed, appends the ones not written yet). */
  writeIndexes(): Promise<void> {
    return this.exclusive(() => this.writeIndexTails(false));
  }

  /** Replaces the offset and time index files with the in-memory indexes; cuts the transaction index file to memory. */
  rewriteIndexes(): Promise<void> {
    return this.exclusive(async () => {
      const { offsetIndex, timeIndex, txnIndex } = this.indexes();
      await replaceFile(this.indexPath, offsetIndex!.encode());
      await replaceFile(this.timeIndexPath, timeIndex!.encode());
      this.offsetIndexEntries = offsetIndex!.entries;
      this.timeIndexEntries = timeIndex!.entries;
      await this.writeTxnIndexTail(txnIndex, false);
    });
  }

  /** fsyncs the log file and writes and fsyncs the index files (no-op once deleted). */
  flush(): Promise<void> {
    return this.exclusive(async () => {
      if (this.deleted) return;
      await this.log.sync();
      await this.writeIndexTails(true);
    });
  }

  /** Closes the log file, after the file operations queued before. */
  close(): Promise<void> {
    return this.exclusive(() => this.log.close());
  }

  /** Closes the file without writing anything (the directory is going away). */
  closeWithoutWriting(): Promise<void> {
    this.deleted = true;
    return this.close();
  }

  /**
   * Renames the files from this segment's suffix to `suffix` (Kafka's
   * changeFileSuffixes), the log file last; files the segment does not have
   * (no transaction index) are skipped. The open file follows the rename.
   */
  changeSuffix(suffix: string): Promise<void> {
    return this.exclusive(async () => {
      for (const file of this.allPaths) {
        await fs.promises.rename(file, file.slice(0, file.length - this.suffix.length) + suffix).catch((e: NodeJS.ErrnoException) => {
          if (e.code !== 'ENOENT') throw e;
        });
      }
      this.suffix = suffix;
    });
  }

  /** Renames the files to `*.deleted` so a restart does not load them; the log file stays open for reads in flight. */
  markDeleted(): Promise<void> {
    this.deleted = true;
    return this.exclusive(async () => {
      for (const file of this.allPaths) {
        await fs.promises.rename(file, file + DELETED_FILE_SUFFIX).catch((e: NodeJS.ErrnoException) => {
          if (e.code !== 'ENOENT') throw e;
        });
      }
    });
  }

  /** Closes the file and removes the `*.deleted` files (after markDeleted). */
  async deleteFiles(): Promise<void> {
    await this.exclusive(async () => {
      await this.log.close();
      for (const file of this.allPaths) {
        await fs.promises.rm(file + DELETED_FILE_SUFFIX, { force: true });
      }
    });
  }

  /** Runs fn after every earlier file operation of this segment. */
  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.ops.then(fn, fn);
    this.ops = run.catch(() => undefined);
    return run;
  }

  /** See writeIndexes; with sync, fsyncs the files. */
  private async writeIndexTails(sync: boolean): Promise<void> {
    await this.writeTxnIndexTail(this.indexes().txnIndex, sync);
    const { offsetIndex, timeIndex } = this.indexes();
    if (!offsetIndex || !timeIndex) return;
    await writeIndexFile(this.indexPath, offsetIndex, this.offsetIndexEntries, OFFSET_INDEX_ENTRY_SIZE, sync);
    this.offsetIndexEntries = offsetIndex.entries;
    await writeIndexFile(this.timeIndexPath, timeIndex, this.timeIndexEntries, TIME_INDEX_ENTRY_SIZE, sync);
    this.timeIndexEntries = timeIndex.entries;
  }

  /** The transaction index file is created with its first entry, as Kafka does: most segments never have one. */
  private async writeTxnIndexTail(txnIndex: TransactionIndex, sync: boolean): Promise<void> {
    if (txnIndex.entries === 0 && this.txnIndexEntries === 0) return;
    await writeIndexFile(this.txnIndexPath, txnIndex, this.txnIndexEntries, TXN_INDEX_ENTRY_SIZE, sync);
    this.txnIndexEntries = txnIndex.entries;
  }
}
