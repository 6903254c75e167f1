// One client connection: size-prefixed frames in, responses out in request order.
//
// Ordering, as Kafka's (which mutes a connection until its response is sent): a request's handler
// starts only once every request before it on its connection has its response, so each request
// sees the effects of those before it (librdkafka pipelines DeleteTopics and an auto-creating
// Metadata for the same name). One exception keeps pipelined producers fast: consecutive Produce
// requests overlap, which is safe because a Produce claims its place in each partition's append
// order synchronously, before its first await (ReplicaManager.append). Responses are written
// strictly in request order.
//
// Limits, as Kafka's: at most maxInFlight requests decoded and unanswered per connection; the
// broker-wide RequestBudget (queued.max.requests, queued.max.request.bytes); no new handler starts
// while more than WRITE_HIGH_WATER bytes of responses wait for a peer that does not read, so a slow
// reader holds at most that plus the responses already being built. Reading pauses meanwhile.
// Fairness: at most FRAMES_PER_TURN frames of one socket read are taken before the other connections
// get a turn of the event loop. A frame that arrives in pieces is assembled in one buffer of its size;
// above 1 MiB, one whose memory grows with the bytes that arrive and is given back to the OS at once if
// the peer leaves mid-frame (a claimed size alone commits at most 1 MiB).
//
// Client quotas (quota-enforcement.ts): while any is configured, each answered request is recorded
// against them; over one, the connection is muted (throttle: no frame read, no handler started) for
// the throttle time, and a response of a version from before KIP-219 is held back that long.
//
// Bad input closes this connection only, with a warn-level line naming the peer and the reason:
// a size <= 0 or above socket.request.max.bytes, a truncated or garbled body, an unknown API key,
// an unsupported version. The one exception is ApiVersions at a version we do not know, answered
// in the v0 format with UNSUPPORTED_VERSION and our ranges (KIP-511). A handler that throws or
// builds a response the encoder rejects closes the connection too (error level: that is our bug),
// and nothing else: other connections keep being served.
//
// On a SASL_* listener the connection's SaslAuthenticator (sasl-authenticator.ts) is asked of every
// frame: until the exchange completes only ApiVersions and SASL frames are taken, one at a time and
// each at most sasl.server.max.receive.size; the bare tokens that follow a SaslHandshake v0 are
// passed to it as they are; a failed exchange's answer is written, then the connection closes. Its
// completion replaces `session`, which every request after it carries.
import { isIPv4, type Socket } from 'node:net';
import type { Logger } from 'pino';
import { Reader, Writer, ProtocolError } from '../protocol/primitives';
import {
  ApiKey, getApiSpec, decodeRequestHeader, encodeResponseFrame, requestHeaderVersion, type ApiRequestMap, type ApiResponseMap,
} from '../protocol/generated';
import type { RequestContext, ApiHandler } from '../handlers/handler';
import { apiVersionsUnsupported } from '../handlers/api-versions';
import type { Router } from './router';
import type { BufferPool } from './buffer-pool';
import type { RequestBudget } from './request-budget';
import { ANONYMOUS, type Session } from '../security/principal';
import type { Authorizer } from '../security/acl';
import type { SecurityProtocol } from '../config/broker-config';
import type { ClientQuotas } from '../cluster/client-quota-manager';
import { clientThrottles, recordAndThrottle } from './quota-enforcement';
import type { SaslListenerSettings } from '../security/sasl-config';
import { SaslAuthenticator } from './sasl-authenticator';
import { fetchReplicaId } from '../handlers/fetch';
import type { FetchRequest } from '../protocol/generated/FetchRequest';
import type { BrokerMetrics } from '../metrics/broker-metrics';
import type { ApiMeters } from '../metrics/request-metrics';
import type { ListenerMeters } from '../metrics/network-metrics';

export interface ConnectionLimits {
  maxRequestBytes: number;     // socket.request.max.bytes
  idleMs: number;              // connections.max.idle.ms
  maxInFlight: number;         // requests decoded and unanswered before this connection stops reading
}

