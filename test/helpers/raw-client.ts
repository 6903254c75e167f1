// A bare-socket Kafka client for tests: sends frames we build (valid or hostile) and reads
// size-prefixed responses, so tests can see exactly what the broker does with bytes on the wire.
import * as net from 'node:net';
import * as tls from 'node:tls';
import { Reader, Writer } from '../../src/protocol/primitives';
import {
  getApiSpec, encodeRequestHeader, decodeResponseHeader, requestHeaderVersion, responseHeaderVersion,
  type ApiKey, type ApiRequestMap, type ApiResponseMap,
} from '../../src/protocol/generated';

export class RawClient {
  private buffered = Buffer.alloc(0);
  private waiters: (() => void)[] = [];
  private nextCorrelationId = 1;
  ended = false;
  readonly closed: Promise<void>;

  private constructor(readonly socket: net.Socket) {
    socket.on('data', (d) => {
      this.buffered = Buffer.concat([this.buffered, d]);
      this.wake();
    });
    this.closed = new Promise((resolve) => socket.on('close', () => {
      this.ended = true;
      this.wake();
      resolve();
    }));
    socket.on('error', () => undefined);
  }

  static connect(port: number, host = '127.0.0.1'): Promise<RawClient> {
    return new Promise((resolve, reject) => {
      const s = net.connect({ port, host }, () => resolve(new RawClient(s)));
      s.once('error', reject);
    });
  }

  /** One request on a connection of its own, closed once answered (or failed). */
  static async requestOnce<T>(port: number, apiKey: number, version: number, body: unknown): Promise<T> {
    const c = await RawClient.connect(port);
    try {
      return await c.request<T>(apiKey, version, body);
    } finally {
      c.close();
    }
  }

  /** Over TLS; rejects if the handshake fails. */
  static connectTls(port: number, options: tls.ConnectionOptions, host = '127.0.0.1'): Promise<RawClient> {
    return new Promise((resolve, reject) => {
      const s = tls.connect({ port, host, ...options }, () => resolve(new RawClient(s)));
      s.once('error', reject);
    });
  }

  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }

  /** Encodes a request with the generated codec; returns its correlation id. */
  send(apiKey: number, version: number, body: unknown, correlationId = this.nextCorrelationId++): number {
    this.sendBytes(RawClient.frame(apiKey, version, body, correlationId));
    return correlationId;
  }

  static frame(apiKey: number, version: number, body: unknown, correlationId: number, clientId = 'raw-test'): Buffer {
    const w = new Writer();
    const size = w.reserve(4);
    encodeRequestHeader(w, { requestApiKey: apiKey, requestApiVersion: version, correlationId, clientId },
      requestHeaderVersion(apiKey, version));
    getApiSpec(apiKey)!.encodeRequest(w, body, version);
    size.writeInt32BE(w.length - 4);
    return w.finishOne();
  }

  sendBytes(b: Buffer): void {
    this.socket.write(b);
  }

  /** The next response frame (without its size prefix); rejects if the broker closes first. */
  async receiveFrame(timeoutMs = 5000): Promise<Buffer> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (this.buffered.length >= 4) {
        const size = this.buffered.readInt32BE(0);
        if (this.buffered.length >= 4 + size) {
          const frame = this.buffered.subarray(4, 4 + size);
          this.buffered = this.buffered.subarray(4 + size);
          return frame;
        }
      }
      if (this.ended) throw new Error('connection closed by broker');
      const left = deadline - Date.now();
      if (left <= 0) throw new Error('timed out waiting for a response');
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.waiters.push(() => { clearTimeout(t); resolve(); });
      });
    }
  }

  /** The next response decoded with the generated codec for (apiKey, version). */
  async receive<T>(apiKey: number, version: number): Promise<{ correlationId: number; body: T }> {
    const r = new Reader(await this.receiveFrame());
    const header = decodeResponseHeader(r, responseHeaderVersion(apiKey, version));
    const body = getApiSpec(apiKey)!.decodeResponse(r, version) as T;
    return { correlationId: header.correlationId, body };
  }

  async request<T>(apiKey: number, version: number, body: unknown): Promise<T> {
    this.send(apiKey, version, body);
    return (await this.receive<T>(apiKey, version)).body;
  }

  /** request() with the body and answer typed by the API's generated request and response. */
  api<K extends ApiKey>(apiKey: K, version: number, body: ApiRequestMap[K]): Promise<ApiResponseMap[K]> {
    return this.request<ApiResponseMap[K]>(apiKey, version, body);
  }

  close(): void {
    this.socket.destroy();
  }
}
