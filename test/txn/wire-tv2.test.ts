// Transaction version 2 over the wire, as a Kafka 4 client drives it (KIP-890 part 2): no
// AddPartitionsToTxn, Produce v12 adds the partition, EndTxn v5 bumps the epoch and answers it, the
// markers carry it, and a late write of the previous transaction is fenced. A version 1 producer
// (AddPartitionsToTxn v3, Produce v11, EndTxn v4) on the same partitions at the same time keeps its rules.
import { expect } from 'chai';
import { ApiKey } from '../../src/protocol/generated';
import type { AddPartitionsToTxnResponse } from '../../src/protocol/generated/AddPartitionsToTxnResponse';
import type { DescribeTransactionsResponse } from '../../src/protocol/generated/DescribeTransactionsResponse';
import type { EndTxnResponse } from '../../src/protocol/generated/EndTxnResponse';
import type { FetchResponse } from '../../src/protocol/generated/FetchResponse';
import type { FindCoordinatorResponse } from '../../src/protocol/generated/FindCoordinatorResponse';
import type { InitProducerIdResponse } from '../../src/protocol/generated/InitProducerIdResponse';
import type { OffsetFetchResponse } from '../../src/protocol/generated/OffsetFetchResponse';
import type { TxnOffsetCommitResponse } from '../../src/protocol/generated/TxnOffsetCommitResponse';
import type { WriteTxnMarkersResponse } from '../../src/protocol/generated/WriteTxnMarkersResponse';
import type { ProduceResponse } from '../../src/protocol/generated/ProduceResponse';
import { ErrorCode } from '../../src/common/errors';
import { buildBatchSync, decodeRecords } from '../../src/records/records';
import { RawClient } from '../helpers/raw-client';
import { withBroker } from '../helpers/broker';

const READ_COMMITTED = 1;

