// Kafka's own `kafka-share-groups` (org.apache.kafka.tools.consumer.group.ShareGroupCommand, the Maven
// kafka-tools 4.4.0 artifact) against a Fjord broker: --list, --describe (offsets, --verbose,
// --state, --members), --reset-offsets (--to-earliest, --to-latest, --to-datetime; --dry-run and
// --execute; a topic, one partition, --all-topics), --delete-offsets and --delete, each printing what
// Kafka 4.4 printed for the same commands (kafka-share-groups-tool.kafka-4.4.txt, captured from a
// Kafka 4.4.0 node whose topic `orders` held 10 records in partition 0 and 5 in partition 1). The
// coordinator column names the broker (its address and id): it is compared without them. Then
// kafka-features moves share.version as on Kafka 4.4, and at 0 the admin APIs answer
// UNSUPPORTED_VERSION as Kafka's do (the lines Kafka printed, inline). Skipped
// when the tools are not fetched (compat/lib/apache-kafka.sh fetch-tools).
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { withBroker } from '../helpers/broker';
import { runKafkaTool, skipUnlessKafkaToolsFetched } from '../helpers/kafka-tool';

const FIXTURE = path.resolve(__dirname, '..', '..', '..', 'test', 'share', 'kafka-share-groups-tool.kafka-4.4.txt');
const kafkaShareGroups = (bootstrap: string, ...args: string[]) => runKafkaTool('org.apache.kafka.tools.consumer.group.ShareGroupCommand', bootstrap, ...args);
const kafkaFeatures = (bootstrap: string, ...args: string[]) => runKafkaTool('org.apache.kafka.tools.FeatureCommand', bootstrap, ...args);

/** The fixture's commands, in order, each with what Kafka printed. */
function kafkaRuns(): { args: string[]; out: string }[] {
  const runs: { args: string[]; out: string[] }[] = [];
  for (const line of fs.readFileSync(FIXTURE, 'utf8').split('\n')) {
    if (line.startsWith('### ')) runs.push({ args: line.slice(4).split(' '), out: [] });
    else if (line !== '') runs[runs.length - 1].out.push(line);
  }
  return runs.map((r) => ({ args: r.args, out: r.out.join('\n') }));
}

/** The coordinator column ("host:port  (id)", padded) without the broker's address and id. */
const withoutCoordinator = (out: string) => out.replace(/\S+:\d+ {2}\(\d+\) +/g, '<coordinator> ');

describe('kafka-share-groups (Kafka 4.4\'s ShareGroupCommand) against Fjord', function () {
  this.timeout(600_000);
  const broker = withBroker();
  skipUnlessKafkaToolsFetched();

  before(async () => {
    const kafka = new Kafka({ brokers: [broker.current().bootstrap], clientId: 'share-groups-tool-test', logLevel: logLevel.NOTHING });
    const admin = kafka.admin();
    const producer = kafka.producer();
    await Promise.all([admin.connect(), producer.connect()]);
    await admin.createTopics({ topics: [{ topic: 'orders', numPartitions: 2 }] });
    const records = (partition: number, count: number) => Array.from({ length: count }, (_, i) => ({ partition, value: `${partition}-${i}` }));
    await producer.send({ topic: 'orders', acks: -1, messages: [...records(0, 10), ...records(1, 5)] });
    await Promise.all([admin.disconnect(), producer.disconnect()]);
  });

  it('prints what Kafka 4.4 prints for the same commands', async () => {
    const bootstrap = broker.current().bootstrap;
    for (const run of kafkaRuns()) {
      const fjord = await kafkaShareGroups(bootstrap, ...run.args);
      expect(withoutCoordinator(fjord.out), run.args.join(' ')).to.equal(withoutCoordinator(run.out));
    }
  });

  it('follows share.version as Kafka 4.4 does: kafka-features moves it; at 0 the admin APIs answer UNSUPPORTED_VERSION', async () => {
    const bootstrap = broker.current().bootstrap;
    // Each line as Kafka 4.4 printed it for the same command.
    expect(await kafkaFeatures(bootstrap, 'downgrade', '--feature', 'share.version=1')).to.include({ status: 0, out: 'share.version was downgraded to 1.' });
    expect(await kafkaFeatures(bootstrap, 'upgrade', '--feature', 'share.version=2')).to.include({ status: 0, out: 'share.version was upgraded to 2.' });
    expect(await kafkaFeatures(bootstrap, 'downgrade', '--feature', 'share.version=0')).to.include({ status: 0, out: 'share.version was downgraded to 0.' });
    const deleted = await kafkaShareGroups(bootstrap, '--delete-offsets', '--group', 'off', '--topic', 'orders');
    expect(deleted).to.include({ status: 0, out: [
      'Error: Encounter some unknown error: org.apache.kafka.common.errors.UnsupportedVersionException: The version of API is not supported.',
      'TOPIC           STATUS',
      'orders          Error: The version of API is not supported.',
    ].join('\n') });
    const reset = await kafkaShareGroups(bootstrap, '--reset-offsets', '--group', 'off', '--topic', 'orders', '--to-earliest', '--execute');
    expect(reset.status).to.equal(1);
    expect(reset.out + reset.err).to.include('The version of API is not supported.');
    expect(await kafkaFeatures(bootstrap, 'upgrade', '--feature', 'share.version=1', '--dry-run')).to.include({ status: 0, out: 'share.version can be upgraded to 1.' });
    expect(await kafkaFeatures(bootstrap, 'upgrade', '--feature', 'share.version=2')).to.include({ status: 0, out: 'share.version was upgraded to 2.' });
    expect((await kafkaShareGroups(bootstrap, '--list')).out).to.equal('');
  });
});
