// Kafka's own `kafka-log-dirs` (org.apache.kafka.tools.LogDirsCommand) and `kafka-reassign-partitions`
// (org.apache.kafka.tools.reassign.ReassignPartitionsCommand), the Maven kafka-tools 4.4.0 artifact,
// against a Fjord broker with two log dirs: --describe lists both dirs and the partition in the dir
// Fjord placed it; a plan with `log_dirs` moves the replica to the other dir (AlterPartitionReassignments,
// then AlterReplicaLogDirs), --verify reports it complete as Kafka 4.4 does, and every record is still
// readable from the new dir; with --replica-alter-log-dirs-throttle, --verify reports the copy in progress,
// then complete, and clears the throttle. Skipped when the tools are not fetched (compat/lib/apache-kafka.sh fetch-tools).
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { startBroker, type RunningBroker } from '../../src/broker';
import { kafkaToolsFetched, runKafkaTool } from '../helpers/kafka-tool';
import { readValues } from '../helpers/read-values';

const logDirsTool = (bootstrap: string, ...args: string[]) => runKafkaTool('org.apache.kafka.tools.LogDirsCommand', bootstrap, ...args);
const reassignTool = (bootstrap: string, ...args: string[]) =>
  runKafkaTool('org.apache.kafka.tools.reassign.ReassignPartitionsCommand', bootstrap, ...args);

/** kafka-log-dirs --describe's output (as Kafka 4.4 prints it) as {broker, dirs: {logDir: ['partition size']}}. */
function describedDirs(out: string): Array<{ broker: number; dirs: Record<string, string[]> }> {
  const lines = out.split('\n');
  expect(lines.slice(0, 2)).to.deep.equal(['Querying brokers for log directories information', 'Received log directory information from brokers 1']);
  expect(lines).to.have.length(3);
  const parsed = JSON.parse(lines[2]) as {
    version: number;
    brokers: Array<{ broker: number; logDirs: Array<{ logDir: string; error: string | null; partitions: Array<{ partition: string; size: number; offsetLag: number; isFuture: boolean }> }> }>;
  };
  return parsed.brokers.map((b) => ({
    broker: b.broker,
    dirs: Object.fromEntries(b.logDirs.map((d) => {
      expect(d.error).to.equal(null);
      return [d.logDir, d.partitions.map((p) => `${p.partition} ${p.size} lag=${p.offsetLag}${p.isFuture ? ' future' : ''}`)];
    })),
  }));
}