describe('transactions, transaction version 2 (wire)', function () {
  this.timeout(30000);
  const broker = withBroker({ config: { 'transaction.state.log.num.partitions': '2', 'offsets.topic.num.partitions': '2' } });
  let raw: RawClient;
  const sequences = new Map<string, number>();

  before(async () => {
    raw = await RawClient.connect(broker.current().port);
    for (let i = 0; i < 200 && !broker.current().broker.groups.isActive(); i++) await new Promise((r) => setTimeout(r, 10));
    await broker.current().broker.controller.createTopic({ name: 'v2', numPartitions: 2, replicationFactor: 1, assignments: [], configs: {} }, false);
    for (let i = 0; i < 200; i++) {
      const found = await raw.request<FindCoordinatorResponse>(ApiKey.FindCoordinator, 3, { key: 'any', keyType: 1, coordinatorKeys: [] });
      if (found.errorCode === ErrorCode.NONE) break;
      await new Promise((r) => setTimeout(r, 25));
    }
  });
  after(() => raw.close());

  async function initProducerId(transactionalId: string) {
    const res = await raw.request<InitProducerIdResponse>(ApiKey.InitProducerId, 5, {
      transactionalId, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1,
    });
    expect(res.errorCode).to.equal(ErrorCode.NONE);
    return res.producerId!;
  }

  /** One transactional batch to partition `partition` of v2; sequences restart at each epoch. */
  async function produce(transactionalId: string, producerId: bigint, producerEpoch: number, partition: number, values: string[], version = 12) {
    const key = `${producerId}:${producerEpoch}:${partition}`;
    const baseSequence = sequences.get(key) ?? 0;
    const records = buildBatchSync({
      producerId: Number(producerId), producerEpoch, baseSequence, isTransactional: true, records: values.map((value) => ({ value })),
    });
    const res = await raw.request<ProduceResponse>(ApiKey.Produce, version, {
      transactionalId, acks: -1, timeoutMs: 1000, topicData: [{ name: 'v2', partitionData: [{ index: partition, records }] }],
    });
    const errorCode = res.responses[0].partitionResponses[0].errorCode;
    if (errorCode === ErrorCode.NONE) sequences.set(key, baseSequence + values.length);
    return errorCode;
  }

  async function endTxn(transactionalId: string, producerId: bigint, producerEpoch: number, committed: boolean, version = 5) {
    const res = await raw.request<EndTxnResponse>(ApiKey.EndTxn, version, { transactionalId, producerId, producerEpoch, committed });
    return { errorCode: res.errorCode, producerId: res.producerId, producerEpoch: res.producerEpoch };
  }

  async function describe(transactionalId: string) {
    return (await raw.request<DescribeTransactionsResponse>(ApiKey.DescribeTransactions, 0, { transactionalIds: [transactionalId] })).transactionStates[0];
  }

  async function readCommitted(partition: number) {
    const res = await raw.request<FetchResponse>(ApiKey.Fetch, 12, {
      replicaId: -1, maxWaitMs: 0, minBytes: 0, maxBytes: 1 << 20, isolationLevel: READ_COMMITTED, sessionId: 0, sessionEpoch: -1,
      topics: [{ topic: 'v2', partitions: [{ partition, fetchOffset: 0n, partitionMaxBytes: 1 << 20, currentLeaderEpoch: -1, logStartOffset: -1n }] }],
      forgottenTopicsData: [], rackId: '',
    });
    const p = res.responses[0].partitions[0];
    // As a read_committed consumer: a producer's batches from an aborted transaction's first offset to its marker are skipped.
    let abortedFrom = (p.abortedTransactions ?? []).map((t) => ({ producerId: Number(t.producerId), firstOffset: Number(t.firstOffset) }));
    const skipping = new Set<number>();
    const values: string[] = [];
    const records = p.records!;
    for (let at = 0; at < records.length;) {
      const size = records.readInt32BE(at + 8) + 12;
      const batch = records.subarray(at, at + size);
      const baseOffset = Number(batch.readBigInt64BE(0));
      const control = (batch.readInt16BE(21) & 0x20) !== 0;
      const producerId = Number(batch.readBigInt64BE(43));
      for (const t of abortedFrom) if (t.producerId === producerId && t.firstOffset <= baseOffset) skipping.add(producerId);
      if (control) {
        if (skipping.delete(producerId)) abortedFrom = abortedFrom.filter((t) => t.producerId !== producerId || t.firstOffset > baseOffset);
      } else if (!skipping.has(producerId)) for (const r of await decodeRecords(batch)) values.push(r.value!.toString());
      at += size;
    }
    return { lastStableOffset: Number(p.lastStableOffset), values };
  }

  it('adds the partitions of Produce v12, bumps the epoch at each EndTxn v5, and fences a late write of the ended transaction', async () => {
    const pid = await initProducerId('tv2-a');
    expect(await produce('tv2-a', pid, 0, 0, ['a1'])).to.equal(ErrorCode.NONE);
    expect(await produce('tv2-a', pid, 0, 1, ['a2'])).to.equal(ErrorCode.NONE);
    const ongoing = await describe('tv2-a');
    expect(ongoing.transactionState).to.equal('Ongoing');
    expect(ongoing.topics.flatMap((t) => t.partitions.map((p) => `${t.topic}:${p}`)).sort()).to.deep.equal(['v2:0', 'v2:1']);
    expect((await readCommitted(0)).lastStableOffset).to.equal(0);

    expect(await endTxn('tv2-a', pid, 0, true)).to.deep.equal({ errorCode: ErrorCode.NONE, producerId: pid, producerEpoch: 1 });
    expect(await readCommitted(0)).to.deep.equal({ lastStableOffset: 2, values: ['a1'] });
    // The transaction's late write, at the epoch the marker moved past: fenced, nothing written.
    expect(await produce('tv2-a', pid, 0, 0, ['late'])).to.equal(ErrorCode.INVALID_PRODUCER_EPOCH);

    // The next transaction at the new epoch, aborted.
    expect(await produce('tv2-a', pid, 1, 0, ['b1'])).to.equal(ErrorCode.NONE);
    expect(await endTxn('tv2-a', pid, 1, false)).to.deep.equal({ errorCode: ErrorCode.NONE, producerId: pid, producerEpoch: 2 });
    expect(await readCommitted(0)).to.deep.equal({ lastStableOffset: 4, values: ['a1'] });
    // A retried abort answers the same; the old epoch is fenced at the partition too.
    expect(await endTxn('tv2-a', pid, 1, false)).to.deep.equal({ errorCode: ErrorCode.NONE, producerId: pid, producerEpoch: 2 });
    expect(await produce('tv2-a', pid, 1, 0, ['late'])).to.equal(ErrorCode.INVALID_PRODUCER_EPOCH);
    expect(await describe('tv2-a')).to.include({ transactionState: 'CompleteAbort', producerEpoch: 2 });
  });

  it('refuses a Produce v12 write of a fenced producer, and one whose transaction is not this id\'s', async () => {
    const pid = await initProducerId('tv2-b');
    await initProducerId('tv2-b'); // epoch 1 fences epoch 0
    expect(await produce('tv2-b', pid, 0, 0, ['zombie'])).to.equal(ErrorCode.INVALID_PRODUCER_EPOCH);
    expect(await produce('tv2-b', pid + 1000n, 0, 0, ['stranger'])).to.equal(ErrorCode.INVALID_PRODUCER_ID_MAPPING);
    // The current epoch, but not from sequence 0 on a partition it has not written to.
    sequences.set(`${pid}:1:1`, 5);
    expect(await produce('tv2-b', pid, 1, 1, ['gap'])).to.equal(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER);
    expect(await describe('tv2-b')).to.include({ transactionState: 'Ongoing' });
  });

  it('serves a version 1 producer alongside a version 2 one on the same partition', async () => {
    const v2 = await initProducerId('mix-2');
    const v1 = await initProducerId('mix-1');
    const before = (await readCommitted(1)).values;
    // Version 1: Produce v11 of a partition not added is refused; AddPartitionsToTxn v3 first.
    expect(await produce('mix-1', v1, 0, 1, ['v1-x'], 11)).to.equal(ErrorCode.TRANSACTION_ABORTABLE);
    const added = await raw.request<AddPartitionsToTxnResponse>(ApiKey.AddPartitionsToTxn, 3, {
      v3AndBelowTransactionalId: 'mix-1', v3AndBelowProducerId: v1, v3AndBelowProducerEpoch: 0,
      v3AndBelowTopics: [{ name: 'v2', partitions: [1] }], transactions: [],
    });
    expect(added.resultsByTopicV3AndBelow[0].resultsByPartition[0].partitionErrorCode).to.equal(ErrorCode.NONE);
    expect(await produce('mix-1', v1, 0, 1, ['v1-a'], 11)).to.equal(ErrorCode.NONE);
    expect(await produce('mix-2', v2, 0, 1, ['v2-a'])).to.equal(ErrorCode.NONE);
    // Version 2 commits first (and bumps); version 1 commits at its epoch, which stays.
    expect(await endTxn('mix-2', v2, 0, true)).to.deep.equal({ errorCode: ErrorCode.NONE, producerId: v2, producerEpoch: 1 });
    expect((await endTxn('mix-1', v1, 0, true, 4)).errorCode).to.equal(ErrorCode.NONE);
    expect(await describe('mix-1')).to.include({ transactionState: 'CompleteCommit', producerEpoch: 0 });
    expect((await readCommitted(1)).values).to.deep.equal([...before, 'v1-a', 'v2-a']);
    // Each goes on with its epoch.
    expect(await produce('mix-2', v2, 1, 1, ['v2-b'])).to.equal(ErrorCode.NONE);
    expect(await endTxn('mix-2', v2, 1, true)).to.deep.include({ errorCode: ErrorCode.NONE, producerEpoch: 2 });
    expect((await readCommitted(1)).values).to.deep.equal([...before, 'v1-a', 'v2-a', 'v2-b']);
  });

  it('TxnOffsetCommit v5 adds the group\'s offsets partition (no AddOffsetsToTxn); v6 names the topic by id', async () => {
    const pid = await initProducerId('tv2-offsets');
    const topicId = broker.current().broker.controller.topic('v2')!.id;
    const commitOffset = (version: number, offset: bigint, epoch: number, topic: { name?: string; topicId?: string } = { name: 'v2' }) =>
      raw.request<TxnOffsetCommitResponse>(ApiKey.TxnOffsetCommit, version, {
        transactionalId: 'tv2-offsets', groupId: 'tv2-group', producerId: pid, producerEpoch: epoch,
        generationIdOrMemberEpoch: -1, memberId: '', groupInstanceId: null,
        topics: [{ ...topic, partitions: [{ partitionIndex: 1, committedOffset: offset, committedLeaderEpoch: -1, committedMetadata: '' }] }],
      }).then((res) => res.topics[0].partitions[0].errorCode);
    const committed = async () => {
      const res = await raw.request<OffsetFetchResponse>(ApiKey.OffsetFetch, 7, {
        groupId: 'tv2-group', topics: [{ name: 'v2', partitionIndexes: [1] }], requireStable: true, groups: [],
      });
      const p = res.topics[0].partitions[0];
      return [Number(p.committedOffset), p.errorCode];
    };

    expect(await commitOffset(5, 7n, 0)).to.equal(ErrorCode.NONE);
    expect((await describe('tv2-offsets')).topics).to.deep.equal([
      { topic: '__consumer_offsets', partitions: [broker.current().broker.groups.partitionFor('tv2-group')] },
    ]);
    expect(await committed()).to.deep.equal([-1, ErrorCode.UNSTABLE_OFFSET_COMMIT]);
    expect(await endTxn('tv2-offsets', pid, 0, true)).to.deep.include({ errorCode: ErrorCode.NONE, producerEpoch: 1 });
    expect(await committed()).to.deep.equal([7, ErrorCode.NONE]);

    // v6, by topic id; an unknown id is UNKNOWN_TOPIC_ID. Then an abort drops the offsets.
    expect(await commitOffset(6, 9n, 1, { topicId: '0000000000000000000000000000abcd' })).to.equal(ErrorCode.UNKNOWN_TOPIC_ID);
    expect(await commitOffset(6, 9n, 1, { topicId })).to.equal(ErrorCode.NONE);
    expect(await endTxn('tv2-offsets', pid, 1, false)).to.deep.include({ errorCode: ErrorCode.NONE, producerEpoch: 2 });
    expect(await committed()).to.deep.equal([7, ErrorCode.NONE]);
    // The ended transaction's producer epoch is fenced.
    expect(await commitOffset(5, 11n, 1)).to.equal(ErrorCode.INVALID_PRODUCER_EPOCH);
  });

  it('WriteTxnMarkers v2 of a version 2 transaction wants an epoch above the producer\'s; v1 takes the same epoch', async () => {
    const pid = await initProducerId('tv2-markers');
    expect(await produce('tv2-markers', pid, 0, 1, ['m'])).to.equal(ErrorCode.NONE);
    expect(await endTxn('tv2-markers', pid, 0, true)).to.deep.include({ errorCode: ErrorCode.NONE, producerEpoch: 1 });
    const { broker: b } = broker.current();
    const coordinatorEpoch = b.controller.topic('__transaction_state')!.partitions[b.transactions.partitionFor('tv2-markers')].leaderEpoch;
    const writeMarker = async (version: number, producerEpoch: number, transactionVersion: number) => {
      const res = await raw.request<WriteTxnMarkersResponse>(ApiKey.WriteTxnMarkers, version, {
        markers: [{ producerId: pid, producerEpoch, transactionResult: true, coordinatorEpoch, transactionVersion, topics: [{ name: 'v2', partitionIndexes: [1] }] }],
      });
      return res.markers[0].topics[0].partitions[0].errorCode;
    };
    // The partition saw the commit marker at epoch 1: with no transaction open, a version 2 marker at
    // that epoch is a retry (written again, as Kafka 4.4 does); an older one is refused.
    expect(await writeMarker(2, 1, 2)).to.equal(ErrorCode.NONE);
    expect(await writeMarker(2, 0, 2)).to.equal(ErrorCode.INVALID_PRODUCER_EPOCH);
    expect(await writeMarker(2, 0, 1)).to.equal(ErrorCode.INVALID_PRODUCER_EPOCH);
    // A transaction open at epoch 1: a version 2 marker must be above it, an older version's may equal it.
    expect(await produce('tv2-markers', pid, 1, 1, ['n'])).to.equal(ErrorCode.NONE);
    expect(await writeMarker(2, 1, 2)).to.equal(ErrorCode.INVALID_PRODUCER_EPOCH);
    expect(await writeMarker(1, 1, 0)).to.equal(ErrorCode.NONE);
    expect(await writeMarker(2, 2, 2)).to.equal(ErrorCode.NONE);
  });
});
