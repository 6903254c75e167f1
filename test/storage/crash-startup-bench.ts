/**
 * One-off measurement, not a test: start-up after a crash. Runs `bin/fjord start` on one data dir,
 * produces idempotent batches to a 6-partition topic from one pipelined connection, SIGKILLs the
 * broker mid-stream, and times the next start from spawn to the first answered ApiVersions (what
 * a client waiting on ECONNREFUSED sees); KILLS times over, then once after a clean stop (SIGTERM).
 *
 *   npx tsc -p tsconfig.json && node dist/test/storage/crash-startup-bench.js [KILLS=8] [--produce-ms=3000] [--keep]
 *
 * Prints each start (ms to first answer, and the broker's own 'listener open', 'logs loaded' and
 * 'broker listening' (every partition online) figures) and the median and max over the crash starts.
 */
import { spawn, type ChildProcess } from 'child_process';
import * as fs from 'fs';
import * as net from 'net';
import * as os from 'os';
import * as path from 'path';
import { ApiKey } from '../../src/protocol/generated';
import type { ProduceResponse } from '../../src/protocol/generated/ProduceResponse';
import { buildBatchSync } from '../../src/records/records';
import { RawClient } from '../helpers/raw-client';

const FJORD = path.resolve(__dirname, '../../../bin/fjord');
const PARTITIONS = 6;
const IN_FLIGHT = 32;
const RECORDS_PER_BATCH = 16;
const VALUE = 'v'.repeat(1000);

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

interface Started {
  child: ChildProcess;
  firstAnswerMs: number;
  logsLoadedMs?: number;
  listenerOpenMs?: number;
  listeningMs?: number;
}

async function start(dataDir: string, port: number, logFile: string): Promise<Started> {
  const linesBefore = fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8').split('\n').length - 1 : 0;
  const out = fs.openSync(logFile, 'a');
  const spawned = process.hrtime.bigint();
  const child = spawn(FJORD, ['start', '--data-dir', dataDir, '--port', String(port), '--log-level', 'info', '--set', 'http.listener='], { stdio: ['ignore', out, out] });
  fs.closeSync(out);
  for (;;) {
    try {
      const c = await RawClient.connect(port);
      await c.request(ApiKey.ApiVersions, 3, { clientSoftwareName: 'bench', clientSoftwareVersion: '1' });
      c.close();
      break;
    } catch {
      if (child.exitCode !== null) throw new Error(`broker exited: ${fs.readFileSync(logFile, 'utf8')}`);
      await new Promise((r) => setTimeout(r, 5));
    }
  }
  const firstAnswerMs = Number(process.hrtime.bigint() - spawned) / 1e6;
  // Every partition online: the broker's 'broker listening' line.
  while (!fs.readFileSync(logFile, 'utf8').split('\n').slice(linesBefore).some((l) => l.includes('"broker listening"'))) {
    await new Promise((r) => setTimeout(r, 10));
  }
  const lines = fs.readFileSync(logFile, 'utf8').split('\n').slice(linesBefore).filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { msg: string; ms?: number; startupMs?: number });
  return {
    child, firstAnswerMs,
    logsLoadedMs: lines.find((l) => l.msg === 'logs loaded')?.ms,
    listenerOpenMs: lines.find((l) => l.msg === 'listener open')?.startupMs,
    listeningMs: lines.find((l) => l.msg === 'broker listening')?.startupMs,
  };
}

/** Produces until `stopAt`, keeping IN_FLIGHT requests in flight; returns the batches acknowledged. */
async function produce(port: number, producerId: number, ms: number): Promise<number> {
  const c = await RawClient.connect(port);
  const seqs = new Array<number>(PARTITIONS).fill(0);
  let acked = 0;
  let sent = 0;
  const stopAt = Date.now() + ms;
  const sendOne = () => {
    const p = sent++ % PARTITIONS;
    const records = buildBatchSync({
      producerId, producerEpoch: 0, baseSequence: seqs[p],
      records: Array.from({ length: RECORDS_PER_BATCH }, () => ({ value: VALUE })),
    });
    seqs[p] += RECORDS_PER_BATCH;
    c.send(ApiKey.Produce, 9, { transactionalId: null, acks: 1, timeoutMs: 5000, topicData: [{ name: 'load', partitionData: [{ index: p, records }] }] });
  };
  for (let i = 0; i < IN_FLIGHT; i++) sendOne();
  try {
    while (Date.now() < stopAt) {
      await c.receive<ProduceResponse>(ApiKey.Produce, 9);
      acked++;
      sendOne();
    }
  } finally {
    c.close();
  }
  return acked;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];

async function main(): Promise<void> {
  const kills = Number(process.argv.find((a) => /^\d+$/.test(a)) ?? 8);
  const produceMs = Number(process.argv.find((a) => a.startsWith('--produce-ms='))?.slice(13) ?? 3000);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'fjord-crash-startup-'));
  const logFile = path.join(`${dataDir}.log`);
  const port = await freePort();
  try {
    let broker = await start(dataDir, port, logFile);
    const c = await RawClient.connect(port);
    await c.request(ApiKey.CreateTopics, 7, {
      topics: [{ name: 'load', numPartitions: PARTITIONS, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 5000, validateOnly: false,
    });
    c.close();
    const crashStarts: number[] = [];
    for (let i = 0; i < kills; i++) {
      const producing = produce(port, 1000 + i, produceMs + 1000).catch(() => -1);
      await new Promise((r) => setTimeout(r, produceMs));
      broker.child.kill('SIGKILL');
      await new Promise((r) => broker.child.once('exit', r));
      await producing;
      const size = fs.readdirSync(dataDir).filter((d) => d.startsWith('load-'))
        .reduce((n, d) => n + fs.readdirSync(path.join(dataDir, d)).reduce((m, f) => m + fs.statSync(path.join(dataDir, d, f)).size, 0), 0);
      broker = await start(dataDir, port, logFile);
      crashStarts.push(broker.firstAnswerMs);
      console.log(`crash ${i + 1}: first answer ${broker.firstAnswerMs.toFixed(0)} ms (listener open at ${broker.listenerOpenMs?.toFixed(0)} ms, logs loaded in ${broker.logsLoadedMs?.toFixed(0)} ms, all online at ${broker.listeningMs?.toFixed(0)} ms), topic 'load' ${(size / 1024 ** 2).toFixed(0)} MiB`);
    }
    broker.child.kill('SIGTERM');
    await new Promise((r) => broker.child.once('exit', r));
    broker = await start(dataDir, port, logFile);
    console.log(`clean restart: first answer ${broker.firstAnswerMs.toFixed(0)} ms (listener open at ${broker.listenerOpenMs?.toFixed(0)} ms, logs loaded in ${broker.logsLoadedMs?.toFixed(0)} ms, all online at ${broker.listeningMs?.toFixed(0)} ms)`);
    broker.child.kill('SIGTERM');
    await new Promise((r) => broker.child.once('exit', r));
    console.log(`after a crash: median ${median(crashStarts).toFixed(0)} ms, max ${Math.max(...crashStarts).toFixed(0)} ms over ${kills} kills`);
  } finally {
    if (!process.argv.includes('--keep')) fs.rmSync(dataDir, { recursive: true, force: true });
    if (!process.argv.includes('--keep')) fs.rmSync(logFile, { force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
