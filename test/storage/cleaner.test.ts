// The log cleaner: the offset map, compaction of keyed batches (latest value per key, offsets kept, small
// segments merged, codecs kept), tombstones and their delete horizon, transaction markers and aborted data,
// and a crash at each step of a segment swap.
import { expect } from 'chai';
import * as fs from 'fs';
import * as path from 'path';
import { readBatchHeader, type BatchInfo } from '../../src/records/batch';
import { Codec } from '../../src/records/compression';
import { buildBatch, buildEndTxnMarker, decodeRecords } from '../../src/records/records';
import { LogCleaner } from '../../src/storage/log-cleaner';
import { OffsetMap } from '../../src/storage/offset-map';
import { PartitionLog } from '../../src/storage/partition-log';
import type { ProducerStateManager } from '../../src/storage/producer-state';
import { silentLogger, tempDirs, topicConfig } from './helpers';

const T0 = 1_700_000_000_000;
const COMPACT = { 'cleanup.policy': 'compact', 'min.cleanable.dirty.ratio': '0.01', 'segment.ms': '100', 'delete.retention.ms': '1000', 'file.delete.delay.ms': '0' };

interface Stored {
  offset: number;
  key: string | null;
  value: string | null;
}

/** Every record of the log, in offset order, with the header of the batch it is in. */
async function readAll(log: PartitionLog): Promise<Array<Stored & { batch: BatchInfo }>> {
  const read = await log.readBytes(log.logStartOffset, 1 << 26);
  if (read.outOfRange) throw new Error('out of range');
  const out: Array<Stored & { batch: BatchInfo }> = [];
  for (let at = 0; at < read.records.length; ) {
    const h = readBatchHeader(read.records, at);
    if (h.status !== 'ok') throw new Error(`bad batch at ${at}`);
    const bytes = read.records.subarray(at, at + h.batch.size);
    for (const r of await decodeRecords(bytes)) {
      out.push({ offset: r.offset, key: r.key?.toString() ?? null, value: r.value?.toString() ?? null, batch: h.batch });
    }
    at += h.batch.size;
  }
  return out;
}

/** The latest value of each key, from what was written (the oracle). */
function latest(written: Stored[]): Map<string, Stored> {
  const m = new Map<string, Stored>();
  for (const w of written) if (w.key !== null) m.set(w.key, w);
  return m;
}

