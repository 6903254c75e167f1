import { ProtocolError } from './codec-errors';
import { MAX_STRING_LENGTH, zigzagDecode32, zigzagDecode64 } from './encoding';

function fail(msg: string): never {
  throw new ProtocolError(msg);
}

/**
 * Sequential reader over one Buffer. Every read is bounds-checked against
 * `end` and throws ProtocolError on truncated or malformed input. Lengths
 * claimed by the peer are validated against the remaining bytes before
 * anything is allocated.
 */
export class Reader {
  readonly buf: Buffer;
  offset: number;
  readonly end: number;

  constructor(buf: Buffer, offset = 0, end = buf.length) {
    if (offset < 0 || end > buf.length || offset > end) fail(`invalid reader range ${offset}..${end} of ${buf.length}`);
    this.buf = buf;
    this.offset = offset;
    this.end = end;
  }

  remaining(): number {
    return this.end - this.offset;
  }

  /** Throws unless `n` more bytes are available. */
  need(n: number): void {
    if (n > this.end - this.offset) {
      fail(`truncated input: need ${n} byte(s) at offset ${this.offset}, ${this.end - this.offset} remain`);
    }
  }

  skip(n: number): void {
    if (n < 0) fail(`negative skip ${n}`);
    this.need(n);
    this.offset += n;
  }

  int8(): number {
    this.need(1);
    return this.buf.readInt8(this.offset++);
  }

  uint8(): number {
    this.need(1);
    return this.buf[this.offset++];
  }

  bool(): boolean {
    this.need(1);
    return this.buf[this.offset++] !== 0;
  }

  int16(): number {
    this.need(2);
    const v = this.buf.readInt16BE(this.offset);
    this.offset += 2;
    return v;
  }

  uint16(): number {
    this.need(2);
    const v = this.buf.readUInt16BE(this.offset);
    this.offset += 2;
    return v;
  }

  int32(): number {
    this.need(4);
    const v = this.buf.readInt32BE(this.offset);
    this.offset += 4;
    return v;
  }

  uint32(): number {
    this.need(4);
    const v = this.buf.readUInt32BE(this.offset);
    this.offset += 4;
    return v;
  }

  int64(): bigint {
    this.need(8);
    const v = this.buf.readBigInt64BE(this.offset);
    this.offset += 8;
    return v;
  }

  float64(): number {
    this.need(8);
    const v = this.buf.readDoubleBE(this.offset);
    this.offset += 8;
    return v;
  }

  uuid(): string {
    this.need(16);
    const v = this.buf.toString('hex', this.offset, this.offset + 16);
    this.offset += 16;
    return v;
  }

  /** Unsigned varint, at most 5 bytes, value 0 .. 2^32-1. */
  unsignedVarint(): number {
    const buf = this.buf;
    let off = this.offset;
    const end = this.end;
    let value = 0;
    let shift = 0;
    for (let i = 0; i < 5; i++) {
      if (off >= end) fail(`truncated varint at offset ${this.offset}`);
      const b = buf[off++];
      if (i === 4 && b > 0x0f) fail(`varint too long at offset ${this.offset}`);
      value += (b & 0x7f) * 2 ** shift;
      if ((b & 0x80) === 0) {
        this.offset = off;
        return value;
      }
      shift += 7;
    }
    return fail(`varint too long at offset ${this.offset}`);
  }

  /** Zigzag-encoded signed 32-bit varint. */
  varint(): number {
    return zigzagDecode32(this.unsignedVarint());
  }

  /** Zigzag-encoded signed 64-bit varint (at most 10 bytes). */
  varlong(): bigint {
    const buf = this.buf;
    let off = this.offset;
    const end = this.end;
    let low = 0; // first 49 bits as a number
    let shift = 0;
    for (let i = 0; i < 7; i++) {
      if (off >= end) fail(`truncated varlong at offset ${this.offset}`);
      const b = buf[off++];
      low += (b & 0x7f) * 2 ** shift;
      if ((b & 0x80) === 0) {
        this.offset = off;
        return zigzagDecode64(BigInt(low));
      }
      shift += 7;
    }
    let value = BigInt(low);
    let bshift = 49n;
    for (let i = 7; i < 10; i++) {
      if (off >= end) fail(`truncated varlong at offset ${this.offset}`);
      const b = buf[off++];
      if (i === 9 && b > 0x01) fail(`varlong too long at offset ${this.offset}`);
      value |= BigInt(b & 0x7f) << bshift;
      if ((b & 0x80) === 0) {
        this.offset = off;
        return zigzagDecode64(value);
      }
      bshift += 7n;
    }
    return fail(`varlong too long at offset ${this.offset}`);
  }

