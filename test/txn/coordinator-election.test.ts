// The transaction coordinator following the leadership of __transaction_state partitions: each
// partition is elected (loaded) and resigned on its own, at a leader epoch that fences stale calls,
// over the in-memory store and marker fakes.
import { expect } from 'chai';
import { ErrorCode } from '../../src/common/errors';
import { TransactionCoordinator } from '../../src/txn/coordinator';
import { TransactionState } from '../../src/txn/transaction-metadata';
import { CONFIG, FakeMarkers, FakeStore } from './coordinator-fakes';

const T0 = { topic: 'out', partition: 0 };

describe('txn/coordinator: elections and resignations of __transaction_state partitions', () => {
  let store: FakeStore;
  let markers: FakeMarkers;
  let c: TransactionCoordinator;
  let nextProducerId: number;

  /** Two ids on different partitions: `a` on partition A, `b` on partition B. */
  const a = 'id-a';
  const b = 'id-b';
  let A: number;
  let B: number;

  const settle = (ms = 250) => new Promise((resolve) => setTimeout(resolve, ms));

  beforeEach(() => {
    store = new FakeStore();
    markers = new FakeMarkers();
    nextProducerId = 1000;
    c = new TransactionCoordinator(CONFIG, markers, { nextId: async () => nextProducerId++ }, store);
    A = c.partitionFor(a);
    B = c.partitionFor(b);
    expect(A).to.not.equal(B);
  });
  afterEach(() => c.close());

  async function elect(partition: number, leaderEpoch: number): Promise<void> {
    c.onElection(partition, leaderEpoch);
    await c.loadsSettled();
  }

  /** The transaction APIs' answers for an id, all at once. */
  async function answers(id: string, producerId = 1000): Promise<number[]> {
    return [
      (await c.initProducerId(id, 60_000, null)).errorCode,
      await c.addPartitions(id, producerId, 0, [T0]),
      (await c.endTransaction(id, producerId, 0, true, 0)).errorCode,
      c.describe(id).errorCode,
    ];
  }

  it('serves the ids of elected partitions only; after a resignation those answer NOT_COORDINATOR and the others carry on', async () => {
    expect(await answers(a)).to.deep.equal(Array(4).fill(ErrorCode.NOT_COORDINATOR));
    await elect(A, 0);
    await elect(B, 0);
    const pa = (await c.initProducerId(a, 60_000, null)).producerId;
    const pb = (await c.initProducerId(b, 60_000, null)).producerId;
    expect(await c.addPartitions(b, pb, 0, [T0])).to.equal(ErrorCode.NONE);
    expect(c.list([], [], -1).transactions.map((t) => t.transactionalId).sort()).to.deep.equal([a, b]);

    c.onResignation(B, 0);
    expect(await answers(b, pb)).to.deep.equal(Array(4).fill(ErrorCode.NOT_COORDINATOR));
    expect(c.list([], [], -1)).to.deep.include({ errorCode: ErrorCode.NONE, transactions: [{ transactionalId: a, producerId: pa, state: 'Empty' }] });
    expect(await c.addPartitions(a, pa, 0, [T0])).to.equal(ErrorCode.NONE);
    expect((await c.endTransaction(a, pa, 0, true, 0)).errorCode).to.equal(ErrorCode.NONE);
    expect(c.describe(a).state).to.equal('CompleteCommit');
  });

  it('answers COORDINATOR_LOAD_IN_PROGRESS while a partition loads, for its ids only', async () => {
    await elect(A, 0);
    let release!: () => void;
    store.loadGate = new Promise((resolve) => (release = resolve));
    c.onElection(B, 0);
    expect(c.isLoaded(B)).to.equal(false);
    expect((await c.initProducerId(b, 60_000, null)).errorCode).to.equal(ErrorCode.COORDINATOR_LOAD_IN_PROGRESS);
    expect(c.describe(b).errorCode).to.equal(ErrorCode.COORDINATOR_LOAD_IN_PROGRESS);
    expect(c.list([], [], -1).errorCode).to.equal(ErrorCode.COORDINATOR_LOAD_IN_PROGRESS);
    expect((await c.initProducerId(a, 60_000, null)).errorCode).to.equal(ErrorCode.NONE);
    release();
    await c.loadsSettled();
    expect(c.isLoaded(B)).to.equal(true);
    expect((await c.initProducerId(b, 60_000, null)).errorCode).to.equal(ErrorCode.NONE);
  });

  it('reloads a partition elected again from what its log holds, and ignores elections and resignations older than the last epoch', async () => {
    await elect(B, 3);
    const { producerId } = await c.initProducerId(b, 60_000, null);
    await c.addPartitions(b, producerId, 0, [T0]);
    c.onResignation(B, 3);
    await elect(B, 2); // stale: still resigned
    expect(c.describe(b).errorCode).to.equal(ErrorCode.NOT_COORDINATOR);
    await elect(B, 4);
    expect(c.describe(b)).to.include({ errorCode: ErrorCode.NONE, state: 'Ongoing', producerId });
    c.onResignation(B, 3); // stale: still leader at epoch 4
    expect(c.isLoaded(B)).to.equal(true);
    expect((await c.endTransaction(b, producerId, 0, false, 0)).errorCode).to.equal(ErrorCode.NONE);
    expect(markers.written.map((m) => m.coordinatorEpoch)).to.deep.equal([4]);
  });

  it('finishes a PrepareCommit found at election, with markers carrying the new leader epoch', async () => {
    await elect(B, 0);
    const { producerId } = await c.initProducerId(b, 60_000, null);
    await c.addPartitions(b, producerId, 0, [T0]);
    markers.failOnce.add('out:0');
    await c.endTransaction(b, producerId, 0, true, 0); // PrepareCommit durable, the first marker failed...
    c.onResignation(B, 0); // ...and the partition moves away before the retry
    await settle();
    expect(markers.written).to.have.length(0);
    expect(store.durable.get(b)!.state).to.equal(TransactionState.PrepareCommit);

    await elect(B, 1);
    await settle(10);
    expect(markers.summary()).to.deep.equal(['out:0 commit 0']);
    expect(markers.written[0].coordinatorEpoch).to.equal(1);
    expect(store.durable.get(b)!.state).to.equal(TransactionState.CompleteCommit);
    expect(c.describe(b).state).to.equal('CompleteCommit');
  });

  it('a write in flight when its partition resigns answers NOT_COORDINATOR and leaves the partition loaded since untouched', async () => {
    await elect(B, 0);
    const { producerId } = await c.initProducerId(b, 60_000, null);
    store.hold = true;
    const adding = c.addPartitions(b, producerId, 0, [T0]);
    c.onResignation(B, 0);
    await elect(B, 1); // loads Empty: the Ongoing write has not landed
    store.release();
    expect(await adding).to.equal(ErrorCode.NOT_COORDINATOR);
    expect(c.describe(b)).to.include({ state: 'Empty' });
    // The reloaded id works on, from the state it loaded.
    expect(await c.addPartitions(b, producerId, 0, [T0])).to.equal(ErrorCode.NONE);
    expect(c.describe(b).state).to.equal('Ongoing');
  });
});
