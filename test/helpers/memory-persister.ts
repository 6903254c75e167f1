// A Persister kept in memory, as the share coordinator would keep it: for share-partition tests
// (no share coordinator, no etcd). It records the calls made to it and can be told to fail writes.
import { ErrorCode } from '../../src/common/errors';
import type {
  Persister,
  PersisterError,
  ReadResult,
  SharePartitionKey,
  ShareState,
  StateBatch,
  StateSummary,
} from '../../src/share-state/persister';

type WriteChange = Parameters<Persister['write']>[1];

const keyString = (k: SharePartitionKey) => `${k.groupId}\u0000${k.topicId}\u0000${k.partition}`;
const ok: PersisterError = { errorCode: ErrorCode.NONE, errorMessage: null };

/** `batches` with `update` laid over them offset by offset (what WriteShareGroupState does), from `start` on. */
export function overlayStateBatches(batches: readonly StateBatch[], update: readonly StateBatch[], start: bigint): StateBatch[] {
  let result = [...batches];
  for (const u of update) {
    const next: StateBatch[] = [];
    for (const b of result) {
      if (b.lastOffset < u.firstOffset || b.firstOffset > u.lastOffset) {
        next.push(b);
        continue;
      }
      if (b.firstOffset < u.firstOffset) next.push({ ...b, lastOffset: u.firstOffset - 1n });
      if (b.lastOffset > u.lastOffset) next.push({ ...b, firstOffset: u.lastOffset + 1n });
    }
    next.push(u);
    result = next;
  }
  return result
    .filter((b) => b.lastOffset >= start)
    .map((b) => (b.firstOffset < start ? { ...b, firstOffset: start } : b))
    .sort((a, b) => (a.firstOffset < b.firstOffset ? -1 : 1));
}

export class MemoryPersister implements Persister {
  private readonly states = new Map<string, ShareState>();
  readonly writes: Array<{ key: SharePartitionKey; change: WriteChange }> = [];
  readonly initializations: Array<{ key: SharePartitionKey; stateEpoch: number; startOffset: bigint }> = [];
  /** Codes the next writes answer with, one per write (then success again). */
  readonly failWrites: number[] = [];
  /** Held writes resolve only when released (to test what interleaves with a write in flight). */
  private holdWrites = false;
  private held: Array<() => void> = [];

  /** What the coordinator answers for a key it never saw: UNKNOWN_TOPIC_OR_PARTITION, or state with start -1. */
  constructor(private readonly unknownKeys: 'unknown-topic-or-partition' | 'uninitialized' = 'unknown-topic-or-partition') {}

  state(key: SharePartitionKey): ShareState | undefined {
    return this.states.get(keyString(key));
  }

  setState(key: SharePartitionKey, state: ShareState): void {
    this.states.set(keyString(key), state);
  }

  hold(): void {
    this.holdWrites = true;
  }

  release(): void {
    this.holdWrites = false;
    const held = this.held;
    this.held = [];
    for (const go of held) go();
  }

  async read(key: SharePartitionKey, leaderEpoch: number): Promise<ReadResult> {
    const state = this.states.get(keyString(key));
    if (!state) {
      if (this.unknownKeys === 'unknown-topic-or-partition') return { errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: null };
      return { errorCode: 0, stateEpoch: 0, leaderEpoch, startOffset: -1n, deliveryCompleteCount: -1, stateBatches: [] };
    }
    this.states.set(keyString(key), { ...state, leaderEpoch });
    return { errorCode: 0, ...state, leaderEpoch };
  }

  async write(key: SharePartitionKey, change: WriteChange): Promise<PersisterError> {
    if (this.holdWrites) await new Promise<void>((go) => this.held.push(go));
    this.writes.push({ key, change });
    const failure = this.failWrites.shift();
    if (failure !== undefined) return { errorCode: failure, errorMessage: 'injected failure' };
    const current = this.states.get(keyString(key));
    const start = change.startOffset >= 0n ? change.startOffset : current?.startOffset ?? -1n;
    this.states.set(keyString(key), {
      stateEpoch: change.stateEpoch,
      leaderEpoch: change.leaderEpoch,
      startOffset: start,
      deliveryCompleteCount: change.deliveryCompleteCount,
      stateBatches: overlayStateBatches(current?.stateBatches ?? [], change.stateBatches, start),
    });
    return ok;
  }

  async initialize(key: SharePartitionKey, stateEpoch: number, startOffset: bigint): Promise<PersisterError> {
    this.initializations.push({ key, stateEpoch, startOffset });
    this.states.set(keyString(key), { stateEpoch, leaderEpoch: -1, startOffset, deliveryCompleteCount: 0, stateBatches: [] });
    return ok;
  }

  async delete(key: SharePartitionKey): Promise<PersisterError> {
    this.states.delete(keyString(key));
    return ok;
  }

  async readSummary(key: SharePartitionKey, leaderEpoch: number): Promise<StateSummary> {
    const state = this.states.get(keyString(key));
    if (!state) return { errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: null, stateEpoch: 0, leaderEpoch, startOffset: -1n, deliveryCompleteCount: -1 };
    return { errorCode: 0, errorMessage: null, stateEpoch: state.stateEpoch, leaderEpoch, startOffset: state.startOffset, deliveryCompleteCount: state.deliveryCompleteCount };
  }
}
