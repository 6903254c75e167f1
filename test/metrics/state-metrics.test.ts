// The gauges of a broker's state at /metrics (src/ops/state-metrics.ts) and the flush histogram: a
// broker with known topics, records, groups and transactions, scraped through BrokerMetrics.render().
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Kafka, logLevel, type Consumer } from 'kafkajs';
import { withBroker } from '../helpers/broker';
import { eventually } from '../helpers/eventually';
import { sample } from '../helpers/prometheus';

describe('metrics/state gauges', function () {
  this.timeout(60000);
  const broker = withBroker({ config: { 'group.initial.rebalance.delay.ms': '0', 'offsets.topic.num.partitions': '2', 'transaction.state.log.num.partitions': '2' } });
  let kafka: Kafka;
  let consumer: Consumer | undefined;
  const scrape = () => broker.current().broker.metrics.render();

  before(async () => {
    kafka = new Kafka({ brokers: [broker.current().bootstrap], clientId: 'state-metrics', logLevel: logLevel.NOTHING, retry: { retries: 20, initialRetryTime: 50, maxRetryTime: 500 } });
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({
      topics: [
        { topic: 'sm-a', numPartitions: 3 },
        { topic: 'sm-flushed', numPartitions: 1, configEntries: [{ name: 'flush.messages', value: '1' }] },
      ],
    });
    const producer = kafka.producer();
    await producer.connect();
    // 10 records to partition 0, 4 to partition 1, none to 2.
    await producer.send({ topic: 'sm-a', messages: Array.from({ length: 10 }, (_, i) => ({ value: `v${i}`, partition: 0 })) });
    await producer.send({ topic: 'sm-a', messages: Array.from({ length: 4 }, (_, i) => ({ value: `w${i}`, partition: 1 })) });
    await producer.send({ topic: 'sm-flushed', messages: [{ value: 'flushed' }] });
    await producer.disconnect();
    // An Empty group that committed part of the log: 3 of 10 on partition 0, 4 of 4 on partition 1.
    await admin.setOffsets({ groupId: 'sm-committed', topic: 'sm-a', partitions: [{ partition: 0, offset: '3' }, { partition: 1, offset: '4' }] });
    await admin.disconnect();
  });

  // After the test that made it, while the broker is up: mocha runs after-hooks in their order, the
  // broker's close first, and a kafkajs consumer left to leave a closed broker retries for ever.
  afterEach(async () => {
    await consumer?.disconnect();
    consumer = undefined;
  });

  it('counts the partitions hosted and led, none under-replicated or offline, and this broker as the active controller', async () => {
    const text = await scrape();
    const hosted = [...broker.current().broker.replicas.allPartitions()].length;
    expect(hosted).to.be.at.least(4); // sm-a (3), sm-flushed (1), and __consumer_offsets
    expect(sample(text, 'kafka_server_replicamanager_partitioncount')).to.equal(hosted);
    expect(sample(text, 'kafka_server_replicamanager_leadercount')).to.equal(hosted);
    expect(sample(text, 'kafka_server_replicamanager_underreplicatedpartitions')).to.equal(0);
    expect(sample(text, 'kafka_server_replicamanager_offlinereplicacount')).to.equal(0);
    expect(sample(text, 'kafka_controller_kafkacontroller_activecontrollercount')).to.equal(1);
    expect(sample(text, 'kafka_controller_kafkacontroller_offlinepartitionscount')).to.equal(0);
  });

  it('gives each partition log its size (the bytes of its segment files on disk), segments and offsets', async () => {
    const text = await scrape();
    for (const [partition, records] of [[0, 10], [1, 4], [2, 0]]) {
      const log = broker.current().broker.replicas.partition('sm-a', partition)!.log;
      const onDisk = fs.readdirSync(log.dir).filter((f) => f.endsWith('.log')).reduce((n, f) => n + fs.statSync(path.join(log.dir, f)).size, 0);
      const labels = { topic: 'sm-a', partition: String(partition) };
      expect(sample(text, 'kafka_log_log_size', labels)).to.equal(onDisk);
      expect(onDisk > 0).to.equal(records > 0);
      expect(sample(text, 'kafka_log_log_numlogsegments', labels)).to.equal(1);
      expect(sample(text, 'kafka_log_log_logstartoffset', labels)).to.equal(0);
      expect(sample(text, 'kafka_log_log_logendoffset', labels)).to.equal(records);
    }
  });

  it('times the flushes of a topic with flush.messages=1', async () => {
    const text = await scrape();
    expect(sample(text, 'kafka_log_logflushstats_logflushrateandtimems_count')).to.be.at.least(1);
  });

  it('gives the lag of a group that committed part of the log, by topic, and counts groups by state', async () => {
    let text = await scrape();
    expect(sample(text, 'kafka_consumer_group_lag', { group: 'sm-committed', topic: 'sm-a' })).to.equal(7);
    expect(sample(text, 'kafka_coordinator_group_groupmetadatamanager_numgroups', { state: 'Empty', type: 'classic' })).to.equal(1);
    // kafkajs's setOffsets joined sm-committed with a consumer of its own before committing.
    const rebalances = 'kafka_coordinator_group_groupmetadatamanager_completed_rebalances_total';
    const rebalancesBefore = sample(text, rebalances, { type: 'classic' });
    expect(rebalancesBefore).to.equal(1);

    // A consumer that joins and reads everything: its group is Stable and its lag goes to 0.
    consumer = kafka.consumer({ groupId: 'sm-reader', maxWaitTimeInMs: 100 });
    await consumer.connect();
    await consumer.subscribe({ topic: 'sm-a', fromBeginning: true });
    let read = 0;
    await consumer.run({ autoCommitInterval: 50, eachMessage: async () => { read++; } });
    await eventually(() => read === 14, 'the consumer read every record', 20000);
    const deadline = Date.now() + 20000;
    while (Date.now() < deadline) {
      text = await scrape();
      if (sample(text, 'kafka_consumer_group_lag', { group: 'sm-reader', topic: 'sm-a' }) === 0) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(sample(text, 'kafka_consumer_group_lag', { group: 'sm-reader', topic: 'sm-a' })).to.equal(0);
    expect(sample(text, 'kafka_coordinator_group_groupmetadatamanager_numgroups', { state: 'Stable', type: 'classic' })).to.equal(1);
    expect(sample(text, 'kafka_coordinator_group_groupmetadatamanager_numgroups', { state: 'Empty', type: 'classic' })).to.equal(1);
    expect(sample(text, 'kafka_consumer_group_lag', { group: 'sm-committed', topic: 'sm-a' })).to.equal(7);
    // Its join and sync: one more classic rebalance completed.
    expect(sample(text, rebalances, { type: 'classic' })).to.equal(rebalancesBefore! + 1);
  });

  it('counts transactional ids by state: one open, one committed', async () => {
    const transactional = (id: string) => kafka.producer({ transactionalId: id, idempotent: true, maxInFlightRequests: 1 });
    const committed = transactional('sm-txn-committed');
    const open = transactional('sm-txn-open');
    await committed.connect();
    await open.connect();
    try {
      const t1 = await committed.transaction();
      await t1.send({ topic: 'sm-a', messages: [{ value: 'in a committed transaction', partition: 2 }] });
      await t1.commit();
      const t2 = await open.transaction();
      await t2.send({ topic: 'sm-a', messages: [{ value: 'in an open transaction', partition: 2 }] });
      const text = await scrape();
      const name = 'kafka_coordinator_transaction_transactionstatemanager_numtransactions';
      expect(sample(text, name, { state: 'Ongoing' })).to.equal(1);
      expect(sample(text, name, { state: 'CompleteCommit' })).to.equal(1);
      await t2.abort();
    } finally {
      await committed.disconnect();
      await open.disconnect();
    }
  });
});
