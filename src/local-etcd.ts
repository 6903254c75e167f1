// Starts real etcd servers on this machine (Debian's etcd-server, `etcd` on the PATH), for
// `fjord cluster`, startCluster() and the tests: each member on loopback ports (free ones unless
// given) with its own data dir, ready once its /health answers. Without a directory the data goes in
// a temporary one that stop() removes. startEtcd() gives one member, startEtcdCluster(3) a 3-member
// cluster (for the chaos runs), whose members can be killed and started again one by one.
import { spawn, type ChildProcess } from 'child_process';
import * as fs from 'fs';
import * as net from 'net';
import * as os from 'os';
import * as path from 'path';

export interface EtcdMember {
  readonly name: string;
  /** `127.0.0.1:PORT` of its client URL: what etcd.connect lists. */
  readonly endpoint: string;
  readonly running: boolean;
  /** SIGKILLs the member (its data dir stays, so start() brings it back with its data). */
  kill(): Promise<void>;
  /** Starts a killed member again and waits until it is healthy. */
  start(): Promise<void>;
  /** Whether this running member is the raft leader now. */
  isLeader(): Promise<boolean>;
}

export interface RunningEtcd {
  readonly members: readonly EtcdMember[];
  /** Every member's endpoint, comma-separated: an etcd.connect value without prefix. */
  readonly connect: string;
  /** The member that is raft leader (waits for an election if there is none yet). */
  leader(): Promise<EtcdMember>;
  /** Stops every member and removes the data dirs. */
  stop(): Promise<void>;
}

const READY_TIMEOUT_MS = 15_000;

/** A port free on `host` now (loopback by default, '' for every interface), as the OS hands one out for port 0. */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host === '' ? undefined : host, resolve);
  });
  const port = (server.address() as net.AddressInfo).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** SIGKILLs a child process unless it has exited already, and waits for its exit. */
export async function killProcess(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = new Promise((resolve) => proc.once('exit', resolve));
  proc.kill('SIGKILL');
  await exited;
}

async function waitHealthy(clientUrl: string, proc: ChildProcess, log: () => string): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (proc.exitCode !== null || proc.signalCode !== null) throw new Error(`etcd exited before it was ready:\n${log()}`);
    try {
      const res = await fetch(`${clientUrl}/health`);
      const body = (await res.json()) as { health?: string };
      if (body.health === 'true') return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`etcd not healthy after ${READY_TIMEOUT_MS} ms:\n${log()}`);
}

class Member implements EtcdMember {
  private proc: ChildProcess | null = null;
  private output = '';

  constructor(
    readonly name: string,
    private readonly clientPort: number,
    private readonly peerPort: number,
    private readonly dataDir: string,
    private readonly initialCluster: string,
  ) {}

  get endpoint(): string {
    return `127.0.0.1:${this.clientPort}`;
  }

  get peerUrl(): string {
    return `http://127.0.0.1:${this.peerPort}`;
  }

  get running(): boolean {
    return this.proc !== null;
  }

  async start(): Promise<void> {
    if (this.proc) throw new Error(`etcd member ${this.name} is already running`);
    const clientUrl = `http://${this.endpoint}`;
    const proc = spawn('etcd', [
      '--name', this.name,
      '--data-dir', this.dataDir,
      '--listen-client-urls', clientUrl,
      '--advertise-client-urls', clientUrl,
      '--listen-peer-urls', this.peerUrl,
      '--initial-advertise-peer-urls', this.peerUrl,
      '--initial-cluster', this.initialCluster,
      '--initial-cluster-state', 'new',
      // Loopback: a short heartbeat and election keep failover in tests quick.
      '--heartbeat-interval', '50',
      '--election-timeout', '500',
    ], { stdio: ['ignore', 'pipe', 'pipe'] });
    this.output = '';
    const keep = (chunk: Buffer) => { this.output = (this.output + chunk.toString()).slice(-8000); };
    proc.stdout!.on('data', keep);
    proc.stderr!.on('data', keep);
    proc.on('error', (err) => keep(Buffer.from(`spawn failed: ${err.message}\n`)));
    this.proc = proc;
    try {
      await waitHealthy(clientUrl, proc, () => this.output);
    } catch (e) {
      await this.kill();
      throw e;
    }
  }

  async isLeader(): Promise<boolean> {
    // etcd's JSON gateway to Maintenance.Status: the member's own id and the leader's, as strings.
    const res = await fetch(`http://${this.endpoint}/v3/maintenance/status`, { method: 'POST', body: '{}' });
    const status = (await res.json()) as { header: { member_id: string }; leader: string };
    return status.header.member_id === status.leader;
  }

  async kill(): Promise<void> {
    const proc = this.proc;
    this.proc = null;
    if (proc) await killProcess(proc);
  }
}

export interface LocalEtcdOptions {
  /** Where the members keep their data (kept by stop()); a temporary directory otherwise. */
  dir?: string;
  /** The first member's client port; the others follow it (peer ports after the client ports). Free ports otherwise. */
  basePort?: number;
}

/** Starts an etcd cluster of `size` members on loopback; every member is healthy when it resolves. */
export async function startEtcdCluster(size: number, options: LocalEtcdOptions = {}): Promise<RunningEtcd> {
  const root = options.dir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'fjord-etcd-'));
  const ports: [number, number][] = [];
  for (let i = 0; i < size; i++) {
    const base = options.basePort;
    ports.push(base === undefined ? [await freePort(), await freePort()] : [base + i, base + size + i]);
  }
  const initialCluster = ports.map(([, peer], i) => `etcd${i}=http://127.0.0.1:${peer}`).join(',');
  const members = ports.map(([client, peer], i) =>
    new Member(`etcd${i}`, client, peer, path.join(root, `etcd${i}`), initialCluster));
  const stop = async () => {
    // SIGKILL: the data goes anyway, and members stopped together with SIGTERM each wait seconds
    // for the others to take over their leadership.
    await Promise.all(members.map((m) => m.kill()));
    if (options.dir === undefined) fs.rmSync(root, { recursive: true, force: true });
  };
  try {
    // All at once: a member of a new cluster is healthy only once a quorum has formed.
    await Promise.all(members.map((m) => m.start()));
  } catch (e) {
    await stop();
    throw e;
  }
  const leader = async () => {
    const deadline = Date.now() + READY_TIMEOUT_MS;
    while (Date.now() < deadline) {
      for (const m of members) if (m.running && (await m.isLeader().catch(() => false))) return m;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error('no etcd member became leader');
  };
  return { members, connect: members.map((m) => m.endpoint).join(','), leader, stop };
}

/** Starts a one-member etcd. */
export function startEtcd(options: LocalEtcdOptions = {}): Promise<RunningEtcd> {
  return startEtcdCluster(1, options);
}
