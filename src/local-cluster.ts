// A whole cluster on this machine, for users trying one out and for tests: an etcd (unless one is
// given) and N brokers in this process on consecutive ports, each with its own data dir under one
// folder. `fjord cluster` and `startCluster()` in the library API. In production each broker is its
// own `fjord start --set etcd.connect=...` on its own machine (README: "Running a cluster").
import { mkdtemp, rm } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Logger } from 'pino';
import { startBroker, type RunningBroker } from './broker';
import { startEtcd, type RunningEtcd } from './local-etcd';
import { parseHttpListener } from './config/http-listener';

export interface StartClusterOptions {
  /** How many brokers (default 3); their node ids are 0..brokers-1. */
  brokers?: number;
  /** Where the brokers (broker-<id>/) and the etcd (etcd/) keep their data; a temporary folder removed by close() if absent. */
  dataDir?: string;
  host?: string;
  /** The first broker's port, the others following it; 0 (the default) picks free ports. */
  port?: number;
  /** An etcd.connect value of a running etcd; without it one is started (on etcdPort, or a free port). */
  etcdConnect?: string;
  etcdPort?: number;
  /** Kafka-named broker properties for every broker; an http.listener's port is broker 0's, broker i's is port + i (0: free ports). */
  config?: Record<string, string>;
  logger?: Logger;
  logLevel?: string;
}

export interface RunningCluster {
  brokers: RunningBroker[];
  /** Every broker's host:port, comma-separated: a client's bootstrap.servers. */
  bootstrap: string;
  etcdConnect: string;
  /** Closes the brokers, then the etcd this started (its data stays when dataDir was given). */
  close(): Promise<void>;
}

export async function startCluster(options: StartClusterOptions = {}): Promise<RunningCluster> {
  const count = options.brokers ?? 3;
  if (!Number.isInteger(count) || count < 1) throw new Error(`brokers must be a positive integer, not ${count}`);
  const root = options.dataDir ?? await mkdtemp(path.join(os.tmpdir(), 'fjord-cluster-'));
  let etcd: RunningEtcd | undefined;
  const etcdConnect = options.etcdConnect
    ?? (etcd = await startEtcd({ dir: path.join(root, 'etcd'), basePort: options.etcdPort })).connect;
  const brokers: RunningBroker[] = [];
  const close = async () => {
    await Promise.all(brokers.map((b) => b.close()));
    await etcd?.stop();
    if (options.dataDir === undefined) await rm(root, { recursive: true, force: true });
  };
  try {
    // One at a time: each sees the ones before it registered (the first becomes the controller).
    for (let id = 0; id < count; id++) {
      brokers.push(await startBroker({
        nodeId: id, host: options.host, port: options.port ? options.port + id : 0,
        dataDir: path.join(root, `broker-${id}`), logger: options.logger, logLevel: options.logLevel,
        config: { ...options.config, ...httpListenerOf(options.config, id), 'etcd.connect': etcdConnect },
      }));
    }
  } catch (e) {
    await close();
    throw e;
  }
  return { brokers, bootstrap: brokers.map((b) => b.bootstrap).join(','), etcdConnect, close };
}

/** Broker `id`'s http.listener: the configured one's port + id (a port 0 or an empty value stays). */
function httpListenerOf(config: Record<string, string> | undefined, id: number): Record<string, string> {
  const value = config?.['http.listener'];
  if (value === undefined) return {};
  let address: ReturnType<typeof parseHttpListener>;
  try {
    address = parseHttpListener(value);
  } catch {
    return {}; // the brokers' config check reports it
  }
  if (!address || address.port === 0) return {};
  const host = address.host.includes(':') ? `[${address.host}]` : address.host;
  return { 'http.listener': `${host}:${address.port + id}` };
}
