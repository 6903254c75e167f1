// What a handler is. Each handler file exports one definition made by defineHandler: the API key,
// the versions it serves, and a function from the services it needs (an interface declared in
// that file, as narrow as the handler's use) to the function that answers a request. Request and
// response types follow from the key, through the generated ApiRequestMap and ApiResponseMap.
import { apiSpecs, type ApiKey, type ApiRequestMap, type ApiResponseMap } from '../protocol/generated';
import type { Session } from '../security/principal';
import type { AclOperation, ResourceType } from '../security/acl';
import type { SaslExchange } from '../security/sasl';

/** What a handler may know of the request beyond its body; nothing of the connection itself. */
export interface RequestContext {
  readonly apiKey: number;
  readonly apiVersion: number;
  readonly correlationId: number;
  readonly clientId: string | null;
  /** The peer's address:port. */
  readonly peer: string;
  /** Who sent it: principal, client address, listener. */
  readonly session: Session;
  /**
   * The broker's Authorizer asked for this request's session (Kafka's AuthHelper.authorize).
   * `logging`: false flags log the decision at trace only (authorized operations, filtering).
   */
  authorize(operation: AclOperation, resourceType: ResourceType, resourceName: string,
    logging?: { logIfAllowed?: boolean; logIfDenied?: boolean }): boolean;
  /** The same for "some resource of this type" (Kafka's authorizeByResourceType). */
  authorizeByResourceType(operation: AclOperation, resourceType: ResourceType): boolean;
  /**
   * A buffer for bytes that go into this request's response and nowhere else (Fetch data read
   * from the log): taken from the connection's BufferPool, given back once the response is written.
   */
  responseBuffer(size: number): Buffer;
  /** The connection's SASL exchange, on a SASL_* listener only (SaslHandshake and SaslAuthenticate drive it). */
  readonly sasl?: SaslExchange;
  /** Closes the connection instead of answering (a failed acks=0 produce: the client must notice). */
  closeConnection(reason: string): void;
  /**
   * Calls `listener` once when this request's connection closes (a share session ends with it);
   * returns what stops listening.
   */
  onConnectionClose(listener: () => void): () => void;
  /**
   * The request waited in a purgatory (acks=all, a fetch's long poll) from `sinceMs`
   * (performance.now()) until now: its remote time, apart from the handler's local time in the
   * request metrics. Absent where nothing measures (handlers called directly by tests).
   */
  readonly waitedRemotely?: (sinceMs: number) => void;
}

/** The function that answers one API; `null` means no response is written (acks=0 produce). */
/** The host a group records of a member (Kafka's "/address"): the peer without its port. */
export function clientHost(ctx: RequestContext): string {
  return `/${ctx.peer.slice(0, ctx.peer.lastIndexOf(':'))}`;
}

export type Handle<K extends ApiKey> =
  (request: ApiRequestMap[K], ctx: RequestContext) => ApiResponseMap[K] | null | Promise<ApiResponseMap[K] | null>;

export interface VersionRange {
  readonly minVersion: number;
  readonly maxVersion: number;
}

/** A handler bound to its services, as the router dispatches to it. */
export interface ApiHandler<K extends ApiKey = ApiKey> extends VersionRange {
  readonly apiKey: K;
  readonly name: string;
  // A method, so that a handler of one key is usable where any handler is expected.
  handle(request: ApiRequestMap[K], ctx: RequestContext): ReturnType<Handle<K>>;
}

/** What a handler file exports: its API and versions, and how to bind it to services. */
export interface HandlerDefinition<K extends ApiKey = ApiKey, S = never> extends VersionRange {
  readonly apiKey: K;
  bind(services: S): ApiHandler<K>;
}

export function defineHandler<K extends ApiKey, S>(
  apiKey: K,
  versions: VersionRange,
  make: (services: S) => Handle<K>,
): HandlerDefinition<K, S> {
  const { minVersion, maxVersion } = versions;
  const spec = apiSpecs[apiKey];
  if (maxVersion > spec.maxVersion) throw new Error(`${spec.name} v${maxVersion} is not in protocol-specs (they end at v${spec.maxVersion})`);
  const name = spec.name;
  return { apiKey, minVersion, maxVersion, bind: (services) => ({ apiKey, name, minVersion, maxVersion, handle: make(services) }) };
}
