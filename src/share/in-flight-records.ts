// The share-partition state machine (Kafka 4.4's SharePartition): the in-flight records of one share
// group on one topic partition, from the start offset (SPSO) to the end offset (SPEO). Runs of
// offsets are kept per batch (one state for the batch) until an acquisition, acknowledgement or
// release covers only part of it; then that batch keeps one state per offset, as Kafka does.
//
// Acquisition, acknowledgement and release change the records at once (the fetch path calls them
// as requests come); their writes to the share coordinator go one after another per share-partition,
// in the order of the changes, and a failed acknowledgement write puts its records back as they were.
import { ErrorCode } from '../common/errors';
import type { Logger } from '../common/logger';
import type { ShareGroupSettings } from '../config/group-config';
import { DeliveryState, Persister, SharePartitionKey, StateBatch } from '../share-state/persister';
import {
  AbortedTransaction,
  AcknowledgeType,
  AcknowledgementBatch,
  AcquiredRecords,
  ArchiveCause,
  ArchiveListener,
  LogBatchBounds,
  SharePartition,
} from './share-partition';

export type ResetTarget = 'earliest' | 'latest' | { timestampMs: number };

/** Schedules `fire` after delayMs; returns what cancels it (tests drive their own clock). */
export type SetTimer = (fire: () => void, delayMs: number) => () => void;

export interface SharePartitionOptions {
  key: SharePartitionKey;
  topicName: string;
  leaderEpoch: number;
  persister: Persister;
  /** The group's share.* values, read at each use. */
  settings: () => ShareGroupSettings;
  /**
   * The offset share.auto.offset.reset starts an uninitialized share-partition at: the log start,
   * the log end, or the first offset at or past the timestamp (the log end when none is, as Kafka's
   * offsetForTimestamp answers).
   */
  resetOffset: (to: ResetTarget) => Promise<bigint>;
  /** Told of the records a rejection or the delivery count limit archived (the dead-letter queue). */
  onArchived?: ArchiveListener;
  /** The clock of the lock deadlines (tests). */
  now?: () => number;
  /** The timers of lock expiry (tests: with `now`, a clock they move by hand). */
  setTimer?: SetTimer;
  logger?: Logger;
}

enum RecordState {
  AVAILABLE = 0,
  ACQUIRED = 1,
  ACKNOWLEDGED = 2,
  /** Rejected or past the delivery count limit, on its way to the group's dead-letter queue (KIP-1191). */
  ARCHIVING = 3,
  ARCHIVED = 4,
}

/** An acquisition: the member and deadline of the records that point at it (lazily dropped once none do). */
interface AcquisitionLock {
  readonly memberId: string;
  readonly deadline: number;
  readonly firstOffset: bigint;
  readonly lastOffset: bigint;
}

/** The state of a batch (while it has one) or of one offset. */
interface RecordSlot {
  state: RecordState;
  deliveryCount: number;
  memberId: string | null;
  lock: AcquisitionLock | null;
  /** Changed by an acknowledgement whose write is in flight: not to be acquired, expired or counted yet. */
  pending: AcknowledgementWrite | null;
}

interface InFlightBatch {
  readonly firstOffset: bigint;
  readonly lastOffset: bigint;
  /** The whole batch's state while `offsets` is null. */
  slot: RecordSlot;
  /** One state per offset (index: offset - firstOffset) once the batch is split. */
  offsets: RecordSlot[] | null;
}

interface SlotChange {
  slot: RecordSlot;
  previous: Omit<RecordSlot, 'pending'>;
}

/** An acknowledgement applied in memory, its write in flight: committed or rolled back when it answers. */
interface AcknowledgementWrite {
  readonly changes: SlotChange[];
  readonly ranges: Array<[bigint, bigint]>;
  readonly archived: Map<ArchiveCause, Array<[bigint, bigint, number]>>;
}

const isTerminal = (s: RecordState) => s === RecordState.ACKNOWLEDGED || s === RecordState.ARCHIVED;

/** Kafka's SharePartition.fetchPersisterError: the share coordinator's code as the fetch path answers it. */
export function persisterErrorCode(code: number): number {
  switch (code) {
    case ErrorCode.NOT_COORDINATOR:
    case ErrorCode.COORDINATOR_NOT_AVAILABLE:
    case ErrorCode.COORDINATOR_LOAD_IN_PROGRESS:
      return ErrorCode.COORDINATOR_NOT_AVAILABLE;
    case ErrorCode.GROUP_ID_NOT_FOUND:
    case ErrorCode.UNKNOWN_TOPIC_OR_PARTITION:
      return code;
    case ErrorCode.FENCED_LEADER_EPOCH:
    case ErrorCode.FENCED_STATE_EPOCH:
      return ErrorCode.NOT_LEADER_OR_FOLLOWER;
    default:
      return ErrorCode.UNKNOWN_SERVER_ERROR;
  }
}

/** Kafka's throttleRecordsDeliveryLimit: from this delivery count on, a batch is redelivered in shrinking parts. */
const throttleLimit = (deliveryCountLimit: number) => Math.max(2, Math.ceil(deliveryCountLimit / 2));

class MinHeap<T> {
  private readonly items: T[] = [];
  constructor(private readonly less: (a: T, b: T) => boolean) {}
  get size(): number { return this.items.length; }
  peek(): T | undefined { return this.items[0]; }
  push(item: T): void {
    const a = this.items;
    a.push(item);
    for (let i = a.length - 1; i > 0;) {
      const parent = (i - 1) >> 1;
      if (!this.less(a[i], a[parent])) break;
      [a[i], a[parent]] = [a[parent], a[i]];
      i = parent;
    }
  }
  pop(): T | undefined {
    const a = this.items;
    const top = a[0];
    const last = a.pop();
    if (a.length > 0 && last !== undefined) {
      a[0] = last;
      for (let i = 0; ;) {
        const [l, r] = [2 * i + 1, 2 * i + 2];
        let m = i;
        if (l < a.length && this.less(a[l], a[m])) m = l;
        if (r < a.length && this.less(a[r], a[m])) m = r;
        if (m === i) break;
        [a[i], a[m]] = [a[m], a[i]];
        i = m;
      }
    }
    return top;
  }
  clear(): void { this.items.length = 0; }
}

