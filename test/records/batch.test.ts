import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ErrorCode } from '../../src/common/errors';
import {
  assignOffsets,
  ATTRIBUTES_OFFSET,
  BASE_OFFSET_OFFSET,
  BASE_SEQUENCE_OFFSET,
  BASE_TIMESTAMP_OFFSET,
  BatchInfo,
  checkTimestamps,
  Compression,
  computeBatchCrc,
  CONTROL_FLAG_MASK,
  CRC_OFFSET,
  LAST_OFFSET_DELTA_OFFSET,
  MAGIC_OFFSET,
  MAX_TIMESTAMP_OFFSET,
  PARTITION_LEADER_EPOCH_OFFSET,
  PRODUCER_EPOCH_OFFSET,
  PRODUCER_ID_OFFSET,
  readBatchHeader,
  readInt64,
  RECORDS_COUNT_OFFSET,
  scanBatches,
  ScanOk,
  ScanResult,
  TIMESTAMP_TYPE_MASK,
  TimestampType,
  walkBatches,
  writeInt64,
} from '../../src/records/batch';
import { crc32c } from '../../src/records/crc32c';
import { BuildBatchOptions, buildBatchSync, decodeRecordsSync } from '../../src/records/records';
import { FIXTURE_DIR } from './fixture-util';

const T0 = 1700000000000;

function batch(n = 3, extra: Partial<BuildBatchOptions> = {}): Buffer {
  return buildBatchSync({
    records: Array.from({ length: n }, (_, i) => ({ key: `k${i}`, value: `value-${i}`, timestamp: T0 + i })),
    producerId: 42,
    producerEpoch: 3,
    baseSequence: 10,
    ...extra,
  });
}

/** Change header bytes, then make the CRC right again (so only the change itself is tested). */
function patched(buf: Buffer, change: (b: Buffer) => void, fixCrc = true): Buffer {
  const b = Buffer.from(buf);
  change(b);
  if (fixCrc) b.writeUInt32BE(computeBatchCrc(b, 0, b.length), CRC_OFFSET);
  return b;
}

function ok(r: ScanResult): ScanOk {
  if (!r.ok) throw new Error(`expected ok, got ${r.errorCode}: ${r.errorMessage}`);
  return r;
}

function err(r: ScanResult): { code: number; message: string } {
  if (r.ok) throw new Error('expected an error, got ok');
  return { code: r.errorCode, message: r.errorMessage };
}

function crcValid(buf: Buffer, b: BatchInfo): boolean {
  return crc32c(buf, b.position + ATTRIBUTES_OFFSET, b.position + b.size) === buf.readUInt32BE(b.position + CRC_OFFSET);
}

