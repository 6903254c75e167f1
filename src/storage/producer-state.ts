/**
 * Idempotent producer state of ONE partition, as Kafka's ProducerStateManager,
 * ProducerAppendInfo and ProducerStateEntry (storage/.../internals/log/).
 *
 * Per producer id: its epoch, the metadata of its last 5 batches (to answer a
 * retried batch with the offsets it first got), its last timestamp (for
 * expiry), the first offset of its open transaction and the coordinator epoch
 * of its last transaction marker.
 *
 * The Produce path calls checkBatch() and then, once the batch has offsets,
 * recordBatch(), synchronously; a transaction marker goes through
 * checkMarker() and recordMarker() the same way. Recovery (the log's
 * PartitionLog.loadProducerState) rebuilds the state from the latest snapshot
 * and replays the log after it with replayBatchHeader(); a follower's append
 * (PartitionLog.appendAsFollower) records the leader's batches with
 * applyReplicatedBatch().
 *
 * Transactions of the partition (Kafka's ongoingTxns and unreplicatedTxns):
 * a transaction is open from its first batch until its marker; once the
 * marker has an offset it stays unstable until the marker is written (the
 * caller reports that with onHighWatermarkUpdated), so a read_committed
 * reader never passes data whose marker it cannot read yet. The last stable
 * offset is min(firstUnstableOffset(), high watermark).
 *
 * Snapshots: `<20-digit offset>.snapshot` holds the state of every batch
 * below that offset (replay from it). Binary, big-endian, CRC-checked:
 *
 *   int16 version (1) | uint32 CRC-32C of the rest | int32 producer count
 *   per producer: int64 producerId | int16 epoch | int32 coordinatorEpoch |
 *     int64 lastTimestamp | int64 currentTxnFirstOffset (-1: none) | int8 batch count
 *     per batch: int32 firstSeq | int32 lastSeq | int64 firstOffset | int64 lastOffset | int64 timestamp
 *
 * Kafka's snapshot keeps only each producer's last batch; we keep all five,
 * so a retry of any of them is still recognised after a restart.
 */
import * as fs from 'fs';
import * as path from 'path';
import type { BatchInfo } from '../records/batch';
import { crc32c } from '../records/crc32c';
import { writeFileAtomically } from '../common/durable-file';
import { ErrorCode } from '../common/errors';

export const NO_PRODUCER_ID = -1;
export const NO_PRODUCER_EPOCH = -1;
const NO_SEQUENCE = -1;
/** Short.MAX_VALUE: the epoch of a transaction version 2 end whose producer moves to a new id. */
const MAX_PRODUCER_EPOCH = 32767;
const INT32_MAX = 2 ** 31 - 1;
/** Kafka's ProducerStateEntry.NUM_BATCHES_TO_RETAIN, which is also the client's max.in.flight for idempotence. */
export const NUM_BATCHES_TO_RETAIN = 5;
/** Kafka's producer.id.expiration.ms default: one day. */
export const DEFAULT_PRODUCER_ID_EXPIRATION_MS = 86_400_000;

const SNAPSHOT_VERSION = 1;
const SNAPSHOT_SUFFIX = '.snapshot';
const SNAPSHOT_NAME = /^(\d{20})\.snapshot$/;
const SNAPSHOTS_KEPT = 3;
const HEADER_BYTES = 2 + 4; // version, crc
const PRODUCER_BYTES = 8 + 2 + 4 + 8 + 8 + 1;
const BATCH_BYTES = 4 + 4 + 8 + 8 + 8;

/**
 * Who is appending (Kafka's AppendOrigin): a client gets every check; the group
 * or transaction coordinator's own writes carry no sequences, so only the
 * epoch is checked; a replica copies what the leader already checked.
 */
export type AppendOrigin = 'client' | 'coordinator' | 'replication';

/** The producer fields of a batch header. */
export interface ProducerBatch {
  producerId: number;
  producerEpoch: number;
  baseSequence: number;
  /** baseSequence + records - 1, wrapped past 2^31-1 to 0 as the client does. */
  lastSequence: number;
  isTransactional: boolean;
}

