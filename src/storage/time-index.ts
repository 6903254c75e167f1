/**
 * The sparse time index of one segment (Kafka's TimeIndex), in memory.
 *
 * Entries map a timestamp to the last offset of the batch where the
 * segment's largest timestamp so far was seen; one may be added with each
 * offset index entry, and only when the timestamp grew, so both columns
 * increase. When a segment stops being active (roll, close) its largest
 * timestamp is appended even without an offset index entry, so the last entry
 * is always the segment's max timestamp (what retention and ListOffsets
 * MAX_TIMESTAMP read). File format: 12-byte entries, timestamp (int64) then
 * offset relative to the base offset (int32), big-endian. No I/O here.
 */

export const TIME_INDEX_ENTRY_SIZE = 12;
const INITIAL_CAPACITY = 16;

/** What the time index and segment say when no timestamp is known (Kafka's RecordBatch.NO_TIMESTAMP). */
export const NO_TIMESTAMP = -1;

export interface TimestampOffset {
  timestamp: number;
  offset: number;
}

export class TimeIndex {
  private timestamps: Float64Array;
  private relativeOffsets: Int32Array;
  private count = 0;

  constructor(
    readonly baseOffset: number,
    readonly maxEntries: number,
  ) {
    this.timestamps = new Float64Array(INITIAL_CAPACITY);
    this.relativeOffsets = new Int32Array(INITIAL_CAPACITY);
  }

  /** Parses `.timeindex` file bytes without checking them (see problem()). A trailing partial entry is ignored. */
  static decode(bytes: Buffer, baseOffset: number, maxEntries: number): TimeIndex {
    const index = new TimeIndex(baseOffset, maxEntries);
    const n = Math.floor(bytes.length / TIME_INDEX_ENTRY_SIZE);
    index.ensureCapacity(n);
    for (let i = 0; i < n; i++) {
      const at = i * TIME_INDEX_ENTRY_SIZE;
      index.timestamps[i] = bytes.readInt32BE(at) * 4294967296 + bytes.readUInt32BE(at + 4);
      index.relativeOffsets[i] = bytes.readInt32BE(at + 8);
    }
    index.count = n;
    return index;
  }

  /** Entries [from, entries) in the file format. */
  encode(from = 0): Buffer {
    const out = Buffer.allocUnsafe((this.count - from) * TIME_INDEX_ENTRY_SIZE);
    for (let i = from; i < this.count; i++) {
      const at = (i - from) * TIME_INDEX_ENTRY_SIZE;
      const ts = this.timestamps[i];
      out.writeInt32BE(Math.floor(ts / 4294967296), at);
      out.writeUInt32BE(ts >>> 0, at + 4);
      out.writeInt32BE(this.relativeOffsets[i], at + 8);
    }
    return out;
  }

  /** Why these entries are inconsistent (both columns must increase), or null. */
  problem(): string | null {
    for (let i = 0; i < this.count; i++) {
      if (this.relativeOffsets[i] < 0) return `entry ${i} has a negative relative offset`;
      if (i > 0 && this.timestamps[i] <= this.timestamps[i - 1]) return `timestamps out of order at entry ${i}`;
      if (i > 0 && this.relativeOffsets[i] < this.relativeOffsets[i - 1]) return `offsets out of order at entry ${i}`;
    }
    return null;
  }

  get entries(): number {
    return this.count;
  }

  isFull(): boolean {
    return this.count >= this.maxEntries;
  }

  /** The last entry, or (NO_TIMESTAMP, baseOffset) when empty. */
  lastEntry(): TimestampOffset {
    if (this.count === 0) return { timestamp: NO_TIMESTAMP, offset: this.baseOffset };
    return { timestamp: this.timestamps[this.count - 1], offset: this.baseOffset + this.relativeOffsets[this.count - 1] };
  }

  /** Appends (timestamp, offset) if timestamp is larger than the last entry's (Kafka's maybeAppend). */
  maybeAppend(timestamp: number, offset: number): void {
    const last = this.lastEntry();
    if (timestamp <= last.timestamp) return;
    if (this.count > 0 && offset < last.offset) {
      throw new Error(`Time index entry offset ${offset} is below the last entry's ${last.offset}`);
    }
    this.ensureCapacity(this.count + 1);
    this.timestamps[this.count] = timestamp;
    this.relativeOffsets[this.count] = offset - this.baseOffset;
    this.count++;
  }

  /** The entry with the largest timestamp <= target, or (NO_TIMESTAMP, baseOffset) when there is none. */
  lookup(targetTimestamp: number): TimestampOffset {
    let lo = 0;
    let hi = this.count - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if (this.timestamps[mid] <= targetTimestamp) {
        found = mid;
        lo = mid + 1;
      } else {
        hi = mid - 1;
      }
    }
    if (found < 0) return { timestamp: NO_TIMESTAMP, offset: this.baseOffset };
    return { timestamp: this.timestamps[found], offset: this.baseOffset + this.relativeOffsets[found] };
  }

  /** Removes the entries with offset >= `offset`. */
  truncateTo(offset: number): void {
    const relative = offset - this.baseOffset;
    while (this.count > 0 && this.relativeOffsets[this.count - 1] >= relative) this.count--;
  }

  /** Keeps the first `entries` entries. */
  truncateToEntries(entries: number): void {
    this.count = Math.min(this.count, entries);
  }

  private ensureCapacity(n: number): void {
    if (n <= this.timestamps.length) return;
    let capacity = this.timestamps.length;
    while (capacity < n) capacity *= 2;
    const timestamps = new Float64Array(capacity);
    timestamps.set(this.timestamps.subarray(0, this.count));
    const offsets = new Int32Array(capacity);
    offsets.set(this.relativeOffsets.subarray(0, this.count));
    this.timestamps = timestamps;
    this.relativeOffsets = offsets;
  }
}
