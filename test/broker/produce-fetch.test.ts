import { expect } from 'chai';
import { ApiKey } from '../../src/protocol/generated';
import type { ProduceResponse } from '../../src/protocol/generated/ProduceResponse';
import type { FetchResponse } from '../../src/protocol/generated/FetchResponse';
import type { CreateTopicsResponse } from '../../src/protocol/generated/CreateTopicsResponse';
import { ErrorCode } from '../../src/common/errors';
import { buildBatch, buildBatchSync, decodeRecords } from '../../src/records/records';
import { Compression, TIMESTAMP_TYPE_MASK, ATTRIBUTES_OFFSET } from '../../src/records/batch';
import { RawClient } from '../helpers/raw-client';
import { withBroker } from '../helpers/broker';

type PartitionResult = ProduceResponse['responses'][number]['partitionResponses'][number];

describe('produce and fetch', function () {
  this.timeout(20000);
  const broker = withBroker();
  let c: RawClient;
  before(async () => {
    c = await RawClient.connect(broker.current().port);
    const topics = [
      { name: 'plain', configs: [] },
      { name: 'small', configs: [{ name: 'max.message.bytes', value: '200' }] },
      { name: 'compacted', configs: [{ name: 'cleanup.policy', value: 'compact' }] },
      { name: 'appendtime', configs: [{ name: 'message.timestamp.type', value: 'LogAppendTime' }] },
      { name: 'idem', configs: [] },
      { name: 'poll', configs: [] },
      { name: 'isr', configs: [{ name: 'min.insync.replicas', value: '2' }] },
    ].map((t) => ({ ...t, numPartitions: 1, replicationFactor: 1, assignments: [] }));
    const res = await c.request<CreateTopicsResponse>(ApiKey.CreateTopics, 7, { topics, timeoutMs: 1000, validateOnly: false });
    expect(res.topics.map((t) => t.errorCode)).to.deep.equal(topics.map(() => ErrorCode.NONE));
  });
  after(() => c.close());

  const batch = (n: number, opts: Partial<Parameters<typeof buildBatchSync>[0]> = {}) => buildBatchSync({
    records: Array.from({ length: n }, (_, i) => ({ key: `k${i}`, value: `value-${i}`, headers: [{ key: 'h', value: `${i}` }] })),
    ...opts,
  });

  async function produce(topic: string, records: Buffer | null, version = 9, acks = -1): Promise<PartitionResult> {
    const res = await c.request<ProduceResponse>(ApiKey.Produce, version, {
      transactionalId: null, acks, timeoutMs: 5000, topicData: [{ name: topic, partitionData: [{ index: 0, records }] }],
    });
    return res.responses[0].partitionResponses[0];
  }

  function fetchRequest(topic: string, offset: number, extra: { maxWaitMs?: number; minBytes?: number; partitionMaxBytes?: number } = {}) {
    return {
      replicaId: -1, maxWaitMs: extra.maxWaitMs ?? 0, minBytes: extra.minBytes ?? 0, maxBytes: 1 << 20, isolationLevel: 0,
      sessionId: 0, sessionEpoch: -1,
      topics: [{ topic, topicId: broker.current().broker.controller.topic(topic)?.id, partitions: [{ partition: 0, fetchOffset: BigInt(offset), partitionMaxBytes: extra.partitionMaxBytes ?? 1 << 20, currentLeaderEpoch: -1, logStartOffset: -1n }] }],
      forgottenTopicsData: [], rackId: '',
    };
  }

  async function fetch(topic: string, offset: number, version = 11, extra = {}) {
    const res = await c.request<FetchResponse>(ApiKey.Fetch, version, fetchRequest(topic, offset, extra));
    return res.responses[0].partitions[0];
  }

  it('stores batches of every codec and returns them with offsets assigned, at every Produce and Fetch version', async () => {
    let expected = 0;
    const codecs = [Compression.NONE, Compression.GZIP, Compression.SNAPPY, Compression.LZ4, Compression.ZSTD];
    for (let v = 3; v <= 11; v++) {
      const compression = codecs[(v - 3) % codecs.length]; // zstd first at v7, as Kafka requires
      const records = await buildBatch({ records: [0, 1, 2].map((i) => ({ key: `k${i}`, value: `value-${i}`, headers: [{ key: 'h', value: `${i}` }] })), compression });
      const r = await produce('plain', records, v);
      expect(r.errorCode, `Produce v${v}`).to.equal(ErrorCode.NONE);
      expect(Number(r.baseOffset)).to.equal(expected);
      expected += 3;
    }
    const zstdTooEarly = await produce('plain', await buildBatch({ records: [{ value: 'x' }], compression: Compression.ZSTD }), 6);
    expect(zstdTooEarly.errorCode).to.equal(ErrorCode.UNSUPPORTED_COMPRESSION_TYPE);
    for (let v = 4; v <= 17; v++) {
      const p = await fetch('plain', 0, v);
      expect(p.errorCode, `Fetch v${v}`).to.equal(ErrorCode.NONE);
      expect(Number(p.highWatermark)).to.equal(expected);
      const records = await decodeAll(p.records!);
      expect(records.map((r) => r.offset)).to.deep.equal(Array.from({ length: expected }, (_, i) => i));
      expect(records[4].key!.toString()).to.equal('k1');
      expect(records[4].headers[0].value!.toString()).to.equal('1');
    }
  });

  it('returns the whole batch that contains the fetch offset, and the first batch even above the byte limits', async () => {
    const p = await fetch('plain', 4, 11, { partitionMaxBytes: 10 });
    const records = await decodeAll(p.records!);
    expect(records[0].offset).to.equal(3);
    expect(records.map((r) => r.offset)).to.deep.equal([3, 4, 5]);
  });

  it('shares the request byte budget between partitions in order; only the first with data goes over a limit', async () => {
    const created = await c.request<CreateTopicsResponse>(ApiKey.CreateTopics, 7, {
      topics: [{ name: 'budget', numPartitions: 3, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 1000, validateOnly: false,
    });
    expect(created.topics[0].errorCode).to.equal(ErrorCode.NONE);
    const big = batch(20);
    const small = batch(2);
    const partitionData = [{ index: 0, records: big }, { index: 1, records: batch(20) }, { index: 2, records: small }];
    for (let i = 0; i < 2; i++) {
      const res = await c.request<ProduceResponse>(ApiKey.Produce, 9, { transactionalId: null, acks: -1, timeoutMs: 5000, topicData: [{ name: 'budget', partitionData }] });
      expect(res.responses[0].partitionResponses.map((p) => p.errorCode)).to.deep.equal([0, 0, 0]);
    }
    const partition = (index: number, partitionMaxBytes: number) =>
      ({ partition: index, fetchOffset: 0n, partitionMaxBytes, currentLeaderEpoch: -1, logStartOffset: -1n });
    // 0: its first batch though over its own limit; 1: nothing (its first batch is over its limit and it
    // is not the first with data); 2: one of its two batches, all that the request's budget has left.
    const res = await c.request<FetchResponse>(ApiKey.Fetch, 12, {
      ...fetchRequest('budget', 0), maxBytes: big.length + small.length + 10,
      topics: [{ topic: 'budget', partitions: [partition(0, 100), partition(1, 100), partition(2, 1 << 20)] }],
    });
    const sizes = res.responses[0].partitions.map((p) => p.records!.length);
    expect(sizes).to.deep.equal([big.length, 0, small.length]);
  });

  it('refuses Produce v0-2 and bad acks per partition', async () => {
    expect((await produce('plain', batch(1), 2)).errorCode).to.equal(ErrorCode.UNSUPPORTED_VERSION);
    expect((await produce('plain', batch(1), 9, 2)).errorCode).to.equal(ErrorCode.INVALID_REQUIRED_ACKS);
    expect((await produce('isr', batch(1), 9, -1)).errorCode).to.equal(ErrorCode.NOT_ENOUGH_REPLICAS);
    expect((await produce('isr', batch(1), 9, 1)).errorCode).to.equal(ErrorCode.NONE);
  });

  it('rejects bad batches with Kafka error codes and writes nothing of them', async () => {
    const before = Number((await fetch('plain', 0)).highWatermark);
    const corrupt = batch(2);
    corrupt[corrupt.length - 1] ^= 0xff;
    expect((await produce('plain', corrupt)).errorCode).to.equal(ErrorCode.CORRUPT_MESSAGE);
    expect((await produce('plain', Buffer.concat([batch(1), batch(1)]))).errorCode).to.equal(ErrorCode.INVALID_RECORD);
    expect((await produce('plain', null)).errorCode).to.equal(ErrorCode.INVALID_RECORD);
    expect((await produce('small', batch(20))).errorCode).to.equal(ErrorCode.MESSAGE_TOO_LARGE);
    expect((await produce('nope', batch(1))).errorCode).to.equal(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    const keyless = buildBatchSync({ records: [{ key: null, value: 'v' }] });
    const rejected = await produce('compacted', keyless);
    expect(rejected.errorCode).to.equal(ErrorCode.INVALID_RECORD);
    expect(rejected.recordErrors).to.have.length(1);
    expect((await produce('compacted', batch(1))).errorCode).to.equal(ErrorCode.NONE);
    expect(Number((await fetch('plain', 0)).highWatermark)).to.equal(before);
  });

  it('stamps LogAppendTime topics with the broker time', async () => {
    const before = Date.now();
    const r = await produce('appendtime', batch(2, { nowMs: 1000 }));
    expect(Number(r.logAppendTimeMs)).to.be.at.least(before);
    const p = await fetch('appendtime', 0);
    expect(p.records!.readInt16BE(ATTRIBUTES_OFFSET) & TIMESTAMP_TYPE_MASK).to.not.equal(0);
    expect((await decodeAll(p.records!))[1].timestamp).to.equal(Number(r.logAppendTimeMs));
  });

  it('answers a retried idempotent batch with its first offset, and checks sequences and epochs', async () => {
    const idem = (baseSequence: number, producerEpoch = 0) => batch(2, { producerId: 7, producerEpoch, baseSequence });
    const first = await produce('idem', idem(0));
    const second = await produce('idem', idem(2));
    expect([first.errorCode, Number(first.baseOffset), Number(second.baseOffset)]).to.deep.equal([ErrorCode.NONE, 0, 2]);
    const retry = await produce('idem', idem(0));
    expect([retry.errorCode, Number(retry.baseOffset)]).to.deep.equal([ErrorCode.NONE, 0]);
    expect((await produce('idem', idem(9))).errorCode).to.equal(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER);
    expect((await produce('idem', idem(0, 1))).errorCode).to.equal(ErrorCode.NONE);
    expect((await produce('idem', idem(4, 0))).errorCode).to.equal(ErrorCode.INVALID_PRODUCER_EPOCH);
    expect(Number((await fetch('idem', 0)).highWatermark)).to.equal(6);
  });

  it('sends no response to acks=0 and closes the connection when such a produce fails', async () => {
    const quiet = await RawClient.connect(broker.current().port);
    quiet.send(ApiKey.Produce, 9, { transactionalId: null, acks: 0, timeoutMs: 1000, topicData: [{ name: 'plain', partitionData: [{ index: 0, records: batch(1) }] }] }, 1);
    quiet.send(ApiKey.ApiVersions, 3, { clientSoftwareName: 't', clientSoftwareVersion: '1' }, 2);
    expect((await quiet.receive(ApiKey.ApiVersions, 3)).correlationId).to.equal(2);
    quiet.send(ApiKey.Produce, 9, { transactionalId: null, acks: 0, timeoutMs: 1000, topicData: [{ name: 'nope', partitionData: [{ index: 0, records: batch(1) }] }] }, 3);
    await quiet.closed;
  });

  it('long-polls: answers as soon as data arrives, and after max_wait_ms when none does', async () => {
    const started = Date.now();
    const empty = await fetch('poll', 0, 11, { maxWaitMs: 300, minBytes: 1 });
    expect(empty.records!.length).to.equal(0);
    expect(Date.now() - started).to.be.at.least(250);

    const poller = await RawClient.connect(broker.current().port);
    const waiting = poller.request<FetchResponse>(ApiKey.Fetch, 11, fetchRequest('poll', 0, { maxWaitMs: 10000, minBytes: 1 }));
    await new Promise((r) => setTimeout(r, 100));
    const producedAt = Date.now();
    await produce('poll', batch(1));
    const res = await waiting;
    expect(Date.now() - producedAt).to.be.below(2000);
    expect(await decodeAll(res.responses[0].partitions[0].records!)).to.have.length(1);
    poller.close();
  });

  it('answers OFFSET_OUT_OF_RANGE beyond the log end, and an empty read at it', async () => {
    const hw = Number((await fetch('plain', 0)).highWatermark);
    expect((await fetch('plain', hw + 5)).errorCode).to.equal(ErrorCode.OFFSET_OUT_OF_RANGE);
    const atEnd = await fetch('plain', hw);
    expect([atEnd.errorCode, atEnd.records!.length]).to.deep.equal([ErrorCode.NONE, 0]);
  });

  it('keeps a fetch session: a full fetch, then incremental fetches that carry only changes', async () => {
    const topicId = broker.current().broker.controller.topic('plain')!.id;
    const end = BigInt((await fetch('plain', 0)).highWatermark);
    const req = (sessionId: number, sessionEpoch: number, partitions: object[]) => ({
      replicaId: -1, maxWaitMs: 0, minBytes: 0, maxBytes: 1 << 20, isolationLevel: 0, sessionId, sessionEpoch,
      topics: partitions.length ? [{ topicId, partitions }] : [], forgottenTopicsData: [], rackId: '',
    });
    const full = await c.request<FetchResponse>(ApiKey.Fetch, 13, req(0, 0, [{ partition: 0, fetchOffset: end, partitionMaxBytes: 1 << 20 }]));
    expect(full.sessionId).to.not.equal(0);
    expect(full.responses[0].partitions).to.have.length(1);
    const quiet = await c.request<FetchResponse>(ApiKey.Fetch, 13, req(full.sessionId!, 1, []));
    expect(quiet.errorCode).to.equal(ErrorCode.NONE);
    expect(quiet.responses).to.have.length(0);
    await produce('plain', batch(1));
    const changed = await c.request<FetchResponse>(ApiKey.Fetch, 13, req(full.sessionId!, 2, []));
    expect(changed.responses[0].partitions).to.have.length(1);
    const stale = await c.request<FetchResponse>(ApiKey.Fetch, 13, req(full.sessionId!, 2, []));
    expect(stale.errorCode).to.equal(ErrorCode.INVALID_FETCH_SESSION_EPOCH);
  });
});

async function decodeAll(records: Buffer) {
  const out = [];
  let pos = 0;
  while (pos < records.length) {
    const size = records.readInt32BE(pos + 8) + 12;
    out.push(...(await decodeRecords(records.subarray(pos, pos + size))));
    pos += size;
  }
  return out;
}