/** A batch header read back from the log. */
export interface ReplayedBatch extends ProducerBatch {
  baseOffset: number;
  lastOffset: number;
  maxTimestamp: number;
  /** For a transaction marker (a control batch), what its record says. */
  marker?: { commit: boolean; coordinatorEpoch: number };
}

/** A COMMIT or ABORT marker the transaction coordinator asks a partition to write. */
export interface TxnMarker {
  producerId: number;
  producerEpoch: number;
  coordinatorEpoch: number;
  commit: boolean;
  /**
   * The transaction's client transaction version (WriteTxnMarkers v2; absent: before 2). From 2
   * (KIP-890 part 2) the coordinator bumped the epoch for the marker, so the leader wants it above the
   * producer's.
   */
  transactionVersion?: number;
}

/** A transaction a marker ends (Kafka's CompletedTxn, with the LSO it leaves behind). */
export interface CompletedTxn {
  producerId: number;
  firstOffset: number;
  /** The marker's offset. */
  lastOffset: number;
  isAborted: boolean;
  /** First offset of the oldest transaction of another producer still open, else lastOffset + 1. */
  lastStableOffset: number;
}

export type MarkerCheck =
  /** The marker ends `completed`, or no transaction when the producer had none open here (it is still written). */
  | { kind: 'ok'; completed: CompletedTxn | null }
  | { kind: 'error'; errorCode: number; errorMessage: string };

export interface BatchMetadata {
  readonly firstSeq: number;
  readonly lastSeq: number;
  readonly firstOffset: number;
  readonly lastOffset: number;
  readonly timestamp: number;
}

export interface ProducerStateEntry {
  readonly producerId: number;
  producerEpoch: number;
  /** Oldest first, at most NUM_BATCHES_TO_RETAIN, all of producerEpoch. */
  batches: BatchMetadata[];
  lastTimestamp: number;
  /** First offset of the producer's open transaction, null when none. */
  currentTxnFirstOffset: number | null;
  coordinatorEpoch: number;
}

export type BatchCheck =
  | { kind: 'ok' }
  /** Already appended: answer with the offsets and timestamp it got then, and append nothing. */
  | { kind: 'duplicate'; firstOffset: number; lastOffset: number; timestamp: number }
  | { kind: 'error'; errorCode: number; errorMessage: string };

const OK: BatchCheck = { kind: 'ok' };

export class ProducerStateManager {
  private readonly producers = new Map<number, ProducerStateEntry>();
  /**
   * Open transactions: first offset -> producer id. Offsets are assigned in
   * increasing order, so insertion order is first-offset order and the first
   * entry is the oldest (loadLatest inserts sorted).
   */
  private readonly ongoingTxns = new Map<number, number>();
  /** Ended transactions whose marker is not written yet: first offset -> marker offset. */
  private readonly unwrittenTxns = new Map<number, number>();
  /** Snapshot writes run one after another, so files and pruning never race. */
  private snapshotWrites: Promise<void> = Promise.resolve();

  /** The producer's entry, if it has one on this partition. */
  lastEntry(producerId: number): Readonly<ProducerStateEntry> | undefined {
    return this.producers.get(producerId);
  }

  /** Kafka's UnifiedLog.hasOngoingTransaction: this producer, at this epoch, has written in an open transaction here. */
  hasOngoingTransaction(producerId: number, producerEpoch: number): boolean {
    const entry = this.producers.get(producerId);
    return entry !== undefined && entry.currentTxnFirstOffset !== null && entry.producerEpoch === producerEpoch;
  }

  activeProducers(): ReadonlyMap<number, Readonly<ProducerStateEntry>> {
    return this.producers;
  }

