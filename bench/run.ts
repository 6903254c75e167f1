// `npm run bench`: Fjord and Apache Kafka side by side on this machine, driven by the same clients.
//
//   npm run bench [-- --quick] [--rounds N] [--only KEY,...] [--targets fjord,kafka] [--cpu-prof]
//                 [--no-snapshot] [--out FILE] [--md FILE]
//
// Targets: Fjord (`bin/fjord start`) and Apache Kafka 4.4 (compat/lib/apache-kafka.sh: a KRaft combined
// node from Maven Central artifacts, formatted before the clock starts), each a fresh process with a
// temporary data dir for every workload and round, each with its default durability (no fsync per
// message). Load: Kafka's own ProducerPerformance / ConsumerPerformance / EndToEndLatency (kafka-tools,
// one JVM each) and librdkafka (confluent-kafka, bench/rdkafka-load.py) as a second opinion.
//
// Each workload: start the broker (start-up = spawn to the first ApiVersions answered), a warm-up
// produce to another topic (so the JVM's JIT and Node's are both warm), create the topic, produce,
// consume it back. Broker CPU seconds (utime+stime of every thread, /proc/<pid>/stat) count from the
// end of the warm-up to the end of the workload; peak RSS is VmHWM over the broker's whole life.
// Rounds run the workloads in order, each Fjord then Kafka (A B A B), and every cell is the median.
//
// --cpu-prof: V8 CPU profiles of Fjord in <out dir>/profiles/ (bench/profile-top.ts reads them).
// --no-snapshot: run the tree's dist/ rather than a copy taken at the start (a rebuild during a long
// run would otherwise change the broker under test).
//
// Output: the markdown table on stdout and in --md (default bench/results/latest.md), everything
// (every round, raw tool output on failure) in --out (default bench/results/latest.json).
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import * as readline from 'node:readline';
import { procStats, type ProcStats } from './proc-stats';

const ROOT = path.resolve(__dirname, '..', '..'); // dist/bench/run.js -> repository root
const KAFKA_SH = path.join(ROOT, 'compat', 'lib', 'apache-kafka.sh');
const PYTHON = path.join(ROOT, 'compat', 'python', '.venv', 'bin', 'python');
const RDKAFKA_LOAD = path.join(ROOT, 'bench', 'rdkafka-load.py');

// ------------------------------------------------------------------------------------------ targets

export interface RunningTarget {
  bootstrap: string;
  pid: number;
  /** Spawn to the first ApiVersions answered. */
  startupMs: number;
  stats(): ProcStats;
  /** Lines the broker wrote on stdout/stderr so far. */
  output(): string[];
  /** Stops the broker and removes its data; resolves with how it exited. */
  stop(): Promise<{ code: number | null; signal: string | null }>;
}

export interface Target {
  name: string;
  describe(): string;
  /** label: names the run (workload and round), e.g. for profile files. */
  start(label: string): Promise<RunningTarget>;
  /** Frees what the target kept between starts. */
  dispose?(): void;
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
 * Spawns a broker process listening on `port` with its data in `dataDir` and waits until it answers
 * ApiVersions (startupMs counts from the spawn). stop() sends SIGTERM (SIGKILL after 30 s) and
 * removes dataDir.
 */
async function spawnBroker(name: string, cmd: string, args: string[], port: number, dataDir: string,
  env: NodeJS.ProcessEnv = process.env): Promise<RunningTarget> {
  const lines: string[] = [];
  const t0 = process.hrtime.bigint();
  const child = spawn(cmd, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  for (const s of [child.stdout!, child.stderr!]) readline.createInterface({ input: s }).on('line', (l) => lines.push(l));
  let exited: { code: number | null; signal: string | null } | undefined;
  const exitP = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve((exited = { code, signal }))));
  const stop = async () => {
    if (!exited) child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    const how = await exitP;
    clearTimeout(timer);
    await rm(dataDir, { recursive: true, force: true });
    return how;
  };
  let corr = 1;
  for (;;) {
    const fail = (why: string) => stop().then(() => new Error(`${name} ${why}: ${lines.slice(-20).join('\n')}`));
    if (exited) throw await fail(`exited while starting (code ${exited.code}, signal ${exited.signal})`);
    if (Number(process.hrtime.bigint() - t0) > 90e9) throw await fail('did not answer ApiVersions within 90 s');
    if (await apiVersionsOnce('127.0.0.1', port, corr++)) break;
    await sleep(2);
  }
  const startupMs = Number(process.hrtime.bigint() - t0) / 1e6;
  const pid = child.pid!;
  return { bootstrap: `127.0.0.1:${port}`, pid, startupMs, stats: () => procStats(pid), output: () => lines.slice(), stop };
}

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
 * Fjord: `bin/fjord start --log-level warn` on a free port and a temporary data dir, with Kafka's
 * group.initial.rebalance.delay.ms=0 as compat/lib/apache-kafka.sh sets it (ConsumerPerformance joins a
 * group; neither broker should make it wait 3 s).
 */
