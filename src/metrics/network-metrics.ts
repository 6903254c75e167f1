/**
 * Kafka's socket-server metrics (kafka.server:type=socket-server-metrics,listener=L): connections
 * opened, closed and open now, and SASL authentications, per listener. Counted by the listener and
 * its connections in plain numbers, read when scraped.
 */
import type { Registry } from 'prom-client';
import { registerCollected } from './instruments';

/** One listener's counts. */
export class ListenerMeters {
  connectionsCreated = 0;
  connectionsClosed = 0;
  authenticationsSucceeded = 0;
  authenticationsFailed = 0;

  constructor(readonly listener: string) {}
}

export class NetworkMetrics {
  private readonly listeners = new Map<string, ListenerMeters>();

  constructor(registry: Registry) {
    const perListener = (name: string, help: string, type: 'counter' | 'gauge', value: (m: ListenerMeters) => number) =>
      registerCollected(registry, {
        name, help, type,
        read: () => [...this.listeners.values()].map((m) => ({ labels: { listener: m.listener }, value: value(m) })),
      });
    perListener('kafka_server_socketservermetrics_connection_count', 'Connections open now (connection-count)', 'gauge',
      (m) => m.connectionsCreated - m.connectionsClosed);
    perListener('kafka_server_socketservermetrics_connection_creation_total', 'Connections accepted (connection-creation-total)', 'counter',
      (m) => m.connectionsCreated);
    perListener('kafka_server_socketservermetrics_connection_close_total', 'Connections closed (connection-close-total)', 'counter',
      (m) => m.connectionsClosed);
    perListener('kafka_server_socketservermetrics_successful_authentication_total', 'SASL authentications that succeeded (successful-authentication-total)',
      'counter', (m) => m.authenticationsSucceeded);
    perListener('kafka_server_socketservermetrics_failed_authentication_total', 'SASL authentications that failed (failed-authentication-total)',
      'counter', (m) => m.authenticationsFailed);
  }

  /** The meters of the listener of this name; made at first use. */
  listener(name: string): ListenerMeters {
    let meters = this.listeners.get(name);
    if (!meters) this.listeners.set(name, (meters = new ListenerMeters(name)));
    return meters;
  }
}
