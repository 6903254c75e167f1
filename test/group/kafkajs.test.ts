// kafkajs's own consumer group against the broker (JoinGroup up to v5, SyncGroup, Heartbeat,
// OffsetCommit / OffsetFetch, LeaveGroup): two consumers split a 4-partition topic and read every
// record exactly once; the committed offsets survive a broker restart.
import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { Kafka, logLevel, type Consumer } from 'kafkajs';
import { startBroker, type RunningBroker } from '../../src/broker';

const TOPIC = 'kjs-orders';
const GROUP = 'kjs-group';
const CONFIG = { 'group.initial.rebalance.delay.ms': '0', 'offsets.topic.num.partitions': '5' };

async function waitFor(what: string, cond: () => boolean, timeoutMs = 20000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('kafkajs consumer group', function () {
  this.timeout(60000);
  let dataDir: string;
  let running: RunningBroker | undefined;
  const consumers: Consumer[] = [];

  before(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'fjord-kafkajs-group-'));
  });
  after(async () => {
    await Promise.all(consumers.map((c) => c.disconnect().catch(() => undefined)));
    await running?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  const client = (bootstrap: string) => new Kafka({
    brokers: [bootstrap], clientId: 'kjs-group-test', logLevel: logLevel.NOTHING, retry: { retries: 20, initialRetryTime: 50, maxRetryTime: 500 },
  });

  it('two consumers share the partitions and read every record exactly once; commits survive a restart', async () => {
    running = await startBroker({ dataDir, logLevel: 'silent', config: CONFIG });
    let kafka = client(running.bootstrap);
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: TOPIC, numPartitions: 4 }] });

    const seen = new Map<string, string[]>(); // value -> the consumers that read it
    const assigned = new Map<string, number[]>(); // consumer -> partitions of its latest assignment
    const start = async (name: string): Promise<Consumer> => {
      const consumer = kafka.consumer({ groupId: GROUP, heartbeatInterval: 300, sessionTimeout: 10000, rebalanceTimeout: 10000, maxWaitTimeInMs: 200 });
      consumers.push(consumer);
      consumer.on(consumer.events.GROUP_JOIN, (e) => assigned.set(name, e.payload.memberAssignment[TOPIC] ?? []));
      await consumer.connect();
      await consumer.subscribe({ topics: [TOPIC], fromBeginning: true });
      await consumer.run({
        eachMessage: async ({ message }) => {
          const value = message.value!.toString();
          seen.set(value, [...(seen.get(value) ?? []), name]);
        },
      });
      return consumer;
    };
    const [c1, c2] = [await start('c1'), await start('c2')];
    // Produce only once the partitions are split, so that no rebalance moves a partition mid-read.
    await waitFor('a 2+2 split', () => {
      const a = assigned.get('c1') ?? [];
      const b = assigned.get('c2') ?? [];
      return a.length === 2 && b.length === 2 && new Set([...a, ...b]).size === 4;
    });

    const producer = kafka.producer();
    await producer.connect();
    const N = 200;
    for (let i = 0; i < N; i += 50) {
      await producer.send({ topic: TOPIC, messages: Array.from({ length: 50 }, (_, j) => ({ key: `k${i + j}`, value: `v${i + j}` })) });
    }
    await waitFor('every record', () => seen.size === N);
    await new Promise((r) => setTimeout(r, 300));
    expect(seen.size).to.equal(N);
    const twice = [...seen].filter(([, by]) => by.length !== 1);
    expect(twice, 'records read more than once').to.deep.equal([]);
    const byConsumer = [...seen.values()].reduce((acc, [name]) => acc.set(name, (acc.get(name) ?? 0) + 1), new Map<string, number>());
    expect(byConsumer.get('c1')).to.be.greaterThan(0);
    expect(byConsumer.get('c2')).to.be.greaterThan(0);

    // Leaving commits what was read; the group is then Empty.
    await Promise.all([c1.disconnect(), c2.disconnect()]);
    consumers.length = 0;
    const ends = await admin.fetchTopicOffsets(TOPIC);
    const committed = await admin.fetchOffsets({ groupId: GROUP, topics: [TOPIC] });
    const asMap = (list: { partition: number; offset: string }[]) => Object.fromEntries(list.map((p) => [p.partition, p.offset]));
    expect(asMap(committed[0].partitions)).to.deep.equal(asMap(ends));
    expect((await admin.describeGroups([GROUP])).groups[0].state).to.equal('Empty');
    await Promise.all([admin.disconnect(), producer.disconnect()]);
    await running.close();

    // Restart on the same data: the offsets are read back from __consumer_offsets.
    running = await startBroker({ dataDir, logLevel: 'silent', config: CONFIG });
    kafka = client(running.bootstrap);
    const admin2 = kafka.admin();
    await admin2.connect();
    const after = await admin2.fetchOffsets({ groupId: GROUP, topics: [TOPIC] });
    expect(asMap(after[0].partitions)).to.deep.equal(asMap(ends));
    expect((await admin2.listGroups()).groups.map((g) => g.groupId)).to.include(GROUP);

    // A consumer of the same group goes on from the committed offsets: only the new records.
    const producer2 = kafka.producer();
    await producer2.connect();
    await producer2.send({ topic: TOPIC, messages: Array.from({ length: 20 }, (_, j) => ({ key: `n${j}`, value: `new${j}` })) });
    seen.clear();
    await start('c3');
    await waitFor('the new records', () => seen.size === 20);
    await new Promise((r) => setTimeout(r, 300));
    expect([...seen.keys()].every((v) => v.startsWith('new'))).to.equal(true);
    await Promise.all([admin2.disconnect(), producer2.disconnect()]);
  });
});
