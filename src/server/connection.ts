// One client connection: size-prefixed frames in, responses out in request order.
//
// Requests are dispatched in arrival order, each as soon as its frame is complete, so a client
// may pipeline. A handler's synchronous part runs in arrival order; state that must follow
// request order (a partition's append queue) is claimed before the handler's first await.
// Responses may complete out of order (a delayed fetch) but are written strictly in order.
//
// Bad input closes this connection only, with a warn-level line naming the peer and the reason,
// as Kafka does: a size <= 0 or above socket.request.max.bytes, a truncated or garbled body,
// an unknown API key, an unsupported version. The one exception is ApiVersions at a version
// we do not know, answered in the v0 format with UNSUPPORTED_VERSION and our ranges (KIP-511).
import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import { Reader, Writer, ProtocolError } from '../protocol/primitives';
import {
  ApiKey, getApiSpec, decodeRequestHeader, encodeResponseHeader, requestHeaderVersion, responseHeaderVersion,
} from '../protocol/generated';
import type { Router, RequestContext } from './router';
import { apiVersionsUnsupported } from './handlers/api-versions';
import type { BufferPool } from './buffer-pool';

export interface ConnectionLimits {
  maxRequestBytes: number;     // socket.request.max.bytes
  idleMs: number;              // connections.max.idle.ms
  maxInFlight: number;         // requests awaiting their response before we stop reading
}

interface ResponseSlot {
  ready: boolean;
  chunks: Buffer[] | null;     // null: no response at all (acks=0 produce)
  pooled: Buffer[] | null;     // taken from the pool for this response; given back once it is written
}

/** Writes above this many buffered bytes pause reading until the socket drains. */
const WRITE_HIGH_WATER = 4 * 1024 * 1024;

export class Connection {
  readonly peer: string;
  private readonly chunks: Buffer[] = [];
  private buffered = 0;
  private readonly slots: ResponseSlot[] = [];
  private closed = false;
  private paused = false;

  constructor(
    private readonly socket: Socket,
    private readonly router: Router,
    private readonly limits: ConnectionLimits,
    private readonly log: Logger,
    private readonly onClose: (c: Connection) => void,
    private readonly pool: BufferPool,
  ) {
    this.peer = `${socket.remoteAddress}:${socket.remotePort}`;
    socket.setNoDelay(true);
    socket.setTimeout(limits.idleMs);
    socket.on('data', (b) => this.onData(b));
    socket.on('drain', () => this.updateFlow());
    socket.on('timeout', () => {
      if (this.slots.length === 0) this.close('idle for connections.max.idle.ms', 'debug');
    });
    socket.on('error', (err) => this.close(`socket error: ${err.message}`, 'debug'));
    socket.on('close', () => this.close('peer closed', 'debug'));
  }

  /** Closes the connection; warn-level reasons are the peer's fault and worth an operator's eye. */
  close(reason: string, level: 'warn' | 'debug' | 'info' = 'warn'): void {
    if (this.closed) return;
    this.closed = true;
    this.log[level]({ peer: this.peer, reason }, 'closing connection');
    this.chunks.length = 0;
    this.slots.length = 0;
    this.socket.destroy();
    this.onClose(this);
  }

  private onData(data: Buffer): void {
    if (this.closed) return;
    this.chunks.push(data);
    this.buffered += data.length;
    while (!this.closed && this.buffered >= 4) {
      const size = this.peekInt32();
      if (size <= 0 || size > this.limits.maxRequestBytes) {
        this.close(`invalid request size ${size} (socket.request.max.bytes is ${this.limits.maxRequestBytes})`);
        return;
      }
      if (this.buffered < 4 + size) break;
      this.take(4);
      this.onFrame(this.take(size));
    }
    this.updateFlow();
  }

  private peekInt32(): number {
    const first = this.chunks[0];
    if (first.length >= 4) return first.readInt32BE(0);
    const head = Buffer.concat(this.chunks, 4);
    return head.readInt32BE(0);
  }

  /** Removes n buffered bytes; a frame inside one chunk is a view, never a copy. */
  private take(n: number): Buffer {
    this.buffered -= n;
    const first = this.chunks[0];
    if (first.length > n) {
      this.chunks[0] = first.subarray(n);
      return first.subarray(0, n);
    }
    if (first.length === n) {
      this.chunks.shift();
      return first;
    }
    const out = Buffer.allocUnsafe(n);
    let filled = 0;
    while (filled < n) {
      const c = this.chunks[0];
      const want = n - filled;
      if (c.length <= want) {
        c.copy(out, filled);
        filled += c.length;
        this.chunks.shift();
      } else {
        c.copy(out, filled, 0, want);
        this.chunks[0] = c.subarray(want);
        filled += want;
      }
    }
    return out;
  }

