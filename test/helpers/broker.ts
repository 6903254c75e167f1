// Starts an in-process broker for a test suite, on a free port with a temporary data dir.
import { mkdtemp, rm } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { startBroker, type RunningBroker, type StartBrokerOptions } from '../../src/broker';
import { RawClient } from './raw-client';

/** `opts` as a function when they are known only once the suite's earlier hooks ran (e.g. its certificates). */
export function withBroker(opts: StartBrokerOptions | (() => StartBrokerOptions) = {}): { current: () => RunningBroker } {
  let running: RunningBroker | undefined;
  before(async () => {
    running = await startBroker({ logLevel: 'silent', ...(typeof opts === 'function' ? opts() : opts) });
  });
  after(async () => {
    await running?.close();
  });
  return {
    current: () => {
      if (!running) throw new Error('broker not started');
      return running;
    },
  };
}

export interface RestartableBroker {
  readonly running: RunningBroker;
  /** A raw client connected to `running` (a new one after each restart). */
  readonly client: RawClient;
  /** Closes the client and the broker, and starts the broker again on the same data dir. */
  restart(): Promise<void>;
}

/**
 * A suite's broker on a data dir of its own that outlives restart(), with a raw client connected
 * to it; the client, the broker and the data dir are gone after the suite.
 */
export function withRestartableBroker(opts: StartBrokerOptions = {}): RestartableBroker {
  let dataDir: string | undefined;
  let running: RunningBroker | undefined;
  let client: RawClient | undefined;
  const start = async () => {
    running = await startBroker({ logLevel: 'silent', ...opts, dataDir });
    client = await RawClient.connect(running.port);
  };
  before(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'fjord-broker-'));
    await start();
  });
  after(async () => {
    client?.close();
    await running?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('broker not started');
    return value;
  };
  return {
    get running() {
      return started(running);
    },
    get client() {
      return started(client);
    },
    restart: async () => {
      client?.close();
      await running?.close();
      await start();
    },
  };
}
