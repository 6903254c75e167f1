// The long fuzz run: `npm run fuzz -- --minutes N [--seed S] [--connections C] [--apis A,B]`.
//
// First the codecs and scanBatches (about a tenth of the time), then the broker: started as a child
// process (`bin/fjord start`, its own temporary data dir) so that a crash is seen as a crash, with a
// capturing proxy in front for kafkajs's requests, then fuzzed over the wire for the rest of the time.
// Reports inputs tried, failures, crashes, hangs (the bystander left unanswered), the broker's peak
// RSS (VmHWM) and its RSS over time, and the bystander's p50/p99. Exits 1 if anything failed; the
// last inputs before a crash and every failing frame are written to fuzz-report.json in the data dir.
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { ApiKey } from '../../src/protocol/generated';
import type { MetadataResponse } from '../../src/protocol/generated/MetadataResponse';
import type { ListGroupsResponse } from '../../src/protocol/generated/ListGroupsResponse';
import { RawClient } from '../helpers/raw-client';
import { fuzzCodecs, fuzzScanBatches } from './codec-fuzz';
import { fuzzBroker, FUZZ_BROKER_CONFIG } from './broker-fuzz';
import { startCapturingProxy, runClientWorkload, goldenRequests } from './capture';

interface Args { minutes: number; seed: number; connections: number; apis?: string[] }

function parseArgs(argv: string[]): Args {
  const args: Args = { minutes: 1, seed: Date.now() & 0x7fffffff, connections: 4 };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--minutes') args.minutes = Number(argv[++i]);
    else if (a === '--seed') args.seed = Number(argv[++i]);
    else if (a === '--connections') args.connections = Number(argv[++i]);
    else if (a === '--apis') args.apis = argv[++i].split(',');
    else throw new Error(`unknown argument ${a} (use --minutes N, --seed S, --connections C, --apis A,B)`);
  }
  if (!(args.minutes > 0)) throw new Error('--minutes must be a positive number');
  return args;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

async function waitForPort(port: number, deadlineMs: number): Promise<void> {
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = net.connect({ port, host: '127.0.0.1' }, () => { s.destroy(); resolve(true); });
      s.once('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadlineMs) throw new Error(`broker not listening on ${port}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** VmRSS and VmHWM of a process in MB, from /proc (Linux). */
function memoryOf(pid: number): { rss: number; hwm: number } | null {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0);
    return { rss: kb('VmRSS') / 1024, hwm: kb('VmHWM') / 1024 };
  } catch {
    return null;
  }
}

