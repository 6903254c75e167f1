import { MAX_STRING_LENGTH, zigzagEncode32, zigzagEncode64 } from './encoding';

/** bytes/records values at least this large are appended as their own chunk instead of being copied. */
export const ZERO_COPY_THRESHOLD = 1024;

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
