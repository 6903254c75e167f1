// Start-up after a crash: the listener opens before the logs are recovered, and a partition not
// online yet answers NOT_LEADER_OR_FOLLOWER (Kafka's answer for a partition it does not host yet),
// which clients retry; once it is online the same requests succeed, at the right offsets.
import { expect } from 'chai';
import { cp, mkdtemp, readdir, rm } from 'node:fs/promises';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { startBroker } from '../../src/broker';
import { ApiKey } from '../../src/protocol/generated';
import type { ListOffsetsResponse } from '../../src/protocol/generated/ListOffsetsResponse';
import type { ProduceResponse } from '../../src/protocol/generated/ProduceResponse';
import { ErrorCode } from '../../src/common/errors';
import { buildBatchSync } from '../../src/records/records';
import { RawClient } from '../helpers/raw-client';
import { makeBatch } from '../storage/helpers';

const TOPIC = 'big';
/** Enough unflushed log that its recovery outlasts a connect and a request (each validated batch is read and CRC-checked). */
const UNFLUSHED_BYTES = 96 * 1024 * 1024;
const BATCH_BYTES = 64 * 1024;

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

describe('start-up after a crash', function () {
  this.timeout(60000);
  let root: string;
  before(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'fjord-startup-loading-'));
  });
  after(() => rm(root, { recursive: true, force: true }));

  it('opens the listener before the logs are recovered; a partition still loading answers NOT_LEADER_OR_FOLLOWER until it is online', async () => {
    const dataDir = path.join(root, 'first');
    const first = await startBroker({ dataDir, logLevel: 'silent' });
    await first.broker.controller.createTopic({ name: TOPIC, numPartitions: 1, replicationFactor: 1, assignments: [], configs: {} }, false);
    const log = first.broker.replicas.partition(TOPIC, 0)!.log;
    const batch = makeBatch({ records: 16, payload: BATCH_BYTES - 61, timestamp: Date.now(), epoch: 0 });
    let written = 0;
    for (let n = 0; n * BATCH_BYTES < UNFLUSHED_BYTES; n++) {
      const { done } = log.append(Buffer.from(batch));
      if (n % 64 === 63) await done;
      written += 16;
    }
    await log.append(Buffer.from(batch)).done;
    written += 16;
    // The crash: the files as the next process finds them (no clean-shutdown marker, nothing flushed).
    const crashed = path.join(root, 'crashed');
    await cp(dataDir, crashed, { recursive: true });
    await first.close();

    const port = await freePort();
    const starting = startBroker({ dataDir: crashed, port, logLevel: 'silent' });
    let c: RawClient | undefined;
    while (!c) c = await RawClient.connect(port).catch(() => new Promise<undefined>((r) => setTimeout(() => r(undefined), 2)));
    const produce = async () => (await c!.request<ProduceResponse>(ApiKey.Produce, 9, {
      transactionalId: null, acks: -1, timeoutMs: 1000,
      topicData: [{ name: TOPIC, partitionData: [{ index: 0, records: buildBatchSync({ records: [{ value: 'after the crash' }] }) }] }],
    })).responses[0].partitionResponses[0];
    const listOffsets = async () => (await c!.request<ListOffsetsResponse>(ApiKey.ListOffsets, 7, {
      replicaId: -1, isolationLevel: 0,
      topics: [{ name: TOPIC, partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: -1n, maxNumOffsets: 1 }] }],
    })).topics[0].partitions[0];
    try {
      expect((await produce()).errorCode).to.equal(ErrorCode.NOT_LEADER_OR_FOLLOWER);
      expect((await listOffsets()).errorCode).to.equal(ErrorCode.NOT_LEADER_OR_FOLLOWER);
      const running = await starting;
      expect(running.broker.replicas.partitionLoading(TOPIC, 0)).to.equal(false);
      const produced = await produce();
      expect([produced.errorCode, Number(produced.baseOffset)]).to.deep.equal([ErrorCode.NONE, written]);
      expect(Number((await listOffsets()).offset)).to.equal(written + 1);
    } finally {
      c.close();
      await starting.then((b) => b.close(), () => undefined);
    }
  });

  it('snapshots producer state at every roll, so that after a crash only the active segment is replayed', async () => {
    const dataDir = path.join(root, 'rolls');
    const first = await startBroker({ dataDir, logLevel: 'silent' });
    await first.broker.controller.createTopic({
      name: 'rolling', numPartitions: 1, replicationFactor: 1, assignments: [], configs: { 'internal.segment.bytes': '2000' },
    }, false);
    const c = await RawClient.connect(first.port);
    const send = async (seq: number) => (await c.request<ProduceResponse>(ApiKey.Produce, 9, {
      transactionalId: null, acks: -1, timeoutMs: 1000,
      topicData: [{ name: 'rolling', partitionData: [{ index: 0, records: buildBatchSync({
        producerId: 77, producerEpoch: 0, baseSequence: seq, records: Array.from({ length: 5 }, () => ({ value: 'x'.repeat(100) })),
      }) }] }],
    })).responses[0].partitionResponses[0];
    for (let seq = 0; seq < 100; seq += 5) expect((await send(seq)).errorCode).to.equal(ErrorCode.NONE);
    const partition = first.broker.replicas.partition('rolling', 0)!;
    await partition.log.producerState.snapshotsWritten();
    const snapshots = (await readdir(partition.log.dir)).filter((f) => f.endsWith('.snapshot')).map((f) => Number(f.slice(0, 20)));
    expect(snapshots.length).to.be.above(0);
    // Taken at the log end right after a roll: the replay after a crash starts in the active segment.
    expect(Math.max(...snapshots)).to.be.at.least(partition.log.activeSegmentBaseOffset);
    const crashed = path.join(root, 'rolls-crashed');
    await cp(dataDir, crashed, { recursive: true });
    c.close();
    await first.close();

    const second = await startBroker({ dataDir: crashed, logLevel: 'silent' });
    const c2 = await RawClient.connect(second.port);
    try {
      const retried = (await c2.request<ProduceResponse>(ApiKey.Produce, 9, {
        transactionalId: null, acks: -1, timeoutMs: 1000,
        topicData: [{ name: 'rolling', partitionData: [{ index: 0, records: buildBatchSync({
          producerId: 77, producerEpoch: 0, baseSequence: 95, records: Array.from({ length: 5 }, () => ({ value: 'x'.repeat(100) })),
        }) }] }],
      })).responses[0].partitionResponses[0];
      expect([retried.errorCode, Number(retried.baseOffset)]).to.deep.equal([ErrorCode.NONE, 95]);
      expect(second.broker.replicas.partition('rolling', 0)!.log.logEndOffset).to.equal(100);
    } finally {
      c2.close();
      await second.close();
    }
  });
});
