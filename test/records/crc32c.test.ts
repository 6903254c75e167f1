import { expect } from 'chai';
import * as crypto from 'node:crypto';
import { crc32c, crc32cImplementation, crc32cJs } from '../../src/records/crc32c';

describe('records/crc32c', () => {
  // RFC 3720 (iSCSI) B.4 vectors and the common check values.
  const vectors: [string, Buffer, number][] = [
    ['"123456789"', Buffer.from('123456789'), 0xe3069283],
    ['empty', Buffer.alloc(0), 0],
    ['32 zero bytes', Buffer.alloc(32, 0), 0x8a9136aa],
    ['32 0xff bytes', Buffer.alloc(32, 0xff), 0x62a8ab43],
    ['32 ascending bytes', Buffer.from(Array.from({ length: 32 }, (_, i) => i)), 0x46dd794e],
    ['32 descending bytes', Buffer.from(Array.from({ length: 32 }, (_, i) => 31 - i)), 0x113fdb5c],
    ['quick brown fox', Buffer.from('The quick brown fox jumps over the lazy dog'), 0x22620404],
  ];
  for (const [name, input, want] of vectors) {
    it(`known vector: ${name}`, () => {
      expect(crc32c(input)).to.equal(want);
      expect(crc32cJs(input)).to.equal(want);
    });
  }

  it('uses the native implementation on the platforms @node-rs/crc32 ships for', () => {
    if (!['linux', 'darwin', 'win32'].includes(process.platform) || !['x64', 'arm64'].includes(process.arch)) return;
    expect(crc32cImplementation).to.equal('native');
  });

  it('native and JS paths agree on every length 0..600 and on large inputs, at odd offsets', () => {
    const buf = crypto.randomBytes(70000);
    for (let len = 0; len <= 600; len++) {
      expect(crc32c(buf, 3, 3 + len), `len ${len}`).to.equal(crc32cJs(buf, 3, 3 + len));
    }
    for (const len of [1024, 4093, 16384, 65536]) {
      expect(crc32c(buf, 7, 7 + len), `len ${len}`).to.equal(crc32cJs(buf, 7, 7 + len));
    }
  });

  it('a range is the CRC of that slice alone, and always unsigned', () => {
    const buf = Buffer.concat([Buffer.from('xx'), Buffer.from('123456789'), Buffer.from('yyyy')]);
    expect(crc32c(buf, 2, 11)).to.equal(0xe3069283);
    const big = crypto.randomBytes(5000);
    for (let i = 0; i < 50; i++) {
      const v = crc32c(big, i, big.length - i);
      expect(v).to.be.at.least(0).and.below(2 ** 32);
      expect(v).to.equal(crc32c(Buffer.from(big.subarray(i, big.length - i))));
    }
  });

  it('a single flipped bit changes the CRC', () => {
    const buf = crypto.randomBytes(1000);
    const before = crc32c(buf);
    buf[500] ^= 0x10;
    expect(crc32c(buf)).to.not.equal(before);
  });

  it('refuses a range outside the buffer', () => {
    expect(() => crc32c(Buffer.alloc(4), 0, 5)).to.throw(RangeError);
    expect(() => crc32c(Buffer.alloc(4), 3, 2)).to.throw(RangeError);
  });
});