/** The listener a connection came in on, the authorizer its requests are checked by, the quotas they count against. */
export interface ConnectionAccess {
  readonly listenerName: string;
  readonly securityProtocol: SecurityProtocol;
  readonly authorizer: Authorizer;
  readonly quotas: ClientQuotas;
  /** On a SASL_* listener: its mechanisms and limits; every connection must authenticate first. */
  readonly sasl?: SaslListenerSettings;
  /** The broker's metrics: requests per API, connections per listener. */
  readonly metrics: BrokerMetrics;
}

/** One request from its decoding until its response is handed to the socket. */
interface InFlight {
  readonly isProduce: boolean;
  /** Bytes of its frame, reserved in the budget until its response is ready. */
  frameBytes: number;
  /** Starts the handler; null once started (or for a request answered at decoding). */
  start: (() => void) | null;
  ready: boolean;
  chunks: Buffer[] | null;     // null: no response at all (acks=0 produce)
  pooled: Buffer[] | null;     // taken from the pool for this response; given back once it is written
  /** The connection closes once this response is written (a failed SASL authentication), for this reason. */
  closeAfterWrite?: string;
  /** Where it is counted: its API's meters, and Fetch's FetchConsumer or FetchFollower ones; null: not a request (a raw SASL token). */
  meters: ApiMeters | null;
  splitMeters: ApiMeters | null;
  /** performance.now() when its frame was taken, its handler started, its response was ready. */
  receivedAt: number;
  startedAt: number;
  readyAt: number;
  /** Of its handler's time, what it waited in a purgatory (RequestContext.waitedRemotely). */
  remoteMs: number;
  requestBytes: number;
  responseBytes: number;
}

/** What an InFlight that is not counted as a request carries (a raw SASL token, an ApiVersions answered at decoding). */
const UNCOUNTED = { meters: null, splitMeters: null, receivedAt: 0, startedAt: 0, readyAt: 0, remoteMs: 0, requestBytes: 0, responseBytes: 0 } as const;

/** A frame larger than this that arrives in pieces is assembled in a resizable buffer. */
const LARGE_FRAME_BYTES = 1 << 20;

/** An ES2024 resizable ArrayBuffer (Node 20 has them; TypeScript's ES2022 library does not). */
interface ResizableArrayBuffer extends ArrayBuffer {
  resize(byteLength: number): void;
}

/**
 * V8 reserves address space for maxByteLength and commits pages only as the buffer grows; a resize
 * to 0 gives them back to the OS at once, where a dropped Buffer waits for a garbage collection
 * (and then often stays in the allocator: 40 MB partial frames left ~560 MB resident, issue 11).
 */
function resizableBuffer(maxByteLength: number): ResizableArrayBuffer {
  const Resizable = ArrayBuffer as unknown as new (length: number, options: { maxByteLength: number }) => ResizableArrayBuffer;
  return new Resizable(0, { maxByteLength });
}

/** Frames taken from one socket read before the other connections get a turn of the event loop. */
const FRAMES_PER_TURN = 16;

/** Responses buffered for the socket above this many bytes: no new handler starts until it drains. */
const WRITE_HIGH_WATER = 4 * 1024 * 1024;

export class Connection {
  readonly peer: string;
  /** Replaced when authentication (SASL, a client certificate) establishes a principal. */
  session: Session;
  /** The SASL exchange on a SASL_* listener; null on others. */
  private readonly sasl: SaslAuthenticator | null;
  private readonly inFlight: InFlight[] = [];
  private closed = false;
  /** Told once when the connection closes (RequestContext.onConnectionClose). */
  private readonly closeListeners = new Set<() => void>();
  private paused = false;
  /** Muted for a quota until this timer fires (see throttle). */
  private throttleTimer: NodeJS.Timeout | null = null;
  private throttledUntil = 0;
  /** readFrames is on the stack: a handler answered synchronously must not start another loop (depth). */
  private reading = false;
  /** The unread rest of the last socket read (left there while this connection may not read frames). */
  private input: Buffer | null = null;
  private readonly sizePrefix = Buffer.alloc(4);
  private prefixFilled = 0;
  /** A frame arriving over several reads, and how much of it is in. */
  private frame: Buffer | null = null;
  private frameFilled = 0;
  /** The same for a frame over LARGE_FRAME_BYTES: its memory is committed as the bytes arrive. */
  private largeFrame: ResizableArrayBuffer | null = null;
  /** Frames taken since the last socket read or scheduled read (FRAMES_PER_TURN), and whether one is scheduled. */
  private framesThisTurn = 0;
  private readScheduled = false;
  /** Reads on in a later turn: other connections' I/O comes first (see readFrames). */
  private readonly scheduleRead = (): void => {
    if (this.readScheduled || this.closed) return;
    this.readScheduled = true;
    setImmediate(() => {
      this.readScheduled = false;
      this.framesThisTurn = 0;
      this.readFrames();
    });
  };
  /** Responses are corked until the end of the tick (see flush). */
  private corked = false;
  private readonly uncork = (): void => {
    this.corked = false;
    this.socket.uncork();
  };

