// The TCP listener: accepts connections and hands each to a Connection; closes them all on shutdown.
import * as net from 'node:net';
import type { Logger } from 'pino';
import { Connection, type ConnectionLimits } from './connection';
import { BufferPool } from './buffer-pool';
import type { Router } from './router';

export class Listener {
  private readonly server: net.Server;
  private readonly connections = new Set<Connection>();
  /**
   * Shared by every connection: slabs of 1 MiB, the partition fetch limit of the common clients
   * (larger reads are allocated outside it); 32 idle at most, what a few busy consumers have in flight.
   */
  private readonly fetchBuffers = new BufferPool(1 << 20, 32);

  constructor(router: Router, limits: ConnectionLimits & { maxConnections: number }, log: Logger) {
    this.server = net.createServer((socket) => {
      if (this.connections.size >= limits.maxConnections) {
        log.warn({ peer: `${socket.remoteAddress}:${socket.remotePort}`, reason: 'max.connections reached' }, 'refusing connection');
        socket.destroy();
        return;
      }
      this.connections.add(new Connection(socket, router, limits, log, (c) => this.connections.delete(c), this.fetchBuffers));
    });
  }

  /** Binds host:port ('' = every interface, port 0 = any free port) and returns the bound port. */
  listen(host: string, port: number): Promise<number> {
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
