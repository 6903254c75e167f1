import { expect } from 'chai';
import { Kafka, logLevel, type Admin, type Producer } from 'kafkajs';
import { ApiKey } from '../../src/protocol/generated';
import { ErrorCode } from '../../src/common/errors';
import { withBroker } from '../helpers/broker';
import { RawClient } from '../helpers/raw-client';
import { sample } from '../helpers/prometheus';

describe('broker metrics (/metrics text)', function () {
  this.timeout(30_000);
  const broker = withBroker();
  const other = withBroker();
  let kafka: Kafka;
  let admin: Admin;
  let producer: Producer;
  let client: RawClient;
  const topic = 'metrics-topic';

  before(async () => {
    kafka = new Kafka({ brokers: [broker.current().bootstrap], clientId: 'metrics-test', logLevel: logLevel.NOTHING });
    admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic, numPartitions: 1 }] });
    producer = kafka.producer();
    await producer.connect();
    client = await RawClient.connect(broker.current().port);
  });

  after(async () => {
    client?.close();
    await producer?.disconnect();
    await admin?.disconnect();
  });

  /** One Fetch v12 of partition 0 from `fetchOffset`: the records bytes answered. */
  async function fetchRecords(fetchOffset: bigint, maxWaitMs = 0): Promise<Buffer> {
    const res = await client.api(ApiKey.Fetch, 12, {
      replicaId: -1, maxWaitMs, minBytes: 1, maxBytes: 10_000_000, isolationLevel: 0, sessionId: 0, sessionEpoch: -1,
      topics: [{ topic, partitions: [{ partition: 0, currentLeaderEpoch: -1, fetchOffset, lastFetchedEpoch: -1, logStartOffset: -1n, partitionMaxBytes: 10_000_000 }] }],
      forgottenTopicsData: [], rackId: '',
    });
    const p = res.responses[0].partitions[0];
    expect(p.errorCode).to.equal(ErrorCode.NONE);
    return p.records ?? Buffer.alloc(0);
  }

  it('counts bytes and messages in as appended, bytes out as fetched, requests per API with their times', async () => {
    const before = await broker.current().broker.metrics.render();
    const producesBefore = sample(before, 'kafka_network_requestmetrics_requests_total', { request: 'Produce' }) ?? 0;
    await producer.send({ topic, messages: [1, 2, 3, 4, 5].map((i) => ({ key: `k${i}`, value: `value ${i}` })) });
    await producer.send({ topic, messages: [{ value: 'a' }, { value: 'bb' }, { value: 'ccc' }] });
    // The whole log, read back: the batches exactly as the broker appended them.
    const records = await fetchRecords(0n);
    expect(records.length).to.be.greaterThan(0);

    const text = await broker.current().broker.metrics.render();
    expect(sample(text, 'kafka_server_brokertopicmetrics_bytesin_total', { topic })).to.equal(records.length);
    expect(sample(text, 'kafka_server_brokertopicmetrics_messagesin_total', { topic })).to.equal(8);
    expect(sample(text, 'kafka_server_brokertopicmetrics_totalproducerequests_total', { topic })).to.equal(2);
    expect(sample(text, 'kafka_server_brokertopicmetrics_bytesout_total', { topic })).to.equal(records.length);
    expect(sample(text, 'kafka_server_brokertopicmetrics_totalfetchrequests_total', { topic })).to.equal(1);
    // The all-topics series (no label) holds at least this topic's figures.
    expect(sample(text, 'kafka_server_brokertopicmetrics_messagesin_total')).to.be.at.least(8);

    expect(sample(text, 'kafka_network_requestmetrics_requests_total', { request: 'Produce' })).to.equal(producesBefore + 2);
    expect(sample(text, 'kafka_network_requestmetrics_totaltimems_count', { request: 'Produce' })).to.equal(producesBefore + 2);
    expect(sample(text, 'kafka_network_requestmetrics_totaltimems_bucket', { request: 'Produce', le: '+Inf' })).to.equal(producesBefore + 2);
    expect(sample(text, 'kafka_network_requestmetrics_totaltimems_sum', { request: 'Produce' })).to.be.greaterThan(0);
    expect(sample(text, 'kafka_network_requestmetrics_errors_total', { request: 'Produce', error: 'NONE' })).to.equal(producesBefore + 2);
    // The Fetch counted as Fetch and as a consumer's.
    expect(sample(text, 'kafka_network_requestmetrics_requests_total', { request: 'Fetch' })).to.equal(1);
    expect(sample(text, 'kafka_network_requestmetrics_requests_total', { request: 'FetchConsumer' })).to.equal(1);
    expect(sample(text, 'kafka_network_requestmetrics_requests_total', { request: 'FetchFollower' })).to.equal(undefined);
    expect(sample(text, 'kafka_network_requestmetrics_responsebytes_sum', { request: 'Fetch' })).to.be.greaterThan(records.length);
    expect(sample(text, 'kafka_network_requestmetrics_requestbytes_count', { request: 'Metadata' })).to.be.at.least(1);
  });

  it('counts a long-poll fetch\'s wait as remote time', async () => {
    const end = await client.api(ApiKey.ListOffsets, 5, {
      replicaId: -1, isolationLevel: 0, topics: [{ name: topic, partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: -1n, maxNumOffsets: 1 }] }],
    });
    const records = await fetchRecords(end.topics[0].partitions[0].offset ?? -1n, 300);
    expect(records.length).to.equal(0);
    const text = await broker.current().broker.metrics.render();
    expect(sample(text, 'kafka_network_requestmetrics_remotetimems_sum', { request: 'FetchConsumer' })).to.be.within(250, 2000);
    // The wait is remote, not local: the local time stays below it.
    expect(sample(text, 'kafka_network_requestmetrics_localtimems_sum', { request: 'FetchConsumer' })).to.be.below(250);
  });

  it('counts error codes in responses by their name', async () => {
    const res = await client.api(ApiKey.Produce, 9, {
      transactionalId: null, acks: 1, timeoutMs: 1000,
      topicData: [{ name: 'no-such-topic', partitionData: [{ index: 0, records: Buffer.alloc(0) }, { index: 1, records: Buffer.alloc(0) }] }],
    });
    expect(res.responses[0].partitionResponses[0].errorCode).to.equal(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    const text = await broker.current().broker.metrics.render();
    expect(sample(text, 'kafka_network_requestmetrics_errors_total', { request: 'Produce', error: 'UNKNOWN_TOPIC_OR_PARTITION' })).to.equal(2);
    // A topic that does not exist makes no series.
    expect(text).not.to.contain('topic="no-such-topic"');
  });

  it('counts connections per listener, reads the purgatories, and has the process\'s figures', async () => {
    const text = await broker.current().broker.metrics.render();
    expect(sample(text, 'kafka_server_socketservermetrics_connection_count', { listener: 'PLAINTEXT' })).to.be.at.least(2);
    const created = sample(text, 'kafka_server_socketservermetrics_connection_creation_total', { listener: 'PLAINTEXT' })!;
    const closed = sample(text, 'kafka_server_socketservermetrics_connection_close_total', { listener: 'PLAINTEXT' })!;
    expect(created - closed).to.equal(sample(text, 'kafka_server_socketservermetrics_connection_count', { listener: 'PLAINTEXT' }));
    expect(sample(text, 'kafka_server_delayedoperationpurgatory_purgatorysize', { delayedOperation: 'Fetch' })).to.equal(0);
    expect(sample(text, 'kafka_server_delayedoperationpurgatory_purgatorysize', { delayedOperation: 'Produce' })).to.equal(0);
    expect(sample(text, 'process_cpu_user_seconds_total')).to.be.greaterThan(0);
    expect(sample(text, 'fjord_eventloop_delay_seconds_count')).to.be.greaterThan(0);
    expect(text).to.match(/^nodejs_heap_size_used_bytes \d+/m);
  });

  it('keeps each broker\'s figures apart in one process', async () => {
    const text = await other.current().broker.metrics.render();
    expect(text).not.to.contain(`topic="${topic}"`);
    expect(sample(text, 'kafka_network_requestmetrics_requests_total', { request: 'Produce' })).to.equal(undefined);
    expect(sample(text, 'kafka_server_brokertopicmetrics_bytesin_total')).to.equal(0);
  });

  it('drops a deleted topic\'s series', async () => {
    await admin.deleteTopics({ topics: [topic] });
    const text = await broker.current().broker.metrics.render();
    expect(text).not.to.contain(`topic="${topic}"`);
    // The all-topics figures keep what the topic had.
    expect(sample(text, 'kafka_server_brokertopicmetrics_messagesin_total')).to.be.at.least(8);
  });
});

