// Random messages written byte by byte from the JSON specs (protocol-specs/), independently of the
// generated codecs they are fed to: boundary values, nulls where nullable, empty and long arrays,
// long and non-ASCII strings, known and unknown tagged fields. In hostile mode the writer also lies:
// nulls where not nullable, negative and oversized lengths, garbage tagged fields, booleans that are
// neither 0 nor 1. All randomness comes from a seeded PRNG so that any input can be made again.
import { Writer } from '../../src/protocol/primitives';
import { type RawField, type RawSpec, camel, inRange, parseRange } from '../protocol/spec-util';

/** mulberry32: small, fast and seedable; the same seed gives the same inputs. */
export class Prng {
  private state: number;
  constructor(readonly seed: number) {
    this.state = seed >>> 0;
  }

  /** A float in [0, 1). */
  next(): number {
    let t = (this.state = (this.state + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [lo, hi]. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)];
  }

  bytes(n: number): Buffer {
    const b = Buffer.allocUnsafe(n);
    for (let i = 0; i < n; i++) b[i] = Math.floor(this.next() * 256);
    return b;
  }
}

/**
 * A fixed choice of boundary values instead of random ones: every nullable string, bytes and struct
 * null, inside arrays of one element ('nulls'); nullable arrays null and everything else empty
 * ('empty'); one element per array with the first of `names` ('one'); or the largest and smallest
 * values of every type ('max', 'min'; 'max' strings are 32,767 bytes long).
 */
export type Profile = 'nulls' | 'empty' | 'one' | 'max' | 'min';
export const PROFILES: readonly Profile[] = ['nulls', 'empty', 'one', 'max', 'min'];

export interface SpecBytesOptions {
  profile?: Profile;
  /** Write lies too: lengths that do not match, nulls where not nullable, bad tagged fields. */
  hostile: boolean;
  /** Write unknown tagged fields (valid: a reader must skip them; off when bytes must round-trip). */
  unknownTags: boolean;
  /** Names worth hitting often (existing topics, groups), mixed into every string. */
  names: readonly string[];
  /** The content of a `records` field; random bytes when absent. */
  records?: (rng: Prng) => Buffer;
  /** Fixes a value by field name before it is written (e.g. a short Fetch maxWaitMs). */
  override?: (field: string, rng: Prng) => number | bigint | undefined;
}

const INT_BOUNDS: Record<string, [number, number]> = {
  int8: [-128, 127], int16: [-32768, 32767], uint16: [0, 65535], int32: [-2147483648, 2147483647],
};
const INT64_BOUNDS = [-(1n << 63n), (1n << 63n) - 1n, -1n, 0n, 1n];
const PRIMITIVES = new Set(['bool', 'int8', 'int16', 'uint16', 'int32', 'int64', 'float64', 'uuid', 'string', 'bytes', 'records']);
/** Longest string written: the protocol's limit in valid mode, past it in hostile mode. */
const MAX_STRING = 0x7fff;

/** Writes random messages of one spec at one version. */
export class SpecBytes {
  private readonly flexible: boolean;
  /** Bytes written so far for this message: arrays shrink once it is large, so messages stay small. */
  private budget = 0;
  /** Whether the last message has any tagged field (its encoding then need not be canonical). */
  wroteTags = false;

  constructor(
    private readonly spec: RawSpec,
    private readonly version: number,
    private readonly rng: Prng,
    private readonly opts: SpecBytesOptions,
  ) {
    this.flexible = inRange(version, parseRange(spec.flexibleVersions));
  }

  /** One message body (no header). */
  message(): Buffer {
    this.budget = 0;
    this.wroteTags = false;
    const w = new Writer();
    this.struct(w, this.spec.fields);
    return w.finishOne();
  }

  private lie(p = 0.02): boolean {
    return this.opts.hostile && this.rng.chance(p);
  }

  private struct(w: Writer, fields: RawField[]): void {
    const tagged: RawField[] = [];
    for (const f of fields) {
      if (!inRange(this.version, parseRange(f.versions))) continue;
      if (f.tag !== undefined && inRange(this.version, parseRange(f.taggedVersions))) {
        tagged.push(f);
        continue;
      }
      this.field(w, f);
    }
    if (this.flexible) this.taggedFields(w, tagged);
  }