/** How many topics and groups the inputs left behind (what the broker's memory holds). */
async function brokerState(port: number): Promise<{ topics: number; groups: number }> {
  const c = await RawClient.connect(port);
  try {
    const metadata = await c.request<MetadataResponse>(ApiKey.Metadata, 1, { topics: null });
    const groups = await c.request<ListGroupsResponse>(ApiKey.ListGroups, 0, {});
    return { topics: metadata.topics.length, groups: groups.groups.length };
  } finally {
    c.close();
  }
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const totalMs = args.minutes * 60_000;
  const log = (line: string) => process.stdout.write(`[fuzz ${new Date().toISOString().slice(11, 19)}] ${line}\n`);
  log(`seed ${args.seed}, ${args.minutes} min (replay: --seed ${args.seed})`);

  // 1. Codecs and scanBatches, directly.
  const codecUntil = Date.now() + totalMs / 10;
  let codecInputs = 0;
  const codecFailures = [];
  for (let round = 0; Date.now() < codecUntil; round++) {
    codecFailures.push(...fuzzCodecs(args.seed + round, 1, () => codecInputs++));
    codecFailures.push(...fuzzScanBatches(args.seed + round, 2000, () => codecInputs++));
  }
  log(`codecs: ${codecInputs} inputs, ${codecFailures.length} failures`);

  // 2. The broker, in a child process.
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'fjord-fuzz-'));
  const port = await freePort();
  const proxy = await startCapturingProxy(() => port);
  const brokerLog = fs.openSync(path.join(dataDir, 'broker.log'), 'w');
  const sets = Object.entries(FUZZ_BROKER_CONFIG).flatMap(([k, v]) => ['--set', `${k}=${v}`]);
  const child = spawn(process.execPath, [
    path.resolve(__dirname, '../../../bin/fjord'), 'start', '--port', String(port), '--advertised-port', String(proxy.port),
    '--data-dir', path.join(dataDir, 'data'), '--log-level', 'warn', '--set', 'http.listener=', ...sets,
  ], { stdio: ['ignore', brokerLog, brokerLog] });
  let exit: string | null = null;
  child.on('exit', (code, signal) => { exit = `exited with ${signal ?? code}`; });
  await waitForPort(port, Date.now() + 20_000);
  log(`broker pid ${child.pid} on ${port}, data and log in ${dataDir}`);

  await runClientWorkload(`127.0.0.1:${proxy.port}`);
  const captured = [...proxy.frames, ...goldenRequests()];
  await proxy.close();
  log(`captured ${proxy.frames.length} kafkajs requests, plus ${captured.length - proxy.frames.length} golden ones`);

  const rssSamples: { atS: number; rss: number }[] = [];
  const started = Date.now();
  const sampler = setInterval(() => {
    const m = memoryOf(child.pid!);
    if (m) rssSamples.push({ atS: Math.round((Date.now() - started) / 1000), rss: Math.round(m.rss) });
  }, 1000);
  const lastInputs: { kind: string; frame: string }[] = [];
  const report = await fuzzBroker({
    port, seed: args.seed, durationMs: Math.max(10_000, codecUntil + totalMs * 0.9 - Date.now()),
    connections: args.connections, captured, apis: args.apis,
    stopped: () => exit !== null,
    progress: (line) => log(`${line}, broker RSS ${Math.round(memoryOf(child.pid!)?.rss ?? 0)} MB`),
    onInput: (kind, frame) => {
      lastInputs.push({ kind, frame: frame.toString('hex', 0, 4000) });
      if (lastInputs.length > 20) lastInputs.shift();
    },
  });
  clearInterval(sampler);
  const memory = memoryOf(child.pid!);
  const state = exit === null ? await brokerState(port).catch(() => null) : null;
  const crash: string | null = exit;
  const crashed = crash !== null;
  if (!crashed) child.kill('SIGTERM');
  await new Promise((resolve) => (crashed ? resolve(null) : child.once('exit', resolve)));

  const tenth = rssSamples[Math.floor(rssSamples.length / 10)]?.rss ?? 0;
  const summary = {
    seed: args.seed,
    minutes: args.minutes,
    codecInputs,
    codecFailures: codecFailures.length,
    brokerInputs: report.inputs,
    answered: report.answered,
    closedMalformed: report.closedMalformed,
    failures: report.failures.length,
    crashes: crashed ? 1 : 0,
    crash,
    hangs: report.bystanderStalls,
    peakRssMb: memory ? Math.round(memory.hwm) : null,
    rssMbAtTenth: tenth,
    rssMbAtEnd: rssSamples.at(-1)?.rss ?? null,
    topicsAtEnd: state?.topics ?? null,
    groupsAtEnd: state?.groups ?? null,
    bystanderRequests: report.bystanderRequests,
    bystanderP50Ms: Number(report.bystanderP50Ms.toFixed(2)),
    bystanderP99Ms: Number(report.bystanderP99Ms.toFixed(2)),
    bystanderMaxMs: Number(report.bystanderMaxMs.toFixed(2)),
    skipped: report.skipped,
    byApi: report.byApi,
  };
  const file = path.join(dataDir, 'fuzz-report.json');
  fs.writeFileSync(file, JSON.stringify({ summary, failures: report.failures, codecFailures, lastInputs: crashed ? lastInputs : [], rssSamples }, null, 1));
  log(JSON.stringify({ ...summary, byApi: undefined }));
  for (const f of report.failures.slice(0, 10)) log(`failure: ${f.kind} ${f.api} v${f.version}: ${f.problem} ${f.frame.slice(0, 200)}`);
  for (const f of codecFailures.slice(0, 10)) log(`codec failure: ${f.what}: ${f.error}`);
  log(`full report: ${file}`);
  if (crashed || report.failures.length > 0 || codecFailures.length > 0) process.exitCode = 1;
}

main().catch((e) => {
  process.stderr.write(`fuzz: ${(e as Error).stack ?? e}\n`);
  process.exitCode = 2;
});
