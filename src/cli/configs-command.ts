/**
 * `fjord configs describe|alter`: kafka-configs' work for topics, brokers (one, or the cluster-wide
 * default) and groups. `--json` of describe prints ConfigEntry[].
 */
import type { Argv, CommandModule } from 'yargs';
import { alterConfigs, describeConfigs, type ConfigTarget } from '../admin/configs';
import { AdminError } from '../admin/errors';
import { withConnection, withConnectionOptions, type ConnectionArgs } from './connection-options';
import { printJson, printRows, runCommand } from './output';
import { parseKeyValues } from './key-value-args';

interface TargetArgs {
  topic?: string;
  broker?: string;
  brokerDefault: boolean;
  group?: string;
}

function withTargetOptions(y: Argv) {
  return withConnectionOptions(y)
    .option('topic', { type: 'string', describe: 'A topic\'s configs' })
    .option('broker', { type: 'string', describe: 'A broker\'s configs, by node id' })
    .option('broker-default', { type: 'boolean', default: false, describe: 'The cluster-wide default of broker configs (kafka-configs --entity-default)' })
    .option('group', { type: 'string', describe: 'A group\'s configs' });
}

function targetOf(args: TargetArgs): ConfigTarget {
  const targets: ConfigTarget[] = [];
  if (args.topic !== undefined) targets.push({ type: 'topic', name: args.topic });
  if (args.broker !== undefined) targets.push({ type: 'broker', name: String(args.broker) });
  if (args.brokerDefault) targets.push({ type: 'broker', name: '' });
  if (args.group !== undefined) targets.push({ type: 'group', name: args.group });
  if (targets.length !== 1) throw new AdminError('give exactly one of --topic, --broker, --broker-default, --group');
  return targets[0];
}

function targetText(t: ConfigTarget): string {
  if (t.type === 'broker' && t.name === '') return 'the default broker';
  return `${t.type} ${t.name}`;
}

const describe: CommandModule = {
  command: 'describe',
  describe: 'Configs of a topic, broker or group: those set on it, or every one with --all',
  builder: (y: Argv) => withTargetOptions(y).option('all', { type: 'boolean', default: false, describe: 'Every config with its value and source, defaults included' }),
  handler: (argv) => {
    const args = argv as unknown as ConnectionArgs & TargetArgs & { all: boolean };
    return runCommand(() =>
      withConnection(args, async (c) => {
        const entries = await describeConfigs(c, targetOf(args), { all: args.all });
        printRows(entries, [
          { header: 'NAME', value: (e) => e.name },
          { header: 'VALUE', value: (e) => (e.sensitive ? '(sensitive)' : e.value) },
          { header: 'SOURCE', value: (e) => e.source },
          { header: 'READ-ONLY', value: (e) => e.readOnly },
        ], args);
      }),
    );
  },
};

const alter: CommandModule = {
  command: 'alter',
  describe: 'Set and remove configs of a topic, broker or group (IncrementalAlterConfigs)',
  builder: (y: Argv) =>
    withTargetOptions(y)
      .option('set', { type: 'string', array: true, requiresArg: true, describe: 'Set a config: --set key=value (repeatable)' })
      .option('delete', { type: 'string', array: true, requiresArg: true, describe: 'Remove a config, back to its default (repeatable)' }),
  handler: (argv) => {
    const args = argv as unknown as ConnectionArgs & TargetArgs & { set?: string[]; delete?: string[] };
    return runCommand(() =>
      withConnection(args, async (c) => {
        const target = targetOf(args);
        const set = parseKeyValues('set', args.set);
        const remove = args.delete ?? [];
        if (Object.keys(set).length === 0 && remove.length === 0) throw new AdminError('nothing to alter: give --set or --delete');
        await alterConfigs(c, target, { set, delete: remove });
        if (args.json) printJson({ target, set, deleted: remove });
        else process.stdout.write(`Completed updating config for ${targetText(target)}.\n`);
      }),
    );
  },
};

export const configsCommand: CommandModule = {
  command: 'configs <command>',
  describe: 'Describe and alter configs of topics, brokers and groups',
  builder: (y: Argv) => y.command(describe).command(alter).demandCommand(1),
  handler: () => undefined,
};
