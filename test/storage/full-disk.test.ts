// A full disk, as an operator meets it: produce until writes fail, read back everything that was
// acknowledged while the disk is still full, free space, produce again, restart, read again.
// Nothing acknowledged may be lost or duplicated and no acknowledged offset reused. Run twice:
// with the simulated disk of src/common/durable-file.ts (writes fail part-way with ENOSPC), and on a
// real 4 MiB tmpfs when this process may mount one (root on Linux; skipped otherwise).
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { cp } from 'node:fs/promises';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startBroker, type RunningBroker } from '../../src/broker';
import { ApiKey } from '../../src/protocol/generated';
import type { FetchResponse } from '../../src/protocol/generated/FetchResponse';
import type { ListOffsetsResponse } from '../../src/protocol/generated/ListOffsetsResponse';
import type { ProduceResponse } from '../../src/protocol/generated/ProduceResponse';
import { ErrorCode } from '../../src/common/errors';
import { buildBatchSync, decodeRecordsSync } from '../../src/records/records';
import { simulateFullDisk } from '../../src/common/durable-file';
import { RawClient } from '../helpers/raw-client';

const TOPIC = 'disk';
const PRODUCER_ID = 4242;
const RECORDS_PER_BATCH = 20;
const VALUE_BYTES = 200;

/** One idempotent producer writing batches of numbered records to one partition, as a client would. */
class Producer {
  /** value -> the offset its acknowledgement gave it. */
  readonly acked = new Map<string, number>();
  nextSeq = 0;
  failures = 0;

  constructor(private c: RawClient) {}

  reconnect(c: RawClient): void {
    this.c = c;
  }

  static value(seq: number): string {
    return `record-${String(seq).padStart(8, '0')}-`.padEnd(VALUE_BYTES, 'x');
  }

  batch(seq: number): Buffer {
    return buildBatchSync({
      producerId: PRODUCER_ID, producerEpoch: 0, baseSequence: seq,
      records: Array.from({ length: RECORDS_PER_BATCH }, (_, i) => ({ value: Producer.value(seq + i) })),
    });
  }

  /**
   * Sends `count` batches pipelined on one connection; records the acknowledged ones. After a
   * failure the producer resends from the first failed sequence (the later ones fail too). Returns
   * the error codes in order.
   */
  async sendPipelined(count: number): Promise<number[]> {
    const first = this.nextSeq;
    for (let i = 0; i < count; i++) {
      this.c.send(ApiKey.Produce, 9, {
        transactionalId: null, acks: -1, timeoutMs: 5000,
        topicData: [{ name: TOPIC, partitionData: [{ index: 0, records: this.batch(first + i * RECORDS_PER_BATCH) }] }],
      });
    }
    const codes: number[] = [];
    let failedAt: number | undefined;
    for (let i = 0; i < count; i++) {
      const p = (await this.c.receive<ProduceResponse>(ApiKey.Produce, 9)).body.responses[0].partitionResponses[0];
      codes.push(p.errorCode);
      const seq = first + i * RECORDS_PER_BATCH;
      if (p.errorCode === ErrorCode.NONE) {
        expect(failedAt, 'a batch behind a failed one was acknowledged').to.equal(undefined);
        for (let r = 0; r < RECORDS_PER_BATCH; r++) this.acked.set(Producer.value(seq + r), Number(p.baseOffset) + r);
      } else if (failedAt === undefined) {
        expect(p.errorCode).to.equal(ErrorCode.KAFKA_STORAGE_ERROR);
        failedAt = seq;
      } else {
        // Behind a failed batch: refused, or (once the partition has forgotten the failed one) a sequence gap, as Kafka answers.
        expect(p.errorCode).to.be.oneOf([ErrorCode.KAFKA_STORAGE_ERROR, ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER]);
      }
    }
    this.nextSeq = failedAt ?? first + count * RECORDS_PER_BATCH;
    if (failedAt !== undefined) this.failures++;
    return codes;
  }
}