  /** This connection's listener's counts (connections, authentications). */
  private readonly listenerMeters: ListenerMeters;

  constructor(
    private readonly socket: Socket,
    private readonly router: Router,
    private readonly limits: ConnectionLimits,
    private readonly log: Logger,
    private readonly onClose: (c: Connection) => void,
    private readonly pool: BufferPool,
    private readonly budget: RequestBudget,
    private readonly access: ConnectionAccess,
  ) {
    this.peer = `${socket.remoteAddress}:${socket.remotePort}`;
    this.listenerMeters = access.metrics.network.listener(access.listenerName);
    this.listenerMeters.connectionsCreated++;
    this.session = {
      principal: ANONYMOUS,
      clientAddress: normalizeIp(socket.remoteAddress ?? ''),
      listenerName: access.listenerName,
      securityProtocol: access.securityProtocol,
    };
    this.sasl = access.sasl ? new SaslAuthenticator(access.sasl, this.session, this.peer, log, {
      authenticated: (session) => {
        this.session = session;
        this.listenerMeters.authenticationsSucceeded++;
      },
      failed: () => this.listenerMeters.authenticationsFailed++,
      close: (reason) => this.close(reason, 'info'),
    }) : null;
    socket.setNoDelay(true);
    socket.setTimeout(limits.idleMs);
    socket.on('data', (b) => this.onData(b));
    socket.on('drain', () => this.startNext());
    socket.on('timeout', () => {
      if (this.inFlight.length === 0) this.close('idle for connections.max.idle.ms', 'debug');
    });
    socket.on('error', (err) => this.close(`socket error: ${err.message}`, 'debug'));
    socket.on('close', () => this.close('peer closed', 'debug'));
  }

  /** Closes the connection; warn-level reasons are the peer's fault and worth an operator's eye. */
  close(reason: string, level: 'warn' | 'debug' | 'info' | 'error' = 'warn'): void {
    if (this.closed) return;
    this.closed = true;
    this.listenerMeters.connectionsClosed++;
    this.sasl?.dispose();
    this.log[level]({ peer: this.peer, reason }, 'closing connection');
    for (const r of this.inFlight) this.settle(r);
    this.inFlight.length = 0;
    if (this.prefixFilled === 4) this.budget.releaseBytes(this.sizePrefix.readInt32BE(0));
    this.frame = null;
    this.largeFrame?.resize(0);
    this.largeFrame = null;
    this.input = null;
    this.budget.forget(this.scheduleRead);
    if (this.throttleTimer) clearTimeout(this.throttleTimer);
    this.socket.destroy();
    this.onClose(this);
    for (const listener of this.closeListeners) {
      try {
        listener();
      } catch (err) {
        this.log.error({ err, peer: this.peer }, 'a connection close listener failed');
      }
    }
    this.closeListeners.clear();
  }

  /**
   * Mutes the connection for `ms` (a client over its quota, KIP-219): no frame is read and no handler
   * started until then; responses already made still go out. A longer throttle extends the mute.
   */
  throttle(ms: number): void {
    const until = Date.now() + ms;
    if (this.closed || until <= this.throttledUntil) return;
    this.throttledUntil = until;
    if (this.throttleTimer) clearTimeout(this.throttleTimer);
    this.throttleTimer = setTimeout(() => {
      this.throttleTimer = null;
      this.throttledUntil = 0;
      this.startNext();
      if (this.input !== null) this.scheduleRead();
    }, ms);
    this.updateFlow();
  }

