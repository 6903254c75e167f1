// The share coordinator's APIs on a real broker (RawClient): FindCoordinator key type 2, then
// InitializeShareGroupState, ReadShareGroupState, WriteShareGroupState, ReadShareGroupStateSummary
// and DeleteShareGroupState as a share-partition leader and the group coordinator send them; their
// authorization; and the state read back exactly after a restart on the same data dir.
import { expect } from 'chai';
import { ErrorCode } from '../../src/common/errors';
import { ApiKey } from '../../src/protocol/generated';
import type { ApiVersionsResponse } from '../../src/protocol/generated/ApiVersionsResponse';
import { AclOperation, CLUSTER_RESOURCE_NAME, ResourceType } from '../../src/security/acl';
import { DeliveryState } from '../../src/share-state/persister';
import { topicIdString, SHARE_STATE_TOPIC } from '../../src/share-state/share-state-log';
import { withRestartableBroker } from '../helpers/broker';
import { eventually } from '../helpers/eventually';
import { TestAuthorizer } from '../helpers/test-authorizer';

const batch = (first: bigint, last: bigint, deliveryState: number, deliveryCount: number) =>
  ({ firstOffset: first, lastOffset: last, deliveryState, deliveryCount });

describe('share-state: the share coordinator\'s APIs on a broker', function () {
  this.timeout(30000);
  const authorizer = new TestAuthorizer();
  const b = withRestartableBroker({
    authorizer,
    config: {
      'share.coordinator.state.topic.num.partitions': '3', 'share.coordinator.snapshot.update.records.per.snapshot': '2',
      'share.coordinator.state.topic.prune.interval.ms': '100',
    },
  });
  let topicId = '';
  const group = 'queue-group';

  before(async () => {
    await b.running.broker.controller.createTopic({ name: 'queue', numPartitions: 2, replicationFactor: 1, assignments: [], configs: {} }, false);
    topicId = b.running.broker.controller.topic('queue')!.id;
  });
  afterEach(() => authorizer.reset());

  const findShareCoordinator = (keys: string[], version = 6) =>
    b.client.api(ApiKey.FindCoordinator, version, { key: '', keyType: 2, coordinatorKeys: keys });
  const initialize = (partition: number, stateEpoch: number, startOffset: bigint) =>
    b.client.api(ApiKey.InitializeShareGroupState, 0, { groupId: group, topics: [{ topicId, partitions: [{ partition, stateEpoch, startOffset }] }] });
  const read = (partition: number, leaderEpoch: number) =>
    b.client.api(ApiKey.ReadShareGroupState, 0, { groupId: group, topics: [{ topicId, partitions: [{ partition, leaderEpoch }] }] });
  const summary = (partition: number, version = 1) =>
    b.client.api(ApiKey.ReadShareGroupStateSummary, version, { groupId: group, topics: [{ topicId, partitions: [{ partition, leaderEpoch: 0 }] }] });
  const write = (partition: number, o: { leaderEpoch: number; stateEpoch: number; startOffset: bigint; deliveryCompleteCount?: number;
    stateBatches: ReturnType<typeof batch>[] }) =>
    b.client.api(ApiKey.WriteShareGroupState, 1, { groupId: group, topics: [{ topicId, partitions: [{ partition, deliveryCompleteCount: -1, ...o }] }] });

  it('names the leader of the key\'s __share_group_state partition once it exists (FindCoordinator v6, key type 2)', async () => {
    const key = `${group}:${topicIdString(topicId)}:0`;
    // The first ask creates the topic; the answer is retriable until it is loaded.
    let found = (await findShareCoordinator([key])).coordinators[0];
    expect(found.errorCode).to.equal(ErrorCode.COORDINATOR_NOT_AVAILABLE);
    for (let i = 0; i < 200 && found.errorCode !== ErrorCode.NONE; i++) {
      await new Promise((r) => setTimeout(r, 25));
      found = (await findShareCoordinator([key])).coordinators[0];
    }
    expect(found).to.include({ nodeId: b.running.broker.nodeId, port: b.running.port });
    expect(b.running.broker.controller.topic(SHARE_STATE_TOPIC)!.configs).to.include({ 'cleanup.policy': 'delete', 'retention.ms': '-1' });

    const bad = await findShareCoordinator(['no-colons', `${group}:not-a-topic-id:0`, `${group}:${topicIdString(topicId)}:x`]);
    expect(bad.coordinators.map((c) => [c.errorCode, c.nodeId])).to.deep.equal([[ErrorCode.INVALID_REQUEST, -1], [ErrorCode.INVALID_REQUEST, -1], [ErrorCode.INVALID_REQUEST, -1]]);
    // Below v6 a share key is not a key type the request may carry.
    expect((await findShareCoordinator([key], 5)).coordinators[0]).to.include({ errorCode: ErrorCode.INVALID_REQUEST });
    authorizer.deny(AclOperation.CLUSTER_ACTION, ResourceType.CLUSTER, CLUSTER_RESOURCE_NAME);
    expect((await findShareCoordinator([key])).coordinators[0]).to.include({ errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, nodeId: -1 });
  });

  it('serves ApiVersions for the five APIs at Kafka 4.4\'s versions', async () => {
    const res = await b.client.request<ApiVersionsResponse>(ApiKey.ApiVersions, 3, { clientSoftwareName: 't', clientSoftwareVersion: '1' });
    const served = res.apiKeys.filter((k) => k.apiKey >= 83 && k.apiKey <= 87).map((k) => [k.apiKey, k.minVersion, k.maxVersion]);
    expect(served).to.deep.equal([[83, 0, 0], [84, 0, 0], [85, 0, 1], [86, 0, 0], [87, 0, 1]]);
  });

  it('initializes, reads at a leader epoch, merges writes, summarizes and deletes a share-partition', async () => {
    expect((await read(0, 1)).results[0].partitions[0]).to.deep.include({
      errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'Read operation on uninitialized share partition not allowed.',
    });
    expect((await initialize(0, 0, 5n)).results).to.deep.equal([{ topicId, partitions: [{ partition: 0, errorCode: 0, errorMessage: null }] }]);
    expect((await read(0, 1)).results[0].partitions[0]).to.deep.equal({
      partition: 0, errorCode: 0, errorMessage: null, stateEpoch: 0, startOffset: 5n, stateBatches: [],
    });
    const w1 = await write(0, { leaderEpoch: 1, stateEpoch: 0, startOffset: 5n, stateBatches: [batch(5n, 14n, DeliveryState.AVAILABLE, 1)] });
    expect(w1.results[0].partitions[0]).to.deep.equal({ partition: 0, errorCode: 0, errorMessage: null });
    await write(0, { leaderEpoch: 1, stateEpoch: 0, startOffset: 7n, deliveryCompleteCount: 2, stateBatches: [batch(7n, 8n, DeliveryState.ACKNOWLEDGED, 1)] });
    await write(0, { leaderEpoch: 1, stateEpoch: 0, startOffset: 7n, stateBatches: [batch(14n, 14n, DeliveryState.ARCHIVED, 5)] });
    expect((await read(0, 1)).results[0].partitions[0]).to.deep.equal({
      partition: 0, errorCode: 0, errorMessage: null, stateEpoch: 0, startOffset: 7n,
      stateBatches: [batch(7n, 8n, DeliveryState.ACKNOWLEDGED, 1), batch(9n, 13n, DeliveryState.AVAILABLE, 1), batch(14n, 14n, DeliveryState.ARCHIVED, 5)],
    });
    expect((await summary(0)).results[0].partitions[0]).to.deep.equal({
      partition: 0, errorCode: 0, errorMessage: null, stateEpoch: 0, leaderEpoch: 1, startOffset: 7n, deliveryCompleteCount: 2,
    });
    // A leader at an older epoch is fenced, as is a write at an older state epoch after a re-initialization.
    expect((await read(0, 0)).results[0].partitions[0]).to.include({ errorCode: ErrorCode.FENCED_LEADER_EPOCH });
    await initialize(1, 3, 0n);
    expect((await write(1, { leaderEpoch: 0, stateEpoch: 2, startOffset: 0n, stateBatches: [] })).results[0].partitions[0])
      .to.include({ errorCode: ErrorCode.FENCED_STATE_EPOCH });
    // A partition the topic does not have.
    expect((await initialize(7, 0, 0n)).results[0].partitions[0]).to.include({ errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION });

    const deleted = await b.client.api(ApiKey.DeleteShareGroupState, 0, { groupId: group, topics: [{ topicId, partitions: [{ partition: 1 }] }] });
    expect(deleted.results[0].partitions[0]).to.deep.equal({ partition: 1, errorCode: 0, errorMessage: null });
    expect((await read(1, 0)).results[0].partitions[0]).to.include({ errorCode: ErrorCode.INVALID_REQUEST });
    expect((await summary(1, 0)).results[0].partitions[0]).to.include({ errorCode: 0, startOffset: -1n, stateEpoch: 0 });
  });

  it('answers nothing without a group id or partitions, and CLUSTER_AUTHORIZATION_FAILED to what is not a broker', async () => {
    expect((await b.client.api(ApiKey.ReadShareGroupState, 0, { groupId: '', topics: [{ topicId, partitions: [{ partition: 0, leaderEpoch: 1 }] }] })).results)
      .to.deep.equal([]);
    expect((await b.client.api(ApiKey.WriteShareGroupState, 1, { groupId: group, topics: [{ topicId, partitions: [] }] })).results).to.deep.equal([]);
    authorizer.deny(AclOperation.CLUSTER_ACTION, ResourceType.CLUSTER, CLUSTER_RESOURCE_NAME);
    expect((await read(0, 1)).results[0].partitions[0]).to.include({ errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED });
    expect((await initialize(0, 9, 0n)).results[0].partitions[0]).to.include({ errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED });
    expect((await summary(0)).results[0].partitions[0]).to.include({ errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED });
    authorizer.reset();
    // The refused initialization changed nothing.
    expect((await summary(0)).results[0].partitions[0]).to.include({ errorCode: 0, stateEpoch: 0, startOffset: 7n });
  });

  it('reads the same state back after a restart on the same data dir (snapshots and updates replayed)', async () => {
    const persister = b.running.broker.sharePersister;
    const key = { groupId: 'restart-group', topicId, partition: 1 };
    expect(await persister.read(key, 0)).to.deep.equal({
      errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: 'Read operation on uninitialized share partition not allowed.',
    });
    expect(await persister.initialize(key, 1, 100n)).to.include({ errorCode: 0 });
    for (let i = 0; i < 5; i++) {
      const w = await persister.write(key, {
        stateEpoch: 1, leaderEpoch: 0, startOffset: 100n, deliveryCompleteCount: i,
        stateBatches: [batch(100n + BigInt(i) * 3n, 101n + BigInt(i) * 3n, DeliveryState.ACKNOWLEDGED, 1), batch(102n + BigInt(i) * 3n, 102n + BigInt(i) * 3n, DeliveryState.ARCHIVED, 2)],
      });
      expect(w).to.include({ errorCode: 0 });
    }
    const before = await Promise.all([persister.read(key, 0), persister.readSummary(key, 0), read(0, 1)]);
    expect(before[0]).to.have.property('stateBatches').with.length(10);
    // The records below every key's latest snapshot are pruned: the restart reads from a later log start.
    const logStarts = () => [0, 1, 2].map((p) => b.running.broker.replicas.partition(SHARE_STATE_TOPIC, p)?.log.logStartOffset ?? 0);
    await eventually(() => logStarts().some((start) => start > 0), 'a __share_group_state partition pruned', 5000);

    await b.restart();
    // The coordinators start once the logs are loaded, after the listener opens (the wire read does not retry).
    await eventually(() => [0, 1, 2].every((p) => b.running.broker.shareCoordinator.isLoaded(p)), 'the share coordinator loaded', 10000);
    const after = await Promise.all([b.running.broker.sharePersister.read(key, 0), b.running.broker.sharePersister.readSummary(key, 0), read(0, 1)]);
    expect(after).to.deep.equal(before);
    expect((await read(0, 0)).results[0].partitions[0]).to.include({ errorCode: ErrorCode.FENCED_LEADER_EPOCH });
  });
});
