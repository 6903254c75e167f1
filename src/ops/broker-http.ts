/**
 * A broker's HTTP listener: its metrics, and the console over a Kafka connection to the broker's own
 * PLAINTEXT listener (the console reads the cluster as a client does: in a cluster, through this
 * broker, every broker).
 */
import type { Logger } from 'pino';
import type { ConnectionOptions } from '../admin/connection';
import type { BrokerConfig } from '../config/broker-config';
import { parseHttpListener } from '../config/http-listener';
import type { BrokerMetrics } from '../metrics/broker-metrics';
import { HttpError } from './http-error';
import { startHttpListener, type RunningHttpListener } from './http-listener';

export const CONSOLE_CLIENT_ID = 'fjord-console';

/** Per request of the console to the cluster: a page waits no longer. */
const CONSOLE_TIMEOUT_MS = 10_000;

/**
 * Starts the listener `http.listener` names (null when it is empty). `listeners`: the broker's open
 * Kafka listeners by name, with the address they are reached at.
 */
export async function startBrokerHttpListener(
  config: BrokerConfig,
  metrics: BrokerMetrics,
  listeners: ReadonlyMap<string, { host: string; port: number }>,
  log: Logger,
): Promise<RunningHttpListener | null> {
  const address = parseHttpListener(config.getString('http.listener'));
  if (!address) return null;
  const plaintext = config.listeners.find((l) => l.securityProtocol === 'PLAINTEXT');
  const own = plaintext ? listeners.get(plaintext.name) : undefined;
  let closed = false;
  const cluster = (): ConnectionOptions => {
    // A request still running when the broker closes must not open a connection nobody closes.
    if (closed) throw new HttpError(503, 'the broker is shutting down');
    if (!own) {
      // The console has no credentials of its own: it reads the cluster only where no login is needed.
      throw new HttpError(503, `the console needs a PLAINTEXT listener and this broker has none (${config.listeners.map((l) => `${l.name}:${l.securityProtocol}`).join(', ')}); `
        + 'its /metrics is served all the same');
    }
    return { bootstrapServers: [`${own.host}:${own.port}`], clientId: CONSOLE_CLIENT_ID, timeoutMs: CONSOLE_TIMEOUT_MS };
  };
  const http = await startHttpListener(address, {
    cluster,
    nodeId: config.nodeId,
    writesEnabled: config.getBool('http.console.writes.enable'),
    renderMetrics: () => metrics.render(),
    progress: () => metrics.progress.list(),
    log,
  });
  return {
    host: http.host,
    port: http.port,
    close: async () => {
      closed = true;
      await http.close();
    },
  };
}