const defaultSetTimer: SetTimer = (fire, delayMs) => {
  const t = setTimeout(fire, delayMs);
  t.unref();
  return () => clearTimeout(t);
};

class InFlightSharePartition implements SharePartition {
  readonly key: SharePartitionKey;
  readonly topicName: string;
  private readonly now: () => number;
  private readonly setTimer: SetTimer;
  /** Sorted, non-overlapping; offsets of [startOffset, cacheEnd] not in any batch were never delivered (a gap in the persisted state). */
  private batches: InFlightBatch[] = [];
  private start = 0n;
  private stateEpoch = 0;
  private loading: Promise<number> | null = null;
  private loaded = false;
  private closed = false;
  /** Kafka's findNextFetchOffset: some offset below the end may be acquirable. */
  private mayHaveAvailable = false;
  private readonly locks = new MinHeap<AcquisitionLock>((a, b) => a.deadline < b.deadline);
  private cancelTimer: (() => void) | null = null;
  private timerDeadline = Infinity;
  private readonly listeners: Array<() => void> = [];
  /** The writes, one after another. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly opts: SharePartitionOptions) {
    this.key = opts.key;
    this.topicName = opts.topicName;
    this.now = opts.now ?? Date.now;
    this.setTimer = opts.setTimer ?? defaultSetTimer;
  }

  // ---- loading ----

  load(): Promise<number> {
    if (this.closed) return Promise.resolve(ErrorCode.NOT_LEADER_OR_FOLLOWER);
    if (!this.loading) {
      this.loading = this.doLoad().then((code) => {
        // A failed load is tried again by the next call (the coordinator may be loading).
        if (code !== ErrorCode.NONE) this.loading = null;
        return code;
      });
    }
    return this.loading;
  }

  private async doLoad(): Promise<number> {
    const { persister, key, leaderEpoch } = this.opts;
    let result;
    try {
      result = await persister.read(key, leaderEpoch);
    } catch (e) {
      this.opts.logger?.warn({ err: e, key }, 'share-partition state read failed');
      return ErrorCode.UNKNOWN_SERVER_ERROR;
    }
    if (this.closed) return ErrorCode.NOT_LEADER_OR_FOLLOWER;
    // A share-partition the share coordinator never saw: the group coordinator did not initialize
    // it, so its leader does (at the offset share.auto.offset.reset picks).
    const neverInitialized = result.errorCode === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
    if (result.errorCode !== ErrorCode.NONE && !neverInitialized) return persisterErrorCode(result.errorCode);
    const state = result.errorCode === ErrorCode.NONE ? (result as Extract<typeof result, { errorCode: 0 }>) : null;
    let startOffset = state?.startOffset ?? -1n;
    if (startOffset < 0n) {
      try {
        startOffset = await this.opts.resetOffset(this.resetTarget());
      } catch (e) {
        this.opts.logger?.warn({ err: e, key }, 'share-partition reset offset lookup failed');
        return ErrorCode.UNKNOWN_SERVER_ERROR;
      }
      if (neverInitialized) {
        const init = await persister.initialize(key, 0, startOffset).catch(() => ({ errorCode: ErrorCode.UNKNOWN_SERVER_ERROR }));
        if (init.errorCode !== ErrorCode.NONE) return persisterErrorCode(init.errorCode);
      }
    }
    if (this.closed) return ErrorCode.NOT_LEADER_OR_FOLLOWER;
    this.stateEpoch = state?.stateEpoch ?? 0;
    this.start = startOffset;
    let previousLast = startOffset - 1n;
    for (const b of state?.stateBatches ?? []) {
      // Kafka's checks of the stored batches: ordered, at or past the start, well formed.
      if (b.firstOffset < startOffset || b.lastOffset < b.firstOffset || b.firstOffset <= previousLast) {
        this.opts.logger?.error({ key, batch: b }, 'invalid share-partition state batch');
        this.batches = [];
        return ErrorCode.UNKNOWN_SERVER_ERROR;
      }
      previousLast = b.lastOffset;
      const stateOf = b.deliveryState === DeliveryState.ACKNOWLEDGED ? RecordState.ACKNOWLEDGED
        : b.deliveryState === DeliveryState.ARCHIVED ? RecordState.ARCHIVED
          : b.deliveryState === DeliveryState.ARCHIVING ? RecordState.ARCHIVING : RecordState.AVAILABLE;
      this.batches.push({
        firstOffset: b.firstOffset,
        lastOffset: b.lastOffset,
        slot: { state: stateOf, deliveryCount: b.deliveryCount, memberId: null, lock: null, pending: null },
        offsets: null,
      });
    }
    this.advanceStart();
    this.loaded = true;
    this.mayHaveAvailable = true;
    this.resumeArchiving();
    this.notifyAvailable();
    return ErrorCode.NONE;
  }

  /** Records stored ARCHIVING went to the dead-letter queue, or not, before the restart: they go again (Kafka's maybeResumeDlqArchiving). */
  private resumeArchiving(): void {
    const limit = this.opts.settings().deliveryCountLimit;
    for (const b of this.batches) {
      if (b.slot.state !== RecordState.ARCHIVING) continue;
      // The cause is not stored: a record at the limit was most likely archived for it.
      this.finishArchive([[b.firstOffset, b.lastOffset, b.slot.deliveryCount]], b.slot.deliveryCount >= limit ? 'delivery-count-exceeded' : 'rejected');
    }
  }

  private resetTarget(): ResetTarget {
    const reset = this.opts.settings().autoOffsetReset;
    return typeof reset === 'string' ? reset : { timestampMs: this.now() - reset.durationMs };
  }

  // ---- offsets ----

  startOffset(): bigint {
    return this.start;
  }

  /** Kafka's SPEO: the last in-flight offset, or the start offset when none is in flight. */
  endOffset(): bigint {
    const end = this.cacheEnd();
    return end < this.start ? this.start : end;
  }

  private cacheEnd(): bigint {
    return this.batches.length > 0 ? this.batches[this.batches.length - 1].lastOffset : this.start - 1n;
  }

