// The brokers under test for bench/run.ts: a single Fjord or Apache Kafka process, or a cluster of
// each on loopback (Fjord: its brokers on one etcd from src/local-etcd.ts; Kafka: a KRaft cluster of
// combined broker+controller nodes from compat/lib/apache-kafka.sh cluster-start), behind one interface.
// A single broker may also get an SSL listener (the TLS row): its bootstrap is then that listener's.
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import * as readline from 'node:readline';
import { ApiKey } from '../src/protocol/generated';
import type { MetadataResponse } from '../src/protocol/generated/MetadataResponse';
import { freePort, startEtcd } from '../src/local-etcd';
import { RawClient } from '../test/helpers/raw-client';
import { childPids, procStats, type ProcStats } from './proc-stats';

export const ROOT = path.resolve(__dirname, '..', '..'); // dist/bench/targets.js -> repository root
export const KAFKA_SH = path.join(ROOT, 'compat', 'lib', 'apache-kafka.sh');
/** How long a broker or a cluster may take to start. */
const START_TIMEOUT_MS = 90_000;

/** A broker (or a cluster: its bootstrap lists every broker, its stats add up all their processes) under test. */
export interface RunningTarget {
  bootstrap: string;
  /** Spawn to the first ApiVersions answered (a cluster: to every broker in the metadata). */
  startupMs: number;
  stats(): ProcStats;
  /** Lines the broker wrote on stdout/stderr so far. */
  output(): string[];
  /** Stops the broker and removes its data; resolves with how it exited. */
  stop(): Promise<Exit>;
}

interface Exit { code: number | null; signal: string | null }

/**
 * An SSL listener next to the broker's PLAINTEXT one (which only the start-up probe uses then): Kafka's
 * ssl.keystore.type=PEM, the key and its certificate chain in one file; no client authentication.
 */
export interface TlsListener { keystore: string }

