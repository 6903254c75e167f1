// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78): the checksum of record batch v2.
//
// Measured on this project's machine (2 cores, x64, Node 20), random input, throughput of one call:
//
//   implementation                        61 B        1 KB         16 KB        1 MB
//   @node-rs/crc32 (napi, SSE4.2)      0.64 us/op   1.1 GB/s     2.7-4.0 GB/s 3.4-3.5 GB/s
//   JS slicing-by-8 (this file)        0.09 us/op   0.79 GB/s    0.66 GB/s    0.87 GB/s
//   crc-32/crc32c (pure JS, 16 tables) 0.14 us/op   0.62-0.75    0.8-1.2 GB/s 0.84-0.89 GB/s
//   hash-wasm (wasm)                   -            0.50 GB/s    0.84 GB/s    1.1 GB/s
//   sse4_crc32 / fast-crc32c (node-gyp) 0.37 us/op  2.3 GB/s     3.7-6.9 GB/s 7.6-7.9 GB/s
//   this module as shipped (node dist/bench/records-bench.js, 3 runs): 1 KB 0.7-2.0 GB/s, 16 KB 2.3-3.9 GB/s,
//   1 MB 3.3-4.0 GB/s; its JS path 0.37-0.54, 0.50-0.71, 0.65-0.77 GB/s. (Shared 2-core machine: runs vary.)
//
// Choice: @node-rs/crc32, a prebuilt napi binary per platform shipped inside npm packages (no install
// script), for inputs of 256 bytes and more; below that the napi call costs more than the JS table loop,
// so small inputs take the JS path. sse4_crc32 is faster on large inputs but compiles with node-gyp at
// install (needs a C++ toolchain, pins node-addon-api 1.x), so it is not used.
//
// Fallback: @node-rs/crc32 has binaries for the common platforms only (and none when optional
// dependencies are omitted). If it fails to load, this module silently uses the JS slicing-by-8 code for
// every size; `crc32cImplementation` tells which one is in use.

const POLY = 0x82f63b78;

/** Eight 256-entry tables for slicing-by-8; table k maps a byte to its CRC advanced by k more zero bytes. */
const T = new Int32Array(256 * 8);
for (let n = 0; n < 256; n++) {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ POLY : c >>> 1;
  T[n] = c;
}
for (let n = 0; n < 256; n++) {
  let c = T[n];
  for (let k = 1; k < 8; k++) {
    c = T[c & 0xff] ^ (c >>> 8);
    T[k * 256 + n] = c;
  }
}

/** Pure-JS CRC-32C of buf[start, end) (slicing-by-8). Exported for tests and the benchmark. */
export function crc32cJs(buf: Uint8Array, start = 0, end = buf.length): number {
  let c = -1;
  let i = start;
  const end8 = end - ((end - start) & 7);
  while (i < end8) {
    c ^= buf[i] | (buf[i + 1] << 8) | (buf[i + 2] << 16) | (buf[i + 3] << 24);
    const hi = buf[i + 4] | (buf[i + 5] << 8) | (buf[i + 6] << 16) | (buf[i + 7] << 24);
    c =
      T[1792 + (c & 0xff)] ^
      T[1536 + ((c >>> 8) & 0xff)] ^
      T[1280 + ((c >>> 16) & 0xff)] ^
      T[1024 + (c >>> 24)] ^
      T[768 + (hi & 0xff)] ^
      T[512 + ((hi >>> 8) & 0xff)] ^
      T[256 + ((hi >>> 16) & 0xff)] ^
      T[hi >>> 24];
    i += 8;
  }
  while (i < end) c = T[(c ^ buf[i++]) & 0xff] ^ (c >>> 8);
  return ~c >>> 0;
}

type NativeCrc = (input: Uint8Array, initialState?: number | null) => number;

function loadNative(): NativeCrc | null {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const mod = require('@node-rs/crc32') as { crc32c?: NativeCrc };
    const f = mod.crc32c;
    if (typeof f !== 'function') return null;
    // Self-check with the standard vector before trusting it.
    if (f(Buffer.from('123456789')) >>> 0 !== 0xe3069283) return null;
    return f;
  } catch {
    return null;
  }
}

const native = loadNative();

/** Below this many bytes the JS loop beats the napi call overhead (measured: crossover near 256 B). */
const NATIVE_MIN_BYTES = 256;

/** Which implementation serves large inputs: 'native' (@node-rs/crc32) or 'js' (fallback). */
export const crc32cImplementation: 'native' | 'js' = native ? 'native' : 'js';

/** CRC-32C of buf[start, end), as an unsigned 32-bit number. */
export function crc32c(buf: Uint8Array, start = 0, end = buf.length): number {
  if (start < 0 || end > buf.length || start > end) {
    throw new RangeError(`crc32c: bad range [${start}, ${end}) for a buffer of ${buf.length} bytes`);
  }
  if (native !== null && end - start >= NATIVE_MIN_BYTES) {
    const view = start === 0 && end === buf.length ? buf : buf.subarray(start, end);
    return native(view) >>> 0;
  }
  return crc32cJs(buf, start, end);
}
