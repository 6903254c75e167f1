// Produce validates compressed batches before storing them, as Kafka's LogValidator does: a batch that
// does not decompress, or whose records do not parse to exactly its recordCount, is refused and leaves
// the log untouched; a good one is stored byte for byte as sent.
import { expect } from 'chai';
import { ApiKey } from '../../src/protocol/generated';
import type { ProduceResponse } from '../../src/protocol/generated/ProduceResponse';
import type { FetchResponse } from '../../src/protocol/generated/FetchResponse';
import type { CreateTopicsResponse } from '../../src/protocol/generated/CreateTopicsResponse';
import { ErrorCode } from '../../src/common/errors';
import { buildBatch, buildBatchSync } from '../../src/records/records';
import {
  ATTRIBUTES_OFFSET, BASE_OFFSET_OFFSET, Compression, computeBatchCrc, CRC_OFFSET, LAST_OFFSET_DELTA_OFFSET,
  PARTITION_LEADER_EPOCH_OFFSET, RECORDS_COUNT_OFFSET,
} from '../../src/records/batch';
import { RawClient } from '../helpers/raw-client';
import { withBroker } from '../helpers/broker';

type PartitionResult = ProduceResponse['responses'][number]['partitionResponses'][number];

const CODECS = { gzip: Compression.GZIP, snappy: Compression.SNAPPY, lz4: Compression.LZ4, zstd: Compression.ZSTD };
const RECORDS = [0, 1, 2].map((i) => ({ key: `k${i}`, value: `value-${i}`.repeat(20), headers: [{ key: 'h', value: `${i}` }] }));

/** The batch with its CRC made right again after an edit, so only the records inside are wrong. */
function resealed(b: Buffer): Buffer {
  b.writeUInt32BE(computeBatchCrc(b, 0, b.length), CRC_OFFSET);
  return b;
}

describe('produce: compressed batches are validated before they are stored', function () {
  this.timeout(20000);
  const broker = withBroker();
  let c: RawClient;
  before(async () => {
    c = await RawClient.connect(broker.current().port);
    const topics = ['checked', 'two'].map((name) => ({ name, numPartitions: name === 'two' ? 2 : 1, replicationFactor: 1, assignments: [], configs: [] }));
    const res = await c.request<CreateTopicsResponse>(ApiKey.CreateTopics, 7, { topics, timeoutMs: 1000, validateOnly: false });
    expect(res.topics.map((t) => t.errorCode)).to.deep.equal([ErrorCode.NONE, ErrorCode.NONE]);
  });
  after(() => c.close());

  async function produce(topic: string, partitions: { index: number; records: Buffer }[]): Promise<PartitionResult[]> {
    const res = await c.request<ProduceResponse>(ApiKey.Produce, 9, {
      transactionalId: null, acks: -1, timeoutMs: 5000, topicData: [{ name: topic, partitionData: partitions }],
    });
    return res.responses[0].partitionResponses;
  }

  /** The partition's bytes from offset 0, as Fetch returns them. */
  async function stored(topic: string, partition = 0): Promise<{ highWatermark: number; records: Buffer }> {
    const res = await c.request<FetchResponse>(ApiKey.Fetch, 11, {
      replicaId: -1, maxWaitMs: 0, minBytes: 0, maxBytes: 1 << 20, isolationLevel: 0, sessionId: 0, sessionEpoch: -1,
      topics: [{ topic, partitions: [{ partition, fetchOffset: 0n, partitionMaxBytes: 1 << 20, currentLeaderEpoch: -1, logStartOffset: -1n }] }],
      forgottenTopicsData: [], rackId: '',
    });
    const p = res.responses[0].partitions[0];
    expect(p.errorCode).to.equal(ErrorCode.NONE);
    return { highWatermark: Number(p.highWatermark), records: p.records ?? Buffer.alloc(0) };
  }

  for (const [name, codec] of Object.entries(CODECS)) {
    it(`${name}: records that are not ${name} are refused (UNKNOWN_SERVER_ERROR, as Kafka) and nothing is stored`, async () => {
      const before = await stored('checked');
      // A plain batch relabelled: the section is records, not a compressed stream.
      const poison = buildBatchSync({ records: RECORDS });
      poison.writeInt16BE(codec, ATTRIBUTES_OFFSET);
      const [r] = await produce('checked', [{ index: 0, records: resealed(poison) }]);
      expect(r).to.include({ errorCode: ErrorCode.UNKNOWN_SERVER_ERROR, errorMessage: null });
      expect(r.recordErrors).to.deep.equal([]);
      const after = await stored('checked');
      expect(after.highWatermark).to.equal(before.highWatermark);
      expect(after.records.equals(before.records)).to.equal(true);
    });

    it(`${name}: a batch whose records do not number its recordCount is INVALID_RECORD, and nothing is stored`, async () => {
      const before = await stored('checked');
      for (const claimed of [2, 4]) {
        const b = await buildBatch({ records: RECORDS, compression: codec });
        b.writeInt32BE(claimed, RECORDS_COUNT_OFFSET);
        b.writeInt32BE(claimed - 1, LAST_OFFSET_DELTA_OFFSET);
        const [r] = await produce('checked', [{ index: 0, records: resealed(b) }]);
        expect(r.errorCode, `${claimed} claimed`).to.equal(ErrorCode.INVALID_RECORD);
        expect(r.errorMessage).to.equal(null);
      }
      expect((await stored('checked')).highWatermark).to.equal(before.highWatermark);
    });

    it(`${name}: a good batch is stored exactly as sent, only its offset and leader epoch set`, async () => {
      const before = await stored('checked');
      const sent = await buildBatch({ records: RECORDS, compression: codec });
      const [r] = await produce('checked', [{ index: 0, records: Buffer.from(sent) }]);
      expect(r.errorCode).to.equal(ErrorCode.NONE);
      expect(Number(r.baseOffset)).to.equal(before.highWatermark);
      const after = await stored('checked');
      const written = Buffer.from(after.records.subarray(before.records.length));
      expect(written.length).to.equal(sent.length);
      expect(Number(written.readBigInt64BE(BASE_OFFSET_OFFSET))).to.equal(before.highWatermark);
      written.writeBigInt64BE(0n, BASE_OFFSET_OFFSET);
      written.writeInt32BE(sent.readInt32BE(PARTITION_LEADER_EPOCH_OFFSET), PARTITION_LEADER_EPOCH_OFFSET);
      expect(written.equals(sent)).to.equal(true);
    });
  }

  it('a bad partition of a request is refused alone: the other partition is written', async () => {
    const poison = buildBatchSync({ records: RECORDS });
    poison.writeInt16BE(Compression.GZIP, ATTRIBUTES_OFFSET);
    const good = await buildBatch({ records: RECORDS, compression: Compression.GZIP });
    const results = await produce('two', [{ index: 0, records: resealed(poison) }, { index: 1, records: good }]);
    expect(results.map((r) => [r.index, r.errorCode])).to.deep.equal([[0, ErrorCode.UNKNOWN_SERVER_ERROR], [1, ErrorCode.NONE]]);
    expect((await stored('two', 0)).highWatermark).to.equal(0);
    expect((await stored('two', 1)).highWatermark).to.equal(3);
  });
});
