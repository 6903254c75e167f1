// The Controller in cluster mode (EtcdMetadata) and the active controller (ClusterController)
// against a real etcd: topics created, grown, reconfigured and deleted from any broker; partition
// leaders and ISRs as brokers leave and come back; controller failover.
import { expect } from 'chai';
import { Etcd3 } from 'etcd3';
import { Writable } from 'stream';
import { ErrorCode } from '../../src/common/errors';
import { createLogger } from '../../src/common/logger';
import { BrokerConfig } from '../../src/config/broker-config';
import { Controller, type NewTopic } from '../../src/cluster/controller';
import { ClusterController, planRound } from '../../src/cluster/etcd/cluster-controller';
import { EtcdCluster } from '../../src/cluster/etcd/etcd-cluster';
import { EtcdMetadata } from '../../src/cluster/etcd/etcd-metadata';
import type { PartitionRecord } from '../../src/cluster/metadata-store';
import { withEtcd } from '../helpers/etcd';
import { eventually as waitFor } from '../helpers/eventually';

const eventually = (check: () => boolean, what: string, timeoutMs = 10_000) => waitFor(check, what, timeoutMs);

const topic = (name: string, numPartitions: number, replicationFactor: number, configs: Record<string, string> = {}): NewTopic =>
  ({ name, numPartitions, replicationFactor, assignments: [], configs });
const assigned = (name: string, replicas: number[][], configs: Record<string, string> = {}): NewTopic =>
  ({ name, numPartitions: -1, replicationFactor: -1, assignments: replicas.map((brokerIds, partitionIndex) => ({ partitionIndex, brokerIds })), configs });
const leaderAndIsr = (p: PartitionRecord | undefined) => p && { leader: p.leader, leaderEpoch: p.leaderEpoch, isr: [...p.isr] };

/** One cluster member as the broker will wire it: its etcd session, Controller and active controller. */
interface Member {
  nodeId: number;
  cluster: EtcdCluster;
  controller: Controller;
  active: ClusterController;
  close(): Promise<void>;
}

