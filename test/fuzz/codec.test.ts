// The short form of the codec fuzzing (the long form: `npm run fuzz`). A failure prints its seed and
// input; FUZZ_SEED=<seed> replays it.
import { expect } from 'chai';
import { fuzzCodecs, fuzzScanBatches } from './codec-fuzz';

const seed = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : (Date.now() & 0x7fffffff);

describe(`codec fuzzing (seed ${seed})`, function () {
  this.timeout(60000);

  it('decodes every spec at every version without throwing anything but ProtocolError or RangeError, and round-trips', () => {
    let inputs = 0;
    const failures = fuzzCodecs(seed, 3, () => inputs++);
    expect(inputs).to.be.greaterThan(6000);
    expect(failures, JSON.stringify(failures.slice(0, 5).map((f) => ({ ...f, input: f.input.slice(0, 200) })), null, 1)).to.deep.equal([]);
  });

  it('scanBatches answers mutated real batches with a result, never an exception', () => {
    const failures = fuzzScanBatches(seed, 3000);
    expect(failures, JSON.stringify(failures.slice(0, 5).map((f) => ({ ...f, input: f.input.slice(0, 200) })), null, 1)).to.deep.equal([]);
  });
});