  private onData(data: Buffer): void {
    if (this.closed) return;
    // Reading pauses while bytes wait in `input`; should a read still arrive, it queues behind them.
    this.input = this.input === null ? data : Buffer.concat([this.input, data]);
    this.framesThisTurn = 0;
    this.readFrames();
  }

  /** Reads whole frames from `input` while this connection and the broker may take more. */
  private readFrames(): void {
    if (this.reading) return;
    this.reading = true;
    try {
      this.readFramesNow();
    } finally {
      this.reading = false;
    }
    this.updateFlow();
  }

  private readFramesNow(): void {
    // The frames of one read arrived together: one clock reading for all (their requests' receipt time).
    const readAt = performance.now();
    while (!this.closed && this.input !== null) {
      if (this.prefixFilled < 4) {
        if (this.prefixFilled === 0 && !this.mayReadFrame()) break;
        if (this.prefixFilled === 0 && this.framesThisTurn++ === FRAMES_PER_TURN) {
          this.scheduleRead();
          break;
        }
        if (!this.readSizePrefix() || this.input === null) continue;
      }
      const size = this.sizePrefix.readInt32BE(0);
      if (this.frameFilled === 0 && this.input.length >= size) {
        // The whole frame is in this read: a view, never a copy.
        const frame = this.input.subarray(0, size);
        this.consume(size);
        this.prefixFilled = 0;
        this.onFrame(frame, readAt);
        continue;
      }
      const n = Math.min(size - this.frameFilled, this.input.length);
      if (size > LARGE_FRAME_BYTES) {
        this.largeFrame ??= resizableBuffer(size);
        this.largeFrame.resize(this.frameFilled + n);
        this.input.copy(new Uint8Array(this.largeFrame), this.frameFilled, 0, n);
      } else {
        this.frame ??= Buffer.allocUnsafe(size);
        this.input.copy(this.frame, this.frameFilled, 0, n);
      }
      this.frameFilled += n;
      this.consume(n);
      if (this.frameFilled === size) this.onFrame(this.takeAssembledFrame(), readAt);
    }
  }

  /**
   * The frame assembled over several reads. A large one is copied out of its resizable buffer, whose
   * memory goes back at once: the request's views (Produce records, group metadata) may outlive it.
   */
  private takeAssembledFrame(): Buffer {
    let frame = this.frame;
    if (this.largeFrame) {
      frame = Buffer.allocUnsafe(this.frameFilled);
      frame.set(new Uint8Array(this.largeFrame));
      this.largeFrame.resize(0);
    }
    this.frame = null;
    this.largeFrame = null;
    this.frameFilled = 0;
    this.prefixFilled = 0;
    return frame!;
  }

  /** Reads (what arrived of) the 4-byte size; true once it is complete, valid and reserved. */
  private readSizePrefix(): boolean {
    const input = this.input!;
    const n = Math.min(4 - this.prefixFilled, input.length);
    input.copy(this.sizePrefix, this.prefixFilled, 0, n);
    this.prefixFilled += n;
    this.consume(n);
    if (this.prefixFilled < 4) return false;
    const size = this.sizePrefix.readInt32BE(0);
    const maxBytes = this.sasl ? this.sasl.maxFrameBytes(this.limits.maxRequestBytes) : this.limits.maxRequestBytes;
    if (size <= 0 || size > maxBytes) {
      this.prefixFilled = 0;
      this.close(maxBytes === this.limits.maxRequestBytes
        ? `invalid request size ${size} (socket.request.max.bytes is ${maxBytes})`
        : `Failing SASL authentication due to invalid receive size ${size} (sasl.server.max.receive.size is ${maxBytes})`);
      return false;
    }
    this.budget.reserveBytes(size);
    return true;
  }

  private consume(n: number): void {
    this.input = n === this.input!.length ? null : this.input!.subarray(n);
  }

  /** A new frame may be read: this connection is under its in-flight cap and the broker's budget has room. */
  private mayReadFrame(): boolean {
    if (this.inFlight.length >= this.limits.maxInFlight || this.throttleTimer !== null) return false;
    // A SASL exchange takes one frame at a time: what the next one is depends on the answer to this one.
    if (this.sasl?.exchanging && this.inFlight.length > 0) return false;
    if (this.budget.exhausted) {
      this.budget.whenFree(this.scheduleRead);
      return false;
    }
    return true;
  }

