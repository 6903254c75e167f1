// The share coordinator over an in-memory __share_group_state (records kept encoded, as the log keeps
// them): Kafka 4.4's shard rules for reads, writes, snapshots, fencing and deletion, and what a new
// coordinator replays from the records.
import { expect } from 'chai';
import { ErrorCode } from '../../src/common/errors';
import type { TopicRecord } from '../../src/cluster/metadata-store';
import {
  NEGATIVE_LEADER_EPOCH, NEGATIVE_PARTITION_ID, NEGATIVE_STATE_EPOCH, READ_UNINITIALIZED_SHARE_PARTITION, ShareCoordinator,
  WRITE_UNINITIALIZED_SHARE_PARTITION, type StateChange,
} from '../../src/share-state/coordinator';
import { DeliveryState, type StateBatch } from '../../src/share-state/persister';
import type { PlacedRecord, ShareStateStore } from '../../src/share-state/share-state-log';
import { decodeShareStateRecord, encodeShareStateRecord, type ShareStateRecord } from '../../src/share-state/share-state-records';
import { combineStateBatches } from '../../src/share-state/state-batches';

const TOPIC_ID = '000102030405060708090a0b0c0d0e0f';
const TOPIC: TopicRecord = {
  name: 'queue', id: TOPIC_ID, configs: {},
  partitions: [0, 1].map((index) => ({ index, replicas: [1], leader: 1, leaderEpoch: 0, isr: [1] })),
};
const key = { groupId: 'group-a', topicId: TOPIC_ID, partition: 1 };
const NUM_PARTITIONS = 4;

/** __share_group_state in memory: each partition's records, encoded. */
class MemoryStateLog implements ShareStateStore {
  readonly numPartitions = NUM_PARTITIONS;
  /** Each partition's records from its log start (logStarts) on. */
  readonly logs = new Map<number, { key: Buffer; value: Buffer | null }[]>();
  readonly logStarts = new Map<number, number>();
  failWith: number = ErrorCode.NONE;
  gate: Promise<void> | null = null;

  async write(partition: number, record: ShareStateRecord): Promise<{ errorCode: number; offset: number }> {
    if (this.gate) await this.gate;
    if (this.failWith !== ErrorCode.NONE) return { errorCode: this.failWith, offset: -1 };
    const log = this.logs.get(partition) ?? [];
    this.logs.set(partition, log);
    log.push(encodeShareStateRecord(record));
    return { errorCode: ErrorCode.NONE, offset: (this.logStarts.get(partition) ?? 0) + log.length - 1 };
  }

  async loadPartition(partition: number): Promise<PlacedRecord[]> {
    if (this.gate) await this.gate;
    const start = this.logStarts.get(partition) ?? 0;
    return (this.logs.get(partition) ?? []).map((r, i) => ({ record: decodeShareStateRecord(r.key, r.value)!, offset: start + i }));
  }

  deleteRecordsBefore(partition: number, offset: number): Promise<void> {
    const start = this.logStarts.get(partition) ?? 0;
    this.logs.set(partition, (this.logs.get(partition) ?? []).slice(offset - start));
    this.logStarts.set(partition, offset);
    return Promise.resolve();
  }

  /** The types of the records written for the key's partition, in order. */
  types(partition: number): string[] {
    return (this.logs.get(partition) ?? []).map((r) => {
      const decoded = decodeShareStateRecord(r.key, r.value)!;
      return decoded.value === null ? 'tombstone' : decoded.type;
    });
  }
}

const batch = (first: number, last: number, state: DeliveryState, count: number): StateBatch =>
  ({ firstOffset: BigInt(first), lastOffset: BigInt(last), deliveryState: state, deliveryCount: count });
const change = (o: Partial<StateChange>): StateChange =>
  ({ stateEpoch: 0, leaderEpoch: 1, startOffset: -1n, deliveryCompleteCount: -1, stateBatches: [], ...o });

