// The TCP listener: accepts connections and hands each to a Connection; closes them all on shutdown.
// - max.connections: a connection over it is closed at accept (warn). It and max.connections.per.ip
//   are read at each accept (the broker passes getters of its dynamic config).
// - max.connections.per.ip and its overrides (host names resolved once, at start, as Kafka's
//   ConnectionQuotas does): a connection over its address's limit is closed at accept, logged at
//   info as Kafka does ("Rejected connection from ...").
// - One RequestBudget (queued.max.requests, queued.max.request.bytes) shared by every connection.
import * as net from 'node:net';
import { lookup } from 'node:dns/promises';
import type { Logger } from 'pino';
import { Connection, normalizeIp, type ConnectionAccess, type ConnectionLimits } from './connection';
import { BufferPool } from './buffer-pool';
import { RequestBudget } from './request-budget';
import type { Router } from './router';

export interface ListenerLimits extends ConnectionLimits {
  maxConnections: number;          // max.connections
  maxConnectionsPerIp: number;     // max.connections.per.ip
  /** max.connections.per.ip.overrides: host name or address -> most connections. */
  maxConnectionsPerIpOverrides: Map<string, number>;
  maxQueuedRequests: number;       // queued.max.requests
  maxQueuedBytes: number;          // queued.max.request.bytes (-1: no limit)
}

export class Listener {
  private readonly server: net.Server;
  private readonly connections = new Set<Connection>();
  private readonly perIp = new Map<string, number>();
  /** The overrides by address, filled by listen(). */
  private readonly ipLimits = new Map<string, number>();
  /**
   * Shared by every connection: slabs of 1 MiB, the partition fetch limit of the common clients
   * (larger reads are allocated outside it); 32 idle at most, what a few busy consumers have in flight.
   */
  private readonly fetchBuffers = new BufferPool(1 << 20, 32);
  readonly budget: RequestBudget;

  constructor(router: Router, private readonly limits: ListenerLimits, log: Logger, access: ConnectionAccess) {
    this.budget = new RequestBudget(limits.maxQueuedRequests, limits.maxQueuedBytes);
    this.server = net.createServer((socket) => {
      const ip = normalizeIp(socket.remoteAddress ?? '');
      const peer = `${socket.remoteAddress}:${socket.remotePort}`;
      if (this.connections.size >= limits.maxConnections) {
        log.warn({ peer, reason: 'max.connections reached' }, 'refusing connection');
        socket.destroy();
        return;
      }
      const fromIp = this.perIp.get(ip) ?? 0;
      const ipLimit = this.ipLimits.get(ip) ?? limits.maxConnectionsPerIp;
      if (fromIp >= ipLimit) {
        log.info({ peer }, `Rejected connection from ${ip}, address already has the configured maximum of ${ipLimit} connections.`);
        socket.destroy();
        return;
      }
      this.perIp.set(ip, fromIp + 1);
      const connection = new Connection(socket, router, limits, log, (c) => {
        this.connections.delete(c);
        const left = (this.perIp.get(ip) ?? 1) - 1;
        if (left > 0) this.perIp.set(ip, left);
        else this.perIp.delete(ip);
      }, this.fetchBuffers, this.budget, access);
      this.connections.add(connection);
    });
  }

  /** Binds host:port ('' = every interface, port 0 = any free port) and returns the bound port. */
  async listen(host: string, port: number): Promise<number> {
    for (const [name, count] of this.limits.maxConnectionsPerIpOverrides) {
      for (const { address } of await lookup(name, { all: true })) this.ipLimits.set(normalizeIp(address), count);
    }
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen({ host: host === '' ? undefined : host, port }, () => {
        this.server.off('error', reject);
        resolve((this.server.address() as net.AddressInfo).port);
      });
    });
  }

  async close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const c of [...this.connections]) c.close('broker shutting down', 'debug');
    await closed;
  }
}