describe('storage/log cleaner', function () {
  this.timeout(20000);
  const dirs = tempDirs('fjord-cleaner-');
  const open: PartitionLog[] = [];
  let clock = T0 + 60_000;

  async function openLog(overrides: Record<string, string> = {}, dir = dirs.next()): Promise<PartitionLog> {
    const log = await PartitionLog.open({ dir, topic: 'c', partition: 0, config: topicConfig({ ...COMPACT, ...overrides }), logger: silentLogger, now: () => clock });
    open.push(log);
    return log;
  }

  afterEach(async () => {
    for (const log of open.splice(0)) await log.close();
  });

  /** A cleaner of this log alone, its checkpoint in a directory of the log's own (tests share a root). */
  function cleaner(log: PartitionLog, producers?: ProducerStateManager): Promise<LogCleaner> {
    const dataDir = `${log.dir}-data`;
    fs.mkdirSync(dataDir, { recursive: true });
    return LogCleaner.open({
      dataDir,
      config: { backoffMs: 60_000, ioMaxBytesPerSecond: Infinity, dedupeBufferBytes: 1 << 20, ioBufferBytes: 4096, ioBufferLoadFactor: 0.9 },
      logs: () => [log],
      producers: producers ? () => producers : undefined,
      logger: silentLogger,
      now: () => clock,
    });
  }

  /** Appends one batch per round (timestamps 1 s apart, so segment.ms rolls a segment per round). */
  async function writeRounds(log: PartitionLog, rounds: Array<Array<[string, string | null]>>, opts: { compression?: number; round0?: number } = {}): Promise<Stored[]> {
    const written: Stored[] = [];
    for (let i = 0; i < rounds.length; i++) {
      const ts = T0 + ((opts.round0 ?? 0) + i) * 1000;
      const batch = await buildBatch({ records: rounds[i].map(([key, value]) => ({ key, value, timestamp: ts })), compression: opts.compression });
      const r = log.append(batch);
      await r.done;
      rounds[i].forEach(([key, value], j) => written.push({ offset: r.baseOffset + j, key, value }));
    }
    return written;
  }

  /** `rounds` rounds over `keys` keys: value "<key>@<round>". */
  const keyedRounds = (keys: number, rounds: number, first = 0): Array<Array<[string, string | null]>> =>
    Array.from({ length: rounds }, (_, r) => Array.from({ length: keys }, (_, k): [string, string] => [`k${k}`, `k${k}@${first + r}`]));

  /** Records of the inactive segments only (the active one is never cleaned). */
  async function cleanedPart(log: PartitionLog): Promise<Stored[]> {
    const active = log.segmentList().at(-1)!.baseOffset;
    return (await readAll(log)).filter((r) => r.offset < active).map(({ offset, key, value }) => ({ offset, key, value }));
  }

  describe('offset map', () => {
    it('keeps the latest offset of every key, and knows none for an unknown key', () => {
      const map = new OffsetMap(OffsetMap.bytesFor(5000));
      for (let round = 0; round < 3; round++) for (let k = 0; k < 5000; k++) map.put(Buffer.from(`key-${k}`), round * 5000 + k);
      expect(map.size).to.equal(5000);
      for (let k = 0; k < 5000; k++) expect(map.get(Buffer.from(`key-${k}`))).to.equal(10000 + k);
      expect(map.get(Buffer.from('key-5000'))).to.equal(-1);
      expect(map.latestOffset).to.equal(14999);
    });

    it('fills up at its load factor and refuses more keys', () => {
      const map = new OffsetMap(24 * 10, 0.5);
      expect(map.capacity).to.equal(5);
      for (let k = 0; k < 5; k++) map.put(Buffer.from(`k${k}`), k);
      expect(map.isFull).to.equal(true);
      expect(() => map.put(Buffer.from('k5'), 5)).to.throw(/full/);
    });
  });

  describe('compaction', () => {
    it('keeps exactly the latest record of each key, at its offset, and merges the small cleaned segments', async () => {
      const log = await openLog();
      const written = await writeRounds(log, [...keyedRounds(20, 6), [['end', 'x']]]);
      const segmentsBefore = log.segmentList().length;
      const sizeBefore = log.size;
      expect(await (await cleaner(log)).cleanFilthiestLog()).to.equal(true);
      const expected = [...latest(written.slice(0, -1)).values()].sort((a, b) => a.offset - b.offset);
      expect(await cleanedPart(log)).to.deep.equal(expected);
      expect(log.segmentList().length).to.be.below(segmentsBefore); // 6 round segments merged into 1
      expect(log.segmentList().length).to.equal(2);
      expect(log.size).to.be.below(sizeBefore);
      expect([log.logStartOffset, log.logEndOffset]).to.deep.equal([0, written.length]);
      // Nothing dirty is left: another pass does nothing.
      expect(await (await cleaner(log)).cleanFilthiestLog()).to.equal(false);
    });

    it('cleans only the dirty part once a checkpoint says where the last cleaning ended', async () => {
      const log = await openLog();
      const first = await writeRounds(log, [...keyedRounds(5, 3), [['end', 'x']]]);
      const c = await cleaner(log);
      await c.cleanFilthiestLog();
      const second = await writeRounds(log, [...keyedRounds(5, 2, 3), [['end', 'y']]], { round0: 4 });
      // A new cleaner reads cleaner-offset-checkpoint.
      expect(fs.readFileSync(path.join(`${log.dir}-data`, 'cleaner-offset-checkpoint'), 'utf8')).to.match(/^0\n1\nc 0 \d+\n$/);
      expect(await (await cleaner(log)).cleanFilthiestLog()).to.equal(true);
      const expected = [...latest([...first, ...second].slice(0, -1)).values()].sort((a, b) => a.offset - b.offset);
      expect(await cleanedPart(log)).to.deep.equal(expected);
    });

    it('leaves a log below min.cleanable.dirty.ratio alone, and cleans it when max.compaction.lag.ms has passed', async () => {
      const log = await openLog();
      await writeRounds(log, [...keyedRounds(20, 3), [['end', 'x']]]);
      await (await cleaner(log)).cleanFilthiestLog();
      // A little new dirty data next to 20 clean records: a dirty ratio far below 0.9.
      await writeRounds(log, [[['k0', 'new']], [['end', 'y']]], { round0: 10 });
      log.updateConfig(topicConfig({ ...COMPACT, 'min.cleanable.dirty.ratio': '0.9' }));
      expect(await (await cleaner(log)).cleanFilthiestLog()).to.equal(false);
      log.updateConfig(topicConfig({ ...COMPACT, 'min.cleanable.dirty.ratio': '0.9', 'max.compaction.lag.ms': '10000' }));
      expect(await (await cleaner(log)).cleanFilthiestLog()).to.equal(true);
      expect((await cleanedPart(log)).filter((r) => r.key === 'k0').map((r) => r.value)).to.deep.equal(['new']);
    });

    it('does not clean segments with records newer than min.compaction.lag.ms', async () => {
      const log = await openLog({ 'min.compaction.lag.ms': String(clock - T0 - 1500) });
      // Rounds 0..3 at T0..T0+3s: with the lag, only segments whose newest record is older than T0+1.5s are cleanable.
      const written = await writeRounds(log, [...keyedRounds(3, 4), [['end', 'x']]]);
      await (await cleaner(log)).cleanFilthiestLog();
      const records = await cleanedPart(log);
      const cleanedRounds = written.slice(0, 6); // rounds 0 and 1: k0..k2 once, round 1's values
      expect(records.filter((r) => r.offset < 6)).to.deep.equal(cleanedRounds.slice(3));
      expect(records.filter((r) => r.offset >= 6)).to.deep.equal(written.slice(6, 12));
    });

    it('re-compresses batches it removes records from with their own codec, and copies untouched ones', async () => {
      for (const codec of [Codec.GZIP, Codec.SNAPPY, Codec.LZ4, Codec.ZSTD]) {
        const log = await openLog();
        // Each batch: 4 records; keys a/b are rewritten in the next batch, c/d are not.
        const written = await writeRounds(log, [
          [['a', 'a0'], ['b', 'b0'], ['c', 'c0'], ['d', 'd0']],
          [['a', 'a1'], ['b', 'b1'], ['e', 'e1'], ['f', 'f1']],
          [['end', 'x']],
        ], { compression: codec });
        await (await cleaner(log)).cleanFilthiestLog();
        const records = await readAll(log);
        expect(records.filter((r) => r.key !== 'end').map((r) => [r.offset, r.key, r.value])).to.deep.equal(
          [...latest(written.slice(0, -1)).values()].sort((a, b) => a.offset - b.offset).map((r) => [r.offset, r.key, r.value]),
          `codec ${codec}`,
        );
        for (const r of records) expect(r.batch.compression).to.equal(codec);
        // The rebuilt first batch keeps its base and last offset (4 offsets, 2 records).
        expect(records[0].batch).to.include({ baseOffset: 0, lastOffsetDelta: 3, recordCount: 2 });
      }
    });
  });

  describe('tombstones', () => {
    it('keeps a tombstone for delete.retention.ms after the cleaning that first keeps it, then drops it', async () => {
      const log = await openLog();
      const written = await writeRounds(log, [...keyedRounds(4, 2), [['k1', null], ['k2', null]], [['end', 'x']]]);
      const c = await cleaner(log);
      const cleanedAt = clock;
      await c.cleanFilthiestLog();
      let records = await cleanedPart(log);
      expect(records.map((r) => [r.key, r.value])).to.deep.equal([['k0', 'k0@1'], ['k3', 'k3@1'], ['k1', null], ['k2', null]]);
      // The tombstones' batch now carries the delete horizon (KIP-534) in its baseTimestamp.
      const tombstoneBatch = (await readAll(log)).find((r) => r.value === null)!.batch;
      expect(tombstoneBatch).to.include({ hasDeleteHorizon: true, baseTimestamp: cleanedAt + 1000 });

      // Before the horizon, another cleaning (new dirty data) keeps them.
      clock += 500;
      await writeRounds(log, [[['end', 'y']]], { round0: 10 });
      await c.cleanFilthiestLog();
      expect((await cleanedPart(log)).filter((r) => r.value === null).map((r) => r.key)).to.deep.equal(['k1', 'k2']);

      // After it they go; the other keys keep their latest values.
      clock += 1000;
      await writeRounds(log, [[['end', 'z']]], { round0: 11 });
      await c.cleanFilthiestLog();
      records = await cleanedPart(log);
      expect(records.filter((r) => r.key !== 'end').map((r) => [r.offset, r.key, r.value])).to.deep.equal(
        [...latest(written).values()].filter((r) => r.value !== null && r.key !== 'end').sort((a, b) => a.offset - b.offset).map((r) => [r.offset, r.key, r.value]),
      );
    });
  });

  describe('transactions', () => {
    const PID_ABORT = 7;
    const PID_COMMIT = 8;

    /** A transactional batch of producer pid with these records. */
    async function txnAppend(log: PartitionLog, pid: number, seq: number, records: Array<[string, string]>, ts: number) {
      const r = log.append(await buildBatch({
        records: records.map(([key, value]) => ({ key, value, timestamp: ts })), producerId: pid, producerEpoch: 0, baseSequence: seq, isTransactional: true,
      }));
      await r.done;
      return r;
    }

    async function marker(log: PartitionLog, pid: number, commit: boolean, ts: number, firstOffset?: number) {
      const offset = log.logEndOffset;
      const r = log.append(buildEndTxnMarker({ commit, producerId: pid, producerEpoch: 0, coordinatorEpoch: 0, timestamp: ts }),
        commit ? undefined : { producerId: pid, firstOffset: firstOffset!, lastOffset: offset, lastStableOffset: offset + 1 });
      await r.done;
    }

    /** Aborted data of pid 7 (keys a, b), committed data of pid 8 (keys c, d), then a plain record to roll past them. */
    async function writeTransactions(log: PartitionLog) {
      await writeRounds(log, [[['a', 'a-plain'], ['c', 'c-plain']]]);
      const aborted = await txnAppend(log, PID_ABORT, 0, [['a', 'a-aborted'], ['b', 'b-aborted']], T0 + 1000);
      await txnAppend(log, PID_COMMIT, 0, [['c', 'c-committed'], ['d', 'd-committed']], T0 + 1000);
      await marker(log, PID_ABORT, false, T0 + 2000, aborted.baseOffset);
      await marker(log, PID_COMMIT, true, T0 + 2000);
      await writeRounds(log, [[['end', 'x']]], { round0: 5 });
      return aborted;
    }

    it('removes aborted data at once and its marker (and the COMMIT marker) once nothing of their transactions is left and the horizon passed', async () => {
      const log = await openLog();
      await writeTransactions(log);
      const c = await cleaner(log);
      await c.cleanFilthiestLog();
      const data = async () => (await readAll(log)).filter((r) => !r.batch.isControl && r.key !== 'end').map((r) => r.value);
      const markers = async () => (await readAll(log)).filter((r) => r.batch.isControl).map((r) => r.batch.producerId);
      // a-plain stays: the aborted a-aborted never counts as a's latest; c-plain lost to the committed c.
      expect(await data()).to.deep.equal(['a-plain', 'c-committed', 'd-committed']);
      expect(await markers()).to.deep.equal([PID_ABORT, PID_COMMIT]);
      // The cleaned segment still indexes the abort (its marker stays while the aborted batch was there).
      expect(log.abortedTransactions(0, log.logEndOffset).map((t) => t.producerId)).to.deep.equal([PID_ABORT]);

      // Next cleaning: the abort marker's data is gone, so it gets a delete horizon; the commit marker's data is still there.
      await writeRounds(log, [[['end', 'y']]], { round0: 6 });
      await c.cleanFilthiestLog();
      expect(await markers()).to.deep.equal([PID_ABORT, PID_COMMIT]);
      clock += 2000;
      await writeRounds(log, [[['end', 'z']]], { round0: 7 });
      await c.cleanFilthiestLog();
      expect(await markers()).to.deep.equal([PID_COMMIT]);
      expect(await data()).to.deep.equal(['a-plain', 'c-committed', 'd-committed']);
    });

    it("keeps a live producer's last batch, emptied, so its state survives", async () => {
      const log = await openLog();
      const aborted = await writeTransactions(log);
      await log.loadProducerState();
      const producers = log.producerState;
      expect(producers.activeProducers().get(PID_ABORT)!.batches.at(-1)!.lastOffset).to.equal(aborted.lastOffset);
      await (await cleaner(log, producers)).cleanFilthiestLog();
      const read = await log.readBytes(0, 1 << 20);
      if (read.outOfRange) throw new Error('out of range');
      const headers: BatchInfo[] = [];
      for (let at = 0; at < read.records.length; ) {
        const h = readBatchHeader(read.records, at);
        if (h.status !== 'ok') throw new Error('bad batch');
        headers.push(h.batch);
        at += h.batch.size;
      }
      const kept = headers.find((h) => h.producerId === PID_ABORT && !h.isControl)!;
      expect(kept).to.include({ baseOffset: aborted.baseOffset, lastOffsetDelta: 1, recordCount: 0, producerEpoch: 0, baseSequence: 0, isTransactional: true });
      // Recovery from this log still knows the producer's last sequence.
      await log.loadProducerState();
      expect(log.producerState.activeProducers().get(PID_ABORT)!.batches.at(-1)).to.include({ firstSeq: 0, lastSeq: 1, lastOffset: aborted.lastOffset });
    });
  });

  describe('segment swap', () => {
    it('keeps serving a read that found an old segment after the swap', async () => {
      const log = await openLog({ 'file.delete.delay.ms': '60000' });
      await writeRounds(log, [...keyedRounds(3, 3), [['end', 'x']]]);
      const before = await log.read(0, 1 << 20);
      if (before.outOfRange) throw new Error('out of range');
      const range = before.ranges[0];
      const expected = Buffer.alloc(range.length);
      await range.file.read(expected, 0, range.length, range.position);
      await (await cleaner(log)).cleanFilthiestLog();
      const again = Buffer.alloc(range.length);
      await range.file.read(again, 0, range.length, range.position);
      expect(again.equals(expected)).to.equal(true);
      expect(fs.readdirSync(log.dir).filter((f) => f.endsWith('.deleted')).length).to.be.above(0);
    });

    describe('a crash at each step leaves a readable log with every latest value', () => {
      const files = (dir: string) => fs.readdirSync(dir).sort();
      let oldDir: string;
      let newDir: string;
      let written: Stored[];
      /** Base offsets of the old segments the cleaned one replaced, and its own. */
      let replaced: string[];
      const NAMES = ['index', 'timeindex', 'log'];

      before(async () => {
        oldDir = dirs.next();
        const log = await openLog({}, oldDir);
        written = await writeRounds(log, [...keyedRounds(10, 4), [['k1', null]], [['end', 'x']]]);
        await log.close();
        newDir = dirs.next();
        fs.cpSync(oldDir, newDir, { recursive: true });
        const cleanedLog = await openLog({}, newDir);
        await (await cleaner(cleanedLog)).cleanFilthiestLog();
        await cleanedLog.close();
        replaced = files(oldDir).filter((f) => f.endsWith('.log') && !files(newDir).includes(f)).map((f) => f.slice(0, 20));
        expect(replaced.length).to.be.above(1);
      });

      /** A copy of the old log dir with the cleaned segment's files (base 0) under `suffix`, then `edit` applied. */
      function stage(suffixOf: (name: string) => string | null, edit: (dir: string) => void = () => undefined): string {
        const dir = dirs.next();
        fs.cpSync(oldDir, dir, { recursive: true });
        for (const name of NAMES) {
          const suffix = suffixOf(name);
          const file = `${'0'.repeat(20)}.${name}`;
          if (suffix !== null) fs.copyFileSync(path.join(newDir, file), path.join(dir, file + suffix));
        }
        edit(dir);
        return dir;
      }

      const retireOld = (dir: string, which: string[]) => {
        for (const base of which) for (const name of ['index', 'timeindex', 'log']) {
          const f = path.join(dir, `${base}.${name}`);
          if (fs.existsSync(f)) fs.renameSync(f, f + '.deleted');
        }
      };

      const steps: Array<[string, () => string]> = [
        ['writing .cleaned (half a log file)', () => stage(() => '.cleaned', (d) => fs.truncateSync(path.join(d, `${'0'.repeat(20)}.log.cleaned`), 100))],
        ['all .cleaned written', () => stage(() => '.cleaned')],
        ['renaming to .swap (indexes done, log not)', () => stage((n) => (n === 'log' ? '.cleaned' : '.swap'))],
        ['all renamed to .swap', () => stage(() => '.swap')],
        ['retiring old segments (first one half renamed)', () => stage(() => '.swap', (d) => {
          fs.renameSync(path.join(d, `${replaced[0]}.index`), path.join(d, `${replaced[0]}.index.deleted`));
        })],
        ['old segments retired', () => stage(() => '.swap', (d) => retireOld(d, replaced))],
        ['renaming .swap into place (index done)', () => stage((n) => (n === 'log' ? '.swap' : null), (d) => {
          retireOld(d, replaced);
          for (const n of ['index', 'timeindex']) fs.copyFileSync(path.join(newDir, `${'0'.repeat(20)}.${n}`), path.join(d, `${'0'.repeat(20)}.${n}`));
        })],
        ['done, .deleted files not yet removed', () => stage(() => null, (d) => {
          retireOld(d, replaced);
          for (const n of NAMES) fs.copyFileSync(path.join(newDir, `${'0'.repeat(20)}.${n}`), path.join(d, `${'0'.repeat(20)}.${n}`));
        })],
      ];

      for (const [step, prepare] of steps) {
        it(step, async () => {
          const dir = prepare();
          const log = await openLog({}, dir);
          const records = await readAll(log);
          // Readable: offsets increase; every latest value is there at its offset.
          for (let i = 1; i < records.length; i++) expect(records[i].offset).to.be.above(records[i - 1].offset);
          const byOffset = new Map(records.map((r) => [r.offset, r]));
          for (const w of latest(written).values()) expect(byOffset.get(w.offset), `${w.key} at ${w.offset}`).to.deep.include({ key: w.key, value: w.value });
          expect(log.logEndOffset).to.equal(written.length);
          expect(files(dir).filter((f) => /\.(cleaned|swap|deleted)$/.test(f))).to.deep.equal([]);
          // Either the old segments or the cleaned one, never both.
          const logs = files(dir).filter((f) => f.endsWith('.log'));
          expect([files(oldDir).filter((f) => f.endsWith('.log')), files(newDir).filter((f) => f.endsWith('.log'))]).to.deep.include(logs);
        });
      }
    });
  });
});
