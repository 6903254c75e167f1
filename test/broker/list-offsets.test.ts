import { expect } from 'chai';
import { CompressionTypes, Kafka, logLevel, type Admin, type Producer } from 'kafkajs';
import { ApiKey } from '../../src/protocol/generated';
import type { ListOffsetsResponse } from '../../src/protocol/generated/ListOffsetsResponse';
import type { DeleteRecordsResponse } from '../../src/protocol/generated/DeleteRecordsResponse';
import { ErrorCode } from '../../src/common/errors';
import { ATTRIBUTES_OFFSET, COMPRESSION_CODEC_MASK, Compression } from '../../src/records/batch';
import { RawClient } from '../helpers/raw-client';
import { withBroker } from '../helpers/broker';

const T = 1_700_000_000_000;
const EARLIEST = -2;
const LATEST = -1;
const MAX_TIMESTAMP = -3;

interface Answer { errorCode: number; offset: number; timestamp: number; leaderEpoch: number }

describe('ListOffsets', function () {
  this.timeout(20000);
  const broker = withBroker();
  let c: RawClient;
  let admin: Admin;
  let producer: Producer;

  before(async () => {
    const kafka = new Kafka({ brokers: [broker.current().bootstrap], clientId: 'list-offsets-test', logLevel: logLevel.NOTHING });
    admin = kafka.admin();
    producer = kafka.producer();
    await Promise.all([admin.connect(), producer.connect()]);
    await admin.createTopics({
      topics: [
        { topic: 'ts', numPartitions: 2 },
        { topic: 'ts-deleted', numPartitions: 1 },
        { topic: 'appendtime', numPartitions: 1, configEntries: [{ name: 'message.timestamp.type', value: 'LogAppendTime' }] },
        { topic: 'epochs', numPartitions: 1 },
        { topic: 'empty', numPartitions: 1 },
      ],
    });
    c = await RawClient.connect(broker.current().port);
    for (const topic of ['ts', 'ts-deleted']) await fill(topic);
    // The middle batch really is compressed on disk.
    const read = await broker.current().broker.replicas.partition('ts', 0)!.log.readBytes(3, 1 << 20);
    expect(read.outOfRange).to.equal(false);
    const records = (read as { records: Buffer }).records;
    expect(records.readInt16BE(ATTRIBUTES_OFFSET) & COMPRESSION_CODEC_MASK).to.equal(Compression.GZIP);
  });
  after(async () => {
    c.close();
    await Promise.all([admin.disconnect(), producer.disconnect()]);
  });

  /**
   * Offsets 0-2: one uncompressed batch, timestamps T+100, T+300, T+200.
   * Offsets 3-6: one gzip batch, T+400, T+900, T+500, T+600.
   * Offsets 7-8: one uncompressed batch, T+800, T+900.
   */
  async function fill(topic: string): Promise<void> {
    const send = (compression: CompressionTypes, timestamps: number[]) => producer.send({
      topic, acks: -1, compression, messages: timestamps.map((ts, i) => ({ partition: 0, value: `v${i}`, timestamp: String(T + ts) })),
    });
    await send(CompressionTypes.None, [100, 300, 200]);
    await send(CompressionTypes.GZIP, [400, 900, 500, 600]);
    await send(CompressionTypes.None, [800, 900]);
  }

  async function list(topic: string, timestamp: number, opts: {
    version?: number; partition?: number; currentLeaderEpoch?: number; isolationLevel?: number; replicaId?: number;
  } = {}): Promise<Answer> {
    const v = opts.version ?? 10;
    const res = await c.request<ListOffsetsResponse>(ApiKey.ListOffsets, v, {
      replicaId: opts.replicaId ?? -1, isolationLevel: opts.isolationLevel ?? 0, timeoutMs: 0,
      topics: [{ name: topic, partitions: [{
        partitionIndex: opts.partition ?? 0, currentLeaderEpoch: opts.currentLeaderEpoch ?? -1, timestamp: BigInt(timestamp), maxNumOffsets: 1,
      }] }],
    });
    expect(res.topics).to.have.length(1);
    const p = res.topics[0].partitions[0];
    return { errorCode: p.errorCode, offset: Number(p.offset), timestamp: Number(p.timestamp), leaderEpoch: p.leaderEpoch ?? -1 };
  }
  const ok = (offset: number, timestamp: number, leaderEpoch: number): Answer => ({ errorCode: ErrorCode.NONE, offset, timestamp, leaderEpoch });
  const failed = (errorCode: number): Answer => ({ errorCode, offset: -1, timestamp: -1, leaderEpoch: -1 });

  it('finds the first record whose timestamp is at or after the target, inside plain and gzip batches', async () => {
    expect(await list('ts', 0)).to.deep.equal(ok(0, T + 100, 0));
    expect(await list('ts', T + 100)).to.deep.equal(ok(0, T + 100, 0));
    // Offset 2 (T+200) is before the target in timestamp order but not in offset order.
    expect(await list('ts', T + 150)).to.deep.equal(ok(1, T + 300, 0));
    expect(await list('ts', T + 301)).to.deep.equal(ok(3, T + 400, 0));
    // Inside the gzip batch: T+900 at offset 4 comes before T+500 at offset 5.
    expect(await list('ts', T + 450)).to.deep.equal(ok(4, T + 900, 0));
    expect(await list('ts', T + 900)).to.deep.equal(ok(4, T + 900, 0));
    expect(await list('ts', T + 901)).to.deep.equal(ok(-1, -1, -1));
    // No leader epoch before v4, the same offsets at v1.
    expect(await list('ts', T + 450, { version: 1 })).to.deep.equal(ok(4, T + 900, -1));
  });

  it('answers earliest, latest and max timestamp', async () => {
    expect(await list('ts', EARLIEST)).to.deep.equal(ok(0, -1, 0));
    expect(await list('ts', LATEST)).to.deep.equal(ok(9, -1, 0));
    expect(await list('ts', LATEST, { isolationLevel: 1 })).to.deep.equal(ok(9, -1, 0));
    expect(await list('ts', LATEST, { replicaId: -2 })).to.deep.equal(ok(9, -1, 0));
    // The first record carrying the largest timestamp (offset 8 carries it too).
    expect(await list('ts', MAX_TIMESTAMP)).to.deep.equal(ok(4, T + 900, 0));
    expect(await list('ts', -4, { version: 8 })).to.deep.equal(ok(0, -1, 0));
    expect(await list('ts', -5, { version: 9 })).to.deep.equal(ok(-1, -1, -1));
    // The other, empty partition.
    expect(await list('ts', EARLIEST, { partition: 1 })).to.deep.equal(ok(0, -1, 0));
    expect(await list('ts', LATEST, { partition: 1 })).to.deep.equal(ok(0, -1, 0));
    expect(await list('ts', MAX_TIMESTAMP, { partition: 1 })).to.deep.equal(ok(-1, -1, -1));
    expect(await list('ts', 0, { partition: 1 })).to.deep.equal(ok(-1, -1, -1));
  });

  it('refuses special timestamps below their version and unknown negative ones', async () => {
    expect(await list('ts', MAX_TIMESTAMP, { version: 6 })).to.deep.equal(failed(ErrorCode.UNSUPPORTED_VERSION));
    expect(await list('ts', -4, { version: 7 })).to.deep.equal(failed(ErrorCode.UNSUPPORTED_VERSION));
    expect(await list('ts', -5, { version: 8 })).to.deep.equal(failed(ErrorCode.UNSUPPORTED_VERSION));
    expect(await list('ts', -6)).to.deep.equal(failed(ErrorCode.UNSUPPORTED_VERSION));
    expect(await list('ts', -7)).to.deep.equal(failed(ErrorCode.UNSUPPORTED_VERSION));
  });

  it('answers a LogAppendTime topic with the time the broker stamped', async () => {
    const before = Date.now();
    await producer.send({ topic: 'appendtime', acks: -1, messages: [1, 2, 3].map((i) => ({ value: `v${i}`, timestamp: String(T + i) })) });
    const after = Date.now();
    const found = await list('appendtime', 0);
    expect(found.offset).to.equal(0);
    expect(found.timestamp).to.be.within(before, after);
    expect(await list('appendtime', MAX_TIMESTAMP)).to.deep.equal(found);
    expect(await list('appendtime', found.timestamp + 1)).to.deep.equal(ok(-1, -1, -1));
  });

  it('skips records below the log start offset', async () => {
    const del = await c.request<DeleteRecordsResponse>(ApiKey.DeleteRecords, 2, {
      topics: [{ name: 'ts-deleted', partitions: [{ partitionIndex: 0, offset: 5n }] }], timeoutMs: 1000,
    });
    expect(del.topics[0].partitions[0]).to.include({ errorCode: ErrorCode.NONE, lowWatermark: 5n });
    expect(await list('ts-deleted', EARLIEST)).to.deep.equal(ok(5, -1, 0));
    // Offset 4 (T+900) is gone: the first match from offset 5 on.
    expect(await list('ts-deleted', T + 450)).to.deep.equal(ok(5, T + 500, 0));
    // The gzip batch still holds a match (offset 4) below the start: the next batch answers.
    expect(await list('ts-deleted', T + 850)).to.deep.equal(ok(8, T + 900, 0));
  });

  it('checks the current leader epoch and answers with the epochs of the log', async () => {
    await producer.send({ topic: 'epochs', acks: -1, messages: [{ value: 'a', timestamp: String(T + 1) }] });
    expect(await list('epochs', LATEST, { currentLeaderEpoch: 0 })).to.deep.equal(ok(1, -1, 0));
    expect(await list('epochs', LATEST, { currentLeaderEpoch: 1 })).to.deep.equal(failed(ErrorCode.UNKNOWN_LEADER_EPOCH));
    broker.current().broker.store!.setLeaderEpoch('epochs', 0, 2);
    expect(await list('epochs', LATEST, { currentLeaderEpoch: 1 })).to.deep.equal(failed(ErrorCode.FENCED_LEADER_EPOCH));
    expect(await list('epochs', LATEST, { currentLeaderEpoch: 3 })).to.deep.equal(failed(ErrorCode.UNKNOWN_LEADER_EPOCH));
    // Before v4 there is no current leader epoch to check.
    expect((await list('epochs', LATEST, { version: 3 })).errorCode).to.equal(ErrorCode.NONE);
    expect(await list('epochs', LATEST, { currentLeaderEpoch: 2 })).to.deep.equal(ok(1, -1, 2));
    await producer.send({ topic: 'epochs', acks: -1, messages: [{ value: 'b', timestamp: String(T + 2) }] });
    // Each record answers with the epoch its batch was written in; earliest with the first epoch.
    expect(await list('epochs', T + 1)).to.deep.equal(ok(0, T + 1, 0));
    expect(await list('epochs', T + 2)).to.deep.equal(ok(1, T + 2, 2));
    expect(await list('epochs', EARLIEST)).to.deep.equal(ok(0, -1, 0));
    expect(await list('epochs', LATEST)).to.deep.equal(ok(2, -1, 2));
  });

  it('answers UNKNOWN_TOPIC_OR_PARTITION and INVALID_REQUEST for duplicates, per partition', async () => {
    expect(await list('no-such-topic', LATEST)).to.deep.equal(failed(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION));
    expect(await list('ts', LATEST, { partition: 2 })).to.deep.equal(failed(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION));
    const part = (partitionIndex: number) => ({ partitionIndex, currentLeaderEpoch: -1, timestamp: -1n, maxNumOffsets: 1 });
    const res = await c.request<ListOffsetsResponse>(ApiKey.ListOffsets, 7, {
      replicaId: -1, isolationLevel: 0, topics: [{ name: 'ts', partitions: [part(0), part(1)] }, { name: 'ts', partitions: [part(0)] }],
    });
    expect(res.topics.map((t) => t.partitions.map((p) => [p.partitionIndex, p.errorCode, Number(p.offset)]))).to.deep.equal([
      [[0, ErrorCode.INVALID_REQUEST, -1], [1, ErrorCode.NONE, 0]],
      [[0, ErrorCode.INVALID_REQUEST, -1]],
    ]);
  });

  it('answers old-style offsets at v0', async () => {
    const v0 = async (topic: string, timestamp: number, maxNumOffsets: number) => {
      const res = await c.request<ListOffsetsResponse>(ApiKey.ListOffsets, 0, {
        replicaId: -1, topics: [{ name: topic, partitions: [{ partitionIndex: 0, timestamp: BigInt(timestamp), maxNumOffsets }] }],
      });
      const p = res.topics[0].partitions[0];
      return [p.errorCode, p.oldStyleOffsets.map(Number)];
    };
    expect(await v0('ts', LATEST, 1)).to.deep.equal([ErrorCode.NONE, [9]]);
    expect(await v0('ts', EARLIEST, 1)).to.deep.equal([ErrorCode.NONE, [0]]);
    expect(await v0('ts', LATEST, 10)).to.deep.equal([ErrorCode.NONE, [9, 0]]);
    // By segment modification time: the segment was written before now, nothing before it was.
    expect(await v0('ts', Date.now() + 60_000, 10)).to.deep.equal([ErrorCode.NONE, [9, 0]]);
    expect(await v0('ts', 1, 10)).to.deep.equal([ErrorCode.NONE, []]);
    expect(await v0('ts-deleted', EARLIEST, 1)).to.deep.equal([ErrorCode.NONE, [5]]);
    expect(await v0('empty', LATEST, 10)).to.deep.equal([ErrorCode.NONE, [0]]);
    expect(await v0('no-such-topic', LATEST, 1)).to.deep.equal([ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, []]);
  });

  it('serves kafkajs fetchTopicOffsets and fetchTopicOffsetsByTimestamp', async () => {
    const offsets = await admin.fetchTopicOffsets('ts');
    expect(offsets.sort((a, b) => a.partition - b.partition)).to.deep.equal([
      { partition: 0, offset: '9', high: '9', low: '0' },
      { partition: 1, offset: '0', high: '0', low: '0' },
    ]);
    const byTime = await admin.fetchTopicOffsetsByTimestamp('ts', T + 450);
    expect(byTime.sort((a, b) => a.partition - b.partition)).to.deep.equal([
      { partition: 0, offset: '4' },
      { partition: 1, offset: '0' }, // nothing found: kafkajs substitutes the latest offset
    ]);
  });
});
