// The TCP listener: accepts connections and hands each to a Connection; closes them all on shutdown.
// - max.connections: a connection over it is closed at accept (warn). It and max.connections.per.ip
//   are read at each accept (the broker passes getters of its dynamic config).
// - max.connections.per.ip and its overrides (host names resolved once, at start, as Kafka's
//   ConnectionQuotas does): a connection over its address's limit is closed at accept, logged at
//   info as Kafka does ("Rejected connection from ...").
// - One RequestBudget (queued.max.requests, queued.max.request.bytes) shared by every connection.
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

export class Listener {
  private readonly server: net.Server;
  private readonly connections = new Set<Connection>();
  /** TLS sockets accepted and still in their handshake. */
  private readonly handshaking = new Set<tls.TLSSocket>();
  private readonly perIp = new Map<string, number>();
  /** The overrides by address, filled by listen(). */
  private readonly ipLimits = new Map<string, number>();
  /**
   * Shared by every connection: slabs of 1 MiB, the partition fetch limit of the common clients
   * (larger reads are allocated outside it); 32 idle at most, what a few busy consumers have in flight.
   */
  private readonly fetchBuffers = new BufferPool(1 << 20, 32);
  readonly budget: RequestBudget;

  constructor(
    private readonly router: Router,
    private readonly limits: ListenerLimits,
    private readonly log: Logger,
    private readonly access: ConnectionAccess,
    private readonly tls: ServerTls | null = null,
  ) {
    this.budget = new RequestBudget(limits.maxQueuedRequests, limits.maxQueuedBytes);
    this.server = net.createServer((socket) => {
      const ip = normalizeIp(socket.remoteAddress ?? '');
      const peer = `${socket.remoteAddress}:${socket.remotePort}`;
      if (this.connections.size + this.handshaking.size >= limits.maxConnections) {
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
      if (this.tls) this.handshake(socket, this.tls, ip, peer);
      else this.serve(socket, ip);
    });
  }

  private serve(socket: net.Socket, ip: string): Connection {
    const connection = new Connection(socket, this.router, this.limits, this.log, (c) => {
      this.connections.delete(c);
      this.release(ip);
    }, this.fetchBuffers, this.budget, this.access);
    this.connections.add(connection);
    return connection;
  }

  private release(ip: string): void {
    const left = (this.perIp.get(ip) ?? 1) - 1;
    if (left > 0) this.perIp.set(ip, left);
    else this.perIp.delete(ip);
  }

  private handshake(socket: net.Socket, serverTls: ServerTls, ip: string, peer: string): void {
    const secure = new tls.TLSSocket(socket, {
      isServer: true,
      secureContext: serverTls.context,
      requestCert: serverTls.clientAuth !== 'none',
      // 'requested': a certificate that does not verify is refused below, no certificate is ANONYMOUS.
      rejectUnauthorized: serverTls.clientAuth === 'required',
    });
    this.handshaking.add(secure);
    let settled = false;
    const fail = (level: 'info' | 'warn', reason: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      this.handshaking.delete(secure);
      this.release(ip);
      this.log[level]({ peer, listener: this.access.listenerName, reason }, 'TLS handshake failed');
      secure.destroy();
    };
    const timer = setTimeout(() => fail('warn', `no TLS handshake within ${this.limits.handshakeTimeoutMs} ms`), this.limits.handshakeTimeoutMs);
    const onError = (err: Error) => fail('info', err.message);
    const onClose = () => fail('info', 'peer closed during the handshake');
    secure.on('error', onError);
    secure.once('close', onClose);
    secure.once('secure', () => {
      if (settled) return;
      const certificateError = secure.getPeerX509Certificate() ? secure.authorizationError : null;
      if (certificateError) return fail('info', `client certificate not trusted: ${String(certificateError)}`);
      const principal = certificatePrincipal(secure, serverTls.principalMapper);
      if (principal === null) return fail('info', 'no ssl.principal.mapping.rules rule applies to the client certificate');
      settled = true; // from here on, the Connection owns the socket and its accounting
      clearTimeout(timer);
      this.handshaking.delete(secure);
      secure.off('error', onError);
      secure.off('close', onClose);
      const connection = this.serve(secure, ip);
      connection.session = { ...connection.session, principal };
      this.log.debug({ peer, listener: this.access.listenerName, principal: `${principal.principalType}:${principal.name}` }, 'TLS handshake done');
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

  /** The sessions of the connections open now (who is connected, as what): for tests and diagnostics. */
  sessions(): Session[] {
    return [...this.connections].map((c) => c.session);
  }

  async close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const c of [...this.connections]) c.close('broker shutting down', 'debug');
    for (const socket of [...this.handshaking]) socket.destroy();
    await closed;
  }
}
