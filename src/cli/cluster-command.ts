/**
 * `fjord cluster describe`: the cluster's id, controller, brokers and features. A subcommand of
 * `fjord cluster` (which, without one, starts a local cluster: src/cli.ts).
 */
import type { Argv, CommandModule } from 'yargs';
import { describeCluster } from '../admin/cluster';
import { withConnection, withConnectionOptions, type ConnectionArgs } from './connection-options';
import { printJson, printRows, runCommand } from './output';

export const clusterDescribeCommand: CommandModule = {
  command: 'describe',
  describe: 'Cluster id, controller, brokers and features (with their finalized levels) of a running cluster',
  builder: (y: Argv) => withConnectionOptions(y),
  handler: (argv) => {
    const args = argv as unknown as ConnectionArgs;
    return runCommand(() =>
      withConnection(args, async (c) => {
        const cluster = await describeCluster(c);
        if (args.json) {
          printJson(cluster);
          return;
        }
        process.stdout.write(`Cluster ID: ${cluster.clusterId}\nController: ${cluster.controllerId}\n\n`);
        printRows(cluster.brokers, [
          { header: 'BROKER', value: (b) => b.nodeId },
          { header: 'HOST', value: (b) => b.host },
          { header: 'PORT', value: (b) => b.port },
          { header: 'RACK', value: (b) => b.rack },
        ], args);
        process.stdout.write('\n');
        printRows(cluster.features, [
          { header: 'FEATURE', value: (f) => f.name },
          { header: 'SUPPORTED', value: (f) => `${f.minVersion}-${f.maxVersion}` },
          { header: 'FINALIZED', value: (f) => f.finalizedLevel },
        ], args);
      }),
    );
  },
};
