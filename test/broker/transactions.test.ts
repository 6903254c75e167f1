import { expect } from 'chai';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { startBroker, type RunningBroker } from '../../src/broker';
import { ApiKey } from '../../src/protocol/generated';
import type { ProduceResponse } from '../../src/protocol/generated/ProduceResponse';
import type { FetchResponse } from '../../src/protocol/generated/FetchResponse';
import type { ListOffsetsResponse } from '../../src/protocol/generated/ListOffsetsResponse';
import type { DescribeProducersResponse } from '../../src/protocol/generated/DescribeProducersResponse';
import { ErrorCode } from '../../src/common/errors';
import { buildBatchSync, decodeRecords } from '../../src/records/records';
import type { TxnMarker } from '../../src/replica/replica-manager';
import { RawClient } from '../helpers/raw-client';
import { withBroker } from '../helpers/broker';

const READ_UNCOMMITTED = 0;
const READ_COMMITTED = 1;
const NO_VERIFICATION = { 'transaction.partition.verification.enable': 'false' };

/** A client for one broker: Produce with producer fields, Fetch and ListOffsets at an isolation level, markers through the ReplicaManager. */
class TxnClient {
  private readonly sequences = new Map<number, number>();
  private constructor(readonly running: RunningBroker, readonly raw: RawClient) {}

  static async connect(running: RunningBroker): Promise<TxnClient> {
    return new TxnClient(running, await RawClient.connect(running.port));
  }

  async createTopic(name: string): Promise<void> {
    await this.running.broker.controller.createTopic({ name, numPartitions: 1, replicationFactor: 1, assignments: [], configs: {} }, false);
  }

  /** `values` from producer `pid` (epoch 0), transactional unless said otherwise; answers the partition response. */
  async produce(topic: string, pid: number, values: string[], isTransactional = true) {
    const baseSequence = this.sequences.get(pid) ?? 0;
    const records = buildBatchSync({ producerId: pid, producerEpoch: 0, baseSequence, isTransactional, records: values.map((value) => ({ value })) });
    const res = await this.raw.request<ProduceResponse>(ApiKey.Produce, 9, {
      transactionalId: isTransactional ? `txn-${pid}` : null, acks: -1, timeoutMs: 1000,
      topicData: [{ name: topic, partitionData: [{ index: 0, records }] }],
    });
    const answer = res.responses[0].partitionResponses[0];
    if (answer.errorCode === ErrorCode.NONE) this.sequences.set(pid, baseSequence + values.length);
    return answer;
  }

  async marker(topic: string, marker: Partial<TxnMarker> & { producerId: number; commit: boolean }) {
    const replicas = this.running.broker.replicas;
    const appended = await replicas.appendTxnMarker(replicas.partition(topic, 0)!, { producerEpoch: 0, coordinatorEpoch: 0, ...marker }, Date.now());
    await appended.done;
    return appended;
  }

  fetchRequest(topic: string, offset: number, isolationLevel: number, wait: { maxWaitMs?: number; minBytes?: number } = {}) {
    return {
      replicaId: -1, maxWaitMs: wait.maxWaitMs ?? 0, minBytes: wait.minBytes ?? 0, maxBytes: 1 << 20, isolationLevel,
      sessionId: 0, sessionEpoch: -1,
      topics: [{ topic, topicId: this.running.broker.controller.topic(topic)?.id, partitions: [{ partition: 0, fetchOffset: BigInt(offset), partitionMaxBytes: 1 << 20, currentLeaderEpoch: -1, logStartOffset: -1n }] }],
      forgottenTopicsData: [], rackId: '',
    };
  }

  async fetch(topic: string, offset: number, isolationLevel: number, version = 12) {
    const res = await this.raw.request<FetchResponse>(ApiKey.Fetch, version, this.fetchRequest(topic, offset, isolationLevel));
    const p = res.responses[0].partitions[0];
    return {
      errorCode: p.errorCode, highWatermark: Number(p.highWatermark), lastStableOffset: Number(p.lastStableOffset),
      aborted: p.abortedTransactions === null ? null : p.abortedTransactions!.map((t) => [Number(t.producerId), Number(t.firstOffset)]),
      values: await dataValues(p.records!),
    };
  }

