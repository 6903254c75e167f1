// In-process brokers on one real etcd for a mocha suite: each with its own data dir under one
// temporary root, all stopped (brokers before etcd) and the root removed after the suite.
import { mkdtemp, rm } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { startBroker, type RunningBroker } from '../../src/broker';
import { startEtcd, type RunningEtcd } from './etcd';
import { RawClient } from './raw-client';

export interface EtcdBrokers {
  /** The running broker of this node id. */
  broker(nodeId: number): RunningBroker;
  /** Closes the broker of this node id and starts it again on the same data dir. */
  restart(nodeId: number): Promise<void>;
  /** One request to the broker of this node id, on a connection of its own. */
  request<T>(nodeId: number, apiKey: number, version: number, body: unknown): Promise<T>;
}

/**
 * Starts a broker per node id (in order) on one etcd before the suite's tests, each with the
 * cluster's base config (a 6 s broker session, offsets replicated twice) and `config` over it.
 */
export function withEtcdBrokers(nodeIds: number[], config: Record<string, string> = {}): EtcdBrokers {
  let etcd: RunningEtcd | undefined;
  let root: string | undefined;
  const brokers = new Map<number, RunningBroker>();

  const start = async (nodeId: number) => {
    brokers.set(nodeId, await startBroker({
      nodeId, dataDir: path.join(root!, `broker-${nodeId}`), logLevel: process.env.FJORD_TEST_LOG ?? 'silent',
      config: { 'etcd.connect': etcd!.connect, 'broker.session.timeout.ms': '6000', 'offsets.topic.replication.factor': '2', ...config },
    }));
  };
  const broker = (nodeId: number) => {
    const running = brokers.get(nodeId);
    if (!running) throw new Error(`broker ${nodeId} not running`);
    return running;
  };

  before(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'fjord-etcd-brokers-'));
    etcd = await startEtcd();
    for (const nodeId of nodeIds) await start(nodeId);
  });
  after(async () => {
    await Promise.all([...brokers.values()].map((b) => b.close()));
    await etcd?.stop();
    if (root) await rm(root, { recursive: true, force: true });
  });

  return {
    broker,
    restart: async (nodeId) => {
      await broker(nodeId).close();
      // Not closed twice after the suite if the new start fails.
      brokers.delete(nodeId);
      await start(nodeId);
    },
    request: (nodeId, apiKey, version, body) => RawClient.requestOnce(broker(nodeId).port, apiKey, version, body),
  };
}