  private numInFlightRecords(): number {
    const end = this.cacheEnd();
    return end < this.start ? 0 : Number(end - this.start + 1n);
  }

  nextFetchOffset(): bigint | null {
    if (!this.loaded || this.closed) return null;
    const end = this.cacheEnd();
    const past = end < this.start ? this.start : end + 1n;
    const next = this.mayHaveAvailable ? this.firstAcquirableOffset() : null;
    if (next !== null) return next;
    this.mayHaveAvailable = false;
    // Kafka's canAcquireRecords: new records only while fewer than share.partition.max.record.locks are in flight.
    return this.numInFlightRecords() < this.opts.settings().maxRecordLocks ? past : null;
  }

  /** The first offset from the start that is AVAILABLE, or was never delivered (a gap below the end). */
  private firstAcquirableOffset(): bigint | null {
    let pos = this.start;
    for (let i = this.indexAtOrAfter(pos); i < this.batches.length; i++) {
      const b = this.batches[i];
      if (pos < b.firstOffset) return pos;
      if (b.offsets === null) {
        if (acquirable(b.slot)) return pos;
      } else {
        for (let o = pos; o <= b.lastOffset; o++) if (acquirable(b.offsets[Number(o - b.firstOffset)])) return o;
      }
      pos = b.lastOffset + 1n;
    }
    return null;
  }

  /** Index of the first batch whose lastOffset >= offset. */
  private indexAtOrAfter(offset: bigint): number {
    let [lo, hi] = [0, this.batches.length];
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.batches[mid].lastOffset < offset) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  // ---- acquisition ----

  acquire(memberId: string, batches: readonly LogBatchBounds[], maxRecords: number,
    aborted?: readonly AbortedTransaction[], fetchOffset?: bigint, recordLimit = false): AcquiredRecords[] {
    if (!this.loaded || this.closed || batches.length === 0 || maxRecords <= 0) return [];
    const settings = this.opts.settings();
    let lastOffset = batches[batches.length - 1].lastOffset;
    if (lastOffset < this.start) return [];
    const firstOffset = batches[0].baseOffset > this.start ? batches[0].baseOffset : this.start;
    // Kafka's lastOffsetAndMaxRecordsToAcquire: past max record locks, only records already in flight.
    let limit = Math.min(maxRecords, settings.maxRecordLocks - this.numInFlightRecords());
    if (limit <= 0) {
      const end = this.cacheEnd();
      if (end < this.start || firstOffset > end) return [];
      limit = Math.min(maxRecords, Number(end - firstOffset + 1n));
      if (lastOffset > end) lastOffset = end;
    }
    if (fetchOffset !== undefined) this.archiveMissing(fetchOffset, batches[0].baseOffset);
    // Offsets never delivered below the first batch returned are not in the log any more (the read
    // started at or below them): archived, so the start can move past them.
    this.archiveNeverDelivered(this.start, batches[0].baseOffset - 1n);

    const skipped = this.undeliverableRanges(batches, settings.readCommitted ? aborted ?? [] : []);
    const acquired: AcquiredRecords[] = [];
    const archived: Array<[bigint, bigint, number]> = [];
    const lock = (first: bigint, last: bigint) => this.newLock(memberId, first, last, settings.recordLockDurationMs);
    let count = 0;
    let pos = firstOffset;
    let i = this.indexAtOrAfter(pos);
    const tLimit = throttleLimit(settings.deliveryCountLimit);
    for (; i < this.batches.length && count < limit && pos <= lastOffset; i++) {
      const b = this.batches[i];
      if (pos < b.firstOffset) {
        // Never delivered (a gap of the persisted state): new records.
        const gapLast = b.firstOffset - 1n < lastOffset ? b.firstOffset - 1n : lastOffset;
        count += this.acquireNew(memberId, batches, skipped, pos, gapLast, limit - count, recordLimit, acquired, lock, i);
        i = this.indexAtOrAfter(b.firstOffset) - 1;
        pos = b.firstOffset;
        continue;
      }
      const reqLast = b.lastOffset < lastOffset ? b.lastOffset : lastOffset;
      // In record_limit mode a batch larger than what is left is acquired in part (Kafka's checkForRecordLimitSubsetMatch).
      const fullMatch = b.offsets === null && pos <= b.firstOffset && reqLast >= b.lastOffset
        && (!recordLimit || b.lastOffset - b.firstOffset + 1n <= BigInt(limit - count));
      const throttle = this.shouldThrottle(b, pos, reqLast, tLimit);
      if (throttle && count > 0) break;
      if (fullMatch && !throttle) {
        if (acquirable(b.slot)) {
          if (b.slot.deliveryCount >= settings.deliveryCountLimit) {
            // The limit was lowered since: archived, not delivered again.
            Object.assign(b.slot, { state: archivedState(settings), memberId: null, lock: null });
            archived.push([b.firstOffset, b.lastOffset, b.slot.deliveryCount]);
          } else {
            Object.assign(b.slot, { state: RecordState.ACQUIRED, deliveryCount: b.slot.deliveryCount + 1, memberId, lock: lock(b.firstOffset, b.lastOffset) });
            pushAcquired(acquired, b.firstOffset, b.lastOffset, b.slot.deliveryCount);
            count += Number(b.lastOffset - b.firstOffset + 1n);
          }
        }
      } else if (b.offsets !== null || acquirable(b.slot)) {
        count += this.acquireSubset(memberId, b, pos, reqLast, recordLimit ? limit - count : Infinity, settings, tLimit, acquired, archived, lock);
        if (throttle && count > 0) break;
      }
      pos = b.lastOffset + 1n;
    }
    if (count < limit && pos <= lastOffset && pos > this.cacheEnd()) {
      this.acquireNew(memberId, batches, skipped, pos, lastOffset, limit - count, recordLimit, acquired, lock, this.batches.length);
    }
    if (archived.length > 0) this.persistChanges(archived.map(([first, last]) => [first, last]));
    this.finishArchive(archived, 'delivery-count-exceeded');
    // Control records and aborted ones at the head need no acknowledgement.
    this.advanceStart();
    return acquired;
  }

