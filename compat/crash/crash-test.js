#!/usr/bin/env node
'use strict';
// Fjord crash test: the broker in its own process, killed with SIGKILL mid-stream, or the producer killed.
//
//   node compat/crash/crash-test.js broker-kill | producer-kill      (exit 0 = pass, 1 after "FAIL: ...")
//
// The clients reach the broker through a small TCP proxy (the broker advertises the proxy's port), which can
// withhold the broker's responses: that is how a kill lands with Produce requests appended but unanswered.
//
// broker-kill:   starts `bin/fjord start --port P --data-dir D`, an idempotent confluent-kafka producer sends
//                COUNT records (acks=all) and logs every acknowledgement (seq, partition, offset); mid-stream
//                the proxy withholds responses for 300 ms (the producer's in-flight Produce requests reach the
//                broker, their answers do not reach the producer), the broker is SIGKILLed, restarted on the
//                same port and dir, and the producer reconnects and retries those requests with the same
//                sequence numbers. Then: every record acknowledged exactly once, each at the offset its ack
//                reported (a retried batch that the broker had already appended must be recognised as such).
// producer-kill: the producer is SIGKILLed mid-stream; a new producer (a new idempotent session) sends every
//                record the first one had no acknowledgement for. Then: every acknowledged record at its
//                offset, every record present, no record twice within a session (a record the killed
//                producer had in flight may be there from both sessions: at-least-once across sessions).
//
// FJORD_CRASH_BROKER_CMD overrides the broker command, a shell command with {port}, {advertised_port} and
// {dir} in it; it must `exec` the broker so that its pid is the broker's (used to validate this test against
// Apache Kafka).
const { spawn } = require('child_process');
const fs = require('fs');
const net = require('net');
const os = require('os');
const path = require('path');
const { Broker, freePort, ROOT } = require('../lib/broker-process');
const VENV_PY = path.join(ROOT, 'compat/python/.venv/bin/python');
const PY = fs.existsSync(VENV_PY) ? VENV_PY : 'python3';
const CLIENT = path.join(__dirname, 'crash_client.py');
const COUNT = 3000;
const PARTITIONS = 3;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const log = (msg) => console.log(`crash: ${msg}`);

const PRODUCE = 0;
const END_TXN = 26;

/**
 * A TCP proxy to the broker that tracks the requests the client has no answer to and can withhold (drop) the
 * broker's responses: from when `withholding` is set, or from the first request that `withholdFrom(apiKey, frame)`
 * picks (set before that request is forwarded, so its answer is withheld too).
 */
class WithholdingProxy {
  constructor(target) {
    this.target = target;
    this.withholding = false;
    this.withholdFrom = null;
    this.inFlight = new Set(); // per connection: correlation id -> api key of the requests the client has no answer to
    this.conns = new Set();
  }

  async listen() {
    this.server = net.createServer((client) => {
      const broker = net.connect(this.target, '127.0.0.1');
      const pair = [client, broker];
      this.conns.add(pair);
      const unanswered = new Map();
      this.inFlight.add(unanswered);
      const close = () => {
        this.conns.delete(pair);
        this.inFlight.delete(unanswered);
        client.destroy();
        broker.destroy();
      };
      // Frames are size-prefixed: a request is int32 size, int16 api key (Produce = 0), int16 version,
      // int32 correlation id; a response is int32 size, int32 correlation id.
      const frames = (onFrame) => {
        let pending = Buffer.alloc(0);
        return (d) => {
          pending = Buffer.concat([pending, d]);
          while (pending.length >= 8 && pending.length >= 4 + pending.readInt32BE(0)) {
            onFrame(pending);
            pending = pending.subarray(4 + pending.readInt32BE(0));
          }
        };
      };
      const requests = frames((f) => {
        if (f.length < 12) return;
        const apiKey = f.readInt16BE(4);
        if (this.withholdFrom && this.withholdFrom(apiKey, f)) this.withholding = true;
        unanswered.set(f.readInt32BE(8), apiKey);
      });
      const responses = frames((f) => {
        if (!this.withholding) unanswered.delete(f.readInt32BE(4));
      });
      client.on('data', (d) => {
        requests(d);
        broker.write(d);
      });
      broker.on('data', (d) => {
        responses(d);
        if (!this.withholding) client.write(d);
      });
      for (const sock of pair) sock.on('error', close).on('close', close);
    });
    await new Promise((r) => this.server.listen(0, '127.0.0.1', r));
    this.port = this.server.address().port;
  }

