/**
 * `fjord groups list|describe|delete|reset-offsets`: consumer groups of any cluster, as
 * kafka-consumer-groups shows and changes them.
 */
import type { Argv, CommandModule } from 'yargs';
import { AdminError } from '../admin/errors';
import { applyOffsetReset, deleteGroups, describeGroups, listGroups, planOffsetReset, type ResetTarget } from '../admin/groups';
import { withConnection, withConnectionOptions, type ConnectionArgs } from './connection-options';
import { Progress, printJson, printRows, runCommand } from './output';

interface DescribeArgs extends ConnectionArgs {
  groups: string[];
}

interface ResetArgs extends ConnectionArgs {
  group: string;
  topic?: string[];
  allTopics?: boolean;
  toEarliest: boolean;
  toLatest: boolean;
  toOffset?: string;
  toDatetime?: string;
  toTimestamp?: number;
  shiftBy?: string;
  dryRun?: boolean;
  execute?: boolean;
}

const list: CommandModule<object, ConnectionArgs> = {
  command: 'list',
  describe: 'List the groups (id, type, state, protocol type)',
  builder: (y) => withConnectionOptions(y) as unknown as Argv<ConnectionArgs>,
  handler: (args) => runCommand(() => withConnection(args, async (c) => {
    printRows(await listGroups(c), [
      { header: 'GROUP', value: (g) => g.groupId },
      { header: 'TYPE', value: (g) => g.type },
      { header: 'STATE', value: (g) => g.state },
      { header: 'PROTOCOL-TYPE', value: (g) => g.protocolType || null },
    ], args);
  })),
};

const describe: CommandModule<object, DescribeArgs> = {
  command: 'describe <groups..>',
  describe: 'Members and assignments, committed offsets, log end offsets and lag of groups',
  builder: (y) => withConnectionOptions(y).positional('groups', { type: 'string', array: true, demandOption: true, describe: 'Group ids' }) as unknown as Argv<DescribeArgs>,
  handler: (args) => runCommand(() => withConnection(args, async (c) => {
    const groups = await describeGroups(c, args.groups);
    if (args.json) {
      printJson(groups);
      return;
    }
    groups.forEach((g, i) => {
      if (i) process.stdout.write('\n');
      process.stdout.write(`Group ${g.groupId} (${g.type}): state ${g.state}, protocol ${g.protocol || '-'}, coordinator ${g.coordinator}, ${g.members.length} member(s), total lag ${g.totalLag}\n\n`);
      const member = new Map(g.members.map((m) => [m.memberId, m]));
      printRows(g.offsets, [
        { header: 'TOPIC', value: (o) => o.topic },
        { header: 'PARTITION', value: (o) => o.partition },
        { header: 'CURRENT-OFFSET', value: (o) => o.committedOffset },
        { header: 'LOG-END-OFFSET', value: (o) => o.latestOffset },
        { header: 'LAG', value: (o) => o.lag },
        { header: 'CONSUMER-ID', value: (o) => o.memberId },
        { header: 'HOST', value: (o) => (o.memberId ? member.get(o.memberId)?.host : null) },
        { header: 'CLIENT-ID', value: (o) => (o.memberId ? member.get(o.memberId)?.clientId : null) },
      ], {});
      if (!g.members.length) return;
      process.stdout.write('\n');
      printRows(g.members, [
        { header: 'CONSUMER-ID', value: (m) => m.memberId },
        { header: 'GROUP-INSTANCE-ID', value: (m) => m.groupInstanceId },
        { header: 'HOST', value: (m) => m.host },
        { header: 'CLIENT-ID', value: (m) => m.clientId },
        { header: 'ASSIGNMENT', value: (m) => m.assignment.map((a) => `${a.topic}:${a.partitions.join(',')}`).join(' ') || null },
      ], {});
    });
  })),
};

const remove: CommandModule<object, DescribeArgs> = {
  command: 'delete <groups..>',
  describe: 'Delete groups (only groups without members: else NON_EMPTY_GROUP)',
  builder: (y) => withConnectionOptions(y).positional('groups', { type: 'string', array: true, demandOption: true, describe: 'Group ids' }) as unknown as Argv<DescribeArgs>,
  handler: (args) => runCommand(() => withConnection(args, async (c) => {
    await deleteGroups(c, args.groups);
    if (args.json) printJson({ deleted: args.groups });
    else process.stdout.write(`Deletion of requested consumer groups (${args.groups.map((g) => `'${g}'`).join(', ')}) was successful.\n`);
  })),
};

function bigintOption(name: string, value: string): bigint {
  if (!/^[+-]?\d+$/.test(value.trim())) throw new AdminError(`--${name} must be an integer, not '${value}'`);
  return BigInt(value.trim());
}

