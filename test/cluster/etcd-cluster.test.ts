import { expect } from 'chai';
import { spawn } from 'child_process';
import { Etcd3 } from 'etcd3';
import * as path from 'path';
import {
  DuplicateBrokerError,
  EtcdCluster,
  NotControllerError,
  leaseTtlSeconds,
} from '../../src/cluster/etcd/etcd-cluster';
import type { TopicAssignment } from '../../src/cluster/etcd/layout';
import { withEtcd } from '../helpers/etcd';
import { rejection } from '../helpers/rejection';
import { eventually as waitFor } from '../helpers/eventually';

const eventually = (check: () => boolean, what: string, timeoutMs = 8000) => waitFor(check, what, timeoutMs);

describe('cluster/etcd-cluster (against a real etcd)', function () {
  this.timeout(30_000);
  const etcd = withEtcd();
  let prefix: string;
  let n = 0;
  let started: EtcdCluster[] = [];
  let raw: Etcd3;

  beforeEach(() => {
    prefix = `/test${n++}`; // each test its own cluster in the one etcd
    started = [];
    raw = new Etcd3({ hosts: `http://${etcd.current().connect}` });
  });
  afterEach(async () => {
    await Promise.all(started.map((b) => b.close()));
    raw.close();
  });

  async function broker(nodeId: number, rack: string | null = null): Promise<EtcdCluster> {
    const b = await EtcdCluster.start({
      connect: { endpoints: [etcd.current().connect], prefix },
      nodeId,
      endpoints: [{ name: 'PLAINTEXT', securityProtocol: 'PLAINTEXT', host: '127.0.0.1', port: 9100 + nodeId }],
      rack,
      sessionTimeoutMs: 1000,
    });
    started.push(b);
    return b;
  }

  const orders: TopicAssignment = { name: 'orders', id: 'ab'.repeat(16), replicas: [[1, 2], [2, 1]], configs: { 'min.insync.replicas': '2' } };
  const createOrders = (controller: EtcdCluster) => controller.writeAsController([
    { type: 'putTopic', topic: orders },
    { type: 'putPartitionState', topicId: orders.id, partition: 0, expectedPartitionEpoch: -1, state: { leader: 1, leaderEpoch: 0, isr: [1, 2] } },
    { type: 'putPartitionState', topicId: orders.id, partition: 1, expectedPartitionEpoch: -1, state: { leader: 2, leaderEpoch: 0, isr: [2, 1] } },
  ]);
  const controllerOf = (...brokers: EtcdCluster[]) => brokers.find((b) => b.isController);

  it('rounds the session timeout up to whole seconds for the lease TTL', () => {
    expect([1, 999, 1000, 1001, 9000].map(leaseTtlSeconds)).to.deep.equal([1, 1, 1, 2, 9]);
  });

  it("a broker's registration shows in another broker's cache, and leaves it when the broker closes", async () => {
    const b1 = await broker(1, 'rack-a');
    const b2 = await broker(2);
    expect(b2.cache.broker(1)).to.deep.equal({
      brokerId: 1,
      incarnationId: b1.incarnationId,
      endpoints: [{ name: 'PLAINTEXT', securityProtocol: 'PLAINTEXT', host: '127.0.0.1', port: 9101 }],
      rack: 'rack-a',
    });
    await eventually(() => b1.cache.brokers().length === 2, 'b1 sees b2');
    expect(b1.cache.brokers().map((b) => b.brokerId)).to.deep.equal([1, 2]);
    const lease = await raw.get(`${prefix}/brokers/ids/1`).exec();
    expect(lease.kvs[0].lease).to.equal(await b1.leaseId()); // held by the session's lease

    await b1.close();
    await eventually(() => b2.cache.broker(1) === undefined, 'b1 gone from b2');
  });

  it('refuses a second live broker with the same node id, and accepts the id once the first is gone', async () => {
    const first = await broker(1);
    const err = await rejection(broker(1));
    expect(err).to.be.instanceOf(DuplicateBrokerError);
    expect(err.message).to.match(/Broker id 1 is already registered by another live broker/);
    expect((err as DuplicateBrokerError).registered.incarnationId).to.equal(first.incarnationId);
    // The refused attempt left the live registration alone.
    const other = await broker(2);
    expect(other.cache.broker(1)?.incarnationId).to.equal(first.incarnationId);

    await first.close();
    const again = await broker(1);
    expect(again.cache.broker(1)?.incarnationId).to.equal(again.incarnationId);
  });

  it('elects exactly one controller, with epoch 1, that every broker agrees on', async () => {
    const brokers = await Promise.all([broker(1), broker(2), broker(3)]);
    await eventually(() => brokers.every((b) => b.controllerId !== -1 && b.controllerId === brokers[0].controllerId), 'agreement');
    expect(brokers.filter((b) => b.isController)).to.have.length(1);
    expect(controllerOf(...brokers)!.nodeId).to.equal(brokers[0].controllerId);
    for (const b of brokers) expect(b.cache.controllerEpoch()).to.equal(1);
  });

  it("a controller whose lease is lost loses its place to another broker with a higher epoch, its writes are refused, and it registers again", async () => {
    const b1 = await broker(1);
    const b2 = await broker(2);
    await eventually(() => controllerOf(b1, b2) !== undefined && b1.controllerId === b2.controllerId, 'a controller');
    const old = controllerOf(b1, b2)!;
    const survivor = old === b1 ? b2 : b1;
    const changes: number[] = [];
    survivor.on('controllerChange', (id: number) => changes.push(id));
    const lost = new Promise((resolve) => old.once('sessionLost', resolve));
    const renewed = new Promise((resolve) => old.once('sessionRenewed', resolve));
    const oldLease = await old.leaseId();

    await raw.leaseClient.leaseRevoke({ ID: oldLease }); // as if its session timed out

    await eventually(() => survivor.isController, 'the survivor takes over');
    expect(survivor.cache.controller()).to.deep.include({ brokerId: survivor.nodeId, epoch: 2 });
    expect(changes).to.include(survivor.nodeId);
    await lost;
    expect(old.isController).to.equal(false);
    const err = await rejection(createOrders(old));
    expect(err).to.be.instanceOf(NotControllerError);
    expect(survivor.cache.topic('orders')).to.equal(undefined);
    expect(await createOrders(survivor)).to.be.a('number');

    // A new session: registered again under a new lease, and the survivor stays controller.
    await renewed;
    const newLease = await old.leaseId();
    expect(newLease).to.not.equal(oldLease);
    const [registration] = (await raw.namespace(prefix).get(`/brokers/ids/${old.nodeId}`).exec()).kvs;
    expect(registration.lease).to.equal(newLease);
    await eventually(() => survivor.cache.broker(old.nodeId) !== undefined, 'the old controller registered again');
    expect(survivor.isController).to.equal(true);
  });

  it('a controller whose process is SIGKILLed is gone after its session timeout, and another broker takes over', async () => {
    // The doomed broker runs in a child process so that it can die without a word: no revoke, no
    // more keepalives; only the lease's TTL (1 s) ends its registration.
    const modulePath = path.join(__dirname, '../../src/cluster/etcd/etcd-cluster.js');
    const child = spawn(process.execPath, ['-e', `
      const { EtcdCluster } = require(${JSON.stringify(modulePath)});
      EtcdCluster.start({ connect: { endpoints: [${JSON.stringify(etcd.current().connect)}], prefix: ${JSON.stringify(prefix)} },
        nodeId: 1, endpoints: [], sessionTimeoutMs: 1000 })
        .then((b) => { const tell = () => b.isController && console.log('controller'); tell(); b.on('controllerChange', tell); });
    `], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      await new Promise<void>((resolve, reject) => {
        child.stdout!.on('data', (d: Buffer) => { if (d.toString().includes('controller')) resolve(); });
        child.once('exit', () => reject(new Error('the child broker exited')));
      });
      const b2 = await broker(2);
      expect(b2.controllerId).to.equal(1);
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
      const killedAt = Date.now();
      await eventually(() => b2.isController, 'broker 2 takes over');
      expect(Date.now() - killedAt).to.be.below(5000); // the 1 s TTL, give or take etcd's expiry sweep and a busy machine
      expect(b2.cache.broker(1)).to.equal(undefined);
      expect(b2.cache.controller()).to.deep.include({ brokerId: 2, epoch: 2 });
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('fences a controller whose epoch was superseded, even before it hears of it', async () => {
    const b1 = await broker(1);
    await eventually(() => b1.isController, 'b1 elected');
    // A newer controller's epoch, as written by an election this broker has not seen.
    await raw.put(`${prefix}/controller_epoch`).value('7');
    const err = await rejection(createOrders(b1));
    expect(err).to.be.instanceOf(NotControllerError);
    expect(err.message).to.equal('Broker 1 is no longer the controller: its epoch 1 was fenced');
    expect((await raw.getAll().prefix(`${prefix}/topics/`).keys())).to.deep.equal([]);
  });

  it('partition state: an update from a stale partition epoch is refused with the current state; caches follow', async () => {
    const b1 = await broker(1);
    const b2 = await broker(2);
    await eventually(() => controllerOf(b1, b2) !== undefined, 'a controller');
    const controller = controllerOf(b1, b2)!;
    await createOrders(controller);
    await eventually(() => b1.cache.topic('orders') !== undefined && b2.cache.partitionState('orders', 1) !== undefined, 'topic in caches');
    expect(b2.cache.topic('orders')).to.deep.equal(orders);
    expect(b1.cache.partitionState('orders', 0)).to.deep.equal({ leader: 1, leaderEpoch: 0, isr: [1, 2], partitionEpoch: 0 });

    // The leader shrinks the ISR from epoch 0: accepted, epoch 1.
    const shrink = await b1.alterPartitionState(orders.id, 0, 0, { leader: 1, leaderEpoch: 0, isr: [1] });
    expect(shrink).to.deep.equal({ ok: true, state: { leader: 1, leaderEpoch: 0, isr: [1], partitionEpoch: 1 } });
    expect(b1.cache.partitionState('orders', 0)?.partitionEpoch).to.equal(1);
    // A second change computed from epoch 0 is stale: refused, with what to retry from.
    const stale = await b1.alterPartitionState(orders.id, 0, 0, { leader: 1, leaderEpoch: 0, isr: [1, 2] });
    expect(stale).to.deep.equal({ ok: false, current: { leader: 1, leaderEpoch: 0, isr: [1], partitionEpoch: 1 } });
    expect(await b1.alterPartitionState(orders.id, 9, 0, { leader: 1, leaderEpoch: 0, isr: [1] }))
      .to.deep.equal({ ok: false, current: null });
    // The same change again (a retry whose answer was lost) is no conflict: it is what is there.
    expect(await b1.alterPartitionState(orders.id, 0, 0, { leader: 1, leaderEpoch: 0, isr: [1] }))
      .to.deep.equal({ ok: true, state: { leader: 1, leaderEpoch: 0, isr: [1], partitionEpoch: 1 } });
    // The controller's writes are held to partition epochs too: a stale one changes nothing.
    expect(await controller.writeAsController([
      { type: 'putPartitionState', topicId: orders.id, partition: 0, expectedPartitionEpoch: 0, state: { leader: 2, leaderEpoch: 1, isr: [2] } },
    ])).to.equal(false);
    await controller.writeAsController([
      { type: 'putPartitionState', topicId: orders.id, partition: 0, expectedPartitionEpoch: 1, state: { leader: 2, leaderEpoch: 1, isr: [2] } },
    ]);
    await eventually(() => b2.cache.partitionState('orders', 0)?.partitionEpoch === 2, 'b2 sees the election');
    expect(b2.cache.partitionState('orders', 0)).to.deep.equal({ leader: 2, leaderEpoch: 1, isr: [2], partitionEpoch: 2 });

    // Deleting the topic removes it and its partition states from every cache.
    await controller.writeAsController([{ type: 'deleteTopic', name: 'orders', topicId: orders.id }]);
    for (const b of [b1, b2]) {
      await eventually(() => b.cache.topics().length === 0 && b.cache.partitionState('orders', 1) === undefined, 'deletion seen');
    }

    // Created again under the same name, the topic has a new id: a write meant for the old one misses,
    // even from the epoch the new partition starts at.
    const reborn = { ...orders, id: 'cd'.repeat(16) };
    await controller.writeAsController([
      { type: 'putTopic', topic: reborn },
      { type: 'putPartitionState', topicId: reborn.id, partition: 0, expectedPartitionEpoch: -1, state: { leader: 2, leaderEpoch: 0, isr: [2] } },
    ]);
    expect(await b1.alterPartitionState(orders.id, 0, 0, { leader: 1, leaderEpoch: 0, isr: [1] }))
      .to.deep.equal({ ok: false, current: null });
    expect(controller.cache.partitionState('orders', 0)).to.deep.equal({ leader: 2, leaderEpoch: 0, isr: [2], partitionEpoch: 0 });
  });

  it("a controller write resolves once the writer's own cache holds it, for many writes at once", async () => {
    const b1 = await broker(1);
    await eventually(() => b1.isController, 'b1 elected');
    const names = Array.from({ length: 25 }, (_, i) => `t${i}`);
    await Promise.all(names.map((name, i) => b1.writeAsController([
      { type: 'putTopic', topic: { name, id: i.toString(16).padStart(32, '0'), replicas: [[1]], configs: {} } },
    ]).then(() => expect(b1.cache.topic(name)?.name).to.equal(name))));
    expect(b1.cache.topics()).to.have.length(25);
  });

  it('a broker that starts later loads what is already there, and ignores keys that are not its own', async () => {
    const b1 = await broker(1);
    await eventually(() => b1.isController, 'b1 elected');
    await createOrders(b1);
    await raw.put(`${prefix}/someone-elses/key`).value('not json');
    const b2 = await broker(2);
    expect(b2.cache.topic('orders')).to.deep.equal(orders);
    expect(b2.cache.partitionState('orders', 1)).to.deep.equal({ leader: 2, leaderEpoch: 0, isr: [2, 1], partitionEpoch: 0 });
    expect(b2.controllerId).to.equal(1);
    expect(b2.isController).to.equal(false);
    expect(b2.cache.controllerEpoch()).to.equal(1);
  });
});
