import { expect } from 'chai';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { KafkaConnection } from '../../src/admin/connection';
import { browseMessages, produceMessages } from '../../src/admin/messages';
import { withBroker } from '../helpers/broker';
import { jsonOf, runFjord, runFjordWithInput } from '../helpers/fjord-cli';

describe('fjord produce / fjord consume', function () {
  this.timeout(60_000);
  const broker = withBroker();
  let bootstrap: string[];
  let dir: string;

  before(async () => {
    bootstrap = ['--bootstrap-server', `127.0.0.1:${broker.current().port}`];
    dir = await mkdtemp(path.join(os.tmpdir(), 'fjord-produce-'));
    const c = new KafkaConnection({ bootstrapServers: [`127.0.0.1:${broker.current().port}`] });
    try {
      await c.admin().createTopics({ topics: ['keyed', 'lines'], partitions: 3, replicas: 1 });
    } finally {
      await c.close();
    }
  });
  after(async () => { await rm(dir, { recursive: true, force: true }); });

  it('writes keyed lines with headers and a timestamp, and reads them back as JSON and raw', async () => {
    const lines = Array.from({ length: 20 }, (_, i) => `key-${i % 4}|value ${i}`);
    const written = jsonOf(await runFjordWithInput(`${lines.join('\n')}\n`, 'produce', ...bootstrap, '--topic', 'keyed', '--key-separator', '|',
      '--header', 'origin=cli', '--header', 'trace=a=b', '--timestamp', '1700000000000', '--json')) as {
      written: number; offsets: { partition: number; offset: number }[];
    };
    expect(written.written).to.equal(20);
    // Each partition's offsets are 0, 1, 2, ... in the order of the lines; a key always goes to the same partition.
    const perPartition = new Map<number, number[]>();
    for (const o of written.offsets) perPartition.set(o.partition, [...(perPartition.get(o.partition) ?? []), o.offset]);
    for (const offsets of perPartition.values()) expect(offsets).to.deep.equal(offsets.map((_, i) => i));
    const partitionOfKey = new Map<string, number>();
    written.offsets.forEach((o, i) => {
      const key = lines[i].split('|')[0];
      expect(partitionOfKey.get(key) ?? o.partition).to.equal(o.partition);
      partitionOfKey.set(key, o.partition);
    });

    const json = await runFjord('consume', ...bootstrap, '--topic', 'keyed', '--from-beginning', '--timeout-ms', '1500', '--format', 'json');
    expect(json.status, json.stderr).to.equal(0);
    expect(json.stderr).to.contain('Processed a total of 20 messages');
    const records = json.stdout.trim().split('\n').map((l) => JSON.parse(l));
    expect(records).to.have.length(20);
    for (const r of records) {
      const i = written.offsets.findIndex((o) => o.partition === r.partition && o.offset === r.offset);
      expect(i, JSON.stringify(r)).to.be.at.least(0);
      expect(r).to.deep.equal({
        topic: 'keyed', partition: r.partition, offset: r.offset, timestamp: 1700000000000,
        key: `key-${i % 4}`, value: `value ${i}`, headers: [{ key: 'origin', value: 'cli' }, { key: 'trace', value: 'a=b' }],
      });
    }

    const raw = await runFjord('consume', ...bootstrap, '--topic', 'keyed', '--from-beginning', '--max-messages', '20', '--print-key', '--print-headers');
    expect(raw.status, raw.stderr).to.equal(0);
    expect(raw.stdout.trim().split('\n').sort()).to.deep.equal(lines.map((l) => `origin:cli,trace:a=b\t${l.replace('|', '\t')}`).sort());
  });

  it('writes a file to one partition and reads from an offset of it, --max-messages at most', async () => {
    const file = path.join(dir, 'values.txt');
    await writeFile(file, 'one\ntwo\nthree\nfour\n');
    const out = await runFjord('produce', ...bootstrap, '--topic', 'lines', '--partition', '2', '--file', file);
    expect(out.status, out.stderr).to.equal(0);
    expect(out.stdout).to.equal('Wrote 4 record(s) to lines.\n');
    const read = await runFjord('consume', ...bootstrap, '--topic', 'lines', '--partition', '2', '--offset', '1', '--max-messages', '2');
    expect(read.status, read.stderr).to.equal(0);
    expect(read.stdout).to.equal('two\nthree\n');
    // Other partitions stay empty.
    const empty = await runFjord('consume', ...bootstrap, '--topic', 'lines', '--partition', '0', '--offset', '0', '--timeout-ms', '300');
    expect(empty.stdout).to.equal('');
    expect(empty.stderr).to.contain('Processed a total of 0 messages');
  });

  it('fails with one line naming Kafka\'s error and exit code 1', async () => {
    const unknown = await runFjordWithInput('x\n', 'produce', ...bootstrap, '--topic', 'no-such-topic');
    expect(unknown.status).to.equal(1);
    expect(unknown.stderr).to.equal('fjord: UNKNOWN_TOPIC_OR_PARTITION: Unknown topic no-such-topic.\n');
    const badPartition = await runFjord('consume', ...bootstrap, '--topic', 'lines', '--partition', '7', '--timeout-ms', '100');
    expect(badPartition.status).to.equal(1);
    expect(badPartition.stderr).to.match(/^fjord: UNKNOWN_TOPIC_OR_PARTITION: Topic lines has no partition 7/);
    const unreachable = await runFjord('consume', '--bootstrap-server', '127.0.0.1:1', '--topic', 'lines', '--timeout-ms', '100');
    expect(unreachable.status).to.equal(1);
    expect(unreachable.stderr.trim().split('\n')).to.have.length(1);
    expect(unreachable.stderr).to.match(/^fjord: .*connect/i);
  });

  it('browses one partition without a group from an offset or a time (browseMessages, for the console)', async () => {
    const c = new KafkaConnection({ bootstrapServers: [`127.0.0.1:${broker.current().port}`] });
    try {
      await c.admin().createTopics({ topics: ['browsed'], partitions: 2, replicas: 1 });
      const written = await produceMessages(c, 'browsed', Array.from({ length: 6 }, (_, i) => ({
        key: Buffer.from(`k${i}`), value: Buffer.from(`v${i}`), headers: [{ key: 'n', value: Buffer.from(String(i)) }], partition: 1, timestampMs: 1_000 * (i + 1),
      })));
      expect(written.map((w) => w.offset)).to.deep.equal([0n, 1n, 2n, 3n, 4n, 5n]);
      const fromOffset = await browseMessages(c, { topic: 'browsed', partition: 1, fromOffset: 2n, limit: 3 });
      expect(fromOffset.map((r) => [r.offset, r.timestamp, r.key?.toString(), r.value?.toString(), r.headers[0].value?.toString()]))
        .to.deep.equal([[2n, 3000n, 'k2', 'v2', '2'], [3n, 4000n, 'k3', 'v3', '3'], [4n, 5000n, 'k4', 'v4', '4']]);
      // The first record at or after the time; fewer than the limit when the partition ends.
      const fromTime = await browseMessages(c, { topic: 'browsed', partition: 1, fromTimestampMs: 4_500, limit: 10 });
      expect(fromTime.map((r) => r.offset)).to.deep.equal([4n, 5n]);
      expect(await browseMessages(c, { topic: 'browsed', partition: 0, limit: 10 })).to.deep.equal([]);
    } finally {
      await c.close();
    }
  });
});
