// ShareFetch and ShareAcknowledge end to end over a real broker (share-partitions kept by an
// in-memory persister): members acquire disjoint records, acknowledge and release them, released
// records come back with a higher delivery count, sessions and connections ending release what
// their member holds, a waiting fetch wakes when records are produced.
import { expect } from 'chai';
import { ApiKey } from '../../src/protocol/generated';
import type { ShareFetchRequest } from '../../src/protocol/generated/ShareFetchRequest';
import type { ShareFetchResponse } from '../../src/protocol/generated/ShareFetchResponse';
import { ErrorCode } from '../../src/common/errors';
import { buildBatchSync, decodeRecordsSync } from '../../src/records/records';
import { logBatches } from '../../src/share/log-batches';
import { AcknowledgeType } from '../../src/share/share-partition';
import { withBroker } from '../helpers/broker';
import { RawClient } from '../helpers/raw-client';
import { MemoryPersister } from '../helpers/memory-persister';
import { eventually } from '../helpers/eventually';

const GROUP = 'share-fetch-group';

interface Range { firstOffset: bigint; lastOffset: bigint; deliveryCount: number }

describe('ShareFetch and ShareAcknowledge', function () {
  this.timeout(20_000);
  const persister = new MemoryPersister();
  const broker = withBroker(() => ({ sharePersister: persister }));
  const clients: RawClient[] = [];
  const connect = async () => {
    const c = await RawClient.connect(broker.current().port);
    clients.push(c);
    return c;
  };
  afterEach(() => {
    for (const c of clients.splice(0)) c.close();
  });

  async function createTopic(c: RawClient, name: string): Promise<string> {
    const created = await c.api(ApiKey.CreateTopics, 7, {
      topics: [{ name, numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 5000, validateOnly: false,
    });
    expect(created.topics[0].errorCode).to.equal(ErrorCode.NONE);
    return created.topics[0].topicId!;
  }

  /** `batches` batches of `perBatch` records each. */
  async function produce(c: RawClient, topicId: string, batches: number, perBatch: number): Promise<void> {
    for (let b = 0; b < batches; b++) {
      const records = buildBatchSync({ records: Array.from({ length: perBatch }, (_, i) => ({ value: `v${b * perBatch + i}` })) });
      const produced = await c.api(ApiKey.Produce, 13, { acks: -1, timeoutMs: 5000, topicData: [{ topicId, partitionData: [{ index: 0, records }] }] });
      expect(produced.responses[0].partitionResponses[0].errorCode).to.equal(ErrorCode.NONE);
    }
  }

  function shareFetch(c: RawClient, memberId: string, epoch: number, topicId: string, opts: Partial<ShareFetchRequest> & {
    acknowledge?: Array<{ firstOffset: bigint; lastOffset: bigint; acknowledgeTypes: number[] }>; forget?: boolean;
  } = {}): Promise<ShareFetchResponse> {
    const { acknowledge = [], forget = false, ...rest } = opts;
    return c.api(ApiKey.ShareFetch, 1, {
      groupId: GROUP, memberId, shareSessionEpoch: epoch, maxWaitMs: 0, minBytes: 1, maxBytes: 1 << 20, maxRecords: 500, batchSize: 500,
      topics: forget ? [] : [{ topicId, partitions: [{ partitionIndex: 0, partitionMaxBytes: 0, acknowledgementBatches: acknowledge }] }],
      forgottenTopicsData: forget ? [{ topicId, partitions: [0] }] : [],
      ...rest,
    });
  }

  function shareAcknowledge(c: RawClient, memberId: string, epoch: number, topicId: string, ranges: readonly Range[], type: AcknowledgeType) {
    return c.api(ApiKey.ShareAcknowledge, 1, {
      groupId: GROUP, memberId, shareSessionEpoch: epoch,
      topics: [{ topicId, partitions: [{ partitionIndex: 0, acknowledgementBatches: ranges.map((r) => ({ firstOffset: r.firstOffset, lastOffset: r.lastOffset, acknowledgeTypes: [type] })) }] }],
    });
  }

  const acquiredOf = (res: ShareFetchResponse): Range[] => {
    expect(res.errorCode).to.equal(ErrorCode.NONE);
    return res.responses.flatMap((t) => t.partitions.flatMap((p) => p.acquiredRecords));
  };
  const offsetsOf = (ranges: readonly Range[]): number[] =>
    ranges.flatMap((r) => Array.from({ length: Number(r.lastOffset - r.firstOffset) + 1 }, (_, i) => Number(r.firstOffset) + i));

  it('gives two members disjoint records, redelivers released ones with delivery count 2, and answers whole batches', async () => {
    const c = await connect();
    const topicId = await createTopic(c, 'share-fetch-basic');
    const [a, b] = [await connect(), await connect()];
    // The first fetches open the sessions and start the share-partition at the (empty) log's end.
    expect(acquiredOf(await shareFetch(a, 'member-a', 0, topicId))).to.deep.equal([]);
    expect(acquiredOf(await shareFetch(b, 'member-b', 0, topicId))).to.deep.equal([]);
    await produce(c, topicId, 10, 10);

    const first = await shareFetch(a, 'member-a', 1, topicId, { maxRecords: 50 });
    const second = await shareFetch(b, 'member-b', 1, topicId, { maxRecords: 100 });
    const ofA = acquiredOf(first);
    const ofB = acquiredOf(second);
    expect(first.acquisitionLockTimeoutMs).to.equal(30_000);
    expect(offsetsOf(ofA)).to.have.length(50);
    expect([...offsetsOf(ofA), ...offsetsOf(ofB)].sort((x, y) => x - y)).to.deep.equal(Array.from({ length: 100 }, (_, i) => i));
    expect(ofA.every((r) => r.deliveryCount === 1) && ofB.every((r) => r.deliveryCount === 1)).to.equal(true);
    // The records sent are the whole batches holding the acquired offsets, and nothing else.
    const bytesOfA = first.responses[0].partitions[0].records!;
    const recordsOfA = logBatches(bytesOfA).flatMap((b) => decodeRecordsSync(bytesOfA.subarray(b.start, b.end)));
    expect(recordsOfA.map((r) => r.offset)).to.deep.equal(offsetsOf(ofA));
    expect(recordsOfA[0].value!.toString()).to.equal(`v${recordsOfA[0].offset}`);

    // A accepts its records; B releases its own, which A then acquires at delivery count 2.
    const accepted = await shareAcknowledge(a, 'member-a', 2, topicId, ofA, AcknowledgeType.ACCEPT);
    expect(accepted.errorCode).to.equal(ErrorCode.NONE);
    expect(accepted.responses[0].partitions[0].errorCode).to.equal(ErrorCode.NONE);
    const released = await shareAcknowledge(b, 'member-b', 2, topicId, ofB, AcknowledgeType.RELEASE);
    expect(released.responses[0].partitions[0].errorCode).to.equal(ErrorCode.NONE);
    const again = acquiredOf(await shareFetch(a, 'member-a', 3, topicId));
    expect(offsetsOf(again)).to.deep.equal(offsetsOf(ofB));
    expect(again.every((r) => r.deliveryCount === 2)).to.equal(true);

    // Acknowledging records it does not hold fails the partition's acknowledgement, not the fetch.
    const wrong = await shareFetch(b, 'member-b', 3, topicId, { acknowledge: [{ firstOffset: again[0].firstOffset, lastOffset: again[0].firstOffset, acknowledgeTypes: [1] }] });
    expect(wrong.errorCode).to.equal(ErrorCode.NONE);
    expect(wrong.responses[0].partitions[0].acknowledgeErrorCode).to.equal(ErrorCode.INVALID_RECORD_STATE);
    // A malformed batch (last before first) is INVALID_REQUEST.
    const malformed = await shareFetch(a, 'member-a', 4, topicId, { acknowledge: [{ firstOffset: 5n, lastOffset: 4n, acknowledgeTypes: [1] }] });
    expect(malformed.responses[0].partitions[0].acknowledgeErrorCode).to.equal(ErrorCode.INVALID_REQUEST);
  });

  it('answers session errors at the request level, and unknown topic ids per partition', async () => {
    const c = await connect();
    const topicId = await createTopic(c, 'share-fetch-errors');
    expect((await shareFetch(c, 'member-e', 3, topicId)).errorCode).to.equal(ErrorCode.SHARE_SESSION_NOT_FOUND);
    await shareFetch(c, 'member-e', 0, topicId);
    expect((await shareFetch(c, 'member-e', 7, topicId)).errorCode).to.equal(ErrorCode.INVALID_SHARE_SESSION_EPOCH);
    const withAcks = await shareFetch(c, 'member-e', 0, topicId, { acknowledge: [{ firstOffset: 0n, lastOffset: 0n, acknowledgeTypes: [1] }] });
    expect(withAcks.errorCode).to.equal(ErrorCode.INVALID_REQUEST);
    expect((await shareFetch(c, '', 0, topicId)).errorCode).to.equal(ErrorCode.INVALID_REQUEST);
    const unknown = await shareFetch(c, 'member-u', 0, 'ab'.repeat(16));
    expect(unknown.errorCode).to.equal(ErrorCode.NONE);
    expect(unknown.responses[0].partitions[0].errorCode).to.equal(ErrorCode.UNKNOWN_TOPIC_ID);
    expect((await c.api(ApiKey.ShareAcknowledge, 1, { groupId: GROUP, memberId: 'member-u', shareSessionEpoch: 0, topics: [] })).errorCode)
      .to.equal(ErrorCode.INVALID_SHARE_SESSION_EPOCH);
  });

  it('releases a member\'s records when its session ends with epoch -1 or its connection closes', async () => {
    const c = await connect();
    const topicId = await createTopic(c, 'share-fetch-release');
    const [a, b] = [await connect(), await connect()];
    await shareFetch(a, 'member-a', 0, topicId);
    await shareFetch(b, 'member-b', 0, topicId);
    await produce(c, topicId, 2, 5);
    const held = acquiredOf(await shareFetch(a, 'member-a', 1, topicId));
    expect(offsetsOf(held)).to.deep.equal([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(acquiredOf(await shareFetch(b, 'member-b', 1, topicId))).to.deep.equal([]);

    // FINAL with an acknowledgement: offset 0 accepted, the rest released.
    const closing = await a.api(ApiKey.ShareAcknowledge, 1, {
      groupId: GROUP, memberId: 'member-a', shareSessionEpoch: -1,
      topics: [{ topicId, partitions: [{ partitionIndex: 0, acknowledgementBatches: [{ firstOffset: 0n, lastOffset: 0n, acknowledgeTypes: [AcknowledgeType.ACCEPT] }] }] }],
    });
    expect(closing.responses[0].partitions[0].errorCode).to.equal(ErrorCode.NONE);
    expect((await shareFetch(a, 'member-a', 2, topicId)).errorCode).to.equal(ErrorCode.SHARE_SESSION_NOT_FOUND);
    const redelivered = acquiredOf(await shareFetch(b, 'member-b', 2, topicId));
    expect(offsetsOf(redelivered)).to.deep.equal([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(redelivered.every((r) => r.deliveryCount === 2)).to.equal(true);

    // member-b's connection closes: its records come back for member-c.
    const cc = await connect();
    await shareFetch(cc, 'member-c', 0, topicId);
    b.close();
    await b.closed;
    const deadline = Date.now() + 5000;
    let taken: Range[] = [];
    for (let epoch = 1; taken.length === 0 && Date.now() < deadline; epoch++) taken = acquiredOf(await shareFetch(cc, 'member-c', epoch, topicId, { maxWaitMs: 500 }));
    expect(offsetsOf(taken)).to.deep.equal([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(taken.every((r) => r.deliveryCount === 3)).to.equal(true);
  });

  it('wakes a waiting fetch when records are produced', async () => {
    const c = await connect();
    const topicId = await createTopic(c, 'share-fetch-wait');
    const a = await connect();
    await shareFetch(a, 'member-a', 0, topicId);
    const started = Date.now();
    const waiting = shareFetch(a, 'member-a', 1, topicId, { maxWaitMs: 10_000 });
    await new Promise((r) => setTimeout(r, 200));
    await produce(c, topicId, 1, 3);
    const acquired = acquiredOf(await waiting);
    expect(offsetsOf(acquired)).to.deep.equal([0, 1, 2]);
    expect(Date.now() - started).to.be.below(5000);
    // Nothing acquirable: the fetch waits out maxWaitMs and answers empty.
    const before = Date.now();
    expect(acquiredOf(await shareFetch(a, 'member-a', 2, topicId, { maxWaitMs: 300 }))).to.deep.equal([]);
    expect(Date.now() - before).to.be.at.least(250);
  });

  it('read_committed (share.isolation.level) acquires neither aborted records nor markers; read_uncommitted acquires the aborted ones', async () => {
    const c = await connect();
    const topicId = await createTopic(c, 'share-fetch-txn');
    const committedGroup = 'share-fetch-committed';
    const altered = await c.api(ApiKey.IncrementalAlterConfigs, 1, {
      resources: [{ resourceType: 32, resourceName: committedGroup, configs: [{ name: 'share.isolation.level', configOperation: 0, value: 'read_committed' }] }],
      validateOnly: false,
    });
    expect(altered.responses[0].errorCode).to.equal(ErrorCode.NONE);
    await shareFetch(c, 'member-rc', 0, topicId, { groupId: committedGroup });
    await shareFetch(c, 'member-ru', 0, topicId);

    // A transaction of two records, aborted (its marker at offset 2), then two plain records.
    let coordinator = await c.api(ApiKey.FindCoordinator, 3, { key: 'share-txn', keyType: 1, coordinatorKeys: [] });
    for (let i = 0; i < 200 && coordinator.errorCode !== ErrorCode.NONE; i++) {
      await new Promise((r) => setTimeout(r, 20));
      coordinator = await c.api(ApiKey.FindCoordinator, 3, { key: 'share-txn', keyType: 1, coordinatorKeys: [] });
    }
    const init = await c.api(ApiKey.InitProducerId, 4, { transactionalId: 'share-txn', transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 });
    expect(init.errorCode).to.equal(ErrorCode.NONE);
    const added = await c.api(ApiKey.AddPartitionsToTxn, 3, {
      v3AndBelowTransactionalId: 'share-txn', v3AndBelowProducerId: init.producerId!, v3AndBelowProducerEpoch: init.producerEpoch,
      v3AndBelowTopics: [{ name: 'share-fetch-txn', partitions: [0] }], transactions: [],
    });
    expect(added.resultsByTopicV3AndBelow[0].resultsByPartition[0].partitionErrorCode).to.equal(ErrorCode.NONE);
    const records = buildBatchSync({
      producerId: Number(init.producerId), producerEpoch: init.producerEpoch, baseSequence: 0, isTransactional: true, records: [{ value: 'a1' }, { value: 'a2' }],
    });
    const produced = await c.api(ApiKey.Produce, 11, { transactionalId: 'share-txn', acks: -1, timeoutMs: 5000, topicData: [{ name: 'share-fetch-txn', partitionData: [{ index: 0, records }] }] });
    expect(produced.responses[0].partitionResponses[0].errorCode).to.equal(ErrorCode.NONE);
    const ended = await c.api(ApiKey.EndTxn, 3, { transactionalId: 'share-txn', producerId: init.producerId!, producerEpoch: init.producerEpoch, committed: false });
    expect(ended.errorCode).to.equal(ErrorCode.NONE);
    await produce(c, topicId, 1, 2);

    const deadline = Date.now() + 5000;
    let committed: Range[] = [];
    for (let epoch = 1; committed.length === 0 && Date.now() < deadline; epoch++) {
      committed = acquiredOf(await shareFetch(c, 'member-rc', epoch, topicId, { groupId: committedGroup, maxWaitMs: 500 }));
    }
    expect(offsetsOf(committed)).to.deep.equal([3, 4]);
    const uncommitted = acquiredOf(await shareFetch(c, 'member-ru', 1, topicId));
    expect(offsetsOf(uncommitted)).to.include.members([0, 1, 3, 4]).and.not.include(2);
  });

  it('drops a topic\'s share-partitions when it is deleted', async () => {
    const c = await connect();
    const topicId = await createTopic(c, 'share-fetch-deleted');
    const manager = broker.current().broker.sharePartitions;
    const before = manager.size;
    await shareFetch(c, 'member-d', 0, topicId);
    expect(manager.size).to.equal(before + 1);
    const deleted = await c.api(ApiKey.DeleteTopics, 6, { topics: [{ name: 'share-fetch-deleted', topicId: '0'.repeat(32) }], timeoutMs: 5000 });
    expect(deleted.responses[0].errorCode).to.equal(ErrorCode.NONE);
    await eventually(() => manager.size === before, 'the share-partition dropped', 5000);
    const after = await shareFetch(c, 'member-d', 1, topicId);
    expect(after.responses[0].partitions[0].errorCode).to.equal(ErrorCode.UNKNOWN_TOPIC_ID);
  });

  it('wakes a waiting fetch when another member releases records', async () => {
    const c = await connect();
    const topicId = await createTopic(c, 'share-fetch-wake-release');
    const [a, b] = [await connect(), await connect()];
    await shareFetch(a, 'member-a', 0, topicId);
    await shareFetch(b, 'member-b', 0, topicId);
    await produce(c, topicId, 1, 4);
    const held = acquiredOf(await shareFetch(a, 'member-a', 1, topicId));
    expect(offsetsOf(held)).to.deep.equal([0, 1, 2, 3]);
    const started = Date.now();
    const waiting = shareFetch(b, 'member-b', 1, topicId, { maxWaitMs: 10_000 });
    await new Promise((r) => setTimeout(r, 200));
    expect((await shareAcknowledge(a, 'member-a', 2, topicId, held, AcknowledgeType.RELEASE)).responses[0].partitions[0].errorCode).to.equal(ErrorCode.NONE);
    const taken = acquiredOf(await waiting);
    expect(offsetsOf(taken)).to.deep.equal([0, 1, 2, 3]);
    expect(taken.every((r) => r.deliveryCount === 2)).to.equal(true);
    expect(Date.now() - started).to.be.below(5000);
  });

  it('v2: IsRenewAck renews the lock without fetching, and needs MaxBytes, MinBytes, MaxRecords and MaxWaitMs at 0', async () => {
    const c = await connect();
    const topicId = await createTopic(c, 'share-fetch-renew');
    const a = await connect();
    await shareFetch(a, 'member-a', 0, topicId);
    await produce(c, topicId, 2, 2);
    const held = acquiredOf(await shareFetch(a, 'member-a', 1, topicId, { maxRecords: 2 }));
    expect(offsetsOf(held)).to.deep.equal([0, 1]);
    const renew = { firstOffset: 0n, lastOffset: 1n, acknowledgeTypes: [AcknowledgeType.RENEW] };
    const topics = [{ topicId, partitions: [{ partitionIndex: 0, partitionMaxBytes: 0, acknowledgementBatches: [renew] }] }];
    const refused = await a.api(ApiKey.ShareFetch, 2, {
      groupId: GROUP, memberId: 'member-a', shareSessionEpoch: 2, maxWaitMs: 100, minBytes: 1, maxBytes: 1 << 20, maxRecords: 10, batchSize: 10,
      isRenewAck: true, topics, forgottenTopicsData: [],
    });
    expect(refused.errorCode).to.equal(ErrorCode.INVALID_REQUEST);
    const renewed = await a.api(ApiKey.ShareFetch, 2, {
      groupId: GROUP, memberId: 'member-a', shareSessionEpoch: 2, maxWaitMs: 0, minBytes: 0, maxBytes: 0, maxRecords: 0, batchSize: 0,
      isRenewAck: true, topics, forgottenTopicsData: [],
    });
    expect(renewed.errorCode).to.equal(ErrorCode.NONE);
    const partition = renewed.responses[0].partitions[0];
    expect([partition.acknowledgeErrorCode, partition.acquiredRecords.length, partition.records!.length]).to.deep.equal([ErrorCode.NONE, 0, 0]);
    // RENEW in a v1 request is a malformed acknowledgement.
    const v1 = await shareFetch(a, 'member-a', 3, topicId, { acknowledge: [renew] });
    expect(v1.responses[0].partitions[0].acknowledgeErrorCode).to.equal(ErrorCode.INVALID_REQUEST);
  });

  it('v2: ShareAcquireMode record_limit never passes MaxRecords; batch_optimized finishes the batch; others are INVALID_REQUEST', async () => {
    const c = await connect();
    const topicId = await createTopic(c, 'share-fetch-acquire-mode');
    const a = await connect();
    await shareFetch(a, 'member-a', 0, topicId);
    await produce(c, topicId, 2, 3);
    const fetchV2 = (epoch: number, shareAcquireMode: number) => a.api(ApiKey.ShareFetch, 2, {
      groupId: GROUP, memberId: 'member-a', shareSessionEpoch: epoch, maxWaitMs: 0, minBytes: 1, maxBytes: 1 << 20, maxRecords: 2, batchSize: 2,
      shareAcquireMode, isRenewAck: false, topics: [], forgottenTopicsData: [],
    });
    expect(offsetsOf(acquiredOf(await fetchV2(1, 1)))).to.deep.equal([0, 1]);
    expect(offsetsOf(acquiredOf(await fetchV2(2, 0)))).to.deep.equal([2, 3, 4, 5]);
    expect((await fetchV2(3, 7)).errorCode).to.equal(ErrorCode.INVALID_REQUEST);
  });

  it('drops a share-partition the share coordinator fenced, and makes it again from the stored state', async () => {
    const c = await connect();
    const topicId = await createTopic(c, 'share-fetch-fenced');
    const a = await connect();
    await shareFetch(a, 'member-a', 0, topicId);
    await produce(c, topicId, 1, 3);
    const held = acquiredOf(await shareFetch(a, 'member-a', 1, topicId));
    expect(offsetsOf(held)).to.deep.equal([0, 1, 2]);
    const manager = broker.current().broker.sharePartitions;
    const before = manager.size;
    persister.failWrites.push(ErrorCode.FENCED_STATE_EPOCH);
    const fenced = await shareAcknowledge(a, 'member-a', 2, topicId, held, AcknowledgeType.ACCEPT);
    expect(fenced.responses[0].partitions[0].errorCode).to.equal(ErrorCode.NOT_LEADER_OR_FOLLOWER);
    expect(manager.size).to.equal(before - 1);
    // The next fetch loads it again: nothing was acknowledged, so the records are acquirable again.
    const again = acquiredOf(await shareFetch(a, 'member-a', 3, topicId));
    expect(offsetsOf(again)).to.deep.equal([0, 1, 2]);
    expect(manager.size).to.equal(before);
  });
});
