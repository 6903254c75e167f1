// `npm run bench`: produce/consume throughput and latency against a broker running as its own process.
//
//   npm run bench [-- --quick] [--rounds N] [--only KEY,...] [--records N] [--producers N]
//                 [--target fjord] [--no-snapshot] [--cpu-prof] [--out FILE] [--timeout SECONDS]
//
// --producers: goroutines calling Produce (default 1; at 100 B one goroutine is the limit, not the
// broker). --cpu-prof: V8 CPU profiles of the broker in <out dir>/profiles/ (see bench/profile-top.ts).
// --no-snapshot: run the tree's dist/ directly instead of a copy taken at the start of the run.
// The load comes from bench/loadgen (Go, franz-go), built once per run with `go build`; it creates the
// topic, produces, then consumes the whole topic and prints JSON lines that this script collects. For
// every workload and round a fresh broker is started (free port, temporary data dir), so each row's
// broker CPU seconds (/proc/<pid>/stat utime+stime), peak RSS (/proc/<pid>/status VmHWM) and start-up
// time (spawn to the first ApiVersions answered on a fresh TCP connection) belong to that workload alone.
// With --rounds N each cell of the table is the median of N rounds (rounds interleave the workloads).
//
// The broker under test is a Target (start() -> bootstrap, pid, stop()); only Fjord is implemented.
// Apache Kafka will be a second Target with the same loadgen and the same table.
//
// Results: a markdown table on stdout; everything (every round, request round trips, CPU split by
// phase, the broker's and the client's warnings) in bench/results/latest.json (gitignored).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import * as readline from 'node:readline';

const ROOT = path.resolve(__dirname, '..', '..'); // dist/bench/run.js -> repository root
const LOADGEN_DIR = path.join(ROOT, 'bench', 'loadgen');
const LOADGEN_BIN = path.join(LOADGEN_DIR, 'fjord-loadgen');
const MIB = 1 << 20;

// ------------------------------------------------------------------------------------------ targets

export interface ProcStats {
  /** utime + stime of every thread, seconds. */
  cpuSeconds: number;
  /** VmHWM: peak resident set, MiB. */
  peakRssMb: number;
  /** VmRSS now, MiB. */
  rssMb: number;
}

export interface RunningTarget {
  bootstrap: string;
  pid: number;
  /** Spawn to the first ApiVersions answered. */
  startupMs: number;
  stats(): ProcStats;
  /** Lines the broker wrote on stdout/stderr so far. */
  output(): string[];
  /** Stops the broker; resolves with how it exited. */
  stop(): Promise<{ code: number | null; signal: string | null; stopMs: number }>;
}

export interface Target {
  name: string;
  describe(): string;
  /** label: names the run (workload and round), e.g. for profile files. */
  start(label: string): Promise<RunningTarget>;
  /** Frees what the target kept between starts. */
  dispose?(): Promise<void>;
}

const CLK_TCK = (() => {
  const r = spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' });
  const n = Number(r.stdout?.trim());
  return Number.isFinite(n) && n > 0 ? n : 100;
})();

