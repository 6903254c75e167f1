import { expect } from 'chai';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { ErrorCode } from '../../src/common/errors';
import {
  ProducerBatch,
  ProducerStateManager,
  snapshotFileName,
} from '../../src/storage/producer-state';

const PID = 1000;
const INT32_MAX = 2 ** 31 - 1;

function batch(baseSequence: number, records = 1, producerEpoch = 0, extra: Partial<ProducerBatch> = {}): ProducerBatch {
  // The client's wrap: past 2^31-1 the sequence goes on from 0.
  const lastSequence = (baseSequence + records - 1) % (INT32_MAX + 1);
  return { producerId: PID, producerEpoch, baseSequence, lastSequence, isTransactional: false, ...extra };
}

/** Checks and, when accepted, appends like the Produce path; returns the check. */
class Partition {
  readonly state = new ProducerStateManager();
  nextOffset = 0;
  append(b: ProducerBatch, timestamp = 1_000) {
    const check = this.state.checkBatch(b);
    if (check.kind === 'ok') {
      const records = ((b.lastSequence - b.baseSequence + INT32_MAX + 1) % (INT32_MAX + 1)) + 1;
      this.state.recordBatch(b, this.nextOffset, this.nextOffset + records - 1, timestamp);
      this.nextOffset += records;
    }
    return check;
  }
}

