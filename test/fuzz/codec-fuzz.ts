// Property checks of the generated codecs and of scanBatches on random and mutated bytes, shared by
// the short run in `npm test` (codec.test.ts) and the long one (`npm run fuzz`).
//  - decoding anything throws nothing but ProtocolError or RangeError: that is what the connection
//    treats as a malformed request (connection.ts); anything else would escape its data handler;
//  - whatever decodes can be encoded again at the same version, and decodes back to the same value;
//  - a valid message without tagged fields round-trips byte for byte;
//  - scanBatches answers every input with a result, never an exception.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { Reader, Writer, ProtocolError } from '../../src/protocol/primitives';
import { getApiSpec } from '../../src/protocol/generated';
import { scanBatches } from '../../src/records/batch';
import { type RawSpec, loadSpecDir, SPEC_DIR, versionsOf } from '../protocol/spec-util';
import { FIXTURE_DIR } from '../records/fixture-util';
import { Prng, SpecBytes } from './spec-bytes';

export interface CodecFailure {
  what: string;
  seed: number;
  input: string;      // hex, the first 2,000 digits
  error: string;
}

/** Byte-level mutations of a valid input: bit flips, truncation, inserted or removed bytes, a length lie. */
export function mutate(input: Buffer, rng: Prng): Buffer {
  const b = Buffer.from(input);
  switch (rng.int(0, 5)) {
    case 0: // flip a few bits
      for (let i = rng.int(1, 4); i > 0 && b.length > 0; i--) b[rng.int(0, b.length - 1)] ^= 1 << rng.int(0, 7);
      return b;
    case 1: // truncate
      return b.subarray(0, rng.int(0, Math.max(0, b.length - 1)));
    case 2: { // insert random bytes
      const at = rng.int(0, b.length);
      return Buffer.concat([b.subarray(0, at), rng.bytes(rng.int(1, 8)), b.subarray(at)]);
    }
    case 3: { // remove a run of bytes
      const at = rng.int(0, b.length);
      return Buffer.concat([b.subarray(0, at), b.subarray(Math.min(b.length, at + rng.int(1, 8)))]);
    }
    case 4: { // a boundary value over an int16 or int32 (most lengths are one of these)
      if (b.length < 4) return b;
      const at = rng.int(0, b.length - 4);
      if (rng.chance(0.5)) b.writeInt32BE(rng.pick([-1, -2, 0, 1, 0x7fffffff, -0x80000000, b.length]), at);
      else b.writeInt16BE(rng.pick([-1, -2, 0, 0x7fff, -0x8000]), at);
      return b;
    }
    default: // a byte set to a boundary value (varints, booleans, compact lengths)
      if (b.length > 0) b[rng.int(0, b.length - 1)] = rng.pick([0x00, 0x01, 0x7f, 0x80, 0xff]);
      return b;
  }
}

let specs: RawSpec[] | undefined;
/** Every request and response spec of the protocol, with its API key. */
export function messageSpecs(): RawSpec[] {
  specs ??= [...loadSpecDir(SPEC_DIR).values()].filter((s) => (s.type === 'request' || s.type === 'response') && s.apiKey !== undefined);
  return specs;
}

type Codec = { decode(r: Reader, v: number): unknown; encode(w: Writer, m: unknown, v: number): void };

function codecOf(spec: RawSpec): Codec {
  const api = getApiSpec(spec.apiKey!)!;
  return spec.type === 'request'
    ? { decode: (r, v) => api.decodeRequest(r, v), encode: (w, m, v) => api.encodeRequest(w, m, v) }
    : { decode: (r, v) => api.decodeResponse(r, v), encode: (w, m, v) => api.encodeResponse(w, m, v) };
}

function encode(codec: Codec, value: unknown, version: number): Buffer {
  const w = new Writer();
  codec.encode(w, value, version);
  return w.finishOne();
}

function describeError(e: unknown): string {
  return e instanceof Error ? `${e.name}: ${e.message}` : String(e);
}

/**
 * Decodes `input` and checks the properties above; returns a failure message or null. `exact`: the
 * input is canonical (valid, no tagged fields), so re-encoding must give the same bytes.
 */
