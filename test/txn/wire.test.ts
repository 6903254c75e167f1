// The transaction APIs over the wire, as a client drives them: FindCoordinator creates
// __transaction_state, InitProducerId, AddPartitionsToTxn (v0-3 and the batched v4+), Produce with the
// coordinator's verification, EndTxn, DescribeTransactions, ListTransactions, the PRODUCER_FENCED
// mapping of old versions, and a transaction aborted at its timeout.
import { expect } from 'chai';
import { ApiKey } from '../../src/protocol/generated';
import type { AddPartitionsToTxnResponse } from '../../src/protocol/generated/AddPartitionsToTxnResponse';
import type { DescribeTransactionsResponse } from '../../src/protocol/generated/DescribeTransactionsResponse';
import type { EndTxnResponse } from '../../src/protocol/generated/EndTxnResponse';
import type { FetchResponse } from '../../src/protocol/generated/FetchResponse';
import type { FindCoordinatorResponse } from '../../src/protocol/generated/FindCoordinatorResponse';
import type { InitProducerIdResponse } from '../../src/protocol/generated/InitProducerIdResponse';
import type { ListTransactionsResponse } from '../../src/protocol/generated/ListTransactionsResponse';
import type { AddOffsetsToTxnResponse } from '../../src/protocol/generated/AddOffsetsToTxnResponse';
import type { OffsetFetchResponse } from '../../src/protocol/generated/OffsetFetchResponse';
import type { TxnOffsetCommitResponse } from '../../src/protocol/generated/TxnOffsetCommitResponse';
import type { ProduceResponse } from '../../src/protocol/generated/ProduceResponse';
import { ErrorCode } from '../../src/common/errors';
import { buildBatchSync } from '../../src/records/records';
import { RawClient } from '../helpers/raw-client';
import { withBroker } from '../helpers/broker';

const READ_COMMITTED = 1;

