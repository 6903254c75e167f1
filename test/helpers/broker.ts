// Starts an in-process broker for a test suite, on a free port with a temporary data dir.
import { startBroker, type RunningBroker, type StartBrokerOptions } from '../../src/broker';

export function withBroker(opts: StartBrokerOptions = {}): { current: () => RunningBroker } {
  let running: RunningBroker | undefined;
  before(async () => {
    running = await startBroker({ logLevel: 'silent', ...opts });
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
