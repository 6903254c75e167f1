'use strict';
// The transaction scenarios' records and checks, shared by the Node client programs (kafkajs). Every client
// program (python/txn.py, java/.../Txn.java, go/txn.go) runs the same steps with the same checks:
//
// txn-consume-transform-produce
//     an input topic (6 partitions) with records key-<i> / value(i), i in 0..119, written first without a
//     transaction. One group member (read_committed, no auto-commit) reads them; a transactional producer
//     writes each record transformed to an output topic (6 partitions): key-<i> / "out-<i>:txn-<t>", t the
//     transaction's number (1, 2, ...), at most 10 records a transaction, and sends the consumed offsets with
//     the transaction (sendOffsetsToTransaction with the consumer's group metadata where the client has it).
//     Every 3rd transaction is aborted after its records are written (flushed: in the log) and the member
//     reads those records again: it rewinds to the group's committed offsets where the client fetches them
//     as stable (OffsetFetch require_stable: Java, librdkafka), so the offsets sent in the aborted
//     transaction must have been dropped; franz-go's GroupTransactSession rewinds to the offsets it last
//     committed (and sends no offsets with a transaction it aborts); else (kafkajs,
//     kafka-python: without require_stable the answer may predate a transaction just committed) it seeks
//     back to the aborted transaction's first record. The other transactions are committed. It stops once every input record was
//     written by a committed transaction. Then one non-transactional "end" record goes to each output
//     partition, and the output is read to the end twice, group-less. Pass:
//       read_committed: each input record transformed exactly once, by a transaction the client committed;
//         no record of an aborted transaction; the "end" record of every partition (the consumer got past
//         every transaction);
//       read_uncommitted: exactly the records of every transaction, committed and aborted (the aborted
//         records really reached the log);
//       the group's committed offsets are the input's end offsets.
// txn-zombie-fenced
//     a 1-partition topic. Producer A (transactional.id X) begins a transaction and writes "a-0" (acknowledged);
//     producer B with the same transactional.id initializes (which fences A and aborts A's open transaction),
//     writes "b-0" and commits. Then A writes "a-1" and commits. Pass: A's send or commit fails with the
//     client's fencing error (PRODUCER_FENCED / INVALID_PRODUCER_EPOCH) and its commit does not succeed;
//     read_committed sees exactly "b-0" (then "end"), read_uncommitted exactly "a-0", "b-0" ("a-1", written
//     with the fenced epoch, is refused).
const { check } = require('./client-util');

const INPUT_RECORDS = 120;
const PARTITIONS = 6;
const RECORDS_PER_TXN = 10;
const ABORT_EVERY = 3; // transaction t is aborted when t % ABORT_EVERY === 0
const END_KEY = 'end';
const LOOP_TIMEOUT_MS = 30000;
// A pause after each commit: the cluster rows (FJORD_COMPAT_TXN_PAUSE_MS) stretch the loop so that the harness
// can kill the transaction coordinator's broker mid-run.
const PAUSE_MS = Number(process.env.FJORD_COMPAT_TXN_PAUSE_MS || 0);

const outputValue = (i, t) => `out-${i}:txn-${t}`;
const aborts = (t) => t % ABORT_EVERY === 0;

/** What the transactional loop did: the input indexes each committed or aborted transaction wrote. */
class Transactions {
  constructor() {
    this.committed = new Map(); // t -> [i]
    this.aborted = new Map(); // t -> [i]
  }

  /** The input indexes written by committed transactions. */
  done() {
    const s = new Set();
    for (const is of this.committed.values()) is.forEach((i) => s.add(i));
    return s;
  }

  complete() {
    return this.done().size === INPUT_RECORDS;
  }

  show() {
    const count = (m) => [...m.values()].reduce((n, is) => n + is.length, 0);
    return `${this.committed.size} transactions committed (${count(this.committed)} records), ${this.aborted.size} aborted (${count(this.aborted)} records)`;
  }
}

/** { records without the "end" ones, partitions that had an "end" record }, checking the records' shape. */
function splitEnd(records, partitions, what) {
  const ends = new Set();
  const rest = [];
  for (const r of records) {
    if (r.key && r.key.toString() === END_KEY) ends.add(r.partition);
    else rest.push(r);
  }
  for (let p = 0; p < partitions; p++) check(ends.has(p), `${what}: no "end" record read on output partition ${p}: the consumer did not get past the transactions there`);
  return rest;
}

/** Parses an output record: { i, t }; throws on anything that is not key-<i> / out-<i>:txn-<t>. */
function parseOutput(r, what) {
  const m = /^out-(\d+):txn-(\d+)$/.exec(r.value ? r.value.toString() : '');
  check(m && r.key && r.key.toString() === `key-${m[1]}`, `${what}: unexpected record ${r.key} / ${r.value} at ${r.partition}/${r.offset}`);
  return { i: Number(m[1]), t: Number(m[2]) };
}

