// The API handlers this broker serves, by key. The router holds exactly the handlers it is given;
// ApiVersions lists the same set, so the broker advertises exactly what it serves.
import type { ApiHandler } from '../handlers/handler';

export class Router {
  private readonly byKey = new Map<number, ApiHandler>();

  constructor(handlers: readonly ApiHandler[]) {
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
