/**
 * The cleaner's key -> latest offset map (Kafka's SkimpyOffsetMap): an open
 * addressing hash table in one Buffer, 24 bytes a slot: the MD5 of the key
 * (16 bytes) and the offset (int64). Keys themselves are never kept, so the
 * memory is fixed whatever the keys' sizes; as in Kafka, two keys with the same
 * MD5 would count as one (the chance is negligible).
 *
 * The table is filled to at most `loadFactor` of its slots
 * (log.cleaner.io.buffer.load.factor); the cleaner stops adding a log's
 * records once it is full, and cleans up to the last offset it added.
 */
import { createHash } from 'crypto';
import { readInt64, writeInt64 } from '../records/batch';

const HASH_SIZE = 16;
const SLOT_SIZE = HASH_SIZE + 8;
const EMPTY_OFFSET = -1;

export class OffsetMap {
  private readonly table: Buffer;
  private readonly slots: number;
  private entries = 0;
  /** The largest offset put so far, -1 when none. */
  latestOffset = -1;
  private readonly hash = Buffer.allocUnsafe(HASH_SIZE);

  /** A map using at most `memoryBytes` bytes. */
  constructor(
    memoryBytes: number,
    private readonly loadFactor = 0.9,
  ) {
    this.slots = Math.max(1, Math.floor(memoryBytes / SLOT_SIZE));
    this.table = Buffer.alloc(this.slots * SLOT_SIZE);
    for (let i = 0; i < this.slots; i++) writeInt64(this.table, i * SLOT_SIZE + HASH_SIZE, EMPTY_OFFSET);
  }

  /** Bytes needed for a map that can hold `entries` keys at this load factor. */
  static bytesFor(entries: number, loadFactor = 0.9): number {
    return Math.ceil(entries / loadFactor + 1) * SLOT_SIZE;
  }

  get size(): number {
    return this.entries;
  }

  /** Keys this map can hold. */
  get capacity(): number {
    return Math.max(1, Math.floor(this.slots * this.loadFactor));
  }

  get isFull(): boolean {
    return this.entries >= this.capacity;
  }

  /** Records `offset` as the latest for `key` (offsets come in increasing order, so a later put wins). */
  put(key: Buffer, offset: number): void {
    if (this.isFull) throw new Error('The offset map is full');
    const slot = this.findSlot(key);
    const at = slot * SLOT_SIZE;
    if (readInt64(this.table, at + HASH_SIZE) === EMPTY_OFFSET) {
      this.hash.copy(this.table, at);
      this.entries++;
    }
    writeInt64(this.table, at + HASH_SIZE, offset);
    this.latestOffset = Math.max(this.latestOffset, offset);
  }

  /** The latest offset put for `key`, -1 when none. */
  get(key: Buffer): number {
    return readInt64(this.table, this.findSlot(key) * SLOT_SIZE + HASH_SIZE);
  }

  /** The slot holding key's hash, or the empty one where it would go (linear probing from the hash's first 4 bytes). */
  private findSlot(key: Buffer): number {
    createHash('md5').update(key).digest().copy(this.hash);
    let slot = this.hash.readUInt32BE(0) % this.slots;
    for (;;) {
      const at = slot * SLOT_SIZE;
      if (readInt64(this.table, at + HASH_SIZE) === EMPTY_OFFSET || this.hash.equals(this.table.subarray(at, at + HASH_SIZE))) return slot;
      slot = (slot + 1) % this.slots;
    }
  }
}
