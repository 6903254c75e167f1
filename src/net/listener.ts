// The TCP listener: accepts connections and hands each to a Connection; closes them all on shutdown.
// - max.connections: a connection over it is closed at accept (warn). It and max.connections.per.ip
//   are read at each accept (the broker passes getters of its dynamic config).
// - max.connections.per.ip and its overrides (host names resolved once, at start, as Kafka's
//   ConnectionQuotas does): a connection over its address's limit is closed at accept, logged at
//   info as Kafka does ("Rejected connection from ...").
// - One RequestBudget (queued.max.requests, queued.max.request.bytes) shared by every connection.
// - A broker's listeners share these counts and the budget (ListenerShared), as Kafka's are broker-wide.
// - TLS (SSL and SASL_SSL listeners): the handshake runs on the accepted socket (counted against the
//   limits above from the accept); the Connection starts once it completes, with the principal of the
//   client certificate (src/security/tls.ts). A handshake that fails is logged at info with the peer
//   and the reason; one not done within handshakeTimeoutMs is closed (warn): neither touches other
//   connections. With ssl.client.auth=requested, a certificate that does not verify fails the
//   handshake, as in Java; without one the client is ANONYMOUS.
import * as net from 'node:net';
import * as tls from 'node:tls';
import { lookup } from 'node:dns/promises';
import type { Logger } from 'pino';
import { Connection, normalizeIp, type ConnectionAccess, type ConnectionLimits } from './connection';
import { BufferPool } from './buffer-pool';
import { RequestBudget } from './request-budget';
import type { Router } from './router';
import { certificatePrincipal, type ServerTls } from '../security/tls';
import type { Session } from '../security/principal';

export interface ListenerLimits extends ConnectionLimits {
  maxConnections: number;          // max.connections
  maxConnectionsPerIp: number;     // max.connections.per.ip
  /** max.connections.per.ip.overrides: host name or address -> most connections. */
  maxConnectionsPerIpOverrides: Map<string, number>;
  maxQueuedRequests: number;       // queued.max.requests
  maxQueuedBytes: number;          // queued.max.request.bytes (-1: no limit)
  /** How long a TLS handshake may take before the socket is closed. */
  handshakeTimeoutMs: number;
}

/**
 * What a broker's listeners share, as Kafka's ConnectionQuotas and request channel are broker-wide:
 * the connection counts (max.connections, max.connections.per.ip), the RequestBudget, the fetch buffers.
 */
export class ListenerShared {
  /** Connections (and TLS handshakes) open on every listener, in all and by address. */
  open = 0;
  readonly perIp = new Map<string, number>();
  /** The overrides by address, filled by the listeners' listen(). */
  readonly ipLimits = new Map<string, number>();
  /**
   * Slabs of 1 MiB, the partition fetch limit of the common clients (larger reads are allocated
   * outside it); 32 idle at most, what a few busy consumers have in flight.
   */
  readonly fetchBuffers = new BufferPool(1 << 20, 32);
  readonly budget: RequestBudget;

  constructor(limits: ListenerLimits) {
    this.budget = new RequestBudget(limits.maxQueuedRequests, limits.maxQueuedBytes);
  }
}

export class Listener {
  private readonly server: net.Server;
  private readonly connections = new Set<Connection>();
  /** Accepted sockets still in their TLS handshake, by peer address. */
  private readonly handshaking = new Map<string, net.Socket>();
  /** Runs the handshakes of a TLS listener (it never listens itself: accepted sockets are handed to it). */
  private readonly tlsServer: tls.Server | null = null;
  readonly budget: RequestBudget;

