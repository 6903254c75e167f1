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
// The TLS row runs the baseline over TLS: each broker gets an SSL listener (a PEM key store from
// certificates made for the run, test/helpers/certs.ts) and the Java tools connect to it with
// security.protocol=SSL, trusting the run's CA (--command-config).
//
// The cluster row (`--only cluster`; not in --quick's set: `--quick --only cluster` is its short form)
// runs on three brokers of each (bench/targets.ts startCluster): Fjord's on one etcd, Kafka's a KRaft
// cluster of combined nodes. Its CPU and peak RSS are the sums over the cluster's processes (Fjord's
// with etcd's); start-up runs to every broker in the metadata.
//
// The share row (issue 17) reads the 1 KB baseline back with a share group of three KafkaShareConsumers (Kafka's
// ShareConsumerPerformance) instead of a consumer group: records/s acknowledged, all three together.
//
// --cpu-prof: V8 CPU profiles of Fjord in <out dir>/profiles/ (bench/profile-top.ts reads them).
// --no-snapshot: run the tree's dist/ rather than a copy taken at the start (a rebuild during a long
// run would otherwise change the broker under test).
//
// Output: the markdown table on stdout and in --md (default bench/results/latest.md), everything
// (every round, raw tool output on failure) in --out (default bench/results/latest.json).
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as readline from 'node:readline';
import { makeCertificates } from '../test/helpers/certs';
import { fjordTarget, kafkaTarget, KAFKA_SH, ROOT, type RunningTarget, type Target, type TlsListener } from './targets';

const PYTHON = path.join(ROOT, 'compat', 'python', '.venv', 'bin', 'python');
const RDKAFKA_LOAD = path.join(ROOT, 'bench', 'rdkafka-load.py');

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

/** Where Kafka's tools connect: a bootstrap list and, over TLS, a client properties file (their --command-config). */
interface Endpoint { bootstrap: string; clientConfig?: string }

const commandConfig = (to: Endpoint) => (to.clientConfig ? ['--command-config', to.clientConfig] : []);

/** A topic of `partitions` on one broker, or (a cluster workload) replicated on every broker, with its min.insync.replicas. */
async function createTopic(to: Endpoint, topic: string, partitions: number, cluster?: Workload['cluster']): Promise<void> {
  const replication = cluster ? [String(cluster.brokers), '--config', `min.insync.replicas=${cluster.minInsyncReplicas}`] : ['1'];
  const out = await kafkaTool('TopicCommand', ['--bootstrap-server', to.bootstrap, ...commandConfig(to), '--create', '--topic', topic,
    '--partitions', String(partitions), '--replication-factor', ...replication], 60);
  if (out.code !== 0) throw new LoadError(`creating ${topic}`, out);
}

interface ProduceResult { records: number; recordsPerSec: number; mbPerSec: number; p50: number; p99: number; p999: number }

/**
 * ProducerPerformance, flat out (throughput -1) unless given records/s; the Java producer's defaults except
 * acks and compression.
 */
async function producerPerformance(to: Endpoint, topic: string, records: number, size: number, acks: string, compression: string,
  throughput = -1): Promise<ProduceResult> {
  const out = await kafkaTool('ProducerPerformance', ['--topic', topic, '--num-records', String(records), '--record-size', String(size),
    '--throughput', String(throughput), ...commandConfig(to), '--producer-props', `bootstrap.servers=${to.bootstrap}`, `acks=${acks}`,
    `compression.type=${compression}`], 600);
  // "N records sent, R records/sec (M MB/sec), A ms avg latency, X ms max latency, P ms 50th, P ms 95th, P ms 99th, P ms 99.9th."
  const last = out.stdout.find((l) => / records sent, .* 99\.9th\./.test(l));
  const m = last && /^(\d+) records sent, ([\d.]+) records\/sec \(([\d.]+) MB\/sec\).* (\d+) ms 50th, \d+ ms 95th, (\d+) ms 99th, (\d+) ms 99\.9th/.exec(last);
  if (out.code !== 0 || !m) throw new LoadError('ProducerPerformance', out);
  return { records: +m[1], recordsPerSec: +m[2], mbPerSec: +m[3], p50: +m[4], p99: +m[5], p999: +m[6] };
}