async function readAll(c: RawClient, broker: RunningBroker): Promise<{ offsets: number[]; values: string[]; highWatermark: number }> {
  const offsets: number[] = [];
  const values: string[] = [];
  let next = 0;
  let highWatermark: number;
  for (;;) {
    const res = await c.request<FetchResponse>(ApiKey.Fetch, 12, {
      replicaId: -1, maxWaitMs: 0, minBytes: 0, maxBytes: 1 << 20, isolationLevel: 0, sessionId: 0, sessionEpoch: -1,
      topics: [{ topic: TOPIC, topicId: broker.broker.controller.topic(TOPIC)?.id, partitions: [{
        partition: 0, fetchOffset: BigInt(next), partitionMaxBytes: 1 << 20, currentLeaderEpoch: -1, logStartOffset: -1n,
      }] }],
      forgottenTopicsData: [], rackId: '',
    });
    const p = res.responses[0].partitions[0];
    expect(p.errorCode, 'Fetch error').to.equal(ErrorCode.NONE);
    highWatermark = Number(p.highWatermark);
    const records = p.records ?? Buffer.alloc(0);
    if (records.length === 0) break;
    for (let pos = 0; pos < records.length; ) {
      const size = records.readInt32BE(pos + 8) + 12;
      for (const r of decodeRecordsSync(records.subarray(pos, pos + size))) {
        offsets.push(r.offset);
        values.push(r.value!.toString());
        next = r.offset + 1;
      }
      pos += size;
    }
  }
  return { offsets, values, highWatermark };
}

async function latestOffset(c: RawClient): Promise<{ errorCode: number; offset: number }> {
  const res = await c.request<ListOffsetsResponse>(ApiKey.ListOffsets, 7, {
    replicaId: -1, isolationLevel: 0,
    topics: [{ name: TOPIC, partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: -1n, maxNumOffsets: 1 }] }],
  });
  const p = res.topics[0].partitions[0];
  return { errorCode: p.errorCode, offset: Number(p.offset) };
}

/** The log holds exactly the acknowledged records, each once, at the offsets they were given, offsets 0.. without a gap. */
async function expectExactlyAcked(c: RawClient, broker: RunningBroker, acked: ReadonlyMap<string, number>): Promise<void> {
  const { offsets, values, highWatermark } = await readAll(c, broker);
  expect(offsets).to.deep.equal(offsets.map((_, i) => i), 'offsets are not 0, 1, 2, ...');
  expect(new Set(values).size).to.equal(values.length, 'a record is there twice');
  expect(values.length).to.equal(acked.size, 'the log does not hold exactly the acknowledged records');
  values.forEach((v, i) => expect(acked.get(v), v).to.equal(offsets[i]));
  expect(highWatermark).to.equal(values.length);
  expect(await latestOffset(c)).to.deep.equal({ errorCode: ErrorCode.NONE, offset: values.length });
}

interface Disk {
  dataDir: string;
  /**
   * True for the simulated disk: nothing fits until free(). A real one is full only for writes that
   * do not fit: cutting a failed write frees its blocks, and a smaller write may then succeed.
   */
  staysFull: boolean;
  /** Where a copy of the data dir taken while the disk is full goes: what a crash then would leave. */
  crashImage: string;
  /** The topic's segment.bytes: small, so that segments roll (index files, producer snapshots) while the disk fills. */
  segmentBytes: number;
  /** Makes the disk full, or reports whether it is (a real disk fills from the writes themselves). */
  fill(): void;
  free(): void;
}

