#!/usr/bin/env node
'use strict';
// Fjord group-offsets restart test: committed offsets survive a broker restart (exit 0 = pass, 1 after "FAIL: ...").
//
//   node compat/crash/offsets-restart.js
//
// Starts `bin/fjord start --port P --data-dir D` (group.initial.rebalance.delay.ms=0), creates a 6-partition
// topic with 600 records, and runs offsets_client.py (a confluent-kafka consumer in group G) three times:
//   1. reads 300 records, commits the offset after the last record of each partition it read, with metadata;
//      the broker is stopped (SIGTERM) and started again on the same data dir;
//   2. reads 150 more records and commits; the broker is killed (SIGKILL) and started again;
//   3. reads every record left, up to the end offsets.
// Pass: each consumer first fetches exactly the offsets (and metadata) the previous one committed, each
// partition's first record read is at the committed offset (not 0: auto.offset.reset=earliest would hide a lost
// commit otherwise), and the three sessions read every record once: 600, no duplicates.
// FJORD_CRASH_BROKER_CMD replaces the broker command (see ../lib/broker-process.js); FJORD_CRASH_KEEP=1 keeps the
// work dir of a failed run.
const { spawn } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { Broker, freePort, ROOT } = require('../lib/broker-process');

const VENV_PY = path.join(ROOT, 'compat/python/.venv/bin/python');
const PY = fs.existsSync(VENV_PY) ? VENV_PY : 'python3';
const CLIENT = path.join(__dirname, 'offsets_client.py');
const PARTITIONS = 6;
const COUNT = 600;
const NOTHING = -1001; // librdkafka's "no committed offset"

const log = (msg) => console.log(`offsets: ${msg}`);

function client(...args) {
  return new Promise((resolve, reject) => {
    const proc = spawn(PY, [CLIENT, ...args.map(String)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    proc.stdout.on('data', (d) => (out += d));
    proc.stderr.on('data', (d) => (err += d));
    const timer = setTimeout(() => proc.kill('SIGKILL'), 90000);
    proc.on('exit', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve(out);
      else reject(new Error(`offsets_client.py ${args[0]} exited ${code ?? signal}: ${err.trim().slice(-2000)}`));
    });
  });
}

async function session(bootstrap, topic, group, limit) {
  const r = JSON.parse(await client('consume', bootstrap, topic, group, PARTITIONS, limit));
  const num = (o) => Object.fromEntries(Object.entries(o).map(([p, v]) => [Number(p), v]));
  return { before: num(r.before), first: num(r.first), keys: r.keys, committed: num(r.committed), ends: num(r.ends) };
}

/** Checks that session s resumes exactly where the commits `expected` ({ p: offset }) left the group. */
function checkResume(name, s, expected) {
  const problems = [];
  for (let p = 0; p < PARTITIONS; p++) {
    const want = expected[p];
    const [got, metadata] = s.before[p];
    if (want === undefined) {
      if (got !== NOTHING) problems.push(`partition ${p}: committed offset ${got}, expected none`);
      continue;
    }
    if (got !== want) problems.push(`partition ${p}: committed offset ${got === NOTHING ? 'none' : got}, expected ${want}`);
    else if (metadata !== `compat:${p}:${want}`) problems.push(`partition ${p}: commit metadata ${JSON.stringify(metadata)}, expected "compat:${p}:${want}"`);
    if (s.first[p] !== undefined && s.first[p] !== want) problems.push(`partition ${p}: first record read at offset ${s.first[p]}, expected ${want} (the committed offset)`);
  }
  if (problems.length) throw new Error(`${name}: ${problems.join('; ')}`);
}

async function main() {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'fjord-offsets-'));
  const port = await freePort();
  const broker = new Broker(port, port, path.join(work, 'data'), { extraArgs: ['--set', 'group.initial.rebalance.delay.ms=0'], log });
  fs.mkdirSync(broker.dir);
  const bootstrap = `127.0.0.1:${port}`;
  const topic = 'offsets-restart';
  const group = 'offsets-restart-group';
  let code = 0;
  try {
    await broker.start();
    await client('setup', bootstrap, topic, PARTITIONS, COUNT);
    const s1 = await session(bootstrap, topic, group, 300);
    checkResume('first consumer', s1, {});
    log(`first consumer read ${s1.keys.length} records, committed ${JSON.stringify(s1.committed)}`);

    const stopped = await broker.stop();
    log(`broker stopped with SIGTERM (exit ${stopped.code ?? stopped.signal}); restarting on the same data dir`);
    await broker.start();
    const s2 = await session(bootstrap, topic, group, 150);
    checkResume('after the SIGTERM restart', s2, s1.committed);
    const afterTwo = { ...s1.committed, ...s2.committed };
    log(`second consumer resumed at the committed offsets, read ${s2.keys.length}, committed ${JSON.stringify(s2.committed)}`);

    await broker.kill();
    await broker.start();
    const s3 = await session(bootstrap, topic, group, 'all');
    checkResume('after the SIGKILL restart', s3, afterTwo);
    log(`third consumer resumed at the committed offsets, read ${s3.keys.length} to the end offsets ${JSON.stringify(s3.ends)}`);

    const keys = [...s1.keys, ...s2.keys, ...s3.keys];
    const seen = new Set();
    const dupes = keys.filter((k) => (seen.has(k) ? true : (seen.add(k), false)));
    if (dupes.length) throw new Error(`${dupes.length} records read twice across the restarts: key-${dupes.slice(0, 10).join(', key-')}`);
    if (seen.size !== COUNT) throw new Error(`${seen.size} distinct records read in the three sessions, expected ${COUNT}`);
    log(`${COUNT} records read once each across a SIGTERM and a SIGKILL restart`);
  } catch (e) {
    console.log(`FAIL: ${e.message}`);
    const tail = broker.tail();
    if (tail) console.log(`  broker log (last lines):\n${tail}`);
    code = 1;
  } finally {
    await broker.stop().catch(() => {});
    if (code === 0 || !process.env.FJORD_CRASH_KEEP) {
      try {
        fs.rmSync(work, { recursive: true, force: true, maxRetries: 5 });
      } catch (e) {
        log(`could not remove ${work}: ${e.message}`);
      }
    } else console.log(`offsets: kept ${work}`);
  }
  process.exit(code);
}

main();
