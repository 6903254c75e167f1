// Kafka's own `kafka-configs` (org.apache.kafka.tools.ConfigCommand, the Maven kafka-tools 4.4.0
// artifact) against a Fjord broker, on SCRAM users (--entity-type users): --add-config and
// --delete-config of SCRAM-SHA-256 / SCRAM-SHA-512 and --describe, compared with what Kafka 4.4.0
// printed for the same commands (captured from a Kafka 4.4.0 node started with compat/lib/apache-kafka.sh);
// the credentials it creates authenticate through the broker's credential lookup. Skipped when the
// tools are not fetched (compat/lib/apache-kafka.sh fetch-tools).
import { expect } from 'chai';
import { ApiKey } from '../../src/protocol/generated';
import type { ApiVersionsResponse } from '../../src/protocol/generated/ApiVersionsResponse';
import { withBroker } from '../helpers/broker';
import { kafkaConfigs, skipUnlessKafkaToolsFetched } from '../helpers/kafka-tool';
import { RawClient } from '../helpers/raw-client';
import { authenticates } from '../helpers/scram';

const user = (name: string) => ['--entity-type', 'users', '--entity-name', name];

describe('kafka-configs (Kafka 4.4\'s ConfigCommand) on SCRAM users against Fjord', function () {
  this.timeout(300_000);
  const broker = withBroker({ nodeId: 1 });
  skipUnlessKafkaToolsFetched();

  it('adds and deletes credentials as Kafka 4.4 does, with its answers and refusals', async () => {
    const { bootstrap, broker: { controller } } = broker.current();
    expect(await kafkaConfigs(bootstrap, '--alter', '--add-config', 'SCRAM-SHA-256=[iterations=8192,password=alice-secret]', ...user('alice')))
      .to.include({ status: 0, out: 'Completed updating config for user alice.' });
    expect(await kafkaConfigs(bootstrap, '--alter', '--add-config', 'SCRAM-SHA-512=[password=alice-512]', ...user('alice')))
      .to.include({ status: 0, out: 'Completed updating config for user alice.' });
    expect(authenticates(controller, 'SCRAM-SHA-256', 'alice', 'alice-secret')).to.equal(true);
    expect(authenticates(controller, 'SCRAM-SHA-512', 'alice', 'alice-512')).to.equal(true);
    expect(controller.scramCredentials('alice')['SCRAM-SHA-256']?.iterations).to.equal(8192);
    expect(controller.scramCredentials('alice')['SCRAM-SHA-512']?.iterations).to.equal(4096);

    // Kafka 4.4 refuses both mechanisms in one command: the tool sends the user twice in one request.
    const both = await kafkaConfigs(bootstrap, '--alter', '--add-config', 'SCRAM-SHA-256=[iterations=8192,password=x],SCRAM-SHA-512=[password=x]', ...user('zoe'));
    expect(both.status).to.equal(1);
    expect(both.err).to.include('org.apache.kafka.common.errors.DuplicateResourceException: A user credential cannot be altered twice in the same request');
    expect(controller.scramUsers()).to.deep.equal(['alice']);

    expect(await kafkaConfigs(bootstrap, '--alter', '--delete-config', 'SCRAM-SHA-256', ...user('alice')))
      .to.include({ status: 0, out: 'Completed updating config for user alice.' });
    expect(authenticates(controller, 'SCRAM-SHA-256', 'alice', 'alice-secret')).to.equal(false);
    const again = await kafkaConfigs(bootstrap, '--alter', '--delete-config', 'SCRAM-SHA-256', ...user('alice'));
    expect(again.status).to.equal(1);
    expect(again.err).to.include('org.apache.kafka.common.errors.ResourceNotFoundException: Attempt to delete a user credential that does not exist');
  });

  it('describes the users as Kafka 4.4 prints them', async function () {
    const { bootstrap, port } = broker.current();
    // The tool's --describe asks DescribeClientQuotas first (the client quotas part of issue 16).
    const c = await RawClient.connect(port);
    const versions = await c.request<ApiVersionsResponse>(ApiKey.ApiVersions, 3, { clientSoftwareName: 'test', clientSoftwareVersion: '1' });
    c.close();
    if (!versions.apiKeys.some((k) => k.apiKey === ApiKey.DescribeClientQuotas)) this.skip();

    expect(await kafkaConfigs(bootstrap, '--alter', '--add-config', 'SCRAM-SHA-256=[iterations=8192,password=bob-secret]', ...user('bob')))
      .to.include({ status: 0, out: 'Completed updating config for user bob.' });
    // Kafka 4.4 printed these lines for the same users.
    expect((await kafkaConfigs(bootstrap, '--describe', '--entity-type', 'users')).out.split('\n').sort()).to.deep.equal([
      'SCRAM credential configs for user-principal \'alice\' are SCRAM-SHA-512=iterations=4096',
      'SCRAM credential configs for user-principal \'bob\' are SCRAM-SHA-256=iterations=8192',
    ]);
    expect(await kafkaConfigs(bootstrap, '--describe', ...user('bob')))
      .to.include({ status: 0, out: 'SCRAM credential configs for user-principal \'bob\' are SCRAM-SHA-256=iterations=8192' });
    expect(await kafkaConfigs(bootstrap, '--describe', ...user('nobody'))).to.include({ status: 0, out: '' });
  });
});