export function fjordTarget(opts: { snapshot: boolean; cpuProfDir?: string }): Target {
  let home: string | undefined = opts.snapshot ? snapshotFjord() : ROOT;
  return {
    name: 'fjord',
    describe: () => `Fjord (bin/fjord start${opts.snapshot ? ', a snapshot of dist/' : ''}${opts.cpuProfDir ? ', --cpu-prof' : ''}, Node ${process.version})`,
    dispose() {
      if (home && home !== ROOT) fs.rmSync(home, { recursive: true, force: true });
      home = undefined;
    },
    async start(label: string) {
      if (!home) throw new Error('fjord target already disposed');
      const nodeArgs = opts.cpuProfDir ? ['--cpu-prof', '--cpu-prof-dir', opts.cpuProfDir, '--cpu-prof-name', `${label}.cpuprofile`] : [];
      const port = await freePort();
      const dataDir = await mkdtemp(path.join(os.tmpdir(), 'fjord-bench-'));
      return spawnBroker('fjord', process.execPath, [...nodeArgs, path.join(home, 'bin', 'fjord'), 'start', '--port', String(port),
        '--data-dir', dataDir, '--log-level', 'warn', '--set', 'group.initial.rebalance.delay.ms=0'], port, dataDir,
      { ...process.env, NODE_PATH: path.join(ROOT, 'node_modules') });
    },
  };
}

/**
 * Apache Kafka: `apache-kafka.sh prepare` writes server.properties and formats the temporary data dir
 * (not timed: it is the install step Fjord does not have), then `apache-kafka.sh run` execs the JVM
 * (so the child's pid is the JVM's). Heap: the script's -Xms256m -Xmx768m.
 */
export function kafkaTarget(): Target {
  return {
    name: 'kafka',
    describe: () => 'Apache Kafka 4.4.0 (KRaft combined node, compat/lib/apache-kafka.sh, -Xms256m -Xmx768m, G1)',
    async start() {
      const port = await freePort();
      const dataDir = await mkdtemp(path.join(os.tmpdir(), 'kafka-bench-'));
      const prep = spawnSync(KAFKA_SH, ['prepare', String(port), String(port), dataDir], { encoding: 'utf8', timeout: 600_000 });
      if (prep.status !== 0) {
        await rm(dataDir, { recursive: true, force: true });
        throw new Error(`apache-kafka.sh prepare failed: ${prep.stderr}`);
      }
      return spawnBroker('kafka', KAFKA_SH, ['run', String(port), String(port), dataDir], port, dataDir);
    },
  };
}

// ------------------------------------------------------------------------------------ load generators

interface ProcOut { code: number | null; stdout: string[]; stderr: string[] }

