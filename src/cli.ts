/**
 * `fjord` command line.
 *
 *   fjord start [--host 127.0.0.1] [--port 9092] [--advertised-host H] [--advertised-port P]
 *               [--data-dir ./data] [--node-id 0] [--config server.properties]
 *               [--set key=value]... [--log-level info] [--log-format json|pretty]
 *
 *   fjord cluster describe [--bootstrap-server H:P] [--json]   (an admin command: src/cli/)
 *
 *   fjord cluster [--brokers 3] [--host 127.0.0.1] [--port 9092] [--data-dir ./data-cluster]
 *                 [--etcd HOST:PORT | --etcd-port 2379] [--config server.properties] [--set key=value]...
 *
 * Config layers, lowest to highest: defaults < --config file < --set < the
 * explicit flags above. A bad value prints the reason to stderr and exits 2
 * before anything starts; a failure while starting exits 1; SIGINT/SIGTERM
 * close the broker and exit 0 (a second signal exits 1 at once).
 */
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { BrokerConfig, ConfigError, parseSetArg } from './config/broker-config';
import { readPropertiesFile } from './config/properties';
import { LOG_LEVELS, LogFormat, createLogger } from './common/logger';
import { packageVersion } from './common/package-version';
// The admin commands' Kafka client (most of a second of CPU to load) is loaded by them only.
import type { CommandModule } from 'yargs';

/** Where `fjord start` serves /metrics and the console unless told otherwise (`fjord cluster`: broker i on port + i). */
const CLI_HTTP_LISTENER = '127.0.0.1:8080';

interface ClusterArgs {
  brokers: number;
  host: string;
  port: number;
  dataDir: string;
  etcd?: string;
  etcdPort: number;
  config?: string;
  set?: string[];
  logLevel: string;
  logFormat?: LogFormat;
}

interface StartArgs {
  host?: string;
  port?: number;
  advertisedHost?: string;
  advertisedPort?: number;
  dataDir?: string;
  nodeId?: number;
  config?: string;
  set?: string[];
  logLevel: string;
  logFormat?: LogFormat;
}

/** The admin commands, or null when the command line starts brokers (`start`, `cluster` without a subcommand). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AdminCommands = { commands: CommandModule<any, any>[]; clusterDescribe: CommandModule<any, any> } | null;

async function adminCommands(argv: string[]): Promise<AdminCommands> {
  const args = hideBin(argv);
  const [first, second] = args;
  const help = args.includes('--help') || args.includes('-h');
  if (!help && (first === 'start' || (first === 'cluster' && second !== 'describe'))) return null;
  const [{ ADMIN_COMMANDS }, { clusterDescribeCommand }] = await Promise.all([import('./cli/commands'), import('./cli/cluster-command')]);
  return { commands: ADMIN_COMMANDS, clusterDescribe: clusterDescribeCommand };
}

function buildParser(argv: string[], admin: AdminCommands) {
  return yargs(hideBin(argv))
    .scriptName('fjord')
    .usage('Usage: $0 <command> [options]')
    .command('start', 'Start a Kafka-compatible broker', (y) =>
      y
        .option('host', { type: 'string', describe: 'Listener host (default 127.0.0.1; 0.0.0.0 for all interfaces)' })
        .option('port', { type: 'number', describe: 'Listener port (default 9092; 0 picks a free port)' })
        .option('advertised-host', { type: 'string', describe: 'Host given to clients (default: the listener host)' })
        .option('advertised-port', { type: 'number', describe: 'Port given to clients (default: the listener port)' })
        .option('data-dir', { type: 'string', describe: 'Data directory, sets log.dirs (default ./data)' })
        .option('node-id', { type: 'number', describe: 'Node id, sets node.id (default 0)' })
        .option('config', { alias: 'c', type: 'string', describe: 'Kafka-style server.properties file' })
        .option('set', { type: 'string', array: true, requiresArg: true, describe: 'Override a config: --set key=value (repeatable)' })
        .option('log-level', { type: 'string', choices: [...LOG_LEVELS], default: 'info', describe: 'Log level' })
        .option('log-format', { type: 'string', choices: ['json', 'pretty'], describe: 'Log format (default: pretty on a terminal, else json)' })
        .example('$0 start', 'broker on 127.0.0.1:9092, data in ./data')
        .example('$0 start --port 0 --data-dir /tmp/fjord', 'any free port, data in /tmp/fjord')
        .example('$0 start -c server.properties --set num.partitions=3', 'Kafka config file plus an override'),
    )
    .command('cluster', 'Start a local cluster: an etcd and several brokers on consecutive ports, in this process', (y) =>
      y
        .option('brokers', { type: 'number', default: 3, describe: 'How many brokers (node ids 0..N-1)' })
        .option('host', { type: 'string', default: '127.0.0.1', describe: 'Listener host of every broker' })
        .option('port', { type: 'number', default: 9092, describe: 'Port of broker 0; broker i listens on port + i' })
        .option('data-dir', { type: 'string', default: './data-cluster', describe: 'Folder of the brokers\' data dirs (broker-<id>) and the etcd\'s (etcd)' })
        .option('etcd', { type: 'string', describe: 'etcd.connect of a running etcd (default: start one)' })
        .option('etcd-port', { type: 'number', default: 2379, describe: 'Client port of the etcd started (its peer port is the next one)' })
        .option('config', { alias: 'c', type: 'string', describe: 'Kafka-style server.properties file for every broker' })
        .option('set', { type: 'string', array: true, requiresArg: true, describe: 'Override a config of every broker: --set key=value (repeatable)' })
        .option('log-level', { type: 'string', choices: [...LOG_LEVELS], default: 'info', describe: 'Log level' })
        .option('log-format', { type: 'string', choices: ['json', 'pretty'], describe: 'Log format (default: pretty on a terminal, else json)' })
        .example('$0 cluster', 'etcd on 2379, brokers on 127.0.0.1:9092-9094, data in ./data-cluster')
        .example('$0 cluster --brokers 5 --port 19092 --etcd 127.0.0.1:2379', '5 brokers on an etcd already running')
        .command(admin ? [admin.clusterDescribe] : []),
    )
    .command(admin?.commands ?? [])
    .demandCommand(1, 'Give a command, e.g. fjord start')
    .strict()
    .version(packageVersion())
    .help()
    .alias('h', 'help')
    .wrap(Math.min(110, process.stdout.columns || 80));
}

/** Entry point used by bin/fjord: main(process.argv). */
export async function main(argv: string[] = process.argv): Promise<void> {
  // `fjord topics list | head`: a reader that stops early is not an error worth a stack trace.
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE') process.exit(0);
    throw e;
  });
  const args = await buildParser(argv, await adminCommands(argv)).parseAsync();
  const command = String(args._[0]);
  if (command === 'start') await start(args as unknown as StartArgs);
  // `fjord cluster describe` is an admin command (it ran in its handler); `fjord cluster` alone starts one.
  if (command === 'cluster' && args._.length === 1) await cluster(args as unknown as ClusterArgs);
}

