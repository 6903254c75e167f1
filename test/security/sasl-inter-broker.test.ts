// The client side of SASL between brokers: BrokerClient authenticates (and re-authenticates, KIP-368)
// with sasl.mechanism.inter.broker.protocol and the listener's JAAS username/password, so replication
// works on a cluster whose only listener is SASL_PLAINTEXT.
import { expect } from 'chai';
import { Kafka, logLevel } from 'kafkajs';
import { startBroker, type RunningBroker } from '../../src/broker';
import { startCluster, type RunningCluster } from '../../src/local-cluster';
import { BrokerClient, SaslClientAuthenticationError } from '../../src/net/broker-client';
import { PlainSaslClient } from '../../src/security/plain';
import { ApiKey } from '../../src/protocol/generated';

const SASL_CONFIG = {
  listeners: 'SASL_PLAINTEXT://127.0.0.1:0',
  'sasl.enabled.mechanisms': 'PLAIN',
  'sasl.mechanism.inter.broker.protocol': 'PLAIN',
  'listener.name.sasl_plaintext.plain.sasl.jaas.config': 'org.apache.kafka.common.security.plain.PlainLoginModule required ' +
    'username="broker" password="broker-secret" user_broker="broker-secret" user_alice="alice-secret";',
  'listener.name.sasl_plaintext.plain.connections.max.reauth.ms': '1500',
  'connection.failed.authentication.delay.ms': '0',
};

describe('SASL between brokers', function () {
  this.timeout(60_000);

  describe('BrokerClient against a SASL listener', () => {
    let broker: RunningBroker;
    before(async () => {
      broker = await startBroker({ logLevel: 'silent', config: SASL_CONFIG });
    });
    after(async () => {
      await broker.close();
    });
    const connect = (password: string) => BrokerClient.connect({
      host: '127.0.0.1', port: broker.port, clientId: 'test', connectTimeoutMs: 5000, requestTimeoutMs: 5000,
      sasl: () => new PlainSaslClient('broker', password),
    });

    it('authenticates, and re-authenticates before its 1.5 s session ends', async () => {
      const client = await connect('broker-secret');
      try {
        for (let i = 0; i < 4; i++) {
          const md = await client.request(ApiKey.Metadata, { topics: [], allowAutoTopicCreation: false, includeClusterAuthorizedOperations: false, includeTopicAuthorizedOperations: false });
          expect(md.brokers).to.have.length(1);
          await new Promise((r) => setTimeout(r, 800));
        }
        expect(client.isClosed).to.equal(false);
      } finally {
        client.close();
      }
    });

    it('a wrong password fails the connect with the peer\'s message', async () => {
      let error: Error | null = null;
      try {
        (await connect('wrong')).close();
      } catch (e) {
        error = e as Error;
      }
      expect(error).to.be.instanceOf(SaslClientAuthenticationError);
      expect(error?.message).to.contain('Authentication failed: Invalid username or password');
    });
  });

  describe('a two-broker cluster on SASL_PLAINTEXT only', () => {
    let cluster: RunningCluster;
    before(async () => {
      cluster = await startCluster({ brokers: 2, logLevel: 'silent', config: SASL_CONFIG });
    });
    after(async () => {
      await cluster?.close();
    });

    it('replicates: acks=all produces succeed for several session lifetimes', async () => {
      const kafka = new Kafka({
        clientId: 'sasl-cluster', brokers: cluster.bootstrap.split(','), logLevel: logLevel.NOTHING,
        sasl: { mechanism: 'plain', username: 'alice', password: 'alice-secret' },
      });
      const admin = kafka.admin();
      await admin.connect();
      await admin.createTopics({ topics: [{ topic: 'replicated', numPartitions: 1, replicationFactor: 2 }], waitForLeaders: true });
      await admin.disconnect();
      const producer = kafka.producer();
      await producer.connect();
      const until = Date.now() + 4000;
      let sent = 0;
      while (Date.now() < until) {
        await producer.send({ topic: 'replicated', acks: -1, timeout: 3000, messages: [{ value: String(sent++) }] });
        await new Promise((r) => setTimeout(r, 200));
      }
      await producer.disconnect();
      expect(sent).to.be.greaterThan(10);
    });
  });
});