describe('broker metrics: SASL authentications', function () {
  this.timeout(30_000);
  const broker = withBroker({
    config: {
      listeners: 'SASL_PLAINTEXT://127.0.0.1:0', 'sasl.enabled.mechanisms': 'PLAIN', 'connection.failed.authentication.delay.ms': '0',
      'listener.name.sasl_plaintext.plain.sasl.jaas.config': 'org.apache.kafka.common.security.plain.PlainLoginModule required ' +
        'username="admin" password="admin-secret" user_admin="admin-secret";',
    },
  });

  it('counts those that succeed and those that fail, per listener', async () => {
    const admin = (password: string) => new Kafka({
      brokers: [broker.current().bootstrap], clientId: 'metrics-sasl', logLevel: logLevel.NOTHING, retry: { retries: 0 },
      sasl: { mechanism: 'plain', username: 'admin', password },
    }).admin();
    const good = admin('admin-secret');
    await good.connect();
    await good.listTopics();
    await good.disconnect();
    const bad = admin('wrong');
    let refused = false;
    await bad.connect().catch(() => (refused = true));
    expect(refused).to.equal(true);
    const text = await broker.current().broker.metrics.render();
    const listener = { listener: 'SASL_PLAINTEXT' };
    expect(sample(text, 'kafka_server_socketservermetrics_successful_authentication_total', listener)).to.be.at.least(1);
    expect(sample(text, 'kafka_server_socketservermetrics_failed_authentication_total', listener)).to.equal(1);
  });
});
