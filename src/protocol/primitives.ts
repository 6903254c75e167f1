/**
 * Kafka wire-protocol primitives: a bounds-checked zero-copy `Reader` and a
 * chunked, growable `Writer`.
 *
 * Representation conventions (shared with the generated codecs):
 *  - int8/int16/int32/uint16/float64: number; int64: bigint
 *  - uuid: 32-char lowercase hex string (zero uuid = ZERO_UUID)
 *  - bytes / records: Buffer (decoded as a view into the input, not a copy)
 */

export class ProtocolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProtocolError';
  }
}

export const ZERO_UUID = '00000000000000000000000000000000';
export const EMPTY_BUFFER: Buffer = Buffer.alloc(0);
/** Kafka's limit for string lengths (both classic and compact forms). */
export const MAX_STRING_LENGTH = 0x7fff;
/** bytes/records values at least this large are appended as their own chunk instead of being copied. */
export const ZERO_COPY_THRESHOLD = 1024;

// ---------------------------------------------------------------------------
// zigzag / varint helpers
// ---------------------------------------------------------------------------

/** Zigzag-encode a signed 32-bit integer into an unsigned 32-bit integer. */
export function zigzagEncode32(n: number): number {
  return ((n << 1) ^ (n >> 31)) >>> 0;
}

/** Inverse of zigzagEncode32. */
export function zigzagDecode32(n: number): number {
  return (n >>> 1) ^ -(n & 1);
}

const U64_MASK = (1n << 64n) - 1n;

/** Zigzag-encode a signed 64-bit bigint into an unsigned 64-bit bigint. */
export function zigzagEncode64(n: bigint): bigint {
  return ((n << 1n) ^ (n >> 63n)) & U64_MASK;
}

/** Inverse of zigzagEncode64. */
export function zigzagDecode64(n: bigint): bigint {
  return BigInt.asIntN(64, (n >> 1n) ^ -(n & 1n));
}

/** Encoded size of an unsigned varint (0 .. 2^32-1). */
export function sizeOfUnsignedVarint(n: number): number {
  n = n >>> 0;
  if (n < 0x80) return 1;
  if (n < 0x4000) return 2;
  if (n < 0x200000) return 3;
  if (n < 0x10000000) return 4;
  return 5;
}

/** Encoded size of a zigzag varint (signed 32-bit). */
export function sizeOfVarint(n: number): number {
  return sizeOfUnsignedVarint(zigzagEncode32(n));
}

/** Encoded size of a zigzag varlong (signed 64-bit). */
export function sizeOfVarlong(n: bigint): number {
  let v = zigzagEncode64(n);
  let size = 1;
  while (v >= 0x80n) {
    v >>= 7n;
    size++;
  }
  return size;
}

function fail(msg: string): never {
  throw new ProtocolError(msg);
}

// ---------------------------------------------------------------------------
// Reader
// ---------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------
// Writer
// ---------------------------------------------------------------------------

const DEFAULT_WRITER_SIZE = 1024;
const MAX_GROW_SIZE = 1 << 20;

/**
 * Append-only encoder producing a list of chunks.
 *
 * Bytes are written into an internal buffer (small initial buffers come from
 * Node's shared allocation pool via Buffer.allocUnsafe). When the buffer is
 * full, the filled part is kept as a chunk and a new, bigger buffer is
 * started: nothing already written is ever copied or moved, so views
 * returned by `reserve()` stay valid until they are written. bytes/records
 * values of ZERO_COPY_THRESHOLD bytes or more are not copied at all: they
 * become chunks of their own (so the caller must not modify them until the
 * output has been written out).
 *
 * `finish()` hands out the chunks and resets the writer; the writer can be
 * reused for the next message and continues in the unused tail of its
 * current buffer (already handed-out regions are never overwritten).
 */
export class Writer {
  private buf: Buffer;
  private pos = 0;
  /** start of the not-yet-chunked region of `buf` */
  private start = 0;
  private chunks: Buffer[] = [];
  /** total bytes in `chunks` */
  private chunked = 0;

  constructor(initialSize = DEFAULT_WRITER_SIZE) {
    this.buf = Buffer.allocUnsafe(Math.max(16, initialSize));
  }

  /** Total number of bytes written since the last finish(). */
  get length(): number {
    return this.chunked + (this.pos - this.start);
  }

