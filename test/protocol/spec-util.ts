/**
 * Test helpers: an independent (not shared with scripts/gen.js) reading of
 * the JSON message specs, and a generator of sample message values.
 */
import * as fs from 'fs';
import * as path from 'path';

function findRoot(...starts: string[]): string {
  for (const start of starts) {
    let dir = start;
    for (;;) {
      if (fs.existsSync(path.join(dir, 'package.json')) && fs.existsSync(path.join(dir, 'protocol-specs'))) return dir;
      const up = path.dirname(dir);
      if (up === dir) break;
      dir = up;
    }
  }
  throw new Error(`project root not found above ${starts.join(' or ')}`);
}

/** The project root (the directory holding package.json and protocol-specs/). */
export const ROOT = findRoot(__dirname, process.cwd());
export const SPEC_DIR = path.join(ROOT, 'protocol-specs');

export interface RawField {
  name: string;
  type: string;
  /** absent in some of Kafka's specs: a tagged field's versions are then its taggedVersions */
  versions?: string;
  nullableVersions?: string;
  taggedVersions?: string;
  tag?: number;
  default?: string | number | boolean;
  ignorable?: boolean;
  flexibleVersions?: string;
  mapKey?: boolean;
  entityType?: string;
  fields?: RawField[];
  [k: string]: unknown;
}

export interface RawStruct {
  name: string;
  versions?: string;
  fields: RawField[];
  [k: string]: unknown;
}

export interface RawSpec {
  name: string;
  type: string;
  apiKey?: number;
  validVersions: string;
  flexibleVersions?: string;
  fields: RawField[];
  commonStructs?: RawStruct[];
  [k: string]: unknown;
}

/** Removes // comments that are outside JSON strings. */
export function stripJsonComments(text: string): string {
  let out = '';
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      out += c;
      if (c === '\\') out += text[++i] ?? '';
      else if (c === '"') inString = false;
    } else if (c === '"') {
      inString = true;
      out += c;
    } else if (c === '/' && text[i + 1] === '/') {
      while (i < text.length && text[i] !== '\n') i++;
      out += '\n';
    } else {
      out += c;
    }
  }
  return out;
}

export function parseSpec(text: string): RawSpec {
  return JSON.parse(stripJsonComments(text)) as RawSpec;
}

export function loadSpecFile(file: string): RawSpec {
  return parseSpec(fs.readFileSync(file, 'utf8'));
}

export function loadSpecDir(dir: string): Map<string, RawSpec> {
  const out = new Map<string, RawSpec>();
  for (const f of fs.readdirSync(dir).sort()) {
    if (!f.endsWith('.json')) continue;
    const spec = loadSpecFile(path.join(dir, f));
    out.set(spec.name, spec);
  }
  return out;
}

export interface Range {
  lo: number;
  hi: number;
}

export function parseRange(s: string | undefined): Range {
  if (s === undefined || s === 'none' || s === '') return { lo: 1, hi: 0 };
  let m = /^(\d+)\+$/.exec(s);
  if (m) return { lo: +m[1], hi: 0x7fff };
  m = /^(\d+)-(\d+)$/.exec(s);
  if (m) return { lo: +m[1], hi: +m[2] };
  m = /^(\d+)$/.exec(s);
  if (m) return { lo: +m[1], hi: +m[1] };
  throw new Error(`bad version range ${s}`);
}

export function inRange(v: number, r: Range): boolean {
  return v >= r.lo && v <= r.hi;
}

export function camel(name: string): string {
  return name[0].toLowerCase() + name.slice(1);
}

// ---------------------------------------------------------------------------
// sample values
// ---------------------------------------------------------------------------

export type Value = unknown;
export type Obj = Record<string, unknown>;

const PRIMS = new Set(['bool', 'int8', 'int16', 'uint16', 'int32', 'int64', 'float64', 'uuid', 'string', 'bytes', 'records']);

function structFields(spec: RawSpec, f: RawField): RawField[] {
  if (f.fields) return f.fields;
  const name = f.type.replace(/^\[\]/, '');
  const cs = (spec.commonStructs ?? []).find((s) => s.name === name);
  if (!cs) throw new Error(`${spec.name}: unknown struct ${name}`);
  return cs.fields;
}

/** The decoded form of a field's default value. */
export function defaultValue(spec: RawSpec, f: RawField): Value {
  const d = f.default === undefined ? '' : String(f.default);
  if (d === 'null') return null;
  if (f.type.startsWith('[]')) return [];
  const t = f.type;
  if (!PRIMS.has(t)) return defaultStruct(spec, structFields(spec, f));
  switch (t) {
    case 'bool':
      return d === 'true';
    case 'int8':
    case 'int16':
    case 'uint16':
    case 'int32':
      return d === '' ? 0 : d.startsWith('0x') ? parseInt(d.slice(2), 16) : d.startsWith('-0x') ? -parseInt(d.slice(3), 16) : Number(d);
    case 'int64':
      return d === '' ? 0n : BigInt(d);
    case 'float64':
      return d === '' ? 0 : Number(d);
    case 'uuid':
      return '0'.repeat(32);
    case 'string':
      return d;
    case 'bytes':
    case 'records':
      return Buffer.alloc(0);
  }
  throw new Error(`unhandled type ${t}`);
}

