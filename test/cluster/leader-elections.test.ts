// Leader elections in a cluster of three in-process brokers on a real etcd: ElectLeaders PREFERRED
// gives leadership back to a restarted preferred replica, auto leader rebalance does it by itself,
// and an unclean election (ElectLeaders UNCLEAN, or unclean.leader.election.enable set on the topic)
// recovers a partition whose whole ISR is gone, the loss logged by the controller and by the old
// leader when it truncates on its return. That old leader is cut off from etcd (a proxy) rather
// than stopped: a restarted broker does not know its high watermark (Fjord keeps no checkpoint of
// it yet), so only a live one can tell that what it truncates had been committed.
import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { Writable } from 'node:stream';
import { Kafka, logLevel } from 'kafkajs';
import { startBroker, type RunningBroker } from '../../src/broker';
import { ErrorCode } from '../../src/common/errors';
import { createLogger } from '../../src/common/logger';
import { ApiKey } from '../../src/protocol/generated';
import type { ElectLeadersResponse } from '../../src/protocol/generated/ElectLeadersResponse';
import type { IncrementalAlterConfigsResponse } from '../../src/protocol/generated/IncrementalAlterConfigsResponse';
import { startEtcd, type RunningEtcd } from '../helpers/etcd';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy';
import { eventually } from '../helpers/eventually';
import { RawClient } from '../helpers/raw-client';

const PREFERRED = 0;
const UNCLEAN = 1;

/** A pino JSON record, as the brokers logged it, with the broker that logged it. */
interface LogRecord {
  nodeId: number;
  level: number;
  msg: string;
  topic?: string;
  partition?: number;
  newLeader?: number;
  from?: number;
  to?: number;
  count?: number;
}
const WARN = 40;

/**
 * Three brokers (node ids 0-2, 0 first: the controller) with data dirs that outlive a restart, each
 * reaching etcd through its own proxy (cutOff).
 */
class TestCluster {
  brokers: (RunningBroker | undefined)[] = [];
  logs: LogRecord[] = [];
  client!: RawClient;
  private root = '';
  private etcdLinks: TcpProxy[] = [];

  constructor(private readonly etcd: () => RunningEtcd, private readonly config: Record<string, string>) {}

  async start(): Promise<void> {
    this.root = await mkdtemp(path.join(os.tmpdir(), 'fjord-elections-'));
    const etcdPort = Number(this.etcd().connect.split(':').at(-1));
    this.etcdLinks = await Promise.all([0, 1, 2].map(() => startTcpProxy(etcdPort)));
    for (const id of [0, 1, 2]) await this.startNode(id);
    this.client = await RawClient.connect(this.brokers[0]!.port);
  }

  async startNode(nodeId: number): Promise<void> {
    const logs = this.logs;
    const logger = createLogger({
      level: 'info', format: 'json',
      destination: new Writable({
        write(chunk: Buffer, _encoding, done) {
          for (const line of chunk.toString().split('\n')) if (line) logs.push({ nodeId, ...JSON.parse(line) });
          done();
        },
      }),
    });
    this.brokers[nodeId] = await startBroker({
      nodeId, logger, dataDir: path.join(this.root, `broker-${nodeId}`),
      config: {
        'etcd.connect': `127.0.0.1:${this.etcdLinks[nodeId].port}`, 'broker.session.timeout.ms': '3000', 'replica.lag.time.max.ms': '3000',
        'replica.fetch.wait.max.ms': '100', 'offsets.topic.num.partitions': '1', ...this.config,
      },
    });
  }

  async stopNode(nodeId: number): Promise<void> {
    await this.brokers[nodeId]!.close();
    this.brokers[nodeId] = undefined;
  }

  /** Cuts a broker off from etcd (its registration expires, though it runs on), or heals it. */
  cutOff(nodeId: number, cut: boolean): void {
    this.etcdLinks[nodeId].cut = cut;
  }