  /** A whole frame, taken off the socket at `receivedAt` (performance.now()). */
  private onFrame(frame: Buffer, receivedAt: number): void {
    const frameBytes = frame.length;
    if (this.sasl?.expectsRawToken) return this.onRawSaslToken(frame);
    if (frame.length < 8) return this.reject(frameBytes, `request of ${frame.length} bytes is shorter than a request header`);
    const apiKey = frame.readInt16BE(0);
    const apiVersion = frame.readInt16BE(2);
    const correlationId = frame.readInt32BE(4);
    const saslRefusal = this.sasl?.admit(apiKey);
    if (saslRefusal) return this.reject(frameBytes, saslRefusal, 'info');
    const handler = this.router.handler(apiKey);
    if (!handler) return this.reject(frameBytes, `unknown or unsupported API key ${apiKey}`);
    if (apiVersion < handler.minVersion || apiVersion > handler.maxVersion) {
      if (apiKey === ApiKey.ApiVersions) {
        this.budget.releaseBytes(frameBytes);
        const body = apiVersionsUnsupported(this.router.served());
        this.inFlight.push({
          ...UNCOUNTED, isProduce: false, frameBytes: 0, start: null, ready: true, pooled: null,
          chunks: encodeResponseFrame(new Writer(), ApiKey.ApiVersions, 0, correlationId, body),
        });
        return this.flush();
      }
      return this.reject(frameBytes, `unsupported version ${apiVersion} of ${handler.name} (we serve ${handler.minVersion}-${handler.maxVersion})`);
    }
    let request: ApiRequestMap[ApiKey];
    let clientId: string | null;
    try {
      const reader = new Reader(frame);
      clientId = decodeRequestHeader(reader, requestHeaderVersion(apiKey, apiVersion)).clientId ?? null;
      request = getApiSpec(apiKey)!.decodeRequest(reader, apiVersion) as ApiRequestMap[ApiKey];
    } catch (err) {
      if (err instanceof ProtocolError || err instanceof RangeError) {
        return this.reject(frameBytes, `malformed ${handler.name} v${apiVersion} request: ${err.message}`);
      }
      this.log.error({ err, peer: this.peer, api: handler.name, apiVersion }, 'request decoding failed');
      return this.reject(frameBytes, `${handler.name} v${apiVersion} request could not be decoded`, 'error');
    }

    const { requests } = this.access.metrics;
    const entry: InFlight = {
      isProduce: apiKey === ApiKey.Produce, frameBytes, start: null, ready: false, chunks: null, pooled: null,
      meters: requests.api(handler.name),
      // Kafka counts a Fetch also as a consumer's or a follower's.
      splitMeters: apiKey === ApiKey.Fetch
        ? requests.api(fetchReplicaId(request as FetchRequest, apiVersion) >= 0 ? 'FetchFollower' : 'FetchConsumer') : null,
      receivedAt, startedAt: 0, readyAt: 0, remoteMs: 0, requestBytes: frameBytes, responseBytes: 0,
    };
    const session = this.session;
    const { authorizer } = this.access;
    const audit = { requestName: handler.name };
    const ctx: RequestContext = {
      apiKey, apiVersion, correlationId, clientId, peer: this.peer, session, sasl: this.sasl ?? undefined,
      authorize: (op, type, name, logging) => authorizer.authorize(session, op, type, name, logging ? { ...audit, ...logging } : audit),
      authorizeByResourceType: (op, type) => authorizer.authorizeByResourceType(session, op, type, audit),
      closeConnection: (reason: string) => this.close(reason, 'info'),
      onConnectionClose: (listener) => {
        // Closed while the request ran: told on the next tick, once the caller has what it registered.
        if (this.closed) {
          queueMicrotask(listener);
          return () => undefined;
        }
        const once = () => listener();
        this.closeListeners.add(once);
        return () => {
          this.closeListeners.delete(once);
        };
      },
      responseBuffer: (size: number): Buffer => {
        const buf = this.pool.take(size);
        (entry.pooled ??= []).push(buf);
        return buf;
      },
      waitedRemotely: (sinceMs: number) => {
        entry.remoteMs += performance.now() - sinceMs;
      },
    };
    entry.start = () => this.run(entry, handler, request, ctx);
    this.inFlight.push(entry);
    this.budget.requestQueued();
    this.startNext();
  }