/** The one reset target the options give, as kafka-consumer-groups requires exactly one. */
function resetTarget(args: ResetArgs): ResetTarget {
  const targets: ResetTarget[] = [];
  if (args.toEarliest) targets.push({ to: 'earliest' });
  if (args.toLatest) targets.push({ to: 'latest' });
  if (args.toOffset !== undefined) targets.push({ to: 'offset', offset: bigintOption('to-offset', args.toOffset) });
  if (args.toTimestamp !== undefined) targets.push({ to: 'timestamp', timestampMs: args.toTimestamp });
  if (args.toDatetime !== undefined) {
    const ms = Date.parse(args.toDatetime);
    if (Number.isNaN(ms)) throw new AdminError(`--to-datetime must be an ISO date and time (e.g. 2026-01-31T12:00:00.000Z), not '${args.toDatetime}'`);
    targets.push({ to: 'timestamp', timestampMs: ms });
  }
  if (args.shiftBy !== undefined) targets.push({ to: 'shift', by: bigintOption('shift-by', args.shiftBy) });
  if (targets.length !== 1) throw new AdminError('Give exactly one of --to-earliest, --to-latest, --to-offset, --to-datetime, --to-timestamp, --shift-by');
  return targets[0];
}

const resetOffsets: CommandModule<object, ResetArgs> = {
  command: 'reset-offsets',
  describe: 'Reset the committed offsets of an inactive group (a dry run unless --execute)',
  builder: (y) => withConnectionOptions(y)
    .option('group', { type: 'string', demandOption: true, describe: 'Group id' })
    .option('topic', { type: 'string', array: true, describe: 'TOPIC or TOPIC:P[,P...] (repeatable)' })
    .option('all-topics', { type: 'boolean', describe: 'Every topic the group has committed offsets for' })
    .option('to-earliest', { type: 'boolean', default: false, describe: 'To the earliest offset' })
    .option('to-latest', { type: 'boolean', default: false, describe: 'To the log end offset' })
    .option('to-offset', { type: 'string', describe: 'To this offset (kept within the log)' })
    .option('to-datetime', { type: 'string', describe: 'To the first offset at or after this ISO date and time' })
    .option('to-timestamp', { type: 'number', describe: 'To the first offset at or after this time (ms since the epoch)' })
    .option('shift-by', { type: 'string', describe: 'Move the committed offsets by N (negative: back)' })
    .option('dry-run', { type: 'boolean', describe: 'Only print the new offsets (the default)' })
    .option('execute', { type: 'boolean', describe: 'Commit the new offsets' })
    .conflicts('dry-run', 'execute')
    .conflicts('all-topics', 'topic')
    .example('$0 groups reset-offsets --group g --topic orders --to-earliest --execute', 'replay orders from the start') as unknown as Argv<ResetArgs>,
  handler: (args) => runCommand(() => withConnection(args, async (c) => {
    const target = resetTarget(args);
    if (!args.allTopics && !args.topic?.length) throw new AdminError('Give --topic TOPIC[:P,...] (repeatable) or --all-topics');
    const plan = await planOffsetReset(c, { groupId: args.group, topics: args.allTopics ? [] : args.topic ?? [], target });
    if (args.execute) {
      const progress = new Progress('resetting offsets', plan.length);
      await applyOffsetReset(c, args.group, plan, (done) => progress.update(done));
      progress.done();
    } else if (!args.dryRun) {
      process.stderr.write('WARN: No action will be performed as the --execute option is missing. Add --execute to commit these offsets.\n');
    }
    printRows(plan, [
      { header: 'GROUP', value: () => args.group },
      { header: 'TOPIC', value: (r) => r.topic },
      { header: 'PARTITION', value: (r) => r.partition },
      { header: 'CURRENT-OFFSET', value: (r) => r.currentOffset },
      { header: 'NEW-OFFSET', value: (r) => r.newOffset },
    ], args);
  })),
};

export const groupsCommand: CommandModule<object, object> = {
  command: 'groups <command>',
  describe: 'Consumer groups: list, describe (lag), delete, reset-offsets',
  builder: (y) => y
    .command(list as CommandModule<object, ConnectionArgs>)
    .command(describe as unknown as CommandModule<object, ConnectionArgs>)
    .command(remove as unknown as CommandModule<object, ConnectionArgs>)
    .command(resetOffsets as unknown as CommandModule<object, ConnectionArgs>)
    .demandCommand(1, 'Give a groups command: list, describe, delete or reset-offsets'),
  handler: () => undefined,
};
