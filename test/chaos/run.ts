// The chaos scenario of issue 13: `npm run chaos -- --seconds 60` (CI), `--minutes 10` at length,
// `--seed S` to replay a fault sequence, `--faults broker-kill,etcd-kill` to pick the kinds, `--keep`
// to keep the directory (kept anyway on a failure).
// Three broker processes and a 3-member etcd behind cuttable proxies (cluster.ts), three idempotent
// acks=all producers (producer.ts); at seeded random moments one fault at a time: SIGKILL a broker,
// SIGKILL an etcd member, or cut a broker off, each healed (restarted, reconnected) after a while.
// Then everything healed, the ISR full and the high watermarks still, the replicas' logs are checked
// against the acks (verify.ts). Prints the figures; exits 1 on any violation.
import { spawn, type ChildProcess } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { Kafka, logLevel, type Admin } from 'kafkajs';
import { Prng } from '../fuzz/spec-bytes';
import { startChaosCluster, type ChaosCluster } from './cluster';
import { readReplicaLog, verify, type Ack, type PartitionReplicas } from './verify';

const TOPIC = 'chaos';
const PARTITIONS = 3;
const BROKERS = 3;
const PRODUCERS = ['p0', 'p1', 'p2'];
const FAULT_KINDS = ['broker-kill', 'etcd-kill', 'broker-cut'] as const;
type FaultKind = (typeof FAULT_KINDS)[number];
/** How long the cluster waits to be whole again once everything is healed. */
const SETTLE_TIMEOUT_MS = 90_000;
/** How long the producers go on after the cluster is whole: they must get acks again. */
const AFTER_HEAL_MS = 5000;

interface Args { seconds: number; seed: number; keep: boolean; faults: FaultKind[] }

function parseArgs(argv: string[]): Args {
  const args: Args = { seconds: 60, seed: Date.now() & 0x7fffffff, keep: false, faults: [...FAULT_KINDS] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--seconds') args.seconds = Number(argv[++i]);
    else if (a === '--minutes') args.seconds = Number(argv[++i]) * 60;
    else if (a === '--seed') args.seed = Number(argv[++i]);
    else if (a === '--keep') args.keep = true;
    else if (a === '--faults') args.faults = argv[++i].split(',') as FaultKind[];
    else throw new Error(`unknown argument ${a} (use --seconds N, --minutes N, --seed S, --faults ${FAULT_KINDS.join(',')}, --keep)`);
  }
  const unknown = args.faults.filter((k) => !FAULT_KINDS.includes(k));
  if (unknown.length > 0 || args.faults.length === 0) throw new Error(`--faults takes some of ${FAULT_KINDS.join(',')}`);
  if (!(args.seconds > 0) || !Number.isInteger(args.seed)) throw new Error('--seconds/--minutes must be positive and --seed an integer');
  return args;
}

const started = Date.now();
const log = (text: string) => console.log(`[${((Date.now() - started) / 1000).toFixed(1).padStart(6)} s] ${text}`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Retries `attempt` until it returns a value other than undefined, or gives up after `timeoutMs`. */
async function until<T>(timeoutMs: number, attempt: () => Promise<T | undefined>): Promise<T | undefined> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const value = await attempt().catch(() => undefined);
    if (value !== undefined) return value;
    await sleep(500);
  }
  return undefined;
}

/** Applies one fault, holds it `holdMs`, then heals it. */
async function injectFault(cluster: ChaosCluster, kind: FaultKind, victim: number, holdMs: number): Promise<void> {
  const hold = `for ${(holdMs / 1000).toFixed(1)} s`;
  if (kind === 'etcd-kill') {
    const member = cluster.etcd.members[victim];
    log(`fault: SIGKILL etcd member ${member.name} ${hold}`);
    await member.kill();
    await sleep(holdMs);
    await member.start();
    log(`healed: etcd member ${member.name} restarted`);
    return;
  }
  const broker = cluster.brokers[victim];
  if (kind === 'broker-kill') {
    log(`fault: SIGKILL broker ${victim} ${hold}`);
    await broker.kill();
    await sleep(holdMs);
    await broker.start();
    log(`healed: broker ${victim} restarted`);
  } else {
    log(`fault: cut broker ${victim} off from the others and etcd ${hold}`);
    broker.setCut(true);
    await sleep(holdMs);
    broker.setCut(false);
    log(`healed: broker ${victim} reconnected`);
  }
}

