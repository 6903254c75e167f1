// The replica fetcher's connection over BrokerClient (src/net/leader-connection.ts), against a broker
// started in-process: the versions it negotiated, OffsetForLeaderEpoch and a Fetch through it, and a
// ReplicaFetcherManager replicating a partition of that broker into a follower log.
import { expect } from 'chai';
import { ApiKey } from '../../src/protocol/generated';
import { ErrorCode } from '../../src/common/errors';
import { buildBatchSync } from '../../src/records/records';
import { BrokerClient } from '../../src/net/broker-client';
import { connectToLeaderOver, type LeaderConnectionOptions } from '../../src/net/leader-connection';
import { ReplicaFetcherManager } from '../../src/replica/replica-fetcher-manager';
import { PartitionLog } from '../../src/storage/partition-log';
import { withBroker } from '../helpers/broker';
import { rejection } from '../helpers/rejection';
import { silentLogger, tempDirs, topicConfig } from '../storage/helpers';
import { logBytes } from '../storage/replication-helpers';

const OPTIONS: LeaderConnectionOptions = { clientId: 'broker-2', connectTimeoutMs: 2000, requestTimeoutMs: 3000 };

describe('net/leader connection (the replica fetcher over BrokerClient)', function () {
  this.timeout(20000);
  const broker = withBroker();
  const dirs = tempDirs('fjord-leader-conn-');
  let topicId = '';

  const connect = () => {
    const { nodeId } = broker.current().broker;
    return connectToLeaderOver((id) => (id === nodeId ? { host: '127.0.0.1', port: broker.current().port } : undefined), OPTIONS);
  };

  before(async () => {
    const client = await BrokerClient.connect({ ...OPTIONS, host: '127.0.0.1', port: broker.current().port });
    const created = await client.request(ApiKey.CreateTopics, { topics: [{ name: 'lc', numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 5000 });
    topicId = created.topics[0].topicId!;
    for (let i = 0; i < 5; i++) {
      const records = buildBatchSync({ records: [{ value: `v${i}-a` }, { value: `v${i}-b` }] });
      await client.request(ApiKey.Produce, { acks: 1, timeoutMs: 5000, topicData: [{ topicId, partitionData: [{ index: 0, records }] }] });
    }
    client.close();
  });

  it('connects by broker id, at the versions both sides support; an unknown broker is refused', async () => {
    const { nodeId } = broker.current().broker;
    expect((await rejection(connect()(nodeId + 1))).message).to.match(/no known address/);
    const leader = await connect()(nodeId);
    try {
      expect([leader.versionOf(ApiKey.Fetch), leader.versionOf(ApiKey.OffsetForLeaderEpoch)]).to.deep.equal([18, 4]);
      const epochs = await leader.request(ApiKey.OffsetForLeaderEpoch, {
        replicaId: 2, topics: [{ topic: 'lc', partitions: [{ partition: 0, currentLeaderEpoch: -1, leaderEpoch: 0 }] }],
      });
      expect(epochs.topics[0].partitions[0]).to.deep.include({ errorCode: ErrorCode.NONE, leaderEpoch: 0, endOffset: 10n });
      const fetched = await leader.request(ApiKey.Fetch, {
        replicaState: { replicaId: -1 }, maxWaitMs: 0, minBytes: 1, maxBytes: 1 << 20, isolationLevel: 0, sessionId: 0, sessionEpoch: -1,
        topics: [{ topicId, partitions: [{ partition: 0, fetchOffset: 4n, partitionMaxBytes: 1 << 20 }] }], forgottenTopicsData: [],
      });
      expect(fetched.responses[0].partitions[0]).to.deep.include({ errorCode: ErrorCode.NONE, highWatermark: 10n });
    } finally {
      leader.close();
    }
  });

  it('a ReplicaFetcherManager replicates the broker\'s partition byte-identical', async () => {
    const follower = await PartitionLog.open({ dir: dirs.next(), topic: 'lc', partition: 0, config: topicConfig(), logger: silentLogger });
    await follower.loadProducerState();
    const manager = new ReplicaFetcherManager({
      brokerId: 2, connect: connect(), logger: silentLogger, onHighWatermark: () => undefined,
      config: { numReplicaFetchers: 1, fetchWaitMaxMs: 50, fetchMinBytes: 1, fetchResponseMaxBytes: 1 << 20, fetchMaxBytes: 200, fetchBackoffMs: 50 },
    });
    try {
      manager.addPartitions(broker.current().broker.nodeId, [{ topic: 'lc', partition: 0, topicId, leaderEpoch: 0, log: follower }]);
      const deadline = Date.now() + 8000;
      while (manager.followerHighWatermark('lc', 0) !== 10 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(manager.followerHighWatermark('lc', 0)).to.equal(10);
      const leaderLog = broker.current().broker.replicas.logs.get('lc', 0);
      expect(await logBytes(follower)).to.deep.equal(await logBytes(leaderLog!));
    } finally {
      await manager.close();
      await follower.close();
    }
  });
});
