/**
 * Config definition machinery (types, parsing, validators, Kafka's string
 * conventions) and the broker config definitions.
 *
 * Names, types, defaults and validators follow Apache Kafka 4.4's
 * KafkaConfig / ServerLogConfigs (what test/config/kafka-configs.test.ts
 * checks against a real Kafka 4.4.0); the error texts follow ConfigDef
 * ("Invalid value X for configuration Y: ..."). Fjord deviations from
 * Kafka's defaults are marked "Fjord:" in the doc phrase.
 */
import { quoteInMessage } from '../common/errors';
import { parseHttpListener } from './http-listener';

/** The authorizer.class.name that turns Fjord's authorizer on, as a Kafka server.properties names it. */
export const STANDARD_AUTHORIZER_CLASS = 'org.apache.kafka.metadata.authorizer.StandardAuthorizer';

/** DescribeConfigsResponse.ConfigSource ids. */
export enum ConfigSource {
  UNKNOWN = 0,
  TOPIC_CONFIG = 1,
  DYNAMIC_BROKER_CONFIG = 2,
  DYNAMIC_DEFAULT_BROKER_CONFIG = 3,
  STATIC_BROKER_CONFIG = 4,
  DEFAULT_CONFIG = 5,
  DYNAMIC_BROKER_LOGGER_CONFIG = 6,
  DYNAMIC_CLIENT_METRICS_CONFIG = 7,
  DYNAMIC_GROUP_CONFIG = 8,
}

/** DescribeConfigsResponse.ConfigType ids (DescribeConfigs v3+). */
export enum ConfigType {
  UNKNOWN = 0,
  BOOLEAN = 1,
  STRING = 2,
  INT = 3,
  SHORT = 4,
  LONG = 5,
  DOUBLE = 6,
  LIST = 7,
  CLASS = 8,
  PASSWORD = 9,
}

export type ValueType = 'boolean' | 'string' | 'int' | 'short' | 'long' | 'double' | 'list' | 'class' | 'password';

/** Parsed value: long is a bigint (lossless for Long.MAX_VALUE), list is string[]. */
export type ConfigValue = boolean | number | bigint | string | string[] | null;

export const INT_MAX = 2147483647;
export const LONG_MAX = 9223372036854775807n;
export const LONG_MIN = -9223372036854775808n;

/** A bad config value or combination; message says which key, which value and what is allowed. */
export class ConfigError extends Error {
  constructor(message: string, readonly key?: string, readonly value?: unknown) {
    super(message);
    this.name = 'ConfigError';
  }
}

/** Kafka's ConfigException(name, value, message) text. */
export function invalidValue(name: string, value: unknown, message?: string): ConfigError {
  const shown = quoteInMessage(typeof value === 'string' ? value : formatAny(value));
  return new ConfigError(
    `Invalid value ${shown} for configuration ${quoteInMessage(name)}${message ? ': ' + message : ''}`,
    name,
    value,
  );
}

function formatAny(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (Array.isArray(v)) return '[' + v.join(', ') + ']';
  if (typeof v === 'number') return Number.isInteger(v) ? String(v) : javaDouble(v);
  return String(v);
}

// ---------------------------------------------------------------- validators

export interface Validator {
  ensureValid(name: string, value: ConfigValue, type: ValueType): void;
  /** Human text of what is allowed (Kafka's Validator#toString). */
  readonly description: string;
}

function shownValue(value: ConfigValue, type: ValueType): string {
  return valueToString(value, type) ?? 'null';
}

/** ConfigDef.Range.atLeast */
export function atLeast(min: number | bigint): Validator {
  return range(min, undefined);
}

/** ConfigDef.Range.between */
export function between(min: number | bigint, max: number | bigint): Validator {
  return range(min, max);
}

function range(min: number | bigint | undefined, max: number | bigint | undefined): Validator {
  const desc =
    min !== undefined && max !== undefined ? `[${min},...,${max}]` : min !== undefined ? `[${min},...]` : `[...,${max}]`;
  return {
    description: desc,
    ensureValid(name, value, type) {
      if (value === null) throw invalidValue(name, null, 'Value must be non-null');
      const n = typeof value === 'bigint' ? value : Number(value);
      if (min !== undefined && lessThan(n, min)) {
        throw invalidValue(name, shownValue(value, type), `Value must be at least ${min}`);
      }
      if (max !== undefined && lessThan(max, n)) {
        throw invalidValue(name, shownValue(value, type), `Value must be no more than ${max}`);
      }
    },
  };
}

function lessThan(a: number | bigint, b: number | bigint): boolean {
  if (typeof a === 'bigint' && typeof b === 'bigint') return a < b;
  return Number(a) < Number(b);
}

/** ConfigDef.ValidString.in (case-sensitive). */
export function validString(...allowed: string[]): Validator {
  return {
    description: '[' + allowed.join(', ') + ']',
    ensureValid(name, value) {
      if (typeof value !== 'string' || !allowed.includes(value)) {
        throw invalidValue(name, value, 'String must be one of: ' + allowed.join(', '));
      }
    },
  };
}

/** ConfigDef.ValidList.in: every element must be one of `allowed` (an empty list is accepted). */
export function validList(...allowed: string[]): Validator {
  const inner = validString(...allowed);
  return {
    description: '[' + allowed.join(', ') + ']',
    ensureValid(name, value, type) {
      for (const s of (value as string[]) ?? []) inner.ensureValid(name, s, type);
    },
  };
}

/** A validator with a custom check that returns an error message (or null). */
export function custom(description: string, check: (value: ConfigValue) => string | null): Validator {
  return {
    description,
    ensureValid(name, value, type) {
      const msg = check(value);
      if (msg !== null) throw invalidValue(name, shownValue(value, type), msg);
    },
  };
}

// ---------------------------------------------------------------- parsing / formatting

