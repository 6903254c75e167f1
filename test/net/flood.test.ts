// A bystander's latency while thousands of connections are open and one client floods the broker
// with pipelined requests (issue 11): its p99 must stay within 3x its idle p99. The flooder is a
// process of its own, so its client work does not run on the broker's event loop; quiet and
// flooded phases alternate (the flooder pauses), so that the machine's own noise falls on both.
// npm test opens 500 connections; the full size runs on demand:
//   FLOOD_CONNECTIONS=2000 npx mocha --no-config --timeout 120000 dist/test/net/flood.test.js
import { expect } from 'chai';
import { fork } from 'node:child_process';
import * as path from 'node:path';
import { ApiKey } from '../../src/protocol/generated';
import { RawClient } from '../helpers/raw-client';
import { withBroker } from '../helpers/broker';

const CONNECTIONS = Number(process.env.FLOOD_CONNECTIONS ?? 500);
const ROUNDS = 6;
const SAMPLES = 200;

/** The bystander's round-trip times, one ApiVersions at a time, in ms. */
async function roundTrips(c: RawClient): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    const started = process.hrtime.bigint();
    await c.request(ApiKey.ApiVersions, 3, { clientSoftwareName: 'bystander', clientSoftwareVersion: '1' });
    times.push(Number(process.hrtime.bigint() - started) / 1e6);
  }
  return times;
}

const percentile = (times: number[], p: number) => [...times].sort((a, b) => a - b)[Math.floor(times.length * p)];

describe(`flood: ${CONNECTIONS} connections and a client pipelining as fast as it can`, function () {
  this.timeout(120000);
  const broker = withBroker();

  it("keeps a bystander's p99 within 3x its idle p99", async () => {
    const port = broker.current().port;
    const idle: RawClient[] = [];
    for (let i = 0; i < CONNECTIONS; i += 250) {
      idle.push(...await Promise.all(Array.from({ length: Math.min(250, CONNECTIONS - i) }, () => RawClient.connect(port))));
    }
    const bystander = await RawClient.connect(port);
    await roundTrips(bystander); // warm-up

    const flooder = fork(path.join(__dirname, 'flooder.js'), [String(port)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    const answered = new Promise<number>((resolve) => flooder.once('message', (m) => resolve(Number(m))));
    const quiet: number[] = [];
    const flooded: number[] = [];
    try {
      for (let round = 0; round < ROUNDS; round++) {
        flooder.send('pause');
        await new Promise((r) => setTimeout(r, 200));
        quiet.push(...await roundTrips(bystander));
        flooder.send('flood');
        await new Promise((r) => setTimeout(r, 200));
        flooded.push(...await roundTrips(bystander));
      }
      flooder.send('stop');
      const responses = await answered;
      const summary = `idle p99 ${percentile(quiet, 0.99).toFixed(2)} ms, flooded p99 ${percentile(flooded, 0.99).toFixed(2)} ms ` +
        `(p50 ${percentile(quiet, 0.5).toFixed(2)} / ${percentile(flooded, 0.5).toFixed(2)} ms); the flooder got ${responses} answers`;
      if (process.env.FLOOD_CONNECTIONS) console.log(`      ${summary}`);
      expect(responses, 'the flooder was served too').to.be.above(1000);
      expect(percentile(flooded, 0.99), summary).to.be.at.most(3 * percentile(quiet, 0.99));
    } finally {
      flooder.kill();
      bystander.close();
      for (const c of idle) c.close();
    }
  });
});
