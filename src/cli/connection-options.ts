/** The options every admin command shares: where the cluster is, and how to print. */
import type { Argv } from 'yargs';
import { KafkaConnection } from '../admin/connection';

export interface ConnectionArgs {
  bootstrapServer: string;
  json: boolean;
}

export function withConnectionOptions<T>(y: Argv<T>) {
  return y
    .option('bootstrap-server', { type: 'string', default: '127.0.0.1:9092', describe: 'HOST:PORT[,HOST:PORT...] of the cluster (Fjord or Apache Kafka)' })
    .option('json', { type: 'boolean', default: false, describe: 'Print JSON instead of a table' });
}

/** Opens a connection, runs `body` with it and closes it, whatever happens. */
export async function withConnection<R>(args: ConnectionArgs, body: (connection: KafkaConnection) => Promise<R>): Promise<R> {
  const connection = new KafkaConnection({ bootstrapServers: args.bootstrapServer.split(',').map((s) => s.trim()).filter(Boolean) });
  try {
    return await body(connection);
  } finally {
    await connection.close();
  }
}
