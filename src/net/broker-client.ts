// The inter-broker client: one TCP connection from this broker to another, speaking the Kafka protocol
// through the generated codecs. It mirrors the part of Kafka's NetworkClient that a broker uses
// through BlockingSend (the replica fetcher's Fetch and OffsetForLeaderEpoch, WriteTxnMarkers,
// forwarding to the controller), kept small:
// - connect() opens the socket (within connectTimeoutMs, Kafka's socket.connection.setup.timeout.ms)
//   and sends ApiVersions, retrying at the peer's highest ApiVersions version when it answers
//   UNSUPPORTED_VERSION (KIP-511); the peer's ranges decide the version of every later request.
// - request() picks the highest version both sides support (stable versions of our codec only, as
//   Kafka's clients do), pipelines requests on the connection and matches responses in order by
//   correlation id, as the protocol guarantees.
// - A request unanswered after requestTimeoutMs fails with RequestTimeoutError and closes the
//   connection, as NetworkClient disconnects on a request timeout (a late answer could not be matched
//   safely). A dropped connection, a response over maxResponseBytes or one that cannot be decoded
//   closes it too, and every pending request fails with BrokerConnectionError.
// - Over TLS when the options carry `tls` (the inter-broker listener is SSL or SASL_SSL): the peer's
//   certificate is checked against the trust store (and its host name, per
//   ssl.endpoint.identification.algorithm); our key store is the client certificate.
// - SASL when the options carry `sasl` (the inter-broker listener is SASL_PLAINTEXT or SASL_SSL):
//   SaslHandshake v1 and SaslAuthenticate once versions are negotiated, before connect() resolves (a
//   refusal fails the connect with SaslClientAuthenticationError); when the peer answers a session
//   lifetime (KIP-368), the next request after 85% of it re-authenticates first, later requests
//   waiting for it.
// There is no reconnect loop here: a closed client stays closed, and its caller (a replica fetcher,
// say) decides when to connect again and with what backoff.
import * as net from 'node:net';
import * as tls from 'node:tls';
import { Reader, Writer, ProtocolError, UnsupportedVersionError } from '../protocol/primitives';
import {
  ApiKey, apiSpecs, decodeResponseHeader, encodeRequestFrame, responseHeaderVersion, type ApiRequestMap, type ApiResponseMap,
} from '../protocol/generated';
import { ErrorCode, errorName } from '../common/errors';
import { packageVersion } from '../common/package-version';
import type { SaslClient } from '../security/sasl';
import type { ClientTls } from '../security/tls';

export interface BrokerClientOptions {
  host: string;
  port: number;
  /** Sent in every request header; the peer's logs and quotas name us by it. */
  clientId: string;
  /** socket.connection.setup.timeout.ms: the TCP connection must be up within this. */
  connectTimeoutMs: number;
  /** request.timeout.ms: the longest a request waits for its response (the ApiVersions handshake too). */
  requestTimeoutMs: number;
  /** A response frame larger than this closes the connection. */
  maxResponseBytes?: number;
  /** TLS to the peer (an SSL or SASL_SSL listener); plain TCP without it. */
  tls?: ClientTls;
  /** On a SASL_* inter-broker listener: a new client of sasl.mechanism.inter.broker.protocol per exchange. */
  sasl?: () => SaslClient;
}

/** Re-authenticate once this share of the session lifetime the peer gave has passed (KIP-368). */
const REAUTHENTICATE_AT_SHARE = 0.85;

/** Kafka's socket.request.max.bytes default (100 MiB), plus room for a response's headers. */
export const DEFAULT_MAX_RESPONSE_BYTES = 100 * 1024 * 1024 + 64 * 1024;

/** The version of our first ApiVersions request. */
const API_VERSIONS_VERSION = 3;

/** What we tell the peer we are (ApiVersions v3+). */
const SOFTWARE = { clientSoftwareName: 'fjord', clientSoftwareVersion: packageVersion() };

/** The connection failed or closed: every request pending on it fails with this (Kafka's NetworkException). */
export class BrokerConnectionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BrokerConnectionError';
  }
}

/** The peer refused our SASL mechanism or credentials; the connection is closed. */
export class SaslClientAuthenticationError extends BrokerConnectionError {
  constructor(message: string) {
    super(message);
    this.name = 'SaslClientAuthenticationError';
  }
}

/** This request had no answer within requestTimeoutMs; the connection is closed as well. */
export class RequestTimeoutError extends BrokerConnectionError {
  constructor(message: string) {
    super(message);
    this.name = 'RequestTimeoutError';
  }
}

/** A version range the peer advertised for one API. */
export interface VersionRange {
  readonly minVersion: number;
  readonly maxVersion: number;
}

