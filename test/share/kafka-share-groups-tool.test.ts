// Kafka's own `kafka-share-groups` (org.apache.kafka.tools.consumer.group.ShareGroupCommand, the Maven
// kafka-tools 4.4.0 artifact) against a Fjord broker: --list, --describe (offsets, --verbose,
// --state, --members), --reset-offsets (--to-earliest, --to-latest, --to-datetime; --dry-run and
// --execute; a topic, one partition, --all-topics), --delete-offsets and --delete, each printing what
// Kafka 4.4 printed for the same commands (kafka-share-groups-tool.kafka-4.4.txt, captured from a
// Kafka 4.4.0 node whose topic `orders` held 10 records in partition 0 and 5 in partition 1). The
// coordinator column names the broker (its address and id): it is compared without them. Skipped
// when the tools are not fetched (compat/lib/apache-kafka.sh fetch-tools).
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { withBroker } from '../helpers/broker';
import { runKafkaTool, skipUnlessKafkaToolsFetched } from '../helpers/kafka-tool';

const FIXTURE = path.resolve(__dirname, '..', '..', '..', 'test', 'share', 'kafka-share-groups-tool.kafka-4.4.txt');
const kafkaShareGroups = (bootstrap: string, ...args: string[]) => runKafkaTool('org.apache.kafka.tools.consumer.group.ShareGroupCommand', bootstrap, ...args);

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
});
