/**
 * The aborted-transaction index of one segment (Kafka's TransactionIndex), in
 * memory: one entry per transaction whose ABORT marker is in the segment, in
 * marker order. A read_committed Fetch lists the entries overlapping the range
 * it returns, so the consumer can drop those producers' records.
 *
 * File format (`<base>.txnindex`), 34-byte entries, big-endian: int16 version
 * (0), int64 producerId, int64 firstOffset, int64 lastOffset (the marker's
 * offset), int64 lastStableOffset (the LSO right after the abort: where the
 * search may stop, see collect()). As in Kafka, the file exists only once a
 * segment has an entry. No I/O here.
 */

export const TXN_INDEX_ENTRY_SIZE = 34;
const ENTRY_VERSION = 0;

export interface AbortedTxn {
  readonly producerId: number;
  readonly firstOffset: number;
  /** Offset of the ABORT marker. */
  readonly lastOffset: number;
  /** The partition's last stable offset once this transaction ended. */
  readonly lastStableOffset: number;
}

export class TransactionIndex {
  private readonly list: AbortedTxn[] = [];

  /**
   * Parses `.txnindex` file bytes. Whole entries of version 0 are kept up to
   * the first that is not; `problem` says why parsing stopped early (the
   * caller decides whether to rewrite the file).
   */
  static decode(bytes: Buffer): { index: TransactionIndex; problem: string | null } {
    const index = new TransactionIndex();
    let at = 0;
    for (; at + TXN_INDEX_ENTRY_SIZE <= bytes.length; at += TXN_INDEX_ENTRY_SIZE) {
      const version = bytes.readInt16BE(at);
      if (version !== ENTRY_VERSION) return { index, problem: `entry ${at / TXN_INDEX_ENTRY_SIZE} has version ${version}` };
      index.list.push({
        producerId: Number(bytes.readBigInt64BE(at + 2)),
        firstOffset: Number(bytes.readBigInt64BE(at + 10)),
        lastOffset: Number(bytes.readBigInt64BE(at + 18)),
        lastStableOffset: Number(bytes.readBigInt64BE(at + 26)),
      });
    }
    return { index, problem: at === bytes.length ? null : `size ${bytes.length} is not a multiple of ${TXN_INDEX_ENTRY_SIZE}` };
  }

  /** Entries [from, entries) in the file format. */
  encode(from = 0): Buffer {
    const out = Buffer.allocUnsafe((this.list.length - from) * TXN_INDEX_ENTRY_SIZE);
    for (let i = from; i < this.list.length; i++) {
      const t = this.list[i];
      const at = (i - from) * TXN_INDEX_ENTRY_SIZE;
      out.writeInt16BE(ENTRY_VERSION, at);
      out.writeBigInt64BE(BigInt(t.producerId), at + 2);
      out.writeBigInt64BE(BigInt(t.firstOffset), at + 10);
      out.writeBigInt64BE(BigInt(t.lastOffset), at + 18);
      out.writeBigInt64BE(BigInt(t.lastStableOffset), at + 26);
    }
    return out;
  }

  get entries(): number {
    return this.list.length;
  }

  /** Marker offset of the last entry, -1 when empty. */
  get lastOffset(): number {
    return this.list.length === 0 ? -1 : this.list[this.list.length - 1].lastOffset;
  }

  /** Markers come in offset order: an entry not above the last one is a bug in the caller. */
  append(txn: AbortedTxn): void {
    if (txn.lastOffset <= this.lastOffset) {
      throw new Error(`Aborted transaction at offset ${txn.lastOffset} is not above the last entry ${this.lastOffset}`);
    }
    this.list.push({ producerId: txn.producerId, firstOffset: txn.firstOffset, lastOffset: txn.lastOffset, lastStableOffset: txn.lastStableOffset });
  }

  /** Removes the entries whose marker is at or after `offset` (Kafka's truncateTo). */
  truncateTo(offset: number): void {
    let keep = this.list.length;
    while (keep > 0 && this.list[keep - 1].lastOffset >= offset) keep--;
    this.list.length = keep;
  }

  /**
   * The aborted transactions overlapping [fetchOffset, upperBoundOffset)
   * (Kafka's collectAbortedTxns), and whether the search is complete: an
   * entry whose lastStableOffset reaches upperBoundOffset was written after
   * every transaction below that bound had ended, so no later segment can
   * hold one that overlaps the range.
   */
  collect(fetchOffset: number, upperBoundOffset: number, into: AbortedTxn[]): boolean {
    for (const t of this.list) {
      if (t.lastOffset >= fetchOffset && t.firstOffset < upperBoundOffset) into.push(t);
      if (t.lastStableOffset >= upperBoundOffset) return true;
    }
    return false;
  }
}
