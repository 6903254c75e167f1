'use strict';
// The log-cleanup scenarios' steps and checks for the Node client programs (kafkajs, kcat); python/cleanup.py
// is the same for the Python ones. Each program passes an adapter:
//   createTopic(prefix, configs)        -> topic name (1 partition, the given topic configs)
//   produce(topic, records)             records [{ key: Buffer, value: Buffer | null, timestamp?: ms }]
//   readAll(topic)                      -> [{ offset, key: Buffer, value: Buffer | null }] from the beginning to the end
//   earliest(topic)                     -> the partition's earliest offset (ListOffsets)
//   readBehind(topic, offset, n)        -> the first n records a consumer reads when it starts at `offset`
//                                          with auto.offset.reset=earliest (its own way of being behind)
//
// compaction: a compacted topic (segment.ms 500 so that a later record rolls the segment, dirty ratio 0.01,
// delete.retention.ms 1000; the harness's broker has log.cleaner.backoff.ms 200) gets 3 rounds over 10 keys
// and tombstones for two of them, then a sentinel record after segment.ms to roll the rest out of the active
// segment. Pass: reading from the beginning gives exactly the latest value of each key (the tombstones
// included), at increasing offsets, then the sentinel (the active segment is never cleaned). Then, past
// delete.retention.ms, a second sentinel: the tombstones are gone, the other keys' latest values (the first
// sentinel's too: the second one is not cleanable yet) still there.
//
// retention: a topic with retention.ms 60000 gets 20 records timestamped an hour ago (the harness's broker
// checks retention every 500 ms). Pass: the earliest offset moves to 20 (every segment deleted, the active one
// rolled first, as Kafka does); 10 new records follow; a consumer starting at offset 5 (below the new start:
// OFFSET_OUT_OF_RANGE) is reset to the earliest and reads exactly records 20..29.
const { check, retry } = require('./client-util');
const data = require('./data');

const KEYS = 10;
const ROUNDS = 3;
const DELETED = [0, 1]; // keys that get a tombstone
const SEGMENT_MS = 500;
const DELETE_RETENTION_MS = 1000;
const CLEANING_TIMEOUT_MS = 20000;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const ck = (k) => Buffer.from(`ck-${k}`);
const cv = (k, round) => Buffer.from(`ck-${k}@${round}`);
const show = (records) => JSON.stringify(records.map((r) => [r.offset, r.key && r.key.toString(), r.value === null ? null : r.value.toString()]));

/**
 * Checks the records: the last is `sentinel` (in the active segment), the others exactly the latest value of each
 * key in `expected` (Map key -> value or null), one each, nothing else.
 */
function verifyCompacted(all, expected, sentinel) {
  const last = all[all.length - 1];
  check(last && last.value && last.value.equals(sentinel), `the last record is not the sentinel ${sentinel}: ${show(all)}`);
  const records = all.slice(0, -1);
  for (let i = 1; i < records.length; i++) check(records[i].offset > records[i - 1].offset, `offsets not increasing: ${show(records)}`);
  const seen = new Map();
  for (const r of records) {
    const k = r.key.toString();
    check(!seen.has(k), `key ${k} read twice: ${show(records)}`);
    seen.set(k, r.value === null ? null : r.value.toString());
  }
  const want = new Map([...expected].map(([k, v]) => [k, v === null ? null : v.toString()]));
  check(JSON.stringify([...seen].sort()) === JSON.stringify([...want].sort()), `read ${show(records)}, expected one record per key: ${JSON.stringify([...want].sort())}`);
}

async function compaction(a) {
  const topic = await a.createTopic('compaction', {
    'cleanup.policy': 'compact', 'segment.ms': String(SEGMENT_MS), 'min.cleanable.dirty.ratio': '0.01', 'delete.retention.ms': String(DELETE_RETENTION_MS),
  });
  const latest = new Map();
  const records = [];
  for (let round = 0; round < ROUNDS; round++) for (let k = 0; k < KEYS; k++) records.push({ key: ck(k), value: cv(k, round) });
  for (const k of DELETED) records.push({ key: ck(k), value: null });
  for (const r of records) latest.set(r.key.toString(), r.value);
  await a.produce(topic, records);
  await sleep(SEGMENT_MS + 200);
  const [end1, end2] = [Buffer.from('end-1'), Buffer.from('end-2')];
  await a.produce(topic, [{ key: Buffer.from('end'), value: end1 }]);
  await retry(async () => verifyCompacted(await a.readAll(topic), latest, end1), CLEANING_TIMEOUT_MS);

  await sleep(Math.max(DELETE_RETENTION_MS, SEGMENT_MS) + 200);
  await a.produce(topic, [{ key: Buffer.from('end'), value: end2 }]);
  latest.set('end', end1);
  for (const k of DELETED) latest.delete(ck(k).toString());
  await retry(async () => verifyCompacted(await a.readAll(topic), latest, end2), CLEANING_TIMEOUT_MS);
}

async function retention(a) {
  const topic = await a.createTopic('retention', { 'retention.ms': '60000' });
  const old = Date.now() - 3600_000;
  await a.produce(topic, Array.from({ length: 20 }, (_, i) => ({ key: data.key(i), value: data.value(i), timestamp: old })));
  await retry(async () => {
    const earliest = await a.earliest(topic);
    check(earliest === 20, `earliest offset ${earliest}, expected 20 once retention deleted the old segments`);
  }, 15000);
  await a.produce(topic, Array.from({ length: 10 }, (_, i) => ({ key: data.key(20 + i), value: data.value(20 + i) })));
  const read = await a.readBehind(topic, 5, 10);
  check(read.length === 10 && read.every((r, i) => r.offset === 20 + i && r.key.equals(data.key(20 + i)) && r.value.equals(data.value(20 + i))),
    `a consumer at offset 5 read ${show(read)}, expected records 20..29 (reset to the earliest)`);
}

module.exports = { compaction, retention };
