import { expect } from 'chai';
import * as fs from 'fs';
import * as path from 'path';
import { ErrorCode } from '../../src/common/errors';
import { buildBatchSync, buildEndTxnMarker } from '../../src/records/records';
import { CLEAN_SHUTDOWN_FILE, LogManager } from '../../src/storage/log-manager';
import type { PartitionLog } from '../../src/storage/partition-log';
import type { ProducerStateManager, TxnMarker } from '../../src/storage/producer-state';
import { segmentFiles, silentLogger, tempDirs, topicConfig } from './helpers';

/** Appends to a log with its producer state the way the ReplicaManager does, so the LSO can be read in between. */
class TxnPartition {
  private readonly sequences = new Map<number, number>();
  constructor(readonly log: PartitionLog) {}

  get producers(): ProducerStateManager {
    return this.log.producerState;
  }

  get lso(): number {
    return this.log.lastStableOffset;
  }

  /** A batch of `records` records from producer `pid`, transactional unless said otherwise; resolves with its base offset. */
  async data(pid: number, records: number, isTransactional = true): Promise<number> {
    const baseSequence = this.sequences.get(pid) ?? 0;
    this.sequences.set(pid, baseSequence + records);
    const b = { producerId: pid, producerEpoch: 0, baseSequence, lastSequence: baseSequence + records - 1, isTransactional };
    expect(this.producers.checkBatch(b)).to.deep.equal({ kind: 'ok' });
    const bytes = buildBatchSync({ ...b, records: Array.from({ length: records }, (_, i) => ({ value: `${pid}-${i}` })) });
    const appended = this.log.append(bytes);
    this.producers.recordBatch(b, appended.baseOffset, appended.lastOffset, 1_000);
    await appended.done;
    return appended.baseOffset;
  }

  /** Appends a marker without waiting for its write; `written` settles once the LSO may move. */
  marker(pid: number, commit: boolean, coordinatorEpoch = 0, producerEpoch = 0): { offset: number; written: Promise<void> } {
    const marker: TxnMarker = { producerId: pid, producerEpoch, coordinatorEpoch, commit };
    const offset = this.log.logEndOffset;
    const check = this.producers.checkMarker(marker, offset);
    if (check.kind !== 'ok') throw new Error(check.errorMessage);
    const appended = this.log.append(buildEndTxnMarker({ ...marker, baseOffset: offset }), check.completed?.isAborted ? check.completed : undefined);
    this.producers.recordMarker(marker, check.completed, 1_000);
    return { offset, written: appended.done.then(() => this.producers.onHighWatermarkUpdated(this.log.highWatermark)) };
  }
}