async function started(store: MemoryStateLog, updatesPerSnapshot = 500): Promise<ShareCoordinator> {
  const c = new ShareCoordinator({ numPartitions: NUM_PARTITIONS, updatesPerSnapshot, pruneIntervalMs: 3_600_000 }, store,
    { topicById: (id) => (id === TOPIC_ID ? TOPIC : undefined) }, undefined, () => 1_700_000_000_000);
  for (let p = 0; p < NUM_PARTITIONS; p++) c.onElection(p, 0);
  await c.loadsSettled();
  return c;
}

describe('share-state/state-batches', () => {
  const { ACKNOWLEDGED: ACK, AVAILABLE: AV, ARCHIVED: ARC } = DeliveryState;

  it('keeps, per offset, the batch of the higher delivery count, then the higher state, and joins what is alike', () => {
    expect(combineStateBatches([batch(0, 9, AV, 1)], [batch(3, 5, ACK, 1)], -1n))
      .to.deep.equal([batch(0, 2, AV, 1), batch(3, 5, ACK, 1), batch(6, 9, AV, 1)]);
    // A lower delivery count loses whatever its state.
    expect(combineStateBatches([batch(0, 9, AV, 2)], [batch(3, 5, ACK, 1)], -1n)).to.deep.equal([batch(0, 9, AV, 2)]);
    // Contiguous and overlapping batches of the same state and count become one; gaps stay.
    expect(combineStateBatches([batch(0, 4, ACK, 1), batch(10, 12, ARC, 5)], [batch(5, 7, ACK, 1), batch(6, 8, ACK, 1)], -1n))
      .to.deep.equal([batch(0, 8, ACK, 1), batch(10, 12, ARC, 5)]);
  });

  it('drops what lies below the start offset and cuts the batch across it', () => {
    expect(combineStateBatches([batch(0, 4, ACK, 1), batch(5, 9, AV, 2)], [batch(12, 12, ARC, 1)], 7n))
      .to.deep.equal([batch(7, 9, AV, 2), batch(12, 12, ARC, 1)]);
  });
});

