import { expect } from 'chai';
import { ErrorCode } from '../../src/common/errors';
import { assignOffsets, BatchInfo, Compression, computeBatchCrc, CRC_OFFSET, RECORDS_COUNT_OFFSET, RECORDS_OFFSET, scanBatches, TimestampType } from '../../src/records/batch';
import { Codec, hasSyncCodec } from '../../src/records/compression';
import {
  buildBatch,
  BuildRecord,
  buildBatchSync,
  buildEndTxnMarker,
  ControlRecordType,
  decodeRecords,
  decodeRecordsSync,
  InvalidRecordError,
  parseControlRecordType,
  RecordValidation,
  validateRecords,
  validateRecordsInline,
} from '../../src/records/records';

const T0 = 1700000000000;

const RECORDS: BuildRecord[] = [
  { key: 'k1', value: 'hello', headers: [{ key: 'h1', value: 'v1' }, { key: 'ünï', value: null }], timestamp: T0 },
  { key: null, value: 'no-key', timestamp: T0 + 5 },
  { key: 'empty-value', value: Buffer.alloc(0), timestamp: T0 - 3 },
  { key: 'tombstone', value: null, headers: [{ key: '', value: Buffer.alloc(0) }], timestamp: T0 + 2 },
  { key: Buffer.from([0, 1, 2, 255]), value: Buffer.alloc(100000, 'x'), timestamp: T0 + 1 },
];

function info(buf: Buffer): BatchInfo {
  const r = scanBatches(buf, { fromClient: false });
  if (!r.ok) throw new Error(r.errorMessage);
  return r.batches[0];
}

function expectRecords(decoded: Awaited<ReturnType<typeof decodeRecords>>, baseOffset = 0): void {
  expect(decoded).to.have.length(RECORDS.length);
  decoded.forEach((d, i) => {
    const r = RECORDS[i];
    const asBuf = (v: unknown) => (v === null || v === undefined ? null : typeof v === 'string' ? Buffer.from(v) : (v as Buffer));
    expect(d.offset).to.equal(baseOffset + i);
    expect(d.offsetDelta).to.equal(i);
    expect(d.timestamp).to.equal(r.timestamp);
    expect(d.key === null ? null : d.key.toString('hex')).to.equal(asBuf(r.key)?.toString('hex') ?? null);
    expect(d.value === null ? null : d.value.toString('hex')).to.equal(asBuf(r.value)?.toString('hex') ?? null);
    expect(d.headers.map((h) => [h.key, h.value === null ? null : h.value.toString()])).to.deep.equal(
      (r.headers ?? []).map((h) => [h.key, h.value === null ? null : String(h.value)]),
    );
  });
}

/** Uncompressed batch whose records section is replaced, with count and CRC fixed up. */
function withSection(section: Buffer, count: number): Buffer {
  const head = Buffer.from(buildBatchSync({ records: [{ key: 'a', value: 'b', timestamp: T0 }] }).subarray(0, RECORDS_OFFSET));
  const b = Buffer.concat([head, section]);
  b.writeInt32BE(b.length - 12, 8);
  b.writeInt32BE(count, RECORDS_COUNT_OFFSET);
  b.writeInt32BE(count - 1, 23);
  b.writeUInt32BE(computeBatchCrc(b, 0, b.length), CRC_OFFSET);
  return b;
}

/** Hand-encoded record body pieces (zigzag varints of small values). */
const zz = (n: number): number[] => {
  let u = n >= 0 ? n * 2 : -n * 2 - 1;
  const out: number[] = [];
  while (u >= 0x80) {
    out.push((u & 0x7f) | 0x80);
    u >>>= 7;
  }
  out.push(u);
  return out;
};
function rawRecord(body: number[]): Buffer {
  return Buffer.from([...zz(body.length), ...body]);
}
/** attributes, tsDelta 0, offsetDelta i, key 'k', value 'v', then `tail` (header count + headers). */
const recordBody = (i: number, tail: number[] = [0]): number[] => [0, 0, ...zz(i), ...zz(1), 0x6b, ...zz(1), 0x76, ...tail];