describe('storage/transactions', () => {
  const dirs = tempDirs('fjord-txn-');
  let managers: LogManager[] = [];
  afterEach(async () => {
    for (const m of managers) await m.close();
    managers = [];
  });

  async function openPartition(dataDir: string): Promise<TxnPartition> {
    const m = await LogManager.open({ dataDir, defaults: topicConfig(), log: silentLogger });
    managers.push(m);
    const log = await m.getOrCreate('t', 0);
    await log.loadProducerState();
    return new TxnPartition(log);
  }

  async function closeCleanly(p: TxnPartition): Promise<void> {
    await p.producers.writeSnapshot(p.log.dir, p.log.logEndOffset);
    const m = managers.pop()!;
    await m.close();
  }

  it('the log holds its producer state from loadProducerState() on, and a reload replays the log', async () => {
    const m = await LogManager.open({ dataDir: dirs.next(), defaults: topicConfig(), log: silentLogger });
    managers.push(m);
    const log = await m.getOrCreate('t', 0);
    expect(() => log.producerState).to.throw(/not loaded/);
    expect(() => log.lastStableOffset).to.throw(/not loaded/);
    const p = new TxnPartition(log);
    await log.loadProducerState();
    await p.data(1, 2);
    expect(p.lso).to.equal(0);
    const before = log.producerState;
    await log.loadProducerState();
    expect(log.producerState).to.not.equal(before);
    expect([log.producerState.lastEntry(1)?.currentTxnFirstOffset, log.lastStableOffset]).to.deep.equal([0, 0]);
  });

  it('the LSO is the first offset of the oldest open transaction, with several producers interleaved', async () => {
    const p = await openPartition(dirs.next());
    await p.data(9, 2, false); // plain idempotent data is stable at once
    expect(p.lso).to.equal(2);
    const a = await p.data(1, 2); // producer 1 opens at 2
    await p.data(2, 3); // producer 2 opens at 4
    await p.data(1, 1);
    expect([a, p.lso, p.log.highWatermark]).to.deep.equal([2, 2, 8]);

    // Producer 2 commits first: the LSO stays behind producer 1's open transaction.
    await p.marker(2, true).written;
    expect(p.lso).to.equal(2);
    // Producer 1 aborts: nothing is open; the LSO is the high watermark (past the marker).
    const abort = p.marker(1, false);
    expect(p.lso, 'unstable until the marker is written').to.equal(2);
    await abort.written;
    expect(p.lso).to.equal(p.log.highWatermark);
    expect(p.lso).to.equal(10);
    // The abort's LSO was the end of the log: no other transaction was open.
    expect(p.log.abortedTransactions(0, 10)).to.deep.equal([{ producerId: 1, firstOffset: 2, lastOffset: 9, lastStableOffset: 10 }]);

    // A new transaction of producer 3, and producer 2 opening again behind it.
    const c = await p.data(3, 1);
    await p.data(2, 1);
    expect(p.lso).to.equal(c);
    await p.marker(2, false).written;
    // Producer 2's abort was written while 3 was open: its entry records LSO = 3's first offset.
    expect(p.log.abortedTransactions(11, 20).map((t) => [t.producerId, t.firstOffset, t.lastStableOffset])).to.deep.equal([[2, 11, c]]);
    expect(p.lso).to.equal(c);
    await p.marker(3, true).written;
    expect(p.lso).to.equal(14);
  });

  it('checks markers: an older producer epoch or coordinator epoch is refused; a marker without a transaction ends none', async () => {
    const p = await openPartition(dirs.next());
    const marker = (producerEpoch: number, coordinatorEpoch: number, commit = true): TxnMarker =>
      ({ producerId: 1, producerEpoch, coordinatorEpoch, commit });
    await p.data(1, 1);
    await p.marker(1, true, 5).written;
    expect(p.producers.checkMarker(marker(0, 4), 2)).to.include({ errorCode: ErrorCode.TRANSACTION_COORDINATOR_FENCED });
    expect(p.producers.checkMarker(marker(0, 5), 2)).to.deep.equal({ kind: 'ok', completed: null });
    await p.data(1, 1); // opens at 2
    expect(p.producers.checkMarker(marker(0, 5, false), 3))
      .to.deep.equal({ kind: 'ok', completed: { producerId: 1, firstOffset: 2, lastOffset: 3, isAborted: true, lastStableOffset: 4 } });
    // The coordinator fences the producer: an abort at a bumped epoch.
    await p.marker(1, false, 6, 3).written;
    expect(p.producers.checkMarker(marker(2, 6), 4)).to.include({ errorCode: ErrorCode.INVALID_PRODUCER_EPOCH });
    expect(p.producers.lastEntry(1)).to.include({ producerEpoch: 3, coordinatorEpoch: 6, currentTxnFirstOffset: null });
    expect(p.log.abortedTransactions(0, 10)).to.deep.equal([{ producerId: 1, firstOffset: 2, lastOffset: 3, lastStableOffset: 4 }]);
  });

  it('after a crash: an open and an aborted transaction, the coordinator epoch and the .txnindex come back from the log', async () => {
    const dataDir = dirs.next();
    const p = await openPartition(dataDir);
    await p.data(1, 2); // aborted below
    await p.data(2, 2); // left open
    await p.marker(1, false, 7).written;
    await p.data(3, 1, false);
    expect(p.lso).to.equal(2);
    const hw = p.log.highWatermark;
    // kill -9: no snapshot, no clean-shutdown marker, and the .txnindex never reached the file.
    await managers.pop()!.close();
    fs.rmSync(path.join(dataDir, CLEAN_SHUTDOWN_FILE));
    const dir = path.join(dataDir, 't-0');
    for (const f of segmentFiles(dir, '.snapshot')) fs.rmSync(path.join(dir, f));
    for (const f of segmentFiles(dir, '.txnindex')) fs.rmSync(path.join(dir, f));

    const after = await openPartition(dataDir);
    expect(after.log.highWatermark).to.equal(hw);
    expect(after.lso).to.equal(2);
    expect(after.producers.lastEntry(1)).to.include({ coordinatorEpoch: 7, currentTxnFirstOffset: null });
    expect(after.producers.lastEntry(2)).to.include({ currentTxnFirstOffset: 2 });
    expect(after.log.abortedTransactions(0, hw)).to.deep.equal([{ producerId: 1, firstOffset: 0, lastOffset: 4, lastStableOffset: 2 }]);
    // A marker from the old coordinator epoch is fenced after the restart too.
    expect(after.producers.checkMarker({ producerId: 1, producerEpoch: 0, coordinatorEpoch: 6, commit: true }, hw)).to.include({ errorCode: 52 });
    await after.marker(2, true).written;
    expect(after.lso).to.equal(hw + 1);
  });

  it('after a clean restart: a transaction open before the snapshot offset is still open, and later ones are replayed', async () => {
    const dataDir = dirs.next();
    const p = await openPartition(dataDir);
    await p.data(1, 3);
    await closeCleanly(p); // snapshot at 3 with producer 1's transaction open from 0

    const second = await openPartition(dataDir);
    expect(second.lso).to.equal(0);
    await second.data(2, 1); // opens at 3, after the snapshot
    // Crash: the snapshot at 3 stays; 3.. is replayed.
    await managers.pop()!.close();
    fs.rmSync(path.join(dataDir, CLEAN_SHUTDOWN_FILE));

    const third = await openPartition(dataDir);
    expect(third.lso).to.equal(0);
    await third.marker(1, true).written;
    expect(third.lso, 'producer 2 is still open').to.equal(3);
    await third.marker(2, false).written;
    expect(third.lso).to.equal(third.log.highWatermark);
  });
});
