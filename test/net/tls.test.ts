// Listeners and TLS on a single broker: a PLAINTEXT and an SSL listener at once, each advertising its
// own endpoints; kafkajs over SSL; mutual TLS principals through ssl.principal.mapping.rules;
// certificates that must be refused; a stalled handshake closed without harm to others; the start-up
// errors of a bad TLS configuration.
import { expect } from 'chai';
import * as net from 'node:net';
import { execFileSync } from 'node:child_process';
import { Kafka, logLevel } from 'kafkajs';
import { ApiKey } from '../../src/protocol/generated';
import type { MetadataResponse } from '../../src/protocol/generated/MetadataResponse';
import type { DescribeClusterResponse } from '../../src/protocol/generated/DescribeClusterResponse';
import type { FindCoordinatorResponse } from '../../src/protocol/generated/FindCoordinatorResponse';
import { startBroker } from '../../src/broker';
import { BrokerConfig } from '../../src/config/broker-config';
import { serverTls, openSslCipherName } from '../../src/security/tls';
import { makeCertificates, type Certificates, type KeyPair } from '../helpers/certs';
import { withBroker } from '../helpers/broker';
import { RawClient } from '../helpers/raw-client';

const API_VERSIONS = { clientSoftwareName: 'tls-test', clientSoftwareVersion: '1.0' };

/** Whether a new connection to `port` gets ApiVersions answered (it is closed after). */
async function served(port: number): Promise<boolean> {
  const c = await RawClient.connect(port);
  try {
    await c.request(ApiKey.ApiVersions, 3, API_VERSIONS);
    return true;
  } catch {
    return false;
  } finally {
    c.close();
  }
}

