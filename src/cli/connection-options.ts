/** The options every admin command shares: where the cluster is, and how to print. */
import type { Argv } from 'yargs';
import { KafkaConnection, type ConnectionOptions } from '../admin/connection';
import { securityOfClientProperties } from './client-properties';

export interface ConnectionArgs {
  bootstrapServer: string;
  commandConfig?: string;
  json: boolean;
}

export function withConnectionOptions<T>(y: Argv<T>) {
  return y
    .option('bootstrap-server', { type: 'string', default: '127.0.0.1:9092', describe: 'HOST:PORT[,HOST:PORT...] of the cluster (Fjord or Apache Kafka)' })
    .option('command-config', { type: 'string', describe: 'Kafka client properties for TLS and SASL (security.protocol, sasl.mechanism, sasl.jaas.config, ssl.truststore.* as PEM), as Kafka\'s tools take' })
    .option('json', { type: 'boolean', default: false, describe: 'Print JSON instead of a table' });
}

/** Where the cluster is and how to log in, from --bootstrap-server and --command-config. */
export function connectionOptionsOf(args: Pick<ConnectionArgs, 'bootstrapServer' | 'commandConfig'>): ConnectionOptions {
  return {
    bootstrapServers: args.bootstrapServer.split(',').map((s) => s.trim()).filter(Boolean),
    ...(args.commandConfig ? securityOfClientProperties(args.commandConfig) : {}),
  };
}

/** Opens a connection, runs `body` with it and closes it, whatever happens. */
export async function withConnection<R>(args: ConnectionArgs, body: (connection: KafkaConnection) => Promise<R>): Promise<R> {
  const connection = new KafkaConnection(connectionOptionsOf(args));
  try {
    return await body(connection);
  } finally {
    await connection.close();
  }
}
