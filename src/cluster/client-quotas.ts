// Client quotas as Kafka 4.4 keeps them (ClientQuotaControlManager, ClientQuotasImage,
// DefaultQuotaCallback): an entity is a set of (entity type, name) with the types `user`,
// `client-id` (alone or together) or `ip` (alone); a null name is the type's default (`<default>` in
// kafka-configs). Each entity has values for some quota keys. This file holds the rules, pure:
// - the entity's stored key, path-like as Kafka's ZooKeeper layout had it (users/<u>/clients/<c>),
//   names URI-encoded and `<default>` for null, so the key is also an etcd key suffix;
// - the validation of an alteration (AlterClientQuotas), with Kafka's errors and messages;
// - the filter of DescribeClientQuotas (match types, strict);
// - which entity's value applies to a request's (user, client-id), in Kafka's precedence order.
import { ErrorCode } from '../common/errors';
import { isIP } from 'node:net';

export const USER = 'user';
export const CLIENT_ID = 'client-id';
export const IP = 'ip';
export type EntityType = typeof USER | typeof CLIENT_ID | typeof IP;

/** An entity: its types and names (null: the default entity of that type). */
export type QuotaEntity = Partial<Record<EntityType, string | null>>;
/** Quota values by key. */
export type QuotaValues = Readonly<Record<string, number>>;
/** Every entity with quotas, by entityKey. */
export type QuotaTable = ReadonlyMap<string, QuotaValues>;

/** The keys whose quotas throttle clients, and the type Kafka's QuotaConfig gives each. */
export const PRODUCER_BYTE_RATE = 'producer_byte_rate';
export const CONSUMER_BYTE_RATE = 'consumer_byte_rate';
export const REQUEST_PERCENTAGE = 'request_percentage';
export const CONTROLLER_MUTATION_RATE = 'controller_mutation_rate';
type KeyType = 'long' | 'double' | 'int';
const USER_AND_CLIENT_KEYS: Readonly<Record<string, KeyType>> = {
  [PRODUCER_BYTE_RATE]: 'long', [CONSUMER_BYTE_RATE]: 'long', [REQUEST_PERCENTAGE]: 'double', [CONTROLLER_MUTATION_RATE]: 'double',
};
/** Long.MAX_VALUE as a double (2^63), what Kafka compares a long quota with. */
const LONG_MAX = 2 ** 63;
const IP_KEYS: Readonly<Record<string, KeyType>> = { connection_creation_rate: 'int' };

const DEFAULT_NAME = '<default>';
const encodeName = (name: string | null): string => (name === null ? DEFAULT_NAME : encodeURIComponent(name));
const decodeName = (part: string): string | null => (part === DEFAULT_NAME ? null : decodeURIComponent(part));

/** The stored key of an entity: users/<u>, users/<u>/clients/<c>, clients/<c> or ips/<ip>. */
export function entityKey(entity: QuotaEntity): string {
  const parts: string[] = [];
  if (entity[USER] !== undefined) parts.push('users', encodeName(entity[USER]));
  if (entity[CLIENT_ID] !== undefined) parts.push('clients', encodeName(entity[CLIENT_ID]));
  if (entity[IP] !== undefined) parts.push('ips', encodeName(entity[IP]));
  return parts.join('/');
}

const KEY_RE = /^(?:users\/([^/]+)(?:\/clients\/([^/]+))?|clients\/([^/]+)|ips\/([^/]+))$/;

/** The entity of a stored key; undefined for a key that is not one. */
export function parseEntityKey(key: string): QuotaEntity | undefined {
  const m = KEY_RE.exec(key);
  if (!m) return undefined;
  const entity: QuotaEntity = {};
  if (m[1] !== undefined) entity[USER] = decodeName(m[1]);
  if (m[2] !== undefined) entity[CLIENT_ID] = decodeName(m[2]);
  if (m[3] !== undefined) entity[CLIENT_ID] = decodeName(m[3]);
  if (m[4] !== undefined) entity[IP] = decodeName(m[4]);
  return entity;
}

/** An entity as Kafka's ClientQuotaEntity prints in messages. */
export function entityText(entity: QuotaEntity): string {
  const entries = Object.entries(entity).map(([type, name]) => `${type}=${name}`);
  return `ClientQuotaEntity(entries={${entries.join(', ')}})`;
}

export interface QuotaError {
  errorCode: number;
  errorMessage: string;
}
const invalid = (errorMessage: string): QuotaError => ({ errorCode: ErrorCode.INVALID_REQUEST, errorMessage });

/** One entry of AlterClientQuotas: the entity's (type, name) pairs and its operations (null value: remove). */
export interface QuotaAlteration {
  entity: readonly { entityType: string; entityName: string | null }[];
  ops: readonly { key: string; value: number | null }[];
}

/** What an alteration does to one entity: its key and its values afterwards (empty: removed). */
export interface PlannedQuotas {
  key: string;
  entity: QuotaEntity;
  values: Record<string, number>;
}

/** The entity of an alteration as Kafka builds it from the request (a type named twice: the last name). */
export function alterationEntity(entries: QuotaAlteration['entity']): Record<string, string | null> {
  const entity: Record<string, string | null> = {};
  for (const e of entries) entity[e.entityType] = e.entityName;
  return entity;
}

/**
 * Checks an alteration of `entity` against Kafka's ClientQuotaControlManager rules and applies it to
 * `current`; the entity's new values, or Kafka's error.
 */
