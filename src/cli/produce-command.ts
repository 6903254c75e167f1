/**
 * `fjord produce`: writes one record per line of stdin or of a file, for quick checks (as
 * kafka-console-producer, with keys, headers, a timestamp and a partition).
 */
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import type { Argv, CommandModule } from 'yargs';
import { AdminError } from '../admin/errors';
import { produceMessages, type RecordToProduce } from '../admin/messages';
import { withConnection, withConnectionOptions, type ConnectionArgs } from './connection-options';
import { Progress, printJson, runCommand } from './output';

interface ProduceArgs extends ConnectionArgs {
  topic: string;
  partition?: number;
  key?: string;
  header?: string[];
  timestamp?: number;
  keySeparator?: string;
  file?: string;
}

async function readLines(file: string | undefined): Promise<string[]> {
  const input = file ? createReadStream(file) : process.stdin;
  const opened = new Promise<void>((resolve, reject) => {
    input.once('error', reject);
    if (file) input.once('open', () => resolve());
    else resolve();
  });
  await opened.catch((e: NodeJS.ErrnoException) => { throw new AdminError(`cannot read ${file}: ${e.message}`); });
  const lines: string[] = [];
  for await (const line of createInterface({ input, crlfDelay: Infinity })) lines.push(line);
  return lines;
}

function parseHeaders(specs: string[]): { key: string; value: Buffer }[] {
  return specs.map((spec) => {
    const at = spec.indexOf('=');
    if (at <= 0) throw new AdminError(`--header must be KEY=VALUE, not '${spec}'`);
    return { key: spec.slice(0, at), value: Buffer.from(spec.slice(at + 1)) };
  });
}

function toRecord(line: string, args: ProduceArgs, headers: { key: string; value: Buffer }[], lineNumber: number): RecordToProduce {
  let key = args.key === undefined ? null : Buffer.from(args.key);
  let value = line;
  if (args.keySeparator !== undefined) {
    const at = line.indexOf(args.keySeparator);
    if (at < 0) throw new AdminError(`line ${lineNumber} has no key separator '${args.keySeparator}'`);
    key = Buffer.from(line.slice(0, at));
    value = line.slice(at + args.keySeparator.length);
  }
  return { key, value: Buffer.from(value), headers, partition: args.partition, timestampMs: args.timestamp };
}

export const produceCommand: CommandModule<object, ProduceArgs> = {
  command: 'produce',
  describe: 'Write records to a topic: one per line of stdin or of --file',
  builder: (y) => withConnectionOptions(y)
    .option('topic', { type: 'string', demandOption: true, describe: 'Topic to write to' })
    .option('partition', { type: 'number', describe: 'Partition (default: by key hash, round robin without a key)' })
    .option('key', { type: 'string', describe: 'Key of every record' })
    .option('header', { type: 'string', array: true, requiresArg: true, describe: 'A header of every record: KEY=VALUE (repeatable)' })
    .option('timestamp', { type: 'number', describe: 'Timestamp of every record (ms since the epoch; default: now)' })
    .option('key-separator', { type: 'string', describe: 'Each line is KEY<SEP>VALUE' })
    .option('file', { type: 'string', describe: 'Read the lines from this file instead of stdin' })
    .conflicts('key', 'key-separator')
    .example('echo hello | $0 produce --topic orders', 'one record, value "hello"')
    .example('$0 produce --topic orders --key-separator : --file orders.txt', 'key:value lines of a file') as unknown as Argv<ProduceArgs>,
  handler: (args) => runCommand(() => withConnection(args, async (c) => {
    const headers = parseHeaders(args.header ?? []);
    const lines = await readLines(args.file);
    const records = lines.map((line, i) => toRecord(line, args, headers, i + 1));
    const progress = new Progress('producing', records.length);
    const written = await produceMessages(c, args.topic, records, (done) => progress.update(done));
    progress.done();
    if (args.json) printJson({ topic: args.topic, written: written.length, offsets: written });
    else process.stdout.write(`Wrote ${written.length} record(s) to ${args.topic}.\n`);
  })),
};