async function fullDiskScenario(disk: Disk): Promise<void> {
  let broker = await startBroker({ dataDir: disk.dataDir, logLevel: 'silent', config: { 'num.partitions': '1' } });
  let c = await RawClient.connect(broker.port);
  try {
    await broker.broker.controller.createTopic({
      name: TOPIC, numPartitions: 1, replicationFactor: 1, assignments: [], configs: { 'internal.segment.bytes': String(disk.segmentBytes) },
    }, false);
    const producer = new Producer(c);
    expect(await producer.sendPipelined(5)).to.deep.equal([0, 0, 0, 0, 0]);

    disk.fill();
    for (let round = 0; producer.failures < 3; round++) {
      expect(round, 'the disk never filled').to.be.below(5000);
      await producer.sendPipelined(4);
    }

    // Still full: what was acknowledged reads back (Fetch and ListOffsets).
    await expectExactlyAcked(c, broker, producer.acked);
    if (disk.staysFull) {
      // A retry of the failed batch is not answered as a duplicate of the write that failed.
      const ackedWhileFull = producer.acked.size;
      for (let i = 0; i < 3; i++) expect(await producer.sendPipelined(1)).to.deep.equal([ErrorCode.KAFKA_STORAGE_ERROR]);
      expect(producer.acked.size).to.equal(ackedWhileFull);
      // A fire-and-forget producer (acks=0) gets no answer; its failed write must not hurt the broker.
      const fireAndForget = await RawClient.connect(broker.port);
      fireAndForget.send(ApiKey.Produce, 9, {
        transactionalId: null, acks: 0, timeoutMs: 5000,
        topicData: [{ name: TOPIC, partitionData: [{ index: 0, records: buildBatchSync({ records: [{ value: 'acks=0' }] }) }] }],
      });
      await new Promise((r) => setTimeout(r, 100));
      fireAndForget.close();
      await expectExactlyAcked(c, broker, producer.acked);
    }
    await cp(disk.dataDir, disk.crashImage, { recursive: true });
    const ackedAtCrash = new Map(producer.acked);

    // Space returns: the same log takes writes again, from the offset after the last acknowledged one.
    const ackedBeforeFree = producer.acked.size;
    disk.free();
    let codes: number[] = [];
    for (let i = 0; i < 50 && codes[0] !== ErrorCode.NONE; i++) {
      codes = await producer.sendPipelined(1);
      if (codes[0] !== ErrorCode.NONE) await new Promise((r) => setTimeout(r, 20));
    }
    expect(codes).to.deep.equal([ErrorCode.NONE]);
    expect(producer.acked.get(Producer.value(producer.nextSeq - RECORDS_PER_BATCH))).to.equal(ackedBeforeFree);
    expect(await producer.sendPipelined(5)).to.deep.equal([0, 0, 0, 0, 0]);
    await expectExactlyAcked(c, broker, producer.acked);

    // A restart finds the same log, and the producer's last batch is still known as a duplicate.
    c.close();
    await broker.close();
    broker = await startBroker({ dataDir: disk.dataDir, logLevel: 'silent' });
    c = await RawClient.connect(broker.port);
    producer.reconnect(c);
    await expectExactlyAcked(c, broker, producer.acked);
    producer.nextSeq -= RECORDS_PER_BATCH;
    expect(await producer.sendPipelined(1)).to.deep.equal([ErrorCode.NONE]);
    expect(await producer.sendPipelined(2)).to.deep.equal([0, 0]);
    await expectExactlyAcked(c, broker, producer.acked);

    // A crash while the disk was full: recovery finds every acknowledged record and nothing else.
    c.close();
    await broker.close();
    broker = await startBroker({ dataDir: disk.crashImage, logLevel: 'silent' });
    c = await RawClient.connect(broker.port);
    await expectExactlyAcked(c, broker, ackedAtCrash);
  } finally {
    c.close();
    disk.free();
    await broker.close();
  }
}

describe('a full disk', function () {
  this.timeout(60000);
  let root: string;
  // A failed write nobody awaits (acks=0) would crash a broker run by the CLI (Node's default for unhandled rejections).
  const unhandled: unknown[] = [];
  const onUnhandled = (e: unknown) => unhandled.push(e);
  before(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'fjord-full-disk-'));
    process.on('unhandledRejection', onUnhandled);
  });
  afterEach(() => expect(unhandled.splice(0), 'unhandled rejections').to.deep.equal([]));
  after(() => {
    process.off('unhandledRejection', onUnhandled);
    simulateFullDisk(undefined);
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('simulated (writes fail part-way with ENOSPC): acknowledged records stay readable, none lost or duplicated, no offset reused', async () => {
    const batchBytes = new Producer(undefined as unknown as RawClient).batch(0).length;
    await fullDiskScenario({
      dataDir: path.join(root, 'simulated'),
      crashImage: path.join(root, 'simulated-crash'),
      staysFull: true,
      segmentBytes: 20_000,
      // Two and a half batches still fit: the third is cut short.
      fill: () => simulateFullDisk(Math.floor(batchBytes * 2.5)),
      free: () => simulateFullDisk(undefined),
    });
  });

  it('on a real 4 MiB tmpfs (skipped where mount is not permitted)', async function () {
    const mountPoint = path.join(root, 'tmpfs');
    fs.mkdirSync(mountPoint);
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=4m', 'tmpfs', mountPoint], { stdio: 'ignore' });
    } catch {
      this.skip();
    }
    try {
      // A ballast file keeps room for the start-up files; removing it is "freeing space".
      const ballast = path.join(mountPoint, 'ballast');
      fs.writeFileSync(ballast, Buffer.alloc(1 << 20));
      await fullDiskScenario({
        dataDir: path.join(mountPoint, 'data'),
        crashImage: path.join(root, 'tmpfs-crash'),
        staysFull: false,
        segmentBytes: 256 * 1024,
        fill: () => undefined,
        free: () => fs.rmSync(ballast, { force: true }),
      });
    } finally {
      execFileSync('umount', ['-l', mountPoint], { stdio: 'ignore' });
    }
  });
});
