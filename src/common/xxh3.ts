// XXH3-64 (xxHash 0.8, seed 0, the default secret), as Kafka's group coordinator hashes topic
// metadata with hash4j's Hashing.xxh3_64() (KIP-1101). 64-bit arithmetic on BigInt: the inputs
// are small (a topic's id, name and partitions), and callers cache what they hash often.

const MASK = (1n << 64n) - 1n;

const PRIME32_1 = 0x9e3779b1n;
const PRIME32_2 = 0x85ebca77n;
const PRIME32_3 = 0xc2b2ae3dn;
const PRIME64_1 = 0x9e3779b185ebca87n;
const PRIME64_2 = 0xc2b2ae3d27d4eb4fn;
const PRIME64_3 = 0x165667b19e3779f9n;
const PRIME64_4 = 0x85ebca77c2b2ae63n;
const PRIME64_5 = 0x27d4eb2f165667c5n;
const PRIME_MX1 = 0x165667919e3779f9n;
const PRIME_MX2 = 0x9fb21c651e98df25n;

/** xxHash's kSecret. */
const SECRET = Buffer.from(
  'b8fe6c3923a44bbe7c01812cf721ad1cded46de9839097db7240a4a4b7b3671f' +
  'cb79e64eccc0e578825ad07dccff7221b8084674f743248ee03590e6813a264c' +
  '3c2852bb91c300cb88d0658b1b532ea371644897a20df94e3819ef46a9deacd8' +
  'a8fa763fe39c343ff9dcbbc7c70b4f1d8a51e04bcdb45931c89f7ec9d9787364' +
  'eac5ac8334d3ebc3c581a0fffa1363eb170ddd51b7f0da49d316552629d4689e' +
  '2b16be587d47a1fc8ff8b8d17ad031ce45cb3a8f95160428afd7fbcabb4b407e',
  'hex',
);

const STRIPE_LEN = 64;
const SECRET_CONSUME_RATE = 8;
const ACC_NB = 8;
const SECRET_SIZE_MIN = 136;
const MIDSIZE_START_OFFSET = 3;
const MIDSIZE_LAST_OFFSET = 17;
const SECRET_LASTACC_START = 7;
const SECRET_MERGEACCS_START = 11;

const u64 = (b: Buffer, offset: number): bigint => b.readBigUInt64LE(offset);
const u32 = (b: Buffer, offset: number): bigint => BigInt(b.readUInt32LE(offset));
const mul = (a: bigint, b: bigint): bigint => (a * b) & MASK;
const rotl = (x: bigint, r: bigint): bigint => ((x << r) | (x >> (64n - r))) & MASK;

function mul128Fold64(a: bigint, b: bigint): bigint {
  const product = a * b;
  return (product & MASK) ^ (product >> 64n);
}

function xxh64Avalanche(h: bigint): bigint {
  h ^= h >> 33n;
  h = mul(h, PRIME64_2);
  h ^= h >> 29n;
  h = mul(h, PRIME64_3);
  return h ^ (h >> 32n);
}

function avalanche(h: bigint): bigint {
  h ^= h >> 37n;
  h = mul(h, PRIME_MX1);
  return h ^ (h >> 32n);
}

function rrmxmx(h: bigint, len: number): bigint {
  h ^= rotl(h, 49n) ^ rotl(h, 24n);
  h = mul(h, PRIME_MX2);
  h ^= (h >> 35n) + BigInt(len);
  h = mul(h, PRIME_MX2);
  return h ^ (h >> 28n);
}

function mix16(input: Buffer, offset: number, secretOffset: number): bigint {
  return mul128Fold64(u64(input, offset) ^ u64(SECRET, secretOffset), u64(input, offset + 8) ^ u64(SECRET, secretOffset + 8));
}

function upTo16(input: Buffer): bigint {
  const len = input.length;
  if (len > 8) {
    const lo = u64(input, 0) ^ (u64(SECRET, 24) ^ u64(SECRET, 32));
    const hi = u64(input, len - 8) ^ (u64(SECRET, 40) ^ u64(SECRET, 48));
    const swapped = Buffer.alloc(8);
    swapped.writeBigUInt64BE(lo);
    return avalanche((BigInt(len) + swapped.readBigUInt64LE(0) + hi + mul128Fold64(lo, hi)) & MASK);
  }
  if (len >= 4) {
    const combined = u32(input, len - 4) + (u32(input, 0) << 32n);
    return rrmxmx(combined ^ (u64(SECRET, 8) ^ u64(SECRET, 16)), len);
  }
  if (len > 0) {
    const combined = (BigInt(input[0]) << 16n) | (BigInt(input[len >> 1]) << 24n) | BigInt(input[len - 1]) | (BigInt(len) << 8n);
    return xxh64Avalanche(combined ^ (u32(SECRET, 0) ^ u32(SECRET, 4)));
  }
  return xxh64Avalanche(u64(SECRET, 56) ^ u64(SECRET, 64));
}

