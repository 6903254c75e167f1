/**
 * `fjord topics list|describe|create|delete|alter`: kafka-topics' work, on any Kafka-compatible
 * cluster. `--json` prints the admin layer's objects (TopicSummary[], TopicDescription & {configs}).
 */
import type { Argv, CommandModule } from 'yargs';
import { alterTopic, createTopic, deleteTopics, describeTopics, listTopics, type TopicDescription } from '../admin/topics';
import { alterConfigs, describeConfigs, type ConfigEntry } from '../admin/configs';
import { AdminError } from '../admin/errors';
import { withConnection, withConnectionOptions, type ConnectionArgs } from './connection-options';
import { formatBytes, printJson, printRows, runCommand } from './output';
import { parseKeyValues } from './key-value-args';

const list: CommandModule = {
  command: 'list',
  describe: 'List topics: partitions, replication factor, under-replicated partitions, messages, size',
  builder: (y: Argv) => withConnectionOptions(y).option('include-internal', { type: 'boolean', default: false, describe: 'Also list internal topics (__consumer_offsets, ...)' }),
  handler: (argv) => {
    const args = argv as unknown as ConnectionArgs & { includeInternal: boolean };
    return runCommand(() =>
      withConnection(args, async (c) => {
        const topics = await listTopics(c, { includeInternal: args.includeInternal });
        printRows(topics, [
          { header: 'TOPIC', value: (t) => (t.internal ? `${t.name} (internal)` : t.name) },
          { header: 'PARTITIONS', value: (t) => t.partitions },
          { header: 'RF', value: (t) => t.replicationFactor },
          { header: 'UNDER-REPLICATED', value: (t) => t.underReplicatedPartitions },
          { header: 'MESSAGES', value: (t) => t.messages },
          { header: 'SIZE', value: (t) => formatBytes(t.sizeBytes) },
        ], args);
      }),
    );
  },
};

type DescribedTopic = TopicDescription & { configs: ConfigEntry[] };

const describe: CommandModule = {
  command: 'describe [topics..]',
  describe: 'Partitions of topics (all non-internal ones when none is named): leader, replicas, ISR, offsets, size; and the configs set on each topic',
  builder: (y: Argv) =>
    withConnectionOptions(y)
      .positional('topics', { type: 'string', array: true, describe: 'Topic names' })
      .option('under-replicated', { type: 'boolean', default: false, describe: 'Only partitions whose ISR is smaller than their replicas' }),
  handler: (argv) => {
    const args = argv as unknown as ConnectionArgs & { topics?: string[]; underReplicated: boolean };
    return runCommand(() =>
      withConnection(args, async (c) => {
        const names = args.topics?.length ? args.topics : (await listTopics(c)).map((t) => t.name);
        const described: DescribedTopic[] = [];
        for (const topic of await describeTopics(c, names)) {
          const partitions = args.underReplicated ? topic.partitions.filter((p) => p.underReplicated) : topic.partitions;
          if (args.underReplicated && partitions.length === 0) continue;
          described.push({ ...topic, partitions, configs: await describeConfigs(c, { type: 'topic', name: topic.name }) });
        }
        if (args.json) {
          printJson(described);
          return;
        }
        described.forEach((t, i) => {
          if (i > 0) process.stdout.write('\n');
          const configs = t.configs.map((e) => `${e.name}=${e.sensitive ? '(sensitive)' : e.value}`).join(',');
          process.stdout.write(`Topic: ${t.name}\tTopicId: ${t.topicId}\tPartitions: ${t.partitions.length}\tReplicationFactor: ${t.partitions[0]?.replicas.length ?? 0}${t.internal ? '\tInternal: true' : ''}\tConfigs: ${configs || '-'}\n`);
          printRows(t.partitions, [
            { header: 'PARTITION', value: (p) => p.partition },
            { header: 'LEADER', value: (p) => (p.leader < 0 ? 'none' : p.leader) },
            { header: 'EPOCH', value: (p) => p.leaderEpoch },
            { header: 'REPLICAS', value: (p) => p.replicas },
            { header: 'ISR', value: (p) => p.isr },
            { header: 'OFFLINE', value: (p) => (p.offlineReplicas.length ? p.offlineReplicas : '-') },
            { header: 'EARLIEST', value: (p) => (p.earliestOffset < 0n ? '-' : p.earliestOffset) },
            { header: 'LATEST', value: (p) => (p.latestOffset < 0n ? '-' : p.latestOffset) },
            { header: 'SIZE', value: (p) => formatBytes(p.sizeBytes) },
          ], args);
        });
      }),
    );
  },
};

