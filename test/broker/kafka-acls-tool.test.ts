// Kafka's own `kafka-acls` (org.apache.kafka.tools.AclCommand, the Maven kafka-tools 4.4.0 artifact)
// against a Fjord broker with the StandardAuthorizer: --add (with --allow-principal, --deny-principal
// and --deny-host, several --operation, --topic, --group, --resource-pattern-type prefixed, the
// --producer and --consumer conveniences), --list (all, by topic, by principal, a MATCH filter) and
// --remove, each printing what Kafka 4.4 printed for the same commands (kafka-acls-tool.kafka-4.4.txt,
// captured from a Kafka 4.4.0 node with the StandardAuthorizer). Kafka prints the ACLs of a resource,
// and the resources, in hash order: both outputs are compared with each block's lines sorted, and the
// blocks sorted. Skipped when the tools are not fetched (compat/lib/apache-kafka.sh fetch-tools).
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { STANDARD_AUTHORIZER_CLASS } from '../../src/config/definitions';
import { withBroker } from '../helpers/broker';
import { runKafkaTool, skipUnlessKafkaToolsFetched } from '../helpers/kafka-tool';

const FIXTURE = path.resolve(__dirname, '..', '..', '..', 'test', 'broker', 'kafka-acls-tool.kafka-4.4.txt');

/** The fixture's commands, in order, each with what Kafka printed. */
function kafkaRuns(): { args: string[]; out: string }[] {
  const runs: { args: string[]; out: string[] }[] = [];
  for (const line of fs.readFileSync(FIXTURE, 'utf8').split('\n')) {
    if (line.startsWith('### ')) runs.push({ args: line.slice(4).split(' '), out: [] });
    else runs[runs.length - 1].out.push(line);
  }
  return runs.map((r) => ({ args: r.args, out: r.out.join('\n') }));
}

/** Blocks (a line at the margin and the indented lines under it), each sorted, then sorted themselves. */
function normalized(out: string): string[][] {
  const blocks: string[][] = [];
  for (const line of out.split('\n')) {
    if (line.trim() === '') continue;
    if (/^\s/.test(line) && blocks.length > 0) blocks[blocks.length - 1].push(line.trim());
    else blocks.push([line.trimEnd()]);
  }
  return blocks.map(([head, ...rest]) => [head, ...rest.sort()]).sort((a, b) => (a.join('\n') < b.join('\n') ? -1 : 1));
}

describe('kafka-acls (Kafka 4.4\'s AclCommand) against Fjord', function () {
  this.timeout(600_000);
  // The tool connects over PLAINTEXT as User:ANONYMOUS, the super user (as on the Kafka node captured).
  const broker = withBroker({ config: { 'authorizer.class.name': STANDARD_AUTHORIZER_CLASS, 'super.users': 'User:ANONYMOUS' } });
  skipUnlessKafkaToolsFetched();

  it('adds, lists and removes ACLs, printing what Kafka 4.4 prints', async () => {
    for (const run of kafkaRuns()) {
      const res = await runKafkaTool('org.apache.kafka.tools.AclCommand', broker.current().bootstrap, ...run.args);
      expect(res.status, `${run.args.join(' ')}: ${res.err}`).to.equal(0);
      expect(normalized(res.out), run.args.join(' ')).to.deep.equal(normalized(run.out));
    }
    // What the commands left, as the broker holds it.
    expect(broker.current().broker.controller.acls().map((a) => `${a.resourceName} ${a.principal} ${a.operation}`).sort()).to.deep.equal([
      'app User:bob 3', 'cg User:c 3', 'in User:c 3', 'in User:c 8', 'orders User:alice 3', 'orders User:mallory 2', 'out User:p 4', 'out User:p 5', 'out User:p 8',
    ]);
  });
});
