// Record batches from real clients (captured Produce bytes in fixtures/, see capture/capture-fixtures.ts),
// and our batches read by real clients' code: kafkajs in-process, the Java client when a JVM is present.
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { assignOffsets, BatchInfo, scanBatches, TimestampType } from '../../src/records/batch';
import { Codec, CODEC_NAMES } from '../../src/records/compression';
import { buildBatch, buildBatchSync, decodeRecords, DecodedRecord, validateRecords } from '../../src/records/records';
import { bigValue, FIXTURE_DIR } from './fixture-util';

const ROOT = path.resolve(__dirname, '../../..');

function fixtures(): string[] {
  return fs
    .readdirSync(FIXTURE_DIR)
    .filter((f) => f.endsWith('.bin') && !f.startsWith('librdkafka-magic0'))
    .sort();
}

function firstBatch(buf: Buffer): BatchInfo {
  const r = scanBatches(buf, { produceVersion: 11, fromClient: true });
  if (!r.ok) throw new Error(`${r.errorCode}: ${r.errorMessage}`);
  return r.batches[0];
}

const summary = (r: DecodedRecord) => [
  r.offset,
  r.key === null ? null : r.key.toString(),
  r.value === null ? null : r.value.length > 20 ? `${r.value.length} bytes` : r.value.toString(),
  r.headers.map((h) => `${h.key}=${h.value === null ? null : h.value.toString()}`).join(','),
];

describe('records: batches of real clients', () => {
  const big = bigValue();

  it('fixtures cover every client and codec captured', () => {
    const names = fixtures().map((f) => f.replace(/\.bin$/, ''));
    for (const codec of CODEC_NAMES) {
      for (const client of ['java', 'kcat', 'franz-go']) expect(names).to.include(`${client}-${codec}`);
    }
    expect(names).to.include.members(['kafkajs-none', 'kafkajs-gzip', 'kafka-python-none', 'kafka-python-gzip', 'cli-lz4-linked-checksums', 'cli-zstd-two-frames']);
  });

  for (const file of fixtures()) {
    it(`${file}: scans, decodes the four records, validates`, async () => {
      const buf = fs.readFileSync(path.join(FIXTURE_DIR, file));
      const b = firstBatch(buf);
      const codec = file.replace(/\.bin$/, '').split('-').pop();
      if (!file.startsWith('cli-')) expect(CODEC_NAMES[b.compression]).to.equal(codec);
      const recs = await decodeRecords(buf);
      // kcat's -H puts the header on every message; the others only on the first.
      const h = file.startsWith('kcat-') ? 'h1=v1' : '';
      expect(recs.map(summary)).to.deep.equal([
        [0, 'k1', 'hello', 'h1=v1'],
        [1, null, 'no-key', h],
        [2, 'big', '100000 bytes', h],
        [3, 'k4', null, h],
      ]);
      expect(recs[2].value?.equals(big)).to.equal(true);
      expect(recs[0].timestamp).to.equal(b.baseTimestamp);
      expect(Math.max(...recs.map((r) => r.timestamp))).to.equal(b.maxTimestamp);
      const v = await validateRecords(buf, b, { nowMs: b.maxTimestamp, timestampType: TimestampType.CREATE_TIME, beforeMaxMs: 3600000, afterMaxMs: 3600000, compacted: false });
      expect(v).to.deep.include({ ok: true, maxTimestamp: b.maxTimestamp, innerOffsetsSequential: true });
      // As the Produce path validates it: with its bound on decompressed bytes (zstd checks its block headers).
      const produced = await validateRecords(buf, b, { nowMs: b.maxTimestamp, timestampType: TimestampType.CREATE_TIME, maxDecompressedBytes: 128 * 1024 * 1024 });
      expect(produced).to.deep.include({ ok: true, maxTimestamp: b.maxTimestamp });
    });
  }

  for (const file of ['java-none.bin', 'kafkajs-none.bin', 'franz-go-none.bin', 'kafka-python-none.bin', 'kcat-none.bin']) {
    it(`${file}: buildBatch writes the same bytes as the client for the same records`, async () => {
      const buf = fs.readFileSync(path.join(FIXTURE_DIR, file));
      const b = firstBatch(buf);
      const recs = await decodeRecords(buf);
      const rebuilt = buildBatchSync({
        baseOffset: b.baseOffset,
        partitionLeaderEpoch: b.partitionLeaderEpoch,
        producerId: b.producerId,
        producerEpoch: b.producerEpoch,
        baseSequence: b.baseSequence,
        isTransactional: b.isTransactional,
        records: recs.map((r) => ({ key: r.key, value: r.value, headers: r.headers, timestamp: r.timestamp })),
      });
      expect(rebuilt.toString('hex')).to.equal(buf.subarray(0, b.size).toString('hex'));
    });
  }

  it('kafkajs decodes our batches (gzip and none), and we decode kafkajs-encoded gzip batches', async () => {
    /* eslint-disable @typescript-eslint/no-require-imports */
    const Decoder = require('kafkajs/src/protocol/decoder');
    const decodeBatch = require('kafkajs/src/protocol/recordBatch/v0/decoder');
    const { RecordBatch } = require('kafkajs/src/protocol/recordBatch/v0');
    const Record = require('kafkajs/src/protocol/recordBatch/record/v0');
    /* eslint-enable @typescript-eslint/no-require-imports */
    for (const compression of [Codec.NONE, Codec.GZIP]) {
      const ours = await buildBatch({
        baseOffset: 10,
        compression,
        records: [
          { key: 'a', value: 'one', headers: [{ key: 'h', value: 'x' }], timestamp: 1700000000000 },
          { key: null, value: big, timestamp: 1700000000007 },
        ],
      });
      const theirs = await decodeBatch(new Decoder(ours));
      expect(theirs.records.map((r: { offset: string; key: Buffer | null; value: Buffer; timestamp: string }) => [r.offset, r.key && r.key.toString(), r.value.length, r.timestamp])).to.deep.equal([
        ['10', 'a', 3, '1700000000000'],
        ['11', null, big.length, '1700000000007'],
      ]);
      expect(theirs.records[0].headers.h.toString()).to.equal('x');
    }
    const kafkajsGzip = (
      await RecordBatch({
        compression: Codec.GZIP,
        firstTimestamp: 1700000000000,
        maxTimestamp: 1700000000003,
        lastOffsetDelta: 1,
        records: [Record({ offsetDelta: 0, key: Buffer.from('k'), value: Buffer.from('v') }), Record({ offsetDelta: 1, timestampDelta: 3, key: null, value: big })],
      })
    ).buffer as Buffer;
    const b = firstBatch(kafkajsGzip);
    expect(b.compression).to.equal(Codec.GZIP);
    const recs = await decodeRecords(kafkajsGzip);
    expect(recs.map((r) => [r.key && r.key.toString(), r.value?.length, r.timestamp])).to.deep.equal([
      ['k', 1, 1700000000000],
      [null, big.length, 1700000000003],
    ]);
  });
});

