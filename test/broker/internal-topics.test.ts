// Kafka lets DeleteTopics delete __consumer_offsets and __transaction_state (ControllerApis.deleteTopics
// and ReplicationControlManager.deleteTopic have no internal-topic check). Their coordinators resign and
// start over with a new, empty topic: never down until a restart.
import { expect } from 'chai';
import { ApiKey } from '../../src/protocol/generated';
import type { DeleteTopicsResponse } from '../../src/protocol/generated/DeleteTopicsResponse';
import type { FindCoordinatorResponse } from '../../src/protocol/generated/FindCoordinatorResponse';
import type { OffsetCommitResponse } from '../../src/protocol/generated/OffsetCommitResponse';
import type { OffsetFetchResponse } from '../../src/protocol/generated/OffsetFetchResponse';
import type { InitProducerIdResponse } from '../../src/protocol/generated/InitProducerIdResponse';
import type { CreateTopicsResponse } from '../../src/protocol/generated/CreateTopicsResponse';
import { ErrorCode } from '../../src/common/errors';
import { RawClient } from '../helpers/raw-client';
import { withBroker } from '../helpers/broker';

const GROUP = 0;
const TRANSACTION = 1;

describe('internal topics deleted under their coordinators', function () {
  this.timeout(20000);
  const broker = withBroker({ config: { 'offsets.topic.num.partitions': '3', 'transaction.state.log.num.partitions': '2' } });
  let c: RawClient;
  before(async () => {
    c = await RawClient.connect(broker.current().port);
    const res = await c.request<CreateTopicsResponse>(ApiKey.CreateTopics, 7, {
      topics: [{ name: 'data', numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 1000, validateOnly: false,
    });
    expect(res.topics[0].errorCode).to.equal(ErrorCode.NONE);
  });
  after(() => c.close());

  async function findCoordinator(key: string, keyType: number): Promise<number> {
    const res = await c.request<FindCoordinatorResponse>(ApiKey.FindCoordinator, 3, { key, keyType, coordinatorKeys: [] });
    return res.errorCode;
  }

  /** Asks until the coordinator answers (clients retry COORDINATOR_NOT_AVAILABLE the same way). */
  async function coordinatorReady(key: string, keyType: number): Promise<void> {
    const deadline = Date.now() + 10000;
    for (;;) {
      const errorCode = await findCoordinator(key, keyType);
      if (errorCode === ErrorCode.NONE) return;
      expect(errorCode).to.equal(ErrorCode.COORDINATOR_NOT_AVAILABLE);
      if (Date.now() > deadline) throw new Error(`coordinator for ${key} never came back`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  async function commit(groupId: string, offset: bigint): Promise<number> {
    const res = await c.request<OffsetCommitResponse>(ApiKey.OffsetCommit, 8, {
      groupId, generationIdOrMemberEpoch: -1, memberId: '', groupInstanceId: null,
      topics: [{ name: 'data', partitions: [{ partitionIndex: 0, committedOffset: offset, committedLeaderEpoch: -1, committedMetadata: null }] }],
    });
    return res.topics[0].partitions[0].errorCode;
  }

  async function committed(groupId: string): Promise<number> {
    const res = await c.request<OffsetFetchResponse>(ApiKey.OffsetFetch, 7, { groupId, topics: [{ name: 'data', partitionIndexes: [0] }], requireStable: true, groups: [] });
    expect(res.errorCode).to.equal(ErrorCode.NONE);
    return Number(res.topics[0].partitions[0].committedOffset);
  }

  const deleteTopic = async (name: string) =>
    (await c.request<DeleteTopicsResponse>(ApiKey.DeleteTopics, 6, { topics: [{ name, topicId: '0'.repeat(32) }], timeoutMs: 5000 })).responses[0];

  it('__consumer_offsets: deleted as Kafka allows; the group coordinator comes back with a new, empty topic', async () => {
    await coordinatorReady('g', GROUP);
    expect(await commit('g', 5n)).to.equal(ErrorCode.NONE);
    expect(await committed('g')).to.equal(5);
    const oldId = broker.current().broker.controller.topic('__consumer_offsets')!.id;

    const deleted = await deleteTopic('__consumer_offsets');
    expect(deleted).to.include({ name: '__consumer_offsets', errorCode: ErrorCode.NONE });

    await coordinatorReady('g', GROUP);
    const recreated = broker.current().broker.controller.topic('__consumer_offsets')!;
    expect(recreated.id).to.not.equal(oldId);
    expect(recreated.partitions).to.have.length(3);
    // The offsets went with the topic, as in Kafka; the coordinator takes new ones.
    expect(await committed('g')).to.equal(-1);
    expect(await commit('g', 7n)).to.equal(ErrorCode.NONE);
    expect(await committed('g')).to.equal(7);
  });

  it('__transaction_state: deleted as Kafka allows; the next FindCoordinator creates it again and transactions work', async () => {
    await coordinatorReady('tx', TRANSACTION);
    const init = () => c.request<InitProducerIdResponse>(ApiKey.InitProducerId, 4, {
      transactionalId: 'tx', transactionTimeoutMs: 60000, producerId: -1n, producerEpoch: -1,
    });
    const first = await init();
    expect(first.errorCode).to.equal(ErrorCode.NONE);

    expect(await deleteTopic('__transaction_state')).to.include({ errorCode: ErrorCode.NONE });
    expect(broker.current().broker.controller.topic('__transaction_state')).to.equal(undefined);
    // The coordinator resigned: it does not answer for ids it no longer knows.
    expect((await init()).errorCode).to.be.oneOf([ErrorCode.NOT_COORDINATOR, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS]);

    await coordinatorReady('tx', TRANSACTION);
    expect(broker.current().broker.controller.topic('__transaction_state')!.partitions).to.have.length(2);
    const again = await init();
    expect(again.errorCode).to.equal(ErrorCode.NONE);
    // A new transactional id state: a new producer id at epoch 0.
    expect(again.producerEpoch).to.equal(0);
    expect(again.producerId).to.not.equal(first.producerId);
  });
});
