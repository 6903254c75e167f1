// SASL with SCRAM-SHA-256/512 over the cluster's credentials and SASL inside TLS (SASL_SSL): users
// created with AlterUserScramCredentials log in through kafkajs on a SASL_SSL listener, the
// connection's session carries their principal and SASL_SSL, a wrong password gets Kafka's generic
// SCRAM failure, and a broker's inter-broker client authenticates with SCRAM-SHA-512 as its JAAS user.
import { expect } from 'chai';
import { Kafka, logLevel, type SASLOptions } from 'kafkajs';
import { ApiKey } from '../../src/protocol/generated';
import type { AlterUserScramCredentialsResponse } from '../../src/protocol/generated/AlterUserScramCredentialsResponse';
import { startBroker, type RunningBroker } from '../../src/broker';
import { BrokerClient } from '../../src/net/broker-client';
import { interBrokerSaslClient } from '../../src/security/sasl-config';
import { RawClient } from '../helpers/raw-client';
import { makeCertificates, type Certificates } from '../helpers/certs';
import { upsertion } from '../helpers/scram';

describe('SASL: SCRAM over SASL_SSL, and SCRAM between brokers', function () {
  this.timeout(30_000);
  let certs: Certificates;
  let running: RunningBroker;
  const portOf = (name: string) => running.listeners.get(name)!.port;

  before(async () => {
    certs = makeCertificates();
    running = await startBroker({
      logLevel: 'silent',
      config: {
        listeners: 'PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0,SASL_SSL://127.0.0.1:0',
        'inter.broker.listener.name': 'SASL_PLAINTEXT',
        'sasl.enabled.mechanisms': 'SCRAM-SHA-256,SCRAM-SHA-512,PLAIN',
        'sasl.mechanism.inter.broker.protocol': 'SCRAM-SHA-512',
        'listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config':
          'org.apache.kafka.common.security.scram.ScramLoginModule required username="broker" password="broker-secret";',
        'plain.sasl.jaas.config': 'org.apache.kafka.common.security.plain.PlainLoginModule required user_carol="carol-secret";',
        ...certs.brokerSsl,
        'connection.failed.authentication.delay.ms': '0',
      },
    });
    const admin = await RawClient.connect(portOf('PLAINTEXT'));
    const r = await admin.request<AlterUserScramCredentialsResponse>(ApiKey.AlterUserScramCredentials, 0, {
      deletions: [],
      upsertions: [upsertion('alice', 'SCRAM-SHA-256', 'alice-secret'), upsertion('bob', 'SCRAM-SHA-512', 'bob-secret'),
        upsertion('broker', 'SCRAM-SHA-512', 'broker-secret')],
    });
    admin.close();
    expect(r.results.map((x) => x.errorCode)).to.deep.equal([0, 0, 0]);
  });
  after(async () => {
    await running?.close();
    certs?.remove();
  });

  const kafka = (sasl: SASLOptions) => new Kafka({
    clientId: 'scram-ssl', brokers: [`localhost:${portOf('SASL_SSL')}`], logLevel: logLevel.NOTHING, retry: { retries: 0 },
    ssl: { ca: [certs.ca.cert] }, sasl,
  });

  it('SCRAM-SHA-256 and SCRAM-SHA-512 users produce over SASL_SSL; the session is theirs', async () => {
    for (const sasl of [
      { mechanism: 'scram-sha-256', username: 'alice', password: 'alice-secret' },
      { mechanism: 'scram-sha-512', username: 'bob', password: 'bob-secret' },
      { mechanism: 'plain', username: 'carol', password: 'carol-secret' },
    ] as SASLOptions[]) {
      const producer = kafka(sasl).producer();
      await producer.connect();
      await producer.send({ topic: 'scram-ssl', messages: [{ value: sasl.mechanism }] });
      const sessions = running.listeners.get('SASL_SSL')!.listener.sessions();
      expect(sessions.map((s) => `${s.principal.principalType}:${s.principal.name}:${s.securityProtocol}`))
        .to.include(`User:${(sasl as { username: string }).username}:SASL_SSL`);
      await producer.disconnect();
    }
  });

  it('a wrong SCRAM password gets Kafka\'s generic SCRAM failure', async () => {
    const admin = kafka({ mechanism: 'scram-sha-256', username: 'alice', password: 'wrong' }).admin();
    let error: Error | null = null;
    try {
      await admin.connect();
    } catch (e) {
      error = e as Error;
    }
    await admin.disconnect();
    expect(error?.message).to.contain('Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-256');
  });

  it('the inter-broker client authenticates with SCRAM-SHA-512 as the JAAS username', async () => {
    const sasl = interBrokerSaslClient(running.broker.config);
    expect(sasl).to.not.equal(undefined);
    const client = await BrokerClient.connect({
      host: '127.0.0.1', port: portOf('SASL_PLAINTEXT'), clientId: 'inter-broker-test', connectTimeoutMs: 5000, requestTimeoutMs: 5000, sasl,
    });
    try {
      const md = await client.request(ApiKey.Metadata, { topics: [], allowAutoTopicCreation: false, includeClusterAuthorizedOperations: false, includeTopicAuthorizedOperations: false });
      expect(md.brokers).to.have.length(1);
      const sessions = running.listeners.get('SASL_PLAINTEXT')!.listener.sessions();
      expect(sessions.map((s) => s.principal.name)).to.include('broker');
    } finally {
      client.close();
    }
  });
});