  /** Kafka's shouldThrottleRecordsDelivery: records near the delivery count limit go out a few at a time. */
  private shouldThrottle(b: InFlightBatch, first: bigint, last: bigint, tLimit: number): boolean {
    if (b.offsets === null) return acquirable(b.slot) && b.slot.deliveryCount >= tLimit;
    let max = 0;
    for (let o = first > b.firstOffset ? first : b.firstOffset; o <= last; o++) {
      max = Math.max(max, b.offsets[Number(o - b.firstOffset)].deliveryCount);
    }
    return max >= tLimit;
  }

  /** Kafka's acquireSubsetBatchRecords over one batch, split per offset. */
  private acquireSubset(memberId: string, b: InFlightBatch, first: bigint, last: bigint, maxCount: number, settings: ShareGroupSettings,
    tLimit: number, acquired: AcquiredRecords[], archived: Array<[bigint, bigint, number]>, lock: (f: bigint, l: bigint) => AcquisitionLock): number {
    const offsets = this.split(b);
    const deliveryLimit = settings.deliveryCountLimit;
    let count = 0;
    let cap = -1;
    const from = first > b.firstOffset ? first : b.firstOffset;
    const taken: bigint[] = [];
    for (let o = from; o <= last; o++) {
      const slot = offsets[Number(o - b.firstOffset)];
      if (!acquirable(slot)) continue;
      if (slot.deliveryCount >= deliveryLimit) {
        Object.assign(slot, { state: archivedState(settings), memberId: null, lock: null });
        archived.push([o, o, slot.deliveryCount]);
        continue;
      }
      // The last delivery attempt goes out alone.
      if (deliveryLimit > 2 && slot.deliveryCount === deliveryLimit - 1 && count > 0) break;
      if (slot.deliveryCount >= tLimit && cap < 0) cap = Math.max(1, offsets.length >> (slot.deliveryCount - tLimit + 1));
      slot.state = RecordState.ACQUIRED;
      slot.deliveryCount++;
      slot.memberId = memberId;
      taken.push(o);
      pushAcquired(acquired, o, o, slot.deliveryCount);
      count++;
      if (slot.deliveryCount === deliveryLimit && deliveryLimit > 2) break;
      if ((cap > 0 && count === cap) || count === maxCount) break;
    }
    if (taken.length > 0) {
      const l = lock(taken[0], taken[taken.length - 1]);
      for (const o of taken) offsets[Number(o - b.firstOffset)].lock = l;
    }
    return count;
  }

  /**
   * Records never delivered, from `from` to `to`, taken a whole log batch at a time until `limit`
   * is reached (Kafka's batch-optimized acquisition), or exactly `limit` in record_limit mode; one
   * in-flight batch per contiguous run, inserted at batch index `at`. Control batches and aborted
   * records become archived runs.
   */
  private acquireNew(memberId: string, log: readonly LogBatchBounds[], skipped: ReadonlyArray<readonly [bigint, bigint]>,
    from: bigint, to: bigint, limit: number, recordLimit: boolean, acquired: AcquiredRecords[],
    lock: (f: bigint, l: bigint) => AcquisitionLock, at: number): number {
    let last = from - 1n;
    for (const b of log) {
      if (b.lastOffset < from) continue;
      if (b.baseOffset > to) break;
      last = b.lastOffset < to ? b.lastOffset : to;
      const wanted = Number(last - from + 1n) - skippedCount(skipped, from, last);
      if (wanted >= limit) break;
    }
    if (last < from) return 0;
    if (recordLimit) {
      // The offset of the limit-th record that can be delivered.
      for (let end = from + BigInt(limit) - 1n; ;) {
        const next = from + BigInt(limit) - 1n + BigInt(skippedCount(skipped, from, end));
        if (next === end) {
          if (end < last) last = end;
          break;
        }
        end = next;
      }
    }
    // The range [from, last] split into acquired runs and skipped (archived) runs.
    const runs: InFlightBatch[] = [];
    let count = 0;
    let pos = from;
    const l = lock(from, last);
    const pushRun = (f: bigint, t: bigint, state: RecordState) => {
      if (f > t) return;
      const acquiredRun = state === RecordState.ACQUIRED;
      runs.push({ firstOffset: f, lastOffset: t, offsets: null,
        slot: { state, deliveryCount: acquiredRun ? 1 : 0, memberId: acquiredRun ? memberId : null, lock: acquiredRun ? l : null, pending: null } });
      if (acquiredRun) {
        pushAcquired(acquired, f, t, 1);
        count += Number(t - f + 1n);
      }
    };
    for (const [sf, sl] of skipped) {
      if (sl < pos || sf > last) continue;
      const f = sf > pos ? sf : pos;
      const t = sl < last ? sl : last;
      pushRun(pos, f - 1n, RecordState.ACQUIRED);
      pushRun(f, t, RecordState.ARCHIVED);
      pos = t + 1n;
    }
    pushRun(pos, last, RecordState.ACQUIRED);
    this.batches.splice(at, 0, ...runs);
    return count;
  }

  /** Offsets of control batches and (read_committed) aborted transactional batches, in order. */
  private undeliverableRanges(log: readonly LogBatchBounds[], aborted: readonly AbortedTransaction[]): Array<[bigint, bigint]> {
    const ranges: Array<[bigint, bigint]> = [];
    const pendingAborts = [...aborted].sort((a, b) => (a.firstOffset < b.firstOffset ? -1 : a.firstOffset > b.firstOffset ? 1 : 0));
    const abortedProducers = new Set<bigint>();
    let next = 0;
    let previousLast: bigint | null = null;
    for (const b of log) {
      // Between two batches: offsets compaction removed.
      if (previousLast !== null && b.baseOffset > previousLast + 1n) ranges.push([previousLast + 1n, b.baseOffset - 1n]);
      previousLast = b.lastOffset;
      while (next < pendingAborts.length && pendingAborts[next].firstOffset <= b.lastOffset) abortedProducers.add(pendingAborts[next++].producerId);
      if (b.isControl) {
        // The marker ends its producer's aborted transaction.
        abortedProducers.delete(b.producerId);
        ranges.push([b.baseOffset, b.lastOffset]);
      } else if (b.isTransactional && abortedProducers.has(b.producerId)) {
        ranges.push([b.baseOffset, b.lastOffset]);
      }
    }
    return ranges;
  }