/** ConsumerPerformance (subscribes with a fresh group); MB/s over the fetch time, without the group join. */
async function consumerPerformance(to: Endpoint, topic: string, records: number): Promise<{ mbPerSec: number; recordsPerSec: number }> {
  const out = await kafkaTool('ConsumerPerformance', ['--bootstrap-server', to.bootstrap, ...commandConfig(to), '--topic', topic, '--messages', String(records),
    '--timeout', '60000', '--group', `bench-${topic}`], 600);
  // start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec
  const row = out.stdout.find((l) => /^\d{4}-/.test(l))?.split(',').map((s) => s.trim());
  if (out.code !== 0 || !row || Number(row[4]) < records) throw new LoadError('ConsumerPerformance', out);
  return { mbPerSec: +row[8], recordsPerSec: +row[9] };
}

/**
 * A share group's records/s: Kafka's ShareConsumerPerformance (kafka-share-consumer-perf-test) with `consumers`
 * KafkaShareConsumers in one share group (--threads), each acknowledging implicitly (every record of a poll accepted
 * with the next poll), after kafka-configs has set the group's share.auto.offset.reset to earliest (a share group
 * starts at the latest offset by default, so the backlog would not be read). Records/s and MB/s over the whole run.
 */
async function shareConsumerPerformance(to: Endpoint, topic: string, records: number, consumers: number): Promise<{ recordsPerSec: number; mbPerSec: number }> {
  const group = `bench-share-${topic}`;
  const config = await kafkaTool('ConfigCommand', ['--bootstrap-server', to.bootstrap, ...commandConfig(to), '--alter', '--entity-type', 'groups',
    '--entity-name', group, '--add-config', 'share.auto.offset.reset=earliest'], 60);
  if (config.code !== 0) throw new LoadError(`kafka-configs share.auto.offset.reset=earliest on ${group}`, config);
  const out = await kafkaTool('ShareConsumerPerformance', ['--bootstrap-server', to.bootstrap, ...commandConfig(to), '--topic', topic,
    '--group', group, '--num-records', String(records), '--threads', String(consumers), '--timeout', '60000'], 600);
  // start.time, end.time, data.consumed.in.MB, MB.sec, nMsg.sec, data.consumed.in.nMsg, fetch.time.ms
  const row = out.stdout.find((l) => /^\d{4}-/.test(l))?.split(',').map((x) => x.trim());
  if (out.code !== 0 || !row || Number(row[5]) < records) throw new LoadError('ShareConsumerPerformance', out);
  return { mbPerSec: +row[3], recordsPerSec: +row[4] };
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
 * repeats the baseline; latency is measured on its own, far below saturation. The cluster row (issue 13)
 * is the acks=all row again on three brokers of each, every partition on all three (RF=3,
 * min.insync.replicas=2): what replication costs each. The TLS row (issue 16) is the baseline over TLS
 * (in --quick with half the records of the others, to keep it short): what encryption costs each.
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
  /**
   * On a cluster of `brokers` (Target.startCluster), its topics replicated on every broker. Flat out, the
   * producer's latency is mostly its own queue; so the acknowledgement latency is measured again at
   * ackRate records/s for ackSeconds (quickAckSeconds), far below saturation.
   */
  cluster?: { brokers: number; minInsyncReplicas: number; ackRate: number; ackSeconds: number; quickAckSeconds: number };
  /** Produced and consumed over TLS (warm-up and topic creation too): an SSL listener on each broker (Target.start's tls). */
  tls?: boolean;
  /** Read back by a share group of `consumers` share consumers (ShareConsumerPerformance) instead of ConsumerPerformance. */
  share?: { consumers: number };
  inQuick: boolean;
}

const base = { client: 'java', size: 1024, partitions: 6, acks: '1', compression: 'none', producers: 1, inQuick: false } as const;
const WORKLOADS: Workload[] = [
  { ...base, key: '100B-p1', name: '100 B, 1 partition', size: 100, partitions: 1, records: 3_000_000, quickRecords: 300_000, inQuick: true },
  { ...base, key: '1KB-1GB', name: '1 KB (1 GiB backlog)', records: 1_048_576, quickRecords: 100_000 },
  { ...base, key: '1KB-acksall', name: '1 KB, acks=all', acks: 'all', records: 600_000, quickRecords: 100_000, inQuick: true },
  { ...base, key: '1KB-lz4', name: '1 KB, lz4', compression: 'lz4', records: 600_000, quickRecords: 100_000 },
  { ...base, key: '1KB-3prod', name: '1 KB, 3 producers', producers: 3, records: 600_000, quickRecords: 150_000 },
  { ...base, key: 'tls-1KB', name: '1 KB over TLS', tls: true, records: 600_000, quickRecords: 50_000, inQuick: true },
  { ...base, key: 'share-1KB', name: '1 KB, share group', share: { consumers: 3 }, records: 300_000, quickRecords: 50_000, inQuick: true },
  { ...base, key: 'rdkafka-1KB', name: 'librdkafka: 1 KB', client: 'rdkafka', records: 400_000, quickRecords: 100_000 },
  { ...base, key: 'e2e', name: 'end-to-end, 100 B', size: 100, partitions: 1, records: 10_000, quickRecords: 2_000,
    e2e: { rate: 1000, seconds: 10, quickSeconds: 3 }, inQuick: true },
  { ...base, key: 'cluster', name: '3 brokers: 1 KB, acks=all, RF=3, min ISR 2', acks: 'all', records: 600_000, quickRecords: 100_000,
    cluster: { brokers: 3, minInsyncReplicas: 2, ackRate: 1000, ackSeconds: 20, quickAckSeconds: 5 } },
];