  private utf8(len: number): string {
    this.need(len);
    const start = this.offset;
    this.offset += len;
    const s = this.buf.toString('utf8', start, start + len);
    // Invalid UTF-8 decodes to U+FFFD (3 bytes for each bad byte): a long enough string would then be
    // too long to write back in a response, so it is refused here, where it is made.
    if (len > MAX_STRING_LENGTH / 3 && Buffer.byteLength(s, 'utf8') > MAX_STRING_LENGTH) {
      fail(`string of ${len} bytes at offset ${start} is not valid UTF-8 and would not fit ${MAX_STRING_LENGTH} bytes once decoded`);
    }
    return s;
  }

  private view(len: number): Buffer {
    this.need(len);
    const start = this.offset;
    this.offset += len;
    return this.buf.subarray(start, start + len);
  }

  /** int16 length + utf8; null (-1) is an error. */
  string(): string {
    const len = this.int16();
    if (len < 0) fail(`non-nullable string was serialized as null (length ${len})`);
    return this.utf8(len);
  }

  nullableString(): string | null {
    const len = this.int16();
    if (len < 0) {
      if (len !== -1) fail(`invalid string length ${len}`);
      return null;
    }
    return this.utf8(len);
  }

  /** unsigned varint (length+1) + utf8; null (0) is an error. */
  compactString(): string {
    const n = this.unsignedVarint();
    if (n === 0) fail('non-nullable compact string was serialized as null');
    if (n - 1 > MAX_STRING_LENGTH) fail(`compact string length ${n - 1} exceeds ${MAX_STRING_LENGTH}`);
    return this.utf8(n - 1);
  }

  compactNullableString(): string | null {
    const n = this.unsignedVarint();
    if (n === 0) return null;
    if (n - 1 > MAX_STRING_LENGTH) fail(`compact string length ${n - 1} exceeds ${MAX_STRING_LENGTH}`);
    return this.utf8(n - 1);
  }

  /** int32 length + data (a view, not a copy); null (-1) is an error. */
  bytes(): Buffer {
    const len = this.int32();
    if (len < 0) fail(`non-nullable bytes were serialized as null (length ${len})`);
    return this.view(len);
  }

  nullableBytes(): Buffer | null {
    const len = this.int32();
    if (len < 0) {
      if (len !== -1) fail(`invalid bytes length ${len}`);
      return null;
    }
    return this.view(len);
  }

  compactBytes(): Buffer {
    const n = this.unsignedVarint();
    if (n === 0) fail('non-nullable compact bytes were serialized as null');
    return this.view(n - 1);
  }

  compactNullableBytes(): Buffer | null {
    const n = this.unsignedVarint();
    if (n === 0) return null;
    return this.view(n - 1);
  }

  /**
   * int32 array length; returns -1 for null. Throws if the claimed element
   * count exceeds the remaining bytes (every element takes at least one byte).
   */
  arrayLength(): number {
    const n = this.int32();
    if (n < 0) {
      if (n !== -1) fail(`invalid array length ${n}`);
      return -1;
    }
    if (n > this.end - this.offset) fail(`array claims ${n} elements but only ${this.end - this.offset} bytes remain`);
    return n;
  }

  /** unsigned varint (length+1) array length; returns -1 for null. */
  compactArrayLength(): number {
    const n = this.unsignedVarint() - 1;
    if (n > this.end - this.offset) fail(`array claims ${n} elements but only ${this.end - this.offset} bytes remain`);
    return n;
  }

  /**
   * Validates the size of a tagged field about to be read and returns the
   * offset at which it must end (pass it to `endTaggedField`).
   */
  beginTaggedField(size: number): number {
    this.need(size);
    return this.offset + size;
  }

  endTaggedField(end: number, tag: number): void {
    if (this.offset !== end) fail(`tagged field ${tag} size mismatch: expected to end at ${end}, ended at ${this.offset}`);
  }

  /** Reads (and discards) a whole tagged-field section. */
  skipTaggedFields(): void {
    const count = this.unsignedVarint();
    for (let i = 0; i < count; i++) {
      this.unsignedVarint(); // tag
      this.skip(this.unsignedVarint());
    }
  }
}