  /**
   * A bare SASL token after SaslHandshake v0: the mechanism's reply goes back size-prefixed, without a
   * Kafka header; a failed exchange closes the connection (there is no error answer in this form).
   */
  private onRawSaslToken(token: Buffer): void {
    const sasl = this.sasl!;
    const entry: InFlight = { ...UNCOUNTED, isProduce: false, frameBytes: token.length, start: null, ready: false, chunks: null, pooled: null };
    entry.start = () => {
      sasl.rawToken(token).then((reply) => {
        if (this.closed) return;
        if (reply === null) return this.close(`SASL authentication failed: ${sasl.failure}`, 'info');
        const size = Buffer.alloc(4);
        size.writeInt32BE(reply.length);
        entry.chunks = [size, reply];
        this.settle(entry);
        this.flush();
        this.startNext();
      }, (err: unknown) => {
        this.log.error({ err, peer: this.peer }, 'SASL token failed');
        this.close(`SASL token failed: ${err instanceof Error ? err.message : String(err)}`, 'error');
      });
    };
    this.inFlight.push(entry);
    this.budget.requestQueued();
    this.startNext();
  }

  /** Closes the connection over a frame that will not be handled, giving back its reservation. */
  private reject(frameBytes: number, reason: string, level: 'warn' | 'error' | 'info' = 'warn'): void {
    this.budget.releaseBytes(frameBytes);
    this.close(reason, level);
  }

  /** Starts the requests whose turn it is: any with nothing unanswered before it, or only Produce. */
  private startNext(): void {
    if (this.closed) return;
    let onlyProduceBefore = true;
    let allAnsweredBefore = true;
    for (const r of this.inFlight) {
      if (r.start !== null) {
        if (!allAnsweredBefore && !(r.isProduce && onlyProduceBefore)) break;
        if (this.socket.writableLength > WRITE_HIGH_WATER || this.throttleTimer !== null) break;
        const start = r.start;
        r.start = null;
        this.budget.requestStarted();
        start();
        // Answered at once: its completion already started whatever came next.
        if (this.closed || r.ready) return;
      }
      if (!r.ready) {
        allAnsweredBefore = false;
        if (!r.isProduce) onlyProduceBefore = false;
      }
    }
    this.updateFlow();
  }

  private run(entry: InFlight, handler: ApiHandler, request: ApiRequestMap[ApiKey], ctx: RequestContext): void {
    const { quotas } = this.access;
    const startedAt = performance.now();
    entry.startedAt = startedAt;
    // The handler's time on the event loop, for the quotas.
    let threadMs = 0;
    const complete = (): void => {
      if (this.closed) return;
      if (this.sasl?.failure) entry.closeAfterWrite = `SASL authentication failed: ${this.sasl.failure}`;
      this.settle(entry);
      this.flush();
      this.startNext();
    };
    const finish = (response: unknown): void => {
      if (this.closed) return;
      entry.readyAt = performance.now();
      let throttleMs = 0;
      try {
        if (quotas.enabled) {
          throttleMs = recordAndThrottle(quotas, {
            apiKey: ctx.apiKey, apiVersion: ctx.apiVersion, session: ctx.session, clientId: ctx.clientId, request, response,
            frameBytes: entry.frameBytes, threadMs,
          });
        }
        if (response !== null) {
          entry.chunks = encodeResponseFrame(new Writer(), ctx.apiKey as ApiKey, ctx.apiVersion, ctx.correlationId, response as ApiResponseMap[ApiKey]);
          for (const chunk of entry.chunks) entry.responseBytes += chunk.length;
          entry.meters!.recordErrors(response as object);
          entry.splitMeters?.recordErrors(response as object);
        }
      } catch (err) {
        return fail(err);
      }
      if (throttleMs > 0) {
        this.throttle(throttleMs);
        // A client from before KIP-219 does not back off by itself: its response waits out the throttle.
        if (!clientThrottles(ctx.apiKey, ctx.apiVersion)) {
          setTimeout(complete, throttleMs).unref();
          return;
        }
      }
      complete();
    };
    const fail = (err: unknown): void => {
      this.log.error({ err, peer: this.peer, api: handler.name, apiVersion: ctx.apiVersion }, 'request failed');
      this.close(`${handler.name} v${ctx.apiVersion} request failed: ${err instanceof Error ? err.message : String(err)}`, 'error');
    };
    try {
      const result = handler.handle(request, ctx);
      if (quotas.enabled) threadMs = performance.now() - startedAt;
      if (result instanceof Promise) result.then(finish, fail);
      else finish(result);
    } catch (err) {
      fail(err);
    }
  }