/**
 * The checks of txn-consume-transform-produce on what the loop did (Transactions) and the two reads of the
 * output ([{ partition, offset, key, value }], Buffers), and the group's committed offsets against the input's
 * end offsets ({ partition: offset }). Returns a summary.
 */
function verifyTransformed(txns, committedRead, uncommittedRead, committedOffsets, endOffsets) {
  check(txns.aborted.size > 0, `no transaction was aborted: ${txns.show()}`);
  const seen = new Map(); // i -> t
  for (const r of splitEnd(committedRead, PARTITIONS, 'read_committed')) {
    const { i, t } = parseOutput(r, 'read_committed');
    check(!txns.aborted.has(t), `read_committed returned out-${i} of aborted transaction ${t} (at ${r.partition}/${r.offset})`);
    check(txns.committed.has(t) && txns.committed.get(t).includes(i), `read_committed returned out-${i} of transaction ${t}, which the client did not commit with it`);
    check(!seen.has(i), `read_committed returned input record ${i} twice: by transactions ${seen.get(i)} and ${t}`);
    seen.set(i, t);
  }
  const missing = [];
  for (let i = 0; i < INPUT_RECORDS; i++) if (!seen.has(i)) missing.push(i);
  check(!missing.length, `read_committed: ${missing.length} input records not in the output: ${missing.slice(0, 10).join(', ')}`);

  const written = new Map(); // "i:t" -> times read
  for (const r of splitEnd(uncommittedRead, PARTITIONS, 'read_uncommitted')) {
    const { i, t } = parseOutput(r, 'read_uncommitted');
    written.set(`${i}:${t}`, (written.get(`${i}:${t}`) || 0) + 1);
  }
  for (const [kind, map] of [['committed', txns.committed], ['aborted', txns.aborted]]) {
    for (const [t, is] of map) for (const i of is) check(written.get(`${i}:${t}`) === 1, `read_uncommitted: out-${i} of ${kind} transaction ${t} read ${written.get(`${i}:${t}`) || 0} times, expected once`);
  }
  const expected = [...txns.committed.values(), ...txns.aborted.values()].reduce((n, is) => n + is.length, 0);
  const total = [...written.values()].reduce((a, b) => a + b, 0);
  check(total === expected, `read_uncommitted returned ${total} output records, the transactions wrote ${expected}`);

  for (let p = 0; p < PARTITIONS; p++) {
    check(Number(committedOffsets[p]) === Number(endOffsets[p]), `the group's committed offsets ${JSON.stringify(committedOffsets)}, expected the input's end offsets ${JSON.stringify(endOffsets)}`);
  }
  return `${txns.show()}; read_committed: each of ${INPUT_RECORDS} records once, none aborted; read_uncommitted: all ${expected}; committed offsets = end offsets`;
}

/**
 * The checks of txn-zombie-fenced: fenceError is the text of the error A's send or commit failed with (null if
 * none), fencing whether it is the client's fencing error; the reads as in verifyTransformed.
 */
function verifyFenced(fenceError, fencing, committedAfterFence, committedRead, uncommittedRead) {
  check(fenceError, 'the fenced producer A wrote and committed after B initialized with the same transactional.id: no error');
  check(fencing, `producer A failed with ${fenceError}, not with a fencing error (PRODUCER_FENCED / INVALID_PRODUCER_EPOCH)`);
  check(!committedAfterFence, `producer A's commit succeeded after it was fenced (the send failed with ${fenceError})`);
  const values = (records, what) => splitEnd(records, 1, what).map((r) => (r.value ? r.value.toString() : null));
  const c = values(committedRead, 'read_committed');
  check(JSON.stringify(c) === '["b-0"]', `read_committed returned ${JSON.stringify(c)}, expected ["b-0"]: nothing of the fenced producer`);
  const u = values(uncommittedRead, 'read_uncommitted');
  check(JSON.stringify(u) === '["a-0","b-0"]', `read_uncommitted returned ${JSON.stringify(u)}, expected ["a-0","b-0"] (A's first record, aborted by the fencing, then B's)`);
  return `A fenced: ${fenceError}; read_committed ["b-0"], read_uncommitted ["a-0","b-0"]`;
}

module.exports = { INPUT_RECORDS, PARTITIONS, RECORDS_PER_TXN, END_KEY, LOOP_TIMEOUT_MS, PAUSE_MS, outputValue, aborts, Transactions, verifyTransformed, verifyFenced };
