// Named timeouts on the broker's timing wheel, as Kafka 4's coordinator timer: scheduling a key
// replaces whatever was scheduled under it, so "reset the session timeout" is one call, and a
// group's timers can all be cancelled when it dies.
import { TimerTask, type Timer } from '../replica/delayed/timing-wheel';

class KeyedTask extends TimerTask {
  constructor(delayMs: number, readonly key: string, private readonly owner: GroupTimers, private readonly fn: () => void) {
    super(delayMs);
  }

  run(): void {
    this.owner.fired(this);
    this.fn();
  }
}

export class GroupTimers {
  private readonly tasks = new Map<string, KeyedTask>();

  constructor(private readonly timer: Timer) {}

  /** Runs `fn` after `delayMs` unless the key is scheduled again or cancelled first. */
  schedule(key: string, delayMs: number, fn: () => void): void {
    this.cancel(key);
    const task = new KeyedTask(Math.max(0, delayMs), key, this, fn);
    this.tasks.set(key, task);
    this.timer.add(task);
  }

  cancel(key: string): void {
    const task = this.tasks.get(key);
    if (task) {
      task.cancel();
      this.tasks.delete(key);
    }
  }

  /** Cancels every key that starts with `prefix`. */
  cancelAll(prefix = ''): void {
    for (const key of [...this.tasks.keys()]) if (key.startsWith(prefix)) this.cancel(key);
  }

  has(key: string): boolean {
    return this.tasks.has(key);
  }

  /** Keys scheduled and not yet run. */
  keys(): string[] {
    return [...this.tasks.keys()];
  }

  /** @internal */
  fired(task: KeyedTask): void {
    if (this.tasks.get(task.key) === task) this.tasks.delete(task.key);
  }
}

// The coordinator's timer keys: JSON arrays, so a group's keys share an unambiguous prefix whatever its id contains.
export const groupTimersPrefix = (groupId: string): string => `${JSON.stringify([groupId]).slice(0, -1)},`;
export const heartbeatKey = (groupId: string, memberId: string): string => JSON.stringify([groupId, 'heartbeat', memberId]);
export const joinKey = (groupId: string): string => JSON.stringify([groupId, 'join']);
export const syncKey = (groupId: string): string => JSON.stringify([groupId, 'sync']);
export const consumerSessionKey = (groupId: string, memberId: string): string => JSON.stringify([groupId, 'consumer-session', memberId]);
export const consumerRebalanceKey = (groupId: string, memberId: string): string => JSON.stringify([groupId, 'consumer-rebalance', memberId]);
/** A classic member of a consumer group: its JoinGroup after REBALANCE_IN_PROGRESS, its SyncGroup after the join. */
export const consumerJoinKey = (groupId: string, memberId: string): string => JSON.stringify([groupId, 'consumer-join', memberId]);
/** A consumer group's next target assignment, once group.consumer.assignment.interval.ms has passed since the last. */
export const consumerAssignmentKey = (groupId: string): string => JSON.stringify([groupId, 'consumer-assignment']);
export const consumerSyncKey = (groupId: string, memberId: string): string => JSON.stringify([groupId, 'consumer-sync', memberId]);
// Not a JSON array: no group's prefix can match it.
export const retentionKey = (offsetsPartition: number): string => `offsets-retention-${offsetsPartition}`;
export const streamsSessionKey = (groupId: string, memberId: string): string => JSON.stringify([groupId, 'streams-session', memberId]);
export const streamsRebalanceKey = (groupId: string, memberId: string): string => JSON.stringify([groupId, 'streams-rebalance', memberId]);
export const shareSessionKey = (groupId: string, memberId: string): string => JSON.stringify([groupId, 'share-session', memberId]);
