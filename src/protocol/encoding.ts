// What the Reader and the Writer agree on: the zigzag encodings of varints and varlongs (and their encoded
// sizes) and Kafka's string length limit.

/** Kafka's limit for string lengths (both classic and compact forms). */
export const MAX_STRING_LENGTH = 0x7fff;

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