interface Metrics {
  recordsPerSec?: number; mbPerSec?: number; p50?: number; p99?: number; p999?: number;
  consumerMbPerSec?: number;
  /** A share group's consumption (ShareConsumerPerformance): records/s, all its consumers together. */
  shareRecordsPerSec?: number;
  /** EndToEndLatency (ms, as the tool prints them: whole milliseconds but the average). */
  e2eAvg?: number; e2eP50?: number; e2eP99?: number;
  /** librdkafka at a fixed rate (sub-millisecond). */
  e2eRdP50?: number; e2eRdP99?: number; e2eRdP999?: number;
  /** A cluster's acknowledgement latency at a fixed rate (ProducerPerformance, whole milliseconds). */
  ackP50?: number; ackP99?: number; ackP999?: number;
  cpuSeconds: number; peakRssMb: number; startupMs: number;
}

interface RoundResult {
  workload: string; target: string; round: number; ok: boolean; error?: string;
  metrics?: Metrics; brokerLog?: string[]; wallSeconds: number;
}

async function measure(to: Endpoint, w: Workload, quick: boolean): Promise<Omit<Metrics, 'cpuSeconds' | 'peakRssMb' | 'startupMs'>> {
  const records = quick ? w.quickRecords : w.records;
  const topic = `bench-${w.key}`;
  if (w.e2e) {
    const tool = await endToEndLatency(to.bootstrap, topic, records, w.size);
    const rdTopic = `${topic}-rdkafka`;
    await createTopic(to, rdTopic, 1);
    const rd = await rdkafka<{ latencyMs: { p50: number; p99: number; p999: number } }>('e2e', [to.bootstrap, rdTopic, w.e2e.rate, quick ? w.e2e.quickSeconds : w.e2e.seconds, w.size]);
    return { e2eAvg: tool.avg, e2eP50: tool.p50, e2eP99: tool.p99, e2eRdP50: rd.latencyMs.p50, e2eRdP99: rd.latencyMs.p99, e2eRdP999: rd.latencyMs.p999 };
  }
  await createTopic(to, topic, w.partitions, w.cluster);
  if (w.client === 'rdkafka') {
    const p = await rdkafka<{ records: number; recordsPerSec: number; mbPerSec: number; latencyMs: { p50: number; p99: number; p999: number } }>(
      'produce', [to.bootstrap, topic, records, w.size, w.acks, w.compression]);
    const c = await rdkafka<{ records: number; mbPerSec: number }>('consume', [to.bootstrap, topic, records]);
    if (p.records !== records || c.records !== records) throw new Error(`librdkafka produced ${p.records} and consumed ${c.records} of ${records}`);
    return { recordsPerSec: p.recordsPerSec, mbPerSec: p.mbPerSec, ...p.latencyMs, consumerMbPerSec: c.mbPerSec };
  }
  const each = Math.floor(records / w.producers);
  const ps = await Promise.all(Array.from({ length: w.producers }, () => producerPerformance(to, topic, each, w.size, w.acks, w.compression)));
  if (w.share) {
    const share = await shareConsumerPerformance(to, topic, each * w.producers, w.share.consumers);
    return { recordsPerSec: ps[0].recordsPerSec, mbPerSec: ps[0].mbPerSec, p50: ps[0].p50, p99: ps[0].p99, p999: ps[0].p999,
      consumerMbPerSec: share.mbPerSec, shareRecordsPerSec: share.recordsPerSec };
  }
  const c = await consumerPerformance(to, topic, each * w.producers);
  const sum = (f: (p: ProduceResult) => number) => ps.reduce((a, p) => a + f(p), 0);
  const worst = (f: (p: ProduceResult) => number) => Math.max(...ps.map(f));
  // Producers run side by side: throughputs add up; latency is the slowest producer's.
  const flatOut = { recordsPerSec: sum((p) => p.recordsPerSec), mbPerSec: sum((p) => p.mbPerSec),
    p50: worst((p) => p.p50), p99: worst((p) => p.p99), p999: worst((p) => p.p999), consumerMbPerSec: c.mbPerSec };
  if (!w.cluster) return flatOut;
  const ackTopic = `${topic}-ack-latency`;
  await createTopic(to, ackTopic, w.partitions, w.cluster);
  const seconds = quick ? w.cluster.quickAckSeconds : w.cluster.ackSeconds;
  const ack = await producerPerformance(to, ackTopic, w.cluster.ackRate * seconds, w.size, w.acks, w.compression, w.cluster.ackRate);
  return { ...flatOut, ackP50: ack.p50, ackP99: ack.p99, ackP999: ack.p999 };
}

