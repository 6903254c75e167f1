// The handler audit as a test: for every API and version the broker serves, requests with every
// field at a boundary (see Profile: all nullable fields null, everything empty, one element each,
// every value at its maximum, at its minimum). Each must get an answer that decodes, never a closed
// connection (an encoder that refused the handler's response, a handler that threw).
import { expect } from 'chai';
import { withBroker } from '../helpers/broker';
import { RawClient } from '../helpers/raw-client';
import { loadSpecDir, SPEC_DIR } from '../protocol/spec-util';
import {
  FUZZ_BROKER_CONFIG, exchange, expectationOf, overrides, requestFrame, servedApis,
} from './broker-fuzz';
import { fixtureBatches } from './codec-fuzz';
import { Prng, PROFILES, SpecBytes } from './spec-bytes';

describe('every API and version with boundary values', function () {
  this.timeout(120000);
  const broker = withBroker({ config: FUZZ_BROKER_CONFIG });

  it('answers every request, at every version, with nulls, empties, one element, maximum and minimum values', async () => {
    const port = broker.current().port;
    const served = await servedApis(port, '127.0.0.1');
    const servedByKey = new Map(served.map((s) => [s.apiKey, s]));
    const specs = new Map([...loadSpecDir(SPEC_DIR).values()].filter((s) => s.type === 'request').map((s) => [s.apiKey!, s]));
    const batch = fixtureBatches()[0];
    const failures: string[] = [];
    let sent = 0;
    let conn = await RawClient.connect(port);
    for (const api of served) {
      for (let version = api.min; version <= api.max; version++) {
        for (const profile of PROFILES) {
          const rng = new Prng(api.apiKey * 1000 + version);
          const body = new SpecBytes(specs.get(api.apiKey)!, version, rng, {
            hostile: false, unknownTags: true, profile, names: ['boundary-topic'], records: () => batch, override: overrides(),
          }).message();
          const frame = requestFrame(api.apiKey, version, ++sent, 'boundary', body);
          const what = `${specs.get(api.apiKey)!.name} v${version} ${profile}`;
          const outcome = await exchange(conn, frame, expectationOf(frame, servedByKey));
          if (outcome.problem !== null) failures.push(`${what}: ${outcome.problem}`);
          if (outcome.closed) conn = await RawClient.connect(port);
        }
      }
    }
    conn.close();
    expect(failures).to.deep.equal([]);
    expect(sent).to.be.greaterThan(served.length * PROFILES.length);
  });
});