describe('records: the Java client reads our batches', function () {
  this.timeout(120000);
  const lib = path.join(ROOT, 'compat/java/target/lib');
  let classes: string | undefined;
  let cp: string[] = [];

  before(function () {
    const haveJava = spawnSync('javac', ['-version']).status === 0 && fs.existsSync(lib);
    if (!haveJava) {
      // Needs a JDK and compat/java's jars (`mvn -q -f compat/java/pom.xml package`).
      this.skip();
    }
    cp = fs.readdirSync(lib).map((j) => path.join(lib, j));
    classes = fs.mkdtempSync(path.join(os.tmpdir(), 'fjord-javaverify-'));
    const c = spawnSync('javac', ['-cp', cp.join(':'), '-d', classes, path.join(ROOT, 'test/records/capture/JavaVerify.java')], { encoding: 'utf8' });
    if (c.status !== 0) throw new Error(`javac failed: ${c.stderr}`);
  });

  after(() => {
    if (classes) fs.rmSync(classes, { recursive: true, force: true });
  });

  it('every codec, CreateTime and LogAppendTime after assignOffsets: CRC valid, records as written', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fjord-batches-'));
    const big = bigValue();
    const files: string[] = [];
    const expected: string[] = [];
    try {
      for (const [name, codec] of Object.entries(Codec)) {
        for (const lat of [false, true]) {
          const buf = await buildBatch({
            compression: codec,
            producerId: 5,
            producerEpoch: 0,
            baseSequence: 0,
            records: [
              { key: 'k1', value: 'hello', headers: [{ key: 'h1', value: 'v1' }], timestamp: 1700000000000 },
              { key: null, value: big, timestamp: 1700000000002 },
              { key: 'k3', value: null, timestamp: 1699999999999 },
            ],
          });
          const r = scanBatches(buf);
          if (!r.ok) throw new Error(r.errorMessage);
          assignOffsets(buf, r.batches[0], 4242, 3, lat ? 1800000000000 : null);
          const f = path.join(dir, `${name}-${lat ? 'lat' : 'ct'}.bin`);
          fs.writeFileSync(f, buf);
          files.push(f);
          const ts = (t: number) => (lat ? 1800000000000 : t);
          const javaCodec = name.toLowerCase();
          expected.push(
            `${path.basename(f)} ${javaCodec} base=4242 last=4244 max=${lat ? 1800000000000 : 1700000000002} type=${lat ? 'LogAppendTime' : 'CreateTime'}` +
              ` | 4242@${ts(1700000000000)} k1=5 h1:v1 | 4243@${ts(1700000000002)} null=${big.length} | 4244@${ts(1699999999999)} k3=null`,
          );
        }
      }
      const run = spawnSync('java', ['-cp', [...cp, classes as string].join(':'), 'JavaVerify', ...files], { encoding: 'utf8' });
      expect(run.stderr).to.equal('');
      expect(run.status).to.equal(0);
      expect(run.stdout.trim().split('\n')).to.deep.equal(expected);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