  /**
   * Decides what to do with a batch before it is appended (Kafka:
   * UnifiedLog.analyzeAndValidateProducerState, then ProducerAppendInfo's
   * checkProducerEpoch, checkSequence and appendDataBatch). `transactionV2`: a transactional batch of
   * a transaction version 2 producer (Produce v12+). Changes nothing.
   */
  checkBatch(b: ProducerBatch, origin: AppendOrigin = 'client', transactionV2 = false): BatchCheck {
    if (b.producerId === NO_PRODUCER_ID) return OK;
    const entry = this.producers.get(b.producerId);
    const currentEpoch = entry?.producerEpoch ?? NO_PRODUCER_EPOCH;

    // A retry of one of the last 5 batches of the same epoch: not an error.
    if (origin === 'client' && entry !== undefined && b.producerEpoch === currentEpoch) {
      const dup = entry.batches.find((m) => m.firstSeq === b.baseSequence && m.lastSeq === b.lastSequence);
      if (dup) return { kind: 'duplicate', firstOffset: dup.firstOffset, lastOffset: dup.lastOffset, timestamp: dup.timestamp };
    }

    // A zombie with an older epoch (since Kafka 2.7 INVALID_PRODUCER_EPOCH, not PRODUCER_FENCED).
    if (origin !== 'replication' && b.producerEpoch < currentEpoch) {
      return error(
        'INVALID_PRODUCER_EPOCH',
        `Epoch of producer ${b.producerId} is ${b.producerEpoch}, which is smaller than the last seen epoch ${currentEpoch}`,
      );
    }

    // Kafka 4.4's checkSequence: a transaction version 2 producer (its epoch bumped at every end) starts
    // every partition it has no batches on at sequence 0, so no lost write goes unnoticed.
    if (transactionV2 && origin === 'client' && b.baseSequence !== 0 && (entry === undefined || entry.batches.length === 0)) {
      return error('OUT_OF_ORDER_SEQUENCE_NUMBER',
        `Invalid sequence number for producer ${b.producerId}: ${b.baseSequence} (incoming seq. number); expected 0 for a transaction version 2 producer with no state here`);
    }

    if (origin === 'client') {
      if (b.producerEpoch !== currentEpoch) {
        // A new epoch starts at 0. An unknown producer (no epoch: its state expired or its
        // records were deleted) is accepted at any sequence, as Kafka has since KIP-360.
        if (b.baseSequence !== 0 && currentEpoch !== NO_PRODUCER_EPOCH) {
          return error(
            'OUT_OF_ORDER_SEQUENCE_NUMBER',
            `Invalid sequence number for new epoch of producer ${b.producerId}: ${b.producerEpoch} (request epoch), ` +
              `${b.baseSequence} (seq. number), ${currentEpoch} (current producer epoch)`,
          );
        }
      } else {
        const lastSeq = entry && entry.batches.length > 0 ? entry.batches[entry.batches.length - 1].lastSeq : NO_SEQUENCE;
        if (currentEpoch !== NO_PRODUCER_EPOCH && !inSequence(lastSeq, b.baseSequence)) {
          return error(
            'OUT_OF_ORDER_SEQUENCE_NUMBER',
            `Out of order sequence number for producer ${b.producerId}: ${b.baseSequence} (incoming seq. number), ` +
              `${lastSeq} (current end sequence number)`,
          );
        }
      }
    }

    if (entry?.currentTxnFirstOffset != null && !b.isTransactional) {
      return error('INVALID_TXN_STATE', `Expected transactional write from producer ${b.producerId}`);
    }
    return OK;
  }

  /**
   * Records a batch appended at [firstOffset, lastOffset] with its max
   * timestamp. Call right after checkBatch() said 'ok' (Kafka:
   * ProducerAppendInfo.appendDataBatch + ProducerStateManager.update).
   */
  recordBatch(b: ProducerBatch, firstOffset: number, lastOffset: number, timestamp: number): void {
    if (b.producerId === NO_PRODUCER_ID) return;
    const entry = this.entryFor(b.producerId);
    updateEpoch(entry, b.producerEpoch);
    entry.batches.push({ firstSeq: b.baseSequence, lastSeq: b.lastSequence, firstOffset, lastOffset, timestamp });
    if (entry.batches.length > NUM_BATCHES_TO_RETAIN) entry.batches.shift();
    entry.lastTimestamp = timestamp;
    if (b.isTransactional && entry.currentTxnFirstOffset === null) {
      entry.currentTxnFirstOffset = firstOffset;
      this.ongoingTxns.set(firstOffset, b.producerId);
    }
  }