  private taggedFields(w: Writer, known: RawField[]): void {
    const entries: [number, Buffer][] = [];
    const profile = this.opts.profile;
    for (const f of known) {
      if (profile ? profile === 'nulls' || profile === 'empty' : !this.rng.chance(0.4)) continue;
      const inner = new Writer();
      this.field(inner, f);
      entries.push([f.tag!, inner.finishOne()]);
    }
    if (this.opts.unknownTags && (profile ? profile === 'max' : this.rng.chance(0.15))) {
      const tag = this.rng.pick([this.rng.int(0, 40), 1000, 0x7fffffff]);
      if (!known.some((f) => f.tag === tag)) entries.push([tag, this.rng.bytes(this.rng.int(0, 20))]);
    }
    entries.sort((a, b) => a[0] - b[0]);
    if (entries.length > 0) this.wroteTags = true;
    w.unsignedVarint(this.lie() ? entries.length + this.rng.int(1, 3) : entries.length);
    for (const [tag, data] of entries) {
      w.unsignedVarint(tag);
      w.unsignedVarint(this.lie() ? data.length + this.rng.pick([-1, 1, 1000]) >>> 0 : data.length);
      w.raw(data);
    }
  }

  private nullable(f: RawField): boolean {
    return inRange(this.version, parseRange(f.nullableVersions));
  }

  private flexibleField(f: RawField): boolean {
    return f.flexibleVersions !== undefined ? inRange(this.version, parseRange(f.flexibleVersions)) : this.flexible;
  }

  private field(w: Writer, f: RawField): void {
    const compact = this.flexibleField(f);
    const profile = this.opts.profile;
    const isArray = f.type.startsWith('[]');
    const wantNull = profile
      ? this.nullable(f) && (isArray ? profile === 'empty' : profile === 'nulls')
      : (this.nullable(f) && this.rng.chance(0.1)) || this.lie(0.01);
    if (isArray) {
      if (wantNull) return this.arrayLength(w, compact, -1);
      const n = this.arrayCount();
      this.arrayLength(w, compact, this.lie() ? this.rng.pick([-2, n + 1, 0x7ffffff0]) : n);
      const elem = f.type.slice(2);
      for (let i = 0; i < n; i++) {
        if (PRIMITIVES.has(elem)) this.primitive(w, elem, f, compact, false);
        else this.struct(w, this.structFields(f));
      }
      return;
    }
    if (!PRIMITIVES.has(f.type)) {
      // A struct field; nullable structs carry an int8 marker (-1 null, 1 present).
      if (this.nullable(f)) {
        if (wantNull) return w.int8(-1);
        w.int8(1);
      }
      return this.struct(w, this.structFields(f));
    }
    this.primitive(w, f.type, f, compact, wantNull);
  }

  private structFields(f: RawField): RawField[] {
    if (f.fields) return f.fields;
    const name = f.type.replace(/^\[\]/, '');
    const common = (this.spec.commonStructs ?? []).find((s) => s.name === name);
    if (!common) throw new Error(`${this.spec.name}: unknown struct ${name}`);
    return common.fields;
  }

  private arrayCount(): number {
    if (this.opts.profile) return this.opts.profile === 'empty' ? 0 : 1;
    if (this.budget > 64 * 1024) return 0;
    const r = this.rng.next();
    if (r < 0.25) return 0;
    if (r < 0.9) return this.rng.int(1, 3);
    return this.rng.int(10, 60);
  }

  private arrayLength(w: Writer, compact: boolean, n: number): void {
    if (compact) w.unsignedVarint((n + 1) >>> 0);
    else w.int32(n);
  }

