// Produce throughput of one connection with pipelined requests, per codec: what the Produce path
// costs when each compressed batch is decompressed and its records checked before it is stored.
//
//   node dist/bench/produce-load.js [--root DIR] [--seconds 8] [--codecs none,gzip,lz4,zstd] [--records 16]
//
// Starts `<root>/bin/fjord` (default: this checkout; another built checkout, e.g. the base of a change,
// to compare) on a temporary data dir. Per codec: a topic of 6 partitions; each Produce request carries
// one batch of 16 (--records) records of 1 KB JSON events per partition, acks=1; 5 requests in flight on one
// connection for the given seconds. Prints records/s, MiB/s of record values and the broker's CPU time
// per 1,000 records (all threads, and the event loop's thread alone). The same frame is sent every time (a new correlation id each), so
// the client's own cost stays small next to the broker's.
import * as path from 'node:path';
import { ApiKey } from '../src/protocol/generated';
import type { CreateTopicsResponse } from '../src/protocol/generated/CreateTopicsResponse';
import type { ProduceResponse } from '../src/protocol/generated/ProduceResponse';
import { ErrorCode } from '../src/common/errors';
import { CODEC_NAMES } from '../src/records/compression';
import { buildBatch } from '../src/records/records';
import { RawClient } from '../test/helpers/raw-client';
import { mainThreadCpuSeconds, procStats } from './proc-stats';
import { arg, startFjord } from './fjord-process';

const PARTITIONS = 6;
const VALUE_BYTES = 1024;
const IN_FLIGHT = 5;
const PRODUCE_VERSION = 9;
/** Where the correlation id sits in a request frame: after the size, api key and api version. */
const CORRELATION_ID_OFFSET = 8;

/** `n` bytes of JSON events from a fixed seed: compressible about as real event data is. */
function events(n: number, seed: { s: number }): Buffer {
  const next = () => (seed.s = (seed.s * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
  const kinds = ['click', 'view', 'purchase', 'signup'];
  let s = '';
  while (s.length < n) {
    s += JSON.stringify({ id: `evt-${Math.floor(next() * 1e9)}`, user: `user_${Math.floor(next() * 50000)}`,
      event: kinds[Math.floor(next() * 4)], amount: +(next() * 1000).toFixed(2), page: `/products/${Math.floor(next() * 3000)}` });
  }
  return Buffer.from(s.slice(0, n));
}

let topicsCreated = 0;

async function run(c: RawClient, brokerPid: number, codec: number, seconds: number, recordsPerBatch: number): Promise<string> {
  const topic = `load-${CODEC_NAMES[codec]}-${topicsCreated++}`;
  const created = await c.request<CreateTopicsResponse>(ApiKey.CreateTopics, 7, {
    topics: [{ name: topic, numPartitions: PARTITIONS, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 5000, validateOnly: false,
  });
  if (created.topics[0].errorCode !== ErrorCode.NONE) throw new Error(`CreateTopics: error ${created.topics[0].errorCode}`);
  const seed = { s: 42 };
  const records = Array.from({ length: recordsPerBatch }, (_, i) => ({ key: `k${i}`, value: events(VALUE_BYTES, seed) }));
  const batch = await buildBatch({ records, compression: codec });
  const frame = RawClient.frame(ApiKey.Produce, PRODUCE_VERSION, {
    transactionalId: null, acks: 1, timeoutMs: 5000,
    topicData: [{ name: topic, partitionData: Array.from({ length: PARTITIONS }, (_, index) => ({ index, records: batch })) }],
  }, 0);
  let sent = 0;
  const send = () => {
    const copy = Buffer.from(frame); // the socket may still hold the previous copy
    copy.writeInt32BE(++sent, CORRELATION_ID_OFFSET);
    c.sendBytes(copy);
  };
  let answered = 0;
  let errors = 0;
  const cpuBefore = procStats(brokerPid).cpuSeconds;
  const loopCpuBefore = mainThreadCpuSeconds(brokerPid);
  const started = Date.now();
  while (sent < IN_FLIGHT) send();
  while (Date.now() - started < seconds * 1000) {
    const res = await c.receive<ProduceResponse>(ApiKey.Produce, PRODUCE_VERSION);
    answered++;
    errors += res.body.responses[0].partitionResponses.filter((p) => p.errorCode !== ErrorCode.NONE).length;
    send();
  }
  const elapsed = (Date.now() - started) / 1000;
  const cpuSeconds = procStats(brokerPid).cpuSeconds - cpuBefore;
  const loopCpuSeconds = mainThreadCpuSeconds(brokerPid) - loopCpuBefore;
  while (answered < sent) {
    await c.receive(ApiKey.Produce, PRODUCE_VERSION);
    answered++;
  }
  // Requests answered within the time: the ones still in flight at the end are not counted.
  const counted = (answered - IN_FLIGHT) * PARTITIONS * recordsPerBatch;
  const perSecond = counted / elapsed;
  // Broker CPU per 1,000 records, all threads (the codecs' pool included) and the event loop's alone:
  // less sensitive to a busy machine than the rate.
  const msPerThousand = (seconds: number) => ((seconds * 1e6) / counted).toFixed(1).padStart(5);
  return `${CODEC_NAMES[codec].padEnd(5)} ${perSecond.toFixed(0).padStart(8)} records/s  ${(perSecond * VALUE_BYTES / (1 << 20)).toFixed(1).padStart(6)} MiB/s`
    + `  broker CPU ms per 1000 records: ${msPerThousand(cpuSeconds)} all threads, ${msPerThousand(loopCpuSeconds)} event loop`
    + `  (batch ${batch.length} B, ${errors} partition errors)`;
}

async function main(): Promise<void> {
  const root = path.resolve(arg('root', path.join(__dirname, '..', '..')));
  const seconds = Number(arg('seconds', '8'));
  const recordsPerBatch = Number(arg('records', '16'));
  const codecs = arg('codecs', 'none,gzip,lz4,zstd').split(',').map((name) => {
    const id = CODEC_NAMES.indexOf(name);
    if (id < 0) throw new Error(`unknown codec ${name}`);
    return id;
  });
  const broker = await startFjord(path.join(root, 'bin', 'fjord'));
  try {
    const c = await RawClient.connect(broker.port);
    console.log(`${root}: ${PARTITIONS} partitions x ${recordsPerBatch} x ${VALUE_BYTES} B records a request, acks=1, ${IN_FLIGHT} in flight, ${seconds} s a codec`);
    for (const codec of codecs) console.log(`  ${await run(c, broker.pid, codec, seconds, recordsPerBatch)}`);
    c.close();
  } finally {
    await broker.stop();
  }
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
