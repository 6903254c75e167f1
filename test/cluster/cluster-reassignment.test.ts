// Partition reassignment in a cluster of in-process brokers, driven as an operator would (kafkajs'
// admin, the raw protocol for what kafkajs lacks): a replicated partition moved to a broker that
// joined later while a producer writes with acks=all, its old replica's log deleted; a reassignment
// that cannot complete (its new broker never fetches) cancelled; a replica moved away from a broker
// that was down deleted when it returns; a broker drained of every replica.
import { expect } from 'chai';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { Kafka, logLevel, type Admin } from 'kafkajs';
import { startBroker, type RunningBroker } from '../../src/broker';
import { ErrorCode } from '../../src/common/errors';
import { parseEtcdConnect } from '../../src/config/etcd-connect';
import { EtcdCluster } from '../../src/cluster/etcd/etcd-cluster';
import { ApiKey } from '../../src/protocol/generated';
import type { AlterPartitionReassignmentsResponse } from '../../src/protocol/generated/AlterPartitionReassignmentsResponse';
import type { ListPartitionReassignmentsResponse } from '../../src/protocol/generated/ListPartitionReassignmentsResponse';
import { startEtcd, type RunningEtcd } from '../helpers/etcd';
import { eventually } from '../helpers/eventually';
import { RawClient } from '../helpers/raw-client';
import { readValues } from '../helpers/read-values';

