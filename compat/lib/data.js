'use strict';
// The data-path scenarios' records and checks, shared by the Node client programs (kafkajs, kcat).
// Every client program (Python, Java, Go too) builds the same records and checks the same things:
//   key(i)   = "key-<i>"
//   value(i) = "value-<i>:" 00 ff 0a "fjord-compat " x 8     (binary bytes and a newline, compressible)
//   headers(i) = [("idx", "<i>"), ("tag", "fjørd" in UTF-8)]
//   large(i) = bytes 0..255 rotated left by i, repeated 4096 times (1 MiB)
//   murmur2: Kafka's (Utils.murmur2), positive part = h & 0x7fffffff

const { check } = require('./client-util');

const CODECS = ['none', 'gzip', 'snappy', 'lz4', 'zstd'];
const TAG = Buffer.from('fjørd', 'utf8');

const key = (i) => Buffer.from(`key-${i}`);
const value = (i) => Buffer.concat([Buffer.from(`value-${i}:`), Buffer.from([0x00, 0xff, 0x0a]), Buffer.from('fjord-compat '.repeat(8))]);
const headers = (i) => [['idx', Buffer.from(String(i))], ['tag', TAG]];

function large(i) {
  const block = Buffer.alloc(256);
  for (let j = 0; j < 256; j++) block[j] = (j + i) & 0xff;
  return Buffer.concat(Array(4096).fill(block));
}

/** Kafka's murmur2 (org.apache.kafka.common.utils.Utils.murmur2), as a signed 32-bit int. */
function murmur2(data) {
  const m = 0x5bd1e995;
  const len = data.length;
  let h = 0x9747b28c ^ len;
  const len4 = len >> 2;
  for (let i = 0; i < len4; i++) {
    const o = i * 4;
    let k = data[o] | (data[o + 1] << 8) | (data[o + 2] << 16) | (data[o + 3] << 24);
    k = Math.imul(k, m);
    k ^= k >>> 24;
    k = Math.imul(k, m);
    h = Math.imul(h, m) ^ k;
  }
  const t = len4 * 4;
  switch (len & 3) {
    case 3: h ^= data[t + 2] << 16; // falls through
    case 2: h ^= data[t + 1] << 8; // falls through
    case 1: h ^= data[t]; h = Math.imul(h, m);
  }
  h ^= h >>> 13;
  h = Math.imul(h, m);
  h ^= h >>> 15;
  return h | 0;
}
check(murmur2(Buffer.from('21')) === -973932308 && murmur2(Buffer.from('foobar')) === -790332482, 'murmur2 self-test failed');

/** The partition Kafka's default partitioner picks for a key. */
const keyPartition = (k, partitions) => (murmur2(k) & 0x7fffffff) % partitions;

const show = (b) => (b === null || b === undefined ? 'null' : JSON.stringify(b.toString('latin1')));
const showHeaders = (hs) => JSON.stringify(hs.map(([k, v]) => [k, v.toString('utf8')]));

/**
 * Checks consumed records [{ partition, offset, key, value, headers: [[name, Buffer]] }] against
 * records 0..n-1 produced as key(i) / value(i) / headersOf(i): exactly n, none missing or duplicated,
 * bytes intact, offsets and produce order increasing within each partition.
 */
function verifyRecords(records, n, headersOf = headers) {
  const seen = new Set();
  const last = new Map(); // partition -> { offset, i }
  for (const r of records) {
    const m = /^key-(\d+)$/.exec(r.key ? r.key.toString() : '');
    check(m && Number(m[1]) < n, `unexpected key ${show(r.key)} at partition ${r.partition} offset ${r.offset}`);
    const i = Number(m[1]);
    check(!seen.has(i), `duplicate record key-${i} (partition ${r.partition} offset ${r.offset})`);
    seen.add(i);
    check(r.value && r.value.equals(value(i)), `key-${i}: value ${show(r.value)}, expected ${show(value(i))}`);
    check(showHeaders(r.headers) === showHeaders(headersOf(i)), `key-${i}: headers ${showHeaders(r.headers)}, expected ${showHeaders(headersOf(i))}`);
    const prev = last.get(r.partition);
    check(!prev || (r.offset > prev.offset && i > prev.i), `partition ${r.partition} out of order: key-${i} at offset ${r.offset} after key-${prev && prev.i} at ${prev && prev.offset}`);
    last.set(r.partition, { offset: r.offset, i });
  }
  check(records.length === n, `consumed ${records.length} records, expected ${n} (${n - seen.size} missing)`);
}

/** keyed-partitions: records with key "key-<i % keys>"; each key on one partition, murmur2(key) % partitions. */
function verifyKeyed(records, n, partitions) {
  const where = new Map();
  for (const r of records) {
    const k = r.key.toString();
    const p = where.get(k);
    check(p === undefined || p === r.partition, `key ${k} on partitions ${p} and ${r.partition}`);
    where.set(k, r.partition);
    const want = keyPartition(r.key, partitions);
    check(r.partition === want, `key ${k} on partition ${r.partition}, murmur2 says ${want}`);
  }
  check(records.length === n, `consumed ${records.length} records, expected ${n}`);
}

/** offsets-by-time: T and the lookups [target timestamp, expected offset or null (after the last record)]. */
function timeQueries(count = 10) {
  const T = Math.floor(Date.now() / 1000) * 1000 - 60000;
  const lookups = [[T - 500, 0], [T, 0], [T + 4000, 4], [T + 4500, 5], [T + (count - 1) * 1000, count - 1], [T + count * 1000, null]];
  return { T, count, lookups };
}

module.exports = { CODECS, key, value, headers, large, murmur2, keyPartition, verifyRecords, verifyKeyed, timeQueries, show };