/** CPU and memory of a live process, from /proc. */
export function procStats(pid: number): ProcStats {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // fields[0] is field 3 (state)
  const cpuSeconds = (Number(fields[11]) + Number(fields[12])) / CLK_TCK; // fields 14 and 15
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { cpuSeconds, peakRssMb: kb('VmHWM') / 1024, rssMb: kb('VmRSS') / 1024 };
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

/** One ApiVersions v0 round trip on a fresh connection: true if answered with our correlation id and no error. */
function apiVersionsOnce(host: string, port: number, correlationId: number): Promise<boolean> {
  const clientId = Buffer.from('fjord-bench');
  const req = Buffer.alloc(4 + 2 + 2 + 4 + 2 + clientId.length);
  let o = req.writeInt32BE(req.length - 4, 0);
  o = req.writeInt16BE(18, o); // ApiVersions
  o = req.writeInt16BE(0, o);
  o = req.writeInt32BE(correlationId, o);
  o = req.writeInt16BE(clientId.length, o);
  clientId.copy(req, o);
  return new Promise((resolve) => {
    let buf = Buffer.alloc(0);
    let settled = false;
    const sock = net.connect({ host, port });
    const done = (ok: boolean) => {
      if (settled) return;
      settled = true;
      sock.destroy();
      resolve(ok);
    };
    sock.setTimeout(2000, () => done(false));
    sock.on('error', () => done(false));
    sock.on('close', () => done(false));
    sock.on('connect', () => sock.write(req));
    sock.on('data', (d) => {
      buf = Buffer.concat([buf, d]);
      if (buf.length >= 10 && buf.length >= 4 + buf.readInt32BE(0)) {
        done(buf.readInt32BE(4) === correlationId && buf.readInt16BE(8) === 0);
      }
    });
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Copies what `bin/fjord start` loads (bin/, dist/src/, package.json) to a temporary directory, so
 * that another `npm run build` in the same tree during a long run cannot change or break the broker
 * between workloads. Dependencies still come from the tree's node_modules (NODE_PATH).
 */
function snapshotFjord(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fjord-bench-dist-'));
  fs.cpSync(path.join(ROOT, 'bin'), path.join(dir, 'bin'), { recursive: true });
  fs.cpSync(path.join(ROOT, 'dist', 'src'), path.join(dir, 'dist', 'src'), { recursive: true });
  fs.copyFileSync(path.join(ROOT, 'package.json'), path.join(dir, 'package.json'));
  return dir;
}

/**
 * Fjord: `bin/fjord start --port P --data-dir D --log-level warn` as a child process, on a free port
 * with a temporary data dir. With `snapshot` (the default), the code is a copy of the build taken
 * when the run begins.
 */
export function fjordTarget(opts: { snapshot?: boolean; cpuProfDir?: string } = {}): Target {
  let home: string | undefined = opts.snapshot === false ? ROOT : snapshotFjord();
  const cleanup = () => {
    if (home && home !== ROOT) fs.rmSync(home, { recursive: true, force: true });
    home = undefined;
  };
  process.once('SIGINT', () => {
    cleanup();
    process.exit(130);
  });
  return {
    name: 'fjord',
    describe: () => `fjord (bin/fjord start --log-level warn${opts.snapshot === false ? '' : ', a snapshot of dist/'}${opts.cpuProfDir ? ', --cpu-prof' : ''}, node ${process.version})`,
    async dispose() {
      cleanup();
    },
    async start(label: string) {
      if (!home) throw new Error('fjord target already disposed');
      const nodeArgs = opts.cpuProfDir ? ['--cpu-prof', '--cpu-prof-dir', opts.cpuProfDir, '--cpu-prof-name', `${label}.cpuprofile`] : [];
      const port = await freePort();
      const dataDir = await mkdtemp(path.join(os.tmpdir(), 'fjord-bench-'));
      const lines: string[] = [];
      const env = { ...process.env, NODE_PATH: path.join(ROOT, 'node_modules') };
      const t0 = process.hrtime.bigint();
      const child = spawn(process.execPath, [...nodeArgs, path.join(home, 'bin', 'fjord'), 'start', '--port', String(port),
        '--data-dir', dataDir, '--log-level', 'warn'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
      for (const s of [child.stdout!, child.stderr!]) readline.createInterface({ input: s }).on('line', (l) => lines.push(l));
      let exited: { code: number | null; signal: string | null } | undefined;
      const exitP = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
        child.on('exit', (code, signal) => resolve((exited = { code, signal }))));
      let corr = 1;
      const fail = async (why: string) => {
        child.kill('SIGKILL');
        await exitP;
        await rm(dataDir, { recursive: true, force: true });
        return new Error(`${why}: ${lines.join('\n')}`);
      };
      for (;;) {
        if (exited) throw await fail(`fjord exited while starting (code ${exited.code}, signal ${exited.signal})`);
        if (Number(process.hrtime.bigint() - t0) > 30e9) throw await fail('fjord did not answer ApiVersions within 30 s');
        if (await apiVersionsOnce('127.0.0.1', port, corr++)) break;
        await sleep(2);
      }
      const startupMs = Number(process.hrtime.bigint() - t0) / 1e6;
      const pid = child.pid!;
      return {
        bootstrap: `127.0.0.1:${port}`,
        pid,
        startupMs,
        stats: () => procStats(pid),
        output: () => lines.slice(),
        async stop() {
          const s0 = process.hrtime.bigint();
          if (!exited) child.kill('SIGTERM');
          const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
          const how = await exitP;
          clearTimeout(timer);
          const stopMs = Number(process.hrtime.bigint() - s0) / 1e6;
          await rm(dataDir, { recursive: true, force: true });
          return { ...how, stopMs };
        },
      };
    },
  };
}

const TARGETS: Record<string, (a: Args) => Target> = {
  fjord: (a) => fjordTarget({ snapshot: a.snapshot, cpuProfDir: a.cpuProf ? path.join(path.dirname(a.out), 'profiles') : undefined }),
};

// ---------------------------------------------------------------------------------------- workloads

interface Workload {
  key: string;
  name: string;
  size: number;
  partitions: number;
  acks: '1' | 'all';
  compression: 'none' | 'lz4';
  /** Records in the default run and with --quick. */
  records: number;
  quickRecords: number;
}

const WORKLOADS: Workload[] = [
  { key: '100B-acks1-p1', name: '100 B, acks=1, 1 partition', size: 100, partitions: 1, acks: '1', compression: 'none', records: 2_000_000, quickRecords: 500_000 },
  { key: '1KB-acks1-p6', name: '1 KB, acks=1, 6 partitions', size: 1024, partitions: 6, acks: '1', compression: 'none', records: 150_000, quickRecords: 60_000 },
  { key: '1KB-acksall-p6', name: '1 KB, acks=all, 6 partitions', size: 1024, partitions: 6, acks: 'all', compression: 'none', records: 150_000, quickRecords: 60_000 },
  { key: '1KB-lz4-acks1-p6', name: '1 KB lz4, acks=1, 6 partitions', size: 1024, partitions: 6, acks: '1', compression: 'lz4', records: 150_000, quickRecords: 60_000 },
];

// ------------------------------------------------------------------------------------------ running

interface Latency { p50: number; p99: number; p999: number; max: number; mean: number }
interface Requests { count: number; errors: number; avgBytes?: number; rttMs?: { p50: number; p99: number; max: number } }
interface ProduceLine {
  type: 'produce'; records: number; failed: number; bytes: number; seconds: number; recordsPerSec: number;
  mbPerSec: number; latencyMs: Latency; requests: Requests; perPartition: number[]; loadgenCpuSeconds: number;
  /** The longest time without any acknowledgement. */
  maxAckGapMs: number;
  firstError?: string; flushError?: string;
}
interface ConsumeLine {
  /** seconds: from the first Fetch written to the last record; totalSeconds: from the client's creation. */
  type: 'consume'; records: number; bytes: number; seconds: number; totalSeconds: number; setupMs: number;
  recordsPerSec: number; mbPerSec: number; firstRecordMs: number; maxGapMs: number; offsetAnomalies: number; fetchErrors: number; requests: Requests; loadgenCpuSeconds: number;
  firstError?: string;
}

interface RoundResult {
  workload: string;
  round: number;
  ok: boolean;
  error?: string;
  startupMs?: number;
  produce?: ProduceLine;
  consume?: ConsumeLine;
  broker?: {
    cpuSeconds: number;           // whole life: start-up, topic creation, produce, consume
    cpuSecondsStartup: number;    // until the first ApiVersions was answered
    cpuSecondsProduce: number;    // from the loadgen's start to its produce line (includes topic creation)
    cpuSecondsConsume: number;    // from the produce line to the loadgen's exit
    peakRssMb: number;
    rssMbAfterStartup: number;
    exit: { code: number | null; signal: string | null; stopMs: number };
    logLines: string[];
  };
  loadgenStderr: string[];
  wallSeconds: number;
}

async function runWorkload(target: Target, w: Workload, records: number, round: number, args: Args): Promise<RoundResult> {
  const w0 = process.hrtime.bigint();
  const res: RoundResult = { workload: w.key, round, ok: false, loadgenStderr: [], wallSeconds: 0 };
  let broker: RunningTarget | undefined;
  try {
    broker = await target.start(`${w.key}-r${round}`);
    res.startupMs = broker.startupMs;
    const atStart = broker.stats();
    let atProduced: ProcStats | undefined;
    const b = broker;
    const child: ChildProcess = spawn(LOADGEN_BIN, [
      '-brokers', broker.bootstrap, '-records', String(records), '-size', String(w.size),
      '-partitions', String(w.partitions), '-acks', w.acks, '-compression', w.compression,
      '-timeout', `${args.timeout}s`, '-producers', String(args.producers),
    ], { stdio: ['ignore', 'pipe', 'pipe'] });
    const errors: string[] = [];
    readline.createInterface({ input: child.stderr! }).on('line', (l) => res.loadgenStderr.push(l));
    readline.createInterface({ input: child.stdout! }).on('line', (l) => {
      let msg: { type?: string; message?: string };
      try {
        msg = JSON.parse(l);
      } catch {
        res.loadgenStderr.push(`(stdout) ${l}`);
        return;
      }
      if (msg.type === 'produce') {
        atProduced = b.stats();
        res.produce = msg as ProduceLine;
      } else if (msg.type === 'consume') {
        res.consume = msg as ConsumeLine;
      } else if (msg.type === 'error') {
        errors.push(msg.message ?? 'unknown error');
      }
    });
    const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
    const atEnd = broker.stats();
    const logLines = broker.output();
    const exit = await broker.stop();
    broker = undefined;
    const produced = atProduced ?? atEnd;
    res.broker = {
      cpuSeconds: atEnd.cpuSeconds,
      cpuSecondsStartup: atStart.cpuSeconds,
      cpuSecondsProduce: produced.cpuSeconds - atStart.cpuSeconds,
      cpuSecondsConsume: atEnd.cpuSeconds - produced.cpuSeconds,
      peakRssMb: atEnd.peakRssMb,
      rssMbAfterStartup: atStart.rssMb,
      exit,
      logLines,
    };
    if (code !== 0 || errors.length) {
      res.error = errors[0] ?? `loadgen exited with code ${code}: ${res.loadgenStderr.slice(-3).join(' | ')}`;
    } else if (exit.code !== 0) {
      res.error = `broker exited with code ${exit.code} (signal ${exit.signal}) on SIGTERM`;
    } else {
      res.ok = true;
    }
  } catch (e) {
    res.error = (e as Error).message;
  } finally {
    if (broker) await broker.stop().catch(() => undefined);
  }
  res.wallSeconds = Number(process.hrtime.bigint() - w0) / 1e9;
  return res;
}

// ---------------------------------------------------------------------------------------- reporting

function median(xs: number[]): number {
  const s = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (!s.length) return NaN;
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** The per-workload numbers the tables show: the median over the successful rounds. */
interface Summary {
  rounds: number;
  failed: number;
  recordsPerSec: number; mbPerSec: number; p50: number; p99: number; p999: number; maxMs: number;
  consumerMbPerSec: number; consumerRecordsPerSec: number;
  brokerCpuSeconds: number; peakRssMb: number; startupMs: number;
  produceSeconds: number; brokerCpuPctProduce: number; loadgenCpuPctProduce: number; brokerUsPerRecord: number;
  produceRequests: number; produceAvgKb: number; produceRttP50: number; produceRttP99: number; produceRttMax: number;
  maxAckGapMs: number;
  consumeSeconds: number; brokerCpuPctConsume: number; loadgenCpuPctConsume: number; fetchRequests: number; fetchAvgKb: number;
}

function summarize(rs: RoundResult[]): Summary {
  const ok = rs.filter((r) => r.ok && r.produce && r.consume && r.broker);
  const m = (f: (r: RoundResult) => number | undefined) => median(ok.map((r) => f(r) ?? NaN));
  return {
    rounds: rs.length,
    failed: rs.length - ok.length,
    recordsPerSec: m((r) => r.produce!.recordsPerSec),
    mbPerSec: m((r) => r.produce!.mbPerSec),
    p50: m((r) => r.produce!.latencyMs.p50),
    p99: m((r) => r.produce!.latencyMs.p99),
    p999: m((r) => r.produce!.latencyMs.p999),
    maxMs: m((r) => r.produce!.latencyMs.max),
    consumerMbPerSec: m((r) => r.consume!.mbPerSec),
    consumerRecordsPerSec: m((r) => r.consume!.recordsPerSec),
    brokerCpuSeconds: m((r) => r.broker!.cpuSeconds),
    peakRssMb: m((r) => r.broker!.peakRssMb),
    startupMs: m((r) => r.startupMs),
    produceSeconds: m((r) => r.produce!.seconds),
    brokerCpuPctProduce: m((r) => (100 * r.broker!.cpuSecondsProduce) / r.produce!.seconds),
    loadgenCpuPctProduce: m((r) => (100 * r.produce!.loadgenCpuSeconds) / r.produce!.seconds),
    brokerUsPerRecord: m((r) => (1e6 * r.broker!.cpuSecondsProduce) / r.produce!.records),
    produceRequests: m((r) => r.produce!.requests.count),
    produceAvgKb: m((r) => (r.produce!.requests.avgBytes ?? NaN) / 1024),
    produceRttP50: m((r) => r.produce!.requests.rttMs?.p50),
    produceRttP99: m((r) => r.produce!.requests.rttMs?.p99),
    produceRttMax: m((r) => r.produce!.requests.rttMs?.max),
    maxAckGapMs: m((r) => r.produce!.maxAckGapMs),
    consumeSeconds: m((r) => r.consume!.seconds),
    brokerCpuPctConsume: m((r) => (100 * r.broker!.cpuSecondsConsume) / r.consume!.totalSeconds),
    loadgenCpuPctConsume: m((r) => (100 * r.consume!.loadgenCpuSeconds) / r.consume!.totalSeconds),
    fetchRequests: m((r) => r.consume!.requests.count),
    fetchAvgKb: m((r) => (r.consume!.requests.avgBytes ?? NaN) / 1024),
  };
}

const fmtInt = (x: number) => (Number.isFinite(x) ? Math.round(x).toLocaleString('en-US') : '-');
const fmt = (x: number, d = 1) => (Number.isFinite(x) ? x.toFixed(d) : '-');
const fmtMs = (x: number) => (!Number.isFinite(x) ? '-' : x < 10 ? x.toFixed(2) : x < 100 ? x.toFixed(1) : x.toFixed(0));

function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join(' | ')} |`;
  const sep = `|${widths.map((w, i) => (i === 0 ? '-'.repeat(w + 2) : `${'-'.repeat(w + 1)}:`)).join('|')}|`;
  return [line(header), sep, ...rows.map(line)].join('\n');
}

// --------------------------------------------------------------------------------------------- main

interface Args { producers: number; cpuProf: boolean; snapshot: boolean; quick: boolean; rounds: number; only?: string[]; records?: number; target: string; out: string; timeout: number }

function parseArgs(argv: string[]): Args {
  const a: Args = { producers: 1, cpuProf: false, snapshot: true, quick: false, rounds: 1, target: 'fjord', out: path.join(ROOT, 'bench', 'results', 'latest.json'), timeout: 0 };
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i];
    const val = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${k} needs a value`);
      return v;
    };
    if (k === '--quick') a.quick = true;
    else if (k === '--no-snapshot') a.snapshot = false;
    else if (k === '--cpu-prof') a.cpuProf = true;
    else if (k === '--producers') a.producers = Math.max(1, parseInt(val(), 10));
    else if (k === '--rounds') a.rounds = Math.max(1, parseInt(val(), 10));
    else if (k === '--only') a.only = val().split(',');
    else if (k === '--records') a.records = parseInt(val(), 10);
    else if (k === '--target') a.target = val();
    else if (k === '--out') a.out = path.resolve(val());
    else if (k === '--timeout') a.timeout = parseInt(val(), 10);
    else if (k === '--help' || k === '-h') {
      console.log('npm run bench [-- --quick] [--rounds N] [--only KEY,...] [--records N] [--target fjord] [--producers N] [--no-snapshot] [--cpu-prof] [--out FILE] [--timeout SECONDS]');
      console.log(`workloads: ${WORKLOADS.map((w) => w.key).join(', ')}`);
      process.exit(0);
    } else throw new Error(`unknown option ${k} (try --help)`);
  }
  if (!a.timeout) a.timeout = a.quick ? 60 : 300;
  return a;
}

function goBuild(): string {
  const v = spawnSync('go', ['version'], { encoding: 'utf8' });
  if (v.error || v.status !== 0) throw new Error('bench needs Go (https://go.dev/dl/) to build bench/loadgen');
  const r = spawnSync('go', ['build', '-o', LOADGEN_BIN, '.'], { cwd: LOADGEN_DIR, stdio: 'inherit', env: { ...process.env, GOFLAGS: '-buildvcs=false' } });
  if (r.status !== 0) throw new Error(`go build in ${LOADGEN_DIR} failed (status ${r.status})`);
  return v.stdout.trim();
}

function gitRevision(): string {
  const rev = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).stdout?.trim() || 'unknown';
  const dirty = spawnSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: ROOT, encoding: 'utf8' }).stdout?.trim();
  return dirty ? `${rev}+dirty` : rev;
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const makeTarget = TARGETS[args.target];
  if (!makeTarget) throw new Error(`unknown --target ${args.target} (have: ${Object.keys(TARGETS).join(', ')})`);
  const target = makeTarget(args);
  disposers.push(() => target.dispose?.());
  const workloads = WORKLOADS.filter((w) => !args.only || args.only.includes(w.key));
  if (!workloads.length) throw new Error(`--only matched no workload (have: ${WORKLOADS.map((w) => w.key).join(', ')})`);

  const goVersion = goBuild();
  const load0 = os.loadavg();
  const mode = args.quick ? 'quick' : 'default';
  console.log(`bench: ${target.describe()}; loadgen franz-go (${goVersion}); ${os.cpus().length} CPUs; load average ${load0.map((x) => x.toFixed(2)).join(' ')}`);
  if (load0[0] > 1) console.log(`bench: warning: the machine is busy (1-minute load ${load0[0].toFixed(2)}); numbers will be noisy`);
  console.log(`bench: ${mode} run, ${args.rounds} round(s), ${workloads.length} workload(s), a fresh broker for each, ${args.producers} producing goroutine(s)`);

  const results = new Map<string, RoundResult[]>(workloads.map((w) => [w.key, []]));
  for (let round = 1; round <= args.rounds; round++) {
    for (const w of workloads) {
      const records = args.records ?? (args.quick ? w.quickRecords : w.records);
      process.stdout.write(`  round ${round}/${args.rounds} ${w.name}, ${fmtInt(records)} records ... `);
      const r = await runWorkload(target, w, records, round, args);
      results.get(w.key)!.push(r);
      console.log(r.ok
        ? `${fmtInt(r.produce!.recordsPerSec)} rec/s, p99 ${fmtMs(r.produce!.latencyMs.p99)} ms, consume ${fmt(r.consume!.mbPerSec)} MB/s (${r.wallSeconds.toFixed(1)} s)`
        : `FAILED: ${r.error}`);
    }
  }
  const load1 = os.loadavg();

  const summaries = workloads.map((w) => ({ w, s: summarize(results.get(w.key)!) }));
  const of = args.rounds > 1 ? ` (median of ${args.rounds} rounds)` : '';
  console.log(`\n### ${target.name}, ${mode}${of}\n`);
  console.log(table(
    ['workload', 'records/s', 'MB/s', 'p50 ms', 'p99 ms', 'p99.9 ms', 'consumer MB/s', 'broker CPU s', 'peak RSS MB', 'start-up ms'],
    summaries.map(({ w, s }) => s.failed === s.rounds
      ? [w.name, 'FAILED', ...Array(8).fill('-')]
      : [w.name, fmtInt(s.recordsPerSec), fmt(s.mbPerSec), fmtMs(s.p50), fmtMs(s.p99), fmtMs(s.p999),
        fmt(s.consumerMbPerSec), fmt(s.brokerCpuSeconds, 2), fmt(s.peakRssMb, 0), fmt(s.startupMs, 0)]),
  ));
  console.log('\nWhere the time goes. Produce phase, then consume phase. CPU: % of one core over the phase (the broker has');
  console.log('its main thread plus libuv/GC threads); broker µs/rec: broker CPU per record produced. RTT: Produce request round');
  console.log('trip seen by the client (up to 5 in flight, so it includes queueing at the broker). ack gap: the longest');
  console.log('time without any acknowledgement (stalls). consume s: from the first Fetch to the last record.\n');
  console.log(table(
    ['workload', 'produce s', 'broker CPU %', 'broker µs/rec', 'loadgen CPU %', 'Produce reqs', 'KB/req', 'RTT p50 ms', 'RTT p99 ms', 'RTT max ms', 'ack gap ms',
      'consume s', 'broker CPU %', 'loadgen CPU %', 'Fetch reqs', 'KB/fetch'],
    summaries.map(({ w, s }) => [w.name, fmt(s.produceSeconds, 2), fmt(s.brokerCpuPctProduce, 0), fmt(s.brokerUsPerRecord, 2), fmt(s.loadgenCpuPctProduce, 0),
      fmtInt(s.produceRequests), fmt(s.produceAvgKb), fmtMs(s.produceRttP50), fmtMs(s.produceRttP99), fmtMs(s.produceRttMax), fmtMs(s.maxAckGapMs),
      fmt(s.consumeSeconds, 2), fmt(s.brokerCpuPctConsume, 0), fmt(s.loadgenCpuPctConsume, 0), fmtInt(s.fetchRequests), fmt(s.fetchAvgKb, 0)]),
  ));
  console.log('\nMB = 2^20 bytes of record values. Latency: Produce call to its promise, per record, while producing flat out:');
  console.log('it includes the time a record waits in the client buffer (up to 32 MiB / 50,000 records), see the RTT columns for the broker.');

  const notes: string[] = [];
  for (const rs of results.values()) {
    for (const r of rs) {
      if (!r.ok) notes.push(`${r.workload} round ${r.round}: FAILED: ${r.error}`);
      if (r.broker?.logLines.length) notes.push(`${r.workload} round ${r.round}: broker logged ${r.broker.logLines.length} line(s), first: ${r.broker.logLines[0]}`);
      if (r.loadgenStderr.length) notes.push(`${r.workload} round ${r.round}: client logged ${r.loadgenStderr.length} line(s), first: ${r.loadgenStderr[0]}`);
      if (r.produce?.requests.errors || r.consume?.requests.errors) notes.push(`${r.workload} round ${r.round}: ${r.produce?.requests.errors ?? 0} Produce and ${r.consume?.requests.errors ?? 0} Fetch requests failed on the wire`);
    }
  }
  if (load1[0] > 0.5 + (args.quick ? 1 : 1.5)) notes.push(`load average at the end ${load1.map((x) => x.toFixed(2)).join(' ')}`);
  if (notes.length) console.log(`\nNotes:\n${notes.map((n) => `- ${n}`).join('\n')}`);

  fs.mkdirSync(path.dirname(args.out), { recursive: true });
  const producer = { linger: '5ms', batchBytes: 16384, maxInflight: 5, bufferBytes: 32 * MIB, bufferRecords: 50000,
    idempotent: 'with acks=all only', partitioner: 'sticky, switches every batch (UniformBytesPartitioner)' };
  fs.writeFileSync(args.out, `${JSON.stringify({
    target: target.name, describe: target.describe(), mode, rounds: args.rounds, date: new Date().toISOString(),
    git: gitRevision(), node: process.version, go: goVersion, cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model,
    loadavg: { start: load0, end: load1 }, producer: { ...producer, producers: args.producers },
    workloads: summaries.map(({ w, s }) => ({ ...w, median: s, rounds: results.get(w.key) })),
  }, null, 2)}\n`);
  console.log(`\nbench: results in ${path.relative(process.cwd(), args.out) || args.out}`);
  if (summaries.some(({ s }) => s.failed > 0)) process.exitCode = 1;
}

async function mainWithCleanup(): Promise<void> {
  try {
    await main();
  } finally {
    await disposeAll();
  }
}

const disposers: (() => Promise<void> | undefined)[] = [];
async function disposeAll(): Promise<void> {
  for (const d of disposers.splice(0)) await d();
}

mainWithCleanup().catch((e) => {
  console.error(`bench: ${(e as Error).message}`);
  process.exit(1);
});