function startProducer(name: string, bootstrap: string[], dir: string): { proc: ChildProcess; acksFile: string; exit: Promise<string> } {
  const acksFile = path.join(dir, `acks-${name}.txt`);
  const errors = fs.openSync(path.join(dir, `producer-${name}.log`), 'a');
  const proc = spawn(process.execPath, [path.join(__dirname, 'producer.js'), name, bootstrap.join(','), TOPIC, String(PARTITIONS), acksFile],
    { stdio: ['ignore', 'pipe', errors] });
  fs.closeSync(errors);
  let out = '';
  proc.stdout!.on('data', (chunk: Buffer) => { out += chunk.toString(); });
  const exit = new Promise<string>((resolve) => proc.once('exit', () => resolve(out)));
  return { proc, acksFile, exit };
}

function readAcks(file: string): Ack[] {
  if (!fs.existsSync(file)) return [];
  return fs.readFileSync(file, 'utf8').split('\n').filter((l) => l).map((line) => {
    const [partition, offset, producer, seq] = line.split(' ');
    return { partition: Number(partition), offset: Number(offset), producer, seq: Number(seq) };
  });
}

/**
 * Whether the cluster is whole: every broker registered (so electable), every partition led and its
 * ISR full. Asked twice, a second apart: an ISR seen full once may be flapping.
 */
async function clusterWhole(admin: Admin): Promise<boolean> {
  const whole = async () => {
    const registered = (await admin.describeCluster()).brokers.length;
    const [meta] = (await admin.fetchTopicMetadata({ topics: [TOPIC] })).topics;
    return registered === BROKERS && meta.partitions.every((p) => p.leader >= 0 && p.isr.length === BROKERS);
  };
  if (!(await whole())) return false;
  await sleep(1000);
  return whole();
}

/**
 * The partitions' high watermarks once they stay put for a second (and the cluster is whole, unless
 * it is known not to get whole: the logs are still checked then); undefined if never.
 */
async function settledHighWatermarks(admin: Admin, whole = true): Promise<Map<number, number> | undefined> {
  return until(SETTLE_TIMEOUT_MS, async () => {
    const first = await admin.fetchTopicOffsets(TOPIC);
    if (!whole) await sleep(1000);
    else if (!(await clusterWhole(admin))) return undefined;
    const second = await admin.fetchTopicOffsets(TOPIC);
    if (first.some((p, i) => p.high !== second[i].high)) return undefined;
    return new Map(second.map((p) => [p.partition, Number(p.high)]));
  });
}