  async close(): Promise<void> {
    this.client?.close();
    for (const link of this.etcdLinks) link.cut = false;
    await Promise.all(this.brokers.map((b) => b?.close()));
    await Promise.all(this.etcdLinks.map((l) => l.close()));
    if (this.root) await rm(this.root, { recursive: true, force: true });
  }

  /** Partition 0 of a topic as broker 0's metadata shows it. */
  partition(topic: string): { leader: number; isr: readonly number[] } | undefined {
    return this.brokers[0]!.broker.controller.topic(topic)?.partitions[0];
  }

  async createTopic(name: string, replicas: number[]): Promise<void> {
    const res = await this.client.request<{ topics: { errorCode: number }[] }>(ApiKey.CreateTopics, 7, {
      topics: [{ name, numPartitions: -1, replicationFactor: -1, assignments: [{ partitionIndex: 0, brokerIds: replicas }], configs: [] }],
      timeoutMs: 10000, validateOnly: false,
    });
    expect(res.topics[0].errorCode).to.equal(ErrorCode.NONE);
  }

  /** ElectLeaders v2 to broker 0 (the controller) or through another client. */
  elect(electionType: number, topicPartitions: { topic: string; partitions: number[] }[] | null, client = this.client): Promise<ElectLeadersResponse> {
    return client.request<ElectLeadersResponse>(ApiKey.ElectLeaders, 2, { electionType, topicPartitions, timeoutMs: 30000 });
  }

  /** Each partition's [partition, error code] in the answer, by topic. */
  static outcomes(res: ElectLeadersResponse): [string, [number, number][]][] {
    return res.replicaElectionResults.map((t) => [t.topic, t.partitionResult.map((p) => [p.partitionId, p.errorCode])]);
  }

  isLeader(nodeId: number, topic: string): boolean {
    return this.brokers[nodeId]?.broker.replicas.partition(topic, 0)?.role?.kind === 'leader';
  }

  /** A client bootstrapped from these brokers. */
  kafka(nodeIds: number[]): Kafka {
    return new Kafka({ brokers: nodeIds.map((id) => this.brokers[id]!.bootstrap), logLevel: logLevel.NOTHING, retry: { retries: 20, initialRetryTime: 100 } });
  }
}