export function defaultStruct(spec: RawSpec, fields: RawField[]): Obj {
  const o: Obj = {};
  for (const f of fields) o[camel(f.name)] = defaultValue(spec, f);
  return o;
}

export interface SampleOptions {
  /** use null for every field nullable in the version */
  nulls: boolean;
  /** leave optional fields (default/tagged/ignorable) undefined */
  minimal: boolean;
  /** bytes/records values of this size (exercise the zero-copy path when large) */
  bytesSize: number;
}

export class SampleGen {
  private n = 0;
  constructor(private readonly spec: RawSpec, private readonly version: number, private readonly opts: SampleOptions) {}

  private flexible(f: RawField): boolean {
    return inRange(this.version, parseRange(f.flexibleVersions ?? this.spec.flexibleVersions));
  }

  private next(): number {
    return ++this.n;
  }

  /**
   * Returns [value to encode, value expected after decoding].
   */
  struct(fields: RawField[]): [Obj, Obj] {
    const input: Obj = {};
    const expected: Obj = {};
    for (const f of fields) {
      const prop = camel(f.name);
      const present = inRange(this.version, parseRange(f.versions));
      const optional = f.default !== undefined || f.tag !== undefined || !!f.ignorable;
      if (!present || (this.opts.minimal && optional)) {
        const d = defaultValue(this.spec, f);
        expected[prop] = d;
        if (!optional) input[prop] = d;
        continue;
      }
      if (this.opts.nulls && inRange(this.version, parseRange(f.nullableVersions))) {
        input[prop] = null;
        expected[prop] = null;
        continue;
      }
      const [i, e] = this.value(f);
      input[prop] = i;
      expected[prop] = e;
    }
    return [input, expected];
  }

  private value(f: RawField): [Value, Value] {
    const def = defaultValue(this.spec, f);
    if (f.type.startsWith('[]')) {
      const elem = f.type.slice(2);
      const count = PRIMS.has(elem) ? 3 : 2;
      const ins: Value[] = [];
      const exp: Value[] = [];
      for (let i = 0; i < count; i++) {
        if (PRIMS.has(elem)) {
          const v = this.prim(elem, undefined, f);
          ins.push(v);
          exp.push(v);
        } else {
          const [a, b] = this.struct(structFields(this.spec, f));
          ins.push(a);
          exp.push(b);
        }
      }
      return [ins, exp];
    }
    if (!PRIMS.has(f.type)) {
      const [a, b] = this.struct(structFields(this.spec, f));
      // a struct whose fields are all default would be indistinguishable from the default for tagged fields
      return [a, b];
    }
    const v = this.prim(f.type, def, f);
    return [v, v];
  }

  private prim(t: string, def: Value, f: RawField): Value {
    const k = this.next();
    switch (t) {
      case 'bool':
        return def === undefined ? k % 2 === 0 : !def;
      case 'int8': {
        const v = (k % 120) + 1;
        return v === def ? v + 1 : v;
      }
      case 'int16': {
        const v = k % 2 === 0 ? 1000 + k : -(1000 + k);
        return v === def ? v + 1 : v;
      }
      case 'uint16':
        return 65000 + (k % 500);
      case 'int32': {
        const v = k % 2 === 0 ? 100000 + k : -(100000 + k);
        return v === def ? v + 1 : v;
      }
      case 'int64':
        return k % 2 === 0 ? (1n << 40n) + BigInt(k) : -((1n << 50n) + BigInt(k));
      case 'float64':
        return k + 0.25;
      case 'uuid':
        return (k.toString(16).padStart(8, '0') + 'a1b2c3d4e5f60718293a4b5c6d7e8f90').slice(0, 32);
      case 'string':
        // mix in non-ASCII text (multi-byte utf8) and, for compact strings, a long value
        return k % 3 === 0 ? `s${k}-\u00fc\u20ac\u{1F600}` : k % 7 === 0 && this.flexible(f) ? `long-${k}-`.padEnd(200, 'x') : `s${k}`;
      case 'bytes':
      case 'records': {
        const b = Buffer.alloc(this.opts.bytesSize);
        for (let i = 0; i < b.length; i++) b[i] = (k + i) & 0xff;
        return b;
      }
    }
    throw new Error(`unhandled type ${t}`);
  }
}

/** Builds [input, expected-decoded] sample values for a message at a version. */
export function sampleMessage(spec: RawSpec, version: number, opts: SampleOptions): [Obj, Obj] {
  return new SampleGen(spec, version, opts).struct(spec.fields);
}

export function versionsOf(spec: RawSpec): number[] {
  const r = parseRange(spec.validVersions);
  const out: number[] = [];
  for (let v = r.lo; v <= r.hi; v++) out.push(v);
  return out;
}
