import { expect } from 'chai';
import * as fs from 'fs';
import { StorageError, UnexpectedAppendOffsetError } from '../../src/storage/errors';
import { PartitionLog } from '../../src/storage/partition-log';
import { ProducerStateManager } from '../../src/storage/producer-state';
import { batchBaseOffsets, makeBatch, silentLogger, tempDirs, topicConfig } from './helpers';
import { fetchFrom, leaderAppend, leaderAppendMarker, logBytes } from './replication-helpers';

describe('storage/follower append and truncation', () => {
  const dirs = tempDirs('fjord-follower-');
  const open: PartitionLog[] = [];

  async function openLog(overrides: Record<string, string> = {}, dir = dirs.next()): Promise<PartitionLog> {
    const log = await PartitionLog.open({ dir, topic: 't', partition: 0, config: topicConfig(overrides), logger: silentLogger });
    await log.loadProducerState();
    open.push(log);
    return log;
  }

  afterEach(async () => {
    for (const log of open.splice(0)) await log.close();
  });

  function expectRefused(append: () => unknown, name: string, type: new (...args: never[]) => Error = StorageError): void {
    try {
      append();
    } catch (e) {
      expect(e).to.be.instanceOf(type);
      expect((e as StorageError).errorName).to.equal(name);
      return;
    }
    expect.fail(`expected ${name}`);
  }

  describe('appendAsFollower', () => {
    it('stores the leader\'s batches byte for byte, offsets, timestamps and leader epochs as they are', async () => {
      const leader = await openLog({ 'segment.bytes': '150' });
      const follower = await openLog({ 'segment.bytes': '150' });
      leaderAppend(leader, { records: 3, epoch: 0 });
      leaderAppend(leader, { records: 2, epoch: 0 });
      await leaderAppend(leader, { records: 4, epoch: 3 }).done;
      const bytes = await logBytes(leader);
      const copy = Buffer.from(bytes);

      // A follower append goes to one segment, as in Kafka: more than segment.bytes is refused.
      expectRefused(() => follower.appendAsFollower(bytes), 'RECORD_LIST_TOO_LARGE');
      const first = await logBytes(leader, 0, 1);
      const appended = follower.appendAsFollower(first);
      expect([appended.baseOffset, appended.lastOffset, follower.logEndOffset]).to.deep.equal([0, 2, 3]);
      await appended.done;
      await fetchFrom(leader, follower, 1);
      expect(follower.logEndOffset).to.equal(9);
      expect(await logBytes(follower)).to.deep.equal(copy);
      expect(follower.leaderEpochEntries()).to.deep.equal([{ epoch: 0, startOffset: 0 }, { epoch: 3, startOffset: 5 }]);
      expect(leader.segmentInfo().length).to.be.greaterThan(1);
      expect(follower.segmentInfo().map((s) => s.baseOffset)).to.deep.equal(leader.segmentInfo().map((s) => s.baseOffset));
    });

    it('accepts a gap between batches, as a compacted leader log has', async () => {
      const follower = await openLog();
      const bytes = Buffer.concat([makeBatch({ baseOffset: 0, records: 2 }), makeBatch({ baseOffset: 7, records: 1 })]);
      await follower.appendAsFollower(bytes).done;
      expect(follower.logEndOffset).to.equal(8);
      expect(batchBaseOffsets(await logBytes(follower))).to.deep.equal([0, 7]);
    });

    it('refuses offsets below the log end, out-of-order offsets and bad CRCs, and changes nothing then', async () => {
      const follower = await openLog();
      await follower.appendAsFollower(makeBatch({ baseOffset: 0, records: 5, epoch: 1 })).done;

      expectRefused(() => follower.appendAsFollower(makeBatch({ baseOffset: 4, records: 2, epoch: 2 })), 'UNKNOWN_SERVER_ERROR', UnexpectedAppendOffsetError);
      const outOfOrder = Buffer.concat([makeBatch({ baseOffset: 8, records: 2, epoch: 2 }), makeBatch({ baseOffset: 6, epoch: 2 })]);
      expectRefused(() => follower.appendAsFollower(outOfOrder), 'UNKNOWN_SERVER_ERROR');
      const corrupt = makeBatch({ baseOffset: 5, records: 2, epoch: 2 });
      corrupt[corrupt.length - 1] ^= 0xff;
      expectRefused(() => follower.appendAsFollower(corrupt), 'CORRUPT_MESSAGE');
      expectRefused(() => follower.appendAsFollower(makeBatch({ baseOffset: 5 }).subarray(0, 70)), 'CORRUPT_MESSAGE');

      expect(follower.logEndOffset).to.equal(5);
      expect(follower.leaderEpochEntries()).to.deep.equal([{ epoch: 1, startOffset: 0 }]);
      await follower.appendAsFollower(makeBatch({ baseOffset: 5, epoch: 2 })).done;
      expect(follower.logEndOffset).to.equal(6);
    });

    it('rebuilds the leader\'s producer state: duplicates, open and aborted transactions, the last stable offset', async () => {
      const leader = await openLog();
      const follower = await openLog();
      leaderAppend(leader, { records: 2, epoch: 0, producerId: 7, sequence: 0 });
      leaderAppend(leader, { records: 3, epoch: 0, producerId: 8, sequence: 0, isTransactional: true }); // 2..4
      leaderAppendMarker(leader, 8, false, 0); // 5: ABORT
      leaderAppend(leader, { records: 1, epoch: 0, producerId: 9, sequence: 0, isTransactional: true }); // 6, left open
      await leaderAppend(leader, { records: 2, epoch: 0, producerId: 7, sequence: 2 }).done; // 7..8
      await fetchFrom(leader, follower);

      for (const pid of [7, 8, 9]) expect(follower.producerState.lastEntry(pid)).to.deep.equal(leader.producerState.lastEntry(pid));
      expect(follower.lastStableOffset).to.equal(6).and.equal(leader.lastStableOffset);
      expect(follower.abortedTransactions(0, 9)).to.deep.equal(leader.abortedTransactions(0, 9));
      expect(follower.abortedTransactions(0, 9)).to.have.length(1);
      // A retry of producer 7's last batch is a duplicate on the follower too, were it to lead.
      expect(follower.producerState.checkBatch({ producerId: 7, producerEpoch: 0, baseSequence: 2, lastSequence: 3, isTransactional: false }))
        .to.deep.equal({ kind: 'duplicate', firstOffset: 7, lastOffset: 8, timestamp: 1_000 });
    });
  });

  describe('truncateTo', () => {
    it('rebuilds the producer state to the new end and drops the snapshots past it', async () => {
      const log = await openLog();
      leaderAppend(log, { records: 2, epoch: 0, producerId: 7, sequence: 0 }); // 0..1
      leaderAppend(log, { records: 2, epoch: 0, producerId: 8, sequence: 0, isTransactional: true }); // 2..3
      await leaderAppendMarker(log, 8, true, 1).done; // 4: COMMIT
      await leaderAppend(log, { records: 2, epoch: 1, producerId: 7, sequence: 2 }).done; // 5..6
      await log.producerState.writeSnapshot(log.dir, log.logEndOffset);
      expect(log.lastStableOffset).to.equal(7);

      await log.truncateTo(4);
      expect([log.logEndOffset, log.highWatermark]).to.deep.equal([4, 4]);
      expect(log.leaderEpochEntries()).to.deep.equal([{ epoch: 0, startOffset: 0 }]);
      expect(log.lastStableOffset).to.equal(2); // producer 8's transaction is open again
      expect(log.producerState.lastEntry(7)?.batches.map((b) => b.lastSeq)).to.deep.equal([1]);
      expect(fs.readdirSync(log.dir).filter((f) => f.endsWith('.snapshot'))).to.deep.equal([]);
      // Producer 7's truncated batch is no duplicate any more: its retry is appended again.
      expect(log.producerState.checkBatch({ producerId: 7, producerEpoch: 0, baseSequence: 2, lastSequence: 3, isTransactional: false })).to.deep.equal({ kind: 'ok' });

      await log.truncateTo(0);
      expect(log.producerState.activeProducers().size).to.equal(0);
      expect(ProducerStateManager.loadLatest(log.dir, 0)).to.equal(null);
    });
  });
});