describe('leader elections in a cluster (3 brokers, real etcd)', function () {
  this.timeout(120_000);
  let etcd: RunningEtcd | undefined;
  before(async () => {
    etcd = await startEtcd();
  });
  after(async () => {
    await etcd?.stop();
  });

  describe('with auto leader rebalance off', () => {
    const cluster = new TestCluster(() => etcd!, { 'auto.leader.rebalance.enable': 'false', 'leader.imbalance.check.interval.seconds': '1' });
    before(() => cluster.start());
    after(() => cluster.close());

    it('ElectLeaders PREFERRED moves leadership back to a restarted preferred replica; again: ELECTION_NOT_NEEDED', async () => {
      await cluster.createTopic('pref', [1, 0, 2]);
      await eventually(() => cluster.partition('pref')?.leader === 1, 'broker 1 to lead pref-0', 10_000);
      await cluster.stopNode(1);
      await eventually(() => cluster.partition('pref')?.leader === 0, 'broker 0 to lead pref-0', 10_000);
      await cluster.startNode(1);
      await eventually(() => cluster.partition('pref')?.isr.includes(1) === true, 'broker 1 back in the ISR of pref-0', 20_000);
      // Checked every second, but auto leader rebalance is off.
      await new Promise((resolve) => setTimeout(resolve, 2500));
      expect(cluster.partition('pref')?.leader, 'leadership stays where it went').to.equal(0);

      const moved = await cluster.elect(PREFERRED, [{ topic: 'pref', partitions: [0] }]);
      expect(moved.errorCode).to.equal(ErrorCode.NONE);
      expect(TestCluster.outcomes(moved)).to.deep.equal([['pref', [[0, ErrorCode.NONE]]]]);
      expect(cluster.partition('pref')?.leader, 'answered once written').to.equal(1);
      await eventually(() => cluster.isLeader(1, 'pref') && !cluster.isLeader(0, 'pref'), 'broker 1 to take up the leadership of pref-0', 10_000);

      const again = await cluster.elect(PREFERRED, [{ topic: 'pref', partitions: [0] }]);
      expect(again.replicaElectionResults[0].partitionResult[0]).to.deep.equal(
        { partitionId: 0, errorCode: ErrorCode.ELECTION_NOT_NEEDED, errorMessage: 'Leader election not needed for topic partition.' });
      // Every partition (null): nothing needed, so pref is listed without partitions.
      const all = await cluster.elect(PREFERRED, null);
      expect(TestCluster.outcomes(all).find(([t]) => t === 'pref')).to.deep.equal(['pref', []]);
      // UNCLEAN on a partition with a leader: not needed either.
      expect(TestCluster.outcomes(await cluster.elect(UNCLEAN, [{ topic: 'pref', partitions: [0] }])))
        .to.deep.equal([['pref', [[0, ErrorCode.ELECTION_NOT_NEEDED]]]]);
      expect(cluster.logs.some((l) => l.msg === 'partition leader elected (ElectLeaders)' && l.topic === 'pref' && l.newLeader === 1)).to.equal(true);
    });

    it('an ISR all gone: UNCLEAN elects a live out-of-sync replica (ElectLeaders, or the topic\'s config); the loss is logged', async () => {
      await cluster.createTopic('lossy', [2, 1]);
      await cluster.createTopic('lossy-config', [2, 1]);
      await eventually(() => ['lossy', 'lossy-config'].every((t) => cluster.partition(t)?.leader === 2 && cluster.partition(t)?.isr.length === 2), 'both partitions led by 2 with 1 in sync', 10_000);
      // 1 goes: the ISR is 2 alone, which takes 10 records acks=all.
      await cluster.stopNode(1);
      await eventually(() => ['lossy', 'lossy-config'].every((t) => cluster.partition(t)?.isr.join() === '2'), 'the ISRs to shrink to 2', 10_000);
      const before = cluster.kafka([0, 2]).producer();
      await before.connect();
      for (const topic of ['lossy', 'lossy-config']) {
        await before.send({ topic, acks: -1, messages: Array.from({ length: 10 }, (_, i) => ({ partition: 0, value: `lost-${i}` })) });
      }
      await before.disconnect();
      // What 2 has and counts committed (a retried send may have written a batch twice).
      const written = new Map(['lossy', 'lossy-config'].map((t) => [t, cluster.brokers[2]!.broker.replicas.partition(t, 0)!.log.logEndOffset]));
      for (const t of ['lossy', 'lossy-config']) expect(cluster.brokers[2]!.broker.replicas.partition(t, 0)!.log.highWatermark).to.equal(written.get(t));
      // 2 is cut off from etcd (its registration expires: the partitions have no leader, their ISR
      // is 2), and 1 comes back: out of sync, it may not lead (unclean election is off by default).
      cluster.cutOff(2, true);
      await eventually(() => ['lossy', 'lossy-config'].every((t) => cluster.partition(t)?.leader === -1), 'broker 2 fenced', 20_000);
      await cluster.startNode(1);
      await eventually(() => cluster.brokers[0]!.broker.controller.brokers().length === 2, 'broker 1 registered', 10_000);
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(cluster.partition('lossy')).to.include({ leader: -1 });
      expect(cluster.partition('lossy')?.isr).to.deep.equal([2]);

      expect(TestCluster.outcomes(await cluster.elect(PREFERRED, [{ topic: 'lossy', partitions: [0] }])))
        .to.deep.equal([['lossy', [[0, ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE]]]]);
      // Asked of broker 1, not the controller: any broker writes the election.
      const viaBroker1 = await RawClient.connect(cluster.brokers[1]!.port);
      const unclean = await cluster.elect(UNCLEAN, [{ topic: 'lossy', partitions: [0] }], viaBroker1).finally(() => viaBroker1.close());
      expect(TestCluster.outcomes(unclean)).to.deep.equal([['lossy', [[0, ErrorCode.NONE]]]]);
      expect(cluster.brokers[1]!.broker.controller.topic('lossy')?.partitions[0]).to.deep.include({ leader: 1, isr: [1] });
      await eventually(() => cluster.partition('lossy')?.leader === 1, 'broker 0 to see the election', 5_000);
      expect(cluster.logs.filter((l) => l.level === WARN && l.topic === 'lossy' && l.newLeader === 1).map((l) => [l.nodeId, l.msg]))
        .to.deep.equal([[1, 'unclean leader election (ElectLeaders): records only the old ISR had are lost']]);

      // The topic's unclean.leader.election.enable, set now, makes the controller elect 1 by itself.
      expect(cluster.partition('lossy-config')).to.include({ leader: -1 });
      const altered = await cluster.client.request<IncrementalAlterConfigsResponse>(ApiKey.IncrementalAlterConfigs, 1, {
        resources: [{ resourceType: 2, resourceName: 'lossy-config', configs: [{ name: 'unclean.leader.election.enable', configOperation: 0, value: 'true' }] }],
        validateOnly: false,
      });
      expect(altered.responses[0].errorCode).to.equal(ErrorCode.NONE);
      await eventually(() => cluster.partition('lossy-config')?.leader === 1, 'the controller to elect 1 for lossy-config', 10_000);
      expect(cluster.partition('lossy-config')?.isr).to.deep.equal([1]);
      expect(cluster.logs.filter((l) => l.level === WARN && l.topic === 'lossy-config' && l.newLeader === 1).map((l) => l.msg))
        .to.deep.equal(['unclean leader election: records only the old ISR had are lost']);

      // The new leaders take 3 records each (a client that does not ask the cut-off broker, which still
      // thinks it leads); 2 is back, cuts its 10 and follows.
      await eventually(() => cluster.isLeader(1, 'lossy') && cluster.isLeader(1, 'lossy-config'), 'broker 1 to lead both', 10_000);
      const after = cluster.kafka([0, 1]).producer();
      await after.connect();
      for (const topic of ['lossy', 'lossy-config']) {
        await after.send({ topic, acks: -1, messages: Array.from({ length: 3 }, (_, i) => ({ partition: 0, value: `kept-${i}` })) });
      }
      await after.disconnect();
      cluster.cutOff(2, false);
      for (const topic of ['lossy', 'lossy-config']) {
        await eventually(() => cluster.brokers[2]?.broker.replicas.partition(topic, 0)?.log.logEndOffset === 3, `broker 2 to follow ${topic}`, 30_000);
        const end = written.get(topic)! - 1;
        const cut = cluster.logs.filter((l) => l.nodeId === 2 && l.level === WARN && l.topic === topic && l.count !== undefined);
        expect(cut.map(({ partition, from, to, count }) => ({ partition, from, to, count }))).to.deep.equal([{ partition: 0, from: 0, to: end, count: end + 1 }]);
        expect(cut[0].msg).to.contain(`${topic}-0`).and.contain(`offsets 0..${end} (${end + 1}) removed`);
      }
    });
  });

  describe('with auto leader rebalance every second', () => {
    const cluster = new TestCluster(() => etcd!, { 'auto.leader.rebalance.enable': 'true', 'leader.imbalance.check.interval.seconds': '1' });
    before(() => cluster.start());
    after(() => cluster.close());

    it('gives leadership back to the preferred replica once it is back in sync', async () => {
      await cluster.createTopic('auto', [1, 0, 2]);
      await eventually(() => cluster.partition('auto')?.leader === 1, 'broker 1 to lead auto-0', 10_000);
      await cluster.stopNode(1);
      await eventually(() => cluster.partition('auto')?.leader === 0, 'broker 0 to lead auto-0', 10_000);
      await cluster.startNode(1);
      await eventually(() => cluster.partition('auto')?.leader === 1, 'leadership back on broker 1', 20_000);
      expect(cluster.partition('auto')?.isr).to.include(1);
      expect(cluster.logs.some((l) => l.nodeId === 0 && l.msg === 'preferred leader elected (auto leader rebalance)' && l.topic === 'auto' && l.newLeader === 1)).to.equal(true);
    });
  });
});
