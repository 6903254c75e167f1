// The short form of the broker fuzzing (the long form, the broker in a child process: `npm run fuzz`).
// A failure prints the seed and the frames; FUZZ_SEED=<seed> replays the same inputs.
import { expect } from 'chai';
import { startBroker, type RunningBroker } from '../../src/broker';
import { fuzzBroker, FUZZ_BROKER_CONFIG } from './broker-fuzz';
import { startCapturingProxy, runClientWorkload, goldenRequests, type CapturingProxy } from './capture';

const seed = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : (Date.now() & 0x7fffffff);

describe(`broker fuzzing (seed ${seed})`, function () {
  this.timeout(60000);
  let running: RunningBroker;
  let proxy: CapturingProxy;

  before(async () => {
    proxy = await startCapturingProxy(() => running.port);
    running = await startBroker({
      logLevel: 'silent',
      config: { ...FUZZ_BROKER_CONFIG, 'advertised.listeners': `PLAINTEXT://127.0.0.1:${proxy.port}` },
    });
  });
  after(async () => {
    await proxy.close();
    await running.close();
  });

  it('answers every request that decodes, closes only the connection of one that does not, and the bystander is served', async () => {
    await runClientWorkload(`127.0.0.1:${proxy.port}`);
    const captured = [...proxy.frames, ...goldenRequests()];
    expect(new Set(captured.map((f) => f.readInt16BE(0))).size, 'APIs captured from kafkajs and the golden files').to.be.greaterThan(15);
    const report = await fuzzBroker({ port: running.port, seed, maxInputs: 1500, durationMs: 5000, captured });
    expect(report.failures, JSON.stringify(report.failures.slice(0, 5), null, 1)).to.deep.equal([]);
    expect(report.inputs).to.be.greaterThan(100);
    expect(report.answered, 'most inputs decode and are answered').to.be.greaterThan(report.inputs / 3);
    expect(report.bystanderStalls).to.equal(0);
    expect(report.bystanderRequests).to.be.greaterThan(0);
  });
});
