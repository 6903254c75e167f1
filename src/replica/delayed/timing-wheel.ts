/**
 * A hierarchical timing wheel, as Kafka's SystemTimer/TimingWheel/TimerTaskList
 * (server-common .../server/util/timer/), for the timeouts of delayed operations:
 * many tasks, most cancelled before they expire.
 *
 * Level 0 has 20 buckets of 1 ms; each overflow level (created on demand) has
 * 20 buckets as wide as the whole level below (20 ms, 400 ms, 8 s, ...). A task
 * goes into the finest level whose span covers its expiration. Adding costs
 * O(levels), cancelling is O(1): a bucket is a doubly linked list and the task
 * is its own list node.
 *
 * Java's DelayQueue of buckets becomes a min-heap of bucket expirations, and
 * the reaper thread becomes ONE unref'd setTimeout armed for the earliest
 * bucket. When a bucket expires, the wheels' clocks move to its expiration and
 * its tasks are re-added: those now due run, the others drop to a finer level.
 *
 * Tasks run on the timer's own callback, never inside add(): a task that is
 * already due when added waits in a "due" bucket for the next callback (Kafka
 * hands it to its executor thread), so callers are never re-entered.
 */

const TICK_MS = 1;
const WHEEL_SIZE = 20;
/** setTimeout's largest delay; a later bucket just re-arms when this fires. */
const MAX_TIMEOUT_MS = 2 ** 31 - 1;

/** A monotonic clock in whole milliseconds (wall-clock jumps must not fire or stall timeouts). */
export function monotonicMs(): number {
  return Math.floor(performance.now());
}

export abstract class TimerTask {
  /** @internal Absolute expiration on the timer's clock, set by Timer.add. */
  expirationMs = 0;
  /** @internal The bucket this task is queued in, null when not scheduled. */
  bucket: TimerTaskList | null = null;
  /** @internal Neighbours in the bucket's list. */
  prev: TimerTask | null = null;
  /** @internal */
  next: TimerTask | null = null;

  constructor(readonly delayMs: number) {}

  /** Takes the task off the timer if scheduled; it will not run. O(1). */
  cancel(): void {
    this.bucket?.remove(this);
  }

  /** Called once when the task expires, on the timer's callback. */
  abstract run(): void;
}

/** The list's sentinel: never run, never counted. */
class Root extends TimerTask {
  run(): void {}
}

/** Live count of scheduled tasks, shared by every bucket of one timer. */
interface TaskCount {
  value: number;
}

/**
 * A bucket: a circular doubly linked list of tasks around a sentinel, with the
 * expiration of the time slot it currently stands for (-1 when not queued).
 */
class TimerTaskList {
  expirationMs = -1;
  private readonly root: TimerTask = new Root(0);

  constructor(private readonly count: TaskCount) {
    this.root.next = this.root;
    this.root.prev = this.root;
  }

  /** Sets the slot's expiration; true when it changed, i.e. the bucket must be queued again. */
  setExpiration(expirationMs: number): boolean {
    const changed = this.expirationMs !== expirationMs;
    this.expirationMs = expirationMs;
    return changed;
  }

  add(task: TimerTask): void {
    task.cancel(); // a task lives in one bucket at a time
    const tail = this.root.prev!;
    task.prev = tail;
    task.next = this.root;
    tail.next = task;
    this.root.prev = task;
    task.bucket = this;
    this.count.value++;
  }

  remove(task: TimerTask): void {
    if (task.bucket !== this) return;
    task.prev!.next = task.next;
    task.next!.prev = task.prev;
    task.prev = task.next = null;
    task.bucket = null;
    this.count.value--;
  }

  /**
   * Empties the bucket, handing each task to `f`. Reads the head afresh each
   * time, so a task run by `f` may cancel others still in this bucket.
   */
  flush(f: (task: TimerTask) => void): void {
    for (let head = this.root.next!; head !== this.root; head = this.root.next!) {
      this.remove(head);
      f(head);
    }
    this.expirationMs = -1;
  }
}

/** Buckets ordered by expiration: Java's DelayQueue without the waiting. */
class BucketHeap {
  private readonly items: TimerTaskList[] = [];

  get length(): number {
    return this.items.length;
  }

  peek(): TimerTaskList | undefined {
    return this.items[0];
  }

  push(bucket: TimerTaskList): void {
    const a = this.items;
    a.push(bucket);
    for (let i = a.length - 1; i > 0; ) {
      const parent = (i - 1) >> 1;
      if (a[parent].expirationMs <= a[i].expirationMs) break;
      [a[parent], a[i]] = [a[i], a[parent]];
      i = parent;
    }
  }

  pop(): TimerTaskList | undefined {
    const a = this.items;
    const top = a[0];
    const last = a.pop();
    if (a.length > 0 && last !== undefined) {
      a[0] = last;
      for (let i = 0; ; ) {
        const l = 2 * i + 1;
        const r = l + 1;
        let min = i;
        if (l < a.length && a[l].expirationMs < a[min].expirationMs) min = l;
        if (r < a.length && a[r].expirationMs < a[min].expirationMs) min = r;
        if (min === i) break;
        [a[min], a[i]] = [a[i], a[min]];
        i = min;
      }
    }
    return top;
  }

  clear(): TimerTaskList[] {
    return this.items.splice(0);
  }
}