  private onFrame(frame: Buffer): void {
    if (frame.length < 8) return this.close(`request of ${frame.length} bytes is shorter than a request header`);
    const apiKey = frame.readInt16BE(0);
    const apiVersion = frame.readInt16BE(2);
    const correlationId = frame.readInt32BE(4);
    const handler = this.router.handler(apiKey);
    if (!handler) return this.close(`unknown or unsupported API key ${apiKey}`);
    if (apiVersion < handler.minVersion || apiVersion > handler.maxVersion) {
      if (apiKey === ApiKey.ApiVersions) {
        return this.respondRaw(correlationId, apiVersionsUnsupported(this.router));
      }
      return this.close(`unsupported version ${apiVersion} of ${handler.name} (we serve ${handler.minVersion}-${handler.maxVersion})`);
    }
    const spec = getApiSpec(apiKey)!;
    let request: unknown;
    let clientId: string | null;
    try {
      const reader = new Reader(frame);
      clientId = decodeRequestHeader(reader, requestHeaderVersion(apiKey, apiVersion)).clientId ?? null;
      request = spec.decodeRequest(reader, apiVersion);
    } catch (err) {
      if (err instanceof ProtocolError || err instanceof RangeError) {
        return this.close(`malformed ${handler.name} v${apiVersion} request: ${err.message}`);
      }
      throw err;
    }

    const slot: ResponseSlot = { ready: false, chunks: null, pooled: null };
    this.slots.push(slot);
    const responseBuffer = (size: number): Buffer => {
      const buf = this.pool.take(size);
      (slot.pooled ??= []).push(buf);
      return buf;
    };
    const ctx: RequestContext = { apiKey, apiVersion, correlationId, clientId, peer: this.peer, connection: this, responseBuffer };
    const finish = (response: unknown): void => {
      if (this.closed) return;
      if (response !== null) slot.chunks = this.encodeResponse(apiKey, apiVersion, correlationId, response);
      slot.ready = true;
      this.flush();
    };
    const fail = (err: unknown): void => {
      this.log.error({ err, peer: this.peer, api: handler.name, apiVersion }, 'request handler failed');
      this.close(`${handler.name} handler failed`, 'info');
    };
    try {
      const result = handler.handle(request, ctx);
      if (result instanceof Promise) result.then(finish, fail);
      else finish(result);
    } catch (err) {
      fail(err);
    }
  }

  private encodeResponse(apiKey: number, apiVersion: number, correlationId: number, response: unknown): Buffer[] {
    const w = new Writer();
    const size = w.reserve(4);
    encodeResponseHeader(w, { correlationId }, responseHeaderVersion(apiKey, apiVersion));
    getApiSpec(apiKey)!.encodeResponse(w, response, apiVersion);
    size.writeInt32BE(w.length - 4);
    return w.finish();
  }

  /** A response built outside the normal path (the KIP-511 ApiVersions fallback). */
  private respondRaw(correlationId: number, body: (w: Writer) => void): void {
    const w = new Writer();
    const size = w.reserve(4);
    encodeResponseHeader(w, { correlationId }, 0);
    body(w);
    size.writeInt32BE(w.length - 4);
    this.slots.push({ ready: true, chunks: w.finish(), pooled: null });
    this.flush();
  }

  private flush(): void {
    let wrote = false;
    while (this.slots.length > 0 && this.slots[0].ready) {
      const slot = this.slots.shift()!;
      if (slot.chunks === null) continue;
      if (!wrote) this.socket.cork();
      wrote = true;
      const last = slot.chunks.length - 1;
      for (let i = 0; i < last; i++) this.socket.write(slot.chunks[i]);
      const pooled = slot.pooled;
      // The callback runs once the kernel has the bytes: only then may the pool hand them out again.
      this.socket.write(slot.chunks[last], pooled ? (err) => {
        if (!err) for (const b of pooled) this.pool.give(b);
      } : undefined);
    }
    if (wrote) this.socket.uncork();
    this.updateFlow();
  }

  /** Stops reading while too many requests await their turn or the peer reads too slowly. */
  private updateFlow(): void {
    if (this.closed) return;
    const congested = this.slots.length >= this.limits.maxInFlight || this.socket.writableLength > WRITE_HIGH_WATER;
    if (congested && !this.paused) {
      this.paused = true;
      this.socket.pause();
    } else if (!congested && this.paused) {
      this.paused = false;
      this.socket.resume();
    }
  }
}

