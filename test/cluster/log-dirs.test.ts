// Two brokers on etcd, each with two log dirs: the replicas a broker hosts are spread over its dirs
// (fewest partitions first), and a follower's replica moved to its other dir keeps replicating
// while a producer writes with acks=all.
import { expect } from 'chai';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { Kafka, logLevel } from 'kafkajs';
import { startBroker, type RunningBroker } from '../../src/broker';
import { ApiKey } from '../../src/protocol/generated';
import type { AlterReplicaLogDirsResponse } from '../../src/protocol/generated/AlterReplicaLogDirsResponse';
import { ErrorCode } from '../../src/common/errors';
import { eventually } from '../helpers/eventually';
import { startEtcd, type RunningEtcd } from '../helpers/etcd';
import { RawClient } from '../helpers/raw-client';

describe('log dirs in a cluster', function () {
  this.timeout(90_000);
  let etcd: RunningEtcd;
  let root: string;
  let brokers: RunningBroker[] = [];
  const dirsOf = (nodeId: number) => [path.join(root, `broker-${nodeId}`, 'a'), path.join(root, `broker-${nodeId}`, 'b')];

  before(async () => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'fjord-cluster-log-dirs-'));
    etcd = await startEtcd();
    for (const nodeId of [0, 1]) {
      brokers.push(await startBroker({
        nodeId, logLevel: process.env.FJORD_TEST_LOG ?? 'silent',
        config: {
          'etcd.connect': etcd.connect, 'log.dirs': dirsOf(nodeId).join(','), 'offsets.topic.num.partitions': '1',
          'replica.fetch.wait.max.ms': '100', 'broker.session.timeout.ms': '6000',
        },
      }));
    }
  });

  after(async () => {
    await Promise.all(brokers.map((b) => b.close()));
    brokers = [];
    await etcd?.stop();
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('spreads each broker\'s replicas over its dirs and moves a follower replica while the leader takes writes', async () => {
    const kafka = new Kafka({ brokers: brokers.map((b) => b.bootstrap), logLevel: logLevel.NOTHING, retry: { retries: 20, initialRetryTime: 100 } });
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: 'spread', numPartitions: 4, replicationFactor: 2 }] });
    await eventually(() => brokers.every((b) => [0, 1, 2, 3].every((p) => b.broker.replicas.partition('spread', p))), 'every replica hosted', 20000);
    for (const [nodeId, b] of brokers.entries()) {
      const perDir = dirsOf(nodeId).map((d) => [0, 1, 2, 3].filter((p) => b.broker.replicas.logs.logDirOf(b.broker.replicas.partition('spread', p)!.log) === d).length);
      // Each dir holds two of the four, give or take the internal topic's replica.
      expect(Math.abs(perDir[0] - perDir[1]), `broker ${nodeId}: ${perDir}`).to.be.at.most(1);
    }

    const [meta] = (await admin.fetchTopicMetadata({ topics: ['spread'] })).topics;
    await admin.disconnect();
    const p0 = meta.partitions.find((p) => p.partitionId === 0)!;
    const followerId = p0.replicas.find((r) => r !== p0.leader)!;
    const follower = brokers[followerId];
    const followerLog = follower.broker.replicas.partition('spread', 0)!.log;
    const target = dirsOf(followerId).find((d) => d !== follower.broker.replicas.logs.logDirOf(followerLog))!;

    const producer = kafka.producer();
    await producer.connect();
    let sent = 0;
    const sendSome = async (n: number) => {
      for (let i = 0; i < n; i++, sent++) await producer.send({ topic: 'spread', acks: -1, messages: [{ partition: 0, value: `v${sent}` }] });
    };
    await sendSome(50);
    const c = await RawClient.connect(follower.port);
    try {
      const res = await c.request<AlterReplicaLogDirsResponse>(ApiKey.AlterReplicaLogDirs, 2, { dirs: [{ path: target, topics: [{ name: 'spread', partitions: [0] }] }] });
      expect(res.results[0].partitions[0].errorCode).to.equal(ErrorCode.NONE);
    } finally {
      c.close();
    }
    await sendSome(50);
    await eventually(() => follower.broker.replicas.logs.logDirOf(followerLog) === target, 'the follower replica in its new dir', 20000);
    await sendSome(20);
    await producer.disconnect();
    const leaderLog = brokers[p0.leader].broker.replicas.partition('spread', 0)!.log;
    await eventually(() => followerLog.logEndOffset === leaderLog.logEndOffset, 'the follower to catch up', 20000);
    expect(followerLog.logEndOffset).to.equal(sent);
    // The same batches on both replicas.
    const batches = async (log: typeof leaderLog) => {
      const out: string[] = [];
      await log.forEachBatch(0, (b) => out.push(b.toString('hex')));
      return out;
    };
    expect(await batches(followerLog)).to.deep.equal(await batches(leaderLog));
  });
});
