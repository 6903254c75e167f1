// AlterPartitionReassignments and ListPartitionReassignments on a single broker, as Kafka answers a
// one-node cluster: the only valid target is [this broker], which every partition has already.
import { expect } from 'chai';
import { ApiKey } from '../../src/protocol/generated';
import type { AlterPartitionReassignmentsResponse } from '../../src/protocol/generated/AlterPartitionReassignmentsResponse';
import type { ListPartitionReassignmentsResponse } from '../../src/protocol/generated/ListPartitionReassignmentsResponse';
import { ErrorCode } from '../../src/common/errors';
import { RawClient } from '../helpers/raw-client';
import { withBroker } from '../helpers/broker';

describe('partition reassignments on a single broker', function () {
  this.timeout(20000);
  const broker = withBroker({ nodeId: 1 });
  let c: RawClient;
  before(async () => {
    c = await RawClient.connect(broker.current().port);
    await broker.current().broker.controller.createTopic({ name: 'solo', numPartitions: 2, replicationFactor: 1, assignments: [], configs: {} }, false);
  });
  after(() => c.close());

  const alter = (version: number, partitions: { partitionIndex: number; replicas: number[] | null }[], topic = 'solo', allowReplicationFactorChange = true) =>
    c.request<AlterPartitionReassignmentsResponse>(ApiKey.AlterPartitionReassignments, version,
      { timeoutMs: 1000, allowReplicationFactorChange, topics: [{ name: topic, partitions }] });

  it('v0 and v1: [self] changes nothing (NONE); other brokers, duplicates, empty lists and cancels get Kafka\'s errors', async () => {
    for (const version of [0, 1]) {
      const res = await alter(version, [
        { partitionIndex: 0, replicas: [1] },
        { partitionIndex: 1, replicas: [1, 2] },
        { partitionIndex: 1, replicas: [1, 1] },
        { partitionIndex: 1, replicas: [] },
        { partitionIndex: 0, replicas: null },
        { partitionIndex: 5, replicas: [1] },
      ]);
      expect(res.errorCode).to.equal(ErrorCode.NONE);
      expect(res.responses[0].partitions.map((p) => [p.partitionIndex, p.errorCode, p.errorMessage]), `v${version}`).to.deep.equal([
        [0, ErrorCode.NONE, null],
        [1, ErrorCode.INVALID_REPLICA_ASSIGNMENT, 'The manual partition assignment includes broker 2, but no such broker is registered.'],
        [1, ErrorCode.INVALID_REPLICA_ASSIGNMENT, 'The manual partition assignment includes the broker 1 more than once.'],
        [1, ErrorCode.INVALID_REPLICA_ASSIGNMENT, 'The manual partition assignment includes an empty replica list.'],
        [0, ErrorCode.NO_REASSIGNMENT_IN_PROGRESS, 'No partition reassignment is in progress.'],
        [5, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, 'Unable to find partition solo:5.'],
      ]);
    }
    const unknown = await alter(0, [{ partitionIndex: 0, replicas: [1] }], 'nope');
    expect(unknown.responses[0].partitions[0]).to.deep.include({ errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: 'Unable to find a topic named nope.' });
  });

  it('v1 echoes allowReplicationFactorChange in its answer', async () => {
    const res = await alter(1, [{ partitionIndex: 0, replicas: [1] }], 'solo', false);
    expect(res.allowReplicationFactorChange).to.equal(false);
    expect(res.responses[0].partitions[0].errorCode).to.equal(ErrorCode.NONE);
    expect((await alter(1, [{ partitionIndex: 0, replicas: [1] }])).allowReplicationFactorChange).to.equal(true);
  });

  it('ListPartitionReassignments: none in progress, for all topics or named ones', async () => {
    const all = await c.request<ListPartitionReassignmentsResponse>(ApiKey.ListPartitionReassignments, 0, { timeoutMs: 1000, topics: null });
    expect(all).to.deep.include({ errorCode: ErrorCode.NONE, errorMessage: null, topics: [] });
    const named = await c.request<ListPartitionReassignmentsResponse>(ApiKey.ListPartitionReassignments, 0,
      { timeoutMs: 1000, topics: [{ name: 'solo', partitionIndexes: [0, 1, 9] }, { name: 'nope', partitionIndexes: [0] }] });
    expect(named.topics).to.deep.equal([]);
    expect(broker.current().broker.controller.topic('solo')!.partitions.map((p) => [...p.replicas])).to.deep.equal([[1], [1]]);
  });
});