describe('transactions (wire)', function () {
  this.timeout(20000);
  const broker = withBroker({
    config: {
      'transaction.state.log.num.partitions': '4', 'offsets.topic.num.partitions': '3',
      'transaction.abort.timed.out.transaction.cleanup.interval.ms': '100',
    },
  });
  let raw: RawClient;
  const sequences = new Map<string, number>();

  before(async () => {
    raw = await RawClient.connect(broker.current().port);
    // The group coordinator loads __consumer_offsets while the listener starts.
    for (let i = 0; i < 200 && !broker.current().broker.groups.isActive(); i++) await new Promise((r) => setTimeout(r, 10));
    for (const name of ['wt', 'wt2']) {
      await broker.current().broker.controller.createTopic({ name, numPartitions: 2, replicationFactor: 1, assignments: [], configs: {} }, false);
    }
  });
  after(() => raw.close());

  async function findCoordinator(key: string): Promise<FindCoordinatorResponse> {
    return raw.request<FindCoordinatorResponse>(ApiKey.FindCoordinator, 3, { key, keyType: 1, coordinatorKeys: [] });
  }

  async function initProducerId(transactionalId: string, opts: { timeoutMs?: number; version?: number; producerId?: bigint; producerEpoch?: number } = {}) {
    const res = await raw.request<InitProducerIdResponse>(ApiKey.InitProducerId, opts.version ?? 4, {
      transactionalId, transactionTimeoutMs: opts.timeoutMs ?? 60_000, producerId: opts.producerId ?? -1n, producerEpoch: opts.producerEpoch ?? -1,
    });
    return { ...res, producerId: res.producerId! };
  }

  async function addPartitions(transactionalId: string, producerId: bigint, producerEpoch: number, topics: { name: string; partitions: number[] }[], version = 3) {
    const res = await raw.request<AddPartitionsToTxnResponse>(ApiKey.AddPartitionsToTxn, version, {
      v3AndBelowTransactionalId: transactionalId, v3AndBelowProducerId: producerId, v3AndBelowProducerEpoch: producerEpoch,
      v3AndBelowTopics: topics, transactions: [],
    });
    return res.resultsByTopicV3AndBelow.flatMap((t) => t.resultsByPartition.map((p) => `${t.name}:${p.partitionIndex}=${p.partitionErrorCode}`));
  }

  async function produce(transactionalId: string, producerId: bigint, producerEpoch: number, topic: string, values: string[], version = 11) {
    const key = `${producerId}:${producerEpoch}:${topic}`;
    const baseSequence = sequences.get(key) ?? 0;
    const records = buildBatchSync({
      producerId: Number(producerId), producerEpoch, baseSequence, isTransactional: true, records: values.map((value) => ({ value })),
    });
    const res = await raw.request<ProduceResponse>(ApiKey.Produce, version, {
      transactionalId, acks: -1, timeoutMs: 1000, topicData: [{ name: topic, partitionData: [{ index: 0, records }] }],
    });
    const errorCode = res.responses[0].partitionResponses[0].errorCode;
    if (errorCode === ErrorCode.NONE) sequences.set(key, baseSequence + values.length);
    return errorCode;
  }

  async function endTxn(transactionalId: string, producerId: bigint, producerEpoch: number, committed: boolean, version = 3) {
    return (await raw.request<EndTxnResponse>(ApiKey.EndTxn, version, { transactionalId, producerId, producerEpoch, committed })).errorCode;
  }

  async function describe(transactionalId: string) {
    return (await raw.request<DescribeTransactionsResponse>(ApiKey.DescribeTransactions, 0, { transactionalIds: [transactionalId] })).transactionStates[0];
  }

  async function fetchCommitted(topic: string) {
    const res = await raw.request<FetchResponse>(ApiKey.Fetch, 12, {
      replicaId: -1, maxWaitMs: 0, minBytes: 0, maxBytes: 1 << 20, isolationLevel: READ_COMMITTED, sessionId: 0, sessionEpoch: -1,
      topics: [{ topic, partitions: [{ partition: 0, fetchOffset: 0n, partitionMaxBytes: 1 << 20, currentLeaderEpoch: -1, logStartOffset: -1n }] }],
      forgottenTopicsData: [], rackId: '',
    });
    const p = res.responses[0].partitions[0];
    return {
      highWatermark: Number(p.highWatermark), lastStableOffset: Number(p.lastStableOffset), bytes: p.records!.length,
      aborted: (p.abortedTransactions ?? []).map((t) => Number(t.producerId)),
    };
  }

  it('FindCoordinator for a transactional id creates __transaction_state, then answers this broker', async () => {
    const first = await findCoordinator('w1');
    expect(first.errorCode).to.equal(ErrorCode.COORDINATOR_NOT_AVAILABLE);
    let answer = first;
    for (let i = 0; i < 100 && answer.errorCode !== ErrorCode.NONE; i++) {
      await new Promise((r) => setTimeout(r, 20));
      answer = await findCoordinator('w1');
    }
    expect(answer).to.include({ errorCode: ErrorCode.NONE, nodeId: broker.current().broker.nodeId, port: broker.current().port });
    expect(broker.current().broker.controller.topic('__transaction_state')?.partitions).to.have.length(4);
  });

  it('runs a transaction: partitions must be added before they are written, commit makes the records readable', async () => {
    const init = await initProducerId('w1');
    expect(init).to.include({ errorCode: ErrorCode.NONE, producerEpoch: 0 });
    const pid = init.producerId;

    expect(await produce('w1', pid, 0, 'wt', ['early']), 'not in the transaction yet').to.equal(ErrorCode.TRANSACTION_ABORTABLE);
    expect(await produce('w1', pid, 0, 'wt', ['early'], 9)).to.equal(ErrorCode.INVALID_TXN_STATE);

    expect(await addPartitions('w1', pid, 0, [{ name: 'wt', partitions: [0] }, { name: 'nope', partitions: [0] }]))
      .to.deep.equal([`wt:0=${ErrorCode.OPERATION_NOT_ATTEMPTED}`, `nope:0=${ErrorCode.UNKNOWN_TOPIC_OR_PARTITION}`]);
    expect(await addPartitions('w1', pid, 0, [{ name: 'wt', partitions: [0] }])).to.deep.equal(['wt:0=0']);
    expect(await produce('w1', pid, 0, 'wt', ['a', 'b'])).to.equal(ErrorCode.NONE);

    expect(await fetchCommitted('wt')).to.include({ highWatermark: 2, lastStableOffset: 0, bytes: 0 });
    expect(await describe('w1')).to.deep.include({
      errorCode: 0, transactionState: 'Ongoing', producerId: pid, producerEpoch: 0, topics: [{ topic: 'wt', partitions: [0] }],
    });
    const listed = await raw.request<ListTransactionsResponse>(ApiKey.ListTransactions, 1, { stateFilters: ['Ongoing'], producerIdFilters: [], durationFilter: -1n });
    expect(listed.transactionStates).to.deep.equal([{ transactionalId: 'w1', producerId: pid, transactionState: 'Ongoing' }]);

    expect(await endTxn('w1', pid, 0, true)).to.equal(ErrorCode.NONE);
    const after = await fetchCommitted('wt');
    expect(after).to.include({ highWatermark: 3, lastStableOffset: 3 }); // two records and the COMMIT marker
    expect(after.bytes).to.be.greaterThan(0);
    expect((await describe('w1')).transactionState).to.equal('CompleteCommit');
    expect(await endTxn('w1', pid, 0, true), 'a retried commit').to.equal(ErrorCode.NONE);
    expect(await endTxn('w1', pid, 0, false)).to.equal(ErrorCode.INVALID_TXN_STATE);
  });

  it('batched AddPartitionsToTxn (v4+): adds, or with verifyOnly checks, per transaction', async () => {
    const { producerId: pid } = await initProducerId('w2');
    const request = (verifyOnly: boolean, partitions: number[]) => raw.request<AddPartitionsToTxnResponse>(ApiKey.AddPartitionsToTxn, 5, {
      transactions: [{ transactionalId: 'w2', producerId: pid, producerEpoch: 0, verifyOnly, topics: [{ name: 'wt2', partitions }] }],
    });
    const errors = (res: AddPartitionsToTxnResponse) => res.resultsByTransaction[0].topicResults[0].resultsByPartition.map((p) => p.partitionErrorCode);
    expect(errors(await request(false, [1]))).to.deep.equal([ErrorCode.NONE]);
    const verified = await request(true, [0, 1]);
    expect(verified.errorCode).to.equal(ErrorCode.NONE);
    expect(errors(verified)).to.deep.equal([ErrorCode.TRANSACTION_ABORTABLE, ErrorCode.NONE]);
    expect(await endTxn('w2', pid, 0, false)).to.equal(ErrorCode.NONE);
  });

  it('answers INVALID_PRODUCER_EPOCH instead of PRODUCER_FENCED to versions before KIP-588', async () => {
    const { producerId: pid } = await initProducerId('w3');
    await initProducerId('w3'); // epoch 1: epoch 0 is fenced
    expect(await addPartitions('w3', pid, 0, [{ name: 'wt', partitions: [1] }], 1)).to.deep.equal([`wt:1=${ErrorCode.INVALID_PRODUCER_EPOCH}`]);
    expect(await addPartitions('w3', pid, 0, [{ name: 'wt', partitions: [1] }], 2)).to.deep.equal([`wt:1=${ErrorCode.PRODUCER_FENCED}`]);
    expect(await endTxn('w3', pid, 0, true, 1)).to.equal(ErrorCode.INVALID_PRODUCER_EPOCH);
    expect(await endTxn('w3', pid, 0, true, 2)).to.equal(ErrorCode.PRODUCER_FENCED);
    expect((await initProducerId('w3', { version: 3, producerId: pid + 1n, producerEpoch: 1 })).errorCode).to.equal(ErrorCode.INVALID_PRODUCER_EPOCH);
    expect((await initProducerId('w3', { version: 4, producerId: pid + 1n, producerEpoch: 1 })).errorCode).to.equal(ErrorCode.PRODUCER_FENCED);
    expect((await initProducerId('w3', { timeoutMs: 900_001 })).errorCode).to.equal(ErrorCode.INVALID_TRANSACTION_TIMEOUT);
  });

  it('takes offsets only from a transaction that has the group (AddOffsetsToTxn); commit makes them visible', async () => {
    const { producerId: pid } = await initProducerId('w5');
    const commitOffset = (version: number) => raw.request<TxnOffsetCommitResponse>(ApiKey.TxnOffsetCommit, version, {
      transactionalId: 'w5', groupId: 'w5-group', producerId: pid, producerEpoch: 0, generationId: -1, memberId: '', groupInstanceId: null,
      topics: [{ name: 'wt', partitions: [{ partitionIndex: 1, committedOffset: 42n, committedLeaderEpoch: -1, committedMetadata: 'm' }] }],
    }).then((res) => res.topics[0].partitions[0].errorCode);
    const committed = async () => {
      const res = await raw.request<OffsetFetchResponse>(ApiKey.OffsetFetch, 7, {
        groupId: 'w5-group', topics: [{ name: 'wt', partitionIndexes: [1] }], requireStable: true, groups: [],
      });
      const p = res.topics[0].partitions[0];
      return [Number(p.committedOffset), p.errorCode];
    };

    expect(await commitOffset(4), 'the group is not in the transaction').to.equal(ErrorCode.TRANSACTION_ABORTABLE);
    expect(await commitOffset(3)).to.equal(ErrorCode.INVALID_TXN_STATE);
    const added = await raw.request<AddOffsetsToTxnResponse>(ApiKey.AddOffsetsToTxn, 3, {
      transactionalId: 'w5', producerId: pid, producerEpoch: 0, groupId: 'w5-group',
    });
    expect(added.errorCode).to.equal(ErrorCode.NONE);
    expect((await describe('w5')).topics).to.deep.equal([
      { topic: '__consumer_offsets', partitions: [broker.current().broker.groups.partitionFor('w5-group')] },
    ]);
    expect(await commitOffset(4)).to.equal(ErrorCode.NONE);
    expect(await committed()).to.deep.equal([-1, ErrorCode.UNSTABLE_OFFSET_COMMIT]);
    expect(await endTxn('w5', pid, 0, true)).to.equal(ErrorCode.NONE);
    expect(await committed()).to.deep.equal([42, ErrorCode.NONE]);
  });

  it('aborts a transaction past its timeout: its records are listed as aborted and its producer is fenced', async () => {
    const { producerId: pid } = await initProducerId('w4', { timeoutMs: 300 });
    expect(await addPartitions('w4', pid, 0, [{ name: 'wt2', partitions: [0] }])).to.deep.equal(['wt2:0=0']);
    expect(await produce('w4', pid, 0, 'wt2', ['doomed'])).to.equal(ErrorCode.NONE);
    let state = await describe('w4');
    for (let i = 0; i < 100 && state.transactionState !== 'CompleteAbort'; i++) {
      await new Promise((r) => setTimeout(r, 20));
      state = await describe('w4');
    }
    // The fence bumps the epoch, and the abort again: transaction.version 2 is finalized.
    expect(state).to.include({ transactionState: 'CompleteAbort', producerEpoch: 2 });
    const read = await fetchCommitted('wt2');
    expect(read).to.include({ highWatermark: 2, lastStableOffset: 2 });
    expect(read.aborted).to.deep.equal([Number(pid)]);
    expect(await produce('w4', pid, 0, 'wt2', ['zombie'])).to.equal(ErrorCode.INVALID_PRODUCER_EPOCH);
    expect(await endTxn('w4', pid, 0, true)).to.equal(ErrorCode.PRODUCER_FENCED);
  });
});