  /** Archived runs for the offsets of [from, to] in no in-flight batch (never delivered, gone from the log). */
  private archiveNeverDelivered(from: bigint, to: bigint): void {
    const holes: InFlightBatch[] = [];
    let pos = from;
    const hole = (first: bigint, last: bigint) => holes.push({ firstOffset: first, lastOffset: last, offsets: null,
      slot: { state: RecordState.ARCHIVED, deliveryCount: 0, memberId: null, lock: null, pending: null } });
    for (let i = this.indexAtOrAfter(from); i < this.batches.length && pos <= to; i++) {
      const b = this.batches[i];
      if (b.firstOffset > pos) hole(pos, b.firstOffset - 1n < to ? b.firstOffset - 1n : to);
      pos = b.lastOffset + 1n;
    }
    if (pos <= to) hole(pos, to);
    if (holes.length === 0) return;
    for (const h of holes) this.batches.splice(this.indexAtOrAfter(h.firstOffset), 0, h);
  }

  /**
   * Kafka's maybeArchiveStaleBatches: available records from the fetch offset up to the first batch
   * the log returned are gone from it (compaction): archived.
   */
  private archiveMissing(fetchOffset: bigint, firstReturned: bigint): void {
    if (fetchOffset >= firstReturned) return;
    const changed: InFlightBatch[] = [];
    for (let i = this.indexAtOrAfter(fetchOffset); i < this.batches.length; i++) {
      const b = this.batches[i];
      if (b.firstOffset >= firstReturned) break;
      if (b.offsets === null && b.lastOffset < firstReturned && b.firstOffset >= fetchOffset) {
        if (acquirable(b.slot)) {
          b.slot.state = RecordState.ARCHIVED;
          changed.push(b);
        }
        continue;
      }
      if (b.offsets === null && !acquirable(b.slot)) continue;
      const offsets = this.split(b);
      let any = false;
      for (let o = b.firstOffset; o <= b.lastOffset && o < firstReturned; o++) {
        const slot = offsets[Number(o - b.firstOffset)];
        if (o >= fetchOffset && acquirable(slot)) {
          slot.state = RecordState.ARCHIVED;
          any = true;
        }
      }
      if (any) changed.push(b);
    }
    if (changed.length > 0) this.persistChanges(changed.map((b) => [b.firstOffset, b.lastOffset]));
  }

  private newLock(memberId: string, firstOffset: bigint, lastOffset: bigint, durationMs: number): AcquisitionLock {
    const lock = { memberId, firstOffset, lastOffset, deadline: this.now() + durationMs };
    this.locks.push(lock);
    this.armTimer();
    return lock;
  }

  private split(b: InFlightBatch): RecordSlot[] {
    if (b.offsets === null) {
      const s = b.slot;
      b.offsets = Array.from({ length: Number(b.lastOffset - b.firstOffset + 1n) },
        () => ({ state: s.state, deliveryCount: s.deliveryCount, memberId: s.memberId, lock: s.lock, pending: s.pending }));
    }
    return b.offsets;
  }

  // ---- lock expiry ----

  private armTimer(): void {
    const top = this.locks.peek();
    if (this.closed || top === undefined || top.deadline >= this.timerDeadline) return;
    this.cancelTimer?.();
    this.timerDeadline = top.deadline;
    this.cancelTimer = this.setTimer(() => {
      this.cancelTimer = null;
      this.timerDeadline = Infinity;
      this.expireLocks();
    }, Math.max(0, top.deadline - this.now()));
  }

  /** Kafka's acquisition lock timeout: the records still held under an expired lock are released. */
  private expireLocks(): void {
    if (this.closed) return;
    const now = this.now();
    const ranges: Array<[bigint, bigint]> = [];
    const archived: Array<[bigint, bigint, number]> = [];
    const settings = this.opts.settings();
    for (let lock = this.locks.peek(); lock !== undefined && lock.deadline <= now; lock = this.locks.peek()) {
      this.locks.pop();
      this.forSlots(lock.firstOffset, lock.lastOffset, (slot, first, last) => {
        if (slot.lock !== lock || slot.state !== RecordState.ACQUIRED || slot.pending) return;
        this.release(slot, first, last, settings, archived);
        ranges.push([first, last]);
      });
    }
    this.armTimer();
    if (ranges.length === 0) return;
    this.persistChanges(ranges);
    this.finishArchive(archived, 'delivery-count-exceeded');
    this.notifyAvailable();
  }

  /** ACQUIRED → AVAILABLE, or archived at the delivery count limit (or below the start offset). */
  private release(slot: RecordSlot, first: bigint, last: bigint, settings: ShareGroupSettings, archived: Array<[bigint, bigint, number]>): void {
    slot.memberId = null;
    slot.lock = null;
    if (last < this.start) {
      slot.state = RecordState.ARCHIVED;
    } else if (slot.deliveryCount >= settings.deliveryCountLimit) {
      slot.state = archivedState(settings);
      archived.push([first, last, slot.deliveryCount]);
    } else {
      slot.state = RecordState.AVAILABLE;
      this.mayHaveAvailable = true;
    }
  }

  /**
   * Calls fn for each state covering part of [first, last]: a whole batch's (with its bounds) or one
   * offset's. Batches are split per offset first when only partly covered ('partial') or always,
   * except one whose state is being written (its rollback holds that state).
   */
  private forSlots(first: bigint, last: bigint, fn: (slot: RecordSlot, first: bigint, last: bigint) => void,
    split: 'never' | 'partial' | 'always' = 'never'): void {
    for (let i = this.indexAtOrAfter(first); i < this.batches.length; i++) {
      const b = this.batches[i];
      if (b.firstOffset > last) break;
      const whole = first <= b.firstOffset && last >= b.lastOffset;
      if (b.offsets === null && (split === 'never' || (split === 'partial' && whole) || b.slot.pending)) {
        fn(b.slot, b.firstOffset, b.lastOffset);
        continue;
      }
      const offsets = this.split(b);
      const hi = last < b.lastOffset ? last : b.lastOffset;
      for (let o = first > b.firstOffset ? first : b.firstOffset; o <= hi; o++) fn(offsets[Number(o - b.firstOffset)], o, o);
    }
  }