describe('partition reassignment in a cluster of brokers', function () {
  this.timeout(120_000);
  let etcd: RunningEtcd;
  const brokers: (RunningBroker | undefined)[] = [];
  let kafka: Kafka;
  let admin: Admin;

  const startNode = async (nodeId: number, dataDir?: string) => {
    brokers[nodeId] = await startBroker({
      nodeId, dataDir, logLevel: process.env.FJORD_TEST_LOG ?? 'silent',
      config: {
        'etcd.connect': etcd.connect, 'broker.session.timeout.ms': '6000', 'replica.lag.time.max.ms': '3000',
        'replica.fetch.wait.max.ms': '100', 'offsets.topic.num.partitions': '1', 'offsets.topic.replication.factor': '2',
        'group.initial.rebalance.delay.ms': '0',
      },
    });
  };

  before(async () => {
    etcd = await startEtcd();
    await startNode(0);
    await startNode(1);
    kafka = new Kafka({ brokers: [brokers[0]!.bootstrap, brokers[1]!.bootstrap], logLevel: logLevel.NOTHING, retry: { retries: 30, initialRetryTime: 100 } });
    admin = kafka.admin();
    await admin.connect();
  });

  after(async () => {
    await admin?.disconnect();
    await Promise.all(brokers.map((b) => b?.close()));
    await etcd?.stop();
  });

  async function rawRequest<T>(apiKey: number, version: number, body: unknown): Promise<T> {
    const c = await RawClient.connect(brokers.find((b) => b)!.port);
    try {
      return await c.request<T>(apiKey, version, body);
    } finally {
      c.close();
    }
  }
  const alter = (topic: string, replicas: number[] | null, allowReplicationFactorChange = true) =>
    rawRequest<AlterPartitionReassignmentsResponse>(ApiKey.AlterPartitionReassignments, 1,
      { timeoutMs: 30_000, allowReplicationFactorChange, topics: [{ name: topic, partitions: [{ partitionIndex: 0, replicas }] }] })
      .then((res) => res.responses[0].partitions[0]);
  const listAll = () => rawRequest<ListPartitionReassignmentsResponse>(ApiKey.ListPartitionReassignments, 0, { timeoutMs: 30_000, topics: null })
    .then((res) => res.topics);
  const replicasOf = async (topic: string) => (await admin.fetchTopicMetadata({ topics: [topic] })).topics[0].partitions[0].replicas;

  it('a reassignment whose new broker never catches up waits, and a cancel reverts it', async () => {
    await admin.createTopics({ topics: [{ topic: 'stuck', replicaAssignment: [{ partition: 0, replicas: [0, 1] }] }], waitForLeaders: true });
    // Broker 9 is registered but runs no broker: its replica can never join the ISR.
    const ghost = await EtcdCluster.start({ connect: parseEtcdConnect(etcd.connect), nodeId: 9, sessionTimeoutMs: 6000,
      endpoints: [{ name: 'PLAINTEXT', securityProtocol: 'PLAINTEXT', host: '127.0.0.1', port: 1 }] });
    try {
      await eventually(() => brokers[0]!.broker.controller.brokers().length === 3, 'broker 9 registered', 10_000);
      expect(await alter('stuck', [0, 1, 9], false)).to.deep.include({ errorCode: ErrorCode.INVALID_REPLICATION_FACTOR,
        errorMessage: 'The replication factor is changed from 2 to 3' });
      expect(await alter('stuck', [0, 1, 9])).to.deep.include({ errorCode: ErrorCode.NONE });
      await new Promise((r) => setTimeout(r, 1000));
      expect(await listAll()).to.deep.equal([{ name: 'stuck', partitions: [{ partitionIndex: 0, replicas: [0, 1, 9], addingReplicas: [9], removingReplicas: [] }] }]);
      expect(await replicasOf('stuck')).to.deep.equal([0, 1, 9]);
      // The partition serves meanwhile.
      const producer = kafka.producer();
      await producer.connect();
      await producer.send({ topic: 'stuck', acks: -1, messages: [{ value: 'during' }] });
      await producer.disconnect();

      expect(await alter('stuck', null)).to.deep.include({ errorCode: ErrorCode.NONE });
      expect(await listAll()).to.deep.equal([]);
      expect(await replicasOf('stuck')).to.deep.equal([0, 1]);
      expect(await alter('stuck', null)).to.deep.include({ errorCode: ErrorCode.NO_REASSIGNMENT_IN_PROGRESS });
    } finally {
      await ghost.close();
    }
  });

  it('a broker down while its replica was moved away deletes that log when it comes back', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'fjord-stray-'));
    try {
      await startNode(3, dataDir);
      await admin.createTopics({ topics: [{ topic: 'strays', replicaAssignment: [{ partition: 0, replicas: [3, 0] }] }], waitForLeaders: true });
      const producer = kafka.producer();
      await producer.connect();
      await producer.send({ topic: 'strays', acks: -1, messages: [{ value: 'a' }, { value: 'b' }] });
      await producer.disconnect();
      const strayDir = brokers[3]!.broker.replicas.partition('strays', 0)!.log.dir;
      await brokers[3]!.close();
      brokers[3] = undefined;
      await eventually(() => brokers[0]!.broker.controller.brokers().length === 2, 'broker 3 gone', 10_000);

      expect(await alter('strays', [0, 1])).to.deep.include({ errorCode: ErrorCode.NONE });
      await eventually(() => brokers[0]!.broker.controller.listPartitionReassignments(null).length === 0, 'the reassignment completes', 20_000);
      expect(fs.existsSync(strayDir)).to.equal(true);
      await startNode(3, dataDir);
      await eventually(() => !fs.existsSync(strayDir), 'the stray log deleted', 10_000);
      expect(brokers[3]!.broker.replicas.partition('strays', 0)).to.equal(undefined);
    } finally {
      await brokers[3]?.close();
      brokers[3] = undefined;
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('moves an RF=2 partition from brokers 0,1 to 1 and a new broker 2 under acks=all load: nothing acknowledged lost, the old log deleted', async () => {
    await admin.createTopics({
      topics: [{ topic: 'moved', replicaAssignment: [{ partition: 0, replicas: [0, 1] }], configEntries: [{ name: 'min.insync.replicas', value: '2' }] }],
      waitForLeaders: true,
    });
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    const acked: string[] = [];
    let producing = true;
    const load = (async () => {
      for (let i = 0; producing; i++) {
        await producer.send({ topic: 'moved', acks: -1, messages: [{ key: 'k', value: `r-${i}` }] });
        acked.push(`r-${i}`);
      }
    })();
    await eventually(() => acked.length >= 50, '50 records acknowledged', 20_000);

    await startNode(2);
    await eventually(() => brokers[0]!.broker.controller.brokers().length === 3, 'broker 2 registered', 10_000);
    const oldDir = brokers[0]!.broker.replicas.partition('moved', 0)!.log.dir;
    expect(fs.existsSync(oldDir)).to.equal(true);
    await admin.alterPartitionReassignments({ topics: [{ topic: 'moved', partitionAssignment: [{ partition: 0, replicas: [1, 2] }] }] });
    const deadline = Date.now() + 30_000;
    for (;;) {
      const { topics } = await admin.listPartitionReassignments({ topics: [{ topic: 'moved', partitions: [0] }] });
      if (topics.length === 0) break;
      expect(Date.now(), 'the reassignment completes').to.be.below(deadline);
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(await replicasOf('moved')).to.deep.equal([1, 2]);
    const atCompletion = acked.length;
    await eventually(() => acked.length >= atCompletion + 30, '30 more records acknowledged after the move', 20_000);
    producing = false;
    await load;
    await producer.disconnect();

    // Broker 0 stopped its replica and deleted its log.
    await eventually(() => !fs.existsSync(oldDir) && brokers[0]!.broker.replicas.partition('moved', 0) === undefined, 'the old replica deleted', 10_000);
    expect(await listAll()).to.deep.equal([]);

    // The new replica has every acknowledged record: with broker 1 gone, broker 2 alone serves them.
    await brokers[1]!.close();
    brokers[1] = undefined;
    const reader = new Kafka({ brokers: [brokers[2]!.bootstrap], logLevel: logLevel.NOTHING, retry: { retries: 30, initialRetryTime: 100 } });
    const consumer = reader.consumer({ groupId: 'after-move' });
    await consumer.connect();
    await consumer.subscribe({ topic: 'moved', fromBeginning: true });
    const seen = await readValues(consumer, acked.length);
    await consumer.disconnect();
    // One key, one partition, an idempotent producer: every acknowledged record once, in order.
    expect(seen.slice(0, acked.length)).to.deep.equal(acked);
  });
  it("drains a broker: every replica it holds reassigned away, its group coordinator's partition included, the group's offsets still served", async () => {
    await startNode(1);
    await admin.setOffsets({ groupId: 'drained-group', topic: 'stuck', partitions: [{ partition: 0, offset: '1' }] });
    const controller = brokers[0]!.broker.controller;
    const drained = controller.topic('__consumer_offsets')!.partitions[0].leader;
    const others = [0, 1, 2].filter((b) => b !== drained);
    const held = () => controller.topics().flatMap((t) => t.partitions.filter((p) => p.replicas.includes(drained)).map((p) => ({ topic: t.name, p })));
    const plan = new Map<string, { partition: number; replicas: number[] }[]>();
    for (const { topic, p } of held()) {
      const spare = others.find((b) => !p.replicas.includes(b));
      // (Broker 9 of the first test is gone: no target names it.)
      const replicas = (spare === undefined ? p.replicas.filter((r) => r !== drained) : p.replicas.map((r) => (r === drained ? spare : r)))
        .filter((r) => r !== 9);
      plan.set(topic, [...(plan.get(topic) ?? []), { partition: p.index, replicas }]);
    }
    expect([...plan.keys()]).to.include('__consumer_offsets');
    await admin.alterPartitionReassignments({ topics: [...plan].map(([topic, partitionAssignment]) => ({ topic, partitionAssignment })) });
    const node = brokers[drained]!.broker;
    await eventually(() => held().length === 0 && [...node.replicas.allPartitions()].length === 0, `broker ${drained} drained`, 30_000);
    await eventually(() => node.replicas.logs.allLogs().length === 0, `broker ${drained}'s logs deleted`, 10_000);
    expect(await listAll()).to.deep.equal([]);
    const [offsets] = await admin.fetchOffsets({ groupId: 'drained-group', topics: ['stuck'] });
    expect(offsets.partitions).to.deep.equal([{ partition: 0, offset: '1', metadata: null }]);
  });
});
