// Micro-benchmark of src/records: CRC-32C, the Produce-path scan, in-place offset assignment, record
// decoding, and the codecs on a realistic 64 KB payload. Run: npm run build && node dist/bench/records-bench.js
// (about 20 s; numbers on a shared 2-core machine vary by up to 2x between runs).
import { crc32c, crc32cImplementation, crc32cJs } from '../src/records/crc32c';
import { assignOffsets, scanBatches } from '../src/records/batch';
import { Codec, CODEC_NAMES, compress, compressSync, decompress, decompressSync, hasSyncCodec } from '../src/records/compression';
import { buildBatch, buildBatchSync, decodeRecordsSync, validateRecords, validateRecordsInline } from '../src/records/records';
import * as crypto from 'node:crypto';

/** ~`n` bytes of JSON events: ids, users, events, amounts, pages, a user agent (compresses 4-7x). */
function payload(n: number): Buffer {
  let s = 42;
  const rnd = () => (s = (s * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
  const events = ['click', 'view', 'purchase', 'signup', 'logout', 'search'];
  const parts: Buffer[] = [];
  let len = 0;
  for (let i = 0; len < n; i++) {
    const b = Buffer.from(
      JSON.stringify({
        id: `evt-${(rnd() * 1e9) | 0}`,
        user: `user_${(rnd() * 50000) | 0}`,
        event: events[(rnd() * 6) | 0],
        ts: 1700000000000 + i * 13,
        session: Math.floor(rnd() * 0xffffffff).toString(16),
        amount: +(rnd() * 1000).toFixed(2),
        page: `/products/${(rnd() * 3000) | 0}`,
        ua: 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36',
        ok: rnd() > 0.1,
      }),
    );
    parts.push(b);
    len += b.length;
  }
  return Buffer.concat(parts).subarray(0, n);
}

function time(fn: () => void, minSeconds = 0.3): number {
  for (let i = 0; i < 5; i++) fn();
  let iters = 0;
  const t0 = process.hrtime.bigint();
  let dt = 0;
  while (dt < minSeconds) {
    fn();
    iters++;
    dt = Number(process.hrtime.bigint() - t0) / 1e9;
  }
  return dt / iters;
}

async function timeAsync(fn: () => Promise<unknown>, minSeconds = 0.3): Promise<number> {
  for (let i = 0; i < 5; i++) await fn();
  let iters = 0;
  const t0 = process.hrtime.bigint();
  let dt = 0;
  while (dt < minSeconds) {
    await fn();
    iters++;
    dt = Number(process.hrtime.bigint() - t0) / 1e9;
  }
  return dt / iters;
}

const mbs = (bytes: number, sec: number) => `${(bytes / sec / 1e6).toFixed(0)} MB/s`;
const us = (sec: number) => `${(sec * 1e6).toFixed(2)} us`;

async function main(): Promise<void> {
  console.log(`crc32c (${crc32cImplementation} for >= 256 B):`);
  for (const size of [61, 1024, 16384, 1 << 20]) {
    const buf = crypto.randomBytes(size);
    const n = time(() => crc32c(buf));
    const j = time(() => crc32cJs(buf));
    console.log(`  ${String(size).padStart(8)} B  crc32c ${mbs(size, n).padStart(10)} ${us(n).padStart(12)}   js ${mbs(size, j).padStart(10)}`);
  }

  const values = payload(16384);
  const records = Array.from({ length: 64 }, (_, i) => ({ key: `key-${i}`, value: values.subarray(i * 256, i * 256 + 256), timestamp: 1700000000000 + i }));
  const batch = buildBatchSync({ records, producerId: 1, producerEpoch: 0, baseSequence: 0 });
  console.log(`\nbatch of 64 records, ${batch.length} B, uncompressed:`);
  const scan = time(() => scanBatches(batch, { produceVersion: 11 }));
  console.log(`  scanBatches (CRC included)  ${us(scan)}  ${mbs(batch.length, scan)}`);
  const info = (scanBatches(batch) as { batches: Parameters<typeof assignOffsets>[1][] }).batches[0];
  const assign = time(() => assignOffsets(batch, info, 1000, 1, null));
  console.log(`  assignOffsets CreateTime    ${us(assign)}`);
  const lat = time(() => assignOffsets(batch, { ...info, maxTimestamp: 0 }, 1000, 1, 1700000000999));
  console.log(`  assignOffsets LogAppendTime ${us(lat)} (CRC recomputed)`);
  const fresh = buildBatchSync({ records });
  const freshInfo = (scanBatches(fresh) as { batches: Parameters<typeof assignOffsets>[1][] }).batches[0];
  const val = time(() => validateRecordsInline(fresh, freshInfo, { nowMs: 1700000000000, timestampType: 0, beforeMaxMs: 1e12, afterMaxMs: 1e12 }));
  console.log(`  validateRecords             ${us(val)}`);
  const dec = time(() => decodeRecordsSync(fresh));
  console.log(`  decodeRecords               ${us(dec)}`);

  // What the Produce path adds per compressed batch: decompress and walk every record (no re-encoding).
  console.log(`\nvalidateRecords of the same 64 records compressed (MB/s of uncompressed record bytes):`);
  for (const codec of [Codec.GZIP, Codec.SNAPPY, Codec.LZ4, Codec.ZSTD]) {
    const compressed = await buildBatch({ records, compression: codec });
    const compressedInfo = (scanBatches(compressed) as { batches: Parameters<typeof assignOffsets>[1][] }).batches[0];
    const t = await timeAsync(() => validateRecords(compressed, compressedInfo, { nowMs: 1700000000000, timestampType: 0 }));
    console.log(`  ${CODEC_NAMES[codec].padEnd(7)} ${String(compressed.length).padStart(6)} B  ${us(t).padStart(12)}  ${mbs(fresh.length, t).padStart(10)}`);
  }

  const data = payload(65536);
  console.log(`\ncodecs on a 64 KB JSON-events payload (MB/s of uncompressed bytes):`);
  for (const codec of [Codec.GZIP, Codec.SNAPPY, Codec.LZ4, Codec.ZSTD]) {
    const c = await compress(codec, data);
    const ca = await timeAsync(() => compress(codec, data));
    const da = await timeAsync(() => decompress(codec, c));
    let line = `  ${CODEC_NAMES[codec].padEnd(7)} ratio ${(data.length / c.length).toFixed(2)}  async compress ${mbs(data.length, ca).padStart(10)}  decompress ${mbs(data.length, da).padStart(10)}`;
    if (hasSyncCodec(codec)) {
      const cs = time(() => compressSync(codec, data));
      const ds = time(() => decompressSync(codec, c));
      line += `   sync compress ${mbs(data.length, cs).padStart(10)}  decompress ${mbs(data.length, ds).padStart(10)}`;
    }
    console.log(line);
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
