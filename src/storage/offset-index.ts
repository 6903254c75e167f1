/**
 * The sparse offset index of one segment (Kafka's OffsetIndex), in memory.
 *
 * Entries map a batch's last offset to the file position where that batch
 * starts; one is added every `index.interval.bytes` of log. File format:
 * 8-byte entries, offset relative to the segment's base offset (int32) then
 * file position (int32), big-endian. Lookup is a binary search followed by a
 * short forward scan of batch headers from the entry's position (the
 * segment's job). The typed arrays grow as needed; `maxEntries`
 * (segment.index.bytes / 8) only tells the log when to roll, since there is
 * no preallocated file to overflow. This class does no I/O: the segment
 * writes `encode()`d entries to the `.index` file.
 */

export const OFFSET_INDEX_ENTRY_SIZE = 8;
const INITIAL_CAPACITY = 16;
const INT32_MAX = 0x7fffffff;

export interface OffsetPosition {
  offset: number;
  position: number;
}

export class OffsetIndex {
  private relativeOffsets: Int32Array;
  private positions: Int32Array;
  private count = 0;

  constructor(
    readonly baseOffset: number,
    readonly maxEntries: number,
  ) {
    this.relativeOffsets = new Int32Array(INITIAL_CAPACITY);
    this.positions = new Int32Array(INITIAL_CAPACITY);
  }

  /** Parses `.index` file bytes without checking them (see problem()). A trailing partial entry is ignored. */
  static decode(bytes: Buffer, baseOffset: number, maxEntries: number): OffsetIndex {
    const index = new OffsetIndex(baseOffset, maxEntries);
    const n = Math.floor(bytes.length / OFFSET_INDEX_ENTRY_SIZE);
    index.ensureCapacity(n);
    for (let i = 0; i < n; i++) {
      index.relativeOffsets[i] = bytes.readInt32BE(i * OFFSET_INDEX_ENTRY_SIZE);
      index.positions[i] = bytes.readInt32BE(i * OFFSET_INDEX_ENTRY_SIZE + 4);
    }
    index.count = n;
    return index;
  }

  /** Entries [from, entries) in the file format. */
  encode(from = 0): Buffer {
    const out = Buffer.allocUnsafe((this.count - from) * OFFSET_INDEX_ENTRY_SIZE);
    for (let i = from; i < this.count; i++) {
      out.writeInt32BE(this.relativeOffsets[i], (i - from) * OFFSET_INDEX_ENTRY_SIZE);
      out.writeInt32BE(this.positions[i], (i - from) * OFFSET_INDEX_ENTRY_SIZE + 4);
    }
    return out;
  }

  /**
   * Why these entries cannot describe a log of `logSize` bytes, or null when
   * they can: offsets and positions must strictly increase and every
   * position must lie inside the log.
   */
  problem(logSize: number): string | null {
    for (let i = 0; i < this.count; i++) {
      if (this.relativeOffsets[i] < 0) return `entry ${i} has a negative relative offset`;
      if (this.positions[i] < 0 || this.positions[i] >= logSize) return `entry ${i} points past the log (${this.positions[i]} >= ${logSize})`;
      if (i > 0 && this.relativeOffsets[i] <= this.relativeOffsets[i - 1]) return `offsets out of order at entry ${i}`;
      if (i > 0 && this.positions[i] <= this.positions[i - 1]) return `positions out of order at entry ${i}`;
    }
    return null;
  }

  get entries(): number {
    return this.count;
  }

  isFull(): boolean {
    return this.count >= this.maxEntries;
  }

  /** Whether `offset` fits this segment's int32 relative offsets. */
  canAppendOffset(offset: number): boolean {
    const relative = offset - this.baseOffset;
    return relative >= 0 && relative <= INT32_MAX;
  }

  lastOffset(): number {
    return this.count === 0 ? this.baseOffset : this.baseOffset + this.relativeOffsets[this.count - 1];
  }

  append(offset: number, position: number): void {
    if (!this.canAppendOffset(offset)) throw new Error(`Offset ${offset} does not fit the index of segment ${this.baseOffset}`);
    if (this.count > 0 && offset <= this.lastOffset()) {
      throw new Error(`Index entry for offset ${offset} is not above the last entry ${this.lastOffset()}`);
    }
    this.ensureCapacity(this.count + 1);
    this.relativeOffsets[this.count] = offset - this.baseOffset;
    this.positions[this.count] = position;
    this.count++;
  }

  /** The entry with the largest offset <= target, or (baseOffset, 0) when there is none. */
  lookup(targetOffset: number): OffsetPosition {
    const slot = this.largestAtOrBelow(this.relativeOffsets, targetOffset - this.baseOffset);
    if (slot < 0) return { offset: this.baseOffset, position: 0 };
    return { offset: this.baseOffset + this.relativeOffsets[slot], position: this.positions[slot] };
  }

  /** The largest indexed batch position <= `position` (0 when there is none): a batch boundary. */
  batchStartAtOrBefore(position: number): number {
    const slot = this.largestAtOrBelow(this.positions, position);
    return slot < 0 ? 0 : this.positions[slot];
  }

  /** Removes the entries with offset >= `offset`. */
  truncateTo(offset: number): void {
    const slot = this.largestAtOrBelow(this.relativeOffsets, offset - this.baseOffset);
    if (slot < 0) this.count = 0;
    else this.count = this.relativeOffsets[slot] === offset - this.baseOffset ? slot : slot + 1;
  }

  /** Keeps the first `entries` entries. */
  truncateToEntries(entries: number): void {
    this.count = Math.min(this.count, entries);
  }

  /** Binary search: the last slot whose value is <= target, or -1. */
  private largestAtOrBelow(values: Int32Array, target: number): number {
    let lo = 0;
    let hi = this.count - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if (values[mid] <= target) {
        found = mid;
        lo = mid + 1;
      } else {
        hi = mid - 1;
      }
    }
    return found;
  }

  private ensureCapacity(n: number): void {
    if (n <= this.relativeOffsets.length) return;
    let capacity = this.relativeOffsets.length;
    while (capacity < n) capacity *= 2;
    const offsets = new Int32Array(capacity);
    offsets.set(this.relativeOffsets.subarray(0, this.count));
    const positions = new Int32Array(capacity);
    positions.set(this.positions.subarray(0, this.count));
    this.relativeOffsets = offsets;
    this.positions = positions;
  }
}