  private primitive(w: Writer, type: string, f: RawField, compact: boolean, asNull: boolean): void {
    const forced = this.opts.override?.(camel(f.name), this.rng);
    switch (type) {
      case 'bool':
        if (this.opts.profile) return w.uint8(this.opts.profile === 'max' || this.opts.profile === 'one' ? 1 : 0);
        return w.uint8(this.lie() ? this.rng.int(2, 255) : this.rng.int(0, 1));
      case 'int8':
      case 'int16':
      case 'uint16':
      case 'int32': {
        const v = typeof forced === 'number' ? forced : this.integer(type);
        if (type === 'int8') w.int8(v);
        else if (type === 'int16') w.int16(v);
        else if (type === 'uint16') w.uint16(v);
        else w.int32(v);
        return;
      }
      case 'int64':
        return w.int64(typeof forced === 'bigint' ? forced : this.int64());
      case 'float64':
        return w.float64(this.rng.pick([0, -1, 1.5, 1e300, -1e-300, this.rng.next() * 1e6]));
      case 'uuid':
        if (this.opts.profile) return w.raw(Buffer.alloc(16, this.opts.profile === 'max' ? 0xff : 0));
        return w.raw(this.rng.chance(0.3) ? Buffer.alloc(16) : this.rng.bytes(16));
      case 'string':
        return this.lengthPrefixed(w, compact, asNull, false, () => Buffer.from(this.string(), 'utf8'));
      case 'bytes':
        return this.lengthPrefixed(w, compact, asNull, true, () => this.rng.bytes(this.rng.pick([0, 1, 8, this.rng.int(0, 300)])));
      case 'records':
        return this.lengthPrefixed(w, compact, asNull, true, () => (this.opts.records ? this.opts.records(this.rng) : this.rng.bytes(this.rng.int(0, 200))));
    }
    throw new Error(`unhandled type ${type}`);
  }

  /** A string, bytes or records value: length (int16/int32 or compact varint) then data, or null. */
  private lengthPrefixed(w: Writer, compact: boolean, asNull: boolean, wide: boolean, data: () => Buffer): void {
    if (asNull) {
      if (compact) w.unsignedVarint(0);
      else if (wide) w.int32(-1);
      else w.int16(-1);
      return;
    }
    const d = data();
    this.budget += d.length;
    let len = d.length;
    if (this.lie()) len = this.rng.pick([-2, -32768, d.length + 1, d.length + 100000, 0x7fffffff]);
    if (compact) w.unsignedVarint((len + 1) >>> 0);
    else if (wide) w.int32(len);
    else w.int16(len < -32768 || len > 32767 ? -2 : len);
    w.raw(d);
  }

  private integer(type: string): number {
    const [lo, hi] = INT_BOUNDS[type];
    switch (this.opts.profile) {
      case 'max': return hi;
      case 'min': return lo;
      case 'nulls': return Math.max(lo, -1);
      case 'empty':
      case 'one': return 0;
    }
    const r = this.rng.next();
    if (r < 0.45) return this.rng.int(Math.max(lo, -1), Math.min(hi, 4));
    if (r < 0.65) return this.rng.pick([lo, hi, lo + 1, hi - 1]);
    return this.rng.int(lo, hi);
  }

  private int64(): bigint {
    switch (this.opts.profile) {
      case 'max': return INT64_BOUNDS[1];
      case 'min': return INT64_BOUNDS[0];
      case 'nulls': return -1n;
      case 'empty':
      case 'one': return 0n;
    }
    const r = this.rng.next();
    if (r < 0.45) return BigInt(this.rng.int(-1, 4));
    if (r < 0.65) return this.rng.pick(INT64_BOUNDS);
    return BigInt.asIntN(64, (BigInt(this.rng.int(0, 0x7fffffff)) << 32n) | BigInt(this.rng.int(0, 0xffffffff)));
  }

  private string(): string {
    switch (this.opts.profile) {
      case 'max': return 'x'.repeat(MAX_STRING);
      case 'min': return '\u20ac';
      case 'one': return this.opts.names[0] ?? 's';
      case 'nulls':
      case 'empty': return '';
    }
    const r = this.rng.next();
    if (r < 0.15) return '';
    if (r < 0.5 && this.opts.names.length > 0) return this.rng.pick(this.opts.names);
    if (r < 0.6) return '\u00fc\u20ac\u{1F600}-' + this.rng.int(0, 99);
    if (r < 0.63) return '.';
    if (r < 0.66) return '..';
    if (r < 0.7) {
      // long, up to the protocol's limit (multi-byte characters near it)
      const n = this.rng.pick([249, 250, 256, 1000, MAX_STRING]);
      return this.rng.chance(0.5) ? 'x'.repeat(n) : '\u20ac'.repeat(Math.floor(n / 3));
    }
    const n = this.rng.int(1, 12);
    let s = '';
    for (let i = 0; i < n; i++) s += String.fromCharCode(this.rng.pick([this.rng.int(97, 122), this.rng.int(32, 126)]));
    return s;
  }
}
