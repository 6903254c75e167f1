/** JSON of admin results, the same for `--json` and the console's API. */

/** Bigints as numbers when exact, else as strings (offsets past 2^53 stay exact); Buffers as base64; Maps as objects. */
export function jsonReplacer(_key: string, v: unknown): unknown {
  if (typeof v === 'bigint') return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v.toString();
  if (v instanceof Map) return Object.fromEntries(v);
  if (Buffer.isBuffer(v)) return v.toString('base64');
  return v;
}