const INTEGER_RE = /^[+-]?\d+$/;
const DOUBLE_RE = /^[+-]?(NaN|Infinity|(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?[fFdD]?)$/;

/** ConfigDef.parseType: string -> typed value (no validator). Throws ConfigError. */
export function parseType(name: string, raw: string | null, type: ValueType): ConfigValue {
  if (raw === null) return null;
  if (type === 'password') return raw;
  const trimmed = raw.trim();
  switch (type) {
    case 'boolean': {
      const l = trimmed.toLowerCase();
      if (l === 'true') return true;
      if (l === 'false') return false;
      throw invalidValue(name, raw, 'Expected value to be either true or false');
    }
    case 'string':
    case 'class':
      return trimmed;
    case 'int':
    case 'short': {
      const lim = type === 'int' ? 2147483648 : 32768;
      if (INTEGER_RE.test(trimmed)) {
        const n = Number(trimmed);
        if (n >= -lim && n <= lim - 1) return n === 0 ? 0 : n;
      }
      throw invalidValue(name, raw, `Not a number of type ${type.toUpperCase()}`);
    }
    case 'long': {
      if (INTEGER_RE.test(trimmed)) {
        const n = BigInt(trimmed);
        if (n >= LONG_MIN && n <= LONG_MAX) return n;
      }
      throw invalidValue(name, raw, 'Not a number of type LONG');
    }
    case 'double': {
      if (DOUBLE_RE.test(trimmed)) return Number(trimmed.replace(/[fFdD]$/, ''));
      throw invalidValue(name, raw, 'Not a number of type DOUBLE');
    }
    case 'list':
      return trimmed === '' ? [] : trimmed.split(/\s*,\s*/);
  }
}

/** Java's Double.toString (close enough: shortest round-trip digits). */
export function javaDouble(d: number): string {
  if (Number.isNaN(d)) return 'NaN';
  if (d === Infinity) return 'Infinity';
  if (d === -Infinity) return '-Infinity';
  if (d === 0) return Object.is(d, -0) ? '-0.0' : '0.0';
  const a = Math.abs(d);
  if (a >= 1e-3 && a < 1e7) {
    const s = String(d);
    return s.includes('.') ? s : s + '.0';
  }
  const [mant, exp] = d.toExponential().split('e');
  return (mant.includes('.') ? mant : mant + '.0') + 'E' + (exp.startsWith('+') ? exp.slice(1) : exp);
}

/** ConfigDef.convertToString: typed value -> the string Kafka reports. */
export function valueToString(value: ConfigValue, type: ValueType): string | null {
  if (value === null || value === undefined) return null;
  switch (type) {
    case 'list':
      return (value as string[]).join(',');
    case 'double':
      return javaDouble(value as number);
    default:
      return String(value);
  }
}

export function configTypeOf(type: ValueType | undefined): ConfigType {
  switch (type) {
    case 'boolean': return ConfigType.BOOLEAN;
    case 'string': return ConfigType.STRING;
    case 'int': return ConfigType.INT;
    case 'short': return ConfigType.SHORT;
    case 'long': return ConfigType.LONG;
    case 'double': return ConfigType.DOUBLE;
    case 'list': return ConfigType.LIST;
    case 'class': return ConfigType.CLASS;
    case 'password': return ConfigType.PASSWORD;
    default: return ConfigType.UNKNOWN;
  }
}

// ---------------------------------------------------------------- definitions

export interface ConfigKeyDef {
  name: string;
  type: ValueType;
  /** Default in properties-string form; null = no default (value is null unless set). */
  default: string | null;
  validator?: Validator;
  /** Short description, our own words. */
  doc: string;
  /** Kafka can change it at runtime (DescribeConfigs readOnly=false): a dynamic broker config. */
  dynamic?: boolean;
  /** Dynamic per broker only, not as the cluster-wide default (Kafka's DynamicBrokerConfig.PerBrokerConfigs). */
  perBrokerOnly?: boolean;
  /**
   * Kafka's DynamicConfig.Broker quota configs: set only dynamically (a static value is an unknown
   * key), and described only when set.
   */
  dynamicOnly?: boolean;
  /** Accepted and reported, but Fjord does not act on it. */
  noEffect?: boolean;
  /** Kafka's internal configs: accepted, never listed by DescribeConfigs. */
  internal?: boolean;
}

export interface ConfigKey extends ConfigKeyDef {
  readonly defaultValue: ConfigValue;
  /** The default as Kafka reports it (convertToString of the parsed default). */
  readonly defaultString: string | null;
  readonly configType: ConfigType;
  readonly sensitive: boolean;
}

/** Parse + validate one raw value for a key. Throws ConfigError. */
export function parseValue(key: ConfigKeyDef, raw: string | null): ConfigValue {
  const v = parseType(key.name, raw, key.type);
  if (v !== null && key.validator) key.validator.ensureValid(key.name, v, key.type);
  return v;
}

export function defineConfigs<T extends ConfigKeyDef>(defs: T[]): ReadonlyMap<string, T & ConfigKey> {
  const m = new Map<string, T & ConfigKey>();
  for (const d of defs) {
    if (m.has(d.name)) throw new Error(`duplicate config definition ${d.name}`);
    const defaultValue = parseValue(d, d.default);
    const doc = d.noEffect ? `${d.doc} (accepted for compatibility; no effect in Fjord)` : d.doc;
    m.set(d.name, {
      ...d,
      doc,
      defaultValue,
      defaultString: valueToString(defaultValue, d.type),
      configType: configTypeOf(d.type),
      sensitive: d.type === 'password',
    });
  }
  return m;
}

const LONG_MAX_S = LONG_MAX.toString();
const INT_MAX_S = String(INT_MAX);

/** Kafka 4's least segment size (KIP-1030): log.segment.bytes and segment.bytes. */
export const MIN_SEGMENT_BYTES = 1024 * 1024;
/** Kafka 4's default of (log.)message.timestamp.after.max.ms (KIP-1030): an hour into the future. */
export const TIMESTAMP_AFTER_MAX_MS = '3600000';

export const COMPRESSION_TYPES = ['uncompressed', 'zstd', 'lz4', 'snappy', 'gzip', 'producer'];
export const TIMESTAMP_TYPES = ['CreateTime', 'LogAppendTime'];
export const CLEANUP_POLICIES = ['compact', 'delete'];

/** GzipCompression level validator: 1..9 or -1 (zlib default). */
export const gzipLevel = custom('[1,...,9] or -1', (v) =>
  v === -1 || ((v as number) >= 1 && (v as number) <= 9) ? null : 'Value must be between 1 and 9, or -1',
);
export const lz4Level = between(1, 17);
export const zstdLevel = between(-131072, 22);

/**
 * The broker configs Fjord knows. `dynamic` mirrors Kafka's
 * DynamicBrokerConfig.ALL_DYNAMIC_CONFIGS (DescribeConfigs reports
 * readOnly = !dynamic): those IncrementalAlterConfigs and AlterConfigs may set
 * on a BROKER resource (broker-config.ts has the dynamic layers).
 */
export const BROKER_CONFIG_DEFS: ConfigKeyDef[] = [
  // identity, listeners, directories
  { name: 'node.id', type: 'int', default: '0', doc: 'Id of this node in the cluster. Fjord: defaults to 0 (Kafka requires it)' },
  { name: 'broker.id', type: 'int', default: '0', doc: 'Older name of node.id; both must agree when both are set. Fjord: defaults to 0' },
  { name: 'process.roles', type: 'list', default: null, validator: validList('broker', 'controller'), doc: 'KRaft roles of this process', noEffect: true },
  { name: 'controller.quorum.voters', type: 'list', default: '', doc: 'KRaft controller quorum', noEffect: true },
  { name: 'controller.listener.names', type: 'list', default: null, doc: 'Listeners reserved for controllers; not served to clients' },
  { name: 'inter.broker.listener.name', type: 'string', default: null, doc: 'Listener brokers use to reach each other (replication, coordinators, markers)' },
  {
    name: 'security.inter.broker.protocol', type: 'string', default: 'PLAINTEXT', validator: validString('PLAINTEXT', 'SSL', 'SASL_PLAINTEXT', 'SASL_SSL'),
    doc: 'Security protocol between brokers, when inter.broker.listener.name is not set: the listener of that name is used',
  },
  {
    name: 'listeners', type: 'list', default: 'PLAINTEXT://127.0.0.1:9092', dynamic: true, perBrokerOnly: true,
    doc: 'Comma-separated NAME://host:port endpoints to listen on. Fjord: defaults to loopback (Kafka: PLAINTEXT://:9092)',
  },
  { name: 'advertised.listeners', type: 'list', default: null, doc: 'Endpoints given to clients; defaults to the listeners' },
  {
    name: 'listener.security.protocol.map', type: 'string', dynamic: true, perBrokerOnly: true,
    default: 'SASL_SSL:SASL_SSL,PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT',
    doc: 'Listener name to security protocol pairs (PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL)',
  },
  { name: 'log.dirs', type: 'list', default: null, doc: 'Comma-separated data directories; overrides log.dir' },
  { name: 'log.dir', type: 'list', default: './data', doc: 'Data directory used when log.dirs is unset. Fjord: defaults to ./data' },

  // authorization (src/security/standard-authorizer.ts); super.users and allow.everyone.if.no.acl.found
  // are the authorizer's own configs, which Kafka's DescribeConfigs does not list either
  {
    name: 'authorizer.class.name', type: 'string', default: '',
    validator: custom(`"" or ${STANDARD_AUTHORIZER_CLASS}`, (v) => (v === '' || v === STANDARD_AUTHORIZER_CLASS ? null
      : `Fjord's authorizer is ${STANDARD_AUTHORIZER_CLASS} (empty: no authorizer); no other class can be loaded`)),
    doc: 'The authorizer that checks every request against the ACLs; empty: none, everything is allowed',
  },
  { name: 'super.users', type: 'string', default: '', internal: true, doc: 'Principals (User:name) allowed everything, separated by semicolons' },
  { name: 'allow.everyone.if.no.acl.found', type: 'boolean', default: 'false', internal: true, doc: 'Allow everyone on resources that have no ACL' },

  // topics
  { name: 'num.partitions', type: 'int', default: '1', validator: atLeast(1), doc: 'Default partition count for new topics' },
  { name: 'default.replication.factor', type: 'int', default: '1', doc: 'Default replication factor for new topics' },
  { name: 'auto.create.topics.enable', type: 'boolean', default: 'true', doc: 'Create unknown topics when clients ask for them' },
  { name: 'delete.topic.enable', type: 'boolean', default: 'true', doc: 'Allow topics to be deleted' },
  { name: 'max.request.partition.size.limit', type: 'int', default: '2000', validator: atLeast(1), doc: 'Most partitions one DescribeTopicPartitions answer holds' },
  { name: 'min.insync.replicas', type: 'int', default: '1', validator: atLeast(1), dynamic: true, doc: 'Replicas that must ack an acks=all write' },
  { name: 'unclean.leader.election.enable', type: 'boolean', default: 'false', dynamic: true, doc: 'Allow out-of-sync replicas to become leader' },
  // Kafka 4.4 no longer has leader.imbalance.per.broker.percentage (only the ZooKeeper-era controller
  // read it): every partition not led by its preferred replica is rebalanced (cluster/etcd/leader-balancer.ts).
  { name: 'auto.leader.rebalance.enable', type: 'boolean', default: 'true', doc: 'The controller moves leadership back to preferred replicas every leader.imbalance.check.interval.seconds' },
  { name: 'leader.imbalance.check.interval.seconds', type: 'long', default: '300', validator: atLeast(1), doc: 'How often the controller checks for partitions not led by their preferred replica' },
  { name: 'compression.type', type: 'string', default: 'producer', validator: validString(...COMPRESSION_TYPES), dynamic: true, doc: 'Codec for stored batches; producer keeps what the client sent' },
  { name: 'compression.gzip.level', type: 'int', default: '-1', validator: gzipLevel, dynamic: true, doc: 'Gzip level when compression.type is gzip' },
  { name: 'compression.lz4.level', type: 'int', default: '9', validator: lz4Level, dynamic: true, doc: 'LZ4 level when compression.type is lz4' },
  { name: 'compression.zstd.level', type: 'int', default: '3', validator: zstdLevel, dynamic: true, doc: 'Zstd level when compression.type is zstd' },

  // requests & connections
  { name: 'message.max.bytes', type: 'int', default: '1048588', validator: atLeast(0), dynamic: true, doc: 'Largest record batch accepted' },
  { name: 'socket.request.max.bytes', type: 'int', default: '104857600', validator: atLeast(1), doc: 'Largest request accepted on a socket' },
  { name: 'socket.send.buffer.bytes', type: 'int', default: '102400', doc: 'Socket send buffer size', noEffect: true },
  { name: 'socket.receive.buffer.bytes', type: 'int', default: '102400', doc: 'Socket receive buffer size', noEffect: true },
  { name: 'connections.max.idle.ms', type: 'long', default: '600000', doc: 'Close connections idle this long' },
  { name: 'max.connections', type: 'int', default: INT_MAX_S, validator: atLeast(0), dynamic: true, doc: 'Most client connections open at once' },
  { name: 'max.connections.per.ip', type: 'int', default: INT_MAX_S, validator: atLeast(0), dynamic: true, doc: 'Most connections from one address' },
  { name: 'max.connections.per.ip.overrides', type: 'string', default: '', dynamic: true, doc: 'Per-address (or host name) exceptions to max.connections.per.ip, e.g. "hostName:100,127.0.0.1:200"' },
  { name: 'fetch.max.bytes', type: 'int', default: '57671680', validator: atLeast(1024), doc: 'Most bytes returned by one fetch' },
  { name: 'max.incremental.fetch.session.cache.slots', type: 'int', default: '1000', validator: atLeast(0), doc: 'Most fetch sessions (KIP-227) kept at once' },
  { name: 'num.network.threads', type: 'int', default: '3', validator: atLeast(1), dynamic: true, doc: 'Network thread count', noEffect: true },
  { name: 'num.io.threads', type: 'int', default: '8', validator: atLeast(1), dynamic: true, doc: 'Request handler thread count', noEffect: true },
  { name: 'num.recovery.threads.per.data.dir', type: 'int', default: '2', validator: atLeast(1), dynamic: true, doc: 'Log recovery threads per directory', noEffect: true },
  { name: 'queued.max.requests', type: 'int', default: '500', validator: atLeast(1), doc: 'Requests waiting for their turn, broker-wide, before reads pause' },
  { name: 'queued.max.request.bytes', type: 'long', default: '-1', doc: 'Bytes of requests in the broker (partial frames included) before reads pause; -1: no limit' },

  // SASL (src/security, src/net/sasl-authenticator.ts). Each is also read with a listener prefix
  // (listener.name.<listener>.), the jaas, callback handler and reauth keys with a listener and
  // mechanism prefix (listener.name.<listener>.<mechanism>.), as Kafka's ChannelBuilders reads them.
  { name: 'sasl.enabled.mechanisms', type: 'list', default: 'GSSAPI', dynamic: true, doc: 'SASL mechanisms a SASL listener offers (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER; GSSAPI is not supported)' },
  { name: 'sasl.jaas.config', type: 'password', default: null, dynamic: true, doc: 'JAAS login module and options, e.g. PlainLoginModule with user_NAME="password" entries' },
  { name: 'sasl.mechanism.inter.broker.protocol', type: 'string', default: 'GSSAPI', dynamic: true, doc: 'Mechanism brokers authenticate to each other with on a SASL inter-broker listener' },
  { name: 'sasl.server.callback.handler.class', type: 'class', default: null, doc: 'Server callback handler; OAuthBearerValidatorCallbackHandler turns on JWT validation against a JWKS' },
  { name: 'sasl.server.max.receive.size', type: 'int', default: '524288', doc: 'Largest frame accepted before authentication completes' },
  { name: 'connections.max.reauth.ms', type: 'long', default: '0', doc: 'Most time an authenticated SASL session lasts before the client must re-authenticate (KIP-368); 0: forever' },
  { name: 'connection.failed.authentication.delay.ms', type: 'int', default: '100', validator: atLeast(0), doc: 'Delay before the answer to a failed authentication, after which the connection closes' },
  { name: 'sasl.oauthbearer.jwks.endpoint.url', type: 'string', default: null, doc: 'JWKS (file:// or https://) whose keys verify OAUTHBEARER JWTs' },
  { name: 'sasl.oauthbearer.jwks.endpoint.refresh.ms', type: 'long', default: '3600000', doc: 'How often an https JWKS is fetched again' },
  { name: 'sasl.oauthbearer.expected.audience', type: 'list', default: '', doc: 'A JWT must name one of these in aud (empty: aud is not checked)' },
  { name: 'sasl.oauthbearer.expected.issuer', type: 'string', default: null, doc: 'A JWT must have this iss (unset: not checked)' },
  { name: 'sasl.oauthbearer.sub.claim.name', type: 'string', default: 'sub', doc: 'JWT claim that names the principal' },
  { name: 'sasl.oauthbearer.scope.claim.name', type: 'string', default: 'scope', doc: 'JWT claim that holds the scopes' },
  { name: 'sasl.oauthbearer.clock.skew.seconds', type: 'int', default: '30', doc: 'Clock difference tolerated when checking exp, nbf and iat' },

  // TLS (SSL and SASL_SSL listeners; each may be given per listener with the listener.name.<listener>. prefix)
  { name: 'ssl.keystore.type', type: 'string', default: 'JKS', dynamic: true, doc: 'Key store format: PEM or PKCS12 (JKS is refused)' },
  { name: 'ssl.keystore.location', type: 'string', default: null, dynamic: true, doc: 'Key store file: PEM with the private key and certificate chain, or PKCS12' },
  { name: 'ssl.keystore.password', type: 'password', default: null, dynamic: true, doc: 'Password of a PKCS12 key store' },
  { name: 'ssl.keystore.certificate.chain', type: 'password', default: null, dynamic: true, doc: 'Certificate chain in PEM, inline (with ssl.keystore.key)' },
  { name: 'ssl.keystore.key', type: 'password', default: null, dynamic: true, doc: 'Private key in PEM, inline (with ssl.keystore.certificate.chain)' },
  { name: 'ssl.key.password', type: 'password', default: null, dynamic: true, doc: 'Password of an encrypted private key' },
  { name: 'ssl.truststore.type', type: 'string', default: 'JKS', dynamic: true, doc: 'Trust store format: PEM' },
  { name: 'ssl.truststore.location', type: 'string', default: null, dynamic: true, doc: 'Trust store file: PEM certificates of the trusted authorities' },
  { name: 'ssl.truststore.password', type: 'password', default: null, dynamic: true, doc: 'Trust store password (not used by PEM)' },
  { name: 'ssl.truststore.certificates', type: 'password', default: null, dynamic: true, doc: 'Trusted certificates in PEM, inline' },
  { name: 'ssl.client.auth', type: 'string', default: 'none', validator: validString('required', 'requested', 'none'), dynamic: true, doc: 'Whether clients must (required) or may (requested) present a certificate' },
  { name: 'ssl.enabled.protocols', type: 'list', default: 'TLSv1.2,TLSv1.3', dynamic: true, doc: 'TLS versions accepted' },
  { name: 'ssl.protocol', type: 'string', default: 'TLSv1.3', dynamic: true, doc: 'TLS protocol of the context (the versions are those of ssl.enabled.protocols)' },
  { name: 'ssl.cipher.suites', type: 'list', default: '', dynamic: true, doc: 'Cipher suites accepted (IANA or OpenSSL names); empty: the defaults' },
  { name: 'ssl.endpoint.identification.algorithm', type: 'string', default: 'https', dynamic: true, doc: 'https: brokers check the host name of the brokers they connect to; empty: they do not' },
  { name: 'ssl.principal.mapping.rules', type: 'string', default: 'DEFAULT', doc: 'Rules mapping a client certificate\'s distinguished name to a principal name' },
  { name: 'ssl.allow.dn.changes', type: 'boolean', default: 'false', doc: 'Whether a reloaded key store may change its distinguished name', noEffect: true },
  { name: 'ssl.allow.san.changes', type: 'boolean', default: 'false', doc: 'Whether a reloaded key store may change its subject alternative names', noEffect: true },
  { name: 'ssl.engine.factory.class', type: 'class', default: null, dynamic: true, doc: 'A custom Java SSL engine factory', noEffect: true },
  { name: 'ssl.keymanager.algorithm', type: 'string', default: 'SunX509', dynamic: true, doc: 'Java key manager algorithm', noEffect: true },
  { name: 'ssl.trustmanager.algorithm', type: 'string', default: 'PKIX', dynamic: true, doc: 'Java trust manager algorithm', noEffect: true },
  { name: 'ssl.provider', type: 'string', default: null, dynamic: true, doc: 'Java security provider', noEffect: true },
  { name: 'ssl.secure.random.implementation', type: 'string', default: null, dynamic: true, doc: 'Java SecureRandom implementation', noEffect: true },

  // log segments, retention, flushing
  { name: 'log.segment.bytes', type: 'int', default: '1073741824', validator: atLeast(MIN_SEGMENT_BYTES), dynamic: true, doc: 'Size at which a segment is rolled' },
  { name: 'log.roll.ms', type: 'long', default: null, dynamic: true, doc: 'Age at which a segment is rolled; overrides log.roll.hours' },
  { name: 'log.roll.hours', type: 'int', default: '168', validator: atLeast(1), doc: 'Segment roll age in hours' },
  { name: 'log.roll.jitter.ms', type: 'long', default: null, dynamic: true, doc: 'Random jitter subtracted from the roll age; overrides log.roll.jitter.hours' },
  { name: 'log.roll.jitter.hours', type: 'int', default: '0', validator: atLeast(0), doc: 'Roll jitter in hours' },
  { name: 'log.retention.ms', type: 'long', default: null, dynamic: true, doc: 'Keep data this long (-1: forever); overrides minutes and hours' },
  { name: 'log.retention.minutes', type: 'int', default: null, doc: 'Retention in minutes; overrides hours' },
  { name: 'log.retention.hours', type: 'int', default: '168', doc: 'Retention in hours' },
  { name: 'log.retention.bytes', type: 'long', default: '-1', dynamic: true, doc: 'Per-partition size cap (-1: none)' },
  { name: 'log.retention.check.interval.ms', type: 'long', default: '300000', validator: atLeast(1), doc: 'How often retention is enforced' },
  { name: 'log.index.interval.bytes', type: 'int', default: '4096', validator: atLeast(0), dynamic: true, doc: 'Bytes between offset index entries' },
  { name: 'log.index.size.max.bytes', type: 'int', default: '10485760', validator: atLeast(4), dynamic: true, doc: 'Largest offset index file' },
  { name: 'log.flush.interval.messages', type: 'long', default: LONG_MAX_S, validator: atLeast(1), dynamic: true, doc: 'Records appended between forced flushes' },
  { name: 'log.flush.interval.ms', type: 'long', default: null, dynamic: true, doc: 'Most time data stays unflushed; defaults to log.flush.scheduler.interval.ms' },
  { name: 'log.flush.scheduler.interval.ms', type: 'long', default: LONG_MAX_S, doc: 'How often the flusher looks for logs to flush' },
  { name: 'log.flush.offset.checkpoint.interval.ms', type: 'int', default: '60000', validator: atLeast(0), doc: 'How often recovery points are checkpointed' },
  { name: 'log.segment.delete.delay.ms', type: 'long', default: '60000', validator: atLeast(0), dynamic: true, doc: 'Delay before a deleted segment file is removed' },
  { name: 'log.preallocate', type: 'boolean', default: 'false', dynamic: true, doc: 'Preallocate segment files' },
  { name: 'log.message.timestamp.type', type: 'string', default: 'CreateTime', validator: validString(...TIMESTAMP_TYPES), dynamic: true, doc: 'Keep the producer timestamp or stamp append time' },
  { name: 'log.message.timestamp.before.max.ms', type: 'long', default: LONG_MAX_S, validator: atLeast(0), dynamic: true, doc: 'How far in the past a CreateTime timestamp may be' },
  { name: 'log.message.timestamp.after.max.ms', type: 'long', default: TIMESTAMP_AFTER_MAX_MS, validator: atLeast(0), dynamic: true, doc: 'How far in the future a CreateTime timestamp may be' },
  { name: 'log.local.retention.ms', type: 'long', default: '-2', validator: atLeast(-2), dynamic: true, doc: 'Local retention with tiered storage (-2: use retention)' },
  { name: 'log.local.retention.bytes', type: 'long', default: '-2', validator: atLeast(-2), dynamic: true, doc: 'Local size cap with tiered storage (-2: use retention)' },

  // cleanup / compaction
  { name: 'log.cleanup.policy', type: 'list', default: 'delete', validator: validList(...CLEANUP_POLICIES), dynamic: true, doc: 'delete, compact, or both' },
  { name: 'log.cleaner.enable', type: 'boolean', default: 'true', doc: 'Run the log cleaner for compacted topics' },
  { name: 'log.cleaner.threads', type: 'int', default: '1', validator: atLeast(0), dynamic: true, doc: 'Log cleaner threads', noEffect: true },
  { name: 'log.cleaner.backoff.ms', type: 'long', default: '15000', validator: atLeast(0), dynamic: true, doc: 'Cleaner sleep when nothing is cleanable' },
  { name: 'log.cleaner.min.cleanable.ratio', type: 'double', default: '0.5', validator: between(0, 1), dynamic: true, doc: 'Dirty ratio that triggers compaction' },
  { name: 'log.cleaner.delete.retention.ms', type: 'long', default: '86400000', validator: atLeast(0), dynamic: true, doc: 'How long tombstones survive compaction' },
  { name: 'log.cleaner.min.compaction.lag.ms', type: 'long', default: '0', validator: atLeast(0), dynamic: true, doc: 'Least age before a record may be compacted' },
  { name: 'log.cleaner.max.compaction.lag.ms', type: 'long', default: LONG_MAX_S, validator: atLeast(1), dynamic: true, doc: 'Most age before a record must be compactable' },
  { name: 'log.cleaner.io.max.bytes.per.second', type: 'double', default: '1.7976931348623157E308', dynamic: true, doc: 'Read and write rate the cleaner is held to' },
  { name: 'log.cleaner.dedupe.buffer.size', type: 'long', default: '134217728', dynamic: true, doc: 'Memory for the cleaner\'s key -> offset map' },
  { name: 'log.cleaner.io.buffer.size', type: 'int', default: '524288', validator: atLeast(0), dynamic: true, doc: 'Bytes the cleaner reads and writes at a time' },
  { name: 'log.cleaner.io.buffer.load.factor', type: 'double', default: '0.9', dynamic: true, doc: 'How full the cleaner\'s offset map may get' },

  // operating it: metrics and the web console (src/ops/)
  {
    name: 'http.listener', type: 'string', default: '',
    validator: custom('HOST:PORT or empty', (v) => {
      try {
        parseHttpListener(v as string);
        return null;
      } catch (e) {
        return (e as Error).message;
      }
    }),
    doc: 'Fjord: HOST:PORT of the HTTP listener that serves Prometheus metrics at /metrics and the web console at /; empty: no HTTP listener (`fjord start` defaults it to 127.0.0.1:8080)',
  },
  { name: 'http.console.writes.enable', type: 'boolean', default: 'false', doc: 'Fjord: whether the web console may change the cluster (create and delete topics, reset offsets); read-only when false' },
  // cluster mode (etcd)
  {
    name: 'etcd.connect', type: 'string', default: '',
    doc: 'Fjord: HOST:PORT[,HOST:PORT...][/prefix] of the etcd that holds the cluster metadata, as zookeeper.connect was (the prefix is the chroot); empty: a single broker, no cluster',
  },
  { name: 'broker.session.timeout.ms', type: 'int', default: '9000', validator: atLeast(1), doc: 'How long a broker stays registered without heartbeats (the TTL of its etcd lease, rounded up to whole seconds)' },
  { name: 'broker.rack', type: 'string', default: null, doc: 'Rack of this broker, for rack-aware replica placement' },

  // replication (Kafka's defaults)
  { name: 'replica.lag.time.max.ms', type: 'long', default: '30000', validator: atLeast(1), doc: 'A follower not caught up for this long leaves the ISR' },
  { name: 'num.replica.fetchers', type: 'int', default: '1', validator: atLeast(1), dynamic: true, doc: 'Fetcher connections per leader broker' },
  // Kafka's replication quotas (DynamicConfig.Broker): Long.MAX_VALUE is no throttle.
  { name: 'leader.replication.throttled.rate', type: 'long', default: LONG_MAX_S, validator: atLeast(0), dynamic: true, dynamicOnly: true, doc: 'Bytes per second a leader sends to the throttled replicas of its topics (leader.replication.throttled.replicas); only set dynamically' },
  { name: 'follower.replication.throttled.rate', type: 'long', default: LONG_MAX_S, validator: atLeast(0), dynamic: true, dynamicOnly: true, doc: 'Bytes per second a follower fetches for the throttled replicas of its topics (follower.replication.throttled.replicas); only set dynamically' },
  { name: 'replica.alter.log.dirs.io.max.bytes.per.second', type: 'long', default: LONG_MAX_S, validator: atLeast(0), dynamic: true, dynamicOnly: true, doc: 'Bytes per second of moving replicas between log directories; only set dynamically' },
  { name: 'replica.fetch.wait.max.ms', type: 'int', default: '500', validator: atLeast(0), doc: 'Longest wait of a follower fetch (below replica.lag.time.max.ms)' },
  { name: 'replica.fetch.min.bytes', type: 'int', default: '1', validator: atLeast(1), doc: 'Bytes a follower fetch waits for' },
  { name: 'replica.fetch.max.bytes', type: 'int', default: '1048576', validator: atLeast(0), doc: 'Bytes a follower fetches per partition (at least one batch)' },
  { name: 'replica.fetch.response.max.bytes', type: 'int', default: '10485760', validator: atLeast(0), doc: 'Bytes of one follower fetch response (at least one batch)' },
  { name: 'replica.fetch.backoff.ms', type: 'int', default: '1000', validator: atLeast(0), doc: 'Pause after a follower fetch failed' },
  { name: 'replica.socket.timeout.ms', type: 'int', default: '30000', doc: 'Timeout of follower fetch requests (at least replica.fetch.wait.max.ms)' },
  // the windows the replication throttle rates (above) are measured over (KIP-73)
  { name: 'replication.quota.window.num', type: 'int', default: '11', validator: atLeast(1), doc: 'Windows the replication throttle rates are measured over' },
  { name: 'replication.quota.window.size.seconds', type: 'int', default: '1', validator: atLeast(1), doc: 'Length of one replication throttle window' },
  // the windows client quotas are measured over (producer_byte_rate, consumer_byte_rate, request_percentage)
  { name: 'quota.window.num', type: 'int', default: '11', validator: atLeast(1), doc: 'Windows the client quota rates are measured over' },
  { name: 'quota.window.size.seconds', type: 'int', default: '1', validator: atLeast(1), doc: 'Length of one client quota window' },
  // and the controller mutation quota's (controller_mutation_rate: a token bucket of num * size seconds)
  { name: 'controller.quota.window.num', type: 'int', default: '11', validator: atLeast(1), doc: 'Windows the controller mutation quota is measured over' },
  { name: 'controller.quota.window.size.seconds', type: 'int', default: '1', validator: atLeast(1), doc: 'Length of one controller mutation quota window' },

  // group coordinator
  { name: 'offsets.topic.num.partitions', type: 'int', default: '50', validator: atLeast(1), doc: 'Partitions of __consumer_offsets' },
  { name: 'offsets.topic.replication.factor', type: 'short', default: '3', validator: atLeast(1), doc: 'Replication of __consumer_offsets (capped at live brokers)' },
  { name: 'offsets.topic.segment.bytes', type: 'int', default: '104857600', validator: atLeast(1), doc: 'Segment size of __consumer_offsets' },
  { name: 'offsets.retention.minutes', type: 'int', default: '10080', validator: atLeast(1), doc: 'Keep committed offsets of empty groups this long' },
  { name: 'offsets.retention.check.interval.ms', type: 'long', default: '600000', validator: atLeast(1), doc: 'How often stale offsets are purged' },
  { name: 'offset.metadata.max.bytes', type: 'int', default: '4096', doc: 'Largest metadata string on a committed offset' },
  { name: 'group.initial.rebalance.delay.ms', type: 'int', default: '3000', doc: 'Wait for more members before the first rebalance' },
  { name: 'group.min.session.timeout.ms', type: 'int', default: '6000', doc: 'Smallest session timeout a member may ask for' },
  { name: 'group.max.session.timeout.ms', type: 'int', default: '1800000', doc: 'Largest session timeout a member may ask for' },
  { name: 'group.max.size', type: 'int', default: INT_MAX_S, validator: atLeast(1), doc: 'Most members in one group' },
  {
    name: 'group.coordinator.rebalance.protocols', type: 'list', default: 'classic,consumer,streams',
    validator: {
      description: '[classic, consumer, share, streams]',
      ensureValid(name, value, type) {
        validList('classic', 'consumer', 'share', 'streams').ensureValid(name, value, type);
        if (!(value as string[]).includes('classic')) throw invalidValue(name, shownValue(value, type), 'Disabling the \'classic\' protocol is not supported.');
      },
    },
    doc: 'Rebalance protocols the group coordinator serves (without consumer: no ConsumerGroupHeartbeat, without streams: no StreamsGroupHeartbeat, as Kafka)',
  },
  // consumer groups (KIP-848)
  { name: 'group.consumer.session.timeout.ms', type: 'int', default: '45000', validator: atLeast(1), doc: 'Session timeout of consumer group members' },
  { name: 'group.consumer.min.session.timeout.ms', type: 'int', default: '45000', validator: atLeast(1), doc: 'Smallest consumer.session.timeout.ms a group may set' },
  { name: 'group.consumer.max.session.timeout.ms', type: 'int', default: '60000', validator: atLeast(1), doc: 'Largest consumer.session.timeout.ms a group may set' },
  { name: 'group.consumer.heartbeat.interval.ms', type: 'int', default: '5000', validator: atLeast(1), doc: 'Heartbeat interval of consumer group members' },
  { name: 'group.consumer.min.heartbeat.interval.ms', type: 'int', default: '5000', validator: atLeast(1), doc: 'Smallest consumer.heartbeat.interval.ms a group may set' },
  { name: 'group.consumer.max.heartbeat.interval.ms', type: 'int', default: '15000', validator: atLeast(1), doc: 'Largest consumer.heartbeat.interval.ms a group may set' },
  { name: 'group.consumer.max.size', type: 'int', default: INT_MAX_S, validator: atLeast(1), doc: 'Most members in one consumer group' },
  { name: 'group.consumer.assignors', type: 'list', default: 'uniform,range', validator: validList('uniform', 'range'), doc: 'Server assignors of consumer groups; the first is the default' },
  { name: 'group.consumer.migration.policy', type: 'string', default: 'bidirectional', validator: validString('disabled', 'downgrade', 'upgrade', 'bidirectional'), doc: 'Online migration between classic and consumer groups' },

  // transactions & producer ids
  { name: 'transaction.state.log.num.partitions', type: 'int', default: '50', validator: atLeast(1), doc: 'Partitions of __transaction_state' },
  { name: 'transaction.state.log.replication.factor', type: 'short', default: '3', validator: atLeast(1), doc: 'Replication of __transaction_state (capped at live brokers)' },
  { name: 'transaction.state.log.min.isr', type: 'int', default: '2', validator: atLeast(1), doc: 'min.insync.replicas of __transaction_state', noEffect: true },
  { name: 'transaction.state.log.segment.bytes', type: 'int', default: '104857600', validator: atLeast(1), doc: 'Segment size of __transaction_state' },
  { name: 'transaction.partition.verification.enable', type: 'boolean', default: 'true', dynamic: true, doc: 'Check with the transaction coordinator that a partition is in the transaction before its first transactional write (KIP-890)' },
  { name: 'transaction.max.timeout.ms', type: 'int', default: '900000', validator: atLeast(1), doc: 'Largest transaction timeout a producer may ask for' },
  { name: 'transactional.id.expiration.ms', type: 'int', default: '604800000', validator: atLeast(1), doc: 'Forget idle transactional ids after this long' },
  { name: 'transaction.abort.timed.out.transaction.cleanup.interval.ms', type: 'int', default: '10000', validator: atLeast(1), doc: 'How often timed-out transactions are aborted' },
  { name: 'transaction.remove.expired.transaction.cleanup.interval.ms', type: 'int', default: '3600000', validator: atLeast(1), doc: 'How often expired transactional ids are removed' },
  { name: 'producer.id.expiration.ms', type: 'int', default: '86400000', validator: atLeast(1), dynamic: true, doc: 'Forget idle producer ids after this long' },
  { name: 'producer.id.expiration.check.interval.ms', type: 'int', default: '600000', validator: atLeast(1), internal: true, doc: 'How often expired producer ids are removed' },

  // the share coordinator (KIP-932: src/share-state)
  { name: 'share.coordinator.state.topic.num.partitions', type: 'int', default: '50', validator: atLeast(1), doc: 'Partitions of __share_group_state' },
  { name: 'share.coordinator.state.topic.replication.factor', type: 'short', default: '3', validator: atLeast(1), doc: 'Replication of __share_group_state (capped at live brokers)' },
  { name: 'share.coordinator.state.topic.min.isr', type: 'short', default: '2', validator: atLeast(1), doc: 'min.insync.replicas of __share_group_state' },
  { name: 'share.coordinator.state.topic.segment.bytes', type: 'int', default: '104857600', validator: atLeast(1), doc: 'Segment size of __share_group_state' },
  { name: 'share.coordinator.state.topic.prune.interval.ms', type: 'int', default: '300000', validator: atLeast(1), internal: true, doc: 'How often the records of __share_group_state no state needs any more are deleted' },
  { name: 'share.coordinator.snapshot.update.records.per.snapshot', type: 'int', default: '500', validator: between(0, 500), doc: 'ShareUpdate records a share-partition gets between two ShareSnapshot records' },

  // The broker defaults and bounds of the group configs (group-config.ts).
  { name: 'group.consumer.assignment.interval.ms', type: 'int', default: '1000', validator: atLeast(0), dynamic: true, doc: 'Least time between two target assignments of a consumer group' },
  { name: 'group.consumer.min.assignment.interval.ms', type: 'int', default: '0', validator: atLeast(0), doc: 'Smallest consumer.assignment.interval.ms a group may set' },
  { name: 'group.consumer.max.assignment.interval.ms', type: 'int', default: '15000', validator: atLeast(0), doc: 'Largest consumer.assignment.interval.ms a group may set' },
  { name: 'group.share.max.size', type: 'int', default: '200', validator: atLeast(1), doc: 'Most members in one share group' },
  { name: 'group.share.session.timeout.ms', type: 'int', default: '45000', validator: atLeast(1), doc: 'Session timeout of share group members' },
  { name: 'group.share.min.session.timeout.ms', type: 'int', default: '45000', validator: atLeast(1), doc: 'Smallest share.session.timeout.ms a group may set' },
  { name: 'group.share.max.session.timeout.ms', type: 'int', default: '60000', validator: atLeast(1), doc: 'Largest share.session.timeout.ms a group may set' },
  { name: 'group.share.heartbeat.interval.ms', type: 'int', default: '5000', validator: atLeast(1), doc: 'Heartbeat interval of share group members' },
  { name: 'group.share.min.heartbeat.interval.ms', type: 'int', default: '5000', validator: atLeast(1), doc: 'Smallest share.heartbeat.interval.ms a group may set' },
  { name: 'group.share.max.heartbeat.interval.ms', type: 'int', default: '15000', validator: atLeast(1), doc: 'Largest share.heartbeat.interval.ms a group may set' },
  { name: 'group.share.record.lock.duration.ms', type: 'int', default: '30000', validator: atLeast(1000), doc: 'How long a share group record stays acquired' },
  { name: 'group.share.min.record.lock.duration.ms', type: 'int', default: '15000', validator: atLeast(1000), doc: 'Smallest share.record.lock.duration.ms a group may set' },
  { name: 'group.share.max.record.lock.duration.ms', type: 'int', default: '60000', validator: atLeast(1000), doc: 'Largest share.record.lock.duration.ms a group may set' },
  { name: 'group.share.delivery.count.limit', type: 'int', default: '5', validator: atLeast(2), doc: 'Deliveries of a share group record before it is archived' },
  { name: 'group.share.min.delivery.count.limit', type: 'int', default: '2', validator: atLeast(2), doc: 'Smallest share.delivery.count.limit a group may set' },
  { name: 'group.share.max.delivery.count.limit', type: 'int', default: '10', validator: atLeast(2), doc: 'Largest share.delivery.count.limit a group may set' },
  { name: 'group.share.partition.max.record.locks', type: 'int', default: '2000', validator: atLeast(100), doc: 'Records of a share partition acquired at once' },
  { name: 'group.share.min.partition.max.record.locks', type: 'int', default: '100', validator: atLeast(100), doc: 'Smallest share.partition.max.record.locks a group may set' },
  { name: 'group.share.max.partition.max.record.locks', type: 'int', default: '4000', validator: atLeast(100), doc: 'Largest share.partition.max.record.locks a group may set' },
  { name: 'group.share.max.share.sessions', type: 'int', default: '2000', validator: atLeast(1), doc: 'Most share sessions (KIP-932) kept at once' },
  { name: 'group.share.assignment.interval.ms', type: 'int', default: '1000', validator: atLeast(0), dynamic: true, doc: 'Least time between two target assignments of a share group' },
  { name: 'group.share.min.assignment.interval.ms', type: 'int', default: '0', validator: atLeast(0), doc: 'Smallest share.assignment.interval.ms a group may set' },
  { name: 'group.share.max.assignment.interval.ms', type: 'int', default: '15000', validator: atLeast(0), doc: 'Largest share.assignment.interval.ms a group may set' },
  { name: 'errors.deadletterqueue.auto.create.topics.enable', type: 'boolean', default: 'false', dynamic: true, doc: 'Whether a share group\'s dead-letter queue topic is created when missing (KIP-1191)' },
  { name: 'errors.deadletterqueue.topic.name.prefix', type: 'string', default: 'dlq.', dynamic: true, doc: 'The prefix every share group dead-letter queue topic must have ("": any name)' },
  { name: 'group.streams.session.timeout.ms', type: 'int', default: '45000', validator: atLeast(1), doc: 'Session timeout of streams group members' },
  { name: 'group.streams.min.session.timeout.ms', type: 'int', default: '45000', validator: atLeast(1), doc: 'Smallest streams.session.timeout.ms a group may set' },
  { name: 'group.streams.max.session.timeout.ms', type: 'int', default: '60000', validator: atLeast(1), doc: 'Largest streams.session.timeout.ms a group may set' },
  { name: 'group.streams.heartbeat.interval.ms', type: 'int', default: '5000', validator: atLeast(1), doc: 'Heartbeat interval of streams group members' },
  { name: 'group.streams.min.heartbeat.interval.ms', type: 'int', default: '5000', validator: atLeast(1), doc: 'Smallest streams.heartbeat.interval.ms a group may set' },
  { name: 'group.streams.max.heartbeat.interval.ms', type: 'int', default: '15000', validator: atLeast(1), doc: 'Largest streams.heartbeat.interval.ms a group may set' },
  { name: 'group.streams.num.standby.replicas', type: 'int', default: '0', validator: atLeast(0), doc: 'Standby replicas of each streams task' },
  { name: 'group.streams.max.standby.replicas', type: 'int', default: '2', validator: atLeast(0), doc: 'Largest streams.num.standby.replicas a group may set' },
  { name: 'group.streams.initial.rebalance.delay.ms', type: 'int', default: '3000', validator: atLeast(0), doc: 'Wait before a new streams group\'s first assignment' },
  { name: 'group.streams.assignment.interval.ms', type: 'int', default: '1000', validator: atLeast(0), dynamic: true, doc: 'Least time between two target assignments of a streams group', noEffect: true },
  { name: 'group.streams.min.assignment.interval.ms', type: 'int', default: '0', validator: atLeast(0), doc: 'Smallest streams.assignment.interval.ms a group may set' },
  { name: 'group.streams.max.assignment.interval.ms', type: 'int', default: '15000', validator: atLeast(0), doc: 'Largest streams.assignment.interval.ms a group may set' },
  { name: 'group.streams.assignors', type: 'list', default: 'sticky', doc: 'Task assignors of streams groups; the first is the default', noEffect: true },
  { name: 'group.streams.rack.aware.assignment.tags', type: 'list', default: '', doc: 'Client tags that rack-aware streams assignment spreads standbys over', noEffect: true },
];

export const BROKER_CONFIGS = defineConfigs(BROKER_CONFIG_DEFS);

/**
 * Kafka's DynamicBrokerConfig.brokerConfigSynonyms: the names that feed one
 * broker setting, highest priority first.
 */
export function brokerConfigSynonyms(name: string): string[] {
  switch (name) {
    case 'log.roll.ms':
    case 'log.roll.hours':
      return ['log.roll.ms', 'log.roll.hours'];
    case 'log.roll.jitter.ms':
    case 'log.roll.jitter.hours':
      return ['log.roll.jitter.ms', 'log.roll.jitter.hours'];
    case 'log.flush.interval.ms':
      return ['log.flush.interval.ms', 'log.flush.scheduler.interval.ms'];
    case 'log.retention.ms':
    case 'log.retention.minutes':
    case 'log.retention.hours':
      return ['log.retention.ms', 'log.retention.minutes', 'log.retention.hours'];
    default:
      return [name];
  }
}

/** One DescribeConfigs result entry (also used for CreateTopics configs). */
export interface ConfigSynonym {
  name: string;
  value: string | null;
  source: ConfigSource;
}

export interface ConfigEntry {
  name: string;
  value: string | null;
  readOnly: boolean;
  source: ConfigSource;
  isSensitive: boolean;
  synonyms: ConfigSynonym[];
  configType: ConfigType;
  documentation: string | null;
}
