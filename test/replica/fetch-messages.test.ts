// ReplicaManager.fetchMessages on its own, without the Fetch request around it: the request budget
// and KIP-74's first batch, the read_committed bound and its aborted transactions, the long poll,
// and a partition's error ending the wait at once.
import { expect } from 'chai';
import { ErrorCode } from '../../src/common/errors';
import { buildBatchSync, type BuildBatchOptions } from '../../src/records/records';
import { NO_LEADER_EPOCH, type Partition } from '../../src/replica/replica-manager';
import type { FetchParams, FetchPartition } from '../../src/replica/fetch-reads';
import { withBroker } from '../helpers/broker';

describe('ReplicaManager.fetchMessages', function () {
  this.timeout(20000);
  const broker = withBroker();
  const replicas = () => broker.current().broker.replicas;
  let topics = 0;

  async function freshTopic(numPartitions = 1): Promise<string> {
    const name = `fetch-messages-${topics++}`;
    const created = await broker.current().broker.controller.createTopic({ name, numPartitions, replicationFactor: 1, assignments: [], configs: {} }, false);
    expect(created.errorCode).to.equal(ErrorCode.NONE);
    return name;
  }

  /** Appends one batch and waits until it is written; its size in bytes. */
  async function append(p: Partition, o: Omit<BuildBatchOptions, 'records'> & { values: string[] }): Promise<number> {
    const batch = buildBatchSync({ ...o, records: o.values.map((value) => ({ value })) });
    const result = await replicas().append(p, batch, 0, { produceVersion: 9, nowMs: Date.now() });
    expect(result.errorCode).to.equal(ErrorCode.NONE);
    await result.done;
    return batch.length;
  }

  const params = (over: Partial<FetchParams> = {}): FetchParams => ({
    maxWaitMs: 0, minBytes: 0, maxBytes: 1 << 20, isolation: 'high-watermark', allocate: (size) => Buffer.allocUnsafe(size), ...over,
  });
  const at = (topic: string, partition: number, over: Partial<FetchPartition> = {}): FetchPartition => ({
    topic, partition, fetchOffset: 0, maxBytes: 1 << 20, currentLeaderEpoch: NO_LEADER_EPOCH, ...over,
  });

  it('gives the first partition with data its first whole batch over both limits (KIP-74), and the later ones only what the budget leaves', async () => {
    const topic = await freshTopic(3);
    const big = await append(replicas().partition(topic, 1)!, { values: ['x'.repeat(500)] });
    await append(replicas().partition(topic, 2)!, { values: ['y'.repeat(100)] });
    const read = await replicas().fetchMessages(params({ maxBytes: 50 }),
      [at(topic, 0, { maxBytes: 10 }), at(topic, 1, { maxBytes: 10 }), at(topic, 2, { maxBytes: 10 })]);
    expect(read.map((r) => [r.errorCode, r.records.length, r.highWatermark])).to.deep.equal([
      [ErrorCode.NONE, 0, 0], [ErrorCode.NONE, big, 1], [ErrorCode.NONE, 0, 1],
    ]);
    expect(read[1].abortedTransactions).to.equal(null);
  });

  it('stops read_committed at the last stable offset and names the aborted transactions of the batches returned', async () => {
    const topic = await freshTopic();
    const p = replicas().partition(topic, 0)!;
    const producer = { producerId: 7, producerEpoch: 0, isTransactional: true };
    await append(p, { ...producer, baseSequence: 0, values: ['aborted'] });
    const marker = await replicas().appendTxnMarker(p, { producerId: 7, producerEpoch: 0, coordinatorEpoch: 0, commit: false }, Date.now());
    await marker.done;
    await append(p, { ...producer, baseSequence: 1, values: ['open'] }); // offset 2, its transaction still open
    await append(p, { values: ['plain'] }); // offset 3, behind the open transaction

    const committed = (await replicas().fetchMessages(params({ isolation: 'txn-committed' }), [at(topic, 0)]))[0];
    expect([committed.highWatermark, committed.lastStableOffset]).to.deep.equal([4, 2]);
    expect(committed.abortedTransactions!.map((t) => [t.producerId, t.firstOffset])).to.deep.equal([[7, 0]]);
    const uncommitted = (await replicas().fetchMessages(params(), [at(topic, 0)]))[0];
    expect(uncommitted.records.length).to.be.greaterThan(committed.records.length);
    expect(uncommitted.abortedTransactions).to.equal(null);
  });

  it('waits for minBytes until an append brings them, then reads again', async () => {
    const topic = await freshTopic();
    const fetched = replicas().fetchMessages(params({ maxWaitMs: 10_000, minBytes: 1 }), [at(topic, 0)]);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const size = await append(replicas().partition(topic, 0)!, { values: ['late'] });
    expect((await fetched)[0].records.length).to.equal(size);
  });

  it('answers at once with nothing when the wait ends, and without waiting when a partition fails', async () => {
    const topic = await freshTopic();
    const started = Date.now();
    const expired = await replicas().fetchMessages(params({ maxWaitMs: 100, minBytes: 1 }), [at(topic, 0)]);
    expect(expired[0].records.length).to.equal(0);
    expect(Date.now() - started).to.be.at.least(90);
    const failing = Date.now();
    const failed = await replicas().fetchMessages(params({ maxWaitMs: 10_000, minBytes: 1, isolation: 'txn-committed' }),
      [at(topic, 0), at('no-such-topic', 0), at(topic, 0, { currentLeaderEpoch: 5 })]);
    expect(Date.now() - failing).to.be.below(5000);
    expect(failed.map((r) => [r.errorCode, r.highWatermark, r.abortedTransactions])).to.deep.equal([
      [ErrorCode.NONE, 0, []], [ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, -1, []], [ErrorCode.UNKNOWN_LEADER_EPOCH, -1, []],
    ]);
  });

  it('answers a follower behind the high watermark at once, and ends its wait when the high watermark passes its own (KIP-1166)', async () => {
    const topic = await freshTopic();
    const p = replicas().partition(topic, 0)!;
    await append(p, { values: ['one'] });
    // Nothing past offset 1 and minBytes out of reach: only the high watermark can end these fetches early.
    const follower = (replicaHighWatermark: number) =>
      replicas().fetchMessages(params({ maxWaitMs: 10_000, minBytes: 1 << 20, isolation: 'log-end' }), [at(topic, 0, { fetchOffset: 1, replicaHighWatermark })]);
    const behindAt = Date.now();
    const behind = await follower(0);
    expect(Date.now() - behindAt).to.be.below(5000);
    expect([behind[0].records.length, behind[0].highWatermark]).to.deep.equal([0, 1]);

    let answered = false;
    const current = follower(1).then((r) => {
      answered = true;
      return r;
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(answered, 'a follower up to date waits').to.equal(false);
    const appendedAt = Date.now();
    await append(p, { values: ['two'] });
    const woken = await current;
    expect(Date.now() - appendedAt, 'woken by the high watermark, not the end of the wait').to.be.below(5000);
    expect(woken[0].highWatermark).to.equal(2);
  });
});
