// The benchmark's Fjord target with an SSL listener (the TLS row of bench/run.ts): `bin/fjord start` with the
// listener settings the row gives both brokers, its bootstrap being the SSL listener. Kafka's side of the row
// needs a JVM and is exercised by the benchmark itself.
import { expect } from 'chai';
import { ApiKey } from '../../src/protocol/generated';
import type { MetadataResponse } from '../../src/protocol/generated/MetadataResponse';
import { fjordTarget, type RunningTarget } from '../../bench/targets';
import { makeCertificates, type Certificates } from '../helpers/certs';
import { RawClient } from '../helpers/raw-client';

describe('bench targets: Fjord with a TLS listener', function () {
  this.timeout(60_000);
  let certs: Certificates;
  let broker: RunningTarget;
  const target = fjordTarget({ snapshot: false });

  before(async () => {
    certs = makeCertificates();
    broker = await target.start('tls-test', { keystore: certs.server.keystore });
  });
  after(async () => {
    if (broker) expect((await broker.stop()).code).to.equal(0);
    certs?.remove();
  });
  const bootstrapPort = () => Number(broker.bootstrap.split(':')[1]);

  it('bootstraps over TLS (trusting the CA) and advertises the SSL endpoint', async () => {
    const c = await RawClient.connectTls(bootstrapPort(), { ca: certs.ca.cert });
    try {
      const md = await c.request<MetadataResponse>(ApiKey.Metadata, 12, { topics: null, allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false });
      expect(md.brokers.map((b) => `${b.host}:${b.port}`)).to.deep.equal([broker.bootstrap]);
    } finally {
      c.close();
    }
  });

  it('does not answer plaintext on the bootstrap port', async () => {
    const c = await RawClient.connect(bootstrapPort());
    try {
      const answered = await c.request(ApiKey.ApiVersions, 3, { clientSoftwareName: 'bench-test', clientSoftwareVersion: '1.0' }).then(() => true, () => false);
      expect(answered).to.equal(false);
    } finally {
      c.close();
    }
  });
});