/** A request written to the socket and waiting for its response. */
interface Pending {
  readonly apiKey: ApiKey;
  readonly version: number;
  readonly correlationId: number;
  readonly resolve: (body: unknown) => void;
  readonly reject: (err: Error) => void;
  readonly timer: NodeJS.Timeout;
}

export class BrokerClient {
  /** host:port, in every error message. */
  readonly peer: string;
  private readonly maxResponseBytes: number;
  private peerVersions = new Map<number, VersionRange>();
  /** In the order written; responses come back in that order. */
  private readonly pending: Pending[] = [];
  private nextCorrelationId = 0;
  private closeReason: string | null = null;
  /** The size prefix of the next frame, possibly split across reads. */
  private readonly sizePrefix = Buffer.alloc(4);
  private prefixFilled = 0;
  /** A frame arriving over several reads, and how much of it is in. */
  private frame: Buffer | null = null;
  private frameFilled = 0;
  /** When the SASL session should be renewed (ms since the epoch); null when it does not expire. */
  private reauthenticateAtMs: number | null = null;
  /** A re-authentication under way: requests wait for it (the peer takes only SASL frames meanwhile). */
  private reauthenticating: Promise<void> | null = null;

  private constructor(private readonly socket: net.Socket, private readonly opts: BrokerClientOptions) {
    this.peer = `${opts.host}:${opts.port}`;
    this.maxResponseBytes = opts.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
    socket.setNoDelay(true);
    socket.setKeepAlive(true); // as Kafka's Selector sets SO_KEEPALIVE on its connections
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('error', (err) => this.close(`socket error: ${err.message}`));
    socket.on('close', () => this.close('closed by the peer'));
  }

  /** Connects and negotiates versions; rejects with BrokerConnectionError if either fails. */
  static async connect(opts: BrokerClientOptions): Promise<BrokerClient> {
    const client = new BrokerClient(await openSocket(opts), opts);
    try {
      await client.negotiateVersions();
    } catch (err) {
      client.close('version negotiation failed');
      throw err;
    }
    if (opts.sasl) {
      try {
        await client.authenticate(opts.sasl());
      } catch (err) {
        client.close('SASL authentication failed');
        throw err;
      }
    }
    return client;
  }

  /** The peer's version range for an API, from its ApiVersions answer; undefined if it does not serve it. */
  peerVersionRange(apiKey: ApiKey): VersionRange | undefined {
    return this.peerVersions.get(apiKey);
  }

  /** The version request() uses for an API: the highest that the peer and our codec (stable versions) share. */
  usableVersion(apiKey: ApiKey): number {
    const ours = apiSpecs[apiKey];
    const ourMax = ours.latestVersionUnstable ? ours.maxVersion - 1 : ours.maxVersion;
    const theirs = this.peerVersions.get(apiKey);
    if (theirs !== undefined) {
      const version = Math.min(ourMax, theirs.maxVersion);
      if (version >= Math.max(ours.minVersion, theirs.minVersion)) return version;
    }
    const theirRange = theirs === undefined ? 'none' : `${theirs.minVersion}-${theirs.maxVersion}`;
    throw new UnsupportedVersionError(
      `${this.peer} shares no version of ${ours.name} with us (ours ${ours.minVersion}-${ourMax}, theirs ${theirRange})`);
  }

  /**
   * Sends a request and resolves with its response. The version is usableVersion(apiKey) unless given
   * (it must then be within the peer's range). Rejects, leaving the connection open, with
   * UnsupportedVersionError when no version fits or the body cannot be expressed in it, and with an
   * Error for a Produce with acks=0 (never answered). Rejects with BrokerConnectionError
   * (RequestTimeoutError on a timeout) when the connection fails before the answer.
   */
  async request<K extends ApiKey>(apiKey: K, body: ApiRequestMap[K], opts: { version?: number } = {}): Promise<ApiResponseMap[K]> {
    if (apiKey === ApiKey.Produce && (body as ApiRequestMap[typeof ApiKey.Produce]).acks === 0) {
      // The peer sends no response to it, and responses are matched to requests by their order.
      throw new Error('Produce with acks=0 gets no response; BrokerClient sends only requests that are answered');
    }
    if (this.reauthenticateAtMs !== null && Date.now() >= this.reauthenticateAtMs && this.opts.sasl) {
      this.reauthenticateAtMs = null;
      this.reauthenticating = this.authenticate(this.opts.sasl()).catch((err: Error) => this.close(`SASL re-authentication failed: ${err.message}`))
        .finally(() => { this.reauthenticating = null; });
    }
    if (this.reauthenticating) await this.reauthenticating;
    const version = opts.version ?? this.usableVersion(apiKey);
    const theirs = this.peerVersions.get(apiKey);
    if (opts.version !== undefined && (theirs === undefined || version < theirs.minVersion || version > theirs.maxVersion)) {
      throw new UnsupportedVersionError(`${this.peer} does not serve ${apiSpecs[apiKey].name} v${version}`);
    }
    return this.send(apiKey, version, body);
  }