describe('records/batch', () => {
  describe('layout', () => {
    it('the named offsets are where the Java client puts the fields', () => {
      const b = batch(3);
      expect(readInt64(b, BASE_OFFSET_OFFSET)).to.equal(0);
      expect(b.readInt32BE(8)).to.equal(b.length - 12);
      expect(b.readInt32BE(PARTITION_LEADER_EPOCH_OFFSET)).to.equal(-1);
      expect(b.readInt8(MAGIC_OFFSET)).to.equal(2);
      expect(b.readUInt32BE(CRC_OFFSET)).to.equal(crc32c(b, 21));
      expect(b.readInt16BE(ATTRIBUTES_OFFSET)).to.equal(0);
      expect(b.readInt32BE(LAST_OFFSET_DELTA_OFFSET)).to.equal(2);
      expect(readInt64(b, BASE_TIMESTAMP_OFFSET)).to.equal(T0);
      expect(readInt64(b, MAX_TIMESTAMP_OFFSET)).to.equal(T0 + 2);
      expect(readInt64(b, PRODUCER_ID_OFFSET)).to.equal(42);
      expect(b.readInt16BE(PRODUCER_EPOCH_OFFSET)).to.equal(3);
      expect(b.readInt32BE(BASE_SEQUENCE_OFFSET)).to.equal(10);
      expect(b.readInt32BE(RECORDS_COUNT_OFFSET)).to.equal(3);
    });

    it('int64 helpers round-trip safe integers, negative ones included', () => {
      const b = Buffer.alloc(8);
      for (const v of [0, 1, -1, 2 ** 32, -(2 ** 32), 2 ** 32 - 1, T0, Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER, -12345678901]) {
        writeInt64(b, 0, v);
        expect(b.readBigInt64BE(0)).to.equal(BigInt(v));
        expect(readInt64(b, 0)).to.equal(v);
      }
      b.writeBigInt64BE(2n ** 60n);
      expect(Number.isNaN(readInt64(b, 0))).to.equal(true);
      expect(() => writeInt64(b, 0, 2 ** 60)).to.throw(RangeError);
    });
  });

  describe('scanBatches', () => {
    it('reads one valid batch: header fields, totals, no copy', () => {
      const b = batch(3, { compression: Compression.GZIP, isTransactional: true });
      const r = ok(scanBatches(b, { produceVersion: 11 }));
      expect(r.batches).to.have.length(1);
      const h = r.batches[0];
      expect(h).to.include({
        position: 0,
        size: b.length,
        baseOffset: 0,
        partitionLeaderEpoch: -1,
        magic: 2,
        recordCount: 3,
        lastOffsetDelta: 2,
        baseTimestamp: T0,
        maxTimestamp: T0 + 2,
        compression: Compression.GZIP,
        timestampType: TimestampType.CREATE_TIME,
        isTransactional: true,
        isControl: false,
        hasDeleteHorizon: false,
        producerId: 42,
        producerEpoch: 3,
        baseSequence: 10,
        crc: b.readUInt32BE(CRC_OFFSET),
      });
      expect(r).to.include({ totalRecords: 3, validBytes: b.length, firstTimestamp: T0, maxTimestamp: T0 + 2, batchIndexOfMaxTimestamp: 0 });
    });

    it('no batch at all is INVALID_RECORD: empty, under 12 bytes, a first batch running past the buffer', () => {
      const b = batch(3);
      for (const input of [Buffer.alloc(0), b.subarray(0, 11), b.subarray(0, 16), b.subarray(0, 60), b.subarray(0, b.length - 1)]) {
        const e = err(scanBatches(input, { produceVersion: 9 }));
        expect(e.code, `${input.length} bytes`).to.equal(ErrorCode.INVALID_RECORD);
        expect(e.message).to.equal('Produce requests with version 9 must have at least one record batch per partition');
      }
    });

    it('a batch length below 14 is CORRUPT_MESSAGE', () => {
      for (const len of [13, 0, -5]) {
        const b = patched(batch(1), (x) => x.writeInt32BE(len, 8), false);
        expect(err(scanBatches(b)).code).to.equal(ErrorCode.CORRUPT_MESSAGE);
      }
    });

    it('a v2 batch smaller than its 61-byte header is CORRUPT_MESSAGE', () => {
      const b = batch(1).subarray(0, 40);
      const short = Buffer.from(b);
      short.writeInt32BE(40 - 12, 8);
      const e = err(scanBatches(short));
      expect(e.code).to.equal(ErrorCode.CORRUPT_MESSAGE);
      expect(e.message).to.match(/smaller than the minimum allowed overhead 61/);
    });

    it('a bad CRC is CORRUPT_MESSAGE, whichever CRC-covered byte changed', () => {
      const b = batch(3);
      for (const at of [ATTRIBUTES_OFFSET, LAST_OFFSET_DELTA_OFFSET + 3, PRODUCER_ID_OFFSET + 7, b.length - 1, 70]) {
        const bad = patched(b, (x) => (x[at] ^= 0x01), false);
        const e = err(scanBatches(bad));
        expect(e.code, `byte ${at}`).to.equal(ErrorCode.CORRUPT_MESSAGE);
        expect(e.message).to.match(/^Record is corrupt \(stored crc = \d+, computed crc = \d+\)$/);
      }
      const badCrc = patched(b, (x) => (x[CRC_OFFSET] ^= 0xff), false);
      expect(err(scanBatches(badCrc)).code).to.equal(ErrorCode.CORRUPT_MESSAGE);
      expect(ok(scanBatches(badCrc, { verifyCrc: false })).batches).to.have.length(1);
    });

    it('the partition leader epoch is outside the CRC and not checked', () => {
      const b = patched(batch(3), (x) => x.writeInt32BE(99, PARTITION_LEADER_EPOCH_OFFSET), false);
      expect(ok(scanBatches(b)).batches[0].partitionLeaderEpoch).to.equal(99);
    });

    it('a magic byte outside 0..2 is CORRUPT_MESSAGE; magic 0 or 1 is INVALID_RECORD (Produce v3+)', () => {
      for (const m of [3, 127, -1]) {
        const e = err(scanBatches(patched(batch(1), (x) => x.writeInt8(m, MAGIC_OFFSET), false)));
        expect(e).to.deep.equal({ code: ErrorCode.CORRUPT_MESSAGE, message: `Invalid magic found in record: ${m}` });
      }
      for (const m of [0, 1]) {
        const e = err(scanBatches(patched(batch(1), (x) => x.writeInt8(m, MAGIC_OFFSET), false), { produceVersion: 3 }));
        expect(e).to.deep.equal({
          code: ErrorCode.INVALID_RECORD,
          message: 'Produce requests with version 3 are only allowed to contain record batches with magic version 2',
        });
      }
    });

    it('a real magic-0 message set (librdkafka, when the broker lacks MsgVer2 APIs) is INVALID_RECORD', () => {
      const legacy = fs.readFileSync(path.join(FIXTURE_DIR, 'librdkafka-magic0-none.bin'));
      expect(legacy.readInt8(16)).to.equal(0);
      expect(err(scanBatches(legacy)).code).to.equal(ErrorCode.INVALID_RECORD);
    });

    it('more than one batch is INVALID_RECORD for Produce; allowed with requireSingleBatch: false', () => {
      const two = Buffer.concat([batch(2), batch(3)]);
      const e = err(scanBatches(two, { produceVersion: 11 }));
      expect(e).to.deep.equal({
        code: ErrorCode.INVALID_RECORD,
        message: 'Produce requests with version 11 are only allowed to contain exactly one record batch per partition',
      });
      const r = ok(scanBatches(two, { requireSingleBatch: false }));
      expect(r.batches.map((x) => [x.position, x.recordCount])).to.deep.equal([
        [0, 2],
        [batch(2).length, 3],
      ]);
      expect(r.totalRecords).to.equal(5);
      expect(r.validBytes).to.equal(two.length);
      expect(r.batchIndexOfMaxTimestamp).to.equal(1);
    });

    it('trailing bytes that do not form a batch are dropped as Kafka drops them (validBytes)', () => {
      const b = batch(3);
      for (const tail of [Buffer.alloc(5), batch(2).subarray(0, 30), batch(2).subarray(0, batch(2).length - 1)]) {
        const r = ok(scanBatches(Buffer.concat([b, tail])));
        expect(r.validBytes).to.equal(b.length);
        expect(r.batches).to.have.length(1);
      }
    });

    it('trailing bytes with a bad length or magic are CORRUPT_MESSAGE', () => {
      const b = batch(3);
      const badLen = Buffer.alloc(20);
      badLen.writeInt32BE(3, 8);
      expect(err(scanBatches(Buffer.concat([b, badLen]))).code).to.equal(ErrorCode.CORRUPT_MESSAGE);
      const badMagic = Buffer.from(batch(2).subarray(0, 30));
      badMagic.writeInt8(9, MAGIC_OFFSET);
      expect(err(scanBatches(Buffer.concat([b, badMagic]))).code).to.equal(ErrorCode.CORRUPT_MESSAGE);
    });

    it('a batch over max.message.bytes (batchLength + 12) is MESSAGE_TOO_LARGE, checked before the CRC', () => {
      const b = batch(3);
      expect(ok(scanBatches(b, { maxBatchBytes: b.length })).batches).to.have.length(1);
      const e = err(scanBatches(b, { maxBatchBytes: b.length - 1 }));
      expect(e.code).to.equal(ErrorCode.MESSAGE_TOO_LARGE);
      expect(e.message).to.contain(`${b.length} bytes`);
      const badCrc = patched(b, (x) => (x[70] ^= 1), false);
      expect(err(scanBatches(badCrc, { maxBatchBytes: 100 })).code).to.equal(ErrorCode.MESSAGE_TOO_LARGE);
    });

    it('compression ids 5-7 are UNKNOWN_SERVER_ERROR (Kafka: IllegalArgumentException from CompressionType.forId)', () => {
      for (const id of [5, 6, 7]) {
        const b = patched(batch(1), (x) => x.writeInt16BE(id, ATTRIBUTES_OFFSET));
        expect(err(scanBatches(b, { produceVersion: 11 }))).to.deep.equal({ code: ErrorCode.UNKNOWN_SERVER_ERROR, message: `Unknown compression type id: ${id}` });
        expect(err(scanBatches(b, { produceVersion: 5 })).code).to.equal(ErrorCode.UNKNOWN_SERVER_ERROR);
      }
    });

    it('zstd before Produce v7 is UNSUPPORTED_COMPRESSION_TYPE; from v7 it is fine', () => {
      const b = patched(batch(1), (x) => x.writeInt16BE(Compression.ZSTD, ATTRIBUTES_OFFSET));
      expect(err(scanBatches(b, { produceVersion: 6 }))).to.deep.equal({
        code: ErrorCode.UNSUPPORTED_COMPRESSION_TYPE,
        message: 'Produce requests with version 6 are not allowed to use ZStandard compression',
      });
      expect(ok(scanBatches(b, { produceVersion: 7 })).batches[0].compression).to.equal(Compression.ZSTD);
    });

    it('recordCount and lastOffsetDelta must agree (count = delta + 1 > 0): INVALID_RECORD', () => {
      const cases: [string, (x: Buffer) => void, RegExp][] = [
        ['delta = count', (x) => x.writeInt32BE(3, LAST_OFFSET_DELTA_OFFSET), /Inconsistent batch offset range \[0, 3\] and count of records 3/],
        ['delta < count - 1', (x) => x.writeInt32BE(0, LAST_OFFSET_DELTA_OFFSET), /Inconsistent/],
        ['delta -1', (x) => x.writeInt32BE(-1, LAST_OFFSET_DELTA_OFFSET), /invalid offset range/],
        ['count 0', (x) => x.writeInt32BE(0, RECORDS_COUNT_OFFSET), /Invalid reported count for record batch: 0/],
        ['count -1', (x) => x.writeInt32BE(-1, RECORDS_COUNT_OFFSET), /Invalid reported count/],
      ];
      for (const [name, change, msg] of cases) {
        const e = err(scanBatches(patched(batch(3), change)));
        expect(e.code, name).to.equal(ErrorCode.INVALID_RECORD);
        expect(e.message, name).to.match(msg);
        expect(ok(scanBatches(patched(batch(3), change), { fromClient: false })).batches, name).to.have.length(1);
      }
    });

    it('client rules: control batches, a producer id without a sequence, a baseOffset other than 0', () => {
      const control = patched(batch(1), (x) => x.writeInt16BE(CONTROL_FLAG_MASK, ATTRIBUTES_OFFSET));
      expect(err(scanBatches(control))).to.deep.equal({ code: ErrorCode.INVALID_RECORD, message: 'Clients are not allowed to write control records' });
      const noSeq = patched(batch(1), (x) => x.writeInt32BE(-1, BASE_SEQUENCE_OFFSET));
      expect(err(scanBatches(noSeq)).message).to.equal('Invalid sequence number -1 in record batch with producerId 42');
      expect(ok(scanBatches(batch(1, { producerId: -1, producerEpoch: -1, baseSequence: -1 }))).batches[0].producerId).to.equal(-1);
      const offset = patched(batch(1), (x) => writeInt64(x, BASE_OFFSET_OFFSET, 5), false);
      expect(err(scanBatches(offset)).code).to.equal(ErrorCode.INVALID_RECORD);
      for (const b of [control, noSeq, offset]) expect(scanBatches(b, { fromClient: false }).ok).to.equal(true);
    });

    it('int64 fields beyond 2^53 are refused (INVALID_RECORD), not rounded', () => {
      const b = patched(batch(1), (x) => x.writeBigInt64BE(2n ** 62n, PRODUCER_ID_OFFSET));
      const e = err(scanBatches(b));
      expect(e.code).to.equal(ErrorCode.INVALID_RECORD);
      expect(e.message).to.contain('producerId');
    });

    it('reads the header of every batch real clients sent (captured Produce bytes)', () => {
      const files = fs.readdirSync(FIXTURE_DIR).filter((f) => f.endsWith('.bin') && !f.startsWith('librdkafka-magic0') && !f.startsWith('cli-'));
      expect(files.length).to.be.at.least(15);
      for (const f of files) {
        const r = ok(scanBatches(fs.readFileSync(path.join(FIXTURE_DIR, f)), { produceVersion: 11 }));
        expect(r.totalRecords, f).to.equal(4);
        expect(r.batches[0].lastOffsetDelta, f).to.equal(3);
      }
    });
  });

  describe('assignOffsets', () => {
    it('CreateTime: writes baseOffset and leader epoch, keeps the CRC, and readers see the new offsets', () => {
      const b = batch(3, { compression: Compression.LZ4 });
      const crcBefore = b.readUInt32BE(CRC_OFFSET);
      const info = ok(scanBatches(b)).batches[0];
      assignOffsets(b, info, 1234567, 9, null);
      expect(b.readUInt32BE(CRC_OFFSET)).to.equal(crcBefore);
      expect(crcValid(b, info)).to.equal(true);
      const again = ok(scanBatches(b, { fromClient: false })).batches[0];
      expect(again).to.deep.equal(info);
      expect(again).to.include({ baseOffset: 1234567, partitionLeaderEpoch: 9, timestampType: TimestampType.CREATE_TIME });
      expect(decodeRecordsSync(b).map((r) => r.offset)).to.deep.equal([1234567, 1234568, 1234569]);
    });

    it('offsets above 2^32 are written exactly', () => {
      const b = batch(2);
      const info = ok(scanBatches(b)).batches[0];
      assignOffsets(b, info, 2 ** 40 + 5, 1, null);
      expect(b.readBigInt64BE(0)).to.equal(2n ** 40n + 5n);
      expect(decodeRecordsSync(b).map((r) => r.offset)).to.deep.equal([2 ** 40 + 5, 2 ** 40 + 6]);
    });

    it('LogAppendTime: sets the type bit and maxTimestamp, keeps baseTimestamp, recomputes the CRC', () => {
      const b = batch(3, { compression: Compression.SNAPPY, isTransactional: true });
      const crcBefore = b.readUInt32BE(CRC_OFFSET);
      const info = ok(scanBatches(b)).batches[0];
      const lat = T0 + 60000;
      assignOffsets(b, info, 100, 2, lat);
      expect(b.readInt16BE(ATTRIBUTES_OFFSET)).to.equal(Compression.SNAPPY | TIMESTAMP_TYPE_MASK | 0x10);
      expect(readInt64(b, MAX_TIMESTAMP_OFFSET)).to.equal(lat);
      expect(readInt64(b, BASE_TIMESTAMP_OFFSET)).to.equal(T0);
      expect(b.readUInt32BE(CRC_OFFSET)).to.not.equal(crcBefore);
      expect(crcValid(b, info)).to.equal(true);
      expect(info).to.include({ timestampType: TimestampType.LOG_APPEND_TIME, maxTimestamp: lat, baseOffset: 100, crc: b.readUInt32BE(CRC_OFFSET) });
      expect(ok(scanBatches(b, { fromClient: false })).batches[0]).to.deep.equal(info);
      // Every record now reads the append time, as Kafka's readers do for LogAppendTime batches.
      expect(decodeRecordsSync(b).map((r) => r.timestamp)).to.deep.equal([lat, lat, lat]);
    });

    it('CreateTime topic, batch that carries the LogAppendTime bit: the bit is cleared and the CRC fixed', () => {
      const b = batch(2, { timestampType: TimestampType.LOG_APPEND_TIME, logAppendTimeMs: T0 + 5 });
      const info = ok(scanBatches(b)).batches[0];
      expect(info.timestampType).to.equal(TimestampType.LOG_APPEND_TIME);
      assignOffsets(b, info, 0, 0, null);
      expect(b.readInt16BE(ATTRIBUTES_OFFSET) & TIMESTAMP_TYPE_MASK).to.equal(0);
      expect(readInt64(b, MAX_TIMESTAMP_OFFSET)).to.equal(T0 + 5);
      expect(crcValid(b, info)).to.equal(true);
    });

    it('CreateTime with the records\' true max timestamp: a wrong header maxTimestamp is corrected, CRC fixed', () => {
      const b = patched(batch(3), (x) => writeInt64(x, MAX_TIMESTAMP_OFFSET, T0 + 999));
      const info = ok(scanBatches(b)).batches[0];
      const crcBefore = info.crc;
      assignOffsets(b, info, 7, 1, null, T0 + 2);
      expect(readInt64(b, MAX_TIMESTAMP_OFFSET)).to.equal(T0 + 2);
      expect(info.crc).to.not.equal(crcBefore);
      expect(crcValid(b, info)).to.equal(true);
      // The same value again changes nothing, CRC included.
      const same = Buffer.from(b);
      assignOffsets(b, info, 7, 1, null, T0 + 2);
      expect(b.equals(same)).to.equal(true);
    });

    it('patches a batch in the middle of a buffer without touching its neighbours', () => {
      const first = batch(2);
      const buf = Buffer.concat([first, batch(3), batch(1)]);
      const copy = Buffer.from(buf);
      const r = ok(scanBatches(buf, { requireSingleBatch: false }));
      assignOffsets(buf, r.batches[1], 50, 4, T0 + 1);
      expect(buf.subarray(0, first.length).equals(copy.subarray(0, first.length))).to.equal(true);
      const tail = r.batches[2].position;
      expect(buf.subarray(tail).equals(copy.subarray(tail))).to.equal(true);
      const again = ok(scanBatches(buf, { requireSingleBatch: false, fromClient: false }));
      expect(again.batches[1]).to.include({ baseOffset: 50, partitionLeaderEpoch: 4, maxTimestamp: T0 + 1 });
    });
  });

  describe('checkTimestamps (header only)', () => {
    const now = T0 + 1000;
    const info = (extra: Partial<BatchInfo>): BatchInfo => ({ ...ok(scanBatches(batch(3))).batches[0], ...extra });

    it('accepts a batch inside [now - before, now + after], bounds included', () => {
      expect(checkTimestamps(info({ baseTimestamp: now - 100, maxTimestamp: now + 100 }), now, 100, 100)).to.equal(null);
    });

    it('refuses a maxTimestamp too far ahead or a baseTimestamp too old: INVALID_TIMESTAMP', () => {
      expect(checkTimestamps(info({ baseTimestamp: now, maxTimestamp: now + 101 }), now, 100, 100)?.errorCode).to.equal(ErrorCode.INVALID_TIMESTAMP);
      expect(checkTimestamps(info({ baseTimestamp: now - 101, maxTimestamp: now }), now, 100, 100)?.errorCode).to.equal(ErrorCode.INVALID_TIMESTAMP);
    });

    it('skips -1 (no timestamp), and empty batches', () => {
      expect(checkTimestamps(info({ baseTimestamp: -1, maxTimestamp: -1 }), now, 0, 0)).to.equal(null);
      expect(checkTimestamps(info({ recordCount: 0, maxTimestamp: now + 1e9 }), now, 0, 0)).to.equal(null);
    });

    it('LogAppendTime bit from a producer: refused on a LogAppendTime topic, range-checked on a CreateTime one', () => {
      const lat = info({ timestampType: TimestampType.LOG_APPEND_TIME, maxTimestamp: now });
      expect(checkTimestamps(lat, now, 10, 10, TimestampType.LOG_APPEND_TIME)?.errorCode).to.equal(ErrorCode.INVALID_TIMESTAMP);
      expect(checkTimestamps(lat, now, 10, 10, TimestampType.CREATE_TIME)).to.equal(null);
      expect(checkTimestamps({ ...lat, maxTimestamp: now + 11 }, now, 10, 10)?.errorCode).to.equal(ErrorCode.INVALID_TIMESTAMP);
      expect(checkTimestamps({ ...lat, maxTimestamp: -1 }, now, 10, 10)?.errorCode).to.equal(ErrorCode.INVALID_TIMESTAMP);
    });

    it('a LogAppendTime topic does not range-check producer timestamps', () => {
      expect(checkTimestamps(info({ baseTimestamp: 0, maxTimestamp: 1 }), now, 10, 10, TimestampType.LOG_APPEND_TIME)).to.equal(null);
    });
  });

  describe('readBatchHeader / walkBatches (storage recovery)', () => {
    const b1 = batch(2);
    const b2 = batch(3, { compression: Compression.GZIP });
    const b3 = batch(1);

    it('walks whole valid batches and stops at a torn tail', () => {
      const file = Buffer.concat([b1, b2, b3.subarray(0, b3.length - 3)]);
      const w = walkBatches(file);
      expect(w.batches.map((b) => b.position)).to.deep.equal([0, b1.length]);
      expect(w.validBytes).to.equal(b1.length + b2.length);
      expect(w.stop).to.deep.include({ position: b1.length + b2.length, status: 'incomplete' });
      const all = walkBatches(Buffer.concat([b1, b2, b3]));
      expect(all.stop).to.equal(null);
      expect(all.validBytes).to.equal(b1.length + b2.length + b3.length);
    });

    it('stops at a batch whose CRC does not match', () => {
      const bad = Buffer.from(b2);
      bad[bad.length - 1] ^= 1;
      const w = walkBatches(Buffer.concat([b1, bad, b3]));
      expect(w.batches).to.have.length(1);
      expect(w.stop).to.deep.include({ position: b1.length, status: 'corrupt' });
      expect(w.stop?.reason).to.match(/CRC mismatch/);
      expect(walkBatches(Buffer.concat([b1, bad, b3]), { verifyCrc: false }).batches).to.have.length(3);
    });

    it('without verifyCrc the 61-byte header is enough, and `needed` tells the full size', () => {
      const r = readBatchHeader(b2.subarray(0, 61), 0);
      expect(r.status).to.equal('ok');
      if (r.status === 'ok') expect(r.batch.size).to.equal(b2.length);
      expect(readBatchHeader(b2.subarray(0, 61), 0, { verifyCrc: true })).to.deep.equal({ status: 'incomplete', needed: b2.length });
      expect(readBatchHeader(b2.subarray(0, 5), 0)).to.deep.equal({ status: 'incomplete', needed: 12 });
      expect(readBatchHeader(b2.subarray(0, 30), 0)).to.deep.equal({ status: 'incomplete', needed: b2.length });
    });

    it('a zeroed region (preallocated file) or a wrong magic is corrupt', () => {
      expect(readBatchHeader(Buffer.alloc(100), 0).status).to.equal('corrupt');
      const m = Buffer.from(b1);
      m.writeInt8(1, MAGIC_OFFSET);
      expect(readBatchHeader(m, 0)).to.deep.equal({ status: 'corrupt', reason: 'magic 1 is not 2' });
    });
  });
});
