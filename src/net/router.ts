// The API handlers this broker serves. Registering a handler is what puts its API in ApiVersions:
// the broker advertises exactly what it serves.
import type { Broker } from '../broker';
import type { Connection } from './connection';

export interface RequestContext {
  apiKey: number;
  apiVersion: number;
  correlationId: number;
  clientId: string | null;
  peer: string;
  connection: Connection;
  /**
   * A buffer for bytes that go into this request's response and nowhere else (Fetch data read
   * from the log): taken from the connection's BufferPool, given back once the response is written.
   */
  responseBuffer(size: number): Buffer;
}

/** A handler answers one API; `null` means no response is written (acks=0 produce). */
export interface ApiHandler<Req = unknown, Res = unknown> {
  readonly apiKey: number;
  readonly name: string;
  readonly minVersion: number;
  readonly maxVersion: number;
  handle(request: Req, ctx: RequestContext): Res | null | Promise<Res | null>;
}

/** What a handler file exports: a factory bound to the broker whose state it reads. */
export type HandlerFactory = (broker: Broker) => ApiHandler;

export class Router {
  private readonly byKey = new Map<number, ApiHandler>();

  constructor(handlers: ApiHandler[]) {
    for (const h of handlers) {
      if (this.byKey.has(h.apiKey)) throw new Error(`two handlers for API key ${h.apiKey}`);
      this.byKey.set(h.apiKey, h);
    }
  }

  handler(apiKey: number): ApiHandler | undefined {
    return this.byKey.get(apiKey);
  }

  /** Every served API with its version range, ordered by key, as ApiVersions lists them. */
  served(): ApiHandler[] {
    return [...this.byKey.values()].sort((a, b) => a.apiKey - b.apiKey);
  }
}
