// The transaction coordinator under transaction version 2 (KIP-890 part 2): EndTxn v5 bumps the epoch
// at every end and answers the one to go on with, partitions are added by the leaders' writes
// (addPartitions at version 2), and the log holds each transaction's client transaction version.
import { expect } from 'chai';
import { ErrorCode } from '../../src/common/errors';
import { TransactionCoordinator } from '../../src/txn/coordinator';
import { TransactionState } from '../../src/txn/transaction-metadata';
import { CONFIG, FakeMarkers, FakeStore } from './coordinator-fakes';

const T0 = { topic: 'out', partition: 0 };
const T1 = { topic: 'out', partition: 1 };
const TV2 = 2;

describe('txn/coordinator, transaction version 2', () => {
  let store: FakeStore;
  let markers: FakeMarkers;
  let nextProducerId: number;
  let finalized: number;
  let coordinators: TransactionCoordinator[];

  async function start(): Promise<TransactionCoordinator> {
    const c = new TransactionCoordinator({ ...CONFIG, transactionVersion: () => finalized }, markers,
      { nextId: async () => nextProducerId++ }, store);
    coordinators.push(c);
    for (let p = 0; p < store.numPartitions; p++) c.onElection(p, 7);
    await c.loadsSettled();
    return c;
  }

  beforeEach(() => {
    store = new FakeStore();
    markers = new FakeMarkers();
    nextProducerId = 1000;
    finalized = 2;
    coordinators = [];
  });
  afterEach(async () => {
    for (const c of coordinators) await c.close();
  });

  it('bumps the epoch at every commit and abort; the markers carry the new epoch and the answer gives it', async () => {
    const c = await start();
    const { producerId } = await c.initProducerId('t', 60_000, null);
    expect(await c.addPartitions('t', producerId, 0, [T0, T1], TV2)).to.equal(ErrorCode.NONE);
    expect(await c.endTransaction('t', producerId, 0, true, TV2)).to.deep.equal({ errorCode: 0, producerId, producerEpoch: 1 });
    expect(markers.summary()).to.deep.equal(['out:0 commit 1', 'out:1 commit 1']);
    expect(markers.written.map((m) => m.transactionVersion)).to.deep.equal([2]);

    expect(await c.addPartitions('t', producerId, 1, [T1], TV2)).to.equal(ErrorCode.NONE);
    expect(await c.endTransaction('t', producerId, 1, false, TV2)).to.deep.equal({ errorCode: 0, producerId, producerEpoch: 2 });
    expect(markers.summary().slice(2)).to.deep.equal(['out:1 abort 2']);
    expect(c.describe('t')).to.include({ state: 'CompleteAbort', producerEpoch: 2 });
    // The log holds the bumped epoch from the Prepare state on, and the client's version.
    const prepare = store.writes.filter((w) => w.value?.state === TransactionState.PrepareAbort).map((w) => w.value!);
    expect(prepare).to.have.length(1);
    expect(prepare[0]).to.include({ producerEpoch: 2, clientTransactionVersion: 2, previousProducerId: producerId, nextProducerId: -1 });
    // The old epoch is fenced.
    expect(await c.addPartitions('t', producerId, 1, [T0], TV2)).to.equal(ErrorCode.PRODUCER_FENCED);
  });

  it('answers a retried end (the epoch before the bump) with the same id and epoch; the opposite end is INVALID_TXN_STATE', async () => {
    const c = await start();
    const { producerId } = await c.initProducerId('t', 60_000, null);
    await c.addPartitions('t', producerId, 0, [T0], TV2);
    expect(await c.endTransaction('t', producerId, 0, true, TV2)).to.deep.equal({ errorCode: 0, producerId, producerEpoch: 1 });
    expect(await c.endTransaction('t', producerId, 0, true, TV2)).to.deep.equal({ errorCode: 0, producerId, producerEpoch: 1 });
    expect((await c.endTransaction('t', producerId, 0, false, TV2)).errorCode).to.equal(ErrorCode.INVALID_TXN_STATE);
    // At the current epoch, a commit with nothing open is refused, an abort is taken (and bumps).
    expect((await c.endTransaction('t', producerId, 1, true, TV2)).errorCode).to.equal(ErrorCode.INVALID_TXN_STATE);
    expect(await c.endTransaction('t', producerId, 1, false, TV2)).to.deep.equal({ errorCode: 0, producerId, producerEpoch: 2 });
    expect(markers.summary()).to.deep.equal(['out:0 commit 1']);
    expect(await c.endTransaction('t', producerId, 1, false, TV2)).to.deep.equal({ errorCode: 0, producerId, producerEpoch: 2 });
    // An epoch older than the retry's is fenced; an unknown producer id is not this transaction's.
    expect((await c.endTransaction('t', producerId, 0, false, TV2)).errorCode).to.equal(ErrorCode.PRODUCER_FENCED);
    expect((await c.endTransaction('t', producerId + 1, 2, false, TV2)).errorCode).to.equal(ErrorCode.INVALID_PRODUCER_ID_MAPPING);
  });

  it('aborts with no transaction open right after InitProducerId (Empty), with the epoch bumped', async () => {
    const c = await start();
    const { producerId } = await c.initProducerId('t', 60_000, null);
    expect((await c.endTransaction('t', producerId, 0, true, TV2)).errorCode).to.equal(ErrorCode.INVALID_TXN_STATE);
    expect(await c.endTransaction('t', producerId, 0, false, TV2)).to.deep.equal({ errorCode: 0, producerId, producerEpoch: 1 });
    expect(markers.written).to.have.length(0);
    expect(c.describe('t')).to.include({ state: 'CompleteAbort', producerEpoch: 1 });
  });

  it('moves to a new producer id at epoch 0 when the end bumps the last epoch; a retry gets it again', async () => {
    store.durable.set('t', {
      producerId: 5, previousProducerId: 5, nextProducerId: -1, producerEpoch: 32766, transactionTimeoutMs: 60_000,
      state: TransactionState.Ongoing, partitions: [T0], lastUpdateTimestampMs: 0, startTimestampMs: 0, clientTransactionVersion: 2,
    });
    const c = await start();
    expect(await c.endTransaction('t', 5, 32766, true, TV2)).to.deep.equal({ errorCode: 0, producerId: 1000, producerEpoch: 0 });
    // The markers still carry the old id, at the epoch after the last one handed out.
    expect(markers.written[0]).to.include({ producerId: 5, producerEpoch: 32767 });
    const prepare = store.writes.find((w) => w.value?.state === TransactionState.PrepareCommit)!.value!;
    expect(prepare).to.include({ producerId: 5, producerEpoch: 32767, nextProducerId: 1000 });
    expect(store.durable.get('t')).to.include({ producerId: 1000, producerEpoch: 0, previousProducerId: 5, nextProducerId: -1 });
    // The client did not hear back and retries with the old id and epoch.
    expect(await c.endTransaction('t', 5, 32766, true, TV2)).to.deep.equal({ errorCode: 0, producerId: 1000, producerEpoch: 0 });
    expect(await c.addPartitions('t', 1000, 0, [T1], TV2)).to.equal(ErrorCode.NONE);
  });

  it('finishes a commit prepared before a crash that moves to the next producer id', async () => {
    store.durable.set('t', {
      producerId: 5, previousProducerId: 5, nextProducerId: 1000, producerEpoch: 32767, transactionTimeoutMs: 60_000,
      state: TransactionState.PrepareCommit, partitions: [T0], lastUpdateTimestampMs: 0, startTimestampMs: 0, clientTransactionVersion: 2,
    });
    const c = await start();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(markers.written[0]).to.include({ producerId: 5, producerEpoch: 32767, transactionVersion: 2 });
    expect(store.durable.get('t')).to.include({ state: TransactionState.CompleteCommit, producerId: 1000, producerEpoch: 0, previousProducerId: 5 });
    expect(await c.endTransaction('t', 5, 32766, true, TV2)).to.deep.equal({ errorCode: 0, producerId: 1000, producerEpoch: 0 });
  });

  it('moves to a new producer id when a fence takes the last epoch, the abort staying at it', async () => {
    store.durable.set('t', {
      producerId: 5, previousProducerId: 5, nextProducerId: -1, producerEpoch: 32766, transactionTimeoutMs: 60_000,
      state: TransactionState.Ongoing, partitions: [T0], lastUpdateTimestampMs: 0, startTimestampMs: 0, clientTransactionVersion: 2,
    });
    const c = await start();
    expect((await c.initProducerId('t', 60_000, null)).errorCode).to.equal(ErrorCode.CONCURRENT_TRANSACTIONS);
    expect(markers.written[0]).to.include({ producerId: 5, producerEpoch: 32767, commit: false });
    expect(c.describe('t')).to.include({ state: 'CompleteAbort', producerId: 1000, producerEpoch: 0 });
    expect(await c.initProducerId('t', 60_000, null)).to.deep.equal({ errorCode: 0, producerId: 1000, producerEpoch: 1 });
  });

  it('finishes a transaction prepared before a crash with its bumped epoch and version', async () => {
    const c = await start();
    const { producerId } = await c.initProducerId('t', 60_000, null);
    await c.addPartitions('t', producerId, 0, [T0], TV2);
    markers.failOnce.add('out:0');
    await c.endTransaction('t', producerId, 0, true, TV2);
    await c.close();
    const restarted = await start();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(markers.written.map((m) => `${m.producerEpoch} v${m.transactionVersion}`)).to.deep.equal(['1 v2']);
    expect(restarted.describe('t')).to.include({ state: 'CompleteCommit', producerEpoch: 1 });
  });

  it('keeps version 1 rules for EndTxn v4 and before, whatever is finalized', async () => {
    const c = await start();
    const { producerId } = await c.initProducerId('t', 60_000, null);
    await c.addPartitions('t', producerId, 0, [T0]);
    expect(await c.endTransaction('t', producerId, 0, true, 0)).to.deep.equal({ errorCode: 0, producerId, producerEpoch: 0 });
    expect(markers.summary()).to.deep.equal(['out:0 commit 0']);
    expect(markers.written[0].transactionVersion).to.equal(0);
    expect(store.durable.get('t')).to.include({ producerEpoch: 0, clientTransactionVersion: 0 });
    expect((await c.endTransaction('t', producerId, 0, false, 0)).errorCode).to.equal(ErrorCode.INVALID_TXN_STATE);
  });

  it('fences a version 2 producer as Kafka does: the fence epoch, then the abort bumps once more', async () => {
    const c = await start();
    const { producerId } = await c.initProducerId('t', 60_000, null);
    await c.addPartitions('t', producerId, 0, [T0], TV2);
    expect((await c.initProducerId('t', 60_000, null)).errorCode).to.equal(ErrorCode.CONCURRENT_TRANSACTIONS);
    expect(markers.summary()).to.deep.equal(['out:0 abort 2']);
    expect(await c.initProducerId('t', 60_000, null)).to.deep.equal({ errorCode: 0, producerId, producerEpoch: 3 });
    expect((await c.endTransaction('t', producerId, 0, true, TV2)).errorCode).to.equal(ErrorCode.PRODUCER_FENCED);
  });

  it('after a downgrade to version 1, a version 2 transaction still ends as it started; the coordinator\'s aborts follow the new level', async () => {
    const c = await start();
    const a = await c.initProducerId('a', 60_000, null);
    const b = await c.initProducerId('b', 10, null);
    await c.addPartitions('a', a.producerId, 0, [T0], TV2);
    await c.addPartitions('b', b.producerId, 0, [T1], TV2);
    finalized = 1;
    // The client keeps its EndTxn v5 (it learns the level from ApiVersions later): its rules still apply.
    expect(await c.endTransaction('a', a.producerId, 0, true, TV2)).to.deep.equal({ errorCode: 0, producerId: a.producerId, producerEpoch: 1 });
    // A timeout abort at level 1 fences with one bump and writes the version it ended under.
    await new Promise((resolve) => setTimeout(resolve, 20));
    c.abortTimedOutTransactions();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(markers.summary()).to.deep.equal(['out:0 commit 1', 'out:1 abort 1']);
    expect(c.describe('b')).to.include({ state: 'CompleteAbort', producerEpoch: 1 });
  });
});