export interface Target {
  name: string;
  describe(): string;
  /** label: names the run (workload and round), e.g. for profile files. With tls, bootstrap is the SSL listener's. */
  start(label: string, tls?: TlsListener): Promise<RunningTarget>;
  /** A cluster of `brokers` brokers on loopback, for the cluster workloads. */
  startCluster(label: string, brokers: number): Promise<RunningTarget>;
  /** Frees what the target kept between starts. */
  dispose?(): void;
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
  env: NodeJS.ProcessEnv = process.env, bootstrapPort = port): Promise<RunningTarget & { pid: number }> {
  const lines: string[] = [];
  const t0 = process.hrtime.bigint();
  const child = spawn(cmd, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  for (const s of [child.stdout!, child.stderr!]) readline.createInterface({ input: s }).on('line', (l) => lines.push(l));
  let exited: Exit | undefined;
  const exitP = new Promise<Exit>((resolve) =>
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
  return { bootstrap: `127.0.0.1:${bootstrapPort}`, pid, startupMs, stats: () => procStats(pid), output: () => lines.slice(), stop };
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

/** `n` consecutive free loopback ports (Kafka's cluster takes a base port and counts from it). */
async function freePortRange(n: number): Promise<number> {
  const canListen = (port: number) => new Promise<boolean>((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = 20_000 + Math.floor(Math.random() * 20_000);
    let free = true;
    for (let p = base; free && p < base + n; p++) free = await canListen(p);
    if (free) return base;
  }
  throw new Error(`no ${n} consecutive free ports`);
}

/**
 * Waits until a Metadata request to `port` lists `brokers` brokers: a cluster has formed (every Fjord
 * broker registered in etcd, every Kafka node unfenced by its controller), so RF=brokers topics can be made.
 */
async function waitForBrokers(port: number, brokers: number, deadline: number): Promise<void> {
  for (;;) {
    let seen = 0;
    try {
      const client = await RawClient.connect(port);
      try {
        const md = await client.request<MetadataResponse>(ApiKey.Metadata, 12,
          { topics: [], allowAutoTopicCreation: false, includeClusterAuthorizedOperations: false, includeTopicAuthorizedOperations: false });
        seen = md.brokers.length;
      } finally {
        client.close();
      }
    } catch {
      // not serving yet
    }
    if (seen >= brokers) return;
    if (Date.now() > deadline) throw new Error(`the metadata lists ${seen} of ${brokers} brokers after ${START_TIMEOUT_MS / 1000} s`);
    await sleep(50);
  }
}

/** CPU and peak RSS of several processes added up (a cluster's nodes each peak on their own, so the sum bounds it). */
function sumStats(pids: number[]): ProcStats {
  const each = pids.map(procStats);
  return { cpuSeconds: each.reduce((a, s) => a + s.cpuSeconds, 0), peakRssMb: each.reduce((a, s) => a + s.peakRssMb, 0) };
}

/**
 * server.properties lines, the same for both brokers, for an SSL listener on sslPort and a PLAINTEXT one on
 * plainPort, both advertised, and `internal` listeners (plaintext, not advertised: Kafka's CONTROLLER). SSL comes
 * first: apache-kafka.sh reads its port from its own `listeners=PLAINTEXT://` line.
 */
function tlsListenerProperties(tls: TlsListener, sslPort: number, plainPort: number, internal: Record<string, number> = {}): string[] {
  const advertised = { SSL: sslPort, PLAINTEXT: plainPort };
  const all = { ...advertised, ...internal };
  const endpoints = (ls: Record<string, number>) => Object.entries(ls).map(([name, port]) => `${name}://127.0.0.1:${port}`).join(',');
  return [
    `listeners=${endpoints(all)}`,
    `advertised.listeners=${endpoints(advertised)}`,
    `listener.security.protocol.map=${Object.keys(all).map((name) => `${name}:${name === 'SSL' ? 'SSL' : 'PLAINTEXT'}`).join(',')}`,
    'ssl.keystore.type=PEM',
    `ssl.keystore.location=${tls.keystore}`,
  ];
}

/** The first unclean exit of several (SIGTERM's 143 is clean), else the first. */
const worstExit = (exits: Exit[]): Exit => exits.find((e) => e.code !== 0 && e.code !== 143) ?? exits[0];

/**
 * Fjord: `bin/fjord start --log-level warn` on a free port and a temporary data dir, with Kafka's
 * group.initial.rebalance.delay.ms=0 as compat/lib/apache-kafka.sh sets it (ConsumerPerformance joins a
 * group; neither broker should make it wait 3 s). With tls, its listeners are set with --set (no --port). A cluster: one etcd (startEtcd, one member), then every
 * broker at once with its --node-id and etcd.connect; its CPU and memory include etcd's (Kafka's
 * controller quorum runs inside its nodes).
 */
export function fjordTarget(opts: { snapshot: boolean; cpuProfDir?: string }): Target {
  let home: string | undefined = opts.snapshot ? snapshotFjord() : ROOT;
  const startNode = async (profileName: string, extraArgs: string[], tls?: TlsListener) => {
    if (!home) throw new Error('fjord target already disposed');
    const nodeArgs = opts.cpuProfDir ? ['--cpu-prof', '--cpu-prof-dir', opts.cpuProfDir, '--cpu-prof-name', `${profileName}.cpuprofile`] : [];
    const port = await freePort();
    const sslPort = tls ? await freePort() : port;
    const listenerArgs = tls ? tlsListenerProperties(tls, sslPort, port).flatMap((p) => ['--set', p]) : ['--port', String(port)];
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'fjord-bench-'));
    return spawnBroker('fjord', process.execPath, [...nodeArgs, path.join(home, 'bin', 'fjord'), 'start', ...listenerArgs,
      '--data-dir', dataDir, '--log-level', 'warn', '--set', 'group.initial.rebalance.delay.ms=0', '--set', 'http.listener=', ...extraArgs],
    port, dataDir, { ...process.env, NODE_PATH: path.join(ROOT, 'node_modules') }, sslPort);
  };
  return {
    name: 'fjord',
    describe: () => `Fjord (bin/fjord start${opts.snapshot ? ', a snapshot of dist/' : ''}${opts.cpuProfDir ? ', --cpu-prof' : ''}, Node ${process.version})`,
    dispose() {
      if (home && home !== ROOT) fs.rmSync(home, { recursive: true, force: true });
      home = undefined;
    },
    start: (label: string, tls?: TlsListener) => startNode(label, [], tls),
    async startCluster(label: string, brokers: number) {
      const t0 = Date.now();
      const etcd = await startEtcd();
      const etcdPids = childPids('etcd');
      const started = await Promise.allSettled(Array.from({ length: brokers }, (_, node) =>
        startNode(`${label}-node${node}`, ['--node-id', String(node), '--set', `etcd.connect=${etcd.connect}`])));
      const nodes = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
      const stop = async () => {
        const exits = await Promise.all(nodes.map((n) => n.stop()));
        await etcd.stop();
        return worstExit(exits);
      };
      try {
        const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
        if (failed) throw failed.reason;
        await waitForBrokers(Number(nodes[0].bootstrap.split(':')[1]), brokers, t0 + START_TIMEOUT_MS);
      } catch (e) {
        await stop();
        throw e;
      }
      return {
        bootstrap: nodes.map((n) => n.bootstrap).join(','),
        startupMs: Date.now() - t0,
        stats: () => sumStats([...nodes.map((n) => n.pid), ...etcdPids]),
        output: () => nodes.flatMap((n, i) => n.output().slice(-20).map((l) => `node ${i}: ${l}`)),
        stop,
      };
    },
  };
}

/**
 * Apache Kafka: `apache-kafka.sh prepare` writes server.properties and formats the temporary data dir
 * (not timed: it is the install step Fjord does not have), then `apache-kafka.sh run` execs the JVM
 * (so the child's pid is the JVM's). Heap: the script's -Xms256m -Xmx768m. With tls, the listener lines go to
 * the script's FJORD_KAFKA_PROPS (after its own, so they win), with a controller port of our own. A cluster: `cluster-prepare`
 * (not timed either), then `cluster-start`, which returns once every node is unfenced; its nodes are
 * combined broker+controller JVMs (-Xms256m -Xmx1g each) that outlive the script, found by their pid files.
 */
export function kafkaTarget(): Target {
  return {
    name: 'kafka',
    describe: () => 'Apache Kafka 4.4.0 (KRaft combined node, compat/lib/apache-kafka.sh, -Xms256m -Xmx768m, G1)',
    async start(_label: string, tls?: TlsListener) {
      const port = await freePort();
      const sslPort = tls ? await freePort() : port;
      const extraProps: string[] = [];
      if (tls) {
        const controller = await freePort();
        extraProps.push(...tlsListenerProperties(tls, sslPort, port, { CONTROLLER: controller }), `controller.quorum.voters=1@127.0.0.1:${controller}`);
      }
      const dataDir = await mkdtemp(path.join(os.tmpdir(), 'kafka-bench-'));
      const env = tls ? { ...process.env, FJORD_KAFKA_PROPS: extraProps.join('\n') } : process.env;
      const prep = spawnSync(KAFKA_SH, ['prepare', String(port), String(port), dataDir], { encoding: 'utf8', timeout: 600_000, env });
      if (prep.status !== 0) {
        await rm(dataDir, { recursive: true, force: true });
        throw new Error(`apache-kafka.sh prepare failed: ${prep.stderr}`);
      }
      return spawnBroker('kafka', KAFKA_SH, ['run', String(port), String(port), dataDir], port, dataDir, process.env, sslPort);
    },
    async startCluster(_label: string, brokers: number) {
      const base = await freePortRange(2 * brokers); // a client and a controller port per node
      const dir = await mkdtemp(path.join(os.tmpdir(), 'kafka-bench-cluster-'));
      const script = (cmd: string, ...args: string[]) =>
        spawnSync(KAFKA_SH, [cmd, dir, ...args], { encoding: 'utf8', timeout: 600_000 });
      const stop = async (): Promise<Exit> => {
        const r = script('cluster-stop');
        await rm(dir, { recursive: true, force: true });
        return { code: r.status, signal: r.signal };
      };
      try {
        const prep = script('cluster-prepare', String(brokers), String(base));
        if (prep.status !== 0) throw new Error(`apache-kafka.sh cluster-prepare failed: ${prep.stderr}`);
        const clock = Date.now();
        const started = script('cluster-start', String(brokers), String(base));
        if (started.status !== 0) throw new Error(`apache-kafka.sh cluster-start failed: ${started.stderr}`);
        await waitForBrokers(base, brokers, clock + START_TIMEOUT_MS);
        const nodeDirs = Array.from({ length: brokers }, (_, i) => path.join(dir, `node${i}`));
        const pids = nodeDirs.map((d) => Number(fs.readFileSync(path.join(d, 'kafka.pid'), 'utf8')));
        return {
          bootstrap: started.stdout.trim(),
          startupMs: Date.now() - clock,
          stats: () => sumStats(pids),
          output: () => nodeDirs.flatMap((d, i) => fs.readFileSync(path.join(d, 'kafka.log'), 'utf8').trimEnd().split('\n').slice(-20).map((l) => `node ${i}: ${l}`)),
          stop,
        };
      } catch (e) {
        await stop();
        throw e;
      }
    },
  };
}