  // ---- acknowledgement ----

  acknowledge(memberId: string, batches: readonly AcknowledgementBatch[]): Promise<number> {
    const applied = this.applyAcknowledgements(memberId, batches);
    if (typeof applied === 'number') return Promise.resolve(applied);
    return this.serialized(() => this.commitAcknowledgements(applied));
  }

  /** Checks every range, then changes the records (pending until written); an error code when a check fails. */
  private applyAcknowledgements(memberId: string, batches: readonly AcknowledgementBatch[]): AcknowledgementWrite | number {
    if (!this.loaded || this.closed) return ErrorCode.NOT_LEADER_OR_FOLLOWER;
    const settings = this.opts.settings();
    const invalid = validateAcknowledgements(batches);
    if (invalid !== ErrorCode.NONE) return invalid;
    // All or nothing: every range is checked before anything changes.
    for (const ack of batches) {
      const code = this.checkAcknowledgement(memberId, ack, settings.renewAcknowledgeEnable);
      if (code !== ErrorCode.NONE) return code;
    }
    const write: AcknowledgementWrite = { changes: [], ranges: [], archived: new Map([['rejected', []], ['delivery-count-exceeded', []]]) };
    for (const ack of batches) {
      const typeAt = (offset: bigint) => (ack.acknowledgeTypes.length === 1 ? ack.acknowledgeTypes[0] : ack.acknowledgeTypes[Number(offset - ack.firstOffset)]);
      let renewed: AcquisitionLock | null = null;
      const visit = (slot: RecordSlot, first: bigint, last: bigint) => {
        const type = typeAt(first);
        if (type === AcknowledgeType.RENEW) {
          slot.lock = renewed ??= this.newLock(memberId, ack.firstOffset, ack.lastOffset, settings.recordLockDurationMs);
          return;
        }
        write.changes.push({ slot, previous: { state: slot.state, deliveryCount: slot.deliveryCount, memberId: slot.memberId, lock: slot.lock } });
        write.ranges.push([first, last]);
        slot.pending = write;
        slot.memberId = null;
        slot.lock = null;
        if (type === AcknowledgeType.ACCEPT) {
          slot.state = RecordState.ACKNOWLEDGED;
        } else if (type === AcknowledgeType.RELEASE) {
          if (slot.deliveryCount >= settings.deliveryCountLimit) {
            slot.state = archivedState(settings);
            write.archived.get('delivery-count-exceeded')!.push([first, last, slot.deliveryCount]);
          } else {
            slot.state = RecordState.AVAILABLE;
          }
        } else if (type === AcknowledgeType.REJECT) {
          slot.state = archivedState(settings);
          write.archived.get('rejected')!.push([first, last, slot.deliveryCount]);
        } else {
          slot.state = RecordState.ARCHIVED;
        }
      };
      // One type per offset: every batch it covers keeps its states per offset.
      this.forSlots(ack.firstOffset, ack.lastOffset, visit, ack.acknowledgeTypes.length === 1 ? 'partial' : 'always');
    }
    return write;
  }

  /** Writes an acknowledgement's changes, then commits them, or puts the records back when the write fails. */
  private async commitAcknowledgements(write: AcknowledgementWrite): Promise<number> {
    if (write.changes.length === 0) return ErrorCode.NONE;
    const code = await this.write(write.ranges, write);
    for (const { slot, previous } of write.changes) {
      slot.pending = null;
      if (code !== ErrorCode.NONE) {
        Object.assign(slot, previous);
        // A lock that expired while the write was in flight expires now.
        if (previous.lock !== null && previous.lock.deadline <= this.now()) this.locks.push(previous.lock);
      } else if (slot.state === RecordState.AVAILABLE) {
        this.mayHaveAvailable = true;
      }
    }
    if (code !== ErrorCode.NONE) {
      this.armTimer();
      return code;
    }
    this.advanceStart();
    for (const [cause, runs] of write.archived) this.finishArchive(runs, cause);
    this.notifyAvailable();
    return ErrorCode.NONE;
  }

  /** Kafka's checks of one range against the in-flight records (fetchSubMapForAcknowledgementBatch and the state checks). */
  private checkAcknowledgement(memberId: string, ack: AcknowledgementBatch, renewEnabled: boolean): number {
    if (!renewEnabled && ack.acknowledgeTypes.includes(AcknowledgeType.RENEW)) return ErrorCode.INVALID_RECORD_STATE;
    let floor = this.floorIndex(ack.firstOffset);
    // A range starting below the first batch kept still counts from the start offset on.
    if (floor < 0 && ack.firstOffset < this.start && this.start <= ack.lastOffset) floor = this.floorIndex(this.start);
    if (floor < 0) return ErrorCode.INVALID_RECORD_STATE;
    const last = this.batches[this.floorIndex(ack.lastOffset)];
    if (last.lastOffset < ack.firstOffset || ack.lastOffset > last.lastOffset) return ErrorCode.INVALID_REQUEST;
    let held = true;
    this.forSlots(ack.firstOffset, ack.lastOffset, (slot) => {
      if (slot.state !== RecordState.ACQUIRED || slot.memberId !== memberId || slot.pending) held = false;
    });
    return held ? ErrorCode.NONE : ErrorCode.INVALID_RECORD_STATE;
  }

  /** Index of the last batch whose firstOffset <= offset; -1 when none. */
  private floorIndex(offset: bigint): number {
    const i = this.indexAtOrAfter(offset);
    return i < this.batches.length && this.batches[i].firstOffset <= offset ? i : i - 1;
  }

