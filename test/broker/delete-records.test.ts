import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { Kafka, logLevel, type Admin, type Producer } from 'kafkajs';
import { ApiKey } from '../../src/protocol/generated';
import type { DeleteRecordsResponse } from '../../src/protocol/generated/DeleteRecordsResponse';
import type { ListOffsetsResponse } from '../../src/protocol/generated/ListOffsetsResponse';
import { ErrorCode } from '../../src/common/errors';
import { startBroker, type RunningBroker } from '../../src/broker';
import { RawClient } from '../helpers/raw-client';

describe('DeleteRecords', function () {
  this.timeout(20000);
  let dataDir: string;
  let running: RunningBroker;
  let c: RawClient;
  let admin: Admin;
  let producer: Producer;

  async function connect(): Promise<void> {
    const kafka = new Kafka({ brokers: [running.bootstrap], clientId: 'delete-records-test', logLevel: logLevel.NOTHING });
    admin = kafka.admin();
    producer = kafka.producer();
    await Promise.all([admin.connect(), producer.connect()]);
    c = await RawClient.connect(running.port);
  }
  async function disconnect(): Promise<void> {
    c.close();
    await Promise.all([admin.disconnect(), producer.disconnect()]);
  }

  before(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'fjord-delete-records-'));
    running = await startBroker({ dataDir, logLevel: 'silent' });
    await connect();
    await admin.createTopics({
      topics: [
        { topic: 'events', numPartitions: 2 },
        // Small segments: every batch of 5 records rolls a new one.
        { topic: 'segments', numPartitions: 1, configEntries: [{ name: 'internal.segment.bytes', value: '200' }] },
        { topic: 'compacted', numPartitions: 1, configEntries: [{ name: 'cleanup.policy', value: 'compact' }] },
        { topic: 'by-kafkajs', numPartitions: 1 },
      ],
    });
    for (const topic of ['events', 'segments', 'by-kafkajs']) {
      for (let b = 0; b < 2; b++) {
        await producer.send({ topic, acks: -1, messages: Array.from({ length: 5 }, (_, i) => ({ partition: 0, value: `value-${b}-${i}` })) });
      }
    }
  });
  after(async () => {
    await disconnect();
    await running.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  async function deleteTo(topic: string, offset: number, partition = 0, version = 2) {
    const res = await c.request<DeleteRecordsResponse>(ApiKey.DeleteRecords, version, {
      topics: [{ name: topic, partitions: [{ partitionIndex: partition, offset: BigInt(offset) }] }], timeoutMs: 1000,
    });
    const p = res.topics[0].partitions[0];
    expect(res.topics[0].name).to.equal(topic);
    expect(p.partitionIndex).to.equal(partition);
    return [p.errorCode, Number(p.lowWatermark)];
  }
  async function earliest(topic: string, partition = 0): Promise<number> {
    const res = await c.request<ListOffsetsResponse>(ApiKey.ListOffsets, 7, {
      replicaId: -1, isolationLevel: 0, topics: [{ name: topic, partitions: [{ partitionIndex: partition, currentLeaderEpoch: -1, timestamp: -2n, maxNumOffsets: 1 }] }],
    });
    expect(res.topics[0].partitions[0].errorCode).to.equal(ErrorCode.NONE);
    return Number(res.topics[0].partitions[0].offset);
  }

  it('moves the log start offset, and ListOffsets earliest follows', async () => {
    expect(await earliest('events')).to.equal(0);
    expect(await deleteTo('events', 3)).to.deep.equal([ErrorCode.NONE, 3]);
    expect(await earliest('events')).to.equal(3);
    // Below the log start offset: nothing changes, the answer is the current low watermark.
    expect(await deleteTo('events', 1, 0, 0)).to.deep.equal([ErrorCode.NONE, 3]);
    expect(await deleteTo('events', 3, 0, 1)).to.deep.equal([ErrorCode.NONE, 3]);
    expect(await earliest('events')).to.equal(3);
    const offsets = await admin.fetchTopicOffsets('events');
    expect(offsets.find((o) => o.partition === 0)).to.deep.equal({ partition: 0, offset: '10', high: '10', low: '3' });
  });

  it('rejects offsets past the high watermark and negative ones; -1 means the high watermark', async () => {
    expect(await deleteTo('events', 11)).to.deep.equal([ErrorCode.OFFSET_OUT_OF_RANGE, -1]);
    expect(await deleteTo('events', -2)).to.deep.equal([ErrorCode.OFFSET_OUT_OF_RANGE, -1]);
    expect(await earliest('events')).to.equal(3);
    expect(await deleteTo('events', -1, 1)).to.deep.equal([ErrorCode.NONE, 0]); // empty partition: HW 0
    expect(await deleteTo('events', -1)).to.deep.equal([ErrorCode.NONE, 10]);
    expect(await earliest('events')).to.equal(10);
  });

  it('answers per partition: unknown partitions, compacted topics, duplicates', async () => {
    expect(await deleteTo('no-such-topic', 0)).to.deep.equal([ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, -1]);
    expect(await deleteTo('events', 0, 7)).to.deep.equal([ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, -1]);
    expect(await deleteTo('compacted', 0)).to.deep.equal([ErrorCode.POLICY_VIOLATION, -1]);
    const res = await c.request<DeleteRecordsResponse>(ApiKey.DeleteRecords, 2, {
      topics: [
        { name: 'segments', partitions: [{ partitionIndex: 0, offset: 1n }] },
        { name: 'compacted', partitions: [{ partitionIndex: 0, offset: 0n }] },
        { name: 'segments', partitions: [{ partitionIndex: 0, offset: 2n }] },
      ],
      timeoutMs: 1000,
    });
    expect(res.topics.map((t) => [t.name, t.partitions.map((p) => [p.partitionIndex, p.errorCode, Number(p.lowWatermark)])])).to.deep.equal([
      ['segments', [[0, ErrorCode.NONE, 2]]],
      ['compacted', [[0, ErrorCode.POLICY_VIOLATION, -1]]],
    ]);
  });

  it('deletes whole segments below the new start', async () => {
    const log = running.broker.replicas.partition('segments', 0)!.log;
    const before = log.segmentInfo();
    expect(before.map((s) => s.baseOffset)).to.deep.equal([0, 5]);
    const sizeBefore = log.size;
    expect(await deleteTo('segments', 7)).to.deep.equal([ErrorCode.NONE, 7]);
    expect(log.segmentInfo().map((s) => s.baseOffset)).to.deep.equal([5]);
    expect(log.size).to.equal(sizeBefore - before[0].size);
  });

  it('serves kafkajs deleteTopicRecords, and the start offset survives a restart', async () => {
    await admin.fetchTopicMetadata({ topics: ['by-kafkajs'] }); // kafkajs looks the leader up in its cached metadata
    await admin.deleteTopicRecords({ topic: 'by-kafkajs', partitions: [{ partition: 0, offset: '6' }] });
    expect(await earliest('by-kafkajs')).to.equal(6);
    await disconnect();
    await running.close();
    running = await startBroker({ dataDir, logLevel: 'silent' });
    await connect();
    expect(await earliest('by-kafkajs')).to.equal(6);
    expect(await earliest('events')).to.equal(10);
    expect(await earliest('segments')).to.equal(7);
  });
});