  private flushSegment(): void {
    if (this.pos > this.start) {
      this.chunks.push(this.buf.subarray(this.start, this.pos));
      this.chunked += this.pos - this.start;
    }
    this.start = this.pos;
  }

  /** Makes sure `n` contiguous bytes are available at `pos`. */
  private ensure(n: number): void {
    if (this.buf.length - this.pos >= n) return;
    this.flushSegment();
    let size = Math.min(MAX_GROW_SIZE, Math.max(this.buf.length * 2, 256));
    if (size < n) size = n;
    this.buf = Buffer.allocUnsafe(size);
    this.pos = 0;
    this.start = 0;
  }

  /**
   * Reserves `n` contiguous bytes and returns a view of them, to be filled in
   * later (e.g. a size prefix: `reserve(4).writeInt32BE(size)`).
   */
  reserve(n: number): Buffer {
    this.ensure(n);
    const view = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return view;
  }

  int8(v: number): void {
    this.ensure(1);
    this.buf.writeInt8(v, this.pos);
    this.pos += 1;
  }

  uint8(v: number): void {
    this.ensure(1);
    this.buf[this.pos++] = v;
  }

  bool(v: boolean): void {
    this.ensure(1);
    this.buf[this.pos++] = v ? 1 : 0;
  }

  int16(v: number): void {
    this.ensure(2);
    this.buf.writeInt16BE(v, this.pos);
    this.pos += 2;
  }

  uint16(v: number): void {
    this.ensure(2);
    this.buf.writeUInt16BE(v, this.pos);
    this.pos += 2;
  }

  int32(v: number): void {
    this.ensure(4);
    this.buf.writeInt32BE(v, this.pos);
    this.pos += 4;
  }

  uint32(v: number): void {
    this.ensure(4);
    this.buf.writeUInt32BE(v, this.pos);
    this.pos += 4;
  }

  int64(v: bigint): void {
    this.ensure(8);
    this.buf.writeBigInt64BE(v, this.pos);
    this.pos += 8;
  }

  float64(v: number): void {
    this.ensure(8);
    this.buf.writeDoubleBE(v, this.pos);
    this.pos += 8;
  }

  uuid(v: string): void {
    if (v.length !== 32) throw new Error(`invalid uuid ${JSON.stringify(v)}: expected 32 hex characters`);
    this.ensure(16);
    const n = this.buf.write(v, this.pos, 16, 'hex');
    if (n !== 16) throw new Error(`invalid uuid ${JSON.stringify(v)}: expected 32 hex characters`);
    this.pos += 16;
  }

  /** Unsigned varint of a value 0 .. 2^32-1. */
  unsignedVarint(v: number): void {
    if (v < 0 || v > 0xffffffff || !Number.isInteger(v)) throw new Error(`unsigned varint out of range: ${v}`);
    this.ensure(5);
    const buf = this.buf;
    let pos = this.pos;
    while (v >= 0x80) {
      buf[pos++] = (v & 0x7f) | 0x80;
      v = Math.floor(v / 128);
    }
    buf[pos++] = v;
    this.pos = pos;
  }

  /** Zigzag signed 32-bit varint. */
  varint(v: number): void {
    this.unsignedVarint(zigzagEncode32(v));
  }

  /** Zigzag signed 64-bit varint. */
  varlong(v: bigint): void {
    let z = zigzagEncode64(v);
    this.ensure(10);
    const buf = this.buf;
    let pos = this.pos;
    if (z < 0x20000000000000n) {
      let n = Number(z);
      while (n >= 0x80) {
        buf[pos++] = (n & 0x7f) | 0x80;
        n = Math.floor(n / 128);
      }
      buf[pos++] = n;
    } else {
      while (z >= 0x80n) {
        buf[pos++] = Number(z & 0x7fn) | 0x80;
        z >>= 7n;
      }
      buf[pos++] = Number(z);
    }
    this.pos = pos;
  }

  /** int16 length + utf8. */
  string(v: string): void {
    if (v.length <= 10922) {
      // at most 3 utf8 bytes per utf16 code unit: fits the int16 limit; write then back-patch the length
      this.ensure(2 + v.length * 3);
      const n = this.buf.write(v, this.pos + 2, 'utf8');
      this.buf.writeInt16BE(n, this.pos);
      this.pos += 2 + n;
      return;
    }
    const n = Buffer.byteLength(v, 'utf8');
    if (n > MAX_STRING_LENGTH) throw new Error(`string too long: ${n} bytes (max ${MAX_STRING_LENGTH})`);
    this.ensure(2 + n);
    this.buf.writeInt16BE(n, this.pos);
    this.buf.write(v, this.pos + 2, 'utf8');
    this.pos += 2 + n;
  }

