import { expect } from 'chai';
import * as zlib from 'node:zlib';
import {
  Codec,
  compress,
  CompressionError,
  compressSync,
  decompress,
  decompressSync,
  hasSyncCodec,
  lz4OutputBound,
  XERIAL_MAGIC,
  zstdOutputBound,
} from '../../src/records/compression';
import { rejection } from '../helpers/rejection';

/** Deterministic, compressible text of `n` bytes. */
function payload(n: number): Buffer {
  const parts: string[] = [];
  let len = 0;
  for (let i = 0; len < n; i++) {
    const s = `{"id":${i},"user":"u${(i * 7919) % 1009}","event":"e${i % 7}"}`;
    parts.push(s);
    len += s.length;
  }
  return Buffer.from(parts.join('').slice(0, n));
}

describe('records/compression', () => {
  const inputs = [Buffer.alloc(0), Buffer.from('x'), payload(1000), payload(65536), payload(200000)];

  for (const [name, codec] of Object.entries(Codec)) {
    it(`${name}: async round trip (0 B .. 200 KB)`, async () => {
      for (const input of inputs) {
        const c = await compress(codec, input);
        if (codec !== Codec.NONE && input.length >= 1000) expect(c.length).to.be.below(input.length);
        expect((await decompress(codec, c)).equals(input), `${input.length} bytes`).to.equal(true);
      }
    });

    if (codec === Codec.ZSTD && !hasSyncCodec(Codec.ZSTD)) {
      it('ZSTD: no sync codec on this Node: the sync calls say so with a CompressionError', async () => {
        expect(() => compressSync(codec, payload(10))).to.throw(CompressionError, /use compress\(\)/);
        const frame = await compress(codec, payload(10));
        expect(() => decompressSync(codec, frame)).to.throw(CompressionError, /use decompress\(\)/);
      });
      continue;
    }
    it(`${name}: sync round trip, and sync and async outputs decode each other`, async () => {
      for (const input of inputs) {
        const c = compressSync(codec, input);
        expect(decompressSync(codec, c).equals(input)).to.equal(true);
        expect((await decompress(codec, c)).equals(input)).to.equal(true);
        expect(decompressSync(codec, await compress(codec, input)).equals(input)).to.equal(true);
      }
    });
  }

  it('hasSyncCodec: gzip, snappy, lz4 always; zstd only with node:zlib zstd', () => {
    expect([0, 1, 2, 3].map(hasSyncCodec)).to.deep.equal([true, true, true, true]);
    expect(hasSyncCodec(Codec.ZSTD)).to.equal(typeof (zlib as unknown as Record<string, unknown>).zstdCompressSync === 'function');
    expect(hasSyncCodec(5)).to.equal(false);
  });

  describe('zstd output bound (checked before the library runs: it has no limit of its own)', () => {
    /** A zstd frame of `blocks` RLE blocks of 128 KB each: a few bytes that claim blocks x 128 KB. */
    function rleFrame(blocks: number): Buffer {
      const parts = [Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x58])]; // magic, descriptor (no size), window 8 MB
      for (let i = 0; i < blocks; i++) {
        const header = ((128 * 1024) << 3) | (1 << 1) | (i === blocks - 1 ? 1 : 0);
        parts.push(Buffer.from([header & 0xff, (header >> 8) & 0xff, (header >> 16) & 0xff, 0x61]));
      }
      return Buffer.concat(parts);
    }

    it('is at least what real frames decompress to, one frame or several', async () => {
      for (const input of inputs) {
        const c = await compress(Codec.ZSTD, input);
        expect(zstdOutputBound(c), `${input.length} bytes`).to.be.at.least(input.length);
        expect(zstdOutputBound(Buffer.concat([c, c]))).to.equal(2 * zstdOutputBound(c));
      }
      const rle = rleFrame(3);
      expect(zstdOutputBound(rle)).to.equal(3 * 128 * 1024);
      expect((await decompress(Codec.ZSTD, rle)).equals(Buffer.alloc(3 * 128 * 1024, 0x61))).to.equal(true);
    });

    it('refuses, before decompressing, a frame whose blocks claim more than the limit', async () => {
      const bomb = rleFrame(20); // 84 bytes claiming 2.5 MB
      const e = await decompress(Codec.ZSTD, bomb, { maxOutputBytes: 1 << 20 }).then(() => null, (err: Error) => err);
      expect(e?.message).to.match(/may decompress to 2621440 bytes|exceeds the limit/);
      expect(() => zstdOutputBound(bomb.subarray(0, 40))).to.throw(CompressionError, /malformed/);
      expect(() => zstdOutputBound(Buffer.from('not zstd'))).to.throw(CompressionError, /malformed/);
    });
  });

  describe('lz4 output bound (lz4-napi has no limit of its own)', () => {
    /** An LZ4 frame (64 KB blocks, no checksums) of `blocks` compressed blocks that each repeat one byte 64 KB times. */
    function repeatFrame(blocks: number): Buffer {
      // One LZ4 sequence: 1 literal 'a', then a match at offset 1 for the rest of the block; the last 5 bytes are literals.
      const matchLength = 64 * 1024 - 1 - 5 - 4;
      const extra: number[] = [];
      for (let left = matchLength - 15; left >= 0; left -= 255) extra.push(Math.min(left, 255));
      if ((matchLength - 15) % 255 === 0) extra.push(0);
      const block = Buffer.from([0x1f, 0x61, 0x01, 0x00, ...extra, 0x50, 0x61, 0x61, 0x61, 0x61, 0x61]);
      const parts = [Buffer.from([0x04, 0x22, 0x4d, 0x18, 0x60, 0x40, 0x82])];
      for (let i = 0; i < blocks; i++) {
        const size = Buffer.alloc(4);
        size.writeUInt32LE(block.length);
        parts.push(size, block);
      }
      parts.push(Buffer.alloc(4));
      return Buffer.concat(parts);
    }

    it('is at least what real frames decompress to, and counts each compressed block as a full one', async () => {
      for (const input of inputs) {
        const c = await compress(Codec.LZ4, input);
        expect(lz4OutputBound(c), `${input.length} bytes`).to.be.at.least(input.length);
      }
      const frame = repeatFrame(3);
      expect(lz4OutputBound(frame)).to.equal(3 * 64 * 1024);
      expect(decompressSync(Codec.LZ4, frame).equals(Buffer.alloc(3 * 64 * 1024, 0x61))).to.equal(true);
    });

    it('refuses, before decompressing, frames whose blocks claim more than the limit', () => {
      const bomb = repeatFrame(20);
      expect(() => decompressSync(Codec.LZ4, bomb, { maxOutputBytes: 1 << 20 })).to.throw(CompressionError, /may decompress to 1310720 bytes, over the limit/);
      expect(() => lz4OutputBound(bomb.subarray(0, 30))).to.throw(CompressionError, /malformed/);
    });
  });

  describe('snappy framing', () => {
    it('writes xerial framing as the Java client does: header, then [int32 length][block] per 32 KB', async () => {
      const input = payload(100000);
      const c = await compress(Codec.SNAPPY, input);
      expect(c.subarray(0, 8).equals(XERIAL_MAGIC)).to.equal(true);
      expect(c.readInt32BE(8)).to.equal(1);
      expect(c.readInt32BE(12)).to.equal(1);
      let pos = 16;
      let blocks = 0;
      while (pos < c.length) {
        const len = c.readInt32BE(pos);
        pos += 4 + len;
        blocks++;
      }
      expect(pos).to.equal(c.length);
      expect(blocks).to.equal(Math.ceil(100000 / 32768));
      expect(compressSync(Codec.SNAPPY, input).equals(c)).to.equal(true);
    });

    it('reads raw (unframed) snappy, as librdkafka and franz-go write it', async () => {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const snappy = require('snappy') as { compressSync(b: Buffer): Buffer };
      const input = payload(50000);
      const raw = snappy.compressSync(input);
      expect(raw.subarray(0, 8).equals(XERIAL_MAGIC)).to.equal(false);
      expect(decompressSync(Codec.SNAPPY, raw).equals(input)).to.equal(true);
      expect((await decompress(Codec.SNAPPY, raw)).equals(input)).to.equal(true);
    });

    it('reads xerial chunks of any size, including an empty stream (header only)', () => {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const snappy = require('snappy') as { compressSync(b: Buffer): Buffer };
      const header = Buffer.alloc(16);
      XERIAL_MAGIC.copy(header);
      header.writeInt32BE(1, 8);
      header.writeInt32BE(1, 12);
      const a = payload(10);
      const b = payload(70000);
      const chunk = (x: Buffer) => {
        const c = snappy.compressSync(x);
        const l = Buffer.alloc(4);
        l.writeInt32BE(c.length);
        return Buffer.concat([l, c]);
      };
      expect(decompressSync(Codec.SNAPPY, Buffer.concat([header, chunk(a), chunk(b)])).equals(Buffer.concat([a, b]))).to.equal(true);
      expect(decompressSync(Codec.SNAPPY, header).length).to.equal(0);
    });
  });

  it('lz4: writes the frame header KafkaLZ4BlockOutputStream writes (FLG 0x60, BD 0x40, HC 0x82)', async () => {
    const c = await compress(Codec.LZ4, payload(1000));
    expect(c.subarray(0, 7).toString('hex')).to.equal('04224d18604082');
    expect(compressSync(Codec.LZ4, payload(1000)).subarray(0, 7).toString('hex')).to.equal('04224d18604082');
  });

  it('gzip: reads concatenated members', () => {
    const a = payload(1000);
    const b = payload(3000);
    const two = Buffer.concat([zlib.gzipSync(a), zlib.gzipSync(b)]);
    expect(decompressSync(Codec.GZIP, two).equals(Buffer.concat([a, b]))).to.equal(true);
  });

  it('gzip level: 1 compresses less than 9', () => {
    const input = payload(65536);
    expect(compressSync(Codec.GZIP, input, 1).length).to.be.above(compressSync(Codec.GZIP, input, 9).length);
  });

  it('unknown codec ids 5-7 are a CompressionError naming the id', async () => {
    for (const id of [5, 6, 7]) {
      expect(() => compressSync(id, Buffer.from('x'))).to.throw(CompressionError, `Unknown compression type id: ${id}`);
      expect(await rejection(decompress(id, Buffer.from('x')))).to.be.instanceOf(CompressionError);
    }
  });

  it('corrupt input is a CompressionError for every codec', async () => {
    const junk = Buffer.from('this is not compressed data at all, not in any format');
    for (const codec of [Codec.GZIP, Codec.SNAPPY, Codec.LZ4, Codec.ZSTD]) {
      const e = await rejection(decompress(codec, junk));
      expect(e, `codec ${codec}`).to.be.instanceOf(CompressionError);
      expect((e as CompressionError).codec).to.equal(codec);
    }
  });

  it('maxOutputBytes refuses output over the limit, and allows it at the limit', async () => {
    const zeros = Buffer.alloc(1 << 20);
    for (const codec of [Codec.GZIP, Codec.SNAPPY, Codec.LZ4, Codec.ZSTD]) {
      const c = await compress(codec, zeros);
      const e = await rejection(decompress(codec, c, { maxOutputBytes: 1000 }));
      expect(e, `codec ${codec}`).to.be.instanceOf(CompressionError);
      // lz4 and zstd are held to what their block headers allow, an upper bound of the output.
      const atLimit = codec === Codec.LZ4 ? lz4OutputBound(c) : codec === Codec.ZSTD ? zstdOutputBound(c) : zeros.length;
      expect(atLimit).to.be.within(zeros.length, zeros.length * 1.01);
      expect((await decompress(codec, c, { maxOutputBytes: atLimit })).length).to.equal(zeros.length);
    }
    expect(() => decompressSync(Codec.GZIP, zlib.gzipSync(zeros), { maxOutputBytes: 10 })).to.throw(CompressionError);
    expect(() => decompressSync(Codec.SNAPPY, compressSync(Codec.SNAPPY, zeros), { maxOutputBytes: 10 })).to.throw(CompressionError, /exceeds/);
  });
});
