// The share coordinator in a cluster of two brokers on a real etcd: the persister of the broker that
// does not lead a key's __share_group_state partition reaches the one that does (the RPCs 83-87), and
// the state survives the leadership of that partition moving to the other broker and back.
import { expect } from 'chai';
import { ErrorCode } from '../../src/common/errors';
import { ApiKey } from '../../src/protocol/generated';
import type { FindCoordinatorResponse } from '../../src/protocol/generated/FindCoordinatorResponse';
import type { ElectLeadersResponse } from '../../src/protocol/generated/ElectLeadersResponse';
import { DeliveryState, type SharePartitionKey } from '../../src/share-state/persister';
import { coordinatorKey, SHARE_STATE_TOPIC } from '../../src/share-state/share-state-log';
import { eventually } from '../helpers/eventually';
import { withEtcdBrokers } from '../helpers/etcd-brokers';

const PREFERRED = 0;
const batch = (first: bigint, last: bigint, deliveryState: number, deliveryCount: number) =>
  ({ firstOffset: first, lastOffset: last, deliveryState, deliveryCount });

describe('share-state: the share coordinator in a cluster', function () {
  this.timeout(90000);
  const cluster = withEtcdBrokers([1, 2], {
    'share.coordinator.state.topic.num.partitions': '2', 'share.coordinator.state.topic.replication.factor': '2',
    'share.coordinator.state.topic.min.isr': '1', 'replica.fetch.wait.max.ms': '100',
  });
  let key: SharePartitionKey;
  /** The __share_group_state partition of `key` and the broker leading it at first. */
  let statePartition = 0;
  let first = 0;
  const other = () => (first === 1 ? 2 : 1);
  const leaderOf = (nodeId: number) => cluster.broker(nodeId).broker.controller.topic(SHARE_STATE_TOPIC)?.partitions[statePartition];
  const loadedOn = (nodeId: number) => leaderOf(nodeId)?.leader === nodeId && cluster.broker(nodeId).broker.shareCoordinator.isLoaded(statePartition);

  before(async () => {
    const b1 = cluster.broker(1).broker;
    await b1.controller.createTopic({ name: 'queue', numPartitions: 1, replicationFactor: 2, assignments: [], configs: {} }, false);
    const topicId = b1.controller.topic('queue')!.id;
    await eventually(() => cluster.broker(2).broker.controller.topic('queue') !== undefined, 'queue known to broker 2', 10000);
    await b1.startShareCoordinator();
    key = { groupId: 'cluster-group', topicId, partition: 0 };
    statePartition = b1.shareCoordinator.partitionFor(key);
    await eventually(() => [1, 2].some(loadedOn), 'the key\'s __share_group_state partition loaded on its leader', 20000);
    first = leaderOf(1)!.leader;
  });

  it('reaches the coordinator of the key on the other broker, and FindCoordinator names it', async () => {
    const remote = cluster.broker(other()).broker;
    // Never initialized: what a share-partition takes for "initialize it".
    expect(await remote.sharePersister.read(key, 0)).to.include({ errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION });
    expect(await remote.sharePersister.initialize(key, 0, 10n)).to.include({ errorCode: ErrorCode.NONE });
    expect(await remote.sharePersister.read(key, 1)).to.include({ errorCode: ErrorCode.NONE, startOffset: 10n });
    expect(await remote.sharePersister.write(key, {
      stateEpoch: 0, leaderEpoch: 1, startOffset: 12n, deliveryCompleteCount: 1,
      stateBatches: [batch(12n, 12n, DeliveryState.ACKNOWLEDGED, 1), batch(13n, 20n, DeliveryState.AVAILABLE, 2)],
    })).to.include({ errorCode: ErrorCode.NONE });
    // The state is the first broker's coordinator's: the other has none of its own.
    expect(await cluster.broker(first).broker.shareCoordinator.readSummary(key, 1))
      .to.include({ errorCode: ErrorCode.NONE, startOffset: 12n, leaderEpoch: 1, deliveryCompleteCount: 1 });
    expect(await remote.shareCoordinator.readSummary(key, 1)).to.include({ errorCode: ErrorCode.NOT_COORDINATOR });

    const found = await cluster.request<FindCoordinatorResponse>(other(), ApiKey.FindCoordinator, 6, { key: '', keyType: 2, coordinatorKeys: [coordinatorKey(key)] });
    expect(found.coordinators[0]).to.include({ errorCode: ErrorCode.NONE, nodeId: first, port: cluster.broker(first).port });
  });

  it('keeps the state when the leadership of its partition moves to the other broker and back', async () => {
    const expected = await cluster.broker(other()).broker.sharePersister.read(key, 1);
    const epoch = leaderOf(other())!.leaderEpoch;
    await cluster.restart(first);
    await eventually(() => loadedOn(other()) && leaderOf(first)?.leader === other(), 'the other broker leads and has loaded the partition', 30000);
    expect(leaderOf(other())!.leaderEpoch).to.be.greaterThan(epoch);
    // Now local on the other broker, remote from the restarted one: the same state either way.
    expect(await cluster.broker(other()).broker.sharePersister.read(key, 1)).to.deep.equal(expected);
    expect(await cluster.broker(first).broker.sharePersister.read(key, 1)).to.deep.equal(expected);
    expect(await cluster.broker(first).broker.sharePersister.write(key, {
      stateEpoch: 0, leaderEpoch: 2, startOffset: 12n, deliveryCompleteCount: -1, stateBatches: [batch(13n, 14n, DeliveryState.ARCHIVED, 5)],
    })).to.include({ errorCode: ErrorCode.NONE });

    // The preferred replica takes the partition back once it has caught up.
    await eventually(() => (leaderOf(other())?.isr.length ?? 0) === 2, 'the restarted broker back in the ISR', 30000);
    const elected = await cluster.request<ElectLeadersResponse>(other(), ApiKey.ElectLeaders, 2, {
      electionType: PREFERRED, topicPartitions: [{ topic: SHARE_STATE_TOPIC, partitions: [statePartition] }], timeoutMs: 10000,
    });
    const preferred = leaderOf(other())!.replicas[0];
    expect(elected.replicaElectionResults[0].partitionResult[0].errorCode).to.be.oneOf([ErrorCode.NONE, ErrorCode.ELECTION_NOT_NEEDED]);
    await eventually(() => loadedOn(preferred), 'the preferred replica leads and has loaded the partition', 30000);
    const after = {
      errorCode: ErrorCode.NONE, stateEpoch: 0, leaderEpoch: 2, startOffset: 12n, deliveryCompleteCount: -1,
      stateBatches: [batch(12n, 12n, DeliveryState.ACKNOWLEDGED, 1), batch(13n, 14n, DeliveryState.ARCHIVED, 5), batch(15n, 20n, DeliveryState.AVAILABLE, 2)],
    };
    for (const nodeId of [1, 2]) expect(await cluster.broker(nodeId).broker.sharePersister.read(key, 2)).to.deep.equal(after);
  });
});
