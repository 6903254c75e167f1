/**
 * `fjord consume`: prints records of a topic, for quick checks (as kafka-console-consumer): without
 * a group it reads partitions from their leaders and commits nothing; with --group it is a member
 * of the group and commits what it printed.
 */
import type { Argv, CommandModule } from 'yargs';
import { AdminError } from '../admin/errors';
import { jsonReplacer } from '../admin/json';
import { consumeAsGroup, readPartitions, type BrowsedRecord, type StartPosition } from '../admin/messages';
import { withConnection, withConnectionOptions, type ConnectionArgs } from './connection-options';
import { Progress, runCommand } from './output';

interface ConsumeArgs extends ConnectionArgs {
  topic: string;
  partition?: number;
  group?: string;
  fromBeginning: boolean;
  offset?: string;
  maxMessages?: number;
  timeoutMs?: number;
  format: 'raw' | 'json';
  printKey: boolean;
  printHeaders: boolean;
}

const text = (b: Buffer | null) => (b === null ? null : b.toString('utf8'));

/** One line per record: raw as kafka-console-consumer's formatter (headers, key, value, tab-separated), or JSON. */
function formatRecord(r: BrowsedRecord, args: ConsumeArgs, json: boolean): string {
  if (json) {
    return JSON.stringify({
      topic: r.topic, partition: r.partition, offset: r.offset, timestamp: r.timestamp,
      key: text(r.key), value: text(r.value), headers: r.headers.map((h) => ({ key: h.key, value: text(h.value) })),
    }, jsonReplacer);
  }
  const fields: string[] = [];
  if (args.printHeaders) fields.push(r.headers.length ? r.headers.map((h) => `${h.key}:${text(h.value)}`).join(',') : 'NO_HEADERS');
  if (args.printKey) fields.push(String(text(r.key)));
  fields.push(String(text(r.value)));
  return fields.join('\t');
}

function records(c: Parameters<Parameters<typeof withConnection>[1]>[0], args: ConsumeArgs, idleTimeoutMs: number): AsyncGenerator<BrowsedRecord> {
  if (args.group !== undefined) {
    if (args.partition !== undefined || args.offset !== undefined) throw new AdminError('--partition and --offset read without a group: give them without --group');
    return consumeAsGroup(c, { topic: args.topic, groupId: args.group, fromBeginning: args.fromBeginning, idleTimeoutMs });
  }
  let start: StartPosition = args.fromBeginning ? 'earliest' : 'latest';
  if (args.offset !== undefined) {
    if (args.partition === undefined) throw new AdminError('--offset needs --partition');
    if (args.fromBeginning) throw new AdminError('--offset and --from-beginning cannot be given together');
    const offset = args.offset.trim();
    if (offset === 'earliest' || offset === 'latest') start = offset;
    else if (/^\d+$/.test(offset)) start = { offset: BigInt(offset) };
    else throw new AdminError(`--offset must be a non-negative integer, earliest or latest, not '${args.offset}'`);
  }
  return readPartitions(c, { topic: args.topic, partitions: args.partition === undefined ? undefined : [args.partition], start, idleTimeoutMs });
}

export const consumeCommand: CommandModule<object, ConsumeArgs> = {
  command: 'consume',
  describe: 'Print records of a topic (raw values or JSON lines)',
  builder: (y) => withConnectionOptions(y)
    .option('topic', { type: 'string', demandOption: true, describe: 'Topic to read' })
    .option('partition', { type: 'number', describe: 'Only this partition (without a group)' })
    .option('group', { type: 'string', describe: 'Consume as a member of this group, committing what is printed' })
    .option('from-beginning', { type: 'boolean', default: false, describe: 'From the earliest offset (with --group: when the group has none committed)' })
    .option('offset', { type: 'string', describe: 'From this offset of --partition (or earliest, latest)' })
    .option('max-messages', { type: 'number', describe: 'Exit after this many records' })
    .option('timeout-ms', { type: 'number', describe: 'Exit after this long without a record (default: wait)' })
    .option('format', { type: 'string', choices: ['raw', 'json'], default: 'raw', describe: 'raw: the values, one per line; json: one object per line (--json too)' })
    .option('print-key', { type: 'boolean', default: false, describe: 'raw: print the key before the value, tab-separated' })
    .option('print-headers', { type: 'boolean', default: false, describe: 'raw: print the headers (k:v,...) first' })
    .example('$0 consume --topic orders --from-beginning --max-messages 10', 'the first 10 records')
    .example('$0 consume --topic orders --group billing --timeout-ms 5000 --format json', 'as group billing, until 5s without records') as unknown as Argv<ConsumeArgs>,
  handler: (args) => runCommand(() => withConnection(args, async (c) => {
    const json = args.json || args.format === 'json';
    const idleTimeoutMs = args.timeoutMs ?? Infinity;
    // Only when the records go elsewhere than the terminal, where a progress line would cut into them.
    const progress = process.stdout.isTTY ? undefined : new Progress('consumed', args.maxMessages);
    let count = 0;
    if (args.maxMessages === undefined || args.maxMessages > 0) {
      for await (const r of records(c, args, idleTimeoutMs)) {
        process.stdout.write(`${formatRecord(r, args, json)}\n`);
        progress?.update(++count);
        if (args.maxMessages !== undefined && count >= args.maxMessages) break;
      }
    }
    progress?.done();
    process.stderr.write(`Processed a total of ${count} messages\n`);
  })),
};