  async latestOffset(topic: string, isolationLevel: number): Promise<number> {
    const res = await this.raw.request<ListOffsetsResponse>(ApiKey.ListOffsets, 7, {
      replicaId: -1, isolationLevel, topics: [{ name: topic, partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: -1n }] }],
    });
    return Number(res.topics[0].partitions[0].offset);
  }

  async describeProducers(topics: { name: string; partitionIndexes: number[] }[]) {
    return (await this.raw.request<DescribeProducersResponse>(ApiKey.DescribeProducers, 0, { topics })).topics;
  }
}

/** The values of the data records in a Fetch answer (control batches are skipped, as clients do). */
async function dataValues(records: Buffer): Promise<string[]> {
  const out: string[] = [];
  for (let at = 0; at < records.length; ) {
    const size = records.readInt32BE(at + 8) + 12;
    const batch = records.subarray(at, at + size);
    const isControl = (batch.readInt16BE(21) & 0x20) !== 0;
    if (!isControl) for (const r of await decodeRecords(batch)) out.push(r.value!.toString());
    at += size;
  }
  return out;
}

describe('transactions on the log (wire)', function () {
  this.timeout(20000);
  // These tests play the transaction coordinator themselves (markers through the ReplicaManager),
  // so the coordinator is not asked whether their partitions are in a transaction.
  const broker = withBroker({ config: NO_VERIFICATION });
  let c: TxnClient;
  before(async () => {
    c = await TxnClient.connect(broker.current());
  });
  after(() => c.raw.close());

  it('read_committed stops at the LSO and lists the aborted transactions; read_uncommitted sees everything', async () => {
    await c.createTopic('rc');
    await c.produce('rc', 1, ['a1', 'a2']); // 0-1, aborted below
    await c.produce('rc', 2, ['b1']); // 2, committed below
    await c.produce('rc', 3, ['plain'], false); // 3
    const open = await c.fetch('rc', 0, READ_COMMITTED);
    expect(open).to.deep.include({ errorCode: ErrorCode.NONE, highWatermark: 4, lastStableOffset: 0, values: [], aborted: [] });
    const uncommitted = await c.fetch('rc', 0, READ_UNCOMMITTED);
    expect(uncommitted).to.deep.include({ highWatermark: 4, lastStableOffset: 0, aborted: null, values: ['a1', 'a2', 'b1', 'plain'] });
    expect(await c.latestOffset('rc', READ_COMMITTED)).to.equal(0);
    expect(await c.latestOffset('rc', READ_UNCOMMITTED)).to.equal(4);

    expect((await c.marker('rc', { producerId: 1, commit: false })).baseOffset).to.equal(4);
    const afterAbort = await c.fetch('rc', 0, READ_COMMITTED);
    // Producer 2 is still open from 2: data below it is returned, with producer 1's abort listed.
    expect(afterAbort).to.deep.include({ lastStableOffset: 2, values: ['a1', 'a2'], aborted: [[1, 0]] });
    expect(await c.latestOffset('rc', READ_COMMITTED)).to.equal(2);

    await c.marker('rc', { producerId: 2, commit: true });
    const done = await c.fetch('rc', 0, READ_COMMITTED);
    expect(done).to.deep.include({ highWatermark: 6, lastStableOffset: 6, aborted: [[1, 0]], values: ['a1', 'a2', 'b1', 'plain'] });
    // A fetch past the aborted transaction does not list it.
    expect((await c.fetch('rc', 5, READ_COMMITTED)).aborted).to.deep.equal([]);
    expect(await c.latestOffset('rc', READ_COMMITTED)).to.equal(6);
    // Fetch v4 (the first served) carries the same fields.
    expect(await c.fetch('rc', 0, READ_COMMITTED, 4)).to.deep.include({ lastStableOffset: 6, aborted: [[1, 0]] });
  });

  it('refuses a marker from an older producer epoch or coordinator epoch, and writes one for a producer with no transaction', async () => {
    await c.createTopic('fence');
    await c.produce('fence', 7, ['x']);
    await c.marker('fence', { producerId: 7, commit: true, coordinatorEpoch: 3, producerEpoch: 1 });
    expect((await c.marker('fence', { producerId: 7, commit: true, coordinatorEpoch: 2, producerEpoch: 1 })).errorCode)
      .to.equal(ErrorCode.TRANSACTION_COORDINATOR_FENCED);
    expect((await c.marker('fence', { producerId: 7, commit: false, coordinatorEpoch: 3, producerEpoch: 0 })).errorCode)
      .to.equal(ErrorCode.INVALID_PRODUCER_EPOCH);
    const idle = await c.marker('fence', { producerId: 8, commit: false });
    expect([idle.errorCode, idle.baseOffset]).to.deep.equal([ErrorCode.NONE, 2]);
    // The zombie's old epoch is fenced for data too.
    expect((await c.produce('fence', 7, ['late'])).errorCode).to.equal(ErrorCode.INVALID_PRODUCER_EPOCH);
    const read = await c.fetch('fence', 0, READ_COMMITTED);
    expect(read).to.deep.include({ lastStableOffset: 3, values: ['x'], aborted: [] });
  });

  it('coordinator writes skip sequence checks', async () => {
    await c.createTopic('coord');
    const replicas = broker.current().broker.replicas;
    const partition = replicas.partition('coord', 0)!;
    const batch = () => buildBatchSync({ producerId: 11, producerEpoch: 0, baseSequence: 0, isTransactional: true, records: [{ value: 'o' }] });
    const opts = { produceVersion: 9, nowMs: Date.now() };
    expect((await replicas.append(partition, batch(), 0, { ...opts, origin: 'coordinator' })).errorCode).to.equal(ErrorCode.NONE);
    const again = await replicas.append(partition, batch(), 0, { ...opts, origin: 'coordinator' });
    expect([again.errorCode, again.baseOffset]).to.deep.equal([ErrorCode.NONE, 1]);
    // A client resending sequence 0 is answered as a duplicate instead: nothing is appended.
    expect((await replicas.append(partition, batch(), 0, opts)).errorCode).to.equal(ErrorCode.NONE);
    expect(partition.log.logEndOffset).to.equal(2);
    await again.done;
  });

  it('a read_committed long poll waiting behind an open transaction returns soon after the commit marker', async () => {
    await c.createTopic('poll');
    await c.produce('poll', 21, ['t1', 't2']);
    const poller = await RawClient.connect(broker.current().port);
    const started = Date.now();
    const waiting = poller.request<FetchResponse>(ApiKey.Fetch, 12, c.fetchRequest('poll', 0, READ_COMMITTED, { maxWaitMs: 10_000, minBytes: 1 }));
    // More data of the same open transaction does not wake it.
    await c.produce('poll', 21, ['t3']);
    await new Promise((r) => setTimeout(r, 200));
    await c.marker('poll', { producerId: 21, commit: true });
    const res = await waiting;
    poller.close();
    const p = res.responses[0].partitions[0];
    expect(Date.now() - started).to.be.below(5_000);
    expect(Date.now() - started).to.be.at.least(200);
    expect(Number(p.lastStableOffset)).to.equal(4);
    expect(await dataValues(p.records!)).to.deep.equal(['t1', 't2', 't3']);
  });

  it('DescribeProducers answers each partition from its producer state, with Kafka errors', async () => {
    await c.createTopic('desc');
    await c.produce('desc', 31, ['a', 'b', 'c'], false);
    await c.produce('desc', 32, ['x']);
    await c.produce('desc', 32, ['y']);
    await c.marker('desc', { producerId: 32, commit: false, coordinatorEpoch: 4 });
    await c.produce('desc', 32, ['z']); // a new transaction at 6
    const [desc, unknown] = await c.describeProducers([{ name: 'desc', partitionIndexes: [0, 5] }, { name: 'nope', partitionIndexes: [0] }]);
    expect(desc.partitions.map((p) => [p.partitionIndex, p.errorCode])).to.deep.equal([[0, ErrorCode.NONE], [5, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]]);
    const producers = desc.partitions[0].activeProducers
      .map((s) => ({ ...s, producerId: Number(s.producerId), lastTimestamp: Number(s.lastTimestamp) > 0, currentTxnStartOffset: Number(s.currentTxnStartOffset) }))
      .sort((a, b) => a.producerId - b.producerId);
    expect(producers).to.deep.equal([
      { producerId: 31, producerEpoch: 0, lastSequence: 2, lastTimestamp: true, coordinatorEpoch: -1, currentTxnStartOffset: -1 },
      { producerId: 32, producerEpoch: 0, lastSequence: 2, lastTimestamp: true, coordinatorEpoch: 4, currentTxnStartOffset: 6 },
    ]);
    expect(unknown.partitions).to.deep.equal([{ partitionIndex: 0, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: null, activeProducers: [] }]);
  });
});

