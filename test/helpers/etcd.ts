// A mocha suite's etcd (src/local-etcd.ts starts the real servers).
import { startEtcdCluster, type RunningEtcd } from '../../src/local-etcd';

export { startEtcd, startEtcdCluster, type EtcdMember, type RunningEtcd } from '../../src/local-etcd';

const READY_TIMEOUT_MS = 15_000;

/** A mocha suite's etcd: started before its tests, stopped (and its data removed) after them. */
export function withEtcd(size = 1): { current: () => RunningEtcd } {
  let running: RunningEtcd | undefined;
  before(async function () {
    this.timeout(READY_TIMEOUT_MS + 5000);
    running = await startEtcdCluster(size);
  });
  after(async () => {
    await running?.stop();
  });
  return {
    current: () => {
      if (!running) throw new Error('etcd not started');
      return running;
    },
  };
}
