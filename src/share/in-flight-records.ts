// The share-partition state machine (Kafka 4.4's SharePartition): the in-flight records of one share
// group on one topic partition, from the start offset (SPSO) to the end offset (SPEO). Runs of
// offsets are kept per batch (one state for the batch) until an acquisition, acknowledgement or
// release covers only part of it; then that batch keeps one state per offset, as Kafka does.
//
// Acquisition is synchronous (the fetch path calls it with what it read); acknowledgements and
// releases are serialized per share-partition (apply, persist, then commit or roll back), so writes
// reach the share coordinator in order and a failed write leaves the records as they were.
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
  /** The offset share.auto.offset.reset starts an uninitialized share-partition at. */
  resetOffset: (to: ResetTarget) => Promise<bigint>;
  onArchived?: ArchiveListener;
  now?: () => number;
  setTimer?: SetTimer;
  logger?: Logger;
}

enum RecordState {
  AVAILABLE = 0,
  ACQUIRED = 1,
  ACKNOWLEDGED = 2,
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
  pending: boolean;
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
  /** Acknowledgements, releases and writes, one after another. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly opts: SharePartitionOptions) {
    this.key = opts.key;
    this.topicName = opts.topicName;
    this.now = opts.now ?? Date.now;
    this.setTimer = opts.setTimer ?? defaultSetTimer;
  }

  // ---- loading ----

  load(): Promise<number> {
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
        : b.deliveryState === DeliveryState.ARCHIVED ? RecordState.ARCHIVED : RecordState.AVAILABLE;
      this.batches.push({
        firstOffset: b.firstOffset,
        lastOffset: b.lastOffset,
        slot: { state: stateOf, deliveryCount: b.deliveryCount, memberId: null, lock: null, pending: false },
        offsets: null,
      });
    }
    this.advanceStart(false);
    this.loaded = true;
    this.mayHaveAvailable = true;
    this.notifyAvailable();
    return ErrorCode.NONE;
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
    aborted?: readonly AbortedTransaction[], fetchOffset?: bigint): AcquiredRecords[] {
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
        count += this.acquireNew(memberId, batches, skipped, pos, gapLast, limit - count, acquired, lock, i);
        i = this.indexAtOrAfter(b.firstOffset) - 1;
        pos = b.firstOffset;
        continue;
      }
      const reqLast = b.lastOffset < lastOffset ? b.lastOffset : lastOffset;
      const fullMatch = b.offsets === null && pos <= b.firstOffset && reqLast >= b.lastOffset;
      const throttle = this.shouldThrottle(b, pos, reqLast, tLimit);
      if (throttle && count > 0) break;
      if (fullMatch && !throttle) {
        if (acquirable(b.slot)) {
          if (b.slot.deliveryCount >= settings.deliveryCountLimit) {
            // The limit was lowered since: archived, not delivered again.
            Object.assign(b.slot, { state: RecordState.ARCHIVED, memberId: null, lock: null });
            archived.push([b.firstOffset, b.lastOffset, b.slot.deliveryCount]);
          } else {
            Object.assign(b.slot, { state: RecordState.ACQUIRED, deliveryCount: b.slot.deliveryCount + 1, memberId, lock: lock(b.firstOffset, b.lastOffset) });
            pushAcquired(acquired, b.firstOffset, b.lastOffset, b.slot.deliveryCount);
            count += Number(b.lastOffset - b.firstOffset + 1n);
          }
        }
      } else if (b.offsets !== null || b.slot.state === RecordState.AVAILABLE && !b.slot.pending) {
        count += this.acquireSubset(memberId, b, pos, reqLast, settings.deliveryCountLimit, tLimit, acquired, archived, lock);
        if (throttle && count > 0) break;
      }
      pos = b.lastOffset + 1n;
    }
    if (count < limit && pos <= lastOffset && pos > this.cacheEnd()) {
      this.acquireNew(memberId, batches, skipped, pos, lastOffset, limit - count, acquired, lock, this.batches.length);
    }
    this.finishArchive(archived, 'delivery-count-exceeded');
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
  private acquireSubset(memberId: string, b: InFlightBatch, first: bigint, last: bigint, deliveryLimit: number, tLimit: number,
    acquired: AcquiredRecords[], archived: Array<[bigint, bigint, number]>, lock: (f: bigint, l: bigint) => AcquisitionLock): number {
    const offsets = this.split(b);
    let count = 0;
    let cap = -1;
    const from = first > b.firstOffset ? first : b.firstOffset;
    const taken: bigint[] = [];
    for (let o = from; o <= last; o++) {
      const slot = offsets[Number(o - b.firstOffset)];
      if (!acquirable(slot)) continue;
      if (slot.deliveryCount >= deliveryLimit) {
        Object.assign(slot, { state: RecordState.ARCHIVED, memberId: null, lock: null });
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
      if (cap > 0 && count === cap) break;
    }
    if (taken.length > 0) {
      const l = lock(taken[0], taken[taken.length - 1]);
      for (const o of taken) offsets[Number(o - b.firstOffset)].lock = l;
    }
    return count;
  }

  /**
   * Records never delivered, from `from` to `to`, taken a whole log batch at a time until `limit`
   * is reached (Kafka's batch-optimized acquisition); one in-flight batch per contiguous run,
   * inserted at batch index `at`. Control batches and aborted records become archived runs.
   */
  private acquireNew(memberId: string, log: readonly LogBatchBounds[], skipped: ReadonlyArray<readonly [bigint, bigint]>,
    from: bigint, to: bigint, limit: number, acquired: AcquiredRecords[],
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
    // The range [from, last] split into acquired runs and skipped (archived) runs.
    const runs: InFlightBatch[] = [];
    let count = 0;
    let pos = from;
    const l = lock(from, last);
    const pushRun = (f: bigint, t: bigint, state: RecordState) => {
      if (f > t) return;
      const acquiredRun = state === RecordState.ACQUIRED;
      runs.push({ firstOffset: f, lastOffset: t, offsets: null,
        slot: { state, deliveryCount: acquiredRun ? 1 : 0, memberId: acquiredRun ? memberId : null, lock: acquiredRun ? l : null, pending: false } });
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
    for (const b of log) {
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
    const limit = this.opts.settings().deliveryCountLimit;
    for (let lock = this.locks.peek(); lock !== undefined && lock.deadline <= now; lock = this.locks.peek()) {
      this.locks.pop();
      this.forSlots(lock.firstOffset, lock.lastOffset, (slot, first, last) => {
        if (slot.lock !== lock || slot.state !== RecordState.ACQUIRED || slot.pending) return;
        this.release(slot, first, last, limit, archived);
        ranges.push([first, last]);
      });
    }
    this.armTimer();
    if (ranges.length === 0) return;
    this.persistChanges(ranges);
    this.finishArchive(archived, 'delivery-count-exceeded');
    this.notifyAvailable();
  }

  /** ACQUIRED → AVAILABLE, or ARCHIVED at the delivery count limit (or below the start offset). */
  private release(slot: RecordSlot, first: bigint, last: bigint, limit: number, archived: Array<[bigint, bigint, number]>): void {
    slot.memberId = null;
    slot.lock = null;
    if (last < this.start) {
      slot.state = RecordState.ARCHIVED;
    } else if (slot.deliveryCount >= limit) {
      slot.state = RecordState.ARCHIVED;
      archived.push([first, last, slot.deliveryCount]);
    } else {
      slot.state = RecordState.AVAILABLE;
      this.mayHaveAvailable = true;
    }
  }

  /**
   * Calls fn for each state covering part of [first, last]: a whole batch's (with its bounds) or one
   * offset's. Batches are split per offset first when only partly covered ('partial') or always.
   */
  private forSlots(first: bigint, last: bigint, fn: (slot: RecordSlot, first: bigint, last: bigint) => void,
    split: 'never' | 'partial' | 'always' = 'never'): void {
    for (let i = this.indexAtOrAfter(first); i < this.batches.length; i++) {
      const b = this.batches[i];
      if (b.firstOffset > last) break;
      const whole = first <= b.firstOffset && last >= b.lastOffset;
      if (b.offsets === null && (split === 'never' || (split === 'partial' && whole))) {
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
    return this.serialized(() => this.doAcknowledge(memberId, batches));
  }

  private async doAcknowledge(memberId: string, batches: readonly AcknowledgementBatch[]): Promise<number> {
    if (!this.loaded || this.closed) return ErrorCode.NOT_LEADER_OR_FOLLOWER;
    const settings = this.opts.settings();
    const invalid = validateAcknowledgements(batches, settings.renewAcknowledgeEnable);
    if (invalid !== ErrorCode.NONE) return invalid;
    // All or nothing: every offset must be this member's acquired record before anything changes.
    for (const ack of batches) {
      if (ack.firstOffset < this.start && ack.lastOffset < this.start) return ErrorCode.INVALID_RECORD_STATE;
      let covered = ack.firstOffset;
      let ok = true;
      for (let i = this.indexAtOrAfter(ack.firstOffset); i < this.batches.length && ok; i++) {
        const b = this.batches[i];
        if (b.firstOffset > ack.lastOffset) break;
        if (b.firstOffset > covered) ok = false;
        covered = b.lastOffset + 1n;
      }
      if (!ok || covered <= ack.lastOffset) return ErrorCode.INVALID_RECORD_STATE;
      let held = true;
      this.forSlots(ack.firstOffset, ack.lastOffset, (slot) => {
        if (slot.state !== RecordState.ACQUIRED || slot.memberId !== memberId || slot.pending) held = false;
      });
      if (!held) return ErrorCode.INVALID_RECORD_STATE;
    }
    const changes: SlotChange[] = [];
    const ranges: Array<[bigint, bigint]> = [];
    const archived = new Map<ArchiveCause, Array<[bigint, bigint, number]>>([['rejected', []], ['delivery-count-exceeded', []]]);
    for (const ack of batches) {
      const typeAt = (offset: bigint) => (ack.acknowledgeTypes.length === 1 ? ack.acknowledgeTypes[0] : ack.acknowledgeTypes[Number(offset - ack.firstOffset)]);
      const visit = (slot: RecordSlot, first: bigint, last: bigint) => {
        const type = typeAt(first);
        if (type === AcknowledgeType.RENEW) {
          slot.lock = this.newLock(memberId, first, last, settings.recordLockDurationMs);
          return;
        }
        changes.push({ slot, previous: { state: slot.state, deliveryCount: slot.deliveryCount, memberId: slot.memberId, lock: slot.lock } });
        ranges.push([first, last]);
        slot.pending = true;
        slot.memberId = null;
        slot.lock = null;
        if (type === AcknowledgeType.ACCEPT) {
          slot.state = RecordState.ACKNOWLEDGED;
        } else if (type === AcknowledgeType.RELEASE) {
          if (slot.deliveryCount >= settings.deliveryCountLimit) {
            slot.state = RecordState.ARCHIVED;
            archived.get('delivery-count-exceeded')!.push([first, last, slot.deliveryCount]);
          } else {
            slot.state = RecordState.AVAILABLE;
          }
        } else {
          slot.state = RecordState.ARCHIVED;
          if (type === AcknowledgeType.REJECT) archived.get('rejected')!.push([first, last, slot.deliveryCount]);
        }
      };
      // One type per offset: every batch it covers keeps its states per offset.
      this.forSlots(ack.firstOffset, ack.lastOffset, visit, ack.acknowledgeTypes.length === 1 ? 'partial' : 'always');
    }
    if (changes.length === 0) return ErrorCode.NONE;
    const code = await this.write(ranges, true);
    for (const { slot, previous } of changes) {
      slot.pending = false;
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
    this.advanceStart(false);
    for (const [cause, runs] of archived) this.finishArchive(runs, cause);
    this.notifyAvailable();
    return ErrorCode.NONE;
  }

  releaseAcquiredRecords(memberId: string): Promise<number> {
    return this.serialized(async () => {
      if (!this.loaded || this.closed) return ErrorCode.NONE;
      const limit = this.opts.settings().deliveryCountLimit;
      const ranges: Array<[bigint, bigint]> = [];
      const archived: Array<[bigint, bigint, number]> = [];
      for (const b of this.batches) {
        const slots: Array<[RecordSlot, bigint]> = b.offsets === null ? [[b.slot, b.firstOffset]] : b.offsets.map((s, i) => [s, b.firstOffset + BigInt(i)]);
        for (const [slot, first] of slots) {
          if (slot.state !== RecordState.ACQUIRED || slot.memberId !== memberId || slot.pending) continue;
          const last = b.offsets === null ? b.lastOffset : first;
          this.release(slot, first, last, limit, archived);
          ranges.push([first, last]);
        }
      }
      if (ranges.length === 0) return ErrorCode.NONE;
      this.finishArchive(archived, 'delivery-count-exceeded');
      this.notifyAvailable();
      return this.write(ranges, false);
    });
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
    this.advanceStart(false);
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

  /** Moves the start past the terminal records at its head; with `countPending`, the ones being written too. */
  private advanceStart(countPending: boolean): bigint {
    let pos = this.start;
    const done = (s: RecordSlot) => isTerminal(s.state) && (countPending || !s.pending);
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
    if (!countPending && pos > this.start) {
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
      const live = (s: RecordSlot) => s.state === RecordState.ACQUIRED || s.pending;
      if (b.offsets === null ? live(b.slot) : b.offsets.some(live)) break;
      n++;
    }
    if (n > 0) this.batches.splice(0, n);
  }

  /** A background write of changed ranges (lock expiry, archiving): failures are logged, the next write carries the start. */
  private persistChanges(ranges: Array<[bigint, bigint]>): void {
    void this.serialized(() => this.write(ranges, false));
  }

  /**
   * WriteShareGroupState with the states of `ranges` as they are when the write starts and the start
   * offset (with `countPending`, as it will be once this write's changes commit). The error code as
   * the fetch path answers it.
   */
  private async write(ranges: ReadonlyArray<readonly [bigint, bigint]>, countPending: boolean): Promise<number> {
    const startOffset = this.advanceStart(countPending);
    const stateBatches: StateBatch[] = [];
    for (const [first, last] of ranges) {
      if (last < startOffset) continue;
      this.forSlots(first < startOffset ? startOffset : first, last, (slot, f, l) => {
        const deliveryState = slot.state === RecordState.ACKNOWLEDGED ? DeliveryState.ACKNOWLEDGED
          : slot.state === RecordState.ARCHIVED ? DeliveryState.ARCHIVED : DeliveryState.AVAILABLE;
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
        deliveryCompleteCount: this.deliveryCompleteCount(startOffset),
        stateBatches,
      });
      if (result.errorCode !== ErrorCode.NONE) {
        this.opts.logger?.warn({ key: this.key, errorCode: result.errorCode, message: result.errorMessage }, 'share-partition state write failed');
        return persisterErrorCode(result.errorCode);
      }
      return ErrorCode.NONE;
    } catch (e) {
      this.opts.logger?.warn({ err: e, key: this.key }, 'share-partition state write failed');
      return ErrorCode.UNKNOWN_SERVER_ERROR;
    }
  }

  /** KIP-1226's count: offsets at or past the start whose delivery is complete (with the pending ones being written). */
  private deliveryCompleteCount(startOffset: bigint): number {
    let n = 0;
    for (let i = this.indexAtOrAfter(startOffset); i < this.batches.length; i++) {
      const b = this.batches[i];
      if (b.offsets === null) {
        if (isTerminal(b.slot.state)) n += Number(b.lastOffset - (b.firstOffset > startOffset ? b.firstOffset : startOffset) + 1n);
      } else {
        for (let o = b.firstOffset > startOffset ? b.firstOffset : startOffset; o <= b.lastOffset; o++) {
          if (isTerminal(b.offsets[Number(o - b.firstOffset)].state)) n++;
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

  private finishArchive(runs: ReadonlyArray<readonly [bigint, bigint, number]>, cause: ArchiveCause): void {
    if (runs.length === 0) return;
    this.advanceStart(false);
    const listener = this.opts.onArchived;
    if (!listener) return;
    for (const [firstOffset, lastOffset, deliveryCount] of mergeRuns(runs)) {
      try {
        listener({ key: this.key, topicName: this.topicName, firstOffset, lastOffset, deliveryCount, cause });
      } catch (e) {
        this.opts.logger?.warn({ err: e, key: this.key }, 'archive listener failed');
      }
    }
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
 * Kafka's checks of acknowledgement batches (KafkaApis/SharePartition): ordered, non-overlapping
 * ranges, one type or one per offset, known types (RENEW only where the group allows it).
 */
export function validateAcknowledgements(batches: readonly AcknowledgementBatch[], renewEnabled: boolean): number {
  let previousLast = -1n;
  for (const b of batches) {
    if (b.firstOffset < 0n || b.lastOffset < b.firstOffset || b.firstOffset <= previousLast) return ErrorCode.INVALID_REQUEST;
    const size = b.lastOffset - b.firstOffset + 1n;
    if (b.acknowledgeTypes.length !== 1 && BigInt(b.acknowledgeTypes.length) !== size) return ErrorCode.INVALID_REQUEST;
    for (const t of b.acknowledgeTypes) {
      if (t < AcknowledgeType.GAP || t > AcknowledgeType.RENEW || (t === AcknowledgeType.RENEW && !renewEnabled)) return ErrorCode.INVALID_REQUEST;
    }
    previousLast = b.lastOffset;
  }
  return ErrorCode.NONE;
}

/** The share-partition of one share group on one topic partition this broker leads. */
export function createSharePartition(options: SharePartitionOptions): SharePartition {
  return new InFlightSharePartition(options);
}
