import { expect } from 'chai';
import * as fs from 'fs';
import * as path from 'path';
import { PartitionLog } from '../../src/storage/partition-log';
import { TXN_INDEX_ENTRY_SIZE, TransactionIndex, type AbortedTxn } from '../../src/storage/transaction-index';
import { makeBatch, segmentFiles, silentLogger, tempDirs, topicConfig } from './helpers';

const txn = (producerId: number, firstOffset: number, lastOffset: number, lastStableOffset = lastOffset + 1): AbortedTxn =>
  ({ producerId, firstOffset, lastOffset, lastStableOffset });

function indexOf(...txns: AbortedTxn[]): TransactionIndex {
  const index = new TransactionIndex();
  for (const t of txns) index.append(t);
  return index;
}

describe('storage/transaction-index', () => {
  it("encodes Kafka's 34-byte entries: version 0, producer id, first, last and last stable offset", () => {
    const bytes = indexOf(txn(7, 3, 9, 5), txn(2 ** 40, 2 ** 33, 2 ** 33 + 4)).encode();
    expect(bytes.length).to.equal(2 * TXN_INDEX_ENTRY_SIZE);
    expect(bytes.subarray(0, 34).toString('hex')).to.equal(
      '0000' + '0000000000000007' + '0000000000000003' + '0000000000000009' + '0000000000000005');
    const { index, problem } = TransactionIndex.decode(bytes);
    expect(problem).to.equal(null);
    const all: AbortedTxn[] = [];
    index.collect(0, Infinity, all);
    expect(all).to.deep.equal([txn(7, 3, 9, 5), txn(2 ** 40, 2 ** 33, 2 ** 33 + 4)]);
    expect(index.encode(1)).to.deep.equal(bytes.subarray(34));
  });

  it('keeps the whole entries before a torn tail or an unknown version, and says why it stopped', () => {
    const bytes = indexOf(txn(1, 0, 1), txn(2, 2, 3), txn(3, 4, 5)).encode();
    const torn = TransactionIndex.decode(bytes.subarray(0, 2 * 34 + 10));
    expect([torn.index.entries, torn.index.lastOffset]).to.deep.equal([2, 3]);
    expect(torn.problem).to.match(/not a multiple of 34/);
    const badVersion = Buffer.from(bytes);
    badVersion.writeInt16BE(1, 34);
    const bad = TransactionIndex.decode(badVersion);
    expect(bad.index.entries).to.equal(1);
    expect(bad.problem).to.match(/version 1/);
  });

  it('truncates the entries whose marker is at or after an offset, and refuses markers out of order', () => {
    const index = indexOf(txn(1, 0, 4), txn(2, 1, 8), txn(3, 5, 12));
    index.truncateTo(8);
    expect([index.entries, index.lastOffset]).to.deep.equal([1, 4]);
    expect(() => index.append(txn(9, 0, 4))).to.throw(/not above/);
    index.truncateTo(0);
    expect([index.entries, index.lastOffset]).to.deep.equal([0, -1]);
  });

  it('collects the transactions overlapping [fetchOffset, upperBound) and stops once the LSO reaches the bound', () => {
    // Producer 1 aborts [0, 4] while 2 is open from 2 (LSO 2); 2 aborts [2, 9] (LSO 10); 3 aborts [12, 14].
    const index = indexOf(txn(1, 0, 4, 2), txn(2, 2, 9, 10), txn(3, 12, 14, 15));
    const collect = (from: number, to: number) => {
      const found: AbortedTxn[] = [];
      const complete = index.collect(from, to, found);
      return { producers: found.map((t) => t.producerId), complete };
    };
    expect(collect(0, 3)).to.deep.equal({ producers: [1, 2], complete: true });
    expect(collect(5, 10)).to.deep.equal({ producers: [2], complete: true });
    expect(collect(10, 12)).to.deep.equal({ producers: [], complete: true });
    expect(collect(10, 20)).to.deep.equal({ producers: [3], complete: false });
  });

  describe('in the log', () => {
    const dirs = tempDirs('fjord-txnindex-');
    const logs: PartitionLog[] = [];
    afterEach(async () => {
      for (const l of logs.splice(0)) await l.close();
    });

    async function open(dir: string, overrides: Record<string, string> = {}, recoveryPoint?: number): Promise<PartitionLog> {
      const log = await PartitionLog.open({
        dir, topic: 't', partition: 0, config: topicConfig(overrides), logger: silentLogger,
        hadCleanShutdown: recoveryPoint === undefined, recoveryPoint,
      });
      logs.push(log);
      return log;
    }

    async function close(log: PartitionLog): Promise<void> {
      await log.close();
      logs.splice(logs.indexOf(log), 1);
    }

    it('indexes an abort in the segment its marker lands in; the file exists only then and comes back at open', async () => {
      const dir = dirs.next();
      const log = await open(dir, { 'segment.bytes': '300' });
      for (let i = 0; i < 3; i++) await log.append(makeBatch({ payload: 100 })).done; // 3 segments of one batch
      expect(segmentFiles(dir, '.txnindex')).to.deep.equal([]);
      await log.append(makeBatch({ payload: 100 }), txn(5, 1, 3, 4)).done;
      expect(log.segmentInfo().map((s) => s.baseOffset)).to.deep.equal([0, 1, 2, 3]);
      expect(log.abortedTransactions(0, 10)).to.deep.equal([txn(5, 1, 3, 4)]);
      // A fetch from before the marker's segment finds it; one past the marker does not.
      expect(log.abortedTransactions(2, 3)).to.deep.equal([txn(5, 1, 3, 4)]);
      expect(log.abortedTransactions(4, 10)).to.deep.equal([]);
      await close(log);
      expect(segmentFiles(dir, '.txnindex')).to.deep.equal(['00000000000000000003.txnindex']);
      expect(fs.statSync(path.join(dir, '00000000000000000003.txnindex')).size).to.equal(34);
      const reopened = await open(dir, { 'segment.bytes': '300' });
      expect(reopened.abortedTransactions(0, 10)).to.deep.equal([txn(5, 1, 3, 4)]);
    });

    it('cuts the index with truncateTo and removes it with its segment', async () => {
      const dir = dirs.next();
      const log = await open(dir, { 'segment.bytes': '300', 'file.delete.delay.ms': '0' });
      await log.append(makeBatch({ payload: 10 }), txn(1, 0, 0)).done;
      await log.append(makeBatch({ payload: 10 }), txn(2, 0, 1)).done;
      await log.flush();
      expect(fs.statSync(path.join(dir, '00000000000000000000.txnindex')).size).to.equal(68);
      await log.truncateTo(1);
      expect(log.abortedTransactions(0, 10)).to.deep.equal([txn(1, 0, 0)]);
      await log.flush();
      expect(fs.statSync(path.join(dir, '00000000000000000000.txnindex')).size).to.equal(34);

      // Roll to a second segment, then DeleteRecords past the first: its .txnindex goes too.
      await log.append(makeBatch({ payload: 200 })).done;
      await log.append(makeBatch({ payload: 200 })).done;
      expect(log.segmentInfo().map((s) => s.baseOffset)).to.deep.equal([0, 1, 2]);
      await log.deleteRecordsBefore(2);
      await log.segmentDeletionsSettled();
      expect(segmentFiles(dir, '.txnindex')).to.deep.equal([]);
      expect(fs.readdirSync(dir).filter((f) => f.endsWith('.deleted'))).to.deep.equal([]);
    });

    it('removes a .txnindex without its log file at open, and one emptied by truncation stays empty', async () => {
      const dir = dirs.next();
      const log = await open(dir);
      await log.append(makeBatch(), txn(1, 0, 0)).done;
      await close(log);
      fs.writeFileSync(path.join(dir, '00000000000000000007.txnindex'), indexOf(txn(9, 7, 8)).encode());
      const again = await open(dir);
      expect(segmentFiles(dir, '.txnindex')).to.deep.equal(['00000000000000000000.txnindex']);
      await again.truncateTo(0);
      await again.append(makeBatch()).done;
      await close(again);
      expect(fs.statSync(path.join(dir, '00000000000000000000.txnindex')).size).to.equal(0);
      expect((await open(dir)).abortedTransactions(0, 10)).to.deep.equal([]);
    });

    it('recovery cuts the entries of markers lost with a torn tail', async () => {
      const dir = dirs.next();
      const log = await open(dir);
      await log.append(makeBatch({ records: 2 }), txn(1, 0, 1)).done;
      await log.append(makeBatch({ records: 2 }), txn(2, 0, 3)).done;
      await close(log);
      const file = path.join(dir, '00000000000000000000.log');
      fs.truncateSync(file, fs.statSync(file).size - 10); // the second marker is torn
      const recovered = await open(dir, {}, 0);
      expect(recovered.logEndOffset).to.equal(2);
      expect(recovered.abortedTransactions(0, 10)).to.deep.equal([txn(1, 0, 1)]);
      await close(recovered);
      expect(fs.statSync(path.join(dir, '00000000000000000000.txnindex')).size).to.equal(34);
    });
  });
});