  /**
   * Decides whether a marker about to be written at `offset` is accepted
   * (Kafka: ProducerAppendInfo.appendEndTxnMarker's checkProducerEpoch and
   * checkCoordinatorEpoch: from transaction version 2, the marker's epoch must be above the producer's,
   * but for a retry)
   * and which transaction it ends. Changes nothing.
   */
  checkMarker(marker: TxnMarker, offset: number, origin: AppendOrigin = 'coordinator'): MarkerCheck {
    const entry = this.producers.get(marker.producerId);
    if (origin !== 'replication' && entry !== undefined) {
      const bumped = (marker.transactionVersion ?? 0) >= 2;
      // As Kafka 4.4: a version 2 marker at the current epoch is a retry of one already written when no
      // transaction is open (or the epoch is the last one), and is written again.
      const retried = bumped && marker.producerEpoch === entry.producerEpoch
        && (entry.currentTxnFirstOffset === null || marker.producerEpoch === MAX_PRODUCER_EPOCH);
      if (!retried && (bumped ? marker.producerEpoch <= entry.producerEpoch : marker.producerEpoch < entry.producerEpoch)) {
        return error('INVALID_PRODUCER_EPOCH',
          `Epoch of producer ${marker.producerId} at offset ${offset} is ${marker.producerEpoch}, which is ${bumped ? 'not above' : 'smaller than'} the last seen epoch ${entry.producerEpoch}`);
      }
      if (marker.coordinatorEpoch < entry.coordinatorEpoch) {
        return error('TRANSACTION_COORDINATOR_FENCED',
          `Invalid coordinator epoch for producerId ${marker.producerId} at offset ${offset}: ${marker.coordinatorEpoch} (zombie), ${entry.coordinatorEpoch} (current)`);
      }
    }
    const firstOffset = entry?.currentTxnFirstOffset ?? null;
    if (firstOffset === null) return { kind: 'ok', completed: null };
    return {
      kind: 'ok',
      completed: {
        producerId: marker.producerId, firstOffset, lastOffset: offset, isAborted: !marker.commit,
        lastStableOffset: this.oldestOtherTxn(marker.producerId) ?? offset + 1,
      },
    };
  }

  /**
   * Records a marker appended at `offset` with the transaction checkMarker()
   * said it ends; that transaction stays unstable until onHighWatermarkUpdated
   * passes the marker.
   */
  recordMarker(marker: TxnMarker, completed: CompletedTxn | null, timestamp: number): void {
    const entry = this.entryFor(marker.producerId);
    updateEpoch(entry, marker.producerEpoch);
    entry.coordinatorEpoch = marker.coordinatorEpoch;
    entry.currentTxnFirstOffset = null;
    entry.lastTimestamp = timestamp;
    if (completed) {
      this.ongoingTxns.delete(completed.firstOffset);
      this.unwrittenTxns.set(completed.firstOffset, completed.lastOffset);
    }
  }

  /** The log is readable below `highWatermark`: transactions whose marker is below it are over. */
  onHighWatermarkUpdated(highWatermark: number): void {
    for (const [firstOffset, markerOffset] of this.unwrittenTxns) {
      if (markerOffset < highWatermark) this.unwrittenTxns.delete(firstOffset);
    }
  }

  /** First offset of the oldest transaction not over yet (open, or its marker unwritten); undefined when none. */
  firstUnstableOffset(): number | undefined {
    let first: number | undefined;
    for (const firstOffset of this.ongoingTxns.keys()) {
      first = firstOffset;
      break;
    }
    for (const firstOffset of this.unwrittenTxns.keys()) {
      if (first === undefined || firstOffset < first) first = firstOffset;
    }
    return first;
  }

