// The cluster metadata over a 3-member etcd whose members die and come back (test/helpers/etcd.ts's
// cluster variant, the base of the chaos tests to come).
import { expect } from 'chai';
import { Etcd3 } from 'etcd3';
import { EtcdCluster } from '../../src/cluster/etcd/etcd-cluster';
import { withEtcd } from '../helpers/etcd';
import { eventually as waitFor } from '../helpers/eventually';

const eventually = (check: () => boolean, what: string, timeoutMs = 15_000) => waitFor(check, what, timeoutMs);

describe('cluster/etcd over a 3-member etcd', function () {
  this.timeout(60_000);
  const etcd = withEtcd(3);

  it('the death of the etcd leader costs no broker its session and the controller its place', async () => {
    const connect = { endpoints: etcd.current().members.map((m) => m.endpoint), prefix: '/leader-death' };
    const brokers = await Promise.all([1, 2].map((nodeId) =>
      EtcdCluster.start({ connect, nodeId, endpoints: [], sessionTimeoutMs: 2000 })));
    const leader = await etcd.current().leader();
    try {
      await eventually(() => brokers.some((b) => b.isController), 'a controller');
      const controller = brokers.find((b) => b.isController)!;
      const lost: number[] = [];
      for (const b of brokers) b.on('sessionLost', () => lost.push(b.nodeId));

      await leader.kill();
      // The write may wait out etcd's election and the request deadline, but it goes through.
      const revision = await controller.writeAsController([
        { type: 'putTopic', topic: { name: 'after', id: '12'.repeat(16), replicas: [[1, 2]], configs: {} } },
      ]);
      expect(revision).to.be.a('number');
      await new Promise((r) => setTimeout(r, 2500)); // longer than the sessions' TTL
      for (const b of brokers) {
        expect(b.cache.brokers().map((r) => r.brokerId)).to.deep.equal([1, 2]);
        expect(b.cache.controller()).to.deep.include({ brokerId: controller.nodeId, epoch: 1 });
        await eventually(() => b.cache.topic('after') !== undefined, `broker ${b.nodeId} sees the write`);
      }
      expect(lost).to.deep.equal([]);
    } finally {
      await Promise.all(brokers.map((b) => b.close()));
      if (!leader.running) await leader.start(); // the next test wants all three
    }
  });

  it('a cache whose etcd member died catches up after its revision was compacted away', async () => {
    // The follower's member is not the raft leader: killing the leader would hold the writes below
    // for etcd's request timeout (5 s and more) until a new leader is elected.
    const leader = await etcd.current().leader();
    const [m0, m1] = etcd.current().members.filter((m) => m !== leader);
    const endpoint = (m: { endpoint: string }) => ({ endpoints: [m.endpoint], prefix: '/fjord' });
    const controller = await EtcdCluster.start({
      connect: endpoint(m1), nodeId: 1, endpoints: [], sessionTimeoutMs: 10_000,
    });
    await eventually(() => controller.isController, 'broker 1 elected');
    const follower = await EtcdCluster.start({
      connect: endpoint(m0), nodeId: 2, endpoints: [], sessionTimeoutMs: 10_000,
    });
    const admin = new Etcd3({ hosts: `http://${m1.endpoint}` });
    try {
      await m0.kill(); // the follower's only etcd member: its watch is cut
      await controller.writeAsController([
        { type: 'putTopic', topic: { name: 'late', id: 'cd'.repeat(16), replicas: [[1]], configs: {} } },
      ]);
      const put = await admin.put('/fjord/topics/written-while-away').value(
        JSON.stringify({ name: 'written-while-away', id: 'ef'.repeat(16), replicas: [[2]], configs: {} }),
      ).exec();
      await admin.kv.compact({ revision: put.header.revision, physical: true });

      await m0.start();
      await eventually(() => follower.cache.topic('written-while-away') !== undefined, 'the follower relists');
      expect(follower.cache.topic('late')?.replicas).to.deep.equal([[1]]);
      expect(follower.cache.broker(1)?.incarnationId).to.equal(controller.incarnationId);
    } finally {
      admin.close();
      await Promise.all([follower.close(), controller.close()]);
    }
  });
});
