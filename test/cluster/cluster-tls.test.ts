// Two brokers on etcd whose inter-broker listener is SSL with ssl.client.auth=required: clients use
// the PLAINTEXT listener, replication and coordinator traffic go to the peers' INTERNAL endpoints
// over TLS, with each broker's key store as its client certificate. Metadata answers each listener
// with that listener's endpoints of both brokers; a listener only one broker has leaves the other
// out, and its partitions answer LISTENER_NOT_FOUND.
import { expect } from 'chai';
import { Kafka, logLevel } from 'kafkajs';
import { ApiKey } from '../../src/protocol/generated';
import type { MetadataResponse } from '../../src/protocol/generated/MetadataResponse';
import { ErrorCode } from '../../src/common/errors';
import { startBroker, type RunningBroker } from '../../src/broker';
import { startEtcd, type RunningEtcd } from '../helpers/etcd';
import { makeCertificates, type Certificates } from '../helpers/certs';
import { RawClient } from '../helpers/raw-client';
import { eventually } from '../helpers/eventually';

const ALL_TOPICS = { topics: null, allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false };

describe('a cluster whose inter-broker listener is SSL (mutual TLS)', function () {
  this.timeout(90_000);
  let etcd: RunningEtcd;
  let certs: Certificates;
  const brokers: RunningBroker[] = [];

  const startNode = (nodeId: number, extraListener = '') => startBroker({
    nodeId, logLevel: process.env.FJORD_TEST_LOG ?? 'silent',
    config: {
      'etcd.connect': etcd.connect, 'broker.session.timeout.ms': '6000',
      'replica.lag.time.max.ms': '3000', 'replica.fetch.wait.max.ms': '100',
      'offsets.topic.num.partitions': '1', 'offsets.topic.replication.factor': '2',
      listeners: `PLAINTEXT://127.0.0.1:0,INTERNAL://127.0.0.1:0${extraListener}`,
      'listener.security.protocol.map': 'PLAINTEXT:PLAINTEXT,INTERNAL:SSL,EXTRA:PLAINTEXT',
      'inter.broker.listener.name': 'INTERNAL',
      ...certs.brokerSsl,
      'listener.name.internal.ssl.client.auth': 'required',
    },
  });
  const portOf = (b: RunningBroker, listener: string) => b.listeners.get(listener)!.port;

  before(async () => {
    certs = makeCertificates();
    etcd = await startEtcd();
    brokers.push(...await Promise.all([startNode(0, ',EXTRA://127.0.0.1:0'), startNode(1)]));
    await eventually(() => brokers.every((b) => b.broker.controller.brokers().length === 2), 'both brokers registered', 10_000);
  });

  after(async () => {
    await Promise.all(brokers.map((b) => b.close()));
    await etcd?.stop();
    certs?.remove();
  });

  it('Metadata on each listener lists both brokers at that listener\'s ports', async () => {
    const plain = await RawClient.connect(portOf(brokers[1], 'PLAINTEXT'));
    const internal = await RawClient.connectTls(portOf(brokers[1], 'INTERNAL'),
      { ca: certs.ca.cert, cert: certs.server.cert, key: certs.server.key });
    try {
      for (const [c, listener] of [[plain, 'PLAINTEXT'], [internal, 'INTERNAL']] as const) {
        const md = await c.request<MetadataResponse>(ApiKey.Metadata, 12, ALL_TOPICS);
        expect(md.brokers.map((b) => [b.nodeId, b.port]).sort(), listener)
          .to.deep.equal([[0, portOf(brokers[0], listener)], [1, portOf(brokers[1], listener)]]);
      }
    } finally {
      plain.close();
      internal.close();
    }
  });

  it('replicates over the TLS listener: acks=all with min.insync.replicas=2, followers authenticated by certificate', async () => {
    const kafka = new Kafka({ brokers: brokers.map((b) => b.bootstrap), logLevel: logLevel.NOTHING, retry: { retries: 20, initialRetryTime: 100 } });
    const admin = kafka.admin();
    const producer = kafka.producer({ idempotent: true });
    await admin.connect();
    try {
      await admin.createTopics({ topics: [{ topic: 'over-tls', numPartitions: 2, replicationFactor: 2, configEntries: [{ name: 'min.insync.replicas', value: '2' }] }] });
      await producer.connect();
      for (let i = 0; i < 20; i++) await producer.send({ topic: 'over-tls', acks: -1, messages: [{ key: `k${i}`, value: `v${i}` }] });
      const [meta] = (await admin.fetchTopicMetadata({ topics: ['over-tls'] })).topics;
      for (const p of meta.partitions) expect([...p.isr].sort()).to.deep.equal([0, 1]);
      // Each broker's fetcher is connected to the other's INTERNAL listener, as the certificate's subject.
      for (const b of brokers) {
        const principals = b.listeners.get('INTERNAL')!.listener.sessions().map((s) => s.principal.name);
        expect(principals).to.include('CN=localhost');
      }
    } finally {
      await producer.disconnect();
      await admin.disconnect();
    }
  });

  it('a listener only one broker has: the other is left out, its partitions answer LISTENER_NOT_FOUND (v6+)', async () => {
    const c = await RawClient.connect(portOf(brokers[0], 'EXTRA'));
    const plain = await RawClient.connect(portOf(brokers[0], 'PLAINTEXT'));
    try {
      const byPlain = await plain.request<MetadataResponse>(ApiKey.Metadata, 12, ALL_TOPICS);
      const leaders = byPlain.topics.find((t) => t.name === 'over-tls')!.partitions.map((p) => [p.partitionIndex, p.leaderId]).sort();
      expect(leaders.map(([, leader]) => leader).sort(), 'the two partitions have one leader each').to.deep.equal([0, 1]);
      const md = await c.request<MetadataResponse>(ApiKey.Metadata, 12, ALL_TOPICS);
      expect(md.brokers.map((b) => [b.nodeId, b.port])).to.deep.equal([[0, portOf(brokers[0], 'EXTRA')]]);
      const partitions = md.topics.find((t) => t.name === 'over-tls')!.partitions;
      expect(partitions.map((p) => [p.partitionIndex, p.leaderId, p.errorCode]).sort()).to.deep.equal(
        leaders.map(([index, leader]) => (leader === 0 ? [index, 0, ErrorCode.NONE] : [index, -1, ErrorCode.LISTENER_NOT_FOUND])));
      const v5 = await c.request<MetadataResponse>(ApiKey.Metadata, 5, { topics: [{ name: 'over-tls' }], allowAutoTopicCreation: false });
      expect(v5.topics[0].partitions.map((p) => [p.partitionIndex, p.errorCode]).sort()).to.deep.equal(
        leaders.map(([index, leader]) => [index, leader === 0 ? ErrorCode.NONE : ErrorCode.LEADER_NOT_AVAILABLE]));
    } finally {
      c.close();
      plain.close();
    }
  });
});
