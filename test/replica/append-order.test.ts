// A partition's appends keep arrival order while a compressed batch is checked off the event loop:
// every append made behind it (uncompressed, a coordinator's, a transaction marker) queues and takes
// its turn after it, a batch that fails its check fails alone, a partition deleted meanwhile fails the
// appends still waiting, and with nothing queued an uncompressed append, or a small compressed one
// whose codec has a synchronous path, is answered synchronously.
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { ApiKey } from '../../src/protocol/generated';
import type { ProduceResponse } from '../../src/protocol/generated/ProduceResponse';
import { ErrorCode } from '../../src/common/errors';
import { ATTRIBUTES_OFFSET, Compression, computeBatchCrc, CRC_OFFSET, readBatchHeader } from '../../src/records/batch';
import { buildBatch, buildBatchSync, type BuildBatchOptions } from '../../src/records/records';
import { type AppendOptions, type Partition, type PartitionAppend } from '../../src/replica/replica-manager';
import { RawClient } from '../helpers/raw-client';
import { withBroker } from '../helpers/broker';

const CODECS = { gzip: Compression.GZIP, snappy: Compression.SNAPPY, lz4: Compression.LZ4, zstd: Compression.ZSTD };

const values = (n: number, tag: string) => Array.from({ length: n }, (_, i) => ({ key: `${tag}-${i}`, value: `${tag}-value-${i}`.repeat(30) }));
/** Records of random bytes: compressed, still over 16 KiB, so they are checked off the event loop whatever the codec. */
const incompressible = (n: number, tag: string) => Array.from({ length: n }, (_, i) => ({ key: `${tag}-${i}`, value: randomBytes(8 * 1024) }));

/** An uncompressed batch relabelled as `codec`: its section is not a compressed stream (CRC made right). */
function poisoned(codec: number, o: Omit<BuildBatchOptions, 'records'> = {}): Buffer {
  const b = buildBatchSync({ ...o, records: values(2, 'poison') });
  b.writeInt16BE(b.readInt16BE(ATTRIBUTES_OFFSET) | codec, ATTRIBUTES_OFFSET);
  b.writeUInt32BE(computeBatchCrc(b, 0, b.length), CRC_OFFSET);
  return b;
}

/** The batches in the partition's log: first and last offset, control or not. */
async function storedBatches(p: Partition): Promise<{ base: number; last: number; control: boolean }[]> {
  const read = await p.log.readBytes(p.log.logStartOffset, 1 << 24);
  if (read.outOfRange) throw new Error('out of range');
  const out = [];
  for (let pos = 0; pos < read.records.length;) {
    const h = readBatchHeader(read.records, pos);
    if (h.status !== 'ok') throw new Error(`batch at ${pos}: ${h.status}`);
    out.push({ base: h.batch.baseOffset, last: h.batch.baseOffset + h.batch.lastOffsetDelta, control: h.batch.isControl });
    pos += h.batch.size;
  }
  return out;
}

