// The chaos verdict (verify.ts) on hand-made replica logs: a clean set passes, and each kind of
// violation the chaos run looks for is found and counted: lost, misplaced, duplicated and reordered
// records, a leader epoch going down, replicas differing or short below the high watermark. Also
// reads real segment files back (readReplicaLog), a half-written batch at the end left out.
import { expect } from 'chai';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { buildBatchSync } from '../../src/records';
import { readReplicaLog, recordValue, verify, type Ack, type LogBatch, type PartitionReplicas } from './verify';

/** A batch of `values` at `baseOffset`, written in `epoch`. */
function batch(baseOffset: number, epoch: number, values: string[]): LogBatch {
  const bytes = buildBatchSync({ baseOffset, partitionLeaderEpoch: epoch, records: values.map((v) => ({ value: Buffer.from(v) })), nowMs: 1 });
  return { baseOffset, nextOffset: baseOffset + values.length, leaderEpoch: epoch, bytes };
}

/** Partition 0 with the same batches on brokers 0, 1 and 2, high watermark at their end. */
function replicated(batches: LogBatch[]): PartitionReplicas {
  const end = batches[batches.length - 1].nextOffset;
  return { partition: 0, highWatermark: end, replicas: new Map([0, 1, 2].map((id) => [id, batches])) };
}

const ack = (offset: number, producer: string, seq: number): Ack => ({ partition: 0, offset, producer, seq });

describe('chaos verdict', () => {
  const clean = [batch(0, 0, ['a:0', 'a:1', 'b:0']), batch(3, 2, ['a:2', 'b:1'])];

  it('passes logs that hold every ack where it was acked', () => {
    const v = verify([replicated(clean)], [ack(0, 'a', 0), ack(1, 'a', 1), ack(3, 'a', 2), ack(4, 'b', 1)]);
    expect(v.problems).to.deep.equal([]);
    expect(v.recordsInLogs).to.equal(5);
  });

  it('counts an acked record missing from the logs as lost, and one at another offset as misplaced', () => {
    const v = verify([replicated(clean)], [ack(5, 'a', 3), ack(2, 'a', 2)]);
    expect(v.lost).to.equal(1);
    expect(v.misplaced).to.equal(1);
    expect(v.problems).to.have.length(2);
  });

  it('counts a record above the high watermark as lost', () => {
    const v = verify([{ ...replicated(clean), highWatermark: 3 }], [ack(3, 'a', 2)]);
    expect(v.lost).to.equal(1);
  });

  it('finds a duplicate, even across partitions, and a producer sequence going back', () => {
    const p1 = { ...replicated([batch(0, 0, ['b:0', 'a:5', 'a:4'])]), partition: 1 };
    const v = verify([replicated(clean), p1], []);
    expect(v.duplicated).to.equal(1);
    expect(v.outOfOrder).to.equal(1);
  });

  it('finds a leader epoch going down with the offset', () => {
    const v = verify([replicated([batch(0, 3, ['a:0']), batch(1, 2, ['a:1'])])], []);
    expect(v.epochRegressions).to.equal(3); // on each of the three replicas
  });

  it('finds a replica whose bytes differ below the high watermark, or that ends short of it', () => {
    const p = replicated(clean);
    p.replicas.set(1, [clean[0], batch(3, 1, ['a:2', 'b:1'])]);
    p.replicas.set(2, [clean[0]]);
    const v = verify([p], []);
    expect(v.replicaMismatches).to.equal(2);
    expect(v.problems.join('\n')).to.include('broker 1 differs from broker 0 from the batch at offset 3').and.include('broker 2 ends at 3');
  });

  it('ignores what lies above the high watermark', () => {
    const p = replicated(clean);
    p.highWatermark = 3;
    p.replicas.set(2, [clean[0], batch(3, 1, ['c:0'])]); // a divergent tail, not yet truncated
    expect(verify([p], []).problems).to.deep.equal([]);
  });

  it('reads the batches of segment files back, without a half-written last batch', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'chaos-verify-'));
    try {
      const [first, second] = clean;
      const third = batch(5, 2, [recordValue('c', 0)]);
      fs.writeFileSync(path.join(dir, '00000000000000000000.log'), first.bytes);
      fs.writeFileSync(path.join(dir, '00000000000000000003.log'), Buffer.concat([second.bytes, third.bytes.subarray(0, 20)]));
      fs.writeFileSync(path.join(dir, '00000000000000000000.index'), Buffer.alloc(8));
      const read = readReplicaLog(dir);
      expect(read.map((b) => [b.baseOffset, b.nextOffset, b.leaderEpoch])).to.deep.equal([[0, 3, 0], [3, 5, 2]]);
      expect(Buffer.concat(read.map((b) => b.bytes)).equals(Buffer.concat([first.bytes, second.bytes]))).to.equal(true);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
