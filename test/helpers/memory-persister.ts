// A Persister in memory for tests of what sits above the share coordinator: the share coordinator's
// rules that callers rely on (fenced state and leader epochs, reading a key never initialized as
// not initialized), without __share_group_state. `calls` records what was asked, in order.
import { ErrorCode, errorMessage } from '../../src/common/errors';
import type { Persister, PersisterError, ReadResult, ShareState, SharePartitionKey, StateBatch, StateSummary } from '../../src/share-state/persister';

const keyOf = (k: SharePartitionKey) => `${k.groupId}\u0000${k.topicId}\u0000${k.partition}`;
const ok: PersisterError = { errorCode: ErrorCode.NONE, errorMessage: null };
const refused = (errorCode: number): PersisterError => ({ errorCode, errorMessage: errorMessage(errorCode) });

export class MemoryPersister implements Persister {
  readonly states = new Map<string, ShareState>();
  readonly calls: string[] = [];
  /** A code every call answers instead of acting (NOT_COORDINATOR...), while set. */
  failWith: number | null = null;

  state(key: SharePartitionKey): ShareState | undefined {
    return this.states.get(keyOf(key));
  }

  async read(key: SharePartitionKey, leaderEpoch: number): Promise<ReadResult> {
    this.calls.push(`read ${keyOf(key)}`);
    if (this.failWith !== null) return refused(this.failWith);
    const current = this.state(key);
    if (current && leaderEpoch < current.leaderEpoch) return refused(ErrorCode.FENCED_LEADER_EPOCH);
    const state = current ? { ...current, leaderEpoch } : { stateEpoch: 0, leaderEpoch, startOffset: -1n, deliveryCompleteCount: -1, stateBatches: [] };
    this.states.set(keyOf(key), state);
    return { errorCode: ErrorCode.NONE, ...state };
  }

  async write(key: SharePartitionKey, change: { stateEpoch: number; leaderEpoch: number; startOffset: bigint; deliveryCompleteCount: number; stateBatches: readonly StateBatch[] }): Promise<PersisterError> {
    this.calls.push(`write ${keyOf(key)}`);
    if (this.failWith !== null) return refused(this.failWith);
    const current = this.state(key);
    if (!current) return refused(ErrorCode.INVALID_REQUEST);
    if (change.stateEpoch < current.stateEpoch) return refused(ErrorCode.FENCED_STATE_EPOCH);
    if (change.leaderEpoch < current.leaderEpoch) return refused(ErrorCode.FENCED_LEADER_EPOCH);
    const startOffset = change.startOffset === -1n ? current.startOffset : change.startOffset;
    const outside = (b: StateBatch) => change.stateBatches.every((c) => b.lastOffset < c.firstOffset || b.firstOffset > c.lastOffset);
    const stateBatches = [...current.stateBatches.filter(outside), ...change.stateBatches]
      .filter((b) => b.lastOffset >= startOffset)
      .sort((a, b) => (a.firstOffset < b.firstOffset ? -1 : 1));
    this.states.set(keyOf(key), { ...change, startOffset, stateBatches });
    return ok;
  }

  async initialize(key: SharePartitionKey, stateEpoch: number, startOffset: bigint): Promise<PersisterError> {
    this.calls.push(`initialize ${keyOf(key)} epoch ${stateEpoch} at ${startOffset}`);
    if (this.failWith !== null) return refused(this.failWith);
    const current = this.state(key);
    if (current && stateEpoch < current.stateEpoch) return refused(ErrorCode.FENCED_STATE_EPOCH);
    this.states.set(keyOf(key), { stateEpoch, leaderEpoch: current?.leaderEpoch ?? 0, startOffset, deliveryCompleteCount: 0, stateBatches: [] });
    return ok;
  }

  async delete(key: SharePartitionKey): Promise<PersisterError> {
    this.calls.push(`delete ${keyOf(key)}`);
    if (this.failWith !== null) return refused(this.failWith);
    this.states.delete(keyOf(key));
    return ok;
  }

  async readSummary(key: SharePartitionKey): Promise<StateSummary> {
    this.calls.push(`readSummary ${keyOf(key)}`);
    if (this.failWith !== null) return { ...refused(this.failWith), stateEpoch: 0, leaderEpoch: 0, startOffset: -1n, deliveryCompleteCount: -1 };
    const state = this.state(key);
    if (!state) return { ...refused(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION), stateEpoch: 0, leaderEpoch: 0, startOffset: -1n, deliveryCompleteCount: -1 };
    const { stateEpoch, leaderEpoch, startOffset, deliveryCompleteCount } = state;
    return { ...ok, stateEpoch, leaderEpoch, startOffset, deliveryCompleteCount };
  }
}
