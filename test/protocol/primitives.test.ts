import { expect } from 'chai';
import {
  EMPTY_BUFFER,
  ProtocolError,
  Reader,
  Writer,
  ZERO_COPY_THRESHOLD,
  sizeOfUnsignedVarint,
  sizeOfVarint,
  sizeOfVarlong,
  zigzagDecode32,
  zigzagDecode64,
  zigzagEncode32,
  zigzagEncode64,
} from '../../src/protocol/primitives';

function hex(s: string): Buffer {
  return Buffer.from(s.replace(/\s+/g, ''), 'hex');
}

function written(fn: (w: Writer) => void, size?: number): Buffer {
  const w = new Writer(size);
  fn(w);
  return w.finishOne();
}

describe('protocol primitives', () => {
  describe('zigzag', () => {
    it('encodes 32-bit values like Kafka/protobuf', () => {
      const cases: [number, number][] = [
        [0, 0],
        [-1, 1],
        [1, 2],
        [-2, 3],
        [2147483647, 4294967294],
        [-2147483648, 4294967295],
      ];
      for (const [v, z] of cases) {
        expect(zigzagEncode32(v), `encode ${v}`).to.equal(z);
        expect(zigzagDecode32(z), `decode ${z}`).to.equal(v);
      }
    });

    it('encodes 64-bit values', () => {
      const cases: [bigint, bigint][] = [
        [0n, 0n],
        [-1n, 1n],
        [1n, 2n],
        [9223372036854775807n, 18446744073709551614n],
        [-9223372036854775808n, 18446744073709551615n],
      ];
      for (const [v, z] of cases) {
        expect(zigzagEncode64(v), `encode ${v}`).to.equal(z);
        expect(zigzagDecode64(z), `decode ${z}`).to.equal(v);
      }
    });
  });

  describe('varints', () => {
    it('writes unsigned varints with the minimal number of bytes', () => {
      const cases: [number, string][] = [
        [0, '00'],
        [1, '01'],
        [127, '7f'],
        [128, '8001'],
        [300, 'ac02'],
        [16383, 'ff7f'],
        [16384, '808001'],
        [2097151, 'ffff7f'],
        [2097152, '80808001'],
        [268435455, 'ffffff7f'],
        [268435456, '8080808001'],
        [4294967295, 'ffffffff0f'],
      ];
      for (const [v, h] of cases) {
        const b = written((w) => w.unsignedVarint(v));
        expect(b.toString('hex'), `value ${v}`).to.equal(h);
        expect(sizeOfUnsignedVarint(v)).to.equal(b.length);
        const r = new Reader(b);
        expect(r.unsignedVarint()).to.equal(v);
        expect(r.remaining()).to.equal(0);
      }
    });

    it('rejects out-of-range unsigned varints when writing', () => {
      const w = new Writer();
      expect(() => w.unsignedVarint(-1)).to.throw();
      expect(() => w.unsignedVarint(2 ** 32)).to.throw();
      expect(() => w.unsignedVarint(1.5)).to.throw();
    });

    it('round-trips signed varints', () => {
      for (const v of [0, 1, -1, 63, -64, 64, -65, 8191, -8192, 2147483647, -2147483648]) {
        const b = written((w) => w.varint(v));
        expect(b.length, `size of ${v}`).to.equal(sizeOfVarint(v));
        expect(new Reader(b).varint()).to.equal(v);
      }
      expect(written((w) => w.varint(-1)).toString('hex')).to.equal('01');
      expect(written((w) => w.varint(-65)).toString('hex')).to.equal('8101');
    });

    it('round-trips varlongs across the whole 64-bit range', () => {
      const values = [
        0n, 1n, -1n, 63n, -64n, 300n, -300n,
        (1n << 31n) - 1n, -(1n << 31n), 1n << 48n, -(1n << 48n), (1n << 53n) + 1n, -(1n << 53n) - 1n,
        (1n << 62n), 9223372036854775807n, -9223372036854775808n,
      ];
      for (const v of values) {
        const b = written((w) => w.varlong(v));
        expect(b.length, `size of ${v}`).to.equal(sizeOfVarlong(v));
        const r = new Reader(b);
        expect(r.varlong(), `value ${v}`).to.equal(v);
        expect(r.remaining()).to.equal(0);
      }
      expect(written((w) => w.varlong(-9223372036854775808n)).toString('hex')).to.equal('ffffffffffffffffff01');
    });

    it('rejects truncated and over-long varints', () => {
      expect(() => new Reader(hex('80')).unsignedVarint()).to.throw(ProtocolError);
      expect(() => new Reader(hex('')).unsignedVarint()).to.throw(ProtocolError);
      expect(() => new Reader(hex('ffffffff7f')).unsignedVarint()).to.throw(ProtocolError, /too long/);
      expect(() => new Reader(hex('8080808080')).unsignedVarint()).to.throw(ProtocolError);
      expect(() => new Reader(hex('ffffffffffffffffff')).varlong()).to.throw(ProtocolError);
      expect(() => new Reader(hex('ffffffffffffffffff7f')).varlong()).to.throw(ProtocolError, /too long/);
      expect(() => new Reader(hex('ffffffffffffffffffff01')).varlong()).to.throw(ProtocolError);
    });
  });

  describe('fixed-width values', () => {
    it('writes big-endian integers, floats, bools and uuids', () => {
      const b = written((w) => {
        w.int8(-2);
        w.int16(-2);
        w.uint16(65535);
        w.int32(-2);
        w.uint32(4294967295);
        w.int64(-2n);
        w.float64(1.5);
        w.bool(true);
        w.bool(false);
        w.uuid('000102030405060708090a0b0c0d0e0f');
      });
      expect(b.toString('hex')).to.equal(
        'fe' + 'fffe' + 'ffff' + 'fffffffe' + 'ffffffff' + 'fffffffffffffffe' + '3ff8000000000000' + '01' + '00' +
          '000102030405060708090a0b0c0d0e0f',
      );
      const r = new Reader(b);
      expect(r.int8()).to.equal(-2);
      expect(r.int16()).to.equal(-2);
      expect(r.uint16()).to.equal(65535);
      expect(r.int32()).to.equal(-2);
      expect(r.uint32()).to.equal(4294967295);
      expect(r.int64()).to.equal(-2n);
      expect(r.float64()).to.equal(1.5);
      expect(r.bool()).to.equal(true);
      expect(r.bool()).to.equal(false);
      expect(r.uuid()).to.equal('000102030405060708090a0b0c0d0e0f');
      expect(r.remaining()).to.equal(0);
    });

    it('reads any non-zero byte as true', () => {
      expect(new Reader(hex('02')).bool()).to.equal(true);
    });

    it('rejects malformed uuids when writing', () => {
      const w = new Writer();
      expect(() => w.uuid('abc')).to.throw();
      expect(() => w.uuid('zz0102030405060708090a0b0c0d0e0f')).to.throw();
    });

    it('throws ProtocolError on truncated fixed-width values', () => {
      expect(() => new Reader(hex('')).int8()).to.throw(ProtocolError);
      expect(() => new Reader(hex('00')).int16()).to.throw(ProtocolError);
      expect(() => new Reader(hex('000000')).int32()).to.throw(ProtocolError);
      expect(() => new Reader(hex('00000000000000')).int64()).to.throw(ProtocolError);
      expect(() => new Reader(hex('00000000000000')).float64()).to.throw(ProtocolError);
      expect(() => new Reader(Buffer.alloc(15)).uuid()).to.throw(ProtocolError);
      expect(() => new Reader(hex('0000')).uint32()).to.throw(ProtocolError);
    });

    it('respects the reader end bound, not just the buffer end', () => {
      const r = new Reader(hex('0000000100000002'), 0, 6);
      expect(r.int32()).to.equal(1);
      expect(() => r.int32()).to.throw(ProtocolError);
    });
  });

  describe('strings', () => {
    it('classic strings: int16 length, -1 for null', () => {
      expect(written((w) => w.string('ab')).toString('hex')).to.equal('00026162');
      expect(written((w) => w.string('')).toString('hex')).to.equal('0000');
      expect(written((w) => w.nullableString(null)).toString('hex')).to.equal('ffff');
      expect(new Reader(hex('00026162')).string()).to.equal('ab');
      expect(new Reader(hex('ffff')).nullableString()).to.equal(null);
      expect(new Reader(hex('0000')).nullableString()).to.equal('');
    });

    it('compact strings: unsigned varint length+1, 0 for null', () => {
      expect(written((w) => w.compactString('ab')).toString('hex')).to.equal('036162');
      expect(written((w) => w.compactString('')).toString('hex')).to.equal('01');
      expect(written((w) => w.compactNullableString(null)).toString('hex')).to.equal('00');
      expect(new Reader(hex('036162')).compactString()).to.equal('ab');
      expect(new Reader(hex('00')).compactNullableString()).to.equal(null);
      expect(new Reader(hex('01')).compactNullableString()).to.equal('');
    });

    it('measures utf8 bytes, not characters', () => {
      const s = 'h\u00e9\u20ac\u{1F600}'; // 1 + 2 + 3 + 4 bytes
      const classic = written((w) => w.string(s));
      expect(classic.readInt16BE(0)).to.equal(10);
      expect(new Reader(classic).string()).to.equal(s);
      const compact = written((w) => w.compactString(s));
      expect(compact[0]).to.equal(11);
      expect(new Reader(compact).compactString()).to.equal(s);
    });

    it('uses multi-byte length prefixes for long compact strings', () => {
      for (const len of [42, 43, 126, 127, 128, 5000, 32767]) {
        const s = 'x'.repeat(len);
        const b = written((w) => w.compactString(s), 16);
        expect(b.length, `len ${len}`).to.equal(sizeOfUnsignedVarint(len + 1) + len);
        expect(new Reader(b).compactString()).to.equal(s);
        const c = written((w) => w.string(s), 16);
        expect(new Reader(c).string()).to.equal(s);
      }
    });

    it('rejects strings longer than 32767 bytes', () => {
      expect(() => new Writer().string('x'.repeat(32768))).to.throw(/too long/);
      expect(() => new Writer().compactString('\u20ac'.repeat(11000))).to.throw(/too long/);
      expect(() => new Writer().string('\u20ac'.repeat(11000))).to.throw(/too long/);
    });

    it('rejects null in non-nullable reads and invalid negative lengths', () => {
      expect(() => new Reader(hex('ffff')).string()).to.throw(ProtocolError);
      expect(() => new Reader(hex('00')).compactString()).to.throw(ProtocolError);
      expect(() => new Reader(hex('fffe')).nullableString()).to.throw(ProtocolError);
    });

    it('throws ProtocolError on truncated strings', () => {
      expect(() => new Reader(hex('000361')).string()).to.throw(ProtocolError);
      expect(() => new Reader(hex('0461')).compactString()).to.throw(ProtocolError);
      expect(() => new Reader(hex('7fff')).string()).to.throw(ProtocolError);
      expect(() => new Reader(hex('ffffffff0f')).compactNullableString()).to.throw(ProtocolError);
    });
  });

  describe('bytes', () => {
    it('classic and compact forms, with nulls', () => {
      const data = hex('0102');
      expect(written((w) => w.bytes(data)).toString('hex')).to.equal('000000020102');
      expect(written((w) => w.nullableBytes(null)).toString('hex')).to.equal('ffffffff');
      expect(written((w) => w.compactBytes(data)).toString('hex')).to.equal('030102');
      expect(written((w) => w.compactNullableBytes(null)).toString('hex')).to.equal('00');
      expect(written((w) => w.compactBytes(EMPTY_BUFFER)).toString('hex')).to.equal('01');
      expect(new Reader(hex('000000020102')).bytes().toString('hex')).to.equal('0102');
      expect(new Reader(hex('ffffffff')).nullableBytes()).to.equal(null);
      expect(new Reader(hex('030102')).compactBytes().toString('hex')).to.equal('0102');
      expect(new Reader(hex('00')).compactNullableBytes()).to.equal(null);
      expect(() => new Reader(hex('ffffffff')).bytes()).to.throw(ProtocolError);
      expect(() => new Reader(hex('00')).compactBytes()).to.throw(ProtocolError);
      expect(() => new Reader(hex('fffffffe')).nullableBytes()).to.throw(ProtocolError);
    });

    it('decodes without copying (views into the input)', () => {
      const input = hex('00000003aabbcc');
      const b = new Reader(input).bytes();
      expect(b.buffer).to.equal(input.buffer);
      input[4] = 0x11;
      expect(b[0]).to.equal(0x11);
    });

    it('does not allocate for huge claimed lengths', () => {
      // 2 GiB claimed, 3 bytes present: must fail on the bounds check
      expect(() => new Reader(hex('7fffffff010203')).bytes()).to.throw(ProtocolError, /truncated/);
      expect(() => new Reader(hex('ffffffff07010203')).compactBytes()).to.throw(ProtocolError, /truncated/);
    });
  });

  describe('arrays and tagged fields', () => {
    it('array lengths', () => {
      expect(written((w) => w.arrayLength(3)).toString('hex')).to.equal('00000003');
      expect(written((w) => w.arrayLength(-1)).toString('hex')).to.equal('ffffffff');
      expect(written((w) => w.compactArrayLength(3)).toString('hex')).to.equal('04');
      expect(written((w) => w.compactArrayLength(-1)).toString('hex')).to.equal('00');
      expect(new Reader(hex('00000001ff')).arrayLength()).to.equal(1);
      expect(new Reader(hex('ffffffff')).arrayLength()).to.equal(-1);
      expect(new Reader(hex('02ff')).compactArrayLength()).to.equal(1);
      expect(new Reader(hex('00')).compactArrayLength()).to.equal(-1);
      expect(() => new Reader(hex('fffffffe')).arrayLength()).to.throw(ProtocolError);
    });

    it('rejects element counts larger than the remaining bytes before allocating', () => {
      expect(() => new Reader(hex('7fffffff00')).arrayLength()).to.throw(ProtocolError, /claims/);
      expect(() => new Reader(hex('ffffffff0f00')).compactArrayLength()).to.throw(ProtocolError, /claims/);
      expect(() => new Reader(hex('00000002ff')).arrayLength()).to.throw(ProtocolError);
    });

    it('skips tagged field sections', () => {
      const r = new Reader(hex('02 00 02 aabb 05 00 ee'));
      r.skipTaggedFields();
      expect(r.remaining()).to.equal(1);
      expect(() => new Reader(hex('01 00 05 aabb')).skipTaggedFields()).to.throw(ProtocolError);
      expect(() => new Reader(hex('02 00 00')).skipTaggedFields()).to.throw(ProtocolError);
    });

    it('checks the size of known tagged fields', () => {
      const r = new Reader(hex('00000001 00'));
      const end = r.beginTaggedField(2);
      r.int32();
      expect(() => r.endTaggedField(end, 0)).to.throw(ProtocolError, /size mismatch/);
      expect(() => new Reader(hex('00')).beginTaggedField(5)).to.throw(ProtocolError);
    });
  });

  describe('Writer chunking', () => {
    it('grows without copying earlier data and without losing bytes', () => {
      const w = new Writer(16);
      for (let i = 0; i < 1000; i++) w.int32(i);
      expect(w.length).to.equal(4000);
      const chunks = w.finish();
      expect(chunks.length).to.be.greaterThan(1);
      const all = Buffer.concat(chunks);
      for (let i = 0; i < 1000; i++) expect(all.readInt32BE(i * 4)).to.equal(i);
    });

    it('keeps large bytes values by reference as separate chunks', () => {
      const big = Buffer.alloc(ZERO_COPY_THRESHOLD + 10, 7);
      const small = Buffer.alloc(10, 9);
      const w = new Writer();
      w.int16(1);
      w.bytes(big);
      w.compactBytes(small);
      w.int8(2);
      const chunks = w.finish();
      expect(chunks.some((c) => c === big), 'big buffer is a chunk itself').to.equal(true);
      expect(chunks.some((c) => c === small)).to.equal(false);
      const all = Buffer.concat(chunks);
      expect(all.length).to.equal(2 + 4 + big.length + 1 + small.length + 1);
      const r = new Reader(all);
      expect(r.int16()).to.equal(1);
      expect(r.bytes().equals(big)).to.equal(true);
      expect(r.compactBytes().equals(small)).to.equal(true);
      expect(r.int8()).to.equal(2);
    });

    it('back-patches a reserved size prefix even after growth', () => {
      const w = new Writer(16);
      const size = w.reserve(4);
      for (let i = 0; i < 100; i++) w.int64(BigInt(i));
      w.raw(Buffer.alloc(ZERO_COPY_THRESHOLD * 2, 1));
      size.writeInt32BE(w.length - 4, 0);
      const frame = w.finishOne();
      expect(frame.readInt32BE(0)).to.equal(frame.length - 4);
      expect(frame.readBigInt64BE(4 + 99 * 8)).to.equal(99n);
    });

    it('can be reused after finish() without corrupting earlier output', () => {
      const w = new Writer(64);
      w.string('first');
      const a = w.finish();
      w.string('second');
      const b = w.finish();
      expect(new Reader(Buffer.concat(a)).string()).to.equal('first');
      expect(new Reader(Buffer.concat(b)).string()).to.equal('second');
      expect(w.length).to.equal(0);
      expect(w.finish()).to.deep.equal([]);
    });

    it('appends another writer', () => {
      const inner = new Writer(16);
      inner.int32(5);
      inner.bytes(Buffer.alloc(ZERO_COPY_THRESHOLD, 3));
      const outer = new Writer(16);
      outer.int8(1);
      outer.unsignedVarint(inner.length);
      outer.append(inner);
      const r = new Reader(outer.finishOne());
      expect(r.int8()).to.equal(1);
      expect(r.unsignedVarint()).to.equal(4 + 4 + ZERO_COPY_THRESHOLD);
      expect(r.int32()).to.equal(5);
      expect(r.bytes().length).to.equal(ZERO_COPY_THRESHOLD);
      expect(r.remaining()).to.equal(0);
    });
  });

  describe('Reader construction', () => {
    it('rejects invalid ranges', () => {
      expect(() => new Reader(Buffer.alloc(4), 5)).to.throw(ProtocolError);
      expect(() => new Reader(Buffer.alloc(4), 0, 5)).to.throw(ProtocolError);
    });

    it('skip is bounds-checked', () => {
      const r = new Reader(Buffer.alloc(4));
      r.skip(4);
      expect(() => r.skip(1)).to.throw(ProtocolError);
      expect(() => r.skip(-1)).to.throw(ProtocolError);
    });
  });
});