async function main(): Promise<number> {
  const args = parseArgs(process.argv.slice(2));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fjord-chaos-'));
  log(`chaos: seed ${args.seed}, ${args.seconds} s of faults (${args.faults.join(', ')}), files in ${dir} (replay: --seed ${args.seed})`);
  const rng = new Prng(args.seed);
  const cluster = await startChaosCluster(dir, BROKERS);
  const kafka = new Kafka({ clientId: 'chaos-admin', brokers: cluster.bootstrap, logLevel: logLevel.NOTHING, retry: { retries: 5, initialRetryTime: 200 } });
  const admin = kafka.admin();
  const violations: string[] = [];
  let producers: ReturnType<typeof startProducer>[] = [];
  try {
    await admin.connect();
    const registered = await until(30_000, async () => ((await admin.describeCluster()).brokers.length === BROKERS ? true : undefined));
    if (!registered) throw new Error('the three brokers did not all register');
    await admin.createTopics({
      waitForLeaders: true,
      topics: [{ topic: TOPIC, numPartitions: PARTITIONS, replicationFactor: BROKERS, configEntries: [{ name: 'min.insync.replicas', value: '2' }] }],
    });
    if (!(await settledHighWatermarks(admin))) throw new Error(`topic ${TOPIC} did not get a full ISR`);
    producers = PRODUCERS.map((name) => startProducer(name, cluster.bootstrap, dir));
    log(`cluster up (brokers at ${cluster.bootstrap.join(', ')}), ${producers.length} producers started`);

    const faults = new Map<FaultKind, number>(FAULT_KINDS.map((k) => [k, 0]));
    const faultsEnd = Date.now() + args.seconds * 1000;
    while (Date.now() < faultsEnd) {
      await sleep(rng.int(1000, 4000));
      const kind = rng.pick(args.faults);
      await injectFault(cluster, kind, rng.int(0, 2), rng.int(2000, 8000));
      faults.set(kind, faults.get(kind)! + 1);
    }

    log('faults over: waiting for the cluster to be whole');
    const whole = await until(SETTLE_TIMEOUT_MS, async () => ((await clusterWhole(admin)) ? true : undefined));
    if (!whole) violations.push(`cluster not whole (3 brokers registered, every ISR full) ${SETTLE_TIMEOUT_MS / 1000} s after the last heal`);
    const ackedAtHeal = producers.reduce((n, p) => n + readAcks(p.acksFile).length, 0);
    await sleep(AFTER_HEAL_MS);
    const ackedAfterHeal = producers.reduce((n, p) => n + readAcks(p.acksFile).length, 0) - ackedAtHeal;
    if (ackedAfterHeal === 0) violations.push(`no record acknowledged in the ${AFTER_HEAL_MS / 1000} s after the cluster was whole again`);

    for (const p of producers) p.proc.kill('SIGTERM');
    const summaries = await Promise.all(producers.map(async (p) => {
      const timer = setTimeout(() => p.proc.kill('SIGKILL'), 30_000);
      const out = await p.exit;
      clearTimeout(timer);
      return JSON.parse(out.trim() || '{"acked":0,"failed":0}') as { acked: number; failed: number };
    }));
    log('producers stopped: waiting for still high watermarks');
    const highWatermarks = await settledHighWatermarks(admin, whole === true);
    if (!highWatermarks) throw new Error('the partitions did not settle (cluster whole, high watermarks still) after the producers stopped');

    const partitions: PartitionReplicas[] = [...highWatermarks].map(([partition, highWatermark]) => ({
      partition, highWatermark,
      replicas: new Map(cluster.brokers.map((b) => [b.id, readReplicaLog(path.join(b.dataDir, `${TOPIC}-${partition}`))])),
    }));
    const acks = producers.flatMap((p) => readAcks(p.acksFile));
    const verdict = verify(partitions, acks);

    const failedRecords = summaries.reduce((n, s) => n + s.failed, 0);
    console.log([
      '',
      `chaos figures (seed ${args.seed}):`,
      `  elapsed                     ${((Date.now() - started) / 1000).toFixed(1)} s (${args.seconds} s of faults)`,
      `  faults injected             ${[...faults].map(([k, n]) => `${k} ${n}`).join(', ')}`,
      `  records acknowledged        ${acks.length} (${ackedAfterHeal} after the final heal; ${failedRecords} in failed sends)`,
      `  records in the logs         ${verdict.recordsInLogs} (high watermarks ${[...highWatermarks.values()].join(', ')})`,
      `  lost                        ${verdict.lost}`,
      `  acked at another offset     ${verdict.misplaced}`,
      `  duplicated                  ${verdict.duplicated}`,
      `  out of order                ${verdict.outOfOrder}`,
      `  leader epoch going down     ${verdict.epochRegressions}`,
      `  replicas differing below HW ${verdict.replicaMismatches}`,
    ].join('\n'));
    violations.push(...verdict.problems);
  } catch (e) {
    violations.push(`run failed: ${(e as Error).message}`);
  } finally {
    for (const p of producers) if (p.proc.exitCode === null && p.proc.signalCode === null) p.proc.kill('SIGKILL');
    await admin.disconnect().catch(() => undefined);
    await cluster.stop();
  }
  if (violations.length > 0) {
    console.log(`\nchaos: FAILED, ${violations.length} violation(s); logs and data kept in ${dir}\n  ${violations.join('\n  ')}`);
    return 1;
  }
  if (!args.keep) fs.rmSync(dir, { recursive: true, force: true });
  console.log(`\nchaos: passed${args.keep ? `; files kept in ${dir}` : ''}`);
  return 0;
}

main().then((code) => process.exit(code), (e) => {
  console.error(e);
  process.exit(1);
});
