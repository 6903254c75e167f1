// The chaos runner's cluster: a 3-member etcd and three Fjord brokers, each broker its own process
// (`bin/fjord start`, logging to broker-N.log), with a TCP proxy on every link that can be cut. Each
// broker advertises its inbound proxy's port, so producers and the other brokers reach it through
// it, and its etcd.connect lists its own proxies to the etcd members; cutting broker N off pauses
// its inbound proxy and its etcd proxies, both ways (a network partition, not a reset).
import { spawn, type ChildProcess } from 'child_process';
import * as fs from 'fs';
import * as net from 'net';
import * as path from 'path';
import { freePort, killProcess, startEtcdCluster, type RunningEtcd } from '../../src/local-etcd';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy';

/** Broker settings for quick failover (lease TTL 2 s, ISR shrink after 3 s). */
const BROKER_SETTINGS = [
  'broker.session.timeout.ms=2000',
  'replica.lag.time.max.ms=3000',
  'replica.fetch.wait.max.ms=100',
];

const BROKER_READY_TIMEOUT_MS = 30_000;

/** One broker process: its own port, data dir and proxies; can be killed and started again. */
class BrokerProcess {
  private proc: ChildProcess | null = null;

  constructor(
    readonly id: number,
    private readonly port: number,
    readonly dataDir: string,
    private readonly logFile: string,
    /** Clients and other brokers come in through this one. */
    readonly inbound: TcpProxy,
    /** This broker's own way to each etcd member. */
    readonly etcdLinks: TcpProxy[],
  ) {}

  get running(): boolean {
    return this.proc !== null;
  }

  async start(): Promise<void> {
    const connect = this.etcdLinks.map((p) => `127.0.0.1:${p.port}`).join(',');
    const log = fs.openSync(this.logFile, 'a');
    const args = [
      path.join(__dirname, '../../../bin/fjord'), 'start', '--node-id', String(this.id), '--port', String(this.port),
      '--advertised-port', String(this.inbound.port), '--data-dir', this.dataDir, '--log-format', 'json',
      '--set', `etcd.connect=${connect}`, '--set', 'http.listener=', ...BROKER_SETTINGS.flatMap((s) => ['--set', s]),
    ];
    this.proc = spawn(process.execPath, args, { stdio: ['ignore', log, log] });
    fs.closeSync(log);
    await waitListening(this.port, this.proc, this.logFile);
  }

  async kill(): Promise<void> {
    const proc = this.proc;
    this.proc = null;
    if (proc) await killProcess(proc);
  }

  /** Cuts the broker off from clients, the other brokers and etcd, or heals it. */
  setCut(cut: boolean): void {
    for (const proxy of [this.inbound, ...this.etcdLinks]) proxy.cut = cut;
  }
}

export interface ChaosCluster {
  readonly etcd: RunningEtcd;
  readonly brokers: readonly BrokerProcess[];
  /** The brokers' advertised (proxy) addresses. */
  readonly bootstrap: string[];
  stop(): Promise<void>;
}

/** Starts etcd, the proxies and `size` brokers under `dir`; resolves once every broker listens. */
export async function startChaosCluster(dir: string, size: number): Promise<ChaosCluster> {
  const etcd = await startEtcdCluster(3, { dir: path.join(dir, 'etcd') });
  const brokers: BrokerProcess[] = [];
  const proxies: TcpProxy[] = [];
  const stop = async () => {
    await Promise.all(brokers.map((b) => b.kill()));
    await Promise.all(proxies.map((p) => p.close()));
    await etcd.stop();
  };
  try {
    for (let id = 0; id < size; id++) {
      const port = await freePort();
      const inbound = await startTcpProxy(port);
      const etcdLinks = await Promise.all(etcd.members.map((m) => startTcpProxy(Number(m.endpoint.split(':')[1]))));
      proxies.push(inbound, ...etcdLinks);
      brokers.push(new BrokerProcess(id, port, path.join(dir, `broker-${id}`), path.join(dir, `broker-${id}.log`), inbound, etcdLinks));
    }
    await Promise.all(brokers.map((b) => b.start()));
  } catch (e) {
    await stop();
    throw e;
  }
  return { etcd, brokers, bootstrap: brokers.map((b) => `127.0.0.1:${b.inbound.port}`), stop };
}

/** Waits until the broker's own port takes connections (its process failing first is an error). */
async function waitListening(port: number, proc: ChildProcess, logFile: string): Promise<void> {
  const deadline = Date.now() + BROKER_READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (proc.exitCode !== null || proc.signalCode !== null) throw new Error(`broker exited at start-up, see ${logFile}`);
    const up = await new Promise<boolean>((resolve) => {
      const socket = net.connect({ host: '127.0.0.1', port }, () => { socket.destroy(); resolve(true); });
      socket.on('error', () => resolve(false));
    });
    if (up) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`broker not listening on ${port} after ${BROKER_READY_TIMEOUT_MS} ms, see ${logFile}`);
}
