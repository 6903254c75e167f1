// Fetch throughput of one consumer connection: what the read path costs (the replica layer's
// fetchMessages, the log reads, response framing), with the produce path out of the picture.
//
//   node dist/bench/fetch-load.js [--root DIR] [--seconds 8] [--mib 256]
//
// Starts `<root>/bin/fjord` (default: this checkout; another built checkout, e.g. the base of a change,
// to compare) on a temporary data dir, fills a topic of 6 partitions with --mib MiB of 1 KB records
// (batches of 16), then fetches it from the start over and over for the given seconds, as a consumer
// does: Fetch v12, 1 MiB per partition, 50 MiB a response, one request at a time (as a consumer has
// one fetch in flight per broker), each partition's next offset taken from the batches it got. Prints MiB/s read and the broker's CPU time per
// MiB (all threads, and the event loop's thread alone).
import * as path from 'node:path';
import { ApiKey } from '../src/protocol/generated';
import type { CreateTopicsResponse } from '../src/protocol/generated/CreateTopicsResponse';
import type { FetchResponse } from '../src/protocol/generated/FetchResponse';
import { ErrorCode } from '../src/common/errors';
import { buildBatch } from '../src/records/records';
import { offsetAfter } from '../src/replica/fetch-reads';
import { RawClient } from '../test/helpers/raw-client';
import { mainThreadCpuSeconds, procStats } from './proc-stats';
import { arg, startFjord } from './fjord-process';

const TOPIC = 'fetch-load';
const PARTITIONS = 6;
const RECORDS_PER_BATCH = 16;
const VALUE_BYTES = 1024;
const FETCH_VERSION = 12;
const MIB = 1 << 20;

async function fill(c: RawClient, mib: number): Promise<number> {
  const created = await c.request<CreateTopicsResponse>(ApiKey.CreateTopics, 7, {
    topics: [{ name: TOPIC, numPartitions: PARTITIONS, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 5000, validateOnly: false,
  });
  if (created.topics[0].errorCode !== ErrorCode.NONE) throw new Error(`CreateTopics: error ${created.topics[0].errorCode}`);
  const records = Array.from({ length: RECORDS_PER_BATCH }, (_, i) => ({ key: `k${i}`, value: Buffer.alloc(VALUE_BYTES, i) }));
  const batch = await buildBatch({ records });
  const requests = Math.ceil((mib * MIB) / (batch.length * PARTITIONS));
  for (let i = 0; i < requests; i++) {
    await c.request(ApiKey.Produce, 9, {
      transactionalId: null, acks: 1, timeoutMs: 5000,
      topicData: [{ name: TOPIC, partitionData: Array.from({ length: PARTITIONS }, (_, index) => ({ index, records: batch })) }],
    });
  }
  return requests * RECORDS_PER_BATCH; // records per partition
}

async function main(): Promise<void> {
  const root = path.resolve(arg('root', path.join(__dirname, '..', '..')));
  const seconds = Number(arg('seconds', '8'));
  const mib = Number(arg('mib', '256'));
  const broker = await startFjord(path.join(root, 'bin', 'fjord'));
  try {
    const c = await RawClient.connect(broker.port);
    const end = await fill(c, mib);
    const next = new Array<number>(PARTITIONS).fill(0);
    const fetch = () => c.request<FetchResponse>(ApiKey.Fetch, FETCH_VERSION, {
      replicaId: -1, maxWaitMs: 0, minBytes: 1, maxBytes: 50 * MIB, isolationLevel: 0, sessionId: 0, sessionEpoch: -1,
      topics: [{ topic: TOPIC, partitions: next.map((offset, partition) => ({
        partition, fetchOffset: BigInt(offset), partitionMaxBytes: MIB, currentLeaderEpoch: -1, logStartOffset: -1n,
      })) }],
      forgottenTopicsData: [], rackId: '',
    });
    let bytes = 0;
    const cpuBefore = procStats(broker.pid).cpuSeconds;
    const loopCpuBefore = mainThreadCpuSeconds(broker.pid);
    const started = Date.now();
    while (Date.now() - started < seconds * 1000) {
      const res = await fetch();
      for (const p of res.responses[0].partitions) {
        if (p.errorCode !== ErrorCode.NONE) throw new Error(`Fetch partition ${p.partitionIndex}: error ${p.errorCode}`);
        const records = p.records!;
        if (records.length === 0) continue;
        bytes += records.length;
        const after = offsetAfter(records);
        next[p.partitionIndex] = after >= end ? 0 : after;
      }
    }
    const elapsed = (Date.now() - started) / 1000;
    const cpuSeconds = procStats(broker.pid).cpuSeconds - cpuBefore;
    const loopCpuSeconds = mainThreadCpuSeconds(broker.pid) - loopCpuBefore;
    c.close();
    const readMib = bytes / MIB;
    console.log(`${root}: ${PARTITIONS} partitions of ${mib} MiB in all, 1 MiB a partition a fetch, ${seconds} s`);
    console.log(`  ${(readMib / elapsed).toFixed(0).padStart(6)} MiB/s  broker CPU ms per MiB: ${(cpuSeconds * 1000 / readMib).toFixed(2)} all threads,`
      + ` ${(loopCpuSeconds * 1000 / readMib).toFixed(2)} event loop`);
  } finally {
    await broker.stop();
  }
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