/** One level of the hierarchy (Kafka's TimingWheel). */
class TimingWheel {
  private readonly interval: number;
  private readonly buckets: TimerTaskList[];
  /** Start of the current slot: a multiple of tickMs. */
  private currentTimeMs: number;
  private overflowWheel: TimingWheel | null = null;

  constructor(
    private readonly tickMs: number,
    startMs: number,
    private readonly queue: BucketHeap,
    private readonly count: TaskCount,
  ) {
    this.interval = tickMs * WHEEL_SIZE;
    this.currentTimeMs = startMs - (startMs % tickMs);
    this.buckets = Array.from({ length: WHEEL_SIZE }, () => new TimerTaskList(count));
  }

  /** Puts the task in its bucket; false when it is already due (expires within the current tick). */
  add(task: TimerTask): boolean {
    const expiration = task.expirationMs;
    if (expiration < this.currentTimeMs + this.tickMs) return false;
    if (expiration < this.currentTimeMs + this.interval) {
      const virtualId = Math.floor(expiration / this.tickMs);
      const bucket = this.buckets[virtualId % WHEEL_SIZE];
      bucket.add(task);
      // A bucket is queued once per slot: only when it starts standing for a new one.
      if (bucket.setExpiration(virtualId * this.tickMs)) this.queue.push(bucket);
      return true;
    }
    this.overflowWheel ??= new TimingWheel(this.interval, this.currentTimeMs, this.queue, this.count);
    return this.overflowWheel.add(task);
  }

  advanceClock(timeMs: number): void {
    if (timeMs >= this.currentTimeMs + this.tickMs) {
      this.currentTimeMs = timeMs - (timeMs % this.tickMs);
      this.overflowWheel?.advanceClock(this.currentTimeMs);
    }
  }
}

export class Timer {
  private readonly count: TaskCount = { value: 0 };
  private readonly queue = new BucketHeap();
  private readonly wheel: TimingWheel;
  /** Tasks already due when added; run on the next callback. */
  private readonly due: TimerTaskList;
  private timeout: NodeJS.Timeout | undefined;
  private armedForMs = -1;
  private running = false;
  private closed = false;

  /**
   * @param now the clock, in ms (tests pass a fake one and call runExpired()).
   * @param onTaskError where a task's exception goes; the timer itself carries on.
   */
  constructor(
    private readonly now: () => number = monotonicMs,
    private readonly onTaskError: (error: unknown) => void = (error) => console.error('timer task failed:', error),
  ) {
    this.wheel = new TimingWheel(TICK_MS, this.clock(), this.queue, this.count);
    this.due = new TimerTaskList(this.count);
  }

  /** Tasks scheduled and not yet run or cancelled. */
  get size(): number {
    return this.count.value;
  }

  /** Schedules `task` to run `task.delayMs` from now (re-scheduling it if it already is). */
  add(task: TimerTask): void {
    if (this.closed) return;
    const now = this.clock();
    // After a quiet spell the wheels' clocks lag behind; moving them to `now`
    // is safe only while no bucket at or before `now` awaits its flush, and
    // never in the middle of one (a bucket could then be refilled as it drains).
    const next = this.queue.peek();
    if (!this.running && (next === undefined || next.expirationMs > now)) this.wheel.advanceClock(now);

    task.expirationMs = now + task.delayMs;
    if (!this.wheel.add(task)) {
      this.due.add(task);
      if (this.due.expirationMs === -1) {
        this.due.setExpiration(now);
        this.queue.push(this.due);
      }
    }
    this.arm();
  }

  /**
   * Flushes every bucket whose expiration has passed: due tasks run, the rest
   * move to finer wheels. The Node timer calls this; so may tests after moving
   * a fake clock.
   */
  runExpired(): void {
    if (this.running || this.closed) return;
    this.running = true;
    try {
      const now = this.clock();
      for (let bucket = this.queue.peek(); bucket && bucket.expirationMs <= now; bucket = this.queue.peek()) {
        this.queue.pop();
        this.wheel.advanceClock(bucket.expirationMs);
        bucket.flush((task) => this.reinsert(task));
      }
    } finally {
      this.running = false;
    }
    this.arm();
  }

  /** Stops the Node timer and drops every scheduled task without running it. */
  close(): void {
    this.closed = true;
    clearTimeout(this.timeout);
    this.timeout = undefined;
    for (const bucket of this.queue.clear()) bucket.flush(() => {});
  }

  private reinsert(task: TimerTask): void {
    if (this.closed || this.wheel.add(task)) return;
    try {
      task.run();
    } catch (error) {
      this.onTaskError(error);
    }
  }

  /** Keeps the one Node timer pointed at the earliest bucket. */
  private arm(): void {
    const next = this.queue.peek();
    if (this.closed || next === undefined) {
      clearTimeout(this.timeout);
      this.timeout = undefined;
      return;
    }
    if (this.timeout !== undefined && this.armedForMs === next.expirationMs) return;
    clearTimeout(this.timeout);
    const delay = Math.min(Math.max(next.expirationMs - this.clock(), 0), MAX_TIMEOUT_MS);
    this.armedForMs = next.expirationMs;
    this.timeout = setTimeout(() => {
      this.timeout = undefined;
      this.runExpired();
    }, delay);
    this.timeout.unref(); // pending timeouts alone must not keep the process alive
  }

  private clock(): number {
    return Math.floor(this.now());
  }
}
