/** JSON of admin results, the same for `--json` and the console's API. */

/** Bigints as numbers when exact, else as strings (offsets past 2^53 stay exact); Buffers as base64; Maps as objects. */
export function jsonReplacer(this: unknown, key: string, v: unknown): unknown {
  // JSON.stringify calls a Buffer's toJSON ({ type, data }) before the replacer: its holder still has the Buffer.
  const raw = (this as Record<string, unknown>)[key];
  if (Buffer.isBuffer(raw)) return raw.toString('base64');
  if (typeof v === 'bigint') return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v.toString();
  if (v instanceof Map) return Object.fromEntries(v);
  return v;
}