describe('listeners and TLS', function () {
  this.timeout(30_000);
  let certs: Certificates;
  let alice: KeyPair;
  before(() => {
    certs = makeCertificates();
    alice = certs.client('/O=acme/OU=eng/CN=alice');
  });
  after(() => certs.remove());

  const trust = () => ({ ca: certs.ca.cert, servername: 'localhost' });

  describe('a broker with PLAINTEXT and SSL listeners (ssl.client.auth=requested)', () => {
    const broker = withBroker(() => ({
      config: {
        listeners: 'PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0',
        ...certs.brokerSsl,
        'ssl.client.auth': 'requested',
        // The listener's own value wins over the broker-wide one.
        'ssl.principal.mapping.rules': 'RULE:^CN=(.*)$/nobody/',
        'listener.name.ssl.ssl.principal.mapping.rules': 'RULE:^CN=([^,]*),OU=eng,.*$/$1@eng/L,DEFAULT',
      },
    }));
    const portOf = (name: string) => broker.current().listeners.get(name)!.port;

    it('opens both listeners, on their own ports', () => {
      expect([...broker.current().listeners.keys()]).to.deep.equal(['PLAINTEXT', 'SSL']);
      expect(portOf('PLAINTEXT')).to.not.equal(portOf('SSL'));
      expect(broker.current().port).to.equal(portOf('PLAINTEXT'));
    });

    it('Metadata, DescribeCluster and FindCoordinator advertise the endpoint of the listener asked through', async () => {
      for (const [name, connect] of [
        ['PLAINTEXT', () => RawClient.connect(portOf('PLAINTEXT'))],
        ['SSL', () => RawClient.connectTls(portOf('SSL'), trust())],
      ] as const) {
        const c = await connect();
        try {
          const md = await c.request<MetadataResponse>(ApiKey.Metadata, 12, { topics: null, allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false });
          expect(md.brokers.map((b) => `${b.host}:${b.port}`), name).to.deep.equal([`127.0.0.1:${portOf(name)}`]);
          const dc = await c.request<DescribeClusterResponse>(ApiKey.DescribeCluster, 1, { includeClusterAuthorizedOperations: false, endpointType: 1 });
          expect(dc.brokers.map((b) => b.port), name).to.deep.equal([portOf(name)]);
          // COORDINATOR_NOT_AVAILABLE until __consumer_offsets is loaded.
          let fc = await c.request<FindCoordinatorResponse>(ApiKey.FindCoordinator, 3, { key: 'g', keyType: 0 });
          for (let tries = 0; fc.errorCode !== 0 && tries < 50; tries++) {
            await new Promise((resolve) => setTimeout(resolve, 100));
            fc = await c.request<FindCoordinatorResponse>(ApiKey.FindCoordinator, 3, { key: 'g', keyType: 0 });
          }
          expect([fc.errorCode, fc.port], name).to.deep.equal([0, portOf(name)]);
        } finally {
          c.close();
        }
      }
    });

    it('kafkajs produces and consumes over SSL', async () => {
      const kafka = new Kafka({ brokers: [`localhost:${portOf('SSL')}`], clientId: 'tls-test', logLevel: logLevel.NOTHING, ssl: { ca: [certs.ca.cert] } });
      const admin = kafka.admin();
      const producer = kafka.producer();
      const consumer = kafka.consumer({ groupId: 'tls-group' });
      try {
        await admin.connect();
        await admin.createTopics({ topics: [{ topic: 'secure', numPartitions: 1 }] });
        await producer.connect();
        await producer.send({ topic: 'secure', messages: [{ key: 'k', value: 'over tls' }] });
        await consumer.connect();
        await consumer.subscribe({ topic: 'secure', fromBeginning: true });
        const received = new Promise<string>((resolve) => {
          void consumer.run({ eachMessage: async ({ message }) => resolve(message.value!.toString()) });
        });
        expect(await received).to.equal('over tls');
      } finally {
        await consumer.disconnect();
        await producer.disconnect();
        await admin.disconnect();
      }
    });

    it('a client certificate gives the mapped principal; none gives ANONYMOUS', async () => {
      const ssl = broker.current().listeners.get('SSL')!.listener;
      const withCert = await RawClient.connectTls(portOf('SSL'), { ...trust(), cert: alice.cert, key: alice.key });
      const without = await RawClient.connectTls(portOf('SSL'), trust());
      try {
        await withCert.request(ApiKey.ApiVersions, 3, API_VERSIONS);
        await without.request(ApiKey.ApiVersions, 3, API_VERSIONS);
        const principals = ssl.sessions().map((s) => `${s.principal.principalType}:${s.principal.name}:${s.securityProtocol}`);
        expect(principals).to.have.members(['User:alice@eng:SSL', 'User:ANONYMOUS:SSL']);
      } finally {
        withCert.close();
        without.close();
      }
    });

    it('the DEFAULT rule gives the subject in RFC 2253 form, most specific first, as Java prints it', async () => {
      const bob = certs.client('/C=NO/O=Fjord, Inc/OU=ops/CN=bob');
      const c = await RawClient.connectTls(portOf('SSL'), { ...trust(), cert: bob.cert, key: bob.key });
      try {
        await c.request(ApiKey.ApiVersions, 3, API_VERSIONS);
        const names = broker.current().listeners.get('SSL')!.listener.sessions().map((s) => s.principal.name);
        expect(names).to.include('CN=bob,OU=ops,O=Fjord\\, Inc,C=NO');
      } finally {
        c.close();
      }
    });

    it('refuses a client certificate from an authority it does not trust', async () => {
      const mallory = certs.client('/CN=mallory', { signer: certs.otherCa() });
      const outcome = await RawClient.connectTls(portOf('SSL'), { ...trust(), cert: mallory.cert, key: mallory.key })
        .then((c) => c.request(ApiKey.ApiVersions, 3, API_VERSIONS).then(() => 'served', () => 'closed'), () => 'refused');
      expect(outcome).to.be.oneOf(['closed', 'refused']);
    });

    it('a plaintext client on the SSL listener gets nothing and is closed', async () => {
      const c = await RawClient.connect(portOf('SSL'));
      const answered = await c.request(ApiKey.ApiVersions, 3, API_VERSIONS).then(() => true, () => false);
      expect(answered).to.equal(false);
      await c.closed;
    });
  });

  describe('an SSL-only broker with ssl.client.auth=required and inline PEM', () => {
    const broker = withBroker(() => ({
      config: {
        listeners: 'SECURE://127.0.0.1:0', 'listener.security.protocol.map': 'SECURE:SSL',
        'listener.name.secure.ssl.keystore.type': 'PEM',
        'listener.name.secure.ssl.keystore.certificate.chain': certs.server.cert,
        'listener.name.secure.ssl.keystore.key': certs.server.key,
        'ssl.truststore.type': 'PEM', 'ssl.truststore.certificates': certs.ca.cert,
        'ssl.client.auth': 'required',
        'ssl.enabled.protocols': 'TLSv1.3',
        // The TLS handshake gets connections.max.idle.ms when that is below 10 s.
        'connections.max.idle.ms': '1500',
      },
    }));

    it('serves a client with a certificate and refuses one without', async () => {
      const good = await RawClient.connectTls(broker.current().port, { ...trust(), cert: alice.cert, key: alice.key });
      try {
        await good.request(ApiKey.ApiVersions, 3, API_VERSIONS);
        expect(broker.current().listener.sessions().map((s) => s.principal.name)).to.deep.equal(['CN=alice,OU=eng,O=acme']);
      } finally {
        good.close();
      }
      const outcome = await RawClient.connectTls(broker.current().port, trust())
        .then((c) => c.request(ApiKey.ApiVersions, 3, API_VERSIONS).then(() => 'served', () => 'closed'), () => 'refused');
      expect(outcome).to.be.oneOf(['closed', 'refused']);
    });

    it('refuses a certificate from an authority it does not trust', async () => {
      const mallory = certs.client('/CN=alice/OU=eng/O=acme', { signer: certs.otherCa() });
      const outcome = await RawClient.connectTls(broker.current().port, { ...trust(), cert: mallory.cert, key: mallory.key })
        .then((c) => c.request(ApiKey.ApiVersions, 3, API_VERSIONS).then(() => 'served', () => 'closed'), () => 'refused');
      expect(outcome).to.be.oneOf(['closed', 'refused']);
    });

    it('refuses TLS 1.2 when only TLSv1.3 is enabled', async () => {
      const outcome = await RawClient.connectTls(broker.current().port, { ...trust(), cert: alice.cert, key: alice.key, maxVersion: 'TLSv1.2' })
        .then((c) => { c.close(); return 'connected'; }, () => 'refused');
      expect(outcome).to.equal('refused');
    });

    it('closes a connection that stalls its handshake, while others are served', async () => {
      const stalled = net.connect({ port: broker.current().port, host: '127.0.0.1' });
      stalled.on('error', () => undefined);
      const closedAt = new Promise<number>((resolve) => stalled.on('close', () => resolve(Date.now())));
      const started = Date.now();
      const other = await RawClient.connectTls(broker.current().port, { ...trust(), cert: alice.cert, key: alice.key });
      await other.request(ApiKey.ApiVersions, 3, API_VERSIONS);
      other.close();
      const elapsed = (await closedAt) - started;
      expect(elapsed).to.be.within(1000, 5000);
    });
  });

  describe('the connection limits are the broker\'s, across its listeners', () => {
    const broker = withBroker({
      config: { listeners: 'PLAINTEXT://127.0.0.1:0,OTHER://127.0.0.1:0', 'listener.security.protocol.map': 'PLAINTEXT:PLAINTEXT,OTHER:PLAINTEXT', 'max.connections.per.ip': '1' },
    });

    it('max.connections.per.ip counts the connections on every listener', async () => {
      const first = await RawClient.connect(broker.current().listeners.get('PLAINTEXT')!.port);
      try {
        await first.request(ApiKey.ApiVersions, 3, API_VERSIONS);
        const second = await RawClient.connect(broker.current().listeners.get('OTHER')!.port);
        await second.closed;
      } finally {
        first.close();
      }
      // Once the broker has seen the first one go, its address may connect again.
      let again = false;
      for (let tries = 0; !again && tries < 40; tries++) again = await served(broker.current().listeners.get('OTHER')!.port);
      expect(again).to.equal(true);
    });
  });

  describe('TLS configuration errors, at start-up', () => {
    const config = (props: Record<string, string>) => new BrokerConfig({ listeners: 'SSL://127.0.0.1:0', 'log.dirs': '/tmp/unused', ...props });

    it('an SSL listener without a key store', async () => {
      const err = await startBroker({ logLevel: 'silent', config: { listeners: 'SSL://127.0.0.1:0' } }).then(() => null, (e: Error) => e);
      expect(err?.message).to.match(/Listener SSL uses TLS but has no key store/);
    });

    it('JKS key and trust stores, with PEM and PKCS12 named as what is read', () => {
      expect(() => serverTls(config({ 'ssl.keystore.location': certs.server.keystore }), 'SSL'))
        .to.throw(/Invalid value JKS for configuration ssl.keystore.type: Fjord reads PEM or PKCS12 stores only/);
      expect(() => serverTls(config({ 'ssl.keystore.type': 'PEM', 'ssl.keystore.location': certs.server.keystore,
        'ssl.truststore.location': certs.ca.certPath }), 'SSL')).to.throw(/Invalid value JKS for configuration ssl.truststore.type/);
    });

    it('an encrypted key with ssl.key.password, and a wrong password', () => {
      const encrypted = certs.client('/CN=localhost', { keyPassword: 'secret' });
      const props = { 'ssl.keystore.type': 'PEM', 'ssl.keystore.location': encrypted.keystore };
      expect(serverTls(config({ ...props, 'ssl.key.password': 'secret' }), 'SSL').clientAuth).to.equal('none');
      expect(() => serverTls(config({ ...props, 'ssl.key.password': 'wrong' }), 'SSL')).to.throw(/Invalid TLS configuration/);
    });

    it('a PKCS12 key store through its password', () => {
      const p12 = `${certs.dir}/server.p12`;
      execFileSync('openssl', ['pkcs12', '-export', '-in', certs.server.certPath, '-inkey', certs.server.keyPath,
        '-out', p12, '-passout', 'pass:storepass']);
      expect(() => serverTls(config({ 'ssl.keystore.type': 'PKCS12', 'ssl.keystore.location': p12, 'ssl.keystore.password': 'storepass' }), 'SSL'))
        .not.to.throw();
    });

    it('unknown protocols and cipher suites; Java cipher names are translated', () => {
      expect(() => serverTls(config({ 'ssl.keystore.type': 'PEM', 'ssl.keystore.location': certs.server.keystore, 'ssl.enabled.protocols': 'SSLv3' }), 'SSL'))
        .to.throw(/Unsupported TLS protocol SSLv3/);
      expect(() => serverTls(config({ 'ssl.keystore.type': 'PEM', 'ssl.keystore.location': certs.server.keystore, 'ssl.cipher.suites': 'NOPE', 'ssl.enabled.protocols': 'TLSv1.2' }), 'SSL'))
        .to.throw(/Invalid TLS configuration/);
      expect(openSslCipherName('TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256')).to.equal('ECDHE-ECDSA-AES128-GCM-SHA256');
      expect(openSslCipherName('TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA')).to.equal('ECDHE-RSA-AES256-SHA');
      expect(openSslCipherName('TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256')).to.equal('ECDHE-RSA-CHACHA20-POLY1305');
      expect(openSslCipherName('TLS_AES_128_GCM_SHA256')).to.equal('TLS_AES_128_GCM_SHA256');
    });
  });
});