describe('cluster/etcd controller (against a real etcd)', function () {
  this.timeout(40_000);
  const etcd = withEtcd();
  let prefix: string;
  let n = 0;
  let members: Member[] = [];
  /** What every member's active controller logged, as pino's JSON records. */
  let logs: { level: number; msg: string; topic?: string; partition?: number; oldLeader?: number; newLeader?: number; leaderEpoch?: number }[] = [];
  const logger = createLogger({
    format: 'json',
    destination: new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString().split('\n')) if (line) logs.push(JSON.parse(line));
        done();
      },
    }),
  });

  beforeEach(() => {
    prefix = `/ctl${n++}`;
    members = [];
    logs = [];
  });
  afterEach(async () => {
    await Promise.all(members.map((m) => m.close()));
  });

  async function member(nodeId: number, props: Record<string, string> = {}): Promise<Member> {
    const config = new BrokerConfig({ 'node.id': String(nodeId), ...props });
    const cluster = await EtcdCluster.start({
      connect: { endpoints: [etcd.current().connect], prefix },
      nodeId,
      endpoints: [
        { name: 'INTERNAL', securityProtocol: 'PLAINTEXT', host: '127.0.0.2', port: 19000 + nodeId },
        { name: 'PLAINTEXT', securityProtocol: 'PLAINTEXT', host: '127.0.0.1', port: 9000 + nodeId },
      ],
      rack: `rack-${nodeId}`,
      sessionTimeoutMs: 1000,
    });
    const controller = new Controller(new EtcdMetadata(cluster, { listenerName: 'PLAINTEXT', partitionStateTimeoutMs: 5000 }), config);
    const active = new ClusterController(cluster, config, logger);
    active.start();
    let closed = false;
    const m: Member = {
      nodeId, cluster, controller, active,
      close: async () => {
        if (closed) return;
        closed = true;
        await active.stop();
        await cluster.close();
      },
    };
    members.push(m);
    return m;
  }

  /** Members 1..count, once every one sees all the others and a controller. */
  async function cluster(count: number, props: Record<string, string> = {}): Promise<Member[]> {
    const started = await Promise.all(Array.from({ length: count }, (_, i) => member(i + 1, props)));
    await eventually(() => started.every((m) => m.controller.brokers().length === count && m.controller.controllerId !== -1), 'every broker sees the cluster');
    return started;
  }

  const controllerOf = (ms: Member[]) => ms.find((m) => m.cluster.isController)!;
  const notController = (ms: Member[]) => ms.find((m) => !m.cluster.isController)!;

  it('reports live brokers by the named listener with their racks, and the controller id', async () => {
    const ms = await cluster(2);
    expect(ms[0].controller.brokers()).to.deep.equal([
      { nodeId: 1, host: '127.0.0.1', port: 9001, rack: 'rack-1' },
      { nodeId: 2, host: '127.0.0.1', port: 9002, rack: 'rack-2' },
    ]);
    expect(ms[1].controller.controllerId).to.equal(controllerOf(ms).nodeId);
  });

  it('a topic created from a broker that is not the controller has a leader and a full ISR on every partition at once', async () => {
    const ms = await cluster(3);
    const creator = notController(ms);
    const res = await creator.controller.createTopic(topic('orders', 6, 3), false);
    expect(res.errorCode).to.equal(ErrorCode.NONE);
    const created = creator.controller.topic('orders')!;
    expect(created.id).to.match(/^[0-9a-f]{32}$/).and.equal(res.topic!.id);
    for (const p of created.partitions) {
      expect(p.replicas).to.have.length(3);
      expect(leaderAndIsr(p)).to.deep.equal({ leader: p.replicas[0], leaderEpoch: 0, isr: [...p.replicas] });
    }
    // Placement spread leaders over the brokers, and every broker's view agrees.
    expect(new Set(created.partitions.map((p) => p.leader)).size).to.equal(3);
    for (const m of ms) await eventually(() => m.controller.topic('orders')?.partitions.every((p) => p.leader !== -1) === true, `broker ${m.nodeId} sees the leaders`);
    // A settled cluster: another round (a new controller redoing the last one) would write nothing.
    for (const m of ms) expect(planRound(m.cluster.cache, () => false)).to.deep.equal([]);
  });

  it('of two brokers creating the same topic at once, one succeeds and the other gets TOPIC_ALREADY_EXISTS', async () => {
    const ms = await cluster(2);
    const results = await Promise.all(ms.map((m) => m.controller.createTopic(topic('dup', 2, 2), false)));
    expect(results.map((r) => r.errorCode).sort((a, b) => a - b)).to.deep.equal([ErrorCode.NONE, ErrorCode.TOPIC_ALREADY_EXISTS]);
    expect(results.find((r) => r.errorCode !== ErrorCode.NONE)!.errorMessage).to.equal("Topic 'dup' already exists.");
    const again = await ms[0].controller.createTopic(topic('dup', 1, 1), false);
    expect(again).to.deep.equal({ errorCode: ErrorCode.TOPIC_ALREADY_EXISTS, errorMessage: "Topic 'dup' already exists." });
  });

  it('refuses a replication factor above the live brokers with INVALID_REPLICATION_FACTOR', async () => {
    const ms = await cluster(2);
    const res = await notController(ms).controller.createTopic(topic('wide', 1, 3), false);
    expect(res.errorCode).to.equal(ErrorCode.INVALID_REPLICATION_FACTOR);
    expect(res.errorMessage).to.match(/^Unable to replicate the partition 3 time\(s\): The target replication factor of 3 cannot be reached because only 2 broker/);
    expect(ms[0].controller.topic('wide')).to.equal(undefined);
  });

  it("a leader's broker leaving: a new leader from the ISR with a bumped epoch, the broker out of every ISR", async () => {
    const ms = await cluster(3);
    const controller = controllerOf(ms);
    const doomed = notController(ms);
    const [other] = ms.filter((m) => m !== controller && m !== doomed);
    // Partition 0 led by the doomed broker, partition 1 led by another with the doomed one in sync.
    // (One replication factor for all partitions: Kafka refuses a manual assignment that mixes them.)
    await other.controller.createTopic(assigned('t', [[doomed.nodeId, other.nodeId, controller.nodeId], [other.nodeId, doomed.nodeId, controller.nodeId]]), false);
    await doomed.close();
    const p = (i: number) => leaderAndIsr(other.controller.topic('t')!.partitions[i]);
    await eventually(() => p(0)!.leader === other.nodeId && p(1)!.isr.length === 2, 'the controller reacts');
    expect(p(0)).to.deep.equal({ leader: other.nodeId, leaderEpoch: 1, isr: [other.nodeId, controller.nodeId] });
    expect(p(1)).to.deep.equal({ leader: other.nodeId, leaderEpoch: 0, isr: [other.nodeId, controller.nodeId] });
  });

  it('all replicas gone: leader -1 with the last ISR member kept; it leads again when it comes back', async () => {
    const ms = await cluster(3);
    const controller = controllerOf(ms);
    const [a, b] = ms.filter((m) => m !== controller);
    await controller.controller.createTopic(assigned('solo', [[a.nodeId, b.nodeId]]), false);
    const p0 = () => leaderAndIsr(controller.controller.topic('solo')!.partitions[0]);
    await a.close();
    await eventually(() => p0()!.leader === b.nodeId, 'b leads');
    expect(p0()).to.deep.equal({ leader: b.nodeId, leaderEpoch: 1, isr: [b.nodeId] });
    await b.close();
    await eventually(() => p0()!.leader === -1, 'no leader'); // Metadata: LEADER_NOT_AVAILABLE
    expect(p0()).to.deep.equal({ leader: -1, leaderEpoch: 2, isr: [b.nodeId] });

    // a, not in the ISR, comes back: without unclean election it may not lead.
    await member(a.nodeId);
    await eventually(() => controller.controller.brokers().length === 2, 'a registered again');
    await new Promise((r) => setTimeout(r, 500));
    expect(p0()).to.deep.equal({ leader: -1, leaderEpoch: 2, isr: [b.nodeId] });
    // b, the last in sync, comes back and leads cleanly.
    await member(b.nodeId);
    await eventually(() => p0()!.leader === b.nodeId, 'b leads again');
    expect(p0()).to.deep.equal({ leader: b.nodeId, leaderEpoch: 3, isr: [b.nodeId] });
  });

  it('unclean election only once enabled: by the topic override (set from any broker) or the broker config', async () => {
    const ms = await cluster(3);
    const controller = controllerOf(ms);
    const [a, b] = ms.filter((m) => m !== controller);
    await controller.controller.createTopic(assigned('u', [[a.nodeId, b.nodeId]]), false);
    const p0 = () => leaderAndIsr(controller.controller.topic('u')!.partitions[0]);
    await a.close();
    await eventually(() => p0()!.leader === b.nodeId, 'b leads');
    await b.close();
    await eventually(() => p0()!.leader === -1, 'no leader');
    const back = await member(a.nodeId);
    await eventually(() => back.controller.topic('u') !== undefined, 'a sees the topic');
    await new Promise((r) => setTimeout(r, 500));
    expect(p0()!.leader).to.equal(-1);

    const res = await back.controller.setTopicConfigs('u', (c) => ({ ...c, 'unclean.leader.election.enable': 'true' }), false);
    expect(res.errorCode).to.equal(ErrorCode.NONE);
    await eventually(() => p0()!.leader === a.nodeId, 'unclean election of a');
    // An unclean leader starts an ISR of its own.
    expect(p0()).to.deep.equal({ leader: a.nodeId, leaderEpoch: 3, isr: [a.nodeId] });
    // Each election logged once, the unclean one as a warning.
    const elections = logs.filter((l) => l.topic === 'u').map((l) => [l.level, l.msg.split(':')[0], l.oldLeader, l.newLeader, l.leaderEpoch]);
    expect(elections).to.deep.equal([
      [30, 'partition state created', null, a.nodeId, 0],
      [30, 'partition leader elected', a.nodeId, b.nodeId, 1],
      [30, 'partition leader elected', b.nodeId, -1, 2],
      [40, 'unclean leader election', -1, a.nodeId, 3],
    ]);
  });

  it('unclean election from the broker config when the topic has no override', async () => {
    const ms = await cluster(3, { 'unclean.leader.election.enable': 'true' });
    const controller = controllerOf(ms);
    const [a, b] = ms.filter((m) => m !== controller);
    await controller.controller.createTopic(assigned('bu', [[a.nodeId, b.nodeId]]), false);
    const p0 = () => leaderAndIsr(controller.controller.topic('bu')!.partitions[0]);
    await a.close();
    await eventually(() => p0()!.leader === b.nodeId, 'b leads');
    await b.close();
    await eventually(() => p0()!.leader === -1, 'no leader');
    await member(a.nodeId, { 'unclean.leader.election.enable': 'true' });
    await eventually(() => p0()!.leader === a.nodeId, 'unclean election of a');
    expect(p0()).to.deep.equal({ leader: a.nodeId, leaderEpoch: 3, isr: [a.nodeId] });
  });

  it('unclean election once a dynamic broker config enables it, set from any broker', async () => {
    const ms = await cluster(3);
    const controller = controllerOf(ms);
    const [a, b] = ms.filter((m) => m !== controller);
    await controller.controller.createTopic(assigned('du', [[a.nodeId, b.nodeId]]), false);
    const p0 = () => leaderAndIsr(controller.controller.topic('du')!.partitions[0]);
    await a.close();
    await eventually(() => p0()!.leader === b.nodeId, 'b leads');
    await b.close();
    await eventually(() => p0()!.leader === -1, 'no leader');
    const back = await member(a.nodeId);
    await eventually(() => back.controller.topic('du') !== undefined, 'a sees the topic');
    await new Promise((r) => setTimeout(r, 500));
    expect(p0()!.leader).to.equal(-1);

    const res = await back.controller.setBrokerConfigs('', () => ({ 'unclean.leader.election.enable': 'true' }), false);
    expect(res.errorCode).to.equal(ErrorCode.NONE);
    await eventually(() => p0()!.leader === a.nodeId, 'unclean election of a');
    expect(p0()).to.deep.equal({ leader: a.nodeId, leaderEpoch: 3, isr: [a.nodeId] });
  });

  it("controller failover: another broker takes over, re-elects the old controller's partitions and keeps serving creations", async () => {
    const ms = await cluster(3);
    const old = controllerOf(ms);
    const rest = ms.filter((m) => m !== old);
    await rest[0].controller.createTopic(assigned('f', [[old.nodeId, rest[0].nodeId], [rest[1].nodeId, old.nodeId]]), false);
    await old.close();
    await eventually(() => rest.some((m) => m.cluster.isController), 'a new controller');
    const successor = controllerOf(rest);
    expect(successor.cluster.cache.controllerEpoch()).to.equal(2);
    const parts = () => rest[1].controller.topic('f')!.partitions.map(leaderAndIsr);
    await eventually(() => parts()[0]!.leader === rest[0].nodeId && parts()[1]!.isr.length === 1, 'the new controller elects');
    expect(parts()).to.deep.equal([
      { leader: rest[0].nodeId, leaderEpoch: 1, isr: [rest[0].nodeId] },
      { leader: rest[1].nodeId, leaderEpoch: 0, isr: [rest[1].nodeId] },
    ]);
    const res = await notController(rest).controller.createTopic(topic('after', 2, 2), false);
    expect(res.errorCode).to.equal(ErrorCode.NONE);
    expect(res.topic!.partitions.every((p) => p.leader !== -1 && p.isr.length === 2)).to.equal(true);
  });

  it('deletion from any broker removes the topic and its partition states; every broker hears of it', async () => {
    const ms = await cluster(2);
    await ms[0].controller.createTopic(topic('gone', 3, 2), false);
    const id = ms[0].controller.topic('gone')!.id;
    const heard: number[] = [];
    for (const m of ms) m.controller.onTopicDeleted('gone', () => heard.push(m.nodeId));
    const res = await ms[1].controller.deleteTopic('gone');
    expect(res.errorCode).to.equal(ErrorCode.NONE);
    const raw = new Etcd3({ hosts: `http://${etcd.current().connect}` });
    try {
      expect(await raw.getAll().prefix(`${prefix}/partitions/${id}/`).keys()).to.deep.equal([]);
      expect(await raw.get(`${prefix}/topics/gone`).string()).to.equal(null);
    } finally {
      raw.close();
    }
    await eventually(() => heard.length === 2, 'both brokers hear of the deletion');
    expect(ms[0].controller.topic('gone')).to.equal(undefined);
    expect(ms[0].controller.topicById(id)).to.equal(undefined);
    expect((await ms[0].controller.deleteTopic('gone')).errorCode).to.equal(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  });

  it("config changes from two brokers at once both land, and show in every broker's backend", async () => {
    const ms = await cluster(3);
    await ms[0].controller.createTopic(topic('cfg', 1, 1), false);
    await eventually(() => ms.every((m) => m.controller.topic('cfg') !== undefined), 'everyone sees cfg');
    const results = await Promise.all([
      ms[1].controller.setTopicConfigs('cfg', (c) => ({ ...c, 'retention.ms': '1000' }), false),
      ms[2].controller.setTopicConfigs('cfg', (c) => ({ ...c, 'cleanup.policy': 'compact' }), false),
    ]);
    expect(results.map((r) => r.errorCode)).to.deep.equal([ErrorCode.NONE, ErrorCode.NONE]);
    for (const m of ms) {
      await eventually(() => Object.keys(m.controller.topic('cfg')!.configs).length === 2, `broker ${m.nodeId} sees both`);
      expect(m.controller.topic('cfg')!.configs).to.deep.equal({ 'retention.ms': '1000', 'cleanup.policy': 'compact' });
    }
  });

  it('partitions added from any broker get leaders before the call returns', async () => {
    const ms = await cluster(2);
    await ms[0].controller.createTopic(topic('grow', 1, 2), false);
    const res = await notController(ms).controller.createPartitions('grow', 4, null, false);
    expect(res.errorCode).to.equal(ErrorCode.NONE);
    const parts = notController(ms).controller.topic('grow')!.partitions;
    expect(parts).to.have.length(4);
    for (const p of parts) expect(leaderAndIsr(p)).to.deep.equal({ leader: p.replicas[0], leaderEpoch: 0, isr: [...p.replicas] });
  });

  it('every broker ensuring an internal topic at once: one creates it, all answer NONE, RF capped at the live brokers', async () => {
    const ms = await cluster(2);
    const results = await Promise.all(ms.map((m) => m.controller.ensureInternalTopic('__consumer_offsets', 5, 3, { 'cleanup.policy': 'compact' })));
    expect(results).to.deep.equal([{ errorCode: ErrorCode.NONE, errorMessage: null }, { errorCode: ErrorCode.NONE, errorMessage: null }]);
    for (const m of ms) await eventually(() => m.controller.topic('__consumer_offsets')?.partitions.every((p) => p.isr.length === 2) === true, `broker ${m.nodeId} sees it`);
    expect(ms[0].controller.topic('__consumer_offsets')!.configs).to.deep.equal({ 'cleanup.policy': 'compact' });
  });

  it("a group's configs set from one broker reach every broker, concurrent edits from two brokers both land, and none left removes them", async () => {
    const ms = await cluster(2);
    const set = (m: Member, name: string, value: string) =>
      m.controller.setGroupConfigs('a/group', (current) => ({ ...current, [name]: value }), false);
    const results = await Promise.all([set(ms[0], 'consumer.session.timeout.ms', '50000'), set(ms[1], 'consumer.heartbeat.interval.ms', '6000')]);
    expect(results.map((r) => r.errorCode)).to.deep.equal([ErrorCode.NONE, ErrorCode.NONE]);
    const both = { 'consumer.session.timeout.ms': '50000', 'consumer.heartbeat.interval.ms': '6000' };
    for (const m of ms) await eventually(() => Object.keys(m.controller.groupConfigs('a/group')).length === 2, `broker ${m.nodeId} sees both`);
    for (const m of ms) expect(m.controller.groupConfigs('a/group')).to.deep.equal(both);
    expect((await set(ms[0], 'consumer.session.timeout.ms', '1')).errorCode).to.equal(ErrorCode.INVALID_CONFIG);
    expect((await ms[1].controller.setGroupConfigs('a/group', () => ({}), false)).errorCode).to.equal(ErrorCode.NONE);
    for (const m of ms) await eventually(() => m.controller.groupsWithConfigs().length === 0, `broker ${m.nodeId} sees them gone`);
  });

  it("writes a topic larger than one etcd transaction's op limit in several", async () => {
    const ms = await cluster(1);
    const res = await ms[0].controller.createTopic(topic('big', 300, 1), false);
    expect(res.errorCode).to.equal(ErrorCode.NONE);
    expect(res.topic!.partitions.every((p) => p.leader === 1)).to.equal(true);
  });
  it('a reassignment started from any broker waits for its new replica, survives a controller failover, and the new controller completes it', async () => {
    const ms = await cluster(4);
    const old = controllerOf(ms);
    const [a, b, c] = ms.filter((m) => m !== old);
    await b.controller.createTopic(assigned('moving', [[a.nodeId, b.nodeId], [a.nodeId, b.nodeId]]), false);
    const outcomes = await c.controller.alterPartitionReassignments('moving', [{ partition: 0, replicas: [b.nodeId, c.nodeId] }], false);
    expect(outcomes).to.deep.equal([{ errorCode: ErrorCode.NONE, errorMessage: null }]);
    const ongoing = [{ name: 'moving', partitions: [{ partition: 0, replicas: [b.nodeId, c.nodeId, a.nodeId], adding: [c.nodeId], removing: [a.nodeId] }] }];
    for (const m of ms) await eventually(() => m.controller.listPartitionReassignments(null).length === 1, `broker ${m.nodeId} sees it`);
    for (const m of ms) expect(m.controller.listPartitionReassignments([{ name: 'moving', partitions: [0, 1, 7] }, { name: 'nope', partitions: [0] }])).to.deep.equal(ongoing);
    // Metadata shows the full set meanwhile; the ISR and leader are unchanged.
    expect(leaderAndIsr(a.controller.topic('moving')!.partitions[0])).to.deep.equal({ leader: a.nodeId, leaderEpoch: 0, isr: [a.nodeId, b.nodeId] });
    expect(a.controller.topic('moving')!.partitions[0].replicas).to.deep.equal([b.nodeId, c.nodeId, a.nodeId]);

    await old.close();
    await eventually(() => [a, b, c].some((m) => m.cluster.isController), 'a new controller');
    expect(b.controller.listPartitionReassignments(null)).to.deep.equal(ongoing); // still waiting for c
    // The leader (a) takes c into the ISR, as its fetches would have it: the new controller completes.
    const id = a.controller.topic('moving')!.id;
    const epoch = a.cluster.cache.partitionState('moving', 0)!.partitionEpoch;
    expect((await a.cluster.alterPartitionState(id, 0, epoch, { leader: a.nodeId, leaderEpoch: 0, isr: [a.nodeId, b.nodeId, c.nodeId] })).ok).to.equal(true);
    await eventually(() => b.controller.listPartitionReassignments(null).length === 0, 'the reassignment completes');
    const done = b.controller.topic('moving')!.partitions[0];
    expect(done.replicas).to.deep.equal([b.nodeId, c.nodeId]);
    expect(leaderAndIsr(done)).to.deep.equal({ leader: b.nodeId, leaderEpoch: 1, isr: [b.nodeId, c.nodeId] });
    expect(b.cluster.cache.topic('moving')!.reassignments).to.equal(undefined);
    for (const m of [a, b, c]) expect(planRound(m.cluster.cache, () => false)).to.deep.equal([]);
  });

  it("a reassignment to a broker that dies waits (no completion); Kafka's errors; a cancel reverts it", async () => {
    const ms = await cluster(3);
    const ctl = controllerOf(ms);
    const [x, y] = ms.filter((m) => m !== ctl);
    await x.controller.createTopic(assigned('stuck', [[ctl.nodeId, x.nodeId]]), false);
    const alter = (replicas: number[] | null, partition = 0, allowRfChange = true) =>
      x.controller.alterPartitionReassignments('stuck', [{ partition, replicas }], allowRfChange).then(([o]) => o);
    expect(await alter(null)).to.deep.equal({ errorCode: ErrorCode.NO_REASSIGNMENT_IN_PROGRESS, errorMessage: 'No partition reassignment is in progress.' });
    expect((await alter([x.nodeId, y.nodeId])).errorCode).to.equal(ErrorCode.NONE);
    await y.close();
    await eventually(() => x.controller.brokers().length === 2, 'the adding broker is gone');
    await new Promise((r) => setTimeout(r, 500));
    expect(x.controller.listPartitionReassignments(null)).to.have.length(1);

    expect(await alter([x.nodeId, y.nodeId])).to.deep.equal({ errorCode: ErrorCode.INVALID_REPLICA_ASSIGNMENT,
      errorMessage: `The manual partition assignment includes broker ${y.nodeId}, but no such broker is registered.` });
    expect(await alter([x.nodeId, x.nodeId])).to.deep.equal({ errorCode: ErrorCode.INVALID_REPLICA_ASSIGNMENT,
      errorMessage: `The manual partition assignment includes the broker ${x.nodeId} more than once.` });
    expect(await alter([])).to.deep.equal({ errorCode: ErrorCode.INVALID_REPLICA_ASSIGNMENT,
      errorMessage: 'The manual partition assignment includes an empty replica list.' });
    expect(await alter([x.nodeId], 0, false)).to.deep.equal({ errorCode: ErrorCode.INVALID_REPLICATION_FACTOR,
      errorMessage: 'The replication factor is changed from 2 to 1' });
    expect(await alter([x.nodeId], 3)).to.deep.equal({ errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: 'Unable to find partition stuck:3.' });
    expect(await x.controller.alterPartitionReassignments('none', [{ partition: 0, replicas: null }], true)).to.deep.equal([
      { errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: 'Unable to find a topic named none.' }]);

    expect(await alter(null)).to.deep.equal({ errorCode: ErrorCode.NONE, errorMessage: null });
    expect(x.controller.listPartitionReassignments(null)).to.deep.equal([]);
    const reverted = x.controller.topic('stuck')!.partitions[0];
    expect(reverted.replicas).to.deep.equal([x.nodeId, ctl.nodeId]); // Kafka's revert: the full set less the adding ones
    expect(leaderAndIsr(reverted)).to.deep.equal({ leader: ctl.nodeId, leaderEpoch: 0, isr: [ctl.nodeId, x.nodeId] });
  });

  it("manual assignments as Kafka's validateManualPartitionAssignment checks them (CreateTopics, CreatePartitions)", async () => {
    const ms = await cluster(2);
    const create = (replicas: number[][]) => ms[0].controller.createTopic(assigned('manual', replicas), false);
    expect(await create([[1, 2], [1]])).to.deep.include({ errorCode: ErrorCode.INVALID_REPLICA_ASSIGNMENT,
      errorMessage: 'The manual partition assignment includes a partition with 1 replica(s), but this is not consistent with previous partitions, which have 2 replica(s).' });
    expect(await create([[3, 1, 1]])).to.deep.include({ errorCode: ErrorCode.INVALID_REPLICA_ASSIGNMENT,
      errorMessage: 'The manual partition assignment includes the broker 1 more than once.' });
    const twice = { ...assigned('manual', [[1], [2]]), assignments: [{ partitionIndex: 0, brokerIds: [1] }, { partitionIndex: 0, brokerIds: [2] }] };
    expect(await ms[0].controller.createTopic(twice, false)).to.deep.include({ errorCode: ErrorCode.INVALID_REPLICA_ASSIGNMENT,
      errorMessage: 'Found multiple manual partition assignments for partition 0' });
    const gap = { ...assigned('manual', [[1]]), assignments: [{ partitionIndex: 1, brokerIds: [1] }] };
    expect(await ms[0].controller.createTopic(gap, false)).to.deep.include({ errorCode: ErrorCode.INVALID_REPLICA_ASSIGNMENT,
      errorMessage: 'partitions should be a consecutive 0-based integer sequence' });
    expect((await create([[1, 2]])).errorCode).to.equal(ErrorCode.NONE);
    expect(await ms[1].controller.createPartitions('manual', 2, [[2]], false)).to.deep.equal({ errorCode: ErrorCode.INVALID_REPLICA_ASSIGNMENT,
      errorMessage: 'The manual partition assignment includes a partition with 1 replica(s), but this is not consistent with previous partitions, which have 2 replica(s).' });
  });
});