  /** The request has its response (or never will): its frame's bytes go back to the budget. */
  private settle(entry: InFlight): void {
    if (entry.start !== null) {
      entry.start = null;
      this.budget.requestStarted();
    }
    entry.ready = true;
    this.budget.releaseBytes(entry.frameBytes);
    entry.frameBytes = 0;
  }

  private flush(): void {
    const writtenAt = this.inFlight.length > 0 && this.inFlight[0].ready ? performance.now() : 0;
    while (this.inFlight.length > 0 && this.inFlight[0].ready) {
      const entry = this.inFlight.shift()!;
      if (entry.chunks === null) {
        this.recordRequest(entry, writtenAt, writtenAt);
        continue;
      }
      if (!this.corked) {
        // The responses completed in this tick (a read's worth of pipelined requests) go out in one write.
        this.corked = true;
        this.socket.cork();
        process.nextTick(this.uncork);
      }
      const last = entry.chunks.length - 1;
      for (let i = 0; i < last; i++) this.socket.write(entry.chunks[i]);
      const closeAfterWrite = entry.closeAfterWrite;
      if (closeAfterWrite !== undefined) {
        this.socket.write(entry.chunks[last], () => this.close(closeAfterWrite, 'info'));
        return;
      }
      const pooled = entry.pooled;
      // The callback runs once the kernel has the bytes: only then may the pool hand them out again.
      this.socket.write(entry.chunks[last], (err) => {
        if (err) return;
        if (pooled) for (const b of pooled) this.pool.give(b);
        this.recordRequest(entry, writtenAt, performance.now());
      });
    }
    // Answered requests make room under the in-flight cap: read what waits, in a later turn (reading
    // here, in a response's promise callback, would chain reads in microtasks that never yield).
    if (this.input !== null) this.scheduleRead();
    this.updateFlow();
  }

  /** A request's response went out (or none was due): its times and sizes go to its API's meters. */
  private recordRequest(entry: InFlight, writtenAt: number, sentAt: number): void {
    if (entry.meters === null || entry.startedAt === 0) return;
    const handlerMs = entry.readyAt - entry.startedAt;
    const timing = {
      queueMs: entry.startedAt - entry.receivedAt,
      localMs: handlerMs - entry.remoteMs,
      remoteMs: entry.remoteMs,
      responseQueueMs: writtenAt - entry.readyAt,
      sendMs: sentAt - writtenAt,
      totalMs: sentAt - entry.receivedAt,
      requestBytes: entry.requestBytes,
      responseBytes: entry.responseBytes,
    };
    entry.meters.record(timing);
    entry.splitMeters?.record(timing);
  }

  /** Stops reading from the socket while frames cannot be taken or the peer reads too slowly. */
  private updateFlow(): void {
    if (this.closed) return;
    const congested = this.input !== null || this.inFlight.length >= this.limits.maxInFlight
      || this.socket.writableLength > WRITE_HIGH_WATER || this.throttleTimer !== null;
    if (congested && !this.paused) {
      this.paused = true;
      this.socket.pause();
    } else if (!congested && this.paused) {
      this.paused = false;
      this.socket.resume();
    }
  }
}

/** An IPv4 peer on a dual-stack socket arrives as ::ffff:a.b.c.d; it is the same address. */
export function normalizeIp(address: string): string {
  return address.startsWith('::ffff:') && isIPv4(address.slice(7)) ? address.slice(7) : address;
}