describe('transactions across a broker restart', function () {
  this.timeout(20000);
  let dataDir: string;
  const running: RunningBroker[] = [];
  before(async () => { dataDir = await mkdtemp(path.join(os.tmpdir(), 'fjord-txn-restart-')); });
  after(async () => {
    for (const b of running) await b.close();
    await rm(dataDir, { recursive: true, force: true });
    await rm(`${dataDir}-crash`, { recursive: true, force: true });
  });

  for (const crash of [false, true]) {
    it(`keeps open and aborted transactions after a ${crash ? 'crash (rebuilt from the log)' : 'clean restart (snapshot)'}`, async () => {
      const topic = crash ? 'after-crash' : 'after-restart';
      const first = await startBroker({ dataDir, logLevel: 'silent', config: NO_VERIFICATION });
      running.push(first);
      const c1 = await TxnClient.connect(first);
      await c1.createTopic(topic);
      await c1.produce(topic, 1, ['aborted']); // 0
      await c1.produce(topic, 2, ['open']); // 1
      await c1.marker(topic, { producerId: 1, commit: false, coordinatorEpoch: 9 }); // 2
      await c1.produce(topic, 3, ['plain'], false); // 3
      c1.raw.close();
      // A crash leaves no snapshot, no clean-shutdown marker and no flushed .txnindex: the second broker replays the log.
      if (!crash) await first.close();
      // A crash, as the next process finds it: the files as they are now (one broker per data dir, so a copy).
      const restartDir = crash ? `${dataDir}-crash` : dataDir;
      if (crash) await cp(dataDir, restartDir, { recursive: true });
      const second = await startBroker({ dataDir: restartDir, logLevel: 'silent', config: NO_VERIFICATION });
      running.push(second);
      const c2 = await TxnClient.connect(second);
      expect(await c2.fetch(topic, 0, READ_COMMITTED)).to.deep.include({ highWatermark: 4, lastStableOffset: 1, values: ['aborted'], aborted: [[1, 0]] });
      expect((await c2.marker(topic, { producerId: 1, commit: true, coordinatorEpoch: 8 })).errorCode).to.equal(ErrorCode.TRANSACTION_COORDINATOR_FENCED);
      await c2.marker(topic, { producerId: 2, commit: true });
      expect(await c2.fetch(topic, 0, READ_COMMITTED)).to.deep.include({ lastStableOffset: 5, values: ['aborted', 'open', 'plain'], aborted: [[1, 0]] });
      c2.raw.close();
      await second.close();
      if (crash) await first.close();
    });
  }
});