describe('kafka-log-dirs and kafka-reassign-partitions (Kafka 4.4) on log dirs against Fjord', function () {
  this.timeout(300_000);
  let root: string;
  let logDirs: string[];
  let running: RunningBroker | undefined;

  before(async function () {
    if (!kafkaToolsFetched()) this.skip();
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'fjord-log-dirs-tools-'));
    logDirs = [path.join(root, 'd0'), path.join(root, 'd1')];
    running = await startBroker({ logLevel: 'silent', nodeId: 1, config: { 'log.dirs': logDirs.join(','), 'offsets.topic.num.partitions': '1' } });
  });
  after(async () => {
    await running?.close();
    if (root) fs.rmSync(root, { recursive: true, force: true });
  });

  it('describes both dirs, moves a replica to the other dir with a log_dirs plan, verifies it, and every record stays readable', async () => {
    const bootstrap = running!.bootstrap;
    const kafka = new Kafka({ brokers: [bootstrap], clientId: 'log-dirs-tools', logLevel: logLevel.NOTHING });
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: 'wandering', numPartitions: 1 }] });
    await admin.disconnect();
    const producer = kafka.producer();
    await producer.connect();
    const values = Array.from({ length: 100 }, (_, i) => `record-${i}`);
    await producer.send({ topic: 'wandering', acks: -1, messages: values.map((value) => ({ value })) });
    await producer.disconnect();

    const dirOf = () => running!.broker.replicas.logs.logDirOf(running!.broker.replicas.partition('wandering', 0)!.log);
    const from = dirOf();
    const to = logDirs.find((d) => d !== from)!;

    const described = await logDirsTool(bootstrap, '--describe', '--broker-list', '1', '--topic-list', 'wandering');
    expect(described.status, described.err).to.equal(0);
    const size = running!.broker.replicas.partition('wandering', 0)!.log.size;
    expect(size).to.be.greaterThan(0);
    expect(describedDirs(described.out)).to.deep.equal([{ broker: 1, dirs: { [from]: [`wandering-0 ${size} lag=0`], [to]: [] } }]);

    const plan = path.join(root, 'plan.json');
    fs.writeFileSync(plan, JSON.stringify({ version: 1, partitions: [{ topic: 'wandering', partition: 0, replicas: [1], log_dirs: [to] }] }));
    const executed = await reassignTool(bootstrap, '--execute', '--reassignment-json-file', plan);
    expect(executed.status, executed.err).to.equal(0);
    // What Kafka 4.4.0 printed for the same plan (the trailing space of its last line is its own).
    expect(executed.out).to.equal([
      'Current partition replica assignment',
      JSON.stringify({ version: 1, partitions: [{ topic: 'wandering', partition: 0, replicas: [1], log_dirs: [from] }] }),
      'Save this to use as the --reassignment-json-file option during rollback',
      'Successfully started partition reassignment for wandering-0',
      `Successfully started moving log directory to ${to} for replica wandering-0 with broker 1 `,
    ].join('\n'));

    // --verify until the tool sees the replica in its new dir (the copy runs in the background).
    let verified = await reassignTool(bootstrap, '--verify', '--reassignment-json-file', plan);
    for (let tries = 1; verified.out.includes('still in progress') && tries < 30; tries++) {
      await new Promise((r) => setTimeout(r, 1000));
      verified = await reassignTool(bootstrap, '--verify', '--reassignment-json-file', plan);
    }
    expect(verified.status, verified.err).to.equal(0);
    expect(verified.out).to.equal([
      'Status of partition reassignment:',
      'Reassignment of partition wandering-0 is completed.',
      'Reassignment of replica wandering-0-1 completed successfully.',
      'Clearing broker-level throttles on broker 1',
      'Clearing topic-level throttles on topic wandering',
    ].join('\n'));
    expect(dirOf()).to.equal(to);

    const after = describedDirs((await logDirsTool(bootstrap, '--describe', '--broker-list', '1', '--topic-list', 'wandering')).out);
    expect(after).to.deep.equal([{ broker: 1, dirs: { [from]: [], [to]: [`wandering-0 ${size} lag=0`] } }]);

    const consumer = kafka.consumer({ groupId: 'log-dirs-tools-reader', maxWaitTimeInMs: 50 });
    await consumer.connect();
    await consumer.subscribe({ topic: 'wandering', fromBeginning: true });
    try {
      expect(await readValues(consumer, values.length)).to.deep.equal(values);
    } finally {
      await consumer.disconnect();
    }
  });

  it('throttles a move with --replica-alter-log-dirs-throttle: --verify reports it in progress, then complete, and clears the throttle', async () => {
    const bootstrap = running!.bootstrap;
    const kafka = new Kafka({ brokers: [bootstrap], clientId: 'log-dirs-tools-throttled', logLevel: logLevel.NOTHING });
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: 'slow', numPartitions: 1 }] });
    await admin.disconnect();
    const producer = kafka.producer();
    await producer.connect();
    await producer.send({ topic: 'slow', acks: -1, messages: Array.from({ length: 100 }, (_, i) => ({ value: `slow-${i}-${'y'.repeat(100)}` })) });
    await producer.disconnect();
    const dirOf = () => running!.broker.replicas.logs.logDirOf(running!.broker.replicas.partition('slow', 0)!.log);
    const from = dirOf();
    const to = logDirs.find((d) => d !== from)!;
    const unthrottled = running!.broker.config.getLong('replica.alter.log.dirs.io.max.bytes.per.second');

    const plan = path.join(root, 'slow-plan.json');
    fs.writeFileSync(plan, JSON.stringify({ version: 1, partitions: [{ topic: 'slow', partition: 0, replicas: [1], log_dirs: [to] }] }));
    const executed = await reassignTool(bootstrap, '--execute', '--reassignment-json-file', plan, '--replica-alter-log-dirs-throttle', '1000');
    expect(executed.status, executed.err).to.equal(0);
    // What Kafka 4.4.0 printed for the same plan and throttle.
    expect(executed.out).to.equal([
      'Current partition replica assignment',
      JSON.stringify({ version: 1, partitions: [{ topic: 'slow', partition: 0, replicas: [1], log_dirs: [from] }] }),
      'Save this to use as the --reassignment-json-file option during rollback',
      'Warning: You must run --verify periodically, until the reassignment completes, to ensure the throttle is removed.',
      'The replica-alter-dir throttle limit was set to 1000 B/s',
      'Successfully started partition reassignment for slow-0',
      `Successfully started moving log directory to ${to} for replica slow-0 with broker 1 `,
    ].join('\n'));
    expect(running!.broker.config.getLong('replica.alter.log.dirs.io.max.bytes.per.second')).to.equal(1000);

    const inProgress = await reassignTool(bootstrap, '--verify', '--reassignment-json-file', plan);
    // 100 records of over 100 bytes at 1000 B/s: over ten seconds to copy, longer than the tool takes to start.
    expect(inProgress.out).to.equal([
      'Status of partition reassignment:',
      'Reassignment of partition slow-0 is completed.',
      'Reassignment of replica slow-0-1 is still in progress.',
    ].join('\n'));
    let verified = inProgress;
    for (let tries = 1; verified.out.includes('still in progress') && tries < 60; tries++) {
      await new Promise((r) => setTimeout(r, 1000));
      verified = await reassignTool(bootstrap, '--verify', '--reassignment-json-file', plan);
    }
    expect(verified.out).to.equal([
      'Status of partition reassignment:',
      'Reassignment of partition slow-0 is completed.',
      'Reassignment of replica slow-0-1 completed successfully.',
      'Clearing broker-level throttles on broker 1',
      'Clearing topic-level throttles on topic slow',
    ].join('\n'));
    expect(dirOf()).to.equal(to);
    expect(running!.broker.config.getLong('replica.alter.log.dirs.io.max.bytes.per.second')).to.equal(unthrottled);
  });
});
