/**
 * Delayed operations and the purgatory that holds them, as Kafka's
 * DelayedOperation and DelayedOperationPurgatory (server-common
 * .../server/purgatory/): a produce waiting for acks, a fetch waiting for
 * bytes. An operation waits on one or more keys ("topic-0") until an event on
 * a key lets it complete (checkAndComplete after an append) or its timeout
 * expires, whichever comes first; it completes exactly once.
 *
 * Node runs one thing at a time, so Kafka's locks go and so does its second
 * tryComplete() after watching (nothing can happen in between). Kafka leaves
 * completed operations on their other keys' lists until a periodic purge; here
 * completion takes an operation off all its lists at once, so nothing lingers.
 */
import { Timer, TimerTask } from './timing-wheel';

/** Operations being watched -> how to take them off their watch lists. Module-private. */
const unwatchOnCompletion = new WeakMap<DelayedOperation, () => void>();

export abstract class DelayedOperation extends TimerTask {
  private completed = false;

  /**
   * If the operation can complete now, calls forceComplete() and returns its
   * result; otherwise returns false. Called on every event of a watched key.
   */
  abstract tryComplete(): boolean;

  /** The completion logic (e.g. send the response). Runs exactly once. */
  abstract onComplete(): void;

  /** Called after onComplete() when completion came from the timeout (Kafka's order). */
  abstract onExpiration(): void;

  isCompleted(): boolean {
    return this.completed;
  }

  /**
   * Completes the operation if nobody has yet: stops its timeout, takes it off
   * every watch list, runs onComplete(). True only for the call that did it,
   * so a timeout racing a completion still completes once.
   */
  forceComplete(): boolean {
    if (this.completed) return false;
    this.completed = true;
    this.cancel();
    const unwatch = unwatchOnCompletion.get(this);
    if (unwatch) {
      unwatchOnCompletion.delete(this);
      unwatch();
    }
    this.onComplete();
    return true;
  }

  /** The timeout: the timer calls this when delayMs has passed. */
  run(): void {
    if (this.forceComplete()) this.onExpiration();
  }
}

export class DelayedOperationPurgatory<K extends string = string> {
  /** Per key, the operations waiting on it, in the order they came. */
  private readonly watchers = new Map<K, Set<DelayedOperation>>();

  /** @param timer the timeouts' timer; the purgatory owns it and closes it on shutdown. */
  constructor(
    readonly name: string,
    private readonly timer: Timer = new Timer(),
  ) {}

  /**
   * Tries to complete `op` now; if it can't, watches it on every key and
   * starts its timeout. Returns true when `op` completed in this call.
   */
  tryCompleteElseWatch(op: DelayedOperation, keys: readonly K[]): boolean {
    if (keys.length === 0) throw new Error('The watch key list cannot be empty');
    if (unwatchOnCompletion.has(op)) throw new Error('The operation is already watched');
    if (op.tryComplete()) return true;
    if (op.isCompleted()) return false; // completed some other way inside tryComplete(): nothing to watch

    const uniqueKeys = [...new Set(keys)];
    for (const key of uniqueKeys) {
      let ops = this.watchers.get(key);
      if (ops === undefined) this.watchers.set(key, (ops = new Set()));
      ops.add(op);
    }
    unwatchOnCompletion.set(op, () => this.unwatch(op, uniqueKeys));
    this.timer.add(op);
    return false;
  }

  /**
   * Gives every operation waiting on `key` a chance to complete (call it after
   * the event, e.g. an append to that partition). Returns how many completed.
   */
  checkAndComplete(key: K): number {
    const ops = this.watchers.get(key);
    if (ops === undefined) return 0;
    let completed = 0;
    // Completing deletes from `ops` as we go, which Set iteration allows.
    for (const op of ops) {
      if (!op.isCompleted() && op.tryComplete()) completed++;
    }
    return completed;
  }

  /** (key, operation) pairs being watched; an operation on 3 keys counts 3. */
  watched(): number {
    let sum = 0;
    for (const ops of this.watchers.values()) sum += ops.size;
    return sum;
  }

  /** Keys with at least one operation waiting. */
  watchedKeys(): number {
    return this.watchers.size;
  }

  /** Operations whose timeout is pending. */
  numDelayed(): number {
    return this.timer.size;
  }

  /**
   * Stops the timer. Waiting operations are dropped without completing, as in
   * Kafka; their connections are closing anyway.
   */
  shutdown(): void {
    this.timer.close();
    for (const ops of this.watchers.values()) {
      for (const op of ops) unwatchOnCompletion.delete(op);
    }
    this.watchers.clear();
  }

  private unwatch(op: DelayedOperation, keys: readonly K[]): void {
    for (const key of keys) {
      const ops = this.watchers.get(key);
      if (ops === undefined) continue;
      ops.delete(op);
      if (ops.size === 0) this.watchers.delete(key);
    }
  }
}
