#!/usr/bin/env node
'use strict';
// Transactions under repeated broker kills: a librdkafka (confluent-kafka) consume-transform-produce loop while
// the broker is SIGKILLed and restarted again and again. How long does each transactional call block, and is
// every input record still transformed exactly once?
//
//   node compat/crash/txn-chaos.js [--kills N] [--records N]      (exit 0 = pass, 1 after "FAIL: ...")
//
// The broker is `bin/fjord start` in its own process (FJORD_CRASH_BROKER_CMD for another broker, as in
// crash-test.js: `exec compat/lib/apache-kafka.sh run {port} {advertised_port} {dir}` for Kafka). The client
// (txn_chaos_client.py run) reads a 6-partition input topic in a read_committed group and writes each record to an
// output topic in transactions of up to 10 records, sending its offsets with send_offsets_to_transaction. Every
// 2-5 s (random) the broker is killed and restarted at once, N times; then the client gets 15 s more and is told
// to stop. Pass: no fatal client error, read_committed output holds each input record below the group's committed
// offsets exactly once (and nothing else), and no transactional call blocked longer than 60 s. The log of every
// call's duration is summarised: count, p50, p99, max per call.
const { spawn } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { Broker, freePort, ROOT } = require('../lib/broker-process');
const VENV_PY = path.join(ROOT, 'compat/python/.venv/bin/python');
const PY = fs.existsSync(VENV_PY) ? VENV_PY : 'python3';
const CLIENT = path.join(__dirname, 'txn_chaos_client.py');
const PARTITIONS = 6;
const MAX_CALL_MS = 60000;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const log = (msg) => console.log(`txn-chaos: ${msg}`);

function arg(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
}

/** Starts the client in MODE: { proc, done } where done resolves its stdout, or rejects on a non-zero exit. */
function startClient(mode, ...args) {
  const proc = spawn(PY, [CLIENT, mode, ...args.map(String)], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  proc.stdout.on('data', (d) => (out += d));
  proc.stderr.on('data', (d) => (err += d));
  const done = new Promise((resolve, reject) => {
    proc.on('exit', (code, signal) => (code === 0 ? resolve(out) : reject(new Error(`client ${mode} exited ${code ?? signal}: ${err.trim().slice(-2000)}`))));
  });
  return { proc, done, stderr: () => err };
}

const client = (mode, ...args) => startClient(mode, ...args).done;

function percentile(sorted, q) {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] : 0;
}

/** Per call: count, errors, p50/p99/max milliseconds, from the client's JSON lines; a call still open at the end counts from its begin. */
function summarise(logFile) {
  const byCall = new Map();
  const lines = fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)) : [];
  const last = lines[lines.length - 1];
  if (last?.begin) lines.push({ call: `${last.call} (never returned)`, ms: Math.round(Date.now() - last.begin * 1000), error: null });
  for (const { call, ms, error, begin } of lines) {
    if (begin) continue;
    const s = byCall.get(call) ?? { ms: [], errors: new Map() };
    s.ms.push(ms);
    if (error) s.errors.set(error.replace(/\d+/g, 'N').slice(0, 120), (s.errors.get(error.replace(/\d+/g, 'N').slice(0, 120)) ?? 0) + 1);
    byCall.set(call, s);
  }
  const rows = [];
  for (const [call, s] of byCall) {
    const sorted = s.ms.sort((a, b) => a - b);
    rows.push({ call, count: sorted.length, p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99), max: sorted[sorted.length - 1], errors: Object.fromEntries(s.errors) });
  }
  return rows;
}

async function main() {
  const kills = arg('kills', 25);
  const records = arg('records', 200000);
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'fjord-txn-chaos-'));
  const port = await freePort();
  const broker = new Broker(port, port, path.join(work, 'data'), { log });
  fs.mkdirSync(broker.dir);
  const stopFile = path.join(work, 'stop');
  const callLog = path.join(work, 'calls.jsonl');
  const bootstrap = `127.0.0.1:${port}`;
  let code = 0;
  let loop;
  const report = () => {
    for (const r of summarise(callLog)) log(`${r.call}: ${r.count} calls, p50 ${r.p50} ms, p99 ${r.p99} ms, max ${r.max} ms, errors ${JSON.stringify(r.errors)}`);
  };
  try {
    await broker.start();
    await client('setup', bootstrap, 'chaos-in', 'chaos-out', PARTITIONS, records);
    loop = startClient('run', bootstrap, 'chaos-in', 'chaos-out', 'chaos-group', stopFile, callLog);
    let loopDone = false;
    loop.done.then(() => (loopDone = true), () => (loopDone = true));
    for (let k = 1; k <= kills && !loopDone; k++) {
      await sleep(2000 + Math.random() * 3000);
      await broker.kill();
      await broker.start();
      log(`kill ${k}/${kills} done`);
    }
    await sleep(15000);
    fs.writeFileSync(stopFile, '');
    await Promise.race([loop.done, sleep(MAX_CALL_MS + 5000).then(() => { throw new Error(`the client did not stop within ${MAX_CALL_MS + 5000} ms`); })]);
    const verdict = JSON.parse(await client('verify', bootstrap, 'chaos-in', 'chaos-out', 'chaos-group', PARTITIONS));
    report();
    const rows = summarise(callLog);
    log(`${verdict.records} input records transformed and committed`);
    if (verdict.problems.length) throw new Error(`exactly-once broken: ${verdict.problems.join('; ')}`);
    const slow = rows.filter((r) => r.max > MAX_CALL_MS);
    if (slow.length) throw new Error(`calls blocked longer than ${MAX_CALL_MS} ms: ${slow.map((r) => `${r.call} ${r.max} ms`).join(', ')}`);
  } catch (e) {
    report();
    console.log(`FAIL: ${e.message}`);
    const tail = broker.tail();
    if (tail) console.log(`  broker log (last lines):\n${tail}`);
    code = 1;
  } finally {
    fs.writeFileSync(stopFile, '');
    if (loop && loop.proc.exitCode === null) {
      if (process.env.TXN_CHAOS_DEBUG) fs.writeFileSync(path.join(work, 'client.stderr'), loop.stderr());
      loop.proc.kill('SIGKILL');
    }
    await broker.stop().catch(() => {});
    if (code === 0 || !process.env.FJORD_CRASH_KEEP) fs.rmSync(work, { recursive: true, force: true, maxRetries: 5 });
    else console.log(`txn-chaos: kept ${work}`);
  }
  process.exit(code);
}

main();