async function cluster(args: ClusterArgs): Promise<void> {
  const props: Record<string, string> = {};
  try {
    if (args.config) for (const [k, v] of readPropertiesFile(args.config)) props[k] = v;
    for (const s of args.set ?? []) {
      const [k, v] = parseSetArg(s);
      props[k] = v;
    }
    // Checked once here, as each broker will, so that a bad value stops everything before it starts.
    props['http.listener'] ??= CLI_HTTP_LISTENER;
    BrokerConfig.load({ sets: { ...props, 'etcd.connect': args.etcd ?? `127.0.0.1:${args.etcdPort}` }, flags: { dataDir: args.dataDir } });
  } catch (e) {
    process.stderr.write(`fjord: ${(e as Error).message}\n`);
    process.exitCode = 2;
    return;
  }
  const logger = createLogger({ level: args.logLevel, format: args.logFormat });
  const starting = import('./local-cluster').then(({ startCluster }) => startCluster({
    brokers: args.brokers, host: args.host, port: args.port, dataDir: args.dataDir,
    etcdConnect: args.etcd, etcdPort: args.etcdPort, config: props, logger,
  }));
  // A signal while starting closes what started, once it has.
  onSignals(logger, async () => (await starting.catch(() => null))?.close());
  let running: Awaited<typeof starting>;
  try {
    running = await starting;
  } catch (e) {
    logger.fatal({ err: e }, `failed to start the cluster: ${(e as Error).message}`);
    process.exitCode = 1;
    return;
  }
  logger.info({ bootstrap: running.bootstrap, etcdConnect: running.etcdConnect }, 'cluster running');
}

/** SIGINT/SIGTERM run `close` and exit 0; a second signal, or a failed close, exits 1. */
function onSignals(logger: ReturnType<typeof createLogger>, close: () => Promise<void>): void {
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) {
      logger.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    stopping = true;
    logger.info({ signal }, 'shutting down');
    try {
      await close();
    } catch (e) {
      logger.error({ err: e }, 'error while shutting down');
      process.exit(1);
    }
    logger.info('stopped');
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}

async function start(args: StartArgs): Promise<void> {
  let config: BrokerConfig;
  try {
    const load = (sets: string[]) => BrokerConfig.load({
      configFile: args.config,
      sets,
      flags: {
        host: args.host,
        port: args.port,
        advertisedHost: args.advertisedHost,
        advertisedPort: args.advertisedPort,
        dataDir: args.dataDir,
        nodeId: args.nodeId,
      },
    });
    config = load(args.set ?? []);
    // The HTTP listener is on under the CLI unless the config file or --set say otherwise (`--set http.listener=` turns it off).
    if (config.origin('http.listener') === 'default') config = load([`http.listener=${CLI_HTTP_LISTENER}`, ...(args.set ?? [])]);
  } catch (e) {
    if (e instanceof ConfigError) {
      process.stderr.write(`fjord: ${e.message}\n`);
      process.exitCode = 2;
      return;
    }
    throw e;
  }

  const logger = createLogger({ level: args.logLevel, format: args.logFormat });
  for (const w of config.warnings) logger.warn(w);
  logger.debug({ config: config.toLogObject() }, 'broker config');

  // The broker is loaded by `start` and `cluster` only: an admin command starts faster without it.
  const starting = import('./broker').then(({ startBroker }) => startBroker({ config, logger }));
  // A signal while starting closes the broker once it has started (a failed start has nothing to close).
  onSignals(logger, async () => (await starting.catch(() => null))?.close());
  try {
    await starting;
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    // Expected failures (data dir of another node, port in use, ...) need no stack trace.
    const expected = err.name === 'MetadataStoreError' || err.name === 'ConfigError' || err.name === 'DataDirLockedError' || typeof err.code === 'string';
    if (expected) logger.fatal(`failed to start: ${err.message}`);
    else logger.fatal({ err }, `failed to start: ${err.message}`);
    process.exitCode = 1;
  }
}