/** The TLS workloads' certificates: made once a run, in a temporary directory, with the clients' properties beside them. */
interface TlsSetup { listener: TlsListener; clientConfig: string; remove(): void }

/** A CA and the brokers' certificate (test/helpers/certs.ts); the Java clients connect with SSL and trust that CA. */
function makeTlsSetup(): TlsSetup {
  const certs = makeCertificates();
  const clientConfig = path.join(certs.dir, 'client.properties');
  fs.writeFileSync(clientConfig, ['security.protocol=SSL', 'ssl.truststore.type=PEM', `ssl.truststore.location=${certs.ca.certPath}`, ''].join('\n'));
  return { listener: { keystore: certs.server.keystore }, clientConfig, remove: () => certs.remove() };
}

async function runOnce(target: Target, w: Workload, round: number, args: Args, tls?: TlsSetup): Promise<RoundResult> {
  const t0 = Date.now();
  const res: RoundResult = { workload: w.key, target: target.name, round, ok: false, wallSeconds: 0 };
  let b: RunningTarget | undefined;
  try {
    const label = `${w.key}-r${round}`;
    if (w.tls && !tls) throw new Error(`${w.key} needs the run's certificates`);
    const listener = w.tls ? tls?.listener : undefined;
    b = await (w.cluster ? target.startCluster(label, w.cluster.brokers) : target.start(label, listener));
    const to: Endpoint = { bootstrap: b.bootstrap, clientConfig: w.tls ? tls?.clientConfig : undefined };
    await createTopic(to, 'bench-warmup', w.partitions, w.cluster);
    await producerPerformance(to, 'bench-warmup', args.quick ? 50_000 : 200_000, 1024, w.acks, w.compression);
    const before = b.stats();
    const m = await measure(to, w, args.quick);
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
const METRIC_KEYS: MetricKey[] = ['recordsPerSec', 'mbPerSec', 'p50', 'p99', 'p999', 'consumerMbPerSec', 'shareRecordsPerSec', 'e2eAvg', 'e2eP50', 'e2eP99',
  'e2eRdP50', 'e2eRdP99', 'e2eRdP999', 'ackP50', 'ackP99', 'ackP999', 'cpuSeconds', 'peakRssMb', 'startupMs'];

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
    const flatOut = [w.name, c('recordsPerSec', 0), c('mbPerSec'), c('p50', 0), c('p99', 0), c('p999', 0), c('consumerMbPerSec'), ...broker];
    // The share row's second line: the share group's consumption (its MB/s is also the first line's consumer MB/s).
    if (w.share) return [flatOut, [`${w.name}: ${w.share.consumers} share consumers`, c('shareRecordsPerSec', 0), '', '', '', '', c('consumerMbPerSec'), '', '', '']];
    if (w.cluster) {
      const rate = `${w.cluster.ackRate.toLocaleString('en-US')}/s`;
      return [flatOut, [`${w.name}, ${rate}`, '', '', c('ackP50', 0), c('ackP99', 0), c('ackP999', 0), '', '', '', '']];
    }
    if (!w.e2e) return [flatOut];
    // One broker run, two clients: librdkafka at a fixed rate, then Kafka's tool (whole milliseconds).
    return [
      [`${w.name}, librdkafka ${w.e2e.rate.toLocaleString('en-US')}/s`, '', '', c('e2eRdP50', 2), c('e2eRdP99', 2), c('e2eRdP999', 2), '', ...broker],
      [`${w.name}, EndToEndLatency`, '', '', c('e2eP50', 0), c('e2eP99', 0), '', '', '', '', ''],
    ];
  });
  return table(['workload', 'records/s', 'MB/s', 'p50 ms', 'p99 ms', 'p99.9 ms', 'consumer MB/s', 'broker CPU s', 'peak RSS MB', 'start-up ms'], rows);
}