export function checkDecode(codec: Codec, version: number, input: Buffer, exact: boolean, mustDecode: boolean): string | null {
  let value: unknown;
  try {
    const r = new Reader(input);
    value = codec.decode(r, version);
  } catch (e) {
    if (mustDecode) return `a valid input did not decode: ${describeError(e)}`;
    if (e instanceof ProtocolError || e instanceof RangeError) return null;
    return `decode threw ${describeError(e)}`;
  }
  let again: Buffer;
  try {
    again = encode(codec, value, version);
  } catch (e) {
    return `decoded but cannot be encoded again: ${describeError(e)}`;
  }
  if (exact && !again.equals(input)) return `re-encoded bytes differ (${again.length} vs ${input.length} bytes)`;
  let back: unknown;
  try {
    back = codec.decode(new Reader(again), version);
  } catch (e) {
    return `re-encoded bytes do not decode: ${describeError(e)}`;
  }
  if (!isDeepStrictEqual(back, value)) return 're-encoded value decodes to something else';
  return null;
}

/** Runs `rounds` inputs of each kind per spec and version; returns what failed (empty: all held). */
export function fuzzCodecs(seed: number, rounds: number, onInput?: () => void): CodecFailure[] {
  const failures: CodecFailure[] = [];
  for (const spec of messageSpecs()) {
    const codec = codecOf(spec);
    for (const version of versionsOf(spec)) {
      const what = `${spec.name} v${version}`;
      const rng = new Prng((seed ^ (spec.apiKey! * 7919 + version * 104729 + (spec.type === 'request' ? 0 : 1))) >>> 0);
      const record = (input: Buffer, error: string | null): void => {
        onInput?.();
        if (error !== null && failures.length < 50) failures.push({ what, seed, input: input.toString('hex', 0, 1000), error });
      };
      const canonical = new SpecBytes(spec, version, rng, { hostile: false, unknownTags: false, names: [] });
      const withTags = new SpecBytes(spec, version, rng, { hostile: false, unknownTags: true, names: [] });
      const hostile = new SpecBytes(spec, version, rng, { hostile: true, unknownTags: true, names: [] });
      for (let i = 0; i < rounds; i++) {
        const valid = canonical.message();
        record(valid, checkDecode(codec, version, valid, !canonical.wroteTags, true));
        const tagged = withTags.message();
        record(tagged, checkDecode(codec, version, tagged, false, true));
        const lying = hostile.message();
        record(lying, checkDecode(codec, version, lying, false, false));
        const mutated = mutate(valid, rng);
        record(mutated, checkDecode(codec, version, mutated, false, false));
      }
    }
  }
  return failures;
}

/** The captured record batches of test/records/fixtures (every client and codec). */
export function fixtureBatches(): Buffer[] {
  return fs.readdirSync(FIXTURE_DIR).filter((f) => f.endsWith('.bin')).sort().map((f) => fs.readFileSync(path.join(FIXTURE_DIR, f)));
}

/** scanBatches on mutated real batches and random bytes: a result every time, never an exception. */
export function fuzzScanBatches(seed: number, rounds: number, onInput?: () => void): CodecFailure[] {
  const failures: CodecFailure[] = [];
  const rng = new Prng(seed);
  const fixtures = fixtureBatches();
  for (let i = 0; i < rounds; i++) {
    const base = rng.chance(0.9) ? rng.pick(fixtures) : rng.bytes(rng.int(0, 200));
    let input = base;
    for (let m = rng.int(1, 3); m > 0; m--) input = mutate(input, rng);
    const opts = { requireSingleBatch: rng.chance(0.7), verifyCrc: rng.chance(0.5), fromClient: rng.chance(0.7), produceVersion: rng.int(3, 11) };
    onInput?.();
    try {
      const result = scanBatches(input, opts);
      if (result.ok && result.validBytes > input.length) throw new Error(`validBytes ${result.validBytes} past the input (${input.length})`);
    } catch (e) {
      if (failures.length < 50) failures.push({ what: `scanBatches ${JSON.stringify(opts)}`, seed, input: input.toString('hex', 0, 1000), error: describeError(e) });
    }
  }
  return failures;
}
