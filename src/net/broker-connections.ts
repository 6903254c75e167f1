// One BrokerClient per other broker, for the coordinators' requests to them (transaction markers,
// the partition adds of transaction version 2 writes): opened on first use, reused, opened again after
// it is lost or the broker's endpoint changes, and opened once however many callers ask at the same time.
import type { BrokerEndpoint } from '../cluster/controller';
import { BrokerClient, type BrokerClientOptions } from './broker-client';

/** The clients' options but the peer's address: clientId, timeouts, TLS and authentication. */
export type BrokerConnectionsOptions = Omit<BrokerClientOptions, 'host' | 'port'>;

interface Connection {
  readonly endpoint: BrokerEndpoint;
  client: BrokerClient | undefined;
  connecting: Promise<BrokerClient> | undefined;
}

const endpointKey = (b: BrokerEndpoint) => `${b.host}:${b.port}`;

export class BrokerConnections {
  private readonly byNode = new Map<number, Connection>();
  private closed = false;

  constructor(private readonly opts: BrokerConnectionsOptions) {}

  get isClosed(): boolean {
    return this.closed;
  }

  /** The broker's open connection; rejects as BrokerClient.connect does. */
  get(endpoint: BrokerEndpoint): Promise<BrokerClient> {
    let conn = this.byNode.get(endpoint.nodeId);
    if (conn && endpointKey(conn.endpoint) !== endpointKey(endpoint)) {
      conn.client?.close(`broker ${endpoint.nodeId} moved to ${endpointKey(endpoint)}`);
      conn = undefined;
    }
    if (!conn) this.byNode.set(endpoint.nodeId, (conn = { endpoint, client: undefined, connecting: undefined }));
    if (conn.client && !conn.client.isClosed) return Promise.resolve(conn.client);
    const opened = conn;
    opened.connecting ??= BrokerClient.connect({
      ...this.opts, host: endpoint.host, port: endpoint.port,
    }).then((client) => {
      // Closed meanwhile (or the broker moved): this connection has no one to serve.
      if (this.closed || this.byNode.get(endpoint.nodeId) !== opened) client.close('no longer sending to this broker');
      opened.client = client;
      return client;
    }).finally(() => {
      opened.connecting = undefined;
    });
    return opened.connecting;
  }

  /** Closes every connection; later ones are closed as soon as they open. */
  close(reason: string): void {
    this.closed = true;
    for (const conn of this.byNode.values()) conn.client?.close(reason);
    this.byNode.clear();
  }
}