/** Runs a command to its end, SIGKILLed after timeoutS; never rejects. */
function run(cmd: string, args: string[], timeoutS: number): Promise<ProcOut> {
  return new Promise((resolve) => {
    const out: ProcOut = { code: null, stdout: [], stderr: [] };
    const child = spawn(cmd, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    readline.createInterface({ input: child.stdout! }).on('line', (l) => out.stdout.push(l));
    readline.createInterface({ input: child.stderr! }).on('line', (l) => out.stderr.push(l));
    const timer = setTimeout(() => {
      out.stderr.push(`(killed after ${timeoutS} s)`);
      child.kill('SIGKILL');
    }, timeoutS * 1000);
    child.on('error', (e) => out.stderr.push(String(e)));
    child.on('close', (code) => {
      clearTimeout(timer);
      out.code = code;
      resolve(out);
    });
  });
}

class LoadError extends Error {
  constructor(what: string, out: ProcOut) {
    super(`${what} failed (exit ${out.code}): ${[...out.stdout, ...out.stderr].slice(-6).join(' | ')}`);
  }
}

const kafkaTool = (cls: string, args: string[], timeoutS: number) => run(KAFKA_SH, ['tool', `org.apache.kafka.tools.${cls}`, ...args], timeoutS);

async function createTopic(bootstrap: string, topic: string, partitions: number): Promise<void> {
  const out = await kafkaTool('TopicCommand', ['--bootstrap-server', bootstrap, '--create', '--topic', topic,
    '--partitions', String(partitions), '--replication-factor', '1'], 60);
  if (out.code !== 0) throw new LoadError(`creating ${topic}`, out);
}

interface ProduceResult { records: number; recordsPerSec: number; mbPerSec: number; p50: number; p99: number; p999: number }

/** ProducerPerformance, flat out (--throughput -1); the Java producer's defaults except acks and compression. */
async function producerPerformance(bootstrap: string, topic: string, records: number, size: number, acks: string, compression: string): Promise<ProduceResult> {
  const out = await kafkaTool('ProducerPerformance', ['--topic', topic, '--num-records', String(records), '--record-size', String(size),
    '--throughput', '-1', '--producer-props', `bootstrap.servers=${bootstrap}`, `acks=${acks}`, `compression.type=${compression}`], 600);
  // "N records sent, R records/sec (M MB/sec), A ms avg latency, X ms max latency, P ms 50th, P ms 95th, P ms 99th, P ms 99.9th."
  const last = out.stdout.find((l) => / records sent, .* 99\.9th\./.test(l));
  const m = last && /^(\d+) records sent, ([\d.]+) records\/sec \(([\d.]+) MB\/sec\).* (\d+) ms 50th, \d+ ms 95th, (\d+) ms 99th, (\d+) ms 99\.9th/.exec(last);
  if (out.code !== 0 || !m) throw new LoadError('ProducerPerformance', out);
  return { records: +m[1], recordsPerSec: +m[2], mbPerSec: +m[3], p50: +m[4], p99: +m[5], p999: +m[6] };
}

/** ConsumerPerformance (subscribes with a fresh group); MB/s over the fetch time, without the group join. */
async function consumerPerformance(bootstrap: string, topic: string, records: number): Promise<{ mbPerSec: number; recordsPerSec: number }> {
  const out = await kafkaTool('ConsumerPerformance', ['--bootstrap-server', bootstrap, '--topic', topic, '--messages', String(records),
    '--timeout', '60000', '--group', `bench-${topic}`], 600);
  // start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec
  const row = out.stdout.find((l) => /^\d{4}-/.test(l))?.split(',').map((s) => s.trim());
  if (out.code !== 0 || !row || Number(row[4]) < records) throw new LoadError('ConsumerPerformance', out);
  return { mbPerSec: +row[8], recordsPerSec: +row[9] };
}

/** EndToEndLatency: one record at a time, produced (acks=1) and consumed before the next is sent. */
async function endToEndLatency(bootstrap: string, topic: string, records: number, size: number): Promise<{ avg: number; p50: number; p99: number; p999: number }> {
  const out = await kafkaTool('EndToEndLatency', [bootstrap, topic, String(records), '1', String(size)], 300);
  const avg = out.stdout.map((l) => /^Avg latency: ([\d.]+) ms/.exec(l)).find(Boolean);
  const p = out.stdout.map((l) => /^Percentiles: 50th = (\d+), 99th = (\d+), 99.9th = (\d+)/.exec(l)).find(Boolean);
  if (out.code !== 0 || !avg || !p) throw new LoadError('EndToEndLatency', out);
  return { avg: +avg[1], p50: +p[1], p99: +p[2], p999: +p[3] };
}

/** bench/rdkafka-load.py MODE ARGS...: its one JSON line. */
async function rdkafka<T>(mode: string, args: (string | number)[]): Promise<T> {
  const out = await run(PYTHON, [RDKAFKA_LOAD, mode, ...args.map(String)], 600);
  const line = out.stdout.find((l) => l.startsWith('{'));
  if (out.code !== 0 || !line) throw new LoadError(`rdkafka-load.py ${mode}`, out);
  return JSON.parse(line) as T;
}

// ---------------------------------------------------------------------------------------- workloads

/**
 * The matrix: each dimension of issue 7 varied once against a baseline (1 KB, acks=1, uncompressed,
 * 6 partitions, one producer), not the full cross product (64 cells, hours): 100 B on one partition is
 * the per-record cost at its worst; acks=all (idempotent, the Java default), lz4 and three producers
 * each change one thing; the baseline writes a 1 GiB backlog that the consumer reads back; librdkafka
 * repeats the baseline; latency is measured on its own, far below saturation.
 */
interface Workload {
  key: string;
  name: string;
  client: 'java' | 'rdkafka';
  size: number;
  partitions: number;
  acks: '1' | 'all';
  compression: 'none' | 'lz4';
  producers: number;
  /** Records produced in all (split between the producers); with --quick. */
  records: number;
  quickRecords: number;
  /** Only end-to-end latency: EndToEndLatency (records round trips) and librdkafka at e2eRate for e2eSeconds. */
  e2e?: { rate: number; seconds: number; quickSeconds: number };
  inQuick: boolean;
}

const base = { client: 'java', size: 1024, partitions: 6, acks: '1', compression: 'none', producers: 1, inQuick: false } as const;
const WORKLOADS: Workload[] = [
  { ...base, key: '100B-p1', name: '100 B, 1 partition', size: 100, partitions: 1, records: 3_000_000, quickRecords: 300_000, inQuick: true },
  { ...base, key: '1KB-1GB', name: '1 KB (1 GiB backlog)', records: 1_048_576, quickRecords: 100_000 },
  { ...base, key: '1KB-acksall', name: '1 KB, acks=all', acks: 'all', records: 600_000, quickRecords: 100_000, inQuick: true },
  { ...base, key: '1KB-lz4', name: '1 KB, lz4', compression: 'lz4', records: 600_000, quickRecords: 100_000 },
  { ...base, key: '1KB-3prod', name: '1 KB, 3 producers', producers: 3, records: 600_000, quickRecords: 150_000 },
  { ...base, key: 'rdkafka-1KB', name: 'librdkafka: 1 KB', client: 'rdkafka', records: 400_000, quickRecords: 100_000 },
  { ...base, key: 'e2e', name: 'end-to-end, 100 B', size: 100, partitions: 1, records: 10_000, quickRecords: 2_000,
    e2e: { rate: 1000, seconds: 10, quickSeconds: 3 }, inQuick: true },
];

interface Metrics {
  recordsPerSec?: number; mbPerSec?: number; p50?: number; p99?: number; p999?: number;
  consumerMbPerSec?: number;
  /** EndToEndLatency (ms, as the tool prints them: whole milliseconds but the average). */
  e2eAvg?: number; e2eP50?: number; e2eP99?: number;
  /** librdkafka at a fixed rate (sub-millisecond). */
  e2eRdP50?: number; e2eRdP99?: number; e2eRdP999?: number;
  cpuSeconds: number; peakRssMb: number; startupMs: number;
}

interface RoundResult {
  workload: string; target: string; round: number; ok: boolean; error?: string;
  metrics?: Metrics; brokerLog?: string[]; wallSeconds: number;
}

async function measure(b: RunningTarget, w: Workload, quick: boolean): Promise<Omit<Metrics, 'cpuSeconds' | 'peakRssMb' | 'startupMs'>> {
  const records = quick ? w.quickRecords : w.records;
  const topic = `bench-${w.key}`;
  if (w.e2e) {
    const tool = await endToEndLatency(b.bootstrap, topic, records, w.size);
    const rdTopic = `${topic}-rdkafka`;
    await createTopic(b.bootstrap, rdTopic, 1);
    const rd = await rdkafka<{ latencyMs: { p50: number; p99: number; p999: number } }>('e2e', [b.bootstrap, rdTopic, w.e2e.rate, quick ? w.e2e.quickSeconds : w.e2e.seconds, w.size]);
    return { e2eAvg: tool.avg, e2eP50: tool.p50, e2eP99: tool.p99, e2eRdP50: rd.latencyMs.p50, e2eRdP99: rd.latencyMs.p99, e2eRdP999: rd.latencyMs.p999 };
  }
  await createTopic(b.bootstrap, topic, w.partitions);
  if (w.client === 'rdkafka') {
    const p = await rdkafka<{ records: number; recordsPerSec: number; mbPerSec: number; latencyMs: { p50: number; p99: number; p999: number } }>(
      'produce', [b.bootstrap, topic, records, w.size, w.acks, w.compression]);
    const c = await rdkafka<{ records: number; mbPerSec: number }>('consume', [b.bootstrap, topic, records]);
    if (p.records !== records || c.records !== records) throw new Error(`librdkafka produced ${p.records} and consumed ${c.records} of ${records}`);
    return { recordsPerSec: p.recordsPerSec, mbPerSec: p.mbPerSec, ...p.latencyMs, consumerMbPerSec: c.mbPerSec };
  }
  const each = Math.floor(records / w.producers);
  const ps = await Promise.all(Array.from({ length: w.producers }, () => producerPerformance(b.bootstrap, topic, each, w.size, w.acks, w.compression)));
  const c = await consumerPerformance(b.bootstrap, topic, each * w.producers);
  const sum = (f: (p: ProduceResult) => number) => ps.reduce((a, p) => a + f(p), 0);
  const worst = (f: (p: ProduceResult) => number) => Math.max(...ps.map(f));
  // Producers run side by side: throughputs add up; latency is the slowest producer's.
  return { recordsPerSec: sum((p) => p.recordsPerSec), mbPerSec: sum((p) => p.mbPerSec),
    p50: worst((p) => p.p50), p99: worst((p) => p.p99), p999: worst((p) => p.p999), consumerMbPerSec: c.mbPerSec };
}

async function runOnce(target: Target, w: Workload, round: number, args: Args): Promise<RoundResult> {
  const t0 = Date.now();
  const res: RoundResult = { workload: w.key, target: target.name, round, ok: false, wallSeconds: 0 };
  let b: RunningTarget | undefined;
  try {
    b = await target.start(`${w.key}-r${round}`);
    await createTopic(b.bootstrap, 'bench-warmup', w.partitions);
    await producerPerformance(b.bootstrap, 'bench-warmup', args.quick ? 50_000 : 200_000, 1024, w.acks, w.compression);
    const before = b.stats();
    const m = await measure(b, w, args.quick);
    const after = b.stats();
    res.metrics = { ...m, cpuSeconds: after.cpuSeconds - before.cpuSeconds, peakRssMb: after.peakRssMb, startupMs: b.startupMs };
    res.ok = true;
  } catch (e) {
    res.error = (e as Error).message;
  } finally {
    if (b) {
      res.brokerLog = b.output().slice(-50);
      const how = await b.stop();
      if (res.ok && how.code !== 0 && how.code !== 143) {
        res.ok = false;
        res.error = `broker exited with code ${how.code} (signal ${how.signal}) on SIGTERM`;
      }
    }
  }
  res.wallSeconds = (Date.now() - t0) / 1000;
  return res;
}

// ---------------------------------------------------------------------------------------- reporting

function median(xs: number[]): number {
  const s = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (!s.length) return NaN;
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

type MetricKey = keyof Metrics;
const METRIC_KEYS: MetricKey[] = ['recordsPerSec', 'mbPerSec', 'p50', 'p99', 'p999', 'consumerMbPerSec', 'e2eAvg', 'e2eP50', 'e2eP99',
  'e2eRdP50', 'e2eRdP99', 'e2eRdP999', 'cpuSeconds', 'peakRssMb', 'startupMs'];

function summarize(rs: RoundResult[]): Partial<Record<MetricKey, number>> {
  const ok = rs.filter((r) => r.ok);
  const out: Partial<Record<MetricKey, number>> = {};
  for (const k of METRIC_KEYS) {
    const v = median(ok.map((r) => r.metrics?.[k] ?? NaN));
    if (Number.isFinite(v)) out[k] = v;
  }
  return out;
}

const fmtNum = (x: number | undefined, d: number) => (x === undefined ? '-' : x >= 1000 ? Math.round(x).toLocaleString('en-US') : x.toFixed(d));

/** "Fjord / Kafka (ratio)" for one metric; the ratio is Fjord/Kafka whichever way is better. */
function cell(f: number | undefined, k: number | undefined, d = 1): string {
  if (f === undefined && k === undefined) return '';
  const ratio = f !== undefined && k !== undefined && f > 0 && k > 0 ? ` (${(f / k).toFixed(2)})` : '';
  return `${fmtNum(f, d)} / ${fmtNum(k, d)}${ratio}`;
}

function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join(' | ')} |`;
  const sep = `|${widths.map((w, i) => (i === 0 ? '-'.repeat(w + 2) : `${'-'.repeat(w + 1)}:`)).join('|')}|`;
  return [line(header), sep, ...rows.map(line)].join('\n');
}

type Summaries = Map<string, Record<string, Partial<Record<MetricKey, number>>>>;

function markdown(workloads: Workload[], s: Summaries, targets: string[]): string {
  const [a, b] = [targets[0], targets[1] ?? targets[0]];
  const rows = workloads.flatMap((w) => {
    const f = s.get(w.key)![a] ?? {};
    const k = s.get(w.key)![b] ?? {};
    const c = (key: MetricKey, d = 1) => cell(f[key], k[key], d);
    const broker = [c('cpuSeconds', 2), c('peakRssMb', 0), c('startupMs', 0)];
    if (!w.e2e) {
      return [[w.name, c('recordsPerSec', 0), c('mbPerSec'), c('p50', 0), c('p99', 0), c('p999', 0), c('consumerMbPerSec'), ...broker]];
    }
    // One broker run, two clients: librdkafka at a fixed rate, then Kafka's tool (whole milliseconds).
    return [
      [`${w.name}, librdkafka ${w.e2e.rate.toLocaleString('en-US')}/s`, '', '', c('e2eRdP50', 2), c('e2eRdP99', 2), c('e2eRdP999', 2), '', ...broker],
      [`${w.name}, EndToEndLatency`, '', '', c('e2eP50', 0), c('e2eP99', 0), '', '', '', '', ''],
    ];
  });
  return table(['workload', 'records/s', 'MB/s', 'p50 ms', 'p99 ms', 'p99.9 ms', 'consumer MB/s', 'broker CPU s', 'peak RSS MB', 'start-up ms'], rows);
}

// --------------------------------------------------------------------------------------------- main

interface Args { quick: boolean; rounds: number; only?: string[]; targets: string[]; cpuProf: boolean; snapshot: boolean; out: string; md: string }

function parseArgs(argv: string[]): Args {
  const results = path.join(ROOT, 'bench', 'results');
  const a: Args = { quick: false, rounds: 0, targets: ['fjord', 'kafka'], cpuProf: false, snapshot: true,
    out: path.join(results, 'latest.json'), md: path.join(results, 'latest.md') };
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i];
    const val = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${k} needs a value`);
      return v;
    };
    if (k === '--quick') a.quick = true;
    else if (k === '--rounds') a.rounds = Math.max(1, parseInt(val(), 10));
    else if (k === '--only') a.only = val().split(',');
    else if (k === '--targets') a.targets = val().split(',');
    else if (k === '--cpu-prof') a.cpuProf = true;
    else if (k === '--no-snapshot') a.snapshot = false;
    else if (k === '--out') a.out = path.resolve(val());
    else if (k === '--md') a.md = path.resolve(val());
    else if (k === '--help' || k === '-h') {
      console.log('npm run bench [-- --quick] [--rounds N] [--only KEY,...] [--targets fjord,kafka] [--cpu-prof] [--no-snapshot] [--out FILE] [--md FILE]');
      console.log(`workloads: ${WORKLOADS.map((w) => w.key).join(', ')}`);
      process.exit(0);
    } else throw new Error(`unknown option ${k} (try --help)`);
  }
  if (!a.rounds) a.rounds = a.quick ? 1 : 3;
  return a;
}

