import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { expect } from 'chai';
import { withBroker } from '../helpers/broker';
import { makeCertificates, type Certificates } from '../helpers/certs';
import { runFjord } from '../helpers/fjord-cli';

/** `--command-config`: Kafka client properties for the brokers that need TLS or SASL. */
describe('fjord --command-config', function () {
  // Each run of bin/fjord loads @platformatic/kafka (about a second of CPU, more on a busy machine).
  this.timeout(180000);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fjord-command-config-'));
  const properties = (name: string, lines: string[]) => {
    const file = path.join(dir, name);
    fs.writeFileSync(file, `${lines.join('\n')}\n`);
    return file;
  };
  const certs: Certificates = makeCertificates();
  after(() => {
    certs.remove();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const broker = withBroker({
    config: {
      listeners: 'SASL_PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0',
      'sasl.enabled.mechanisms': 'PLAIN', 'connection.failed.authentication.delay.ms': '0',
      'listener.name.sasl_plaintext.plain.sasl.jaas.config': 'org.apache.kafka.common.security.plain.PlainLoginModule required ' +
        'username="admin" password="admin-secret" user_alice="alice-secret";',
      ...certs.brokerSsl,
    },
  });
  const address = (listener: string) => `127.0.0.1:${broker.current().listeners.get(listener)!.port}`;
  const jaas = (password: string) => `sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" password="${password}";`;

  it('logs in with SASL PLAIN from sasl.jaas.config, and a wrong password is one line and exit code 1', async () => {
    const good = properties('sasl.properties', ['security.protocol=SASL_PLAINTEXT', 'sasl.mechanism=PLAIN', jaas('alice-secret')]);
    const created = await runFjord('topics', 'create', 'through-sasl', '--bootstrap-server', address('SASL_PLAINTEXT'), '--command-config', good);
    expect(created.stderr).to.equal('');
    expect(created.status).to.equal(0);
    const listed = await runFjord('topics', 'list', '--json', '--bootstrap-server', address('SASL_PLAINTEXT'), '--command-config', good);
    expect(JSON.parse(listed.stdout).map((t: { name: string }) => t.name)).to.include('through-sasl');

    const wrong = properties('wrong.properties', ['security.protocol=SASL_PLAINTEXT', 'sasl.mechanism=PLAIN', jaas('nope')]);
    const refused = await runFjord('topics', 'list', '--bootstrap-server', address('SASL_PLAINTEXT'), '--command-config', wrong);
    expect(refused.status).to.equal(1);
    expect(refused.stderr.trim().split('\n')).to.have.length(1);
    expect(refused.stderr).to.match(/^fjord: /);
  });

  it('connects over TLS with a PEM trust store, and refuses a JKS one with the property to change', async () => {
    const pem = properties('ssl.properties', ['security.protocol=SSL', 'ssl.truststore.type=PEM', `ssl.truststore.location=${certs.ca.certPath}`]);
    const described = await runFjord('cluster', 'describe', '--json', '--bootstrap-server', address('SSL'), '--command-config', pem);
    expect(described.stderr).to.equal('');
    expect(JSON.parse(described.stdout).brokers).to.have.length(1);

    const jks = properties('jks.properties', ['security.protocol=SSL', 'ssl.truststore.location=/nonexistent/truststore.jks']);
    const refused = await runFjord('cluster', 'describe', '--bootstrap-server', address('SSL'), '--command-config', jks);
    expect(refused.status).to.equal(1);
    expect(refused.stderr.trim()).to.equal(`fjord: --command-config ${jks}: ssl.truststore.type: 'JKS' stores cannot be read here: use PEM (ssl.truststore.type=PEM)`);
  });
});