  private oldestOtherTxn(producerId: number): number | undefined {
    for (const [firstOffset, owner] of this.ongoingTxns) if (owner !== producerId) return firstOffset;
    return undefined;
  }

  /**
   * Applies a batch read back from the log during recovery, without checks
   * (Kafka loads with origin REPLICATION). A new epoch clears the batch
   * window. Returns the transaction a marker ends, if any (its marker is in
   * the log already, so it is over at once).
   */
  replayBatchHeader(h: ReplayedBatch): CompletedTxn | null {
    const completed = this.applyReplicatedBatch(h);
    if (completed) this.unwrittenTxns.delete(completed.firstOffset);
    return completed;
  }

  /**
   * Applies a batch a follower appends as the leader wrote it (Kafka's
   * appendAsFollower, origin REPLICATION): the leader checked it, so this
   * only records it, as the leader did once the batch had its offsets. A
   * transaction a marker ends stays unstable until onHighWatermarkUpdated
   * passes the marker, as on the leader. Returns that transaction, if any.
   */
  applyReplicatedBatch(h: ReplayedBatch): CompletedTxn | null {
    if (h.producerId === NO_PRODUCER_ID) return null;
    if (!h.marker) {
      this.recordBatch(h, h.baseOffset, h.lastOffset, h.maxTimestamp);
      return null;
    }
    const marker: TxnMarker = { producerId: h.producerId, producerEpoch: h.producerEpoch, ...h.marker };
    const check = this.checkMarker(marker, h.baseOffset, 'replication');
    const completed = check.kind === 'ok' ? check.completed : null;
    this.recordMarker(marker, completed, h.maxTimestamp);
    return completed;
  }

  /**
   * Forgets producers idle for at least `producerIdExpirationMs` (Kafka's
   * producer.id.expiration.ms), except those with an open transaction.
   * Returns how many were removed.
   */
  removeExpired(nowMs: number, producerIdExpirationMs: number = DEFAULT_PRODUCER_ID_EXPIRATION_MS): number {
    let removed = 0;
    for (const [id, entry] of this.producers) {
      if (isExpired(entry, nowMs, producerIdExpirationMs)) {
        this.producers.delete(id);
        removed++;
      }
    }
    return removed;
  }

  /**
   * Writes the current state as the snapshot at `offset` (the log end offset
   * it covers), atomically: temp file, fsync, rename, fsync of the directory.
   * The state is captured now, so appends made while the write is in flight
   * are not in it. Keeps the latest few snapshots and deletes older ones.
   * `whenWritten`: the state already holds batches still being written; the
   * file is written once they are in the log, and not at all if their write
   * fails (a snapshot must not know of batches the log does not have).
   */
  writeSnapshot(dir: string, offset: number, whenWritten?: Promise<void>): Promise<void> {
    const bytes = encodeSnapshot(this.producers.values());
    const write = this.snapshotWrites.then(async () => {
      await whenWritten;
      const file = path.join(dir, snapshotFileName(offset));
      await writeFileAtomically(file, bytes);
      await pruneSnapshots(dir);
    });
    this.snapshotWrites = write.catch(() => {}); // one failure must not block later writes
    return write;
  }

  /** Resolves when every snapshot write started so far has finished (or failed). */
  snapshotsWritten(): Promise<void> {
    return this.snapshotWrites;
  }