  /** Fails every pending request and closes the socket; later requests fail at once. */
  close(reason = 'closed by the caller'): void {
    if (this.closeReason !== null) return;
    this.closeReason = reason;
    this.socket.destroy();
    this.frame = null;
    for (const p of this.pending.splice(0)) {
      clearTimeout(p.timer);
      p.reject(new BrokerConnectionError(`${this.peer}: connection closed (${reason}) before the response to ${describe(p)}`));
    }
  }

  /** Whether close() has run (by the caller, or on a failure); a closed client is not reused. */
  get isClosed(): boolean {
    return this.closeReason !== null;
  }

  /** KIP-511: ask at our version; a peer that does not know it answers in v0 with the versions it knows. */
  private async negotiateVersions(): Promise<void> {
    let response = await this.send(ApiKey.ApiVersions, API_VERSIONS_VERSION, SOFTWARE);
    if (response.errorCode === ErrorCode.UNSUPPORTED_VERSION) {
      // Kafka's NetworkClient retries at the peer's highest ApiVersions version, or v0 if it gave none.
      const theirs = response.apiKeys.find((k) => k.apiKey === ApiKey.ApiVersions);
      response = await this.send(ApiKey.ApiVersions, Math.min(theirs?.maxVersion ?? 0, API_VERSIONS_VERSION), SOFTWARE);
    }
    if (response.errorCode !== ErrorCode.NONE) {
      throw new BrokerConnectionError(`${this.peer} answered ApiVersions with ${errorName(response.errorCode)}`);
    }
    this.peerVersions = new Map(response.apiKeys.map((k) => [k.apiKey, { minVersion: k.minVersion, maxVersion: k.maxVersion }]));
  }

  /**
   * SaslHandshake v1, then SaslAuthenticate rounds until the mechanism has nothing more to send
   * (SaslClientAuthenticator's order); the session lifetime the peer answers schedules the next one.
   */
  private async authenticate(sasl: SaslClient): Promise<void> {
    const handshake = await this.send(ApiKey.SaslHandshake, 1, { mechanism: sasl.mechanism });
    if (handshake.errorCode !== ErrorCode.NONE) {
      throw new SaslClientAuthenticationError(`${this.peer} refused SASL mechanism ${sasl.mechanism} with ${errorName(handshake.errorCode)} ` +
        `(it enables ${handshake.mechanisms.join(', ')})`);
    }
    const version = Math.min(2, this.peerVersions.get(ApiKey.SaslAuthenticate)?.maxVersion ?? 0);
    let lifetimeMs = 0;
    for (let challenge: Buffer | null = null; ;) {
      const token = await sasl.evaluateChallenge(challenge);
      if (token === null) break;
      const response = await this.send(ApiKey.SaslAuthenticate, version, { authBytes: token });
      if (response.errorCode !== ErrorCode.NONE) {
        throw new SaslClientAuthenticationError(`${this.peer}: SASL ${sasl.mechanism} authentication failed with ${errorName(response.errorCode)}: ${response.errorMessage}`);
      }
      challenge = response.authBytes;
      lifetimeMs = Number(response.sessionLifetimeMs ?? 0n);
    }
    this.reauthenticateAtMs = lifetimeMs > 0 ? Date.now() + lifetimeMs * REAUTHENTICATE_AT_SHARE : null;
  }

  /** Writes one request at a version already chosen (the handshake's ApiVersions is sent before the peer's ranges are known). */
  private send<K extends ApiKey>(apiKey: K, version: number, body: ApiRequestMap[K]): Promise<ApiResponseMap[K]> {
    if (this.closeReason !== null) {
      return Promise.reject(new BrokerConnectionError(`${this.peer}: connection closed (${this.closeReason})`));
    }
    // Encoded first: a body the version cannot express throws here, and nothing was written.
    const correlationId = this.nextCorrelationId;
    const frame = encodeRequestFrame(new Writer(), apiKey, version, correlationId, this.opts.clientId, body);
    this.nextCorrelationId = correlationId === 0x7fffffff ? 0 : correlationId + 1;
    return new Promise<ApiResponseMap[K]>((resolve, reject) => {
      const timer = setTimeout(() => this.timeOut(request), this.opts.requestTimeoutMs);
      const request: Pending = { apiKey, version, correlationId, resolve: resolve as (body: unknown) => void, reject, timer };
      this.pending.push(request);
      this.socket.cork();
      for (const chunk of frame) this.socket.write(chunk);
      this.socket.uncork();
    });
  }

