// Pipelined Produce on one connection: the cost of the connection layer's request ordering.
// Starts `bin/fjord start` as a child (its own process and data dir), creates a 6-partition topic
// and sends Produce requests (acks=1; one 16 KiB batch of 16 x 1 KiB records per partition, so
// ~96 KiB a request) with up to 5 unanswered at once, as the Java producer does, for --seconds.
// Prints records/s and the broker's CPU time per request (less sensitive to a busy machine). Run: npm run build && node dist/bench/pipelined-produce.js [--seconds 10]
// [--fjord path/to/bin/fjord] (another checkout's build, to compare two commits).
import * as net from 'node:net';
import { ApiKey } from '../src/protocol/generated';
import { buildBatchSync } from '../src/records/records';
import { RawClient } from '../test/helpers/raw-client';
import { arg, startFjord } from './fjord-process';

const PARTITIONS = 6;
const RECORDS_PER_BATCH = 16;
const IN_FLIGHT = 5;
const PRODUCE_VERSION = 9;

async function main(): Promise<void> {
  const seconds = Number(arg('seconds', '10'));
  const broker = await startFjord(arg('fjord', '') || undefined);
  const socket = net.connect({ port: broker.port, host: '127.0.0.1' });
  socket.setNoDelay(true);
  await new Promise((r) => socket.once('connect', r));

  // Responses are counted by their size prefixes; their contents are not needed.
  let pending: Buffer = Buffer.alloc(0);
  let onResponse: () => void = () => undefined;
  socket.on('data', (d: Buffer) => {
    pending = pending.length ? Buffer.concat([pending, d]) : d;
    while (pending.length >= 4 && pending.length >= 4 + pending.readInt32BE(0)) {
      pending = pending.subarray(4 + pending.readInt32BE(0));
      onResponse();
    }
  });
  let correlationId = 1;
  const created = new Promise<void>((r) => (onResponse = r));
  socket.write(RawClient.frame(ApiKey.CreateTopics, 5, {
    topics: [{ name: 'bench', numPartitions: PARTITIONS, replicationFactor: 1, assignments: [], configs: [] }],
    timeoutMs: 30000, validateOnly: false,
  }, correlationId++));
  await created;

  const value = Buffer.alloc(1000, 'x');
  const batch = buildBatchSync({ records: Array.from({ length: RECORDS_PER_BATCH }, () => ({ key: null, value, headers: [] })) });
  // One frame sent again and again (the broker answers each; the correlation id does not matter here).
  const produce = RawClient.frame(ApiKey.Produce, PRODUCE_VERSION, {
    transactionalId: null, acks: 1, timeoutMs: 30000,
    topicData: [{ name: 'bench', partitionData: Array.from({ length: PARTITIONS }, (_, index) => ({ index, records: batch })) }],
  }, correlationId);

  let answered = 0;
  let sent = 0;
  const deadline = Date.now() + seconds * 1000;
  const started = process.hrtime.bigint();
  const ticksBefore = broker.cpuTicks();
  await new Promise<void>((done) => {
    const sendMore = () => {
      while (sent - answered < IN_FLIGHT && Date.now() < deadline) {
        socket.write(produce);
        sent++;
      }
      if (sent === answered) done();
    };
    onResponse = () => {
      answered++;
      sendMore();
    };
    sendMore();
  });
  const elapsed = Number(process.hrtime.bigint() - started) / 1e9;
  const records = answered * PARTITIONS * RECORDS_PER_BATCH;
  const cpuMs = (broker.cpuTicks() - ticksBefore) * 10;
  console.log(`${Math.round(records / elapsed)} records/s (${answered} requests in ${elapsed.toFixed(1)} s), ` +
    `broker CPU ${(cpuMs * 1000 / answered).toFixed(0)} us a request`);
  socket.destroy();
  await broker.stop();
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