  nullableString(v: string | null): void {
    if (v === null) this.int16(-1);
    else this.string(v);
  }

  /** unsigned varint (length+1) + utf8. */
  compactString(v: string): void {
    if (v.length <= 42) {
      // at most 126 bytes: the length prefix is a single byte
      this.ensure(1 + v.length * 3);
      const n = this.buf.write(v, this.pos + 1, 'utf8');
      this.buf[this.pos] = n + 1;
      this.pos += 1 + n;
      return;
    }
    const n = Buffer.byteLength(v, 'utf8');
    if (n > MAX_STRING_LENGTH) throw new Error(`string too long: ${n} bytes (max ${MAX_STRING_LENGTH})`);
    this.unsignedVarint(n + 1);
    this.ensure(n);
    this.buf.write(v, this.pos, 'utf8');
    this.pos += n;
  }

  compactNullableString(v: string | null): void {
    if (v === null) this.uint8(0);
    else this.compactString(v);
  }

  /**
   * Appends raw bytes. Values of ZERO_COPY_THRESHOLD bytes or more are kept
   * by reference as a separate chunk.
   */
  raw(v: Buffer): void {
    const n = v.length;
    if (n >= ZERO_COPY_THRESHOLD) {
      this.flushSegment();
      this.chunks.push(v);
      this.chunked += n;
      return;
    }
    this.ensure(n);
    v.copy(this.buf, this.pos);
    this.pos += n;
  }

  /** int32 length + data. */
  bytes(v: Buffer): void {
    this.int32(v.length);
    this.raw(v);
  }

  nullableBytes(v: Buffer | null): void {
    if (v === null) this.int32(-1);
    else this.bytes(v);
  }

  compactBytes(v: Buffer): void {
    this.unsignedVarint(v.length + 1);
    this.raw(v);
  }

  compactNullableBytes(v: Buffer | null): void {
    if (v === null) this.uint8(0);
    else this.compactBytes(v);
  }

  /** int32 array length; -1 for null. */
  arrayLength(n: number): void {
    this.int32(n);
  }

  /** unsigned varint (length+1) array length; -1 for null. */
  compactArrayLength(n: number): void {
    this.unsignedVarint(n + 1);
  }

  /** Appends everything written to `other` (which is finished/reset by this). */
  append(other: Writer): void {
    const chunks = other.finish();
    for (let i = 0; i < chunks.length; i++) this.raw(chunks[i]);
  }

  /**
   * Returns the written chunks (in order) and resets the writer for the
   * next message.
   */
  finish(): Buffer[] {
    this.flushSegment();
    const chunks = this.chunks;
    this.chunks = [];
    this.chunked = 0;
    return chunks;
  }

  /** finish() concatenated into a single Buffer (copies when there are several chunks). */
  finishOne(): Buffer {
    const chunks = this.finish();
    if (chunks.length === 1) return chunks[0];
    return Buffer.concat(chunks);
  }
}

// ---------------------------------------------------------------------------
// errors raised by the generated codecs
// ---------------------------------------------------------------------------

/** Kafka's UnsupportedVersionException: the value cannot be expressed in the requested version. */
export class UnsupportedVersionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnsupportedVersionError';
  }
}

/** A non-default value was given for a non-ignorable field absent from `version`. */
export function unsupportedField(path: string, version: number): UnsupportedVersionError {
  return new UnsupportedVersionError(`attempted to write a non-default ${path} at version ${version}`);
}

/** null was given (or received) for a field that is not nullable in `version`. */
export function nullNotAllowed(path: string, version: number): ProtocolError {
  return new ProtocolError(`${path} is not nullable in version ${version}`);
}

/** Throws UnsupportedVersionError when version is outside min..max. */
export function checkVersion(name: string, version: number, min: number, max: number): void {
  if (!(version >= min && version <= max)) {
    throw new UnsupportedVersionError(`${name} version ${version} is not in the supported range ${min}-${max}`);
  }
}