  private timeOut(request: Pending): void {
    this.pending.splice(this.pending.indexOf(request), 1);
    const reason = `no response to ${describe(request)} within ${this.opts.requestTimeoutMs} ms`;
    request.reject(new RequestTimeoutError(`${this.peer}: ${reason}`));
    this.close(`request timed out: ${reason}`);
  }

  /** Splits the byte stream into size-prefixed frames, whatever the reads' boundaries. */
  private onData(chunk: Buffer): void {
    let pos = 0;
    while (pos < chunk.length && this.closeReason === null) {
      if (this.frame === null) {
        const prefixBytes = Math.min(4 - this.prefixFilled, chunk.length - pos);
        chunk.copy(this.sizePrefix, this.prefixFilled, pos, pos + prefixBytes);
        this.prefixFilled += prefixBytes;
        pos += prefixBytes;
        if (this.prefixFilled < 4) return;
        this.prefixFilled = 0;
        const size = this.sizePrefix.readInt32BE(0);
        if (size < 4 || size > this.maxResponseBytes) {
          this.close(`response frame of ${size} bytes (at most ${this.maxResponseBytes})`);
          return;
        }
        if (chunk.length - pos >= size) { // the whole frame is in this read: no copy
          this.onFrame(chunk.subarray(pos, pos + size));
          pos += size;
          continue;
        }
        this.frame = Buffer.allocUnsafe(size);
        this.frameFilled = 0;
      }
      const bytes = Math.min(this.frame.length - this.frameFilled, chunk.length - pos);
      chunk.copy(this.frame, this.frameFilled, pos, pos + bytes);
      this.frameFilled += bytes;
      pos += bytes;
      if (this.frameFilled === this.frame.length) {
        const frame = this.frame;
        this.frame = null;
        this.onFrame(frame);
      }
    }
  }

  /** One response: it answers the oldest pending request, or the stream is out of step and the connection closes. */
  private onFrame(frame: Buffer): void {
    const request = this.pending.shift();
    if (request === undefined) {
      this.close('a response arrived with no request pending');
      return;
    }
    clearTimeout(request.timer);
    let body: unknown;
    try {
      body = decodeResponse(new Reader(frame), request);
    } catch (err) {
      const reason = `undecodable response to ${describe(request)}: ${(err as Error).message}`;
      request.reject(new BrokerConnectionError(`${this.peer}: ${reason}`));
      this.close(reason);
      return;
    }
    request.resolve(body);
  }
}

/** Opens the TCP connection, failing after connectTimeoutMs. */
function openSocket({ host, port, connectTimeoutMs, tls: secure }: BrokerClientOptions): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = secure ? tls.connect({
      host, port, secureContext: secure.secureContext,
      servername: net.isIP(host) === 0 ? host : undefined,
      checkServerIdentity: secure.checkHostName ? tls.checkServerIdentity : () => undefined,
    }) : net.connect({ host, port });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new BrokerConnectionError(`${host}:${port}: not connected within ${connectTimeoutMs} ms`));
    }, connectTimeoutMs);
    // This listener stays: the socket has an error listener from here until the client adds its own.
    socket.once('error', (err) => {
      clearTimeout(timer);
      reject(new BrokerConnectionError(`${host}:${port}: connection failed: ${err.message}`));
    });
    socket.once(secure ? 'secureConnect' : 'connect', () => {
      clearTimeout(timer);
      resolve(socket);
    });
  });
}

function decodeResponse(r: Reader, request: Pending): unknown {
  const header = decodeResponseHeader(r, responseHeaderVersion(request.apiKey, request.version));
  if (header.correlationId !== request.correlationId) {
    throw new ProtocolError(`correlation id ${header.correlationId}, expected ${request.correlationId}`);
  }
  return apiSpecs[request.apiKey].decodeResponse(r, apiVersionsFallback(r, request));
}

/**
 * The version to decode a body at. An ApiVersions request at a version the peer does not know is
 * answered in the v0 format (KIP-511); its error code comes first in every version, so a peek tells.
 */
function apiVersionsFallback(r: Reader, request: Pending): number {
  if (request.apiKey !== ApiKey.ApiVersions) return request.version;
  r.need(2);
  return r.buf.readInt16BE(r.offset) === ErrorCode.UNSUPPORTED_VERSION ? 0 : request.version;
}

function describe(request: Pending): string {
  return `${apiSpecs[request.apiKey].name} v${request.version} (correlation id ${request.correlationId})`;
}