  releaseAcquiredRecords(memberId: string): Promise<number> {
    if (!this.loaded || this.closed) return Promise.resolve(ErrorCode.NONE);
    const settings = this.opts.settings();
    const ranges: Array<[bigint, bigint]> = [];
    const archived: Array<[bigint, bigint, number]> = [];
    const held = (slot: RecordSlot) => slot.state === RecordState.ACQUIRED && slot.memberId === memberId && !slot.pending;
    for (const b of this.batches) {
      if (b.offsets === null) {
        if (!held(b.slot)) continue;
        this.release(b.slot, b.firstOffset, b.lastOffset, settings, archived);
        ranges.push([b.firstOffset, b.lastOffset]);
        continue;
      }
      for (let i = 0; i < b.offsets.length; i++) {
        if (!held(b.offsets[i])) continue;
        const offset = b.firstOffset + BigInt(i);
        this.release(b.offsets[i], offset, offset, settings, archived);
        ranges.push([offset, offset]);
      }
    }
    if (ranges.length === 0) return Promise.resolve(ErrorCode.NONE);
    this.finishArchive(archived, 'delivery-count-exceeded');
    this.notifyAvailable();
    return this.serialized(() => this.write(ranges));
  }

  /**
   * The log's start offset moved (retention, DeleteRecords): records below it are gone, so the start
   * offset follows and the available ones below it are archived (Kafka's updateCacheAndOffsets).
   */
  logStartOffsetChanged(logStartOffset: bigint): void {
    if (!this.loaded || this.closed || logStartOffset <= this.start) return;
    this.forSlots(this.start, logStartOffset - 1n, (slot) => {
      if (slot.state === RecordState.AVAILABLE && !slot.pending) slot.state = RecordState.ARCHIVED;
    }, 'partial');
    this.start = logStartOffset;
    this.advanceStart();
    this.mayHaveAvailable = true;
    this.persistChanges([]);
    this.notifyAvailable();
  }

  onAvailable(listener: () => void): void {
    this.listeners.push(listener);
  }

  close(): void {
    this.closed = true;
    this.cancelTimer?.();
    this.cancelTimer = null;
    this.locks.clear();
    this.listeners.length = 0;
  }

  // ---- start offset and persistence ----

  /**
   * Moves the start past the terminal records at its head. With `writing`, only says where it will
   * be once that acknowledgement's changes commit (counting them, not others still in flight).
   */
  private advanceStart(writing: AcknowledgementWrite | null = null): bigint {
    let pos = this.start;
    const done = (s: RecordSlot) => isTerminal(s.state) && (s.pending === null || s.pending === writing);
    scan: for (let i = this.indexAtOrAfter(pos); i < this.batches.length; i++) {
      const b = this.batches[i];
      if (b.firstOffset > pos) break;
      if (b.offsets === null) {
        if (!done(b.slot)) break;
      } else {
        for (let o = pos; o <= b.lastOffset; o++) if (!done(b.offsets[Number(o - b.firstOffset)])) { pos = o; break scan; }
      }
      pos = b.lastOffset + 1n;
    }
    if (writing === null && pos > this.start) {
      this.start = pos;
      this.prune();
    }
    return pos;
  }

  /** Drops the batches wholly below the start offset that hold no acquired or pending record. */
  private prune(): void {
    let n = 0;
    while (n < this.batches.length && this.batches[n].lastOffset < this.start) {
      const b = this.batches[n];
      const live = (s: RecordSlot) => s.state === RecordState.ACQUIRED || s.pending !== null;
      if (b.offsets === null ? live(b.slot) : b.offsets.some(live)) break;
      n++;
    }
    if (n > 0) this.batches.splice(0, n);
  }

  /** A background write of changed ranges (lock expiry, archiving): failures are logged, the next write carries the start. */
  private persistChanges(ranges: Array<[bigint, bigint]>): void {
    void this.serialized(() => this.write(ranges));
  }

  /**
   * WriteShareGroupState with the states of `ranges` as they are when the write starts and the start
   * offset (for an acknowledgement, as it will be once its changes commit). The error code as the
   * fetch path answers it.
   */
  private async write(ranges: ReadonlyArray<readonly [bigint, bigint]>, acknowledgement: AcknowledgementWrite | null = null): Promise<number> {
    // Closed (leadership moved, fenced): the state is another leader's to write now.
    if (this.closed) return ErrorCode.NOT_LEADER_OR_FOLLOWER;
    const startOffset = this.advanceStart(acknowledgement);
    const stateBatches: StateBatch[] = [];
    for (const [first, last] of ranges) {
      if (last < startOffset) continue;
      this.forSlots(first < startOffset ? startOffset : first, last, (slot, f, l) => {
        const deliveryState = slot.state === RecordState.ACKNOWLEDGED ? DeliveryState.ACKNOWLEDGED
          : slot.state === RecordState.ARCHIVED ? DeliveryState.ARCHIVED
            : slot.state === RecordState.ARCHIVING ? DeliveryState.ARCHIVING : DeliveryState.AVAILABLE;
        const prev = stateBatches[stateBatches.length - 1];
        if (prev && prev.lastOffset + 1n === f && prev.deliveryState === deliveryState && prev.deliveryCount === slot.deliveryCount) {
          stateBatches[stateBatches.length - 1] = { ...prev, lastOffset: l };
        } else {
          stateBatches.push({ firstOffset: f, lastOffset: l, deliveryState, deliveryCount: slot.deliveryCount });
        }
      });
    }
    try {
      const result = await this.opts.persister.write(this.key, {
        stateEpoch: this.stateEpoch,
        leaderEpoch: this.opts.leaderEpoch,
        startOffset,
        deliveryCompleteCount: this.deliveryCompleteCount(startOffset, acknowledgement),
        stateBatches,
      });
      if (result.errorCode !== ErrorCode.NONE) {
        this.opts.logger?.warn({ key: this.key, errorCode: result.errorCode, message: result.errorMessage }, 'share-partition state write failed');
        // Another leader or a newer state epoch (AlterShareGroupOffsets) owns the state now: this
        // share-partition is done (Kafka's markFenced); its owner makes a new one, which reads it again.
        if (result.errorCode === ErrorCode.FENCED_STATE_EPOCH || result.errorCode === ErrorCode.FENCED_LEADER_EPOCH) this.close();
        return persisterErrorCode(result.errorCode);
      }
      return ErrorCode.NONE;
    } catch (e) {
      this.opts.logger?.warn({ err: e, key: this.key }, 'share-partition state write failed');
      return ErrorCode.UNKNOWN_SERVER_ERROR;
    }
  }