describe('append order while compressed batches are checked off the event loop', function () {
  this.timeout(20000);
  const broker = withBroker();
  const opts = (): AppendOptions => ({ produceVersion: 9, nowMs: Date.now() });
  let topics = 0;

  async function freshPartition(): Promise<Partition> {
    const name = `order-${topics++}`;
    const created = await broker.current().broker.controller.createTopic({ name, numPartitions: 1, replicationFactor: 1, assignments: [], configs: {} }, false);
    expect(created.errorCode).to.equal(ErrorCode.NONE);
    return broker.current().broker.replicas.partition(name, 0)!;
  }

  /** The answer of an append, and what it was written as once its write is in. */
  async function settled(result: PartitionAppend | Promise<PartitionAppend>): Promise<PartitionAppend> {
    const r = await result;
    await r.done;
    return r;
  }

  for (const [name, codec] of Object.entries(CODECS)) {
    it(`${name}: an idempotent producer's compressed batch (sequence 0) then, the same tick, an uncompressed one (sequence 3): both in, in that order`, async () => {
      const p = await freshPartition();
      const replicas = broker.current().broker.replicas;
      const producer = { producerId: 4242, producerEpoch: 0 };
      const compressed = await buildBatch({ ...producer, baseSequence: 0, records: incompressible(3, 'c'), compression: codec });
      const plain = buildBatchSync({ ...producer, baseSequence: 3, records: values(2, 'p') });
      const first = replicas.append(p, compressed, 0, opts());
      const second = replicas.append(p, plain, 0, opts());
      // The uncompressed one is queued behind: run now, sequence 3 would be out of order.
      expect(second).to.be.instanceOf(Promise);
      const [a, b] = [await settled(first), await settled(second)];
      expect([a.errorCode, a.baseOffset, b.errorCode, b.baseOffset]).to.deep.equal([ErrorCode.NONE, 0, ErrorCode.NONE, 3]);
      expect(await storedBatches(p)).to.deep.equal([{ base: 0, last: 2, control: false }, { base: 3, last: 4, control: false }]);
      // The queue is gone: the next uncompressed append (sequence 5) is answered at once.
      const third = replicas.append(p, buildBatchSync({ ...producer, baseSequence: 5, records: values(1, 'q') }), 0, opts());
      expect(third).not.to.be.instanceOf(Promise);
      expect((await settled(third)).baseOffset).to.equal(5);
    });
  }

  it('a batch that fails its check in the middle fails alone: the one behind it gets the next offsets, none reused', async () => {
    const p = await freshPartition();
    const replicas = broker.current().broker.replicas;
    const producer = { producerId: 77, producerEpoch: 0 };
    const good = await buildBatch({ ...producer, baseSequence: 0, records: incompressible(3, 'g'), compression: Compression.GZIP });
    const bad = poisoned(Compression.GZIP, { ...producer, baseSequence: 3 });
    // Sequence 3 again: the refused batch took nothing from the producer state.
    const after = buildBatchSync({ ...producer, baseSequence: 3, records: values(2, 'a') });
    const results = [replicas.append(p, good, 0, opts()), replicas.append(p, bad, 0, opts()), replicas.append(p, after, 0, opts())];
    const [g, b, a] = await Promise.all(results.map(settled));
    expect([g.errorCode, g.baseOffset]).to.deep.equal([ErrorCode.NONE, 0]);
    expect([b.errorCode, b.baseOffset]).to.deep.equal([ErrorCode.UNKNOWN_SERVER_ERROR, -1]);
    expect([a.errorCode, a.baseOffset]).to.deep.equal([ErrorCode.NONE, 3]);
    const next = await settled(replicas.append(p, buildBatchSync({ records: values(1, 'n') }), 0, opts()));
    expect(next.baseOffset).to.equal(5);
    expect((await storedBatches(p)).map((s) => [s.base, s.last])).to.deep.equal([[0, 2], [3, 4], [5, 5]]);
  });

  it('a transaction marker issued while the producer\'s compressed transactional batch is checked lands after it', async () => {
    const p = await freshPartition();
    const replicas = broker.current().broker.replicas;
    const producer = { producerId: 9001, producerEpoch: 0, isTransactional: true };
    const batch = await buildBatch({ ...producer, baseSequence: 0, records: incompressible(4, 't'), compression: Compression.LZ4 });
    const data = replicas.append(p, batch, 0, opts());
    const marker = replicas.appendTxnMarker(p, { producerId: 9001, producerEpoch: 0, coordinatorEpoch: 0, commit: true }, Date.now());
    expect(marker).to.be.instanceOf(Promise);
    const [d, m] = [await settled(data), await settled(marker)];
    expect([d.errorCode, d.baseOffset, m.errorCode, m.baseOffset]).to.deep.equal([ErrorCode.NONE, 0, ErrorCode.NONE, 4]);
    expect(await storedBatches(p)).to.deep.equal([{ base: 0, last: 3, control: false }, { base: 4, last: 4, control: true }]);
    // The transaction is over: nothing holds the last stable offset back.
    expect(p.log.producerState.hasOngoingTransaction(9001, 0)).to.equal(false);
    expect(p.log.lastStableOffset).to.equal(5);
  });

  it('the partition deleted while appends wait: they fail with UNKNOWN_TOPIC_OR_PARTITION and write nothing', async () => {
    const p = await freshPartition();
    const { replicas, controller } = broker.current().broker;
    const waiting = [
      replicas.append(p, await buildBatch({ records: incompressible(3, 'd'), compression: Compression.SNAPPY }), 0, opts()),
      replicas.append(p, buildBatchSync({ records: values(1, 'e') }), 0, opts()),
      replicas.appendTxnMarker(p, { producerId: 5, producerEpoch: 0, coordinatorEpoch: 0, commit: false }, Date.now()),
    ];
    // What the Controller calls once a deletion is in the metadata: the partition is gone at once.
    const deleted = replicas.topicDeleted(controller.topic(p.topic)!);
    const answers = await Promise.all(waiting.map(settled));
    expect(answers.map((r) => r.errorCode)).to.deep.equal(Array(3).fill(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION));
    await deleted;
    expect(p.log.logEndOffset).to.equal(0);
    expect((await controller.deleteTopic(p.topic)).errorCode).to.equal(ErrorCode.NONE);
  });

  it('a small batch of a codec with a synchronous path is checked at once: no queue, answered synchronously', async () => {
    const p = await freshPartition();
    const replicas = broker.current().broker.replicas;
    for (const codec of [Compression.GZIP, Compression.SNAPPY, Compression.LZ4]) {
      const small = replicas.append(p, await buildBatch({ records: values(3, 's'), compression: codec }), 0, opts());
      expect(small, `codec ${codec}`).not.to.be.instanceOf(Promise);
      expect((await settled(small)).errorCode).to.equal(ErrorCode.NONE);
      const bad = replicas.append(p, poisoned(codec), 0, opts());
      expect(bad).not.to.be.instanceOf(Promise);
      expect((bad as PartitionAppend).errorCode).to.equal(ErrorCode.UNKNOWN_SERVER_ERROR);
    }
    expect(p.log.logEndOffset).to.equal(9);
  });

  it('a small batch that decompresses to more than the inline cap is checked off the event loop, and accepted', async () => {
    const p = await freshPartition();
    const replicas = broker.current().broker.replicas;
    // 1 MiB of one byte: a few KB of gzip.
    const zeros = await buildBatch({ records: [{ key: 'z', value: Buffer.alloc(1 << 20) }], compression: Compression.GZIP });
    expect(zeros.length).to.be.below(16 * 1024);
    const big = replicas.append(p, zeros, 0, opts());
    expect(big).to.be.instanceOf(Promise);
    const r = await settled(big);
    expect([r.errorCode, r.baseOffset]).to.deep.equal([ErrorCode.NONE, 0]);
  });

  describe('over the wire', () => {
    let c: RawClient;
    before(async () => { c = await RawClient.connect(broker.current().port); });
    after(() => c.close());

    const produceBody = (topic: string, records: Buffer, acks = -1) => ({
      transactionalId: null, acks, timeoutMs: 5000, topicData: [{ name: topic, partitionData: [{ index: 0, records }] }],
    });

    it('pipelined Produce requests of one producer, compressed then uncompressed, are answered in order with offsets in order', async () => {
      const p = await freshPartition();
      const producer = { producerId: 31337, producerEpoch: 0 };
      const frames = [];
      for (let i = 0; i < 6; i++) {
        const o = { ...producer, baseSequence: i * 2, records: values(2, `w${i}`) };
        frames.push(i % 2 === 0 ? await buildBatch({ ...o, records: incompressible(2, `w${i}`), compression: Compression.GZIP }) : buildBatchSync(o));
      }
      const ids = frames.map((records) => c.send(ApiKey.Produce, 9, produceBody(p.topic, records)));
      const answers = [];
      for (const id of ids) {
        const res = await c.receive<ProduceResponse>(ApiKey.Produce, 9);
        expect(res.correlationId).to.equal(id);
        answers.push(res.body.responses[0].partitionResponses[0]);
      }
      expect(answers.map((a) => [a.errorCode, Number(a.baseOffset)])).to.deep.equal([0, 2, 4, 6, 8, 10].map((o) => [ErrorCode.NONE, o]));
    });

    it('acks=0: a good compressed batch is stored and the connection stays; a bad one closes it and stores nothing', async () => {
      const p = await freshPartition();
      const quiet = await RawClient.connect(broker.current().port);
      quiet.send(ApiKey.Produce, 9, produceBody(p.topic, await buildBatch({ records: values(3, 'z'), compression: Compression.SNAPPY }), 0));
      quiet.send(ApiKey.ApiVersions, 3, { clientSoftwareName: 't', clientSoftwareVersion: '1' });
      await quiet.receive(ApiKey.ApiVersions, 3);
      expect(p.log.logEndOffset).to.equal(3);
      quiet.send(ApiKey.Produce, 9, produceBody(p.topic, poisoned(Compression.SNAPPY), 0));
      await quiet.closed;
      expect(p.log.logEndOffset).to.equal(3);
    });
  });
});