describe('storage/producer-state', () => {
  let p: Partition;
  beforeEach(() => {
    p = new Partition();
  });

  it('accepts batches in sequence, including from a new producer at 0', () => {
    expect(p.append(batch(0, 3))).to.deep.equal({ kind: 'ok' });
    expect(p.append(batch(3, 2))).to.deep.equal({ kind: 'ok' });
    expect(p.append(batch(5, 1))).to.deep.equal({ kind: 'ok' });
    const entry = p.state.lastEntry(PID)!;
    expect(entry.producerEpoch).to.equal(0);
    expect(entry.batches.map((b) => [b.firstSeq, b.lastSeq, b.firstOffset, b.lastOffset])).to.deep.equal([
      [0, 2, 0, 2],
      [3, 4, 3, 4],
      [5, 5, 5, 5],
    ]);
  });

  it('answers a retry of each of the last 5 batches with its first offsets', () => {
    for (let i = 0; i < 7; i++) p.append(batch(i * 2, 2), 1_000 + i);
    // batches 2..6 are retained: sequences 4-5 ... 12-13, offsets alike
    for (let i = 2; i < 7; i++) {
      expect(p.append(batch(i * 2, 2))).to.deep.equal({
        kind: 'duplicate',
        firstOffset: i * 2,
        lastOffset: i * 2 + 1,
        timestamp: 1_000 + i,
      });
    }
    expect(p.nextOffset).to.equal(14); // nothing appended again
  });

  it('a retry older than the last 5 is out of order', () => {
    for (let i = 0; i < 6; i++) p.append(batch(i));
    const check = p.append(batch(0));
    expect(check.kind).to.equal('error');
    expect(check.kind === 'error' && check.errorCode).to.equal(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER);
  });

  it('a retry with a different sequence range is not a duplicate', () => {
    p.append(batch(0, 3));
    expect(p.append(batch(0, 2)).kind).to.equal('error');
  });

  it('a gap is out of order (45)', () => {
    p.append(batch(0, 2));
    const check = p.append(batch(3));
    expect(check).to.include({ kind: 'error', errorCode: 45 });
    expect(check.kind === 'error' && check.errorMessage).to.match(/3 \(incoming seq\. number\), 1 \(current end/);
  });

  it('wraps the sequence from 2^31-1 to 0', () => {
    // An unknown producer may start anywhere (its earlier records may be gone).
    expect(p.append(batch(INT32_MAX - 2, 2))).to.deep.equal({ kind: 'ok' }); // ..2147483646
    expect(p.append(batch(INT32_MAX - 0, 3))).to.deep.equal({ kind: 'ok' }); // 2147483647, 0, 1
    expect(p.state.lastEntry(PID)!.batches[1].lastSeq).to.equal(1);
    expect(p.append(batch(2))).to.deep.equal({ kind: 'ok' });
    expect(p.append(batch(INT32_MAX, 3)).kind).to.equal('duplicate');

    const q = new Partition();
    q.append(batch(INT32_MAX - 1, 2)); // ends exactly at 2^31-1
    expect(q.append(batch(0))).to.deep.equal({ kind: 'ok' });
  });

  it('a new epoch must start at 0 and resets the sequence window', () => {
    for (let i = 0; i < 3; i++) p.append(batch(i));
    expect(p.append(batch(3, 1, 1))).to.include({ kind: 'error', errorCode: ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER });
    expect(p.append(batch(0, 1, 1))).to.deep.equal({ kind: 'ok' });
    expect(p.state.lastEntry(PID)!.batches).to.have.length(1);
    expect(p.append(batch(1, 1, 1))).to.deep.equal({ kind: 'ok' });
    // epoch 0's retained batches are gone: its retry is now a zombie write
    expect(p.append(batch(2, 1, 0))).to.include({ kind: 'error', errorCode: ErrorCode.INVALID_PRODUCER_EPOCH });
  });

  it('fences an older epoch with INVALID_PRODUCER_EPOCH (47)', () => {
    p.append(batch(0, 1, 5));
    const check = p.append(batch(1, 1, 4));
    expect(check).to.include({ kind: 'error', errorCode: 47 });
    expect(check.kind === 'error' && check.errorMessage).to.match(/is 4, which is smaller than the last seen epoch 5/);
  });

  it('accepts an unknown producer at a non-zero sequence, as Kafka 4 does', () => {
    expect(p.append(batch(42, 1, 3))).to.deep.equal({ kind: 'ok' });
    expect(p.append(batch(43, 1, 3))).to.deep.equal({ kind: 'ok' });
    expect(p.append(batch(45, 1, 3))).to.include({ errorCode: ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER });
  });

  it('always accepts non-idempotent batches (producer id -1)', () => {
    const plain = { producerId: -1, producerEpoch: -1, baseSequence: -1, lastSequence: -1, isTransactional: false };
    expect(p.append(plain)).to.deep.equal({ kind: 'ok' });
    expect(p.append(plain)).to.deep.equal({ kind: 'ok' });
    expect(p.state.activeProducers().size).to.equal(0);
  });

  it('checks only the epoch for coordinator writes and nothing for replication', () => {
    p.append(batch(0, 1, 2));
    expect(p.state.checkBatch(batch(7, 1, 2), 'coordinator')).to.deep.equal({ kind: 'ok' });
    expect(p.state.checkBatch(batch(7, 1, 1), 'coordinator')).to.include({ errorCode: ErrorCode.INVALID_PRODUCER_EPOCH });
    expect(p.state.checkBatch(batch(7, 1, 1), 'replication')).to.deep.equal({ kind: 'ok' });
  });

  it('remembers the first offset of an open transaction and refuses plain writes inside it', () => {
    p.append(batch(0, 2, 0, { isTransactional: true }));
    p.append(batch(2, 2, 0, { isTransactional: true }));
    expect(p.state.lastEntry(PID)!.currentTxnFirstOffset).to.equal(0);
    expect(p.append(batch(4))).to.include({ errorCode: ErrorCode.INVALID_TXN_STATE });
  });

  it('replays batches read back from the log; an epoch bump clears the window', () => {
    const s = new ProducerStateManager();
    const header = (baseSequence: number, producerEpoch: number, baseOffset: number) => ({
      ...batch(baseSequence, 1, producerEpoch),
      baseOffset,
      lastOffset: baseOffset,
      maxTimestamp: 500 + baseOffset,
    });
    s.replayBatchHeader(header(0, 0, 0));
    s.replayBatchHeader(header(1, 0, 1));
    s.replayBatchHeader(header(0, 1, 2));
    s.replayBatchHeader({ ...header(-1, 2, 3), marker: { commit: true, coordinatorEpoch: 7 } });
    const e = s.lastEntry(PID)!;
    expect(e.producerEpoch).to.equal(2);
    expect(e.batches).to.deep.equal([]);
    expect(e.coordinatorEpoch).to.equal(7);
    expect(e.lastTimestamp).to.equal(503);
    // after a bumping marker the producer must start again at 0
    expect(s.checkBatch(batch(1, 1, 2))).to.include({ errorCode: ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER });
    expect(s.checkBatch(batch(0, 1, 2))).to.deep.equal({ kind: 'ok' });
  });

  it('expires idle producers but not one in a transaction', () => {
    const day = 86_400_000;
    p.state.recordBatch({ ...batch(0), producerId: 1 }, 0, 0, 10_000);
    p.state.recordBatch({ ...batch(0), producerId: 2 }, 1, 1, 20_000);
    p.state.recordBatch({ ...batch(0), producerId: 3, isTransactional: true }, 2, 2, 10_000);
    expect(p.state.removeExpired(10_000 + day - 1)).to.equal(0);
    expect(p.state.removeExpired(10_000 + day)).to.equal(1); // Kafka: idle >= expiration
    expect([...p.state.activeProducers().keys()].sort()).to.deep.equal([2, 3]);
    expect(p.state.removeExpired(10_000_000_000, day)).to.equal(1);
    expect([...p.state.activeProducers().keys()]).to.deep.equal([3]);
  });

  describe('snapshots', () => {
    let dir: string;
    beforeEach(() => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fjord-pstate-'));
    });
    afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

    function snapshotNames(): string[] {
      return fs.readdirSync(dir).sort();
    }

    it('round-trips every producer with its 5 batches', async () => {
      for (let i = 0; i < 7; i++) p.append(batch(i), 100 + i);
      p.state.recordBatch({ ...batch(0, 1, 3), producerId: 2 ** 40, isTransactional: true }, 7, 7, -1);
      await p.state.writeSnapshot(dir, 8);
      expect(snapshotNames()).to.deep.equal(['00000000000000000008.snapshot']);

      const loaded = ProducerStateManager.loadLatest(dir, 8)!;
      expect(loaded.offset).to.equal(8);
      expect([...loaded.state.activeProducers()]).to.deep.equal([...p.state.activeProducers()]);
      // a retry of any retained batch is still a duplicate after the restart
      expect(loaded.state.checkBatch(batch(2))).to.include({ kind: 'duplicate', firstOffset: 2 });
      expect(loaded.state.checkBatch(batch(7))).to.deep.equal({ kind: 'ok' });
    });

    it('loads the newest snapshot at or below the log end and drops those above it', async () => {
      p.append(batch(0));
      await p.state.writeSnapshot(dir, 1);
      p.append(batch(1));
      await p.state.writeSnapshot(dir, 2);
      p.append(batch(2));
      await p.state.writeSnapshot(dir, 3);

      const loaded = ProducerStateManager.loadLatest(dir, 2)!;
      expect(loaded.offset).to.equal(2);
      expect(loaded.state.lastEntry(PID)!.batches).to.have.length(2);
      expect(snapshotNames()).to.deep.equal([snapshotFileName(1), snapshotFileName(2)]);
      expect(ProducerStateManager.loadLatest(dir, 0)).to.equal(null);
    });

    it('ignores a corrupt snapshot and falls back to an older one', async () => {
      p.append(batch(0));
      await p.state.writeSnapshot(dir, 1);
      p.append(batch(1));
      await p.state.writeSnapshot(dir, 2);
      const newest = path.join(dir, snapshotFileName(2));
      const bytes = fs.readFileSync(newest);
      bytes[bytes.length - 3] ^= 0xff; // one flipped byte: the CRC catches it
      fs.writeFileSync(newest, bytes);

      const loaded = ProducerStateManager.loadLatest(dir, 10)!;
      expect(loaded.offset).to.equal(1);
      expect(fs.existsSync(newest)).to.equal(false);

      fs.writeFileSync(path.join(dir, snapshotFileName(1)), Buffer.from([0, 1, 2])); // truncated
      expect(ProducerStateManager.loadLatest(dir, 10)).to.equal(null);
    });

    it('keeps only the latest few snapshots and cleans up crash leftovers', async () => {
      fs.writeFileSync(path.join(dir, snapshotFileName(0) + '.tmp'), 'half-written');
      for (let offset = 1; offset <= 6; offset++) {
        p.append(batch(offset - 1));
        await p.state.writeSnapshot(dir, offset);
      }
      expect(snapshotNames()).to.deep.equal([4, 5, 6].map(snapshotFileName));
    });

    it('truncateSnapshotsAfter removes the snapshots above an offset', async () => {
      for (const offset of [10, 20, 30]) await p.state.writeSnapshot(dir, offset);
      ProducerStateManager.truncateSnapshotsAfter(dir, 20);
      expect(snapshotNames()).to.deep.equal([10, 20].map(snapshotFileName));
    });

    it('captures the state when called, not when the write lands', async () => {
      p.append(batch(0));
      const write = p.state.writeSnapshot(dir, 1);
      p.append(batch(1));
      await write;
      expect(ProducerStateManager.loadLatest(dir, 1)!.state.lastEntry(PID)!.batches).to.have.length(1);
    });

    it('a missing directory has no snapshot', () => {
      expect(ProducerStateManager.loadLatest(path.join(dir, 'nope'), 100)).to.equal(null);
    });
  });
});