const create: CommandModule = {
  command: 'create <topic>',
  describe: 'Create a topic',
  builder: (y: Argv) =>
    withConnectionOptions(y)
      .positional('topic', { type: 'string', demandOption: true, describe: 'Topic name' })
      .option('partitions', { type: 'number', describe: 'Partition count (default: the cluster\'s num.partitions)' })
      .option('replication-factor', { type: 'number', describe: 'Replicas per partition (default: the cluster\'s default.replication.factor)' })
      .option('config', { type: 'string', array: true, requiresArg: true, describe: 'A topic config: --config key=value (repeatable)' }),
  handler: (argv) => {
    const args = argv as unknown as ConnectionArgs & { topic: string; partitions?: number; replicationFactor?: number; config?: string[] };
    return runCommand(() =>
      withConnection(args, async (c) => {
        const configs = parseKeyValues('config', args.config);
        await createTopic(c, { name: args.topic, partitions: args.partitions, replicationFactor: args.replicationFactor, configs });
        if (args.json) printJson({ created: args.topic });
        else process.stdout.write(`Created topic ${args.topic}.\n`);
      }),
    );
  },
};

const remove: CommandModule = {
  command: 'delete <topics..>',
  describe: 'Delete topics',
  builder: (y: Argv) => withConnectionOptions(y).positional('topics', { type: 'string', array: true, demandOption: true, describe: 'Topic names' }),
  handler: (argv) => {
    const args = argv as unknown as ConnectionArgs & { topics: string[] };
    return runCommand(() =>
      withConnection(args, async (c) => {
        await deleteTopics(c, args.topics);
        if (args.json) printJson({ deleted: args.topics });
        else for (const t of args.topics) process.stdout.write(`Deleted topic ${t}.\n`);
      }),
    );
  },
};

const alter: CommandModule = {
  command: 'alter <topic>',
  describe: 'Add partitions to a topic, set or remove its configs',
  builder: (y: Argv) =>
    withConnectionOptions(y)
      .positional('topic', { type: 'string', demandOption: true, describe: 'Topic name' })
      .option('partitions', { type: 'number', describe: 'The new partition count (only ever more)' })
      .option('config', { type: 'string', array: true, requiresArg: true, describe: 'Set a topic config: --config key=value (repeatable)' })
      .option('delete-config', { type: 'string', array: true, requiresArg: true, describe: 'Remove a topic config, back to the broker default (repeatable)' }),
  handler: (argv) => {
    const args = argv as unknown as ConnectionArgs & { topic: string; partitions?: number; config?: string[]; deleteConfig?: string[] };
    return runCommand(() =>
      withConnection(args, async (c) => {
        const set = parseKeyValues('config', args.config);
        const remove = args.deleteConfig ?? [];
        if (args.partitions === undefined && Object.keys(set).length === 0 && remove.length === 0) {
          throw new AdminError('nothing to alter: give --partitions, --config or --delete-config');
        }
        await alterTopic(c, args.topic, { partitions: args.partitions });
        await alterConfigs(c, { type: 'topic', name: args.topic }, { set, delete: remove });
        if (args.json) printJson({ altered: args.topic, partitions: args.partitions ?? null, set, deleted: remove });
        else process.stdout.write(`Altered topic ${args.topic}.\n`);
      }),
    );
  },
};

export const topicsCommand: CommandModule = {
  command: 'topics <command>',
  describe: 'List, describe, create, delete and alter topics',
  builder: (y: Argv) => y.command(list).command(describe).command(create).command(remove).command(alter).demandCommand(1),
  handler: () => undefined,
};
