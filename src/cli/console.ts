/**
 * `fjord console --bootstrap-server HOST:PORT [--http 127.0.0.1:8080]`: the web console of a broker,
 * served for any Kafka cluster (Fjord or Apache Kafka) without a broker in this process. No
 * /metrics here (scrape the brokers); the console's pages read the cluster through the Kafka protocol.
 */
import type { Argv, CommandModule } from 'yargs';
import { parseHttpListener, type HttpListenerAddress } from '../config/http-listener';
import { createLogger } from '../common/logger';
import { CONSOLE_CLIENT_ID } from '../ops/broker-http';
import { startHttpListener } from '../ops/http-listener';
import { connectionOptionsOf } from './connection-options';

interface ConsoleArgs {
  bootstrapServer: string;
  commandConfig?: string;
  http: string;
  enableWrites: boolean;
}

export const consoleCommand: CommandModule<object, ConsoleArgs> = {
  command: 'console',
  describe: 'Serve the web console for any Kafka cluster (Fjord or Apache Kafka)',
  builder: (y: Argv) =>
    y
      .option('bootstrap-server', { type: 'string', default: '127.0.0.1:9092', describe: 'HOST:PORT[,HOST:PORT...] of the cluster' })
      .option('command-config', { type: 'string', describe: 'Kafka client properties for TLS and SASL, as Kafka\'s tools take' })
      .option('http', { type: 'string', default: '127.0.0.1:8080', describe: 'HOST:PORT the console listens on (port 0: any free port)' })
      .option('enable-writes', { type: 'boolean', default: false, describe: 'Let the console create and delete topics and reset offsets' })
      .example('$0 console --bootstrap-server kafka-1:9092', 'the console of that cluster at http://127.0.0.1:8080/') as unknown as Argv<ConsoleArgs>,
  handler: async (args) => {
    const address = httpAddress(args.http);
    if (typeof address === 'string') {
      process.stderr.write(`fjord: --http ${args.http}: ${address}\n`);
      process.exitCode = 2;
      return;
    }
    const log = createLogger({ level: 'info' });
    let http;
    try {
      const cluster = { ...connectionOptionsOf(args), clientId: CONSOLE_CLIENT_ID, timeoutMs: 10_000 };
      http = await startHttpListener(address, { cluster: () => cluster, nodeId: null, writesEnabled: args.enableWrites, log });
    } catch (e) {
      process.stderr.write(`fjord: ${(e as Error).message}\n`);
      process.exitCode = 1;
      return;
    }
    const host = http.host === '' ? '127.0.0.1' : http.host.includes(':') ? `[${http.host}]` : http.host;
    log.info({ bootstrapServers: args.bootstrapServer, writesEnabled: args.enableWrites }, `console at http://${host}:${http.port}/`);
    const stop = () => {
      void http.close().then(() => process.exit(0));
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  },
};

/** The --http address, or why it is not one. */
function httpAddress(value: string): HttpListenerAddress | string {
  try {
    return parseHttpListener(value) ?? 'the console needs HOST:PORT';
  } catch (e) {
    return (e as Error).message;
  }
}
