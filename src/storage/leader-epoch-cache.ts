/**
 * Leader epoch -> first offset written in that epoch, as Kafka's
 * LeaderEpochFileCache keeps it, persisted in the partition directory as
 * `leader-epoch-checkpoint` (version line 0, count line, "epoch startOffset"
 * lines). Entries are strictly increasing in both epoch and start offset.
 *
 * Changes apply in memory at once and are written to the file in the
 * background (crash-safe, coalesced); `persisted()` waits for that. A lost
 * write is harmless: the entry's start offset is in a batch header, and
 * recovery re-derives entries from the batches it validates.
 */
import * as path from 'path';
import { CheckpointFile, checkpointNumber, readCheckpoint } from './checkpoint-file';

export const LEADER_EPOCH_CHECKPOINT_FILE = 'leader-epoch-checkpoint';
export const UNDEFINED_EPOCH = -1;
export const UNDEFINED_EPOCH_OFFSET = -1;

export interface EpochEntry {
  readonly epoch: number;
  readonly startOffset: number;
}

export class LeaderEpochCache {
  private entries: EpochEntry[];
  private readonly file: CheckpointFile;
  private lastWrite: Promise<void> = Promise.resolve();

  private constructor(dir: string, entries: EpochEntry[]) {
    this.file = new CheckpointFile(path.join(dir, LEADER_EPOCH_CHECKPOINT_FILE));
    this.entries = entries;
  }

  /** Loads the checkpoint (throws CorruptCheckpointError on a damaged file). */
  static async load(dir: string): Promise<LeaderEpochCache> {
    const file = path.join(dir, LEADER_EPOCH_CHECKPOINT_FILE);
    const rows = await readCheckpoint(file, 2);
    const entries = rows.map(([e, o]) => ({ epoch: checkpointNumber(file, e), startOffset: checkpointNumber(file, o) }));
    const cache = new LeaderEpochCache(dir, []);
    for (const e of entries) cache.assignInMemory(e.epoch, e.startOffset);
    return cache;
  }

  static empty(dir: string): LeaderEpochCache {
    return new LeaderEpochCache(dir, []);
  }

  all(): readonly EpochEntry[] {
    return this.entries;
  }

  latestEpoch(): number | undefined {
    return this.entries.length > 0 ? this.entries[this.entries.length - 1].epoch : undefined;
  }

  /**
   * Records that `epoch` starts at `startOffset` (Kafka's assign): ignored
   * when it is the latest epoch already with an equal or lower start offset;
   * otherwise entries with an epoch or start offset >= the new one are
   * dropped first, keeping both columns increasing.
   */
  assign(epoch: number, startOffset: number): void {
    if (this.assignInMemory(epoch, startOffset)) this.persist();
  }

  private assignInMemory(epoch: number, startOffset: number): boolean {
    if (epoch < 0 || startOffset < 0) throw new Error(`Invalid leader epoch entry ${epoch} ${startOffset}`);
    const last = this.entries[this.entries.length - 1];
    if (last && last.epoch === epoch && last.startOffset <= startOffset) return false;
    let keep = this.entries.length;
    while (keep > 0 && (this.entries[keep - 1].epoch >= epoch || this.entries[keep - 1].startOffset >= startOffset)) keep--;
    this.entries = this.entries.slice(0, keep);
    this.entries.push({ epoch, startOffset });
    return true;
  }

  /** The epoch whose range contains `offset` (Kafka's epochForOffset); undefined before the first entry. */
  epochForOffset(offset: number): number | undefined {
    let found: number | undefined;
    for (const e of this.entries) {
      if (e.startOffset > offset) break;
      found = e.epoch;
    }
    return found;
  }

  /**
   * OffsetForLeaderEpoch (Kafka's endOffsetFor): the largest epoch <= the
   * requested one and the offset where the next epoch starts (the log end
   * offset for the latest epoch). A requested epoch below every known one
   * answers itself with the first known start offset; above every known one
   * (or -1) answers -1/-1.
   */
  endOffsetFor(requestedEpoch: number, logEndOffset: number): { epoch: number; endOffset: number } {
    const undefinedAnswer = { epoch: UNDEFINED_EPOCH, endOffset: UNDEFINED_EPOCH_OFFSET };
    if (requestedEpoch === UNDEFINED_EPOCH) return undefinedAnswer;
    if (this.latestEpoch() === requestedEpoch) return { epoch: requestedEpoch, endOffset: logEndOffset };
    const higher = this.entries.findIndex((e) => e.epoch > requestedEpoch);
    if (higher < 0) return undefinedAnswer;
    if (higher === 0) return { epoch: requestedEpoch, endOffset: this.entries[0].startOffset };
    return { epoch: this.entries[higher - 1].epoch, endOffset: this.entries[higher].startOffset };
  }

  /** Drops entries starting at or after endOffset (the log was truncated to endOffset). */
  truncateFromEnd(endOffset: number): void {
    const keep = this.entries.filter((e) => e.startOffset < endOffset);
    if (keep.length === this.entries.length) return;
    this.entries = keep;
    this.persist();
  }

  /**
   * The log now starts at startOffset: entries starting at or before it
   * collapse into one, the last of them, moved to startOffset.
   */
  truncateFromStart(startOffset: number): void {
    let covered = 0;
    while (covered < this.entries.length && this.entries[covered].startOffset <= startOffset) covered++;
    if (covered === 0) return;
    const last = this.entries[covered - 1];
    if (covered === 1 && last.startOffset === startOffset) return;
    this.entries = [{ epoch: last.epoch, startOffset }, ...this.entries.slice(covered)];
    this.persist();
  }

  /** Starts a background write of the current entries. */
  private persist(): void {
    const write = this.file.write(() => this.entries.map((e) => [e.epoch, e.startOffset]));
    write.catch(() => undefined); // surfaced by persisted()
    this.lastWrite = write;
  }

  /** Resolves when every change made so far is on disk; rejects if that write failed. */
  persisted(): Promise<void> {
    return this.lastWrite;
  }
}
