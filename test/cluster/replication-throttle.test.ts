// Replication throttling in a cluster of two in-process brokers on a real etcd: broker 1 comes back
// with an empty data dir (its replicas' logs gone) behind broker 0, the leader of two topics of a few
// MB; the one whose leader.replication.throttled.replicas and follower.replication.throttled.replicas
// are '*' is copied at about the brokers' replication throttle rates, the other at full speed, while
// producing and the ISR go on as Kafka's (the throttled replica holds nothing back and joins the ISR
// once caught up); then a change of the topic configs applied on every broker.
import { expect } from 'chai';
import { Kafka, logLevel, type Admin, type Producer } from 'kafkajs';
import { startBroker, type RunningBroker } from '../../src/broker';
import { startEtcd, type RunningEtcd } from '../helpers/etcd';
import { eventually } from '../helpers/eventually';

const LAG_TIME_MAX_MS = 2000;
const RATE = 1_000_000; // bytes per second, on both sides
const TOPIC_BYTES = 4 * 1024 * 1024;
const VALUE = 'v'.repeat(5 * 1024);
const THROTTLED = 'throttled';
const FREE = 'free';

describe('replication throttling in a cluster', function () {
  this.timeout(120_000);
  let etcd: RunningEtcd;
  const brokers: Array<RunningBroker | undefined> = [];
  let kafka: Kafka;
  let admin: Admin;
  let producer: Producer;

  const startNode = (nodeId: number) => startBroker({
    nodeId, logLevel: process.env.FJORD_TEST_LOG ?? 'silent',
    config: {
      'etcd.connect': etcd.connect, 'broker.session.timeout.ms': '6000', 'replica.lag.time.max.ms': String(LAG_TIME_MAX_MS),
      'replica.fetch.wait.max.ms': '100', 'replica.fetch.backoff.ms': '100', 'replica.fetch.max.bytes': '65536',
      'offsets.topic.num.partitions': '1', 'offsets.topic.replication.factor': '1',
    },
  });

  before(async () => {
    etcd = await startEtcd();
    brokers[0] = await startNode(0);
    brokers[1] = await startNode(1);
    // The rates are dynamic-only broker configs (as in Kafka): a cluster-wide default, kept in etcd.
    const rates = { 'leader.replication.throttled.rate': String(RATE), 'follower.replication.throttled.rate': String(RATE) };
    expect(await brokers[0].broker.controller.setBrokerConfigs('', (current) => ({ ...current, ...rates }), false))
      .to.include({ errorCode: 0 });
    kafka = new Kafka({ brokers: [brokers[0].bootstrap], logLevel: logLevel.NOTHING, retry: { retries: 20, initialRetryTime: 100 } });
    admin = kafka.admin();
    await admin.connect();
    producer = kafka.producer({ allowAutoTopicCreation: false });
    await producer.connect();
  });

  after(async () => {
    await producer?.disconnect();
    await admin?.disconnect();
    await Promise.all(brokers.map((b) => b?.close()));
    await etcd?.stop();
  });

  /** Bytes of the partition's log on a broker (0 when it has none yet). */
  const logSize = (nodeId: number, topic: string): number => brokers[nodeId]?.broker.replicas.partition(topic, 0)?.log.size ?? 0;

  it('copies a throttled replica at about the rate, an unthrottled one at full speed', async () => {
    const throttles = ['leader', 'follower'].map((side) => ({ name: `${side}.replication.throttled.replicas`, value: '*' }));
    await admin.createTopics({
      waitForLeaders: true,
      topics: [
        { topic: THROTTLED, replicaAssignment: [{ partition: 0, replicas: [0, 1] }], configEntries: throttles },
        { topic: FREE, replicaAssignment: [{ partition: 0, replicas: [0, 1] }] },
      ],
    });
    // Broker 1 leaves for good: its data dir goes with it. Broker 0 leads both partitions alone.
    await brokers[1]!.close();
    brokers[1] = undefined;
    for (const topic of [THROTTLED, FREE]) {
      for (let sent = 0; sent < TOPIC_BYTES; sent += 10 * VALUE.length) {
        await producer.send({ topic, acks: 1, messages: Array.from({ length: 10 }, () => ({ value: VALUE })) });
      }
    }
    const isr = (topic: string) => {
      const role = brokers[0]!.broker.replicas.partition(topic, 0)?.role;
      return role?.kind === 'leader' ? role.replicas.isr : [];
    };
    await eventually(() => !isr(THROTTLED).includes(1) && !isr(FREE).includes(1), 'broker 1 out of the ISR', 15_000);
    // Kafka's high watermark waits replica.lag.time.max.ms for a follower that was caught up: once
    // that is over, a write moves it to the log end (else the empty replica would count as in sync).
    await new Promise((resolve) => setTimeout(resolve, LAG_TIME_MAX_MS + 200));
    for (const topic of [THROTTLED, FREE]) await producer.send({ topic, acks: -1, messages: [{ value: 'last' }] });
    const leaderSize: Record<string, number> = { [THROTTLED]: logSize(0, THROTTLED), [FREE]: logSize(0, FREE) };
    expect(leaderSize[THROTTLED]).to.be.at.least(TOPIC_BYTES);

    // Broker 1 is back, empty: it fetches both partitions from broker 0, sampled every 100 ms.
    brokers[1] = await startNode(1);
    const started = Date.now();
    const doneAt: Record<string, number> = {};
    const samples: Array<{ at: number; bytes: number }> = [];
    let producedDuring = 0;
    const sending = (async () => {
      // Acks=all writes to the throttled topic go on meanwhile: the lagging replica is out of the ISR.
      while (doneAt[THROTTLED] === undefined) {
        await producer.send({ topic: THROTTLED, acks: -1, timeout: 5000, messages: [{ value: 'during' }] });
        producedDuring++;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    })();
    while (doneAt[THROTTLED] === undefined) {
      if (Date.now() - started > 30_000) throw new Error(`not caught up in 30 s: ${JSON.stringify(samples.at(-1))}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
      const at = Date.now() - started;
      samples.push({ at, bytes: logSize(1, THROTTLED) });
      for (const topic of [THROTTLED, FREE]) if (doneAt[topic] === undefined && logSize(1, topic) >= leaderSize[topic]) doneAt[topic] = at;
    }
    await sending;

    // Kafka's rate allows the first window's worth at once, then holds the copy to the rate: about
    // RATE bytes a second over the copy, and never much more than RATE * max(elapsed, 1 s) so far.
    const last = samples.at(-1)!;
    const overallRate = last.bytes / (last.at / 1000);
    expect(overallRate, `samples ${JSON.stringify(samples)}`).to.be.within(0.8 * RATE, 1.2 * RATE);
    for (const { at, bytes } of samples) expect(bytes).to.be.at.most(1.1 * RATE * Math.max(at / 1000, 1) + 2 * 65536);
    expect(doneAt[FREE]).to.be.below(doneAt[THROTTLED] / 3);
    expect(producedDuring).to.be.greaterThan(3);

    // Caught up, the throttled replica joins the ISR as any other.
    const role = () => brokers[0]!.broker.replicas.partition(THROTTLED, 0)?.role;
    await eventually(() => { const r = role(); return r?.kind === 'leader' && r.replicas.isr.includes(1); }, 'broker 1 in the ISR', 15_000);
    const quotas = brokers[1].broker.replicas.replicationQuotas!;
    expect(quotas.follower.measuredRate()).to.be.greaterThan(0);
    expect(quotas.follower.bound).to.equal(RATE);
  });

  it('applies a change of a topic\'s throttled replicas on every broker without a restart', async () => {
    const quotas = (nodeId: number) => brokers[nodeId]!.broker.replicas.replicationQuotas!;
    expect(quotas(0).leader.isThrottled(FREE, 0)).to.equal(false);
    await admin.alterConfigs({
      validateOnly: false,
      resources: [{ type: 2, name: FREE, configEntries: [
        { name: 'leader.replication.throttled.replicas', value: '0:0' }, { name: 'follower.replication.throttled.replicas', value: '0:1' },
      ] }],
    });
    await eventually(() => quotas(0).leader.isThrottled(FREE, 0) && quotas(1).follower.isThrottled(FREE, 0), 'the throttles applied', 10_000);
    // Each broker keeps only the entries with its own id.
    expect(quotas(1).leader.isThrottled(FREE, 0)).to.equal(false);
    expect(quotas(0).follower.isThrottled(FREE, 0)).to.equal(false);
    await admin.alterConfigs({ validateOnly: false, resources: [{ type: 2, name: THROTTLED, configEntries: [] }] });
    await eventually(() => !quotas(0).leader.isThrottled(THROTTLED, 0) && !quotas(1).follower.isThrottled(THROTTLED, 0), 'the throttles removed', 10_000);
  });
});