  /** Requests with this api key that reached the broker and whose responses the client has not been given. */
  withheld(apiKey) {
    let n = 0;
    for (const unanswered of this.inFlight) for (const k of unanswered.values()) n += k === apiKey ? 1 : 0;
    return n;
  }

  /** Drops every connection (what the client sees of a dead broker) and forwards responses again. */
  reset() {
    for (const pair of this.conns) for (const sock of pair) sock.destroy();
    this.conns.clear();
    this.inFlight.clear();
    this.withholding = false;
    this.withholdFrom = null;
  }

  close() {
    this.reset();
    this.server.close();
  }
}

/** Runs crash_client.py MODE ARGS to completion (asynchronously: the proxy lives in this process); its stdout. */
function client(mode, ...args) {
  return new Promise((resolve, reject) => {
    const proc = spawn(PY, [CLIENT, mode, ...args.map(String)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    proc.stdout.on('data', (d) => (out += d));
    proc.stderr.on('data', (d) => (err += d));
    const timer = setTimeout(() => proc.kill('SIGKILL'), 120000);
    proc.on('exit', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve(out);
      else reject(new Error(`crash_client.py ${mode} exited ${code ?? signal}: ${err.trim().slice(-2000)}`));
    });
  });
}

/** Starts crash_client.py MODE ARGS in the background: { proc, exited }. */
function startClient(mode, ...args) {
  const proc = spawn(PY, [CLIENT, mode, ...args.map(String)], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout.on('data', (d) => (out += d));
  proc.stderr.on('data', (d) => (out += d));
  const tail = () => out.trim().slice(-2000);
  const exited = new Promise((r) => proc.on('exit', (code, signal) => r({ code, signal, out: tail })));
  return { proc, exited, out: tail };
}

/** Acknowledgements logged so far: [{ session, seq, partition, offset }]. */
function readAcks(file) {
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .map((l) => l.split(' '))
    .filter((f) => f.length === 4)
    .map(([session, seq, partition, offset]) => ({ session: Number(session), seq: Number(seq), partition: Number(partition), offset: Number(offset) }));
}

/** Waits until count() (lines the producer logged: acknowledgements, outcomes) reaches n. */
async function waitForCount(count, n, what, producer, ms = 20000) {
  const deadline = Date.now() + ms;
  let done = false;
  producer.exited.then(() => (done = true));
  while (count() < n) {
    if (done) throw new Error(`producer exited before ${n} ${what}: ${(await producer.exited).out()}`);
    if (Date.now() > deadline) throw new Error(`only ${count()} ${what} after ${ms} ms, expected ${n}; the producer's output: ${producer.out() || '(none)'}`);
    await sleep(20);
  }
}

/** The log as records { partition, offset, key, value } (strings), read with the isolation level given. */
async function dumpRecords(bootstrap, topic, isolation = 'read_uncommitted') {
  return (await client('dump', bootstrap, topic, PARTITIONS, isolation))
    .split('\n')
    .filter(Boolean)
    .map((l) => {
      const [partition, offset, key, value] = l.split(' ');
      return { partition: Number(partition), offset: Number(offset), key, value };
    });
}

/** The log as records { partition, offset, session, seq } (values "<session>:<seq>"). */
async function dump(bootstrap, topic) {
  return (await dumpRecords(bootstrap, topic)).map(({ partition, offset, value }) => {
    const [session, seq] = value.split(':').map(Number);
    return { partition, offset, session, seq };
  });
}

/** The checks common to both runs; returns a summary line. */
function verify(records, acks, { allSessionsOnce }) {
  const problems = [];
  const at = new Map(records.map((r) => [`${r.partition}/${r.offset}`, r]));
  for (const a of acks) {
    const r = at.get(`${a.partition}/${a.offset}`);
    if (!r || r.seq !== a.seq || r.session !== a.session) {
      problems.push(`acknowledged seq ${a.seq} (session ${a.session}) at ${a.partition}/${a.offset}, log has ${r ? `seq ${r.seq} (session ${r.session})` : 'nothing'} there`);
    }
  }
  const bySession = new Map(); // "session:seq" -> count
  const bySeq = new Map(); // seq -> count
  for (const r of records) {
    bySession.set(`${r.session}:${r.seq}`, (bySession.get(`${r.session}:${r.seq}`) || 0) + 1);
    bySeq.set(r.seq, (bySeq.get(r.seq) || 0) + 1);
  }
  const dupes = [...bySession].filter(([, c]) => c > 1);
  if (dupes.length) problems.push(`${dupes.length} records written more than once by one producer session (idempotence broken): ${dupes.slice(0, 5).map(([k, c]) => `${k} x${c}`).join(', ')}`);
  const missing = [];
  for (let s = 0; s < COUNT; s++) if (!bySeq.has(s)) missing.push(s);
  if (missing.length) problems.push(`${missing.length} of ${COUNT} records missing: seq ${missing.slice(0, 10).join(', ')}${missing.length > 10 ? ', ...' : ''}`);
  const across = [...bySeq].filter(([, c]) => c > 1).length;
  if (allSessionsOnce && across) problems.push(`${across} records present more than once`);
  if (problems.length) throw new Error(problems.slice(0, 8).join('\n'));
  return `${records.length} records in the log, ${acks.length} acknowledgements all at their offsets, none missing, no duplicate within a session${across ? `; ${across} records the killed producer had in flight are there from both sessions` : ''}`;
}

async function brokerKill(broker, proxy, bootstrap, work) {
  const topic = 'crash-broker-kill';
  const ackFile = path.join(work, 'acks-broker-kill');
  await client('create', bootstrap, topic, PARTITIONS);
  const producer = startClient('produce', bootstrap, topic, 1, COUNT, ackFile);
  await waitForCount(() => readAcks(ackFile).length, COUNT / 4, 'acknowledgements', producer);
  proxy.withholding = true;
  // Kill only once a Produce request has reached the broker unanswered (a busy machine may delay it).
  for (const deadline = Date.now() + 10000; !proxy.withheld(PRODUCE) && Date.now() < deadline;) await sleep(10);
  await sleep(100);
  const withheld = proxy.withheld(PRODUCE);
  await broker.kill();
  proxy.reset();
  const ackedAtKill = readAcks(ackFile).length;
  if (!withheld) throw new Error('no Produce request reached the broker while its responses were withheld: the kill tested nothing');
  log(`${withheld} Produce requests reached the broker unanswered before the kill`);
  await sleep(1000);
  await broker.start();
  const result = await Promise.race([producer.exited, sleep(100000).then(() => ({ code: 'timeout', out: () => '' }))]);
  if (result.code !== 0) {
    producer.proc.kill('SIGKILL');
    throw new Error(`producer did not finish after the broker restart (exit ${result.code}${result.signal ? `, ${result.signal}` : ''}): ${result.out()}`);
  }
  log(`broker killed after ${ackedAtKill} acknowledgements; the producer finished after the restart`);
  return verify(await dump(bootstrap, topic), readAcks(ackFile), { allSessionsOnce: true });
}

async function producerKill(broker, proxy, bootstrap, work) {
  const topic = 'crash-producer-kill';
  const ackFile = path.join(work, 'acks-producer-kill');
  await client('create', bootstrap, topic, PARTITIONS);
  const first = startClient('produce', bootstrap, topic, 1, COUNT, ackFile);
  await waitForCount(() => readAcks(ackFile).length, COUNT / 3, 'acknowledgements', first);
  first.proc.kill('SIGKILL');
  await first.exited;
  const ackedAtKill = readAcks(ackFile).length;
  log(`producer killed with SIGKILL after ${ackedAtKill} acknowledgements; a new producer sends the rest`);
  const second = startClient('produce', bootstrap, topic, 2, COUNT, ackFile);
  const result = await Promise.race([second.exited, sleep(100000).then(() => ({ code: 'timeout', out: () => '' }))]);
  if (result.code !== 0) {
    second.proc.kill('SIGKILL');
    throw new Error(`second producer failed (exit ${result.code}): ${result.out()}`);
  }
  return verify(await dump(bootstrap, topic), readAcks(ackFile), { allSessionsOnce: false });
}

const TXN_COUNT = 40;
const TXN_RECORDS = 10; // crash_client.py's TXN_RECORDS and ABORT_EVERY
const TXN_ABORT_EVERY = 5;

/** An EndTxn request with committed = true: its last field, before the (empty) tagged fields of v3+. */
const isEndTxnCommit = (apiKey, f) => apiKey === END_TXN && f[f.length - (f.readInt16BE(6) >= 3 ? 2 : 1)] === 1;

/** The outcomes the transactional producer logged: Map t -> 'committed' | 'aborted' (throws on one logged twice). */
function readOutcomes(file) {
  const outcomes = new Map();
  if (!fs.existsSync(file)) return outcomes;
  for (const [outcome, t] of fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => l.split(' '))) {
    if (outcomes.has(Number(t))) throw new Error(`the producer logged transaction ${t} twice`);
    outcomes.set(Number(t), outcome);
  }
  return outcomes;
}

/** The transaction checks: read_committed has exactly the committed transactions, read_uncommitted every record once. */
function verifyTxns(outcomes, committedRead, uncommittedRead) {
  const problems = [];
  const parse = (records, what) => {
    const ends = new Set();
    const seen = new Map(); // "t-j" -> times
    for (const r of records) {
      if (r.key === 'end') {
        ends.add(r.partition);
        continue;
      }
      const m = /^txn-(\d+)-(\d+)$/.exec(r.key);
      if (!m) problems.push(`${what}: unexpected key ${r.key} at ${r.partition}/${r.offset}`);
      else seen.set(`${m[1]}-${m[2]}`, (seen.get(`${m[1]}-${m[2]}`) || 0) + 1);
    }
    for (let p = 0; p < PARTITIONS; p++) if (!ends.has(p)) problems.push(`${what}: no "end" record on partition ${p}: the consumer did not get past a transaction there (hanging?)`);
    return seen;
  };
  const committed = parse(committedRead, 'read_committed');
  const written = parse(uncommittedRead, 'read_uncommitted');
  for (const [t, outcome] of outcomes) {
    for (let j = 0; j < TXN_RECORDS; j++) {
      const c = committed.get(`${t}-${j}`) || 0;
      if (outcome === 'committed' && c !== 1) problems.push(`read_committed: record txn-${t}-${j} of committed transaction ${t} read ${c} times, expected once`);
      if (outcome === 'aborted' && c) problems.push(`read_committed: record txn-${t}-${j} of aborted transaction ${t} read`);
      const w = written.get(`${t}-${j}`) || 0;
      if (w !== 1) problems.push(`read_uncommitted: record txn-${t}-${j} (transaction ${t}, ${outcome}) read ${w} times, expected once`);
    }
  }
  for (const k of committed.keys()) if (!outcomes.has(Number(k.split('-')[0]))) problems.push(`read_committed: record txn-${k} of a transaction the producer has no outcome for`);
  if (problems.length) throw new Error(problems.slice(0, 8).join('\n'));
}

async function txnCommitKill(broker, proxy, bootstrap, work) {
  const topic = 'crash-txn-commit-kill';
  const outcomeFile = path.join(work, 'txn-outcomes');
  await client('create', bootstrap, topic, PARTITIONS);
  const producer = startClient('txn-produce', bootstrap, topic, PARTITIONS, TXN_COUNT, outcomeFile);
  await waitForCount(() => readOutcomes(outcomeFile).size, TXN_COUNT / 4, 'transactions', producer);
  // From the next EndTxn(commit) on, the broker's answers are withheld: the producer waits for its commit while
  // the broker writes PrepareCommit and the markers; then the broker is killed.
  proxy.withholdFrom = isEndTxnCommit;
  for (const deadline = Date.now() + 10000; !proxy.withholding && Date.now() < deadline;) await sleep(5);
  if (!proxy.withholding) throw new Error('no EndTxn(commit) request within 10 s');
  const inDoubt = readOutcomes(outcomeFile).size + 1; // the producer logs each outcome before it begins the next transaction
  await sleep(100);
  const withheld = proxy.withheld(END_TXN);
  await broker.kill();
  proxy.reset();
  if (!withheld) throw new Error('the EndTxn(commit) request was answered before the kill: the kill tested nothing');
  log(`EndTxn(commit) of transaction ${inDoubt} reached the broker unanswered; broker killed`);
  await sleep(1000);
  await broker.start();
  const result = await Promise.race([producer.exited, sleep(100000).then(() => ({ code: 'timeout', out: () => '' }))]);
  if (result.code !== 0) {
    producer.proc.kill('SIGKILL');
    throw new Error(`the transactional producer did not finish after the broker restart (exit ${result.code}${result.signal ? `, ${result.signal}` : ''}): ${result.out()}`);
  }
  const outcomes = readOutcomes(outcomeFile);
  const missing = [];
  for (let t = 1; t <= TXN_COUNT; t++) if (!outcomes.has(t)) missing.push(t);
  if (missing.length) throw new Error(`the producer logged no outcome for transactions ${missing.join(', ')}`);
  await client('end', bootstrap, topic, PARTITIONS);
  verifyTxns(outcomes, await dumpRecords(bootstrap, topic, 'read_committed'), await dumpRecords(bootstrap, topic, 'read_uncommitted'));
  const aborted = [...outcomes.values()].filter((o) => o === 'aborted').length;
  return `the producer saw transaction ${inDoubt} ${outcomes.get(inDoubt)} after the restart; read_committed: the ${TXN_COUNT - aborted} committed transactions ` +
    `complete and once, nothing of the ${aborted} aborted (every ${TXN_ABORT_EVERY}th${outcomes.get(inDoubt) === 'aborted' ? ' and the one in doubt' : ''}), past every transaction; read_uncommitted: every record once`;
}

async function main() {
  const runs = { 'broker-kill': brokerKill, 'producer-kill': producerKill, 'txn-commit-kill': txnCommitKill };
  const name = process.argv[2];
  if (!runs[name]) {
    console.error(`usage: node compat/crash/crash-test.js ${Object.keys(runs).join(' | ')}`);
    process.exit(2);
  }
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'fjord-crash-'));
  const port = await freePort();
  const proxy = new WithholdingProxy(port);
  await proxy.listen();
  const broker = new Broker(port, proxy.port, path.join(work, 'data'), { log });
  fs.mkdirSync(broker.dir);
  let code = 0;
  try {
    await broker.start();
    log(await runs[name](broker, proxy, `127.0.0.1:${proxy.port}`, work));
  } catch (e) {
    console.log(`FAIL: ${e.message}`);
    const tail = broker.tail();
    if (tail) console.log(`  broker log (last lines):\n${tail}`);
    code = 1;
  } finally {
    await broker.stop().catch(() => {});
    proxy.close();
    if (code === 0 || !process.env.FJORD_CRASH_KEEP) {
      try {
        fs.rmSync(work, { recursive: true, force: true, maxRetries: 5 });
      } catch (e) {
        log(`could not remove ${work}: ${e.message}`);
      }
    } else console.log(`crash: kept ${work}`);
  }
  process.exit(code);
}

main();