function upTo128(input: Buffer): bigint {
  const len = input.length;
  let acc = mul(BigInt(len), PRIME64_1);
  if (len > 32) {
    if (len > 64) {
      if (len > 96) acc += mix16(input, 48, 96) + mix16(input, len - 64, 112);
      acc += mix16(input, 32, 64) + mix16(input, len - 48, 80);
    }
    acc += mix16(input, 16, 32) + mix16(input, len - 32, 48);
  }
  acc += mix16(input, 0, 0) + mix16(input, len - 16, 16);
  return avalanche(acc & MASK);
}

function upTo240(input: Buffer): bigint {
  const len = input.length;
  const rounds = Math.floor(len / 16);
  let acc = mul(BigInt(len), PRIME64_1);
  for (let i = 0; i < 8; i++) acc += mix16(input, 16 * i, 16 * i);
  acc = avalanche(acc & MASK);
  for (let i = 8; i < rounds; i++) acc += mix16(input, 16 * i, 16 * (i - 8) + MIDSIZE_START_OFFSET);
  acc += mix16(input, len - 16, SECRET_SIZE_MIN - MIDSIZE_LAST_OFFSET);
  return avalanche(acc & MASK);
}

function accumulateStripe(acc: bigint[], input: Buffer, offset: number, secretOffset: number): void {
  for (let i = 0; i < ACC_NB; i++) {
    const value = u64(input, offset + 8 * i);
    const key = value ^ u64(SECRET, secretOffset + 8 * i);
    acc[i ^ 1] = (acc[i ^ 1] + value) & MASK;
    acc[i] = (acc[i] + (key & 0xffffffffn) * (key >> 32n)) & MASK;
  }
}

function scramble(acc: bigint[], secretOffset: number): void {
  for (let i = 0; i < ACC_NB; i++) {
    const a = acc[i] ^ (acc[i] >> 47n) ^ u64(SECRET, secretOffset + 8 * i);
    acc[i] = mul(a, PRIME32_1);
  }
}

function long(input: Buffer): bigint {
  const len = input.length;
  const acc = [PRIME32_3, PRIME64_1, PRIME64_2, PRIME64_3, PRIME64_4, PRIME32_2, PRIME64_5, PRIME32_1];
  const stripesPerBlock = (SECRET.length - STRIPE_LEN) / SECRET_CONSUME_RATE;
  const blockLen = STRIPE_LEN * stripesPerBlock;
  const blocks = Math.floor((len - 1) / blockLen);
  for (let b = 0; b < blocks; b++) {
    for (let s = 0; s < stripesPerBlock; s++) accumulateStripe(acc, input, b * blockLen + s * STRIPE_LEN, s * SECRET_CONSUME_RATE);
    scramble(acc, SECRET.length - STRIPE_LEN);
  }
  const lastStripes = Math.floor((len - 1 - blockLen * blocks) / STRIPE_LEN);
  for (let s = 0; s < lastStripes; s++) accumulateStripe(acc, input, blocks * blockLen + s * STRIPE_LEN, s * SECRET_CONSUME_RATE);
  accumulateStripe(acc, input, len - STRIPE_LEN, SECRET.length - STRIPE_LEN - SECRET_LASTACC_START);
  let result = mul(BigInt(len), PRIME64_1);
  for (let i = 0; i < 4; i++) {
    const s = SECRET_MERGEACCS_START + 16 * i;
    result += mul128Fold64(acc[2 * i] ^ u64(SECRET, s), acc[2 * i + 1] ^ u64(SECRET, s + 8));
  }
  return avalanche(result & MASK);
}

/** XXH3_64bits(input): the unsigned 64-bit hash. */
export function xxh3(input: Buffer): bigint {
  if (input.length <= 16) return upTo16(input);
  if (input.length <= 128) return upTo128(input);
  if (input.length <= 240) return upTo240(input);
  return long(input);
}