  /** KIP-1226's count: offsets at or past the start whose delivery is complete (with the acknowledgement being written). */
  private deliveryCompleteCount(startOffset: bigint, writing: AcknowledgementWrite | null): number {
    const done = (s: RecordSlot) => isTerminal(s.state) && (s.pending === null || s.pending === writing);
    let n = 0;
    for (let i = this.indexAtOrAfter(startOffset); i < this.batches.length; i++) {
      const b = this.batches[i];
      if (b.offsets === null) {
        if (done(b.slot)) n += Number(b.lastOffset - (b.firstOffset > startOffset ? b.firstOffset : startOffset) + 1n);
      } else {
        for (let o = b.firstOffset > startOffset ? b.firstOffset : startOffset; o <= b.lastOffset; o++) {
          if (done(b.offsets[Number(o - b.firstOffset)])) n++;
        }
      }
    }
    return n;
  }

  private serialized<T>(op: () => Promise<T>): Promise<T> {
    const run = this.queue.then(op, op);
    this.queue = run.catch(() => undefined);
    return run;
  }

  /**
   * Tells the archive listener of records archived for a cause. Those ARCHIVING (the group has a
   * dead-letter queue) become ARCHIVED once the listener's promise settles, failed or not, as in
   * Kafka ("proceeding to ARCHIVED regardless"); at once when it returns none.
   */
  private finishArchive(runs: ReadonlyArray<readonly [bigint, bigint, number]>, cause: ArchiveCause): void {
    if (runs.length === 0) return;
    const listener = this.opts.onArchived;
    for (const [firstOffset, lastOffset, deliveryCount] of mergeRuns(runs)) {
      let done: void | Promise<void> = undefined;
      try {
        done = listener?.({ key: this.key, topicName: this.topicName, firstOffset, lastOffset, deliveryCount, cause });
      } catch (e) {
        this.opts.logger?.warn({ err: e, key: this.key }, 'archive listener failed');
      }
      if (done instanceof Promise) {
        done.catch((e: unknown) => this.opts.logger?.warn({ err: e, key: this.key }, 'dead-letter queue write failed; archived regardless'))
          .finally(() => this.completeArchiving(firstOffset, lastOffset));
      } else {
        this.completeArchiving(firstOffset, lastOffset);
      }
    }
    this.advanceStart();
  }

  /** ARCHIVING → ARCHIVED over [first, last], written. */
  private completeArchiving(first: bigint, last: bigint): void {
    if (this.closed) return;
    let changed = false;
    this.forSlots(first, last, (slot) => {
      if (slot.state !== RecordState.ARCHIVING || slot.pending) return;
      slot.state = RecordState.ARCHIVED;
      changed = true;
    });
    if (!changed) return;
    this.advanceStart();
    this.persistChanges([[first, last]]);
  }

  private notifyAvailable(): void {
    for (const listener of [...this.listeners]) {
      try {
        listener();
      } catch (e) {
        this.opts.logger?.warn({ err: e, key: this.key }, 'share-partition listener failed');
      }
    }
  }
}

const acquirable = (s: RecordSlot) => s.state === RecordState.AVAILABLE && !s.pending;

/** Where a rejection or the delivery count limit sends records: through the dead-letter queue when the group has one. */
const archivedState = (settings: ShareGroupSettings) => (settings.deadLetterQueue ? RecordState.ARCHIVING : RecordState.ARCHIVED);

/** Appends a range to the answer, joined to the previous one when contiguous with the same delivery count. */
function pushAcquired(acquired: AcquiredRecords[], firstOffset: bigint, lastOffset: bigint, deliveryCount: number): void {
  const prev = acquired[acquired.length - 1];
  if (prev && prev.lastOffset + 1n === firstOffset && prev.deliveryCount === deliveryCount) {
    acquired[acquired.length - 1] = { firstOffset: prev.firstOffset, lastOffset, deliveryCount };
  } else {
    acquired.push({ firstOffset, lastOffset, deliveryCount });
  }
}

function mergeRuns(runs: ReadonlyArray<readonly [bigint, bigint, number]>): Array<[bigint, bigint, number]> {
  const sorted = [...runs].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  const merged: Array<[bigint, bigint, number]> = [];
  for (const [f, l, c] of sorted) {
    const prev = merged[merged.length - 1];
    if (prev && prev[1] + 1n === f && prev[2] === c) prev[1] = l;
    else merged.push([f, l, c]);
  }
  return merged;
}

function skippedCount(skipped: ReadonlyArray<readonly [bigint, bigint]>, from: bigint, to: bigint): number {
  let n = 0;
  for (const [f, l] of skipped) {
    const lo = f > from ? f : from;
    const hi = l < to ? l : to;
    if (lo <= hi) n += Number(hi - lo + 1n);
  }
  return n;
}

/**
 * Kafka's checks of a request's acknowledgement batches (KafkaApis): ordered, non-overlapping ranges,
 * one type or one per offset, known types. INVALID_REQUEST when one fails.
 */
export function validateAcknowledgements(batches: readonly AcknowledgementBatch[]): number {
  let previousLast = -1n;
  for (const b of batches) {
    if (b.firstOffset < 0n || b.lastOffset < b.firstOffset || b.firstOffset <= previousLast) return ErrorCode.INVALID_REQUEST;
    const size = b.lastOffset - b.firstOffset + 1n;
    if (b.acknowledgeTypes.length !== 1 && BigInt(b.acknowledgeTypes.length) !== size) return ErrorCode.INVALID_REQUEST;
    if (b.acknowledgeTypes.some((t) => t < AcknowledgeType.GAP || t > AcknowledgeType.RENEW)) return ErrorCode.INVALID_REQUEST;
    previousLast = b.lastOffset;
  }
  return ErrorCode.NONE;
}

/** The share-partition of one share group on one topic partition this broker leads. */
export function createSharePartition(options: SharePartitionOptions): SharePartition {
  return new InFlightSharePartition(options);
}