function gitRevision(): string {
  const rev = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).stdout?.trim() || 'unknown';
  const dirty = spawnSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: ROOT, encoding: 'utf8' }).stdout?.trim();
  return dirty ? `${rev}+dirty` : rev;
}

async function main(targets: Target[], args: Args): Promise<void> {
  const t0 = Date.now();
  const git = gitRevision(); // of what the snapshot was taken from, before anyone edits the tree
  const workloads = WORKLOADS.filter((w) => (args.only ? args.only.includes(w.key) : !args.quick || w.inQuick));
  if (!workloads.length) throw new Error(`--only matched no workload (have: ${WORKLOADS.map((w) => w.key).join(', ')})`);
  if (!fs.existsSync(PYTHON)) throw new Error(`bench needs ${PYTHON} (compat/python/requirements.txt: confluent-kafka)`);
  for (const what of ['fetch', 'fetch-tools']) {
    const r = spawnSync(KAFKA_SH, [what], { stdio: 'inherit', timeout: 900_000 });
    if (r.status !== 0) throw new Error(`apache-kafka.sh ${what} failed`);
  }
  const load0 = os.loadavg();
  const mode = args.quick ? 'quick' : 'full';
  console.log(`bench: ${targets.map((t) => t.describe()).join(' vs ')}`);
  console.log(`bench: ${mode} run, ${args.rounds} round(s), ${workloads.length} workload(s); ${os.cpus().length} CPUs, load average ${load0.map((x) => x.toFixed(2)).join(' ')}`);
  if (load0[0] > 1) console.log(`bench: warning: the machine is busy (1-minute load ${load0[0].toFixed(2)}); numbers will be noisy`);

  const results: RoundResult[] = [];
  for (let round = 1; round <= args.rounds; round++) {
    for (const w of workloads) {
      for (const target of targets) {
        process.stdout.write(`  round ${round}/${args.rounds} ${w.name} on ${target.name} ... `);
        const r = await runOnce(target, w, round, args);
        results.push(r);
        const m = r.metrics;
        console.log(!r.ok ? `FAILED: ${r.error}` : w.e2e
          ? `e2e p50 ${m!.e2eP50} ms p99 ${m!.e2eP99} ms (tool), p50 ${m!.e2eRdP50?.toFixed(2)} ms p99 ${m!.e2eRdP99?.toFixed(2)} ms (librdkafka) (${r.wallSeconds.toFixed(0)} s)`
          : `${fmtNum(m!.recordsPerSec, 0)} rec/s, ${m!.mbPerSec?.toFixed(1)} MB/s, p99 ${m!.p99} ms, consumer ${m!.consumerMbPerSec?.toFixed(1)} MB/s, CPU ${m!.cpuSeconds.toFixed(1)} s, RSS ${m!.peakRssMb.toFixed(0)} MB, start-up ${m!.startupMs.toFixed(0)} ms (${r.wallSeconds.toFixed(0)} s)`);
      }
    }
  }
  const load1 = os.loadavg();
  const durationS = (Date.now() - t0) / 1000;
  const summaries: Summaries = new Map(workloads.map((w) => [w.key,
    Object.fromEntries(targets.map((t) => [t.name, summarize(results.filter((r) => r.workload === w.key && r.target === t.name))]))]));

  const md = [
    `${targets.map((t) => t.name).join(' / ')}${targets.length > 1 ? ' (ratio)' : ''}, ${mode} run, median of ${args.rounds} round(s), ${new Date().toISOString().slice(0, 10)}, git ${git}, ` +
      `${os.cpus().length}x ${os.cpus()[0]?.model.trim()}, load average ${load0[0].toFixed(2)} -> ${load1[0].toFixed(2)}, ${Math.round(durationS)} s`,
    '',
    markdown(workloads, summaries, targets.map((t) => t.name)),
  ].join('\n');
  console.log(`\n${md}\n`);
  const failed = results.filter((r) => !r.ok);
  for (const r of failed) console.log(`- ${r.workload} on ${r.target}, round ${r.round}: FAILED: ${r.error}`);

  fs.mkdirSync(path.dirname(args.out), { recursive: true });
  fs.writeFileSync(args.md, `${md}\n`);
  fs.writeFileSync(args.out, `${JSON.stringify({
    mode, rounds: args.rounds, date: new Date().toISOString(), git, durationSeconds: durationS,
    targets: targets.map((t) => ({ name: t.name, describe: t.describe() })), node: process.version,
    cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model, loadavg: { start: load0, end: load1 },
    workloads: workloads.map((w) => ({ ...w, median: summaries.get(w.key), rounds: results.filter((r) => r.workload === w.key) })),
  }, null, 2)}\n`);
  console.log(`bench: ${Math.round(durationS)} s; table in ${path.relative(process.cwd(), args.md)}, every round in ${path.relative(process.cwd(), args.out)}`);
  if (failed.length) process.exitCode = 1;
}

const args = parseArgs(process.argv.slice(2));
const factories: Record<string, () => Target> = {
  fjord: () => fjordTarget({ snapshot: args.snapshot, cpuProfDir: args.cpuProf ? path.join(path.dirname(args.out), 'profiles') : undefined }),
  kafka: kafkaTarget,
};
const unknown = args.targets.find((t) => !factories[t]);
if (unknown) throw new Error(`unknown target ${unknown} (have: ${Object.keys(factories).join(', ')})`);
const targets = args.targets.map((t) => factories[t]());
const disposeAll = () => targets.forEach((t) => t.dispose?.());
process.once('SIGINT', () => {
  disposeAll();
  process.exit(130);
});
main(targets, args)
  .catch((e) => {
    console.error(`bench: ${(e as Error).message}`);
    process.exitCode = 1;
  })
  .finally(disposeAll);
