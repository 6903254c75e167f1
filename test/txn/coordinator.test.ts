// The transaction coordinator's state machine over an in-memory __transaction_state whose writes can
// be held back or fail, and a marker writer that records (and can refuse) markers. A "crash" is a new
// coordinator loaded from what the store holds, the old one abandoned mid-flight.
import { expect } from 'chai';
import { ErrorCode } from '../../src/common/errors';
import { TransactionCoordinator } from '../../src/txn/coordinator';
import { TransactionState } from '../../src/txn/transaction-metadata';
import { CONFIG, FakeMarkers, FakeStore } from './coordinator-fakes';

const T0 = { topic: 'out', partition: 0 };
const T1 = { topic: 'out', partition: 1 };

// Transaction version 1 throughout: the cluster finalizes it at 1 (the coordinator's own aborts keep the
// epoch they fence with) and clients use EndTxn v4 and before (version 0); coordinator-tv2.test.ts has version 2.
const TV1_CONFIG = { ...CONFIG, transactionVersion: () => 1 };

describe('txn/coordinator', () => {
  let store: FakeStore;
  let markers: FakeMarkers;
  let nextProducerId: number;
  let now: number;
  let coordinators: TransactionCoordinator[];

  async function start(): Promise<TransactionCoordinator> {
    const c = new TransactionCoordinator(TV1_CONFIG, markers, { nextId: async () => nextProducerId++ }, store, undefined, () => now);
    coordinators.push(c);
    for (let p = 0; p < store.numPartitions; p++) c.onElection(p, 7);
    await c.loadsSettled();
    return c;
  }

  /** Lets completions that retry after their backoff run. */
  const settle = (ms = 250) => new Promise((resolve) => setTimeout(resolve, ms));

  beforeEach(() => {
    store = new FakeStore();
    markers = new FakeMarkers();
    nextProducerId = 1000;
    now = 1_000_000;
    coordinators = [];
  });
  afterEach(async () => {
    for (const c of coordinators) await c.close();
  });

  it('gives a new transactional id a producer id at epoch 0, and bumps the epoch on every InitProducerId', async () => {
    const c = await start();
    expect(await c.initProducerId('t', 60_000, null)).to.deep.equal({ errorCode: 0, producerId: 1000, producerEpoch: 0 });
    expect(await c.initProducerId('t', 60_000, null)).to.deep.equal({ errorCode: 0, producerId: 1000, producerEpoch: 1 });
    expect(store.durable.get('t')).to.include({ producerId: 1000, producerEpoch: 1, state: TransactionState.Empty, transactionTimeoutMs: 60_000 });
  });

  it('refuses an empty id and a timeout above transaction.max.timeout.ms', async () => {
    const c = await start();
    expect((await c.initProducerId('', 60_000, null)).errorCode).to.equal(ErrorCode.INVALID_REQUEST);
    expect((await c.initProducerId('t', 900_001, null)).errorCode).to.equal(ErrorCode.INVALID_TRANSACTION_TIMEOUT);
    expect((await c.initProducerId('t', 0, null)).errorCode).to.equal(ErrorCode.INVALID_TRANSACTION_TIMEOUT);
    expect(store.writes).to.have.length(0);
  });

  it('answers NOT_COORDINATOR before it is elected', async () => {
    const c = new TransactionCoordinator(CONFIG, markers, { nextId: async () => 1 }, store);
    expect((await c.initProducerId('t', 60_000, null)).errorCode).to.equal(ErrorCode.NOT_COORDINATOR);
    expect((await c.endTransaction('t', 1, 0, true, 0)).errorCode).to.equal(ErrorCode.NOT_COORDINATOR);
  });

  it('commits: PrepareCommit, a marker in every partition, CompleteCommit; a retried commit is NONE', async () => {
    const c = await start();
    const { producerId } = await c.initProducerId('t', 60_000, null);
    expect(await c.addPartitions('t', producerId, 0, [T0])).to.equal(ErrorCode.NONE);
    expect(await c.addPartitions('t', producerId, 0, [T0, T1])).to.equal(ErrorCode.NONE);
    expect(c.describe('t')).to.include({ state: 'Ongoing', startTimeMs: now });
    expect(c.describe('t').partitions).to.deep.equal([T0, T1]);

    expect((await c.endTransaction('t', producerId, 0, true, 0)).errorCode).to.equal(ErrorCode.NONE);
    expect(markers.summary()).to.deep.equal(['out:0 commit 0', 'out:1 commit 0']);
    expect(markers.written[0].coordinatorEpoch).to.equal(7);
    expect(store.states('t')).to.deep.equal([TransactionState.Empty, TransactionState.Ongoing, TransactionState.Ongoing,
      TransactionState.PrepareCommit, TransactionState.CompleteCommit]);
    expect(store.durable.get('t')!.partitions).to.deep.equal([]);
    expect(c.describe('t').state).to.equal('CompleteCommit');

    expect((await c.endTransaction('t', producerId, 0, true, 0)).errorCode).to.equal(ErrorCode.NONE);
    expect((await c.endTransaction('t', producerId, 0, false, 0)).errorCode).to.equal(ErrorCode.INVALID_TXN_STATE);
    expect(markers.written).to.have.length(1);
  });

  it('adding partitions already in an Ongoing transaction writes nothing', async () => {
    const c = await start();
    const { producerId } = await c.initProducerId('t', 60_000, null);
    await c.addPartitions('t', producerId, 0, [T0, T1]);
    const writes = store.writes.length;
    expect(await c.addPartitions('t', producerId, 0, [T1])).to.equal(ErrorCode.NONE);
    expect(store.writes.length).to.equal(writes);
  });

  it('refuses what Kafka refuses: unknown ids, other producers, old epochs, ending nothing', async () => {
    const c = await start();
    const { producerId } = await c.initProducerId('t', 60_000, null);
    expect(await c.addPartitions('nope', producerId, 0, [T0])).to.equal(ErrorCode.INVALID_PRODUCER_ID_MAPPING);
    expect(await c.addPartitions('t', producerId + 1, 0, [T0])).to.equal(ErrorCode.INVALID_PRODUCER_ID_MAPPING);
    expect(await c.addPartitions('t', producerId, 1, [T0])).to.equal(ErrorCode.PRODUCER_FENCED);
    expect((await c.endTransaction('t', producerId, 0, true, 0)).errorCode).to.equal(ErrorCode.INVALID_TXN_STATE);
    expect((await c.endTransaction('t', producerId, 0, false, 0)).errorCode).to.equal(ErrorCode.INVALID_TXN_STATE);
  });

  it('answers CONCURRENT_TRANSACTIONS while a write for the id is in flight, and keeps the old state if it fails', async () => {
    const c = await start();
    const { producerId } = await c.initProducerId('t', 60_000, null);
    store.hold = true;
    store.failWith = ErrorCode.NOT_COORDINATOR;
    const adding = c.addPartitions('t', producerId, 0, [T0]);
    expect(await c.addPartitions('t', producerId, 0, [T1])).to.equal(ErrorCode.CONCURRENT_TRANSACTIONS);
    expect((await c.initProducerId('t', 60_000, null)).errorCode).to.equal(ErrorCode.CONCURRENT_TRANSACTIONS);
    store.release();
    expect(await adding).to.equal(ErrorCode.NOT_COORDINATOR);
    expect(c.describe('t').state).to.equal('Empty');
    store.failWith = 0;
    expect(await c.addPartitions('t', producerId, 0, [T1])).to.equal(ErrorCode.NONE);
  });

  it('verifies partitions against what is written, also while another AddPartitionsToTxn is being written', async () => {
    const c = await start();
    const { producerId } = await c.initProducerId('t', 60_000, null);
    await c.addPartitions('t', producerId, 0, [T0]);
    store.hold = true;
    const adding = c.addPartitions('t', producerId, 0, [T1]);
    expect(c.verifyPartitions('t', producerId, 0, [T0, T1], ErrorCode.INVALID_TXN_STATE)).to.deep.equal([ErrorCode.NONE, ErrorCode.INVALID_TXN_STATE]);
    expect(c.verifyTransactionalWrite('t', producerId, 0, T0.topic, T0.partition, true)).to.equal(ErrorCode.NONE);
    expect(c.verifyTransactionalWrite('t', producerId, 1, T0.topic, T0.partition, true)).to.equal(ErrorCode.INVALID_PRODUCER_EPOCH);
    store.release();
    expect(await adding).to.equal(ErrorCode.NONE);
    expect(c.verifyPartitions('t', producerId, 0, [T0, T1], ErrorCode.INVALID_TXN_STATE)).to.deep.equal([ErrorCode.NONE, ErrorCode.NONE]);
  });

  it('fences a zombie: InitProducerId during its transaction aborts it with a new epoch, then hands out the next one', async () => {
    const c = await start();
    const { producerId } = await c.initProducerId('t', 60_000, null);
    await c.addPartitions('t', producerId, 0, [T0]);

    expect((await c.initProducerId('t', 60_000, null)).errorCode).to.equal(ErrorCode.CONCURRENT_TRANSACTIONS);
    expect(markers.summary()).to.deep.equal(['out:0 abort 1']);
    expect(c.describe('t')).to.include({ state: 'CompleteAbort', producerEpoch: 1 });

    expect(await c.initProducerId('t', 60_000, null)).to.deep.equal({ errorCode: 0, producerId, producerEpoch: 2 });
    // The zombie, still at epoch 0:
    expect(await c.addPartitions('t', producerId, 0, [T0])).to.equal(ErrorCode.PRODUCER_FENCED);
    expect((await c.endTransaction('t', producerId, 0, true, 0)).errorCode).to.equal(ErrorCode.PRODUCER_FENCED);
  });

  it('follows KIP-360: the expected epoch is bumped once, a retry gets the same epoch, anything else is fenced', async () => {
    const c = await start();
    const { producerId } = await c.initProducerId('t', 60_000, null);
    expect(await c.initProducerId('t', 60_000, { producerId, producerEpoch: 0 })).to.include({ errorCode: 0, producerEpoch: 1 });
    expect(await c.initProducerId('t', 60_000, { producerId, producerEpoch: 0 })).to.include({ errorCode: 0, producerEpoch: 1 });
    expect((await c.initProducerId('t', 60_000, { producerId: producerId + 5, producerEpoch: 1 })).errorCode).to.equal(ErrorCode.PRODUCER_FENCED);
    expect((await c.initProducerId('t', 60_000, { producerId, producerEpoch: 9 })).errorCode).to.equal(ErrorCode.PRODUCER_FENCED);
  });

  it('rotates to a new producer id when the epoch is exhausted', async () => {
    store.durable.set('t', {
      producerId: 5, previousProducerId: 5, nextProducerId: -1, producerEpoch: 32766, transactionTimeoutMs: 60_000,
      state: TransactionState.CompleteCommit, partitions: [], lastUpdateTimestampMs: now, startTimestampMs: now, clientTransactionVersion: 0,
    });
    const c = await start();
    expect(await c.initProducerId('t', 60_000, null)).to.deep.equal({ errorCode: 0, producerId: 1000, producerEpoch: 0 });
  });

  it('aborts a transaction past its timeout, bumping the epoch so its producer is fenced', async () => {
    const c = await start();
    const { producerId } = await c.initProducerId('t', 10_000, null);
    await c.addPartitions('t', producerId, 0, [T0, T1]);
    now += 10_000;
    c.abortTimedOutTransactions();
    await settle(10);
    expect(markers.written).to.have.length(0);
    now += 1;
    c.abortTimedOutTransactions();
    await settle(10);
    expect(markers.summary()).to.deep.equal(['out:0 abort 1', 'out:1 abort 1']);
    expect(c.describe('t')).to.include({ state: 'CompleteAbort', producerEpoch: 1 });
    expect((await c.endTransaction('t', producerId, 0, true, 0)).errorCode).to.equal(ErrorCode.PRODUCER_FENCED);
  });

  it('retries a marker that failed, and completes once every partition has one', async () => {
    const c = await start();
    const { producerId } = await c.initProducerId('t', 60_000, null);
    await c.addPartitions('t', producerId, 0, [T0, T1]);
    markers.failOnce.add('out:1');
    expect((await c.endTransaction('t', producerId, 0, false, 0)).errorCode).to.equal(ErrorCode.NONE);
    expect(c.describe('t').state).to.equal('PrepareAbort');
    expect(await c.addPartitions('t', producerId, 0, [T0])).to.equal(ErrorCode.CONCURRENT_TRANSACTIONS);
    await settle();
    expect(markers.summary()).to.deep.equal(['out:0 abort 0', 'out:1 abort 0']);
    expect(c.describe('t').state).to.equal('CompleteAbort');
  });

  describe('a crash at each step of EndTxn', () => {
    async function ongoing(): Promise<{ c: TransactionCoordinator; producerId: number }> {
      const c = await start();
      const { producerId } = await c.initProducerId('t', 60_000, null);
      await c.addPartitions('t', producerId, 0, [T0, T1]);
      return { c, producerId };
    }

    it('before PrepareCommit is durable: the transaction is still Ongoing after the restart', async () => {
      const { c, producerId } = await ongoing();
      store.failWith = ErrorCode.NOT_COORDINATOR; // the write never made it
      expect((await c.endTransaction('t', producerId, 0, true, 0)).errorCode).to.equal(ErrorCode.NOT_COORDINATOR);
      store.failWith = 0;
      const restarted = await start();
      expect(restarted.describe('t')).to.include({ state: 'Ongoing', producerEpoch: 0 });
      expect(markers.written).to.have.length(0);
      expect((await restarted.endTransaction('t', producerId, 0, true, 0)).errorCode).to.equal(ErrorCode.NONE);
      expect(markers.summary()).to.deep.equal(['out:0 commit 0', 'out:1 commit 0']);
    });

    it('after PrepareCommit, before any marker: the restarted coordinator writes the markers and CompleteCommit', async () => {
      const { c, producerId } = await ongoing();
      markers.failOnce.add('out:0').add('out:1');
      await c.endTransaction('t', producerId, 0, true, 0);
      await c.close(); // the crash: nothing more from this one
      expect(store.durable.get('t')!.state).to.equal(TransactionState.PrepareCommit);
      expect(markers.written).to.have.length(0);

      const restarted = await start();
      await settle(10);
      expect(markers.summary()).to.deep.equal(['out:0 commit 0', 'out:1 commit 0']);
      expect(store.durable.get('t')).to.include({ state: TransactionState.CompleteCommit });
      expect(restarted.describe('t').state).to.equal('CompleteCommit');
    });

    it('after some markers: the restarted coordinator writes all of them again (markers are idempotent) and completes', async () => {
      const { c, producerId } = await ongoing();
      markers.failOnce.add('out:1');
      await c.endTransaction('t', producerId, 0, false, 0);
      await c.close();
      expect(markers.summary()).to.deep.equal(['out:0 abort 0']);

      const restarted = await start();
      await settle(10);
      expect(markers.summary()).to.deep.equal(['out:0 abort 0', 'out:0 abort 0', 'out:1 abort 0']);
      expect(restarted.describe('t').state).to.equal('CompleteAbort');
    });

    it('after the markers, before CompleteCommit is durable: markers again, then CompleteCommit', async () => {
      const { c, producerId } = await ongoing();
      store.hold = true;
      const ending = c.endTransaction('t', producerId, 0, true, 0); // PrepareCommit is written, and will go through
      store.failWith = ErrorCode.NOT_COORDINATOR; // the writes after it, CompleteCommit, do not
      store.release();
      await ending;
      await c.close();
      expect(store.durable.get('t')!.state).to.equal(TransactionState.PrepareCommit);
      store.failWith = 0;

      const restarted = await start();
      await settle(10);
      expect(markers.summary()).to.deep.equal(['out:0 commit 0', 'out:1 commit 0', 'out:0 commit 0', 'out:1 commit 0']);
      expect(restarted.describe('t').state).to.equal('CompleteCommit');
    });

    it('after CompleteCommit: nothing left to do', async () => {
      const { c, producerId } = await ongoing();
      await c.endTransaction('t', producerId, 0, true, 0);
      await c.close();
      const restarted = await start();
      await settle(10);
      expect(markers.written).to.have.length(1);
      expect(restarted.describe('t').state).to.equal('CompleteCommit');
      expect(await restarted.initProducerId('t', 60_000, null)).to.include({ errorCode: 0, producerEpoch: 1 });
    });
  });

  it('removes ids idle for transactional.id.expiration.ms, but not one in a transaction', async () => {
    const c = await start();
    await c.initProducerId('idle', 60_000, null);
    const { producerId } = await c.initProducerId('busy', 60_000, null);
    await c.addPartitions('busy', producerId, 0, [T0]);
    now += CONFIG.transactionalIdExpirationMs;
    c.removeExpiredTransactionalIds();
    await settle(1);
    expect(store.writes.at(-1)).to.deep.equal({ id: 'idle', value: null });
    expect(c.describe('idle').errorCode).to.equal(ErrorCode.TRANSACTIONAL_ID_NOT_FOUND);
    expect(c.describe('busy').state).to.equal('Ongoing');
    expect(store.durable.has('idle')).to.equal(false);
  });

  it('lists by state, producer id and duration, and names unknown state filters', async () => {
    const c = await start();
    const a = await c.initProducerId('a', 60_000, null);
    await c.initProducerId('b', 60_000, null);
    await c.addPartitions('a', a.producerId, 0, [T0]);
    now += 5000;
    const ids = (l: ReturnType<TransactionCoordinator['list']>) => l.transactions.map((t) => t.transactionalId).sort();
    expect(ids(c.list([], [], -1))).to.deep.equal(['a', 'b']);
    expect(c.list(['Ongoing'], [], -1).transactions).to.deep.equal([{ transactionalId: 'a', producerId: a.producerId, state: 'Ongoing' }]);
    expect(ids(c.list([], [a.producerId + 1], -1))).to.deep.equal(['b']);
    expect(ids(c.list(['Ongoing'], [], 4000))).to.deep.equal(['a']);
    expect(ids(c.list(['Ongoing'], [], 6000))).to.deep.equal([]);
    expect(c.list(['Ongoing', 'Bogus'], [], -1).unknownStateFilters).to.deep.equal(['Bogus']);
  });
});