  /**
   * The state from the newest readable snapshot at or below `maxOffset` (the
   * log end offset), and that snapshot's offset: replay the log from there.
   * Null when there is none (replay from the log start). Corrupt snapshots
   * are deleted and skipped, as Kafka does; so are snapshots above
   * `maxOffset`, which describe log that no longer exists.
   */
  static loadLatest(dir: string, maxOffset: number): { state: ProducerStateManager; offset: number } | null {
    ProducerStateManager.truncateSnapshotsAfter(dir, maxOffset);
    for (const { offset, file } of listSnapshots(dir).reverse()) {
      let producers: ProducerStateEntry[];
      try {
        producers = decodeSnapshot(fs.readFileSync(file));
      } catch {
        fs.rmSync(file, { force: true });
        continue;
      }
      const state = new ProducerStateManager();
      for (const p of producers) state.producers.set(p.producerId, p);
      const open = producers.filter((p) => p.currentTxnFirstOffset !== null).sort((a, b) => a.currentTxnFirstOffset! - b.currentTxnFirstOffset!);
      for (const p of open) state.ongoingTxns.set(p.currentTxnFirstOffset!, p.producerId);
      return { state, offset };
    }
    return null;
  }

  /** Deletes the snapshots above `offset`, e.g. when the log is truncated to it. */
  static truncateSnapshotsAfter(dir: string, offset: number): void {
    for (const s of listSnapshots(dir)) {
      if (s.offset > offset) fs.rmSync(s.file, { force: true });
    }
  }

  private entryFor(producerId: number): ProducerStateEntry {
    let entry = this.producers.get(producerId);
    if (entry === undefined) {
      entry = {
        producerId,
        producerEpoch: NO_PRODUCER_EPOCH,
        batches: [],
        lastTimestamp: -1,
        currentTxnFirstOffset: null,
        coordinatorEpoch: -1,
      };
      this.producers.set(producerId, entry);
    }
    return entry;
  }
}

function error(
  name: 'INVALID_PRODUCER_EPOCH' | 'OUT_OF_ORDER_SEQUENCE_NUMBER' | 'INVALID_TXN_STATE' | 'TRANSACTION_COORDINATOR_FENCED',
  message: string,
): { kind: 'error'; errorCode: number; errorMessage: string } {
  return { kind: 'error', errorCode: ErrorCode[name], errorMessage: message };
}

/** The sequence after `lastSeq`, wrapping from 2^31-1 to 0. */
function inSequence(lastSeq: number, nextSeq: number): boolean {
  return nextSeq === lastSeq + 1 || (nextSeq === 0 && lastSeq === INT32_MAX);
}

/** Kafka's maybeUpdateProducerEpoch: the sequence window belongs to one epoch. */
function updateEpoch(entry: ProducerStateEntry, epoch: number): void {
  if (entry.producerEpoch !== epoch) {
    entry.producerEpoch = epoch;
    entry.batches = [];
  }
}

function isExpired(entry: ProducerStateEntry, nowMs: number, expirationMs: number): boolean {
  return entry.currentTxnFirstOffset === null && nowMs - entry.lastTimestamp >= expirationMs;
}

/** The producer fields of a batch, or null for a batch without a producer id. */
export function producerBatchOf(batch: BatchInfo): ProducerBatch | null {
  if (batch.producerId < 0) return null;
  const lastSequence = batch.baseSequence < 0 ? -1 : (batch.baseSequence + batch.lastOffsetDelta) % 2 ** 31;
  return {
    producerId: batch.producerId, producerEpoch: batch.producerEpoch, baseSequence: batch.baseSequence,
    lastSequence, isTransactional: batch.isTransactional,
  };
}

// ---- snapshot files ----

export function snapshotFileName(offset: number): string {
  return String(offset).padStart(20, '0') + SNAPSHOT_SUFFIX;
}

/** Snapshot files in `dir`, oldest first; none if `dir` does not exist. */
function listSnapshots(dir: string): Array<{ offset: number; file: string }> {
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw e;
  }
  const snapshots: Array<{ offset: number; file: string }> = [];
  for (const name of names) {
    const m = SNAPSHOT_NAME.exec(name);
    if (m) snapshots.push({ offset: Number(m[1]), file: path.join(dir, name) });
  }
  return snapshots.sort((a, b) => a.offset - b.offset);
}