describe('share-state/coordinator', () => {
  it('refuses to read or write a share-partition before it is initialized, then serves it', async () => {
    const store = new MemoryStateLog();
    const c = await started(store);
    expect(await c.read(key, 1)).to.deep.equal({ errorCode: ErrorCode.INVALID_REQUEST, errorMessage: READ_UNINITIALIZED_SHARE_PARTITION });
    expect(await c.write(key, change({}))).to.deep.equal({ errorCode: ErrorCode.INVALID_REQUEST, errorMessage: WRITE_UNINITIALIZED_SHARE_PARTITION });
    expect(await c.readSummary(key, 1)).to.include({ errorCode: ErrorCode.NONE, startOffset: -1n, stateEpoch: 0, leaderEpoch: 0, deliveryCompleteCount: -1 });

    expect(await c.initialize(key, 0, 10n)).to.deep.equal({ errorCode: ErrorCode.NONE, errorMessage: null });
    expect(await c.read(key, 1)).to.deep.equal({
      errorCode: ErrorCode.NONE, stateEpoch: 0, leaderEpoch: 1, startOffset: 10n, deliveryCompleteCount: -1, stateBatches: [],
    });
    // The read at a new leader epoch wrote it (an update over the initial snapshot); the same epoch writes nothing.
    expect(store.types(c.partitionFor(key))).to.deep.equal(['snapshot', 'update']);
    await c.read(key, 1);
    expect(store.types(c.partitionFor(key))).to.have.length(2);
  });

  it('merges writes over the state offset by offset, and never moves the start back', async () => {
    const store = new MemoryStateLog();
    const c = await started(store);
    await c.initialize(key, 0, 0n);
    await c.read(key, 1);
    expect(await c.write(key, change({ startOffset: 0n, stateBatches: [batch(0, 9, DeliveryState.AVAILABLE, 1)] }))).to.include({ errorCode: ErrorCode.NONE });
    expect(await c.write(key, change({ startOffset: 0n, deliveryCompleteCount: 3, stateBatches: [batch(0, 2, DeliveryState.ACKNOWLEDGED, 1)] })))
      .to.include({ errorCode: ErrorCode.NONE });
    await c.write(key, change({ startOffset: 3n, stateBatches: [batch(9, 9, DeliveryState.ARCHIVED, 5)] }));
    await c.write(key, change({ startOffset: 1n, deliveryCompleteCount: 9 })); // behind the start: the start and count stay
    const read = await c.read(key, 1);
    expect(read).to.deep.equal({
      errorCode: ErrorCode.NONE, stateEpoch: 0, leaderEpoch: 1, startOffset: 3n, deliveryCompleteCount: -1,
      stateBatches: [batch(3, 8, DeliveryState.AVAILABLE, 1), batch(9, 9, DeliveryState.ARCHIVED, 5)],
    });
    expect(await c.readSummary(key, 0)).to.deep.equal({
      errorCode: ErrorCode.NONE, errorMessage: null, stateEpoch: 0, leaderEpoch: 1, startOffset: 3n, deliveryCompleteCount: -1,
    });
  });

  it('writes a snapshot once share.coordinator.snapshot.update.records.per.snapshot updates followed the last one', async () => {
    const store = new MemoryStateLog();
    const c = await started(store, 3);
    await c.initialize(key, 0, 0n);
    for (let i = 0; i < 8; i++) {
      await c.write(key, change({ leaderEpoch: 0, startOffset: BigInt(i), stateBatches: [batch(i, i, DeliveryState.ACKNOWLEDGED, 1)] }));
    }
    expect(store.types(c.partitionFor(key))).to.deep.equal(['snapshot', 'update', 'update', 'update', 'snapshot', 'update', 'update', 'update', 'snapshot']);
    const state = await c.read(key, 0);
    expect(state).to.deep.include({ startOffset: 7n, stateBatches: [batch(7, 7, DeliveryState.ACKNOWLEDGED, 1)] });
  });

  it('fences writes and reads below the recorded epochs, and checks the request as Kafka', async () => {
    const store = new MemoryStateLog();
    const c = await started(store);
    await c.initialize(key, 2, 0n);
    await c.read(key, 5);
    expect(await c.read(key, 4)).to.include({ errorCode: ErrorCode.FENCED_LEADER_EPOCH });
    expect(await c.write(key, change({ leaderEpoch: 4, stateEpoch: 2 }))).to.include({ errorCode: ErrorCode.FENCED_LEADER_EPOCH });
    expect(await c.write(key, change({ leaderEpoch: 5, stateEpoch: 1 }))).to.include({ errorCode: ErrorCode.FENCED_STATE_EPOCH });
    expect(await c.initialize(key, 1, 0n)).to.include({ errorCode: ErrorCode.FENCED_STATE_EPOCH });
    expect(await c.write(key, change({ leaderEpoch: 6, stateEpoch: 2 }))).to.include({ errorCode: ErrorCode.NONE });
    // A write does not record its leader epoch: only a read does.
    expect(await c.write(key, change({ leaderEpoch: 5, stateEpoch: 2 }))).to.include({ errorCode: ErrorCode.NONE });

    expect(await c.read({ ...key, partition: -1 }, 1)).to.deep.equal({ errorCode: ErrorCode.INVALID_REQUEST, errorMessage: NEGATIVE_PARTITION_ID });
    expect(await c.read(key, -1)).to.deep.equal({ errorCode: ErrorCode.INVALID_REQUEST, errorMessage: NEGATIVE_LEADER_EPOCH });
    expect(await c.write(key, change({ stateEpoch: -1, leaderEpoch: 6 }))).to.deep.equal({ errorCode: ErrorCode.INVALID_REQUEST, errorMessage: NEGATIVE_STATE_EPOCH });
    expect(await c.initialize({ ...key, partition: 2 }, 0, 0n)).to.include({ errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION });
    expect(await c.initialize({ ...key, topicId: 'f'.repeat(32) }, 0, 0n)).to.include({ errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION });

    // A new state epoch (AlterShareGroupOffsets) restarts the share-partition without its batches.
    await c.write(key, change({ leaderEpoch: 6, stateEpoch: 2, stateBatches: [batch(0, 3, DeliveryState.ACKNOWLEDGED, 1)] }));
    expect(await c.initialize(key, 3, 50n)).to.include({ errorCode: ErrorCode.NONE });
    expect(await c.read(key, 6)).to.deep.include({ stateEpoch: 3, startOffset: 50n, stateBatches: [] });
  });

  it('deletes with a tombstone; deleting what has no state writes nothing', async () => {
    const store = new MemoryStateLog();
    const c = await started(store);
    expect(await c.delete(key)).to.deep.equal({ errorCode: ErrorCode.NONE, errorMessage: null });
    expect(store.types(c.partitionFor(key))).to.deep.equal([]);
    await c.initialize(key, 0, 5n);
    expect(await c.delete(key)).to.deep.equal({ errorCode: ErrorCode.NONE, errorMessage: null });
    expect(store.types(c.partitionFor(key))).to.deep.equal(['snapshot', 'tombstone']);
    expect(await c.read(key, 1)).to.include({ errorCode: ErrorCode.INVALID_REQUEST });
    // Its epochs went with it: a new initialization may start over at state epoch 0.
    expect(await c.initialize(key, 0, 7n)).to.include({ errorCode: ErrorCode.NONE });
  });

  it('replays the records into the same state on election: snapshots, updates over them, tombstones', async () => {
    const store = new MemoryStateLog();
    const first = await started(store, 2);
    const other = { ...key, groupId: 'other' };
    const gone = { ...key, groupId: 'gone' };
    for (const k of [key, other, gone]) await first.initialize(k, 1, 0n);
    await first.read(key, 3);
    for (let i = 0; i < 5; i++) {
      await first.write(key, change({ leaderEpoch: 3, stateEpoch: 1, startOffset: 2n, deliveryCompleteCount: i, stateBatches: [batch(i * 2, i * 2 + 1, DeliveryState.ACKNOWLEDGED, i + 1)] }));
    }
    await first.write(other, change({ leaderEpoch: 0, stateEpoch: 1, stateBatches: [batch(0, 0, DeliveryState.ARCHIVED, 5)] }));
    await first.delete(gone);
    const expected = await Promise.all([first.read(key, 3), first.read(other, 0), first.readSummary(key, 3)]);

    const second = await started(store, 2);
    expect(await Promise.all([second.read(key, 3), second.read(other, 0), second.readSummary(key, 3)])).to.deep.equal(expected);
    expect(await second.read(gone, 0)).to.include({ errorCode: ErrorCode.INVALID_REQUEST });
    expect(await second.read(key, 2)).to.include({ errorCode: ErrorCode.FENCED_LEADER_EPOCH });
    expect(await second.write(key, change({ leaderEpoch: 3, stateEpoch: 0 }))).to.include({ errorCode: ErrorCode.FENCED_STATE_EPOCH });
  });

  it('answers NOT_COORDINATOR for partitions not led here, and once resigned, even for a write in flight', async () => {
    const store = new MemoryStateLog();
    const c = await started(store);
    await c.initialize(key, 0, 0n);
    const partition = c.partitionFor(key);
    let open = () => {};
    store.gate = new Promise<void>((resolve) => (open = resolve));
    const write = c.write(key, change({ leaderEpoch: 0, stateBatches: [batch(0, 0, DeliveryState.ACKNOWLEDGED, 1)] }));
    const queued = c.write(key, change({ leaderEpoch: 0 }));
    await new Promise((r) => setImmediate(r));
    c.onResignation(partition, 1);
    store.gate = null;
    open();
    expect(await write).to.include({ errorCode: ErrorCode.NOT_COORDINATOR });
    expect(await queued).to.include({ errorCode: ErrorCode.NOT_COORDINATOR });
    expect(await c.readSummary(key, 0)).to.include({ errorCode: ErrorCode.NOT_COORDINATOR });
    expect(c.isLoaded(partition)).to.equal(false);
    // A stale election (an older leader epoch) is ignored; a newer one loads what was written, the write in flight included.
    c.onElection(partition, 0);
    expect(c.isLoaded(partition)).to.equal(false);
    store.gate = new Promise<void>((resolve) => (open = resolve));
    c.onElection(partition, 2);
    expect(await c.read(key, 0)).to.include({ errorCode: ErrorCode.COORDINATOR_LOAD_IN_PROGRESS });
    store.gate = null;
    open();
    await c.loadsSettled();
    expect(await c.read(key, 0)).to.deep.include({ stateBatches: [batch(0, 0, DeliveryState.ACKNOWLEDGED, 1)] });
    await c.close();
    expect(await c.read(key, 0)).to.deep.equal({ errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE, errorMessage: 'Share coordinator is not available.' });
  });

  it('prunes the records below every key\'s latest snapshot, and a new coordinator reads the same state from what is left', async () => {
    const store = new MemoryStateLog();
    const c = await started(store, 1);
    const a = key;
    const partition = c.partitionFor(a);
    const b = Array.from({ length: 100 }, (_, i) => ({ ...key, groupId: `g${i}` })).find((k) => c.partitionFor(k) === partition)!;
    const ack = (o: number) => change({ leaderEpoch: 0, stateBatches: [batch(o, o, DeliveryState.ACKNOWLEDGED, 1)] });
    await c.initialize(a, 0, 0n); // snapshot at 0
    await c.initialize(b, 0, 0n); // snapshot at 1
    await c.write(a, ack(0)); // update at 2
    await c.write(a, ack(1)); // snapshot at 3
    await c.prune();
    expect(store.logStarts.get(partition)).to.equal(1);
    await c.write(b, ack(5)); // update at 4
    await c.write(b, ack(6)); // snapshot at 5
    await c.prune();
    expect(store.logStarts.get(partition)).to.equal(3);
    const states = async (co: ShareCoordinator) => [await co.read(a, 0), await co.read(b, 0)];
    const expected = await states(c);
    expect(await states(await started(store, 1))).to.deep.equal(expected);

    await c.delete(a); // tombstone at 6
    await c.prune();
    expect(store.logStarts.get(partition)).to.equal(5);
    const reloaded = await started(store, 1);
    expect(await reloaded.read(a, 0)).to.include({ errorCode: ErrorCode.INVALID_REQUEST });
    expect(await reloaded.read(b, 0)).to.deep.equal(expected[1]);
  });

  it('runs one key\'s operations in turn, each over the state the one before left', async () => {
    const store = new MemoryStateLog();
    const c = await started(store);
    await c.initialize(key, 0, 0n);
    const writes = Array.from({ length: 20 }, (_, i) =>
      c.write(key, change({ leaderEpoch: 0, stateBatches: [batch(i, i, DeliveryState.ACKNOWLEDGED, 1)] })));
    expect((await Promise.all(writes)).every((w) => w.errorCode === ErrorCode.NONE)).to.equal(true);
    expect(await c.read(key, 0)).to.deep.include({ stateBatches: [batch(0, 19, DeliveryState.ACKNOWLEDGED, 1)] });
    store.failWith = ErrorCode.NOT_ENOUGH_REPLICAS;
    expect(await c.write(key, change({ leaderEpoch: 0, stateBatches: [batch(30, 30, DeliveryState.ARCHIVED, 1)] })))
      .to.include({ errorCode: ErrorCode.NOT_ENOUGH_REPLICAS });
    store.failWith = ErrorCode.NONE;
    // A failed write changed nothing.
    expect(await c.read(key, 0)).to.deep.include({ stateBatches: [batch(0, 19, DeliveryState.ACKNOWLEDGED, 1)] });
  });
});