export function planAlteration(entity: Record<string, string | null>, ops: QuotaAlteration['ops'], current: QuotaValues | undefined): PlannedQuotas | QuotaError {
  const types = Object.keys(entity);
  if (types.length === 0) return invalid('Invalid empty client quota entity');
  for (const type of types) {
    if (type !== USER && type !== CLIENT_ID && type !== IP) return invalid(`Unhandled client quota entity type: ${type}`);
    if (entity[type] === '') return invalid(`Empty ${type} not supported`);
  }
  const valid = entity as QuotaEntity;
  let keys: Readonly<Record<string, KeyType>>;
  if (valid[IP] !== undefined) {
    if (valid[USER] !== undefined || valid[CLIENT_ID] !== undefined) {
      return invalid('Invalid quota entity combination, IP entity shouldnot be combined with User or ClientId');
    }
    const ip = valid[IP];
    if (ip !== null && isIP(ip) === 0) return invalid(`${ip} is not a valid IP or resolvable host.`);
    keys = IP_KEYS;
  } else {
    keys = USER_AND_CLIENT_KEYS;
  }
  const values: Record<string, number> = { ...current };
  for (const { key, value } of ops) {
    if (value === null) {
      delete values[key];
      continue;
    }
    const refusal = checkValue(keys, key, value);
    if (refusal) return refusal;
    values[key] = value;
  }
  return { key: entityKey(valid), entity: valid, values };
}

/** Kafka's validateQuotaKeyValue. */
function checkValue(keys: Readonly<Record<string, KeyType>>, key: string, value: number): QuotaError | undefined {
  const type = Object.hasOwn(keys, key) ? keys[key] : undefined;
  if (type === undefined) return invalid(`Invalid configuration key ${key}`);
  if (!(value > 0)) return invalid(`Quota ${key} must be greater than 0`);
  if (type === 'double') return undefined;
  if (type === 'int' && value > 2147483647) return invalid(`Proposed value for ${key} is too large for an INT.`);
  if (type === 'long' && value > LONG_MAX) return invalid(`Proposed value for ${key} is too large for a LONG.`);
  if (Math.abs(value % 1) > 1e-6) return invalid(`${key} cannot be a fractional value.`);
  return undefined;
}

/** DescribeClientQuotas' match types. */
export const MatchType = { EXACT: 0, DEFAULT: 1, SPECIFIED: 2 } as const;

export interface QuotaFilterComponent {
  entityType: string;
  matchType: number;
  match: string | null;
}

/** The entities (with their values) a DescribeClientQuotas filter selects, or Kafka's error for the filter. */
export function describeQuotas(table: QuotaTable, components: readonly QuotaFilterComponent[], strict: boolean):
  { entity: QuotaEntity; values: QuotaValues }[] | QuotaError {
  const exact = new Map<string, string | null>();
  const typed = new Set<string>();
  for (const c of components) {
    if (c.entityType === '') return invalid('Invalid empty entity type.');
    if (exact.has(c.entityType) || typed.has(c.entityType)) return invalid(`Entity type ${c.entityType} cannot appear more than once in the filter.`);
    if (c.entityType !== USER && c.entityType !== CLIENT_ID && c.entityType !== IP) {
      return { errorCode: ErrorCode.UNSUPPORTED_VERSION, errorMessage: `Unsupported entity type ${c.entityType}` };
    }
    switch (c.matchType) {
      case MatchType.EXACT:
        if (c.match === null) return invalid('Request specified MATCH_TYPE_EXACT, but set match string to null.');
        exact.set(c.entityType, c.match);
        break;
      case MatchType.DEFAULT:
        if (c.match !== null) return invalid('Request specified MATCH_TYPE_DEFAULT, but also specified a match string.');
        exact.set(c.entityType, null);
        break;
      case MatchType.SPECIFIED:
        if (c.match !== null) return invalid('Request specified MATCH_TYPE_SPECIFIED, but also specified a match string.');
        typed.add(c.entityType);
        break;
      default:
        return invalid(`Unknown match type ${c.matchType}`);
    }
  }
  const mentions = (type: string): boolean => exact.has(type) || typed.has(type);
  if (mentions(IP) && (mentions(USER) || mentions(CLIENT_ID))) {
    return invalid('Invalid entity filter component combination. IP filter component should not be used with user or clientId filter component.');
  }
  const selected: { entity: QuotaEntity; values: QuotaValues }[] = [];
  for (const [key, values] of table) {
    const entity = parseEntityKey(key);
    if (!entity) continue;
    const names = entity as Record<string, string | null | undefined>;
    if (strict && Object.keys(entity).length !== exact.size + typed.size) continue;
    if ([...exact].some(([type, name]) => names[type] === undefined || names[type] !== name)) continue;
    if ([...typed].some((type) => names[type] === undefined)) continue;
    selected.push({ entity, values });
  }
  return selected;
}

/**
 * The quota of `key` that applies to a request of `user` with `clientId` (Kafka's DefaultQuotaCallback),
 * and the (user, client-id) pair whose requests share one measure of it: the first entity of the
 * precedence list below that has a value for the key. None: unlimited.
 */
export function resolveQuota(table: QuotaTable, key: string, user: string, clientId: string):
  { bound: number; user: string; clientId: string } | undefined {
  const u = encodeName(user);
  const c = encodeName(clientId);
  const d = DEFAULT_NAME;
  // [stored key, whether the measure is per user, per client id]
  const order: [string, boolean, boolean][] = [
    [`users/${u}/clients/${c}`, true, true],
    [`users/${u}/clients/${d}`, true, true],
    [`users/${u}`, true, false],
    [`users/${d}/clients/${c}`, true, true],
    [`users/${d}/clients/${d}`, true, true],
    [`users/${d}`, true, false],
    [`clients/${c}`, false, true],
    [`clients/${d}`, false, true],
  ];
  for (const [entity, perUser, perClient] of order) {
    const bound = table.get(entity)?.[key];
    if (bound !== undefined) return { bound, user: perUser ? user : '', clientId: perClient ? clientId : '' };
  }
  return undefined;
}