/** Keeps the newest SNAPSHOTS_KEPT snapshots; removes temp files a crash left behind. */
async function pruneSnapshots(dir: string): Promise<void> {
  const snapshots = listSnapshots(dir);
  for (const s of snapshots.slice(0, Math.max(0, snapshots.length - SNAPSHOTS_KEPT))) {
    await fs.promises.rm(s.file, { force: true });
  }
  for (const name of await fs.promises.readdir(dir)) {
    if (name.endsWith(SNAPSHOT_SUFFIX + '.tmp')) await fs.promises.rm(path.join(dir, name), { force: true });
  }
}

function encodeSnapshot(entries: Iterable<ProducerStateEntry>): Buffer {
  const list = [...entries];
  let size = HEADER_BYTES + 4;
  for (const e of list) size += PRODUCER_BYTES + e.batches.length * BATCH_BYTES;
  const buf = Buffer.alloc(size);
  let pos = HEADER_BYTES;
  pos = buf.writeInt32BE(list.length, pos);
  for (const e of list) {
    pos = buf.writeBigInt64BE(BigInt(e.producerId), pos);
    pos = buf.writeInt16BE(e.producerEpoch, pos);
    pos = buf.writeInt32BE(e.coordinatorEpoch, pos);
    pos = buf.writeBigInt64BE(BigInt(e.lastTimestamp), pos);
    pos = buf.writeBigInt64BE(BigInt(e.currentTxnFirstOffset ?? -1), pos);
    pos = buf.writeInt8(e.batches.length, pos);
    for (const m of e.batches) {
      pos = buf.writeInt32BE(m.firstSeq, pos);
      pos = buf.writeInt32BE(m.lastSeq, pos);
      pos = buf.writeBigInt64BE(BigInt(m.firstOffset), pos);
      pos = buf.writeBigInt64BE(BigInt(m.lastOffset), pos);
      pos = buf.writeBigInt64BE(BigInt(m.timestamp), pos);
    }
  }
  buf.writeInt16BE(SNAPSHOT_VERSION, 0);
  buf.writeUInt32BE(crc32c(buf, HEADER_BYTES), 2);
  return buf;
}

class CorruptSnapshotError extends Error {}

/** Throws CorruptSnapshotError (or a RangeError on a short read) for anything but a whole, valid file. */
function decodeSnapshot(buf: Buffer): ProducerStateEntry[] {
  if (buf.length < HEADER_BYTES + 4) throw new CorruptSnapshotError('too short');
  const version = buf.readInt16BE(0);
  if (version !== SNAPSHOT_VERSION) throw new CorruptSnapshotError(`unknown version ${version}`);
  if (buf.readUInt32BE(2) !== crc32c(buf, HEADER_BYTES)) throw new CorruptSnapshotError('CRC mismatch');

  let pos = HEADER_BYTES;
  const int64 = (): number => {
    const v = Number(buf.readBigInt64BE(pos));
    pos += 8;
    return v;
  };
  const int32 = (): number => {
    const v = buf.readInt32BE(pos);
    pos += 4;
    return v;
  };
  const count = int32();
  const entries: ProducerStateEntry[] = [];
  for (let i = 0; i < count; i++) {
    const producerId = int64();
    const producerEpoch = buf.readInt16BE(pos);
    pos += 2;
    const coordinatorEpoch = int32();
    const lastTimestamp = int64();
    const txnFirstOffset = int64();
    const batchCount = buf.readInt8(pos);
    pos += 1;
    if (batchCount < 0 || batchCount > NUM_BATCHES_TO_RETAIN) throw new CorruptSnapshotError(`bad batch count ${batchCount}`);
    const batches: BatchMetadata[] = [];
    for (let j = 0; j < batchCount; j++) {
      batches.push({ firstSeq: int32(), lastSeq: int32(), firstOffset: int64(), lastOffset: int64(), timestamp: int64() });
    }
    entries.push({
      producerId,
      producerEpoch,
      batches,
      lastTimestamp,
      currentTxnFirstOffset: txnFirstOffset >= 0 ? txnFirstOffset : null,
      coordinatorEpoch,
    });
  }
  if (pos !== buf.length) throw new CorruptSnapshotError('trailing bytes');
  return entries;
}