function notOk(v: RecordValidation): { code: number; message: string; errors: { batchIndex: number; message: string }[] } {
  if (v.ok) throw new Error('expected a validation error');
  return { code: v.errorCode, message: v.errorMessage, errors: v.recordErrors };
}

describe('records/records', () => {
  describe('buildBatch + decodeRecords', () => {
    for (const [name, codec] of Object.entries(Codec)) {
      it(`${name}: round trip of keys, values, headers, nulls, empties and out-of-order timestamps`, async () => {
        const b = await buildBatch({ records: RECORDS, compression: codec, producerId: 7, producerEpoch: 1, baseSequence: 0 });
        const h = info(b);
        expect(h).to.include({ compression: codec, recordCount: 5, lastOffsetDelta: 4, baseTimestamp: T0, maxTimestamp: T0 + 5 });
        expectRecords(await decodeRecords(b));
        if (hasSyncCodec(codec)) {
          expectRecords(decodeRecordsSync(b));
          expect(info(buildBatchSync({ records: RECORDS, compression: codec })).compression).to.equal(codec);
        }
      });
    }

    it('decodeRecords reads a batch at the start of a larger buffer and applies baseOffset', async () => {
      const b = await buildBatch({ records: RECORDS, baseOffset: 1000, compression: Codec.GZIP });
      expectRecords(await decodeRecords(Buffer.concat([b, Buffer.from('trailing junk')])), 1000);
    });

    it('a thousand records, timestamps spread over years (varlong deltas beyond 32 bits)', async () => {
      const many = Array.from({ length: 1000 }, (_, i) => ({ key: `k${i}`, value: `v${i}`, timestamp: T0 + (i % 2 ? 1 : -1) * i * 86400000 }));
      const b = await buildBatch({ records: many, compression: Codec.LZ4 });
      const d = await decodeRecords(b);
      expect(d.map((r) => r.timestamp)).to.deep.equal(many.map((r) => r.timestamp));
      expect(d[999].value?.toString()).to.equal('v999');
    });

    it('LogAppendTime batches: every record reads the batch maxTimestamp', () => {
      const b = buildBatchSync({ records: RECORDS, timestampType: TimestampType.LOG_APPEND_TIME, logAppendTimeMs: T0 + 99 });
      expect(info(b)).to.include({ timestampType: TimestampType.LOG_APPEND_TIME, maxTimestamp: T0 + 99, baseTimestamp: T0 });
      expect(decodeRecordsSync(b).every((r) => r.timestamp === T0 + 99)).to.equal(true);
    });

    it('an empty batch keeps the given lastOffsetDelta (what compaction leaves)', () => {
      const b = buildBatchSync({ records: [], lastOffsetDelta: 4 });
      expect(info(b)).to.include({ recordCount: 0, lastOffsetDelta: 4, baseTimestamp: -1, maxTimestamp: -1, size: 61 });
      expect(decodeRecordsSync(b)).to.deep.equal([]);
    });
  });

  describe('malformed records (Kafka: InvalidRecordException -> INVALID_RECORD)', () => {
    const good = [rawRecord(recordBody(0)), rawRecord(recordBody(1))];

    it('the hand-encoded records decode when well formed', () => {
      const d = decodeRecordsSync(withSection(Buffer.concat(good), 2));
      expect(d.map((r) => [r.offsetDelta, r.key?.toString(), r.value?.toString()])).to.deep.equal([
        [0, 'k', 'v'],
        [1, 'k', 'v'],
      ]);
    });

    const cases: [string, Buffer, number, RegExp][] = [
      ['count above the records present', Buffer.concat(good), 3, /premature EOF/],
      ['count below the records present', Buffer.concat(good), 1, /records still remaining/],
      ['a length running past the data', Buffer.from([...zz(50), ...recordBody(0)]), 1, /Invalid record size/],
      ['a length longer than the fields', rawRecord([...recordBody(0), 0, 0]), 1, /expected to read 10 bytes/],
      ['a negative header count', rawRecord(recordBody(0, zz(-1))), 1, /invalid number of record headers -1/],
      ['a header count beyond the bytes left', rawRecord(recordBody(0, zz(60))), 1, /larger than the remaining size/],
      ['a negative header key length', rawRecord(recordBody(0, [...zz(1), ...zz(-1), ...zz(-1)])), 1, /Invalid negative header key size -1/],
      ['a key length past the record', rawRecord([0, 0, 0, ...zz(40), 1, 2]), 1, /invalid record structure/],
      ['a varint of 6 bytes', rawRecord([0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]), 1, /invalid record structure/],
      ['an empty record body', rawRecord([]), 1, /invalid record structure/],
    ];
    for (const [name, section, count, msg] of cases) {
      it(name, async () => {
        const b = withSection(section, count);
        expect(() => decodeRecordsSync(b)).to.throw(InvalidRecordError, msg);
        const v = notOk(await validateRecords(b, info(b), { nowMs: T0, timestampType: TimestampType.CREATE_TIME }));
        expect(v.code).to.equal(ErrorCode.INVALID_RECORD);
        expect(v.errors).to.deep.equal([]);
      });
    }

    it('a record count of 0 reads nothing, whatever follows (as Kafka\'s iterator)', () => {
      expect(decodeRecordsSync(withSection(Buffer.concat(good), 0))).to.deep.equal([]);
    });

    it('the same structure errors inside compressed data', async () => {
      const b = withSection(Buffer.concat(good), 3);
      const gz = await buildBatch({ records: [{ key: 'a', value: 'b' }], compression: Codec.GZIP });
      // Take the gzip batch header and put a gzip of the malformed section behind it.
      const zlib = await import('node:zlib');
      const bad = Buffer.concat([gz.subarray(0, RECORDS_OFFSET), zlib.gzipSync(b.subarray(RECORDS_OFFSET))]);
      bad.writeInt32BE(bad.length - 12, 8);
      bad.writeInt32BE(3, RECORDS_COUNT_OFFSET);
      bad.writeUInt32BE(computeBatchCrc(bad, 0, bad.length), CRC_OFFSET);
      let err: unknown;
      await decodeRecords(bad).catch((e) => (err = e));
      expect(err).to.be.instanceOf(InvalidRecordError);
    });
  });

  describe('validateRecords (LogValidator per-record checks)', () => {
    const opts = { nowMs: T0, timestampType: TimestampType.CREATE_TIME, beforeMaxMs: 10, afterMaxMs: 10 };

    it('accepts valid records and reports the true max timestamp and its offsetDelta', async () => {
      for (const codec of [Codec.NONE, Codec.SNAPPY, Codec.ZSTD]) {
        const b = await buildBatch({ records: RECORDS, compression: codec });
        const v = await validateRecords(b, info(b), opts);
        expect(v).to.deep.equal({ ok: true, maxTimestamp: T0 + 5, offsetDeltaOfMaxTimestamp: 1, innerOffsetsSequential: true });
      }
    });

    it('checks every record: one older than the first record is caught (the header check cannot see it)', async () => {
      const b = await buildBatch({ records: [{ value: 'a', timestamp: T0 }, { value: 'b', timestamp: T0 - 11 }, { value: 'c', timestamp: T0 + 11 }] });
      const v = notOk(await validateRecords(b, info(b), opts));
      expect(v.code).to.equal(ErrorCode.INVALID_TIMESTAMP);
      expect(v.message).to.equal('One or more records have been rejected due to invalid timestamp');
      expect(v.errors.map((e) => e.batchIndex)).to.deep.equal([1, 2]);
      expect(v.errors[0].message).to.equal(
        `Timestamp ${T0 - 11} of message with offset 1 is out of range. The timestamp should be within [${T0 - 10}, ${T0 + 10}]`,
      );
    });

    it('compacted topics need keys: INVALID_RECORD with the records at fault', async () => {
      const b = buildBatchSync({ records: RECORDS });
      const v = notOk(await validateRecords(b, info(b), { ...opts, beforeMaxMs: 1e9, afterMaxMs: 1e9, compacted: true }));
      expect(v.code).to.equal(ErrorCode.INVALID_RECORD);
      expect(v.errors).to.deep.equal([{ batchIndex: 1, message: 'Compacted topic cannot accept message without key' }]);
      expect(v.message).to.match(/^One or more records have been rejected due to 1 record errors in total/);
    });

    it('a key error and a timestamp error: INVALID_TIMESTAMP wins, both are listed', async () => {
      const b = buildBatchSync({ records: [{ key: null, value: 'a', timestamp: T0 }, { key: 'k', value: 'b', timestamp: T0 + 100 }] });
      const v = notOk(await validateRecords(b, info(b), { ...opts, compacted: true }));
      expect(v.code).to.equal(ErrorCode.INVALID_TIMESTAMP);
      expect(v.errors.map((e) => e.batchIndex)).to.deep.equal([0, 1]);
    });

    it('LogAppendTime bit from a producer on a LogAppendTime topic: INVALID_TIMESTAMP for every record', async () => {
      const b = buildBatchSync({ records: RECORDS.slice(0, 2), timestampType: TimestampType.LOG_APPEND_TIME, logAppendTimeMs: T0 });
      const v = notOk(await validateRecords(b, info(b), { ...opts, timestampType: TimestampType.LOG_APPEND_TIME }));
      expect(v.code).to.equal(ErrorCode.INVALID_TIMESTAMP);
      expect(v.errors.map((e) => e.batchIndex)).to.deep.equal([0, 1]);
      // On a CreateTime topic its records carry maxTimestamp, which is in range: accepted.
      expect((await validateRecords(b, info(b), opts)).ok).to.equal(true);
    });

    it('timestamps of -1 are not range-checked on a CreateTime topic', async () => {
      const b = buildBatchSync({ records: [{ value: 'a', timestamp: -1 }] });
      expect((await validateRecords(b, info(b), opts)).ok).to.equal(true);
    });

    it('reports inner offsets that are not 0, 1, 2... (Kafka re-builds such compressed batches)', async () => {
      const b = buildBatchSync({ records: [{ value: 'a', offsetDelta: 0 }, { value: 'b', offsetDelta: 2 }], compression: Codec.GZIP, lastOffsetDelta: 1 });
      const v = await validateRecords(b, info(b), { ...opts, beforeMaxMs: undefined, afterMaxMs: undefined });
      expect(v.ok && v.innerOffsetsSequential).to.equal(false);
    });

    it('validateRecordsInline: uncompressed and small batches of a codec with a sync path at once; others left to validateRecords', async () => {
      const plain = buildBatchSync({ records: RECORDS.slice(0, 3) });
      expect(validateRecordsInline(plain, info(plain), opts)).to.deep.equal(await validateRecords(plain, info(plain), opts));
      const long = { ...opts, beforeMaxMs: 1e9, afterMaxMs: 1e9, maxDecompressedBytes: 1 << 20 };
      for (const codec of [Codec.GZIP, Codec.SNAPPY, Codec.LZ4, Codec.ZSTD]) {
        const small = await buildBatch({ records: RECORDS.slice(0, 4), compression: codec });
        const inline = validateRecordsInline(small, info(small), long);
        if (hasSyncCodec(codec)) expect(inline, `codec ${codec}`).to.deep.equal(await validateRecords(small, info(small), long));
        else expect(inline).to.equal(null);
        // Over 64 KiB decompressed (RECORDS[4] is 100,000 bytes): decompressed off the event loop instead.
        const big = await buildBatch({ records: RECORDS, compression: codec });
        expect(validateRecordsInline(big, info(big), long), `codec ${codec}`).to.equal(null);
        expect((await validateRecords(big, info(big), long)).ok).to.equal(true);
      }
      // Over the caller's own bound, which is below the inline cap: refused there and then.
      const gz = await buildBatch({ records: RECORDS, compression: Codec.GZIP });
      expect(notOk(validateRecordsInline(gz, info(gz), { ...long, maxDecompressedBytes: 1000 })!).code).to.equal(ErrorCode.UNKNOWN_SERVER_ERROR);
    });

    // Kafka's codec streams throw KafkaException, which its ReplicaManager answers UNKNOWN_SERVER_ERROR.
    it('undecodable compressed data is UNKNOWN_SERVER_ERROR', async () => {
      const b = await buildBatch({ records: RECORDS, compression: Codec.LZ4 });
      b[RECORDS_OFFSET + 10] ^= 0xff;
      b[RECORDS_OFFSET + 11] ^= 0xff;
      b.writeUInt32BE(computeBatchCrc(b, 0, b.length), CRC_OFFSET);
      expect(notOk(await validateRecords(b, info(b), opts)).code).to.equal(ErrorCode.UNKNOWN_SERVER_ERROR);
    });

    it('a gzip stream cut short is INVALID_RECORD "premature EOF" (Kafka: an EOFException)', async () => {
      const whole = await buildBatch({ records: RECORDS, compression: Codec.GZIP });
      const b = Buffer.from(whole.subarray(0, whole.length - 12));
      b.writeInt32BE(b.length - 12, 8);
      b.writeUInt32BE(computeBatchCrc(b, 0, b.length), CRC_OFFSET);
      const v = notOk(await validateRecords(b, info(b), opts));
      expect(v).to.include({ code: ErrorCode.INVALID_RECORD, message: 'Incorrect declared batch size, premature EOF reached' });
    });

    it('works on a batch in the middle of a Produce buffer, after assignOffsets', async () => {
      const buf = Buffer.concat([buildBatchSync({ records: RECORDS.slice(0, 1) }), await buildBatch({ records: RECORDS, compression: Codec.SNAPPY })]);
      const r = scanBatches(buf, { requireSingleBatch: false });
      if (!r.ok) throw new Error(r.errorMessage);
      assignOffsets(buf, r.batches[1], 500, 1, null);
      const v = await validateRecords(buf, r.batches[1], { ...opts, beforeMaxMs: 1e9, afterMaxMs: 1e9 });
      expect(v.ok).to.equal(true);
    });
  });

  describe('control records', () => {
    it('buildEndTxnMarker writes a transactional control batch with the COMMIT/ABORT key and coordinator epoch', () => {
      for (const commit of [true, false]) {
        const b = buildEndTxnMarker({ commit, producerId: 77, producerEpoch: 4, coordinatorEpoch: 12, baseOffset: 30, partitionLeaderEpoch: 2, timestamp: T0 });
        const h = info(b);
        expect(h).to.include({ isControl: true, isTransactional: true, producerId: 77, producerEpoch: 4, baseSequence: -1, baseOffset: 30, recordCount: 1, compression: Compression.NONE });
        const [rec] = decodeRecordsSync(b);
        expect(parseControlRecordType(rec.key)).to.equal(commit ? ControlRecordType.COMMIT : ControlRecordType.ABORT);
        expect(rec.value?.readInt16BE(0)).to.equal(0);
        expect(rec.value?.readInt32BE(2)).to.equal(12);
        expect(rec.offset).to.equal(30);
        // A client may not write one.
        const s = scanBatches(Buffer.from(b).fill(0, 0, 8));
        expect(s.ok ? 0 : s.errorCode).to.equal(ErrorCode.INVALID_RECORD);
      }
      expect(parseControlRecordType(null)).to.equal(-1);
      expect(parseControlRecordType(Buffer.from([0, 0]))).to.equal(-1);
    });
  });
});
