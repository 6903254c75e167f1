import { expect } from 'chai';
import * as fs from 'fs';
import * as path from 'path';
import type { TopicLogConfig } from '../../src/config/topic-config';
import { StorageError } from '../../src/storage/errors';
import { PartitionLog } from '../../src/storage/partition-log';
import type { PartitionLogOptions } from '../../src/storage/log-loader';
import { baseOffsetOf, batchBaseOffsets, concatBatches, makeBatch, segmentFiles, silentLogger, tempDirs, topicConfig } from './helpers';

describe('storage/partition-log', () => {
  const dirs = tempDirs('fjord-plog-');
  const open: PartitionLog[] = [];

  async function openLog(config: TopicLogConfig = topicConfig(), extra: Partial<PartitionLogOptions> = {}): Promise<PartitionLog> {
    const log = await PartitionLog.open({ dir: dirs.next(), topic: 't', partition: 0, config, logger: silentLogger, ...extra });
    open.push(log);
    return log;
  }

  afterEach(async () => {
    for (const log of open.splice(0)) await log.close();
  });

  async function expectStorageError(p: Promise<unknown> | (() => unknown), name: string): Promise<void> {
    try {
      await (typeof p === 'function' ? p() : p);
    } catch (e) {
      expect(e).to.be.instanceOf(StorageError);
      expect((e as StorageError).errorName).to.equal(name);
      return;
    }
    expect.fail(`expected ${name}`);
  }

  describe('append', () => {
    it('assigns offsets synchronously in call order and stamps each batch', async () => {
      const log = await openLog();
      const a = makeBatch({ records: 3, baseOffset: 999 });
      const b = concatBatches({ records: 2 }, { records: 4 });
      const ra = log.append(a);
      const rb = log.append(b);
      expect([ra.baseOffset, ra.lastOffset, rb.baseOffset, rb.lastOffset]).to.deep.equal([0, 2, 3, 8]);
      expect(log.logEndOffset).to.equal(9);
      expect(baseOffsetOf(a)).to.equal(0);
      expect(batchBaseOffsets(b)).to.deep.equal([3, 5]);
      // Nothing is readable until the write completes.
      expect(log.highWatermark).to.equal(0);
      await rb.done;
      await ra.done;
      expect(log.highWatermark).to.equal(9);
      const read = await log.readBytes(0, 1 << 20);
      expect(read.outOfRange).to.equal(false);
      if (read.outOfRange) return;
      expect(read.records.equals(Buffer.concat([a, b]))).to.equal(true);
    });

    it('coalesces many concurrent appends and keeps them in order', async () => {
      const log = await openLog();
      const results = [];
      for (let i = 0; i < 300; i++) results.push(log.append(makeBatch({ records: 1 + (i % 3), fill: i % 256 })));
      await Promise.all(results.map((r) => r.done));
      let expected = 0;
      for (const r of results) {
        expect(r.baseOffset).to.equal(expected);
        expected = r.lastOffset + 1;
      }
      const read = await log.readBytes(0, 1 << 24);
      if (read.outOfRange) return expect.fail('out of range');
      const offsets = batchBaseOffsets(read.records);
      expect(offsets).to.deep.equal(results.map((r) => r.baseOffset));
      expect(read.records[61 + 61 + 21]).to.equal(1); // the second batch's filler
    });

    it('refuses bad framing and appends larger than segment.bytes, assigning nothing', async () => {
      const log = await openLog(topicConfig({ 'segment.bytes': '200' }));
      await expectStorageError(() => log.append(makeBatch({ payload: 300 })), 'RECORD_LIST_TOO_LARGE');
      await expectStorageError(() => log.append(makeBatch().subarray(0, 70)), 'CORRUPT_MESSAGE');
      const badMagic = makeBatch();
      badMagic[16] = 1;
      await expectStorageError(() => log.append(badMagic), 'CORRUPT_MESSAGE');
      expect(log.logEndOffset).to.equal(0);
    });

    it('goes offline after a write error: pending and later appends fail with KAFKA_STORAGE_ERROR', async () => {
      const log = await openLog();
      await log.append(makeBatch()).done;
      // Pull the file out from under the segment, as a failing disk would.
      await (await log.read(0, 100).then((r) => (r.outOfRange ? undefined : r.ranges[0].file)))!.close();
      const failed = log.append(makeBatch());
      await expectStorageError(failed.done, 'KAFKA_STORAGE_ERROR');
      expect(log.offline).to.equal(true);
      await expectStorageError(() => log.append(makeBatch()), 'KAFKA_STORAGE_ERROR');
      expect(log.highWatermark).to.equal(1);
      const r = await log.readBytes(0, 100).catch((e: Error) => e);
      expect(r).to.be.instanceOf(StorageError);
    });

    it('records leader epochs from the batches', async () => {
      const log = await openLog();
      log.append(makeBatch({ records: 5, epoch: 0 }));
      log.append(makeBatch({ records: 5, epoch: 0 }));
      await log.append(makeBatch({ records: 2, epoch: 3 })).done;
      expect(log.leaderEpochEntries()).to.deep.equal([{ epoch: 0, startOffset: 0 }, { epoch: 3, startOffset: 10 }]);
      expect(log.endOffsetForEpoch(0)).to.deep.equal({ epoch: 0, endOffset: 10 });
      expect(log.endOffsetForEpoch(2)).to.deep.equal({ epoch: 0, endOffset: 10 });
      expect(log.endOffsetForEpoch(3)).to.deep.equal({ epoch: 3, endOffset: 12 });
      expect(log.epochForOffset(11)).to.equal(3);
    });
  });

  describe('read', () => {
    /** 20 batches of 5 records (offsets 0..99), 100-byte payloads, a small index interval. */
    async function filledLog(overrides: Record<string, string> = {}): Promise<{ log: PartitionLog; batches: Buffer[] }> {
      const log = await openLog(topicConfig({ 'index.interval.bytes': '300', ...overrides }));
      const batches: Buffer[] = [];
      for (let i = 0; i < 20; i++) {
        const b = makeBatch({ records: 5, payload: 100, timestamp: 10_000 + i * 10, fill: i });
        batches.push(b);
        log.append(b);
      }
      await log.flush();
      return { log, batches };
    }

    it('returns the whole batch containing the fetch offset, from anywhere in it', async () => {
      const { log, batches } = await filledLog();
      for (let offset = 0; offset < 100; offset++) {
        const r = await log.readBytes(offset, 1);
        if (r.outOfRange) return expect.fail('out of range');
        const batch = Math.floor(offset / 5);
        expect(r.firstOffset, `offset ${offset}`).to.equal(batch * 5);
        expect(r.records.equals(batches[batch]), `offset ${offset}`).to.equal(true);
      }
    });

    it('stops at whole batches within maxBytes', async () => {
      const { log, batches } = await filledLog();
      const size = batches[0].length; // 161
      const r = await log.read(12, size * 3 + 50);
      if (r.outOfRange) return expect.fail('out of range');
      expect(r.firstOffset).to.equal(10);
      expect(r.size).to.equal(size * 3);
      expect(r.ranges).to.have.length(1);
      expect(r.ranges[0].position).to.equal(size * 2);
    });

    it('reads on where the last read stopped, also after a truncation puts other batches there', async () => {
      const { log, batches } = await filledLog();
      const size = batches[0].length;
      let offset = 0;
      for (let i = 0; i < 10; i++) { // two batches a read, as a sequential consumer
        const r = await log.readBytes(offset, size * 2 + 10);
        if (r.outOfRange) return expect.fail('out of range');
        expect(r.records.equals(Buffer.concat(batches.slice(2 * i, 2 * i + 2))), `read ${i}`).to.equal(true);
        offset += 10;
      }
      // This read stops before the batch of offsets 50-54; cut below it and append batches of 3 records,
      // so that the batch holding offset 51 now starts elsewhere.
      const again = await log.readBytes(40, size * 2 + 10);
      if (again.outOfRange) return expect.fail('out of range');
      await log.truncateTo(45);
      const other = makeBatch({ records: 3, payload: 100, fill: 99 });
      for (let i = 0; i < 5; i++) await log.append(makeBatch({ records: 3, payload: 100, fill: 99 })).done;
      const after = await log.readBytes(51, 1 << 20);
      if (after.outOfRange) return expect.fail('out of range');
      expect(after.firstOffset).to.equal(51);
      expect(batchBaseOffsets(after.records)).to.deep.equal([51, 54, 57]);
      expect(after.records.subarray(after.records.length - other.length).subarray(61).equals(other.subarray(61))).to.equal(true);
    });

    it('returns the first batch even when larger than maxBytes only with minOneMessage', async () => {
      const { log, batches } = await filledLog();
      const withOne = await log.read(7, 10, { minOneMessage: true });
      if (withOne.outOfRange) return expect.fail('out of range');
      expect(withOne.size).to.equal(batches[1].length);
      const without = await log.read(7, 10, { minOneMessage: false });
      if (without.outOfRange) return expect.fail('out of range');
      expect(without.size).to.equal(0);
      expect(without.ranges).to.deep.equal([]);
    });

    it('answers out of range below the log start and above the log end; empty at the end', async () => {
      const { log } = await filledLog();
      expect((await log.read(100, 1000)).outOfRange).to.equal(false);
      const atEnd = await log.read(100, 1000);
      if (atEnd.outOfRange) return expect.fail('out of range');
      expect(atEnd.size).to.equal(0);
      expect(atEnd.highWatermark).to.equal(100);
      expect((await log.read(101, 1000)).outOfRange).to.equal(true);
      await log.deleteRecordsBefore(30);
      expect((await log.read(29, 1000)).outOfRange).to.equal(true);
      expect((await log.read(30, 1000)).outOfRange).to.equal(false);
    });

    it('stops before the batch containing maxOffset (a last stable offset)', async () => {
      const { log, batches } = await filledLog();
      const r = await log.read(0, 1 << 20, { maxOffset: 23 });
      if (r.outOfRange) return expect.fail('out of range');
      expect(r.size).to.equal(batches[0].length * 4); // batches 0..3 (offsets 0..19); 23 is in batch 4
    });

    it('reads across segments and from every offset with many index entries', async () => {
      const { log, batches } = await filledLog({ 'segment.bytes': String(161 * 6) });
      expect(log.segmentInfo().map((s) => s.baseOffset)).to.deep.equal([0, 30, 60, 90]);
      const all = await log.readBytes(0, 1 << 20);
      if (all.outOfRange) return expect.fail('out of range');
      expect(all.records.equals(Buffer.concat(batches))).to.equal(true);
      const mid = await log.readBytes(33, 161 * 4);
      if (mid.outOfRange) return expect.fail('out of range');
      expect(batchBaseOffsets(mid.records)).to.deep.equal([30, 35, 40, 45]);
    });

    it('finds the first batch by timestamp and the batch with the largest timestamp', async () => {
      const { log } = await filledLog({ 'segment.bytes': String(161 * 6) });
      const found = await log.offsetForTimestamp(10_075);
      expect(found && [found.baseOffset, found.maxTimestamp]).to.deep.equal([40, 10_080]);
      expect(found!.batch.length).to.equal(161);
      expect((await log.offsetForTimestamp(10_000))?.baseOffset).to.equal(0);
      expect(await log.offsetForTimestamp(20_000)).to.equal(null);
      // Starting past the first match: the next batch at or after the starting offset.
      expect((await log.offsetForTimestamp(10_000, 52))?.baseOffset).to.equal(50);
      const max = await log.batchWithMaxTimestamp();
      expect(max && [max.baseOffset, max.lastOffset, max.maxTimestamp]).to.deep.equal([95, 99, 10_190]);
    });
  });

  describe('rolling', () => {
    it('rolls when the next append would exceed segment.bytes, naming files by base offset', async () => {
      const log = await openLog(topicConfig({ 'segment.bytes': '400' }));
      for (let i = 0; i < 5; i++) await log.append(makeBatch({ records: 2, payload: 100 })).done; // 161 bytes each
      expect(log.segmentInfo()).to.deep.equal([
        { baseOffset: 0, size: 322 },
        { baseOffset: 4, size: 322 },
        { baseOffset: 8, size: 161 },
      ]);
      expect(segmentFiles(log.dir, '.log')).to.deep.equal(['00000000000000000000.log', '00000000000000000004.log', '00000000000000000008.log']);
      expect(segmentFiles(log.dir, '.index')).to.have.length(3);
      expect(segmentFiles(log.dir, '.timeindex')).to.have.length(3);
    });

    it('rolls when segment.ms passed between the first batch\'s timestamp and the new one', async () => {
      const log = await openLog(topicConfig({ 'segment.ms': '1000' }));
      await log.append(makeBatch({ timestamp: 50_000 })).done;
      await log.append(makeBatch({ timestamp: 51_000 })).done; // exactly segment.ms: not yet
      expect(log.segmentInfo()).to.have.length(1);
      await log.append(makeBatch({ timestamp: 51_001 })).done;
      expect(log.segmentInfo().map((s) => s.baseOffset)).to.deep.equal([0, 2]);
    });

    it('rolls by wall clock when batches carry no timestamp', async () => {
      let now = 1_000_000;
      const log = await openLog(topicConfig({ 'segment.ms': '1000' }), { now: () => now });
      await log.append(makeBatch({ timestamp: -1 })).done;
      now += 1000;
      await log.append(makeBatch({ timestamp: -1 })).done;
      expect(log.segmentInfo()).to.have.length(1);
      now += 1;
      await log.append(makeBatch({ timestamp: -1 })).done;
      expect(log.segmentInfo()).to.have.length(2);
    });

    it('rolls when the offset index is full', async () => {
      // 24 bytes: three offset index entries (and two time index entries, but equal timestamps add only one);
      // index.interval.bytes 0: an entry for every batch after the first.
      const log = await openLog(topicConfig({ 'segment.index.bytes': '24', 'index.interval.bytes': '0' }));
      for (let i = 0; i < 5; i++) await log.append(makeBatch()).done;
      expect(log.segmentInfo().map((s) => s.baseOffset)).to.deep.equal([0, 4]);
    });

    it('moves the recovery point when the rolled segment has been flushed', async () => {
      const log = await openLog(topicConfig({ 'segment.bytes': '200' }));
      await log.append(makeBatch({ records: 3, payload: 100 })).done;
      expect(log.recoveryPoint).to.equal(0);
      await log.append(makeBatch({ records: 3, payload: 100 })).done;
      await log.flush(); // also waits for the background flush of the roll
      expect(log.recoveryPoint).to.equal(6);
    });
  });

  describe('flush policy', () => {
    it('does not fsync on append by default', async () => {
      const log = await openLog();
      await log.append(makeBatch({ records: 4 })).done;
      expect(log.recoveryPoint).to.equal(0);
      await log.flush();
      expect(log.recoveryPoint).to.equal(4);
    });

    it('flush.messages=1 fsyncs before each append completes', async () => {
      const log = await openLog(topicConfig({ 'flush.messages': '1' }));
      await log.append(makeBatch({ records: 4 })).done;
      expect(log.recoveryPoint).to.equal(4);
      await log.append(makeBatch({ records: 1 })).done;
      expect(log.recoveryPoint).to.equal(5);
    });

    it('flush.messages=N fsyncs once N offsets are unflushed', async () => {
      const log = await openLog(topicConfig({ 'flush.messages': '5' }));
      await log.append(makeBatch({ records: 3 })).done;
      expect(log.recoveryPoint).to.equal(0);
      await log.append(makeBatch({ records: 3 })).done;
      expect(log.recoveryPoint).to.equal(6);
    });
  });

  describe('deleteRecordsBefore', () => {
    it('moves the log start offset and deletes whole segments below it', async () => {
      const log = await openLog(topicConfig({ 'segment.bytes': '400', 'file.delete.delay.ms': '0' }));
      for (let i = 0; i < 5; i++) await log.append(makeBatch({ records: 2, payload: 100 })).done;
      expect(await log.deleteRecordsBefore(5)).to.equal(5);
      expect(log.logStartOffset).to.equal(5);
      expect(log.segmentInfo().map((s) => s.baseOffset)).to.deep.equal([4, 8]);
      await log.segmentDeletionsSettled();
      expect(segmentFiles(log.dir, '')).to.not.include('00000000000000000000.log');
      expect(fs.readdirSync(log.dir).filter((f) => f.startsWith('00000000000000000000'))).to.deep.equal([]);
      // Reading at the new start returns the batch containing it (offsets 4-5).
      const r = await log.readBytes(5, 1);
      if (r.outOfRange) return expect.fail('out of range');
      expect(r.firstOffset).to.equal(4);
      // Never moves back; never past the high watermark.
      expect(await log.deleteRecordsBefore(2)).to.equal(5);
      await expectStorageError(log.deleteRecordsBefore(11), 'OFFSET_OUT_OF_RANGE');
      expect(await log.deleteRecordsBefore(10)).to.equal(10);
      expect(log.segmentInfo().map((s) => s.baseOffset)).to.deep.equal([8]);
    });

    it('keeps a deleted segment readable until file.delete.delay.ms passes', async () => {
      const log = await openLog(topicConfig({ 'segment.bytes': '200', 'file.delete.delay.ms': '60000' }));
      await log.append(makeBatch({ records: 2, payload: 100 })).done;
      await log.append(makeBatch({ records: 2, payload: 100 })).done;
      const before = await log.read(0, 1000);
      if (before.outOfRange) return expect.fail('out of range');
      await log.deleteRecordsBefore(2);
      expect(fs.readdirSync(log.dir)).to.include('00000000000000000000.log.deleted');
      const first = before.ranges[0];
      expect(first.length).to.equal(161);
      const buf = Buffer.alloc(first.length);
      const { bytesRead } = await first.file.read(buf, 0, first.length, first.position);
      expect(bytesRead).to.equal(first.length);
      expect(baseOffsetOf(buf)).to.equal(0);
      await log.close(); // close removes it at once
      expect(fs.readdirSync(log.dir).filter((f) => f.endsWith('.deleted'))).to.deep.equal([]);
    });
  });

  describe('truncateTo', () => {
    it('removes the batches at and after the offset; the next append reuses it', async () => {
      const log = await openLog(topicConfig({ 'segment.bytes': '400', 'index.interval.bytes': '0' }));
      for (let i = 0; i < 5; i++) await log.append(makeBatch({ records: 2, payload: 100, epoch: i })).done;
      await log.truncateTo(6);
      expect(log.logEndOffset).to.equal(6);
      expect(log.highWatermark).to.equal(6);
      expect(log.segmentInfo()).to.deep.equal([{ baseOffset: 0, size: 322 }, { baseOffset: 4, size: 161 }]);
      expect(log.latestEpoch()).to.equal(2);
      const r = log.append(makeBatch({ records: 1 }));
      expect(r.baseOffset).to.equal(6);
      await r.done;
      const all = await log.readBytes(0, 1 << 20);
      if (all.outOfRange) return expect.fail('out of range');
      expect(batchBaseOffsets(all.records)).to.deep.equal([0, 2, 4, 6]);
    });
  });

  describe('forEachBatch', () => {
    it('visits each batch header from the batch containing an offset, whole control batches', async () => {
      const log = await openLog(topicConfig({ 'segment.bytes': '300' }));
      const control = makeBatch({ records: 1, payload: 30 });
      control.writeInt16BE(0x20, 21); // the control flag (its CRC is now stale: storage does not check it on append)
      for (const b of [makeBatch({ records: 3, payload: 100 }), makeBatch({ records: 2, payload: 100 }), control, makeBatch({ payload: 100 })]) {
        await log.append(b).done;
      }
      const seen: Array<[number, number]> = [];
      await log.forEachBatch(4, (batch) => seen.push([baseOffsetOf(batch), batch.length]));
      expect(seen).to.deep.equal([[3, 61], [5, 91], [6, 61]]);
    });
  });

  describe('high watermark', () => {
    it('hides batches a pending truncation is about to remove', async () => {
      const log = await openLog();
      for (let i = 0; i < 3; i++) await log.append(makeBatch({ records: 2 })).done;
      const truncation = log.truncateTo(2);
      const r = await log.readBytes(0, 1 << 20);
      if (r.outOfRange) return expect.fail('out of range');
      expect(batchBaseOffsets(r.records)).to.deep.equal([0]);
      expect(r.highWatermark).to.equal(2);
      await truncation;
    });
  });

  describe('leader epoch checkpoint', () => {
    it('survives a reopen in Kafka\'s text format', async () => {
      const config = topicConfig();
      const log = await openLog(config);
      await log.append(makeBatch({ records: 3, epoch: 1 })).done;
      await log.append(makeBatch({ records: 3, epoch: 4 })).done;
      await log.close();
      expect(fs.readFileSync(path.join(log.dir, 'leader-epoch-checkpoint'), 'utf8')).to.equal('0\n2\n1 0\n4 3\n');
      const again = await PartitionLog.open({ dir: log.dir, topic: 't', partition: 0, config, logger: silentLogger, hadCleanShutdown: true });
      open.push(again);
      expect(again.endOffsetForEpoch(1)).to.deep.equal({ epoch: 1, endOffset: 3 });
      expect(again.latestEpoch()).to.equal(4);
    });
  });
});