  constructor(
    private readonly router: Router,
    private readonly limits: ListenerLimits,
    private readonly log: Logger,
    private readonly access: ConnectionAccess,
    serverTls: ServerTls | null = null,
    private readonly shared = new ListenerShared(limits),
  ) {
    this.budget = shared.budget;
    if (serverTls) {
      const tlsServer = tls.createServer({
        ...serverTls.options,
        requestCert: serverTls.clientAuth !== 'none',
        rejectUnauthorized: serverTls.clientAuth === 'required',
        handshakeTimeout: limits.handshakeTimeoutMs,
      }, (secure) => this.secured(secure, serverTls));
      tlsServer.on('tlsClientError', (err, secure) => {
        const peer = `${secure.remoteAddress ?? secure.localAddress}:${secure.remotePort}`;
        const timedOut = err.message === 'TLS handshake timeout';
        this.log[timedOut ? 'warn' : 'info']({ peer, listener: access.listenerName,
          reason: timedOut ? `no TLS handshake within ${limits.handshakeTimeoutMs} ms` : err.message }, 'TLS handshake failed');
        secure.destroy();
      });
      this.tlsServer = tlsServer;
    }
    this.server = net.createServer((socket) => {
      const ip = normalizeIp(socket.remoteAddress ?? '');
      const peer = `${socket.remoteAddress}:${socket.remotePort}`;
      if (shared.open >= limits.maxConnections) {
        log.warn({ peer, reason: 'max.connections reached' }, 'refusing connection');
        socket.destroy();
        return;
      }
      const fromIp = shared.perIp.get(ip) ?? 0;
      const ipLimit = shared.ipLimits.get(ip) ?? limits.maxConnectionsPerIp;
      if (fromIp >= ipLimit) {
        log.info({ peer }, `Rejected connection from ${ip}, address already has the configured maximum of ${ipLimit} connections.`);
        socket.destroy();
        return;
      }
      shared.perIp.set(ip, fromIp + 1);
      shared.open++;
      if (this.tlsServer) this.handshake(socket, this.tlsServer, ip, peer);
      else this.serve(socket, ip);
    });
  }

  private serve(socket: net.Socket, ip: string): Connection {
    const connection = new Connection(socket, this.router, this.limits, this.log, (c) => {
      this.connections.delete(c);
      this.release(ip);
    }, this.shared.fetchBuffers, this.budget, this.access);
    this.connections.add(connection);
    return connection;
  }

  private release(ip: string): void {
    this.shared.open--;
    const left = (this.shared.perIp.get(ip) ?? 1) - 1;
    if (left > 0) this.shared.perIp.set(ip, left);
    else this.shared.perIp.delete(ip);
  }

  /** Handed to the TLS server: its handshake (and its timeout) runs on the accepted socket. */
  private handshake(socket: net.Socket, tlsServer: tls.Server, ip: string, peer: string): void {
    this.handshaking.set(peer, socket);
    // Until the Connection owns it, the socket's end is the handshake's: a failure or timeout destroys it.
    socket.once('close', () => {
      if (this.handshaking.delete(peer)) this.release(ip);
    });
    tlsServer.emit('connection', socket);
  }

  private secured(secure: tls.TLSSocket, serverTls: ServerTls): void {
    const peer = `${secure.remoteAddress}:${secure.remotePort}`;
    const refuse = (reason: string) => {
      this.log.info({ peer, listener: this.access.listenerName, reason }, 'TLS handshake failed');
      secure.destroy();
    };
    // 'requested': a certificate that does not verify is refused, no certificate is ANONYMOUS.
    if (!secure.authorized && secure.getPeerX509Certificate()) return refuse(`client certificate not trusted: ${String(secure.authorizationError)}`);
    const principal = certificatePrincipal(secure, serverTls.principalMapper);
    if (principal === null) return refuse('no ssl.principal.mapping.rules rule applies to the client certificate');
    const ip = normalizeIp(secure.remoteAddress ?? '');
    if (!this.handshaking.delete(peer)) return refuse('closed during the handshake');
    const connection = this.serve(secure, ip);
    connection.session = { ...connection.session, principal };
    this.log.debug({ peer, listener: this.access.listenerName, principal: `${principal.principalType}:${principal.name}` }, 'TLS handshake done');
  }

  /** Binds host:port ('' = every interface, port 0 = any free port) and returns the bound port. */
  async listen(host: string, port: number): Promise<number> {
    for (const [name, count] of this.limits.maxConnectionsPerIpOverrides) {
      for (const { address } of await lookup(name, { all: true })) this.shared.ipLimits.set(normalizeIp(address), count);
    }
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen({ host: host === '' ? undefined : host, port }, () => {
        this.server.off('error', reject);
        resolve((this.server.address() as net.AddressInfo).port);
      });
    });
  }

  /** The sessions of the connections open now (who is connected, as what): for tests and diagnostics. */
  sessions(): Session[] {
    return [...this.connections].map((c) => c.session);
  }

  async close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const c of [...this.connections]) c.close('broker shutting down', 'debug');
    for (const socket of [...this.handshaking.values()]) socket.destroy();
    await closed;
  }
}