// --------------------------------------------------------------------------------------------- main

const CLUSTER_NOTE = `Cluster row: three brokers of each system (Fjord's with one etcd; Kafka's combined broker+controller ` +
  `nodes, -Xmx1g each) and the load tools all share this machine's ${os.cpus().length} cores, so it measures what ` +
  'replication costs on one box, not what three machines would do; CPU and peak RSS add up the cluster\'s processes ' +
  '(Fjord\'s include etcd).';

const TLS_NOTE = 'TLS row: both brokers with the same SSL listener settings (ssl.keystore.type=PEM, an EC P-256 certificate ' +
  'made for the run, no client authentication, each side\'s default protocols), the Java tools with security.protocol=SSL ' +
  'and the run\'s CA as their PEM trust store.';

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
  const needsPython = workloads.some((w) => w.client === 'rdkafka' || w.e2e);
  if (needsPython && !fs.existsSync(PYTHON)) throw new Error(`bench needs ${PYTHON} (compat/python/requirements.txt: confluent-kafka)`);
  for (const what of ['fetch', 'fetch-tools']) {
    const r = spawnSync(KAFKA_SH, [what], { stdio: 'inherit', timeout: 900_000 });
    if (r.status !== 0) throw new Error(`apache-kafka.sh ${what} failed`);
  }
  const load0 = os.loadavg();
  const mode = args.quick ? 'quick' : 'full';
  console.log(`bench: ${targets.map((t) => t.describe()).join(' vs ')}`);
  console.log(`bench: ${mode} run, ${args.rounds} round(s), ${workloads.length} workload(s); ${os.cpus().length} CPUs, load average ${load0.map((x) => x.toFixed(2)).join(' ')}`);
  if (load0[0] > 1) console.log(`bench: warning: the machine is busy (1-minute load ${load0[0].toFixed(2)}); numbers will be noisy`);
  const notes = [...(workloads.some((w) => w.cluster) ? [CLUSTER_NOTE] : []), ...(workloads.some((w) => w.tls) ? [TLS_NOTE] : [])];
  for (const note of notes) console.log(`bench: ${note}`);

  const tls = workloads.some((w) => w.tls) ? makeTlsSetup() : undefined;
  if (tls) process.once('exit', () => tls.remove()); // also after Ctrl-C (the SIGINT handler exits)
  const results: RoundResult[] = [];
  for (let round = 1; round <= args.rounds; round++) {
    for (const w of workloads) {
      for (const target of targets) {
        process.stdout.write(`  round ${round}/${args.rounds} ${w.name} on ${target.name} ... `);
        const r = await runOnce(target, w, round, args, tls);
        results.push(r);
        const m = r.metrics;
        console.log(!r.ok ? `FAILED: ${r.error}` : w.e2e
          ? `e2e p50 ${m!.e2eP50} ms p99 ${m!.e2eP99} ms (tool), p50 ${m!.e2eRdP50?.toFixed(2)} ms p99 ${m!.e2eRdP99?.toFixed(2)} ms (librdkafka) (${r.wallSeconds.toFixed(0)} s)`
          : `${fmtNum(m!.recordsPerSec, 0)} rec/s, ${m!.mbPerSec?.toFixed(1)} MB/s, p99 ${m!.p99} ms, consumer ${m!.consumerMbPerSec?.toFixed(1)} MB/s, ${m!.shareRecordsPerSec === undefined ? '' : `share group ${fmtNum(m!.shareRecordsPerSec, 0)} rec/s, `}${m!.ackP99 === undefined ? '' : `p50/p99 ${m!.ackP50}/${m!.ackP99} ms at ${w.cluster?.ackRate}/s, `}CPU ${m!.cpuSeconds.toFixed(1)} s, RSS ${m!.peakRssMb.toFixed(0)} MB, start-up ${m!.startupMs.toFixed(0)} ms (${r.wallSeconds.toFixed(0)} s)`);
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
    ...notes.flatMap((note) => ['', note]),
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
