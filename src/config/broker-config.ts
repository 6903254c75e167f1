/**
 * BrokerConfig: the broker's configuration, static and dynamic.
 *
 * Static layers, lowest to highest: definition defaults < `--config`
 * properties file < `--set key=value` < explicit CLI flags (--host, --port,
 * --advertised-host, --advertised-port, --data-dir, --node-id). Everything
 * that is not a default is a STATIC_BROKER_CONFIG in DescribeConfigs terms.
 * Unknown keys are kept (Kafka reports them too) and produce warnings; bad
 * values throw ConfigError.
 *
 * On top of them, Kafka's dynamic broker configs (KIP-226, its
 * DynamicBrokerConfig): the cluster-wide defaults (BROKER resource "",
 * DYNAMIC_DEFAULT_BROKER_CONFIG) and this broker's own (resource "<id>",
 * DYNAMIC_BROKER_CONFIG), set by setDynamicConfigs() from the metadata. The
 * effective value is per-broker > default > static > definition default, and
 * a higher layer's key hides the lower layers' synonyms of it (log.retention.ms
 * set dynamically beats a static log.retention.hours). get()/getInt()... read
 * the effective value; 'change' is emitted with the names whose value changed.
 */
import { EventEmitter } from 'events';
import * as path from 'path';
import {
  BROKER_CONFIGS,
  ConfigEntry,
  ConfigError,
  INT_MAX,
  ConfigKey,
  ConfigSource,
  ConfigSynonym,
  ConfigType,
  ConfigValue,
  brokerConfigSynonyms,
  invalidValue,
  parseValue,
  valueToString,
} from './definitions';
import { parseEtcdConnect, type EtcdConnect } from './etcd-connect';
import { readPropertiesFile } from './properties';

export { ConfigError, ConfigSource, ConfigType } from './definitions';
export type { ConfigEntry, ConfigSynonym } from './definitions';

export type SecurityProtocol = 'PLAINTEXT' | 'SSL' | 'SASL_PLAINTEXT' | 'SASL_SSL';
const SECURITY_PROTOCOLS: SecurityProtocol[] = ['PLAINTEXT', 'SSL', 'SASL_PLAINTEXT', 'SASL_SSL'];

/** One listener endpoint. host '' means all interfaces; port 0 means "any free port". */
export interface Endpoint {
  /** Listener name, upper-cased (Kafka's ListenerName.normalised). */
  name: string;
  securityProtocol: SecurityProtocol;
  host: string;
  port: number;
}

/** Where a key's value came from. */
export type ConfigOrigin = 'default' | 'file' | 'set' | 'flag';

/** Explicit CLI flags (only the ones the user actually passed). */
export interface BrokerCliFlags {
  host?: string;
  port?: number;
  advertisedHost?: string;
  advertisedPort?: number;
  dataDir?: string;
  nodeId?: number;
}

export interface BrokerConfigSources {
  /** Path of a server.properties file. */
  configFile?: string;
  /** Already-parsed file contents (instead of, or on top of, configFile). */
  fileProps?: Map<string, string> | Record<string, string>;
  /** `--set` values: "key=value" strings, or a map. Later wins. */
  sets?: string[] | Map<string, string> | Record<string, string>;
  flags?: BrokerCliFlags;
  /** Base for relative log directories (default process.cwd()). */
  cwd?: string;
}

export interface DescribeOptions {
  includeSynonyms?: boolean;
  includeDocumentation?: boolean;
}

/** Host advertised when a listener binds every interface ('', 0.0.0.0 or ::). */
export const DEFAULT_ADVERTISED_HOST = '127.0.0.1';

const LISTENER_RE = /^(.*):\/\/\[?([0-9a-zA-Z\-%._:]*?)\]?:(-?[0-9]+)$/;

function toMap(m: Map<string, string> | Record<string, string> | undefined): Map<string, string> {
  if (!m) return new Map();
  return m instanceof Map ? new Map(m) : new Map(Object.entries(m));
}

/** Parses one `key=value` string as given to --set. */
export function parseSetArg(arg: string): [string, string] {
  const eq = arg.indexOf('=');
  if (eq <= 0) {
    throw new ConfigError(`Invalid --set argument '${arg}': expected key=value`, undefined, arg);
  }
  return [arg.slice(0, eq).trim(), arg.slice(eq + 1)];
}

/** Parses `listener.security.protocol.map` ("NAME:PROTOCOL,..."). */
export function parseSecurityProtocolMap(raw: string, key = 'listener.security.protocol.map'): Map<string, SecurityProtocol> {
  const m = new Map<string, SecurityProtocol>();
  const t = raw.trim();
  if (t === '') return m;
  for (const entry of t.split(/\s*,\s*/)) {
    const parts = entry.split(/\s*:\s*/);
    if (parts.length !== 2 || parts[0] === '' || parts[1] === '') {
      throw invalidValue(key, raw, `Map entry '${entry}' should be of form NAME:PROTOCOL`);
    }
    const proto = parts[1].toUpperCase() as SecurityProtocol;
    if (!SECURITY_PROTOCOLS.includes(proto)) {
      throw invalidValue(key, raw, `Unknown security protocol '${parts[1]}' (allowed: ${SECURITY_PROTOCOLS.join(', ')})`);
    }
    m.set(parts[0].toUpperCase(), proto);
  }
  return m;
}

/**
 * Parses a listeners string ("NAME://host:port,..."). Security protocols are
 * looked up in `protocolMap` (default: each protocol maps to itself).
 */
export function parseListeners(
  raw: string,
  key = 'listeners',
  protocolMap: Map<string, SecurityProtocol> = parseSecurityProtocolMap(
    BROKER_CONFIGS.get('listener.security.protocol.map')!.defaultString!,
  ),
): Endpoint[] {
  const t = raw.trim();
  if (t === '') return [];
  const out: Endpoint[] = [];
  for (const item of t.split(/\s*,\s*/)) {
    const m = LISTENER_RE.exec(item);
    if (!m) throw invalidValue(key, raw, `Unable to parse ${item} to a broker endpoint (expected NAME://host:port)`);
    const name = m[1].toUpperCase();
    const port = Number(m[3]);
    if (!Number.isInteger(port) || port < 0 || port > 65535) {
      throw invalidValue(key, raw, `port ${m[3]} of ${item} must be between 0 and 65535`);
    }
    const proto = protocolMap.get(name);
    if (!proto) {
      throw invalidValue(key, raw, `No security protocol defined for listener ${name} (see listener.security.protocol.map)`);
    }
    out.push({ name, securityProtocol: proto, host: m[2], port });
  }
  const seen = new Set<string>();
  for (const ep of out) {
    if (seen.has(ep.name)) throw invalidValue(key, raw, `Each listener must have a different name`);
    seen.add(ep.name);
  }
  return out;
}

/** Formats endpoints back to Kafka's listener syntax (IPv6 hosts in brackets). */
export function formatListeners(eps: Endpoint[]): string {
  return eps.map((e) => `${e.name}://${e.host.includes(':') ? `[${e.host}]` : e.host}:${e.port}`).join(',');
}

/**
 * max.connections.per.ip.overrides, as Kafka reads it: `host:count` pairs separated by commas, each
 * split at its last ':' (so IPv6 addresses work); a host may hold only Kafka's host characters.
 */
export function parseConnectionOverrides(raw: string): Map<string, number> {
  const key = 'max.connections.per.ip.overrides';
  const out = new Map<string, number>();
  if (raw.trim() === '') return out;
  const invalid: string[] = [];
  for (const entry of raw.trim().split(/\s*,\s*/)) {
    const colon = entry.lastIndexOf(':');
    const host = entry.slice(0, colon).trim();
    const count = entry.slice(colon + 1).trim();
    if (colon < 0 || !/^[+-]?\d+$/.test(count) || Math.abs(Number(count)) > INT_MAX) {
      throw new ConfigError(`Error parsing configuration property '${key}': '${entry}' is not host:count`, key, raw);
    }
    if (!/^[0-9a-zA-Z\-%._:]*$/.test(host)) invalid.push(host);
    out.set(host, Number(count));
  }
  if (invalid.length > 0) throw new ConfigError(`${key} contains invalid addresses : ${invalid.join(',')}`, key, raw);
  return out;
}

/**
 * The inter-broker listener, as Kafka's KafkaConfig picks and checks it: inter.broker.listener.name,
 * else the listener named after security.inter.broker.protocol; it must be advertised. Fjord only
 * relaxes the default: with neither set and no PLAINTEXT listener, the first advertised listener.
 */
function interBrokerListenerOf(name: string | null, protocol: string | null, advertised: readonly Endpoint[]): Endpoint {
  if (name !== null && protocol !== null) {
    throw new ConfigError('Only one of inter.broker.listener.name and security.inter.broker.protocol should be set.', 'inter.broker.listener.name', name);
  }
  const wanted = (name ?? protocol ?? 'PLAINTEXT').toUpperCase();
  const found = advertised.find((ep) => ep.name === wanted);
  if (found) return found;
  if (name === null && protocol === null) return advertised[0];
  throw new ConfigError('requirement failed: inter.broker.listener.name must be a listener name defined in advertised.listeners. ' +
    `The valid options based on currently configured listeners are ${advertised.map((ep) => ep.name).join(',')}`,
  name === null ? 'security.inter.broker.protocol' : 'inter.broker.listener.name', wanted);
}

function isWildcardHost(h: string): boolean {
  return h === '' || h === '0.0.0.0' || h === '::' || h === '[::]';
}

function checkPort(flag: string, v: unknown): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > 65535) {
    throw new ConfigError(`Invalid value ${String(v)} for ${flag}: must be an integer between 0 and 65535`, flag, v);
  }
  return v;
}

/** The broker times Kafka derives from several keys (KafkaConfig.validateValues checks them). */
interface LogTimes {
  logRetentionMs: number;
  logRollMs: number;
  logRollJitterMs: number;
  logFlushIntervalMs: number;
}

/** A failed KafkaConfig requirement: the key, the value shown, Kafka's text. */
interface Requirement {
  key: string;
  value: string;
  text: string;
}

/** The log times from typed values, or the requirement they break. */
function logTimes(get: (name: string) => ConfigValue, raw: (name: string) => string | undefined): LogTimes | Requirement {
  const intOf = (name: string) => Number(get(name));
  const rollMs = get('log.roll.ms');
  const logRollMs = rollMs !== null ? Number(rollMs) : 3600000 * intOf('log.roll.hours');
  if (logRollMs < 1) return { key: 'log.roll.ms', value: String(logRollMs), text: 'log.roll.ms must be greater than or equal to 1' };
  const jitter = get('log.roll.jitter.ms');
  const logRollJitterMs = jitter !== null ? Number(jitter) : 3600000 * intOf('log.roll.jitter.hours');
  if (logRollJitterMs < 0) {
    return { key: 'log.roll.jitter.ms', value: String(logRollJitterMs), text: 'log.roll.jitter.ms must be greater than or equal to 0' };
  }
  const retMs = get('log.retention.ms');
  const retMin = get('log.retention.minutes');
  let retention: number;
  let retentionKey: string;
  if (retMs !== null) [retention, retentionKey] = [Number(retMs), 'log.retention.ms'];
  else if (retMin !== null) [retention, retentionKey] = [60000 * (retMin as number), 'log.retention.minutes'];
  else [retention, retentionKey] = [3600000 * intOf('log.retention.hours'), 'log.retention.hours'];
  if (retention < 0) retention = -1;
  if (retention === 0) {
    return { key: retentionKey, value: raw(retentionKey) ?? '0', text: 'log.retention.ms must be unlimited (-1) or, greater than or equal to 1' };
  }
  const flushMs = get('log.flush.interval.ms');
  return {
    logRetentionMs: retention, logRollMs, logRollJitterMs,
    logFlushIntervalMs: Number(flushMs !== null ? flushMs : get('log.flush.scheduler.interval.ms')),
  };
}

/** Kafka's overrideProps: a layer's key replaces the lower layers' value of it and of its synonyms. */
function overlay(props: Map<string, string>, layer: ReadonlyMap<string, string>): void {
  for (const [k, v] of layer) {
    for (const s of brokerConfigSynonyms(k)) props.delete(s);
    props.set(k, v);
  }
}

/** The typed value of every known config from raw properties (dynamic-only configs from `dynamic` alone). */
function typedValues(props: ReadonlyMap<string, string>, dynamic: ReadonlySet<string>): Map<string, ConfigValue> {
  const values = new Map<string, ConfigValue>();
  for (const [name, key] of BROKER_CONFIGS) {
    const raw = key.dynamicOnly && !dynamic.has(name) ? undefined : props.get(name);
    values.set(name, raw === undefined ? key.defaultValue : parseValue(key, raw));
  }
  return values;
}

/**
 * Kafka's DynamicThreadPool and LogCleaner checks: a thread count changed dynamically may at most
 * double or halve. (Kafka wraps their text as below.)
 */
const THREAD_COUNT_CONFIGS = ['num.io.threads', 'num.replica.fetchers', 'num.recovery.threads.per.data.dir'];
function threadCountRefusal(name: string, next: number, current: number): string | null {
  let text: string | null = null;
  if (name === 'log.cleaner.threads') {
    if (next < 1) text = 'Log cleaner threads should be at least 1';
    else if (next < Math.floor(current / 2)) text = `Log cleaner threads cannot be reduced to less than half the current value ${current}`;
    else if (next > current * 2) text = `Log cleaner threads cannot be increased to more than double the current value ${current}`;
  } else {
    const failed = `Dynamic thread count update validation failed for ${name}=${next}`;
    if (next <= 0) text = `${failed}, value should be at least 1`;
    else if (next < Math.floor(current / 2)) text = `${failed}, value should be at least half the current value ${current}`;
    else if (next > current * 2) text = `${failed}, value should not be greater than double the current value ${current}`;
  }
  return text === null ? null
    : `Invalid value org.apache.kafka.common.config.ConfigException: ${text} for configuration Invalid dynamic configuration`;
}

/** Kafka's SslConfigs.RECONFIGURABLE_CONFIGS: dynamic only with a listener prefix (listener.name.<l>.). */
const LISTENER_SECURITY_CONFIGS = [
  'ssl.keystore.type', 'ssl.keystore.location', 'ssl.keystore.password', 'ssl.key.password', 'ssl.truststore.type',
  'ssl.truststore.location', 'ssl.truststore.password', 'ssl.keystore.certificate.chain', 'ssl.keystore.key', 'ssl.truststore.certificates',
];
const LISTENER_PREFIX_RE = /^listener\.name\.[^.]*\./;

/**
 * A known key with a listener prefix, and for SASL keys a mechanism prefix too
 * (listener.name.<l>.<key>, listener.name.<l>.<mechanism>.<key>, <mechanism>.<key>), as Kafka's
 * channel builders read them: not an unknown key.
 */
function isListenerOverride(key: string): boolean {
  const rest = key.replace(LISTENER_PREFIX_RE, '');
  const unprefixed = rest.replace(/^(plain|scram-sha-256|scram-sha-512|oauthbearer|gssapi)\./, '');
  return unprefixed !== key && BROKER_CONFIGS.has(unprefixed);
}

/** Which dynamic layer: this broker's own configs, or the cluster-wide defaults. */
export type DynamicLevel = 'broker' | 'default';

export class BrokerConfig {
  /** Every non-default static key (file, --set, flags), raw strings, including unknown keys. */
  readonly originals: ReadonlyMap<string, string>;
  /** Unknown keys and other non-fatal remarks, for the CLI to log. */
  readonly warnings: string[] = [];

  readonly nodeId: number;
  /** Client listeners (controller listeners excluded). */
  readonly listeners: readonly Endpoint[];
  /** The first client listener: the one the broker serves. */
  readonly listener: Endpoint;
  /** Advertised endpoints; port 0 means "the port actually bound". */
  readonly advertisedListeners: readonly Endpoint[];
  readonly advertisedListener: Endpoint;
  /** The advertised listener brokers reach each other on (inter.broker.listener.name; see interBrokerListenerOf). */
  readonly interBrokerListener: Endpoint;
  /** Absolute log directories (log.dirs, else log.dir). */
  readonly logDirs: readonly string[];
  /** logDirs[0]: where meta.properties and the metadata store live. */
  readonly dataDir: string;
  /** etcd.connect parsed; null when empty (a single broker, no cluster mode). */
  readonly etcdConnect: EtcdConnect | null;

  /** Effective typed values (static and dynamic layers merged). */
  private values: Map<string, ConfigValue>;
  private times: LogTimes;
  private connectionOverrides: Map<string, number>;
  private readonly origins: Map<string, ConfigOrigin>;
  /** The dynamic layers, raw strings as stored (custom keys included). */
  private dynamicBroker: ReadonlyMap<string, string> = new Map();
  private dynamicDefault: ReadonlyMap<string, string> = new Map();
  /** The layers as last given to setDynamicConfigs (the metadata's own objects, replaced on each write). */
  private storedBroker: Readonly<Record<string, string>> | undefined;
  private storedDefault: Readonly<Record<string, string>> | undefined;
  /** Not a base class: EventEmitter's own `listeners` would clash with the field. */
  private readonly events = new EventEmitter();

  /**
   * Builds a config from static properties (all treated as STATIC_BROKER_CONFIG).
   * Prefer BrokerConfig.load() for the layered CLI sources.
   */
  constructor(
    props: Map<string, string> | Record<string, string> = {},
    opts: { origins?: Map<string, ConfigOrigin>; cwd?: string } = {},
  ) {
    const originals = toMap(props);
    // Kafka's populateSynonyms: node.id and broker.id stand in for each other.
    const nid = originals.get('node.id');
    const bid = originals.get('broker.id');
    if (nid !== undefined && bid === undefined) originals.set('broker.id', nid);
    if (bid !== undefined && nid === undefined) originals.set('node.id', bid);
    this.originals = originals;
    this.origins = opts.origins ?? new Map([...originals.keys()].map((k) => [k, 'file' as ConfigOrigin]));

    this.values = typedValues(originals, new Set());
    for (const k of originals.keys()) {
      if (isListenerOverride(k)) continue;
      if (!BROKER_CONFIGS.has(k) || BROKER_CONFIGS.get(k)!.dynamicOnly) {
        this.warnings.push(`The configuration '${k}' was supplied but isn't a known config.`);
      }
    }

    // ---- identity
    const nodeId = this.getInt('node.id');
    if (this.getInt('broker.id') !== nodeId) {
      throw new ConfigError('You must set `node.id` to the same value as `broker.id`.', 'node.id', nodeId);
    }
    if (nodeId < 0) throw invalidValue('node.id', String(nodeId), 'Value must be at least 0');
    this.nodeId = nodeId;

    // ---- listeners
    const protoMap = parseSecurityProtocolMap(this.getString('listener.security.protocol.map'));
    const controllerNames = new Set(this.getList('controller.listener.names').map((n) => n.toUpperCase()));
    const listenersRaw = this.valueString('listeners') ?? '';
    const all = parseListeners(listenersRaw, 'listeners', protoMap);
    const ports = new Set<number>();
    for (const ep of all) {
      if (ep.port !== 0 && ports.has(ep.port)) {
        throw invalidValue('listeners', listenersRaw, 'Each listener must have a different port');
      }
      ports.add(ep.port);
    }
    const client = all.filter((ep) => !controllerNames.has(ep.name));
    for (const ep of all) {
      if (controllerNames.has(ep.name)) {
        this.warnings.push(`Controller listener ${ep.name} is ignored: Fjord has no separate KRaft controller.`);
      }
    }
    if (client.length === 0) {
      throw invalidValue('listeners', listenersRaw, 'at least one non-controller listener is required');
    }
    this.listeners = client;
    this.listener = client[0];

    const advRaw = this.valueString('advertised.listeners');
    let advertised: Endpoint[];
    if (advRaw !== null && advRaw !== '') {
      advertised = parseListeners(advRaw, 'advertised.listeners', protoMap);
      for (const ep of advertised) {
        if (ep.host === '0.0.0.0') {
          throw invalidValue('advertised.listeners', advRaw,
            'advertised.listeners cannot use the nonroutable meta-address 0.0.0.0. Use a routable IP address.');
        }
        if (!client.some((l) => l.name === ep.name)) {
          throw invalidValue('advertised.listeners', advRaw,
            `advertised.listeners listener names must be equal to or a subset of the ones defined in listeners. ` +
            `Found ${ep.name}. The valid options are ${client.map((l) => l.name).join(',')}`);
        }
      }
      advertised = advertised.map((ep) => (ep.host === '' ? { ...ep, host: DEFAULT_ADVERTISED_HOST } : ep));
    } else {
      advertised = client.map((ep) => (isWildcardHost(ep.host) ? { ...ep, host: DEFAULT_ADVERTISED_HOST } : { ...ep }));
    }
    if (advertised.length === 0) {
      throw invalidValue('advertised.listeners', advRaw, 'at least one advertised listener is required');
    }
    this.advertisedListeners = advertised;
    this.advertisedListener = advertised.find((ep) => ep.name === this.listener.name) ?? advertised[0];
    this.interBrokerListener = interBrokerListenerOf(this.valueString('inter.broker.listener.name'),
      this.originals.has('security.inter.broker.protocol') ? this.getString('security.inter.broker.protocol') : null, advertised);

    // ---- directories
    const cwd = opts.cwd ?? process.cwd();
    const dirsRaw = this.valueString('log.dirs') ?? this.valueString('log.dir') ?? '';
    const dirs = dirsRaw.split(',').map((d) => d.trim()).filter((d) => d !== '');
    if (dirs.length === 0) {
      throw new ConfigError('At least one log directory must be defined via log.dirs or log.dir.', 'log.dirs', dirsRaw);
    }
    this.logDirs = dirs.map((d) => path.resolve(cwd, d));
    this.dataDir = this.logDirs[0];

    // ---- derived times (KafkaConfig.validateValues)
    const times = logTimes((n) => this.get(n), (n) => this.originals.get(n));
    if ('text' in times) throw invalidValue(times.key, times.value, times.text);
    this.times = times;

    // ---- connection limits (KafkaConfig.validateValues)
    const queuedMaxBytes = this.getLong('queued.max.request.bytes');
    if (queuedMaxBytes > 0 && queuedMaxBytes < this.getInt('socket.request.max.bytes')) {
      throw new ConfigError('queued.max.request.bytes must be larger or equal to socket.request.max.bytes', 'queued.max.request.bytes', queuedMaxBytes);
    }
    this.connectionOverrides = parseConnectionOverrides(this.getString('max.connections.per.ip.overrides'));
    if (this.getInt('max.connections.per.ip') === 0 && this.connectionOverrides.size === 0) {
      throw new ConfigError('max.connections.per.ip can be set to zero only if max.connections.per.ip.overrides property is set.',
        'max.connections.per.ip', 0);
    }
    const etcd = this.getString('etcd.connect');
    this.etcdConnect = etcd.trim() === '' ? null : parseEtcdConnect(etcd);
  }

  /** log.retention.ms > minutes > hours; any negative value is -1 (forever). */
  get logRetentionMs(): number {
    return this.times.logRetentionMs;
  }

  /** log.roll.ms, else log.roll.hours. */
  get logRollMs(): number {
    return this.times.logRollMs;
  }

  get logRollJitterMs(): number {
    return this.times.logRollJitterMs;
  }

  /** log.flush.interval.ms, else log.flush.scheduler.interval.ms. */
  get logFlushIntervalMs(): number {
    return this.times.logFlushIntervalMs;
  }

  /** max.connections.per.ip.overrides parsed: host name or address -> most connections. */
  get maxConnectionsPerIpOverrides(): Map<string, number> {
    return this.connectionOverrides;
  }

  /** Builds the layered config the CLI uses: defaults < file < --set < flags. */
  static load(sources: BrokerConfigSources = {}): BrokerConfig {
    const props = new Map<string, string>();
    const origins = new Map<string, ConfigOrigin>();
    const put = (k: string, v: string, o: ConfigOrigin) => {
      props.delete(k);
      props.set(k, v);
      origins.set(k, o);
    };
    if (sources.configFile !== undefined) {
      let fileProps: Map<string, string>;
      try {
        fileProps = readPropertiesFile(sources.configFile);
      } catch (e) {
        const err = e as NodeJS.ErrnoException;
        const why = err.code === 'ENOENT' ? 'file not found' : err.message;
        throw new ConfigError(`Cannot read config file ${sources.configFile}: ${why}`);
      }
      for (const [k, v] of fileProps) put(k, v, 'file');
    }
    for (const [k, v] of toMap(sources.fileProps)) put(k, v, 'file');
    if (Array.isArray(sources.sets)) {
      for (const s of sources.sets) {
        const [k, v] = parseSetArg(s);
        put(k, v, 'set');
      }
    } else {
      for (const [k, v] of toMap(sources.sets)) put(k, v, 'set');
    }
    applyFlags(props, sources.flags ?? {}, (k, v) => put(k, v, 'flag'));
    return new BrokerConfig(props, { origins, cwd: sources.cwd });
  }

  /** True when `name` is a broker config Fjord knows. */
  static isKnown(name: string): boolean {
    return BROKER_CONFIGS.has(name);
  }

  /** The definition of a known key (type, default, validator, doc). */
  static definition(name: string): ConfigKey | undefined {
    return BROKER_CONFIGS.get(name);
  }

  private key(name: string): ConfigKey {
    const k = BROKER_CONFIGS.get(name);
    if (!k) throw new Error(`Unknown broker config: ${name}`);
    return k;
  }

  /** Typed value (null when unset and without default). Throws for unknown names. */
  get(name: string): ConfigValue {
    this.key(name);
    return this.values.get(name) ?? null;
  }

  private nonNull(name: string, types: string[]): ConfigValue {
    const k = this.key(name);
    if (!types.includes(k.type)) throw new Error(`Config ${name} is of type ${k.type}, not ${types[0]}`);
    const v = this.values.get(name);
    if (v === null || v === undefined) throw new Error(`Config ${name} has no value (use get())`);
    return v;
  }

  getInt(name: string): number {
    return this.nonNull(name, ['int', 'short']) as number;
  }

  /** Long as a JS number (Long.MAX_VALUE becomes 9223372036854775807 ≈ 2^63). */
  getLong(name: string): number {
    return Number(this.nonNull(name, ['long', 'int', 'short']));
  }

  /** Long without precision loss. */
  getLongBig(name: string): bigint {
    return BigInt(this.nonNull(name, ['long', 'int', 'short']) as number | bigint);
  }

  getBool(name: string): boolean {
    return this.nonNull(name, ['boolean']) as boolean;
  }

  getDouble(name: string): number {
    return this.nonNull(name, ['double']) as number;
  }

  getString(name: string): string {
    return this.nonNull(name, ['string', 'class', 'password']) as string;
  }

  /** List value; string-typed comma lists (listeners, log.dirs) are split too. Null -> []. */
  getList(name: string): string[] {
    const k = this.key(name);
    const v = this.values.get(name);
    if (v === null || v === undefined) return [];
    if (k.type === 'list') return v as string[];
    if (k.type === 'string') return (v as string).trim() === '' ? [] : (v as string).trim().split(/\s*,\s*/);
    throw new Error(`Config ${name} is of type ${k.type}, not list`);
  }

  /**
   * A static config as one listener sees it: `listener.name.<listener, lower case>.<name>` when set
   * (parsed and checked as <name>), else <name>. TLS and SASL settings are read this way.
   */
  listenerValue(listenerName: string, name: string): ConfigValue {
    const raw = this.originals.get(`listener.name.${listenerName.toLowerCase()}.${name}`);
    return raw === undefined ? this.get(name) : parseValue(this.key(name), raw);
  }

  /** Whether the key was given explicitly (file, --set or flag). */
  isSet(name: string): boolean {
    return this.originals.has(name);
  }

  /** DescribeConfigs source of a key's value. */
  source(name: string): ConfigSource {
    if (this.dynamicBroker.has(name)) return ConfigSource.DYNAMIC_BROKER_CONFIG;
    if (this.dynamicDefault.has(name)) return ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG;
    const def = BROKER_CONFIGS.get(name);
    if (this.originals.has(name) && !def?.dynamicOnly) return ConfigSource.STATIC_BROKER_CONFIG;
    return def ? ConfigSource.DEFAULT_CONFIG : ConfigSource.UNKNOWN;
  }

  /** Which layer supplied the static value. */
  origin(name: string): ConfigOrigin {
    return this.origins.get(name) ?? 'default';
  }

  /** Raw static value as given (file/--set/flag), or undefined. */
  original(name: string): string | undefined {
    return this.originals.get(name);
  }

  /** The value as Kafka reports it (ConfigDef.convertToString), null when unset. */
  valueString(name: string): string | null {
    const k = this.key(name);
    return valueToString(this.values.get(name) ?? null, k.type);
  }

  /** 'change': the names whose effective value a dynamic change changed. */
  on(event: 'change', listener: (names: string[]) => void): this {
    this.events.on(event, listener);
    return this;
  }

  off(event: 'change', listener: (names: string[]) => void): this {
    this.events.off(event, listener);
    return this;
  }

  /** A dynamic layer as stored (raw strings, custom keys included). */
  dynamicConfigs(level: DynamicLevel): Readonly<Record<string, string>> {
    return Object.fromEntries(level === 'broker' ? this.dynamicBroker : this.dynamicDefault);
  }

  /**
   * Replaces both dynamic layers with what the metadata holds, as Kafka's BrokerConfigHandler does on
   * each change: entries Kafka would ignore (not dynamic, per-broker only at the default level, a
   * value that does not parse, a security config without listener prefix; with one, as Fjord has no
   * per-listener configs) are left out and returned; so is the whole change when the result
   * breaks a requirement between keys (the effective values stay as they were). Emits 'change' with
   * the names whose effective value changed.
   */
  setDynamicConfigs(perBroker: Readonly<Record<string, string>>, defaults: Readonly<Record<string, string>>): string[] {
    // Called on every metadata change in a cluster: most leave both layers as they were.
    if (this.storedBroker === perBroker && this.storedDefault === defaults) return [];
    this.storedBroker = perBroker;
    this.storedDefault = defaults;
    const ignored: string[] = [];
    const usable = (layer: Readonly<Record<string, string>>, perBrokerLevel: boolean) => {
      const out = new Map<string, string>();
      for (const [k, v] of Object.entries(layer)) {
        const def = BROKER_CONFIGS.get(k);
        // TLS settings are read at start only (see validateDynamicConfigs).
        let ok = def ? !!def.dynamic && (perBrokerLevel || !def.perBrokerOnly) && !k.startsWith('ssl.') : !LISTENER_PREFIX_RE.test(k);
        if (ok && def) {
          try {
            parseValue(def, v);
          } catch {
            ok = false;
          }
        }
        if (ok) out.set(k, v);
        else ignored.push(k);
      }
      return out;
    };
    const broker = usable(perBroker, true);
    const cluster = usable(defaults, false);
    const next = this.resolve(cluster, broker);
    if (typeof next === 'string') return [...ignored, ...Object.keys(perBroker), ...Object.keys(defaults)];
    const changed = [...BROKER_CONFIGS.keys()].filter((n) => !sameValue(this.values.get(n) ?? null, next.values.get(n) ?? null));
    this.dynamicBroker = broker;
    this.dynamicDefault = cluster;
    this.values = next.values;
    this.times = next.times;
    this.connectionOverrides = next.connectionOverrides;
    if (changed.length > 0) this.events.emit('change', changed);
    return ignored;
  }

  /**
   * Checks a BROKER resource's would-be dynamic configs (the whole layer: this broker's own when
   * `level` is 'broker', else the cluster-wide defaults) as Kafka's DynamicBrokerConfig.validate
   * does, with the current other layer: Kafka's message (it answers INVALID_REQUEST), or null.
   * Custom (unknown) keys are accepted, as Kafka accepts them.
   */
  validateDynamicConfigs(props: Readonly<Record<string, string>>, level: DynamicLevel): string | null {
    const names = Object.keys(props);
    const nonDynamic = names.filter((n) => BROKER_CONFIGS.has(n) && !BROKER_CONFIGS.get(n)!.dynamic);
    if (nonDynamic.length > 0) return `Cannot update these configs dynamically: [${nonDynamic.join(', ')}]`;
    const unprefixed = LISTENER_SECURITY_CONFIGS.filter((n) => n in props);
    if (unprefixed.length > 0) {
      return `These security configs can be dynamically updated only per-listener using the listener prefix: [${unprefixed.join(', ')}]`;
    }
    // Kafka reloads key stores, TLS and SASL settings live (passwords kept encrypted); Fjord builds its
    // TLS contexts and SASL mechanisms at start.
    const perListener = names.filter((n) => LISTENER_PREFIX_RE.test(n) || n.startsWith('ssl.') || n.startsWith('sasl.'));
    if (perListener.length > 0) {
      return `Cannot update these configs dynamically: [${perListener.join(', ')}] (Fjord reads listener, TLS and SASL configs at start only)`;
    }
    for (const n of names) {
      const def = BROKER_CONFIGS.get(n);
      if (!def) continue;
      try {
        parseValue(def, props[n]);
      } catch (e) {
        if (e instanceof ConfigError) return e.message;
        throw e;
      }
    }
    const perBrokerOnly = names.filter((n) => BROKER_CONFIGS.get(n)?.perBrokerOnly);
    if (level === 'default' && perBrokerOnly.length > 0) {
      return `Cannot update these configs at default cluster level, broker id must be specified: [${perBrokerOnly.join(', ')}]`;
    }
    // Fjord opens its listeners once: Kafka would add and remove listeners live.
    const listenerChanges = perBrokerOnly.filter((n) => props[n] !== this.valueString(n));
    if (listenerChanges.length > 0) {
      return `Cannot update these configs dynamically: [${listenerChanges.join(', ')}] (Fjord opens its listeners at start only)`;
    }
    const layer = new Map(Object.entries(props));
    const next = level === 'broker' ? this.resolve(this.dynamicDefault, layer) : this.resolve(layer, this.dynamicBroker);
    if (typeof next === 'string') return next;
    for (const n of [...THREAD_COUNT_CONFIGS, 'log.cleaner.threads']) {
      const [now, then] = [Number(this.values.get(n)), Number(next.values.get(n))];
      const refusal = now === then ? null : threadCountRefusal(n, then, now);
      if (refusal) return refusal;
    }
    return null;
  }

  /** The effective values over these dynamic layers, or Kafka's message for a requirement they break. */
  private resolve(defaults: ReadonlyMap<string, string>, perBroker: ReadonlyMap<string, string>):
    { values: Map<string, ConfigValue>; times: LogTimes; connectionOverrides: Map<string, number> } | string {
    const props = new Map(this.originals);
    overlay(props, defaults);
    overlay(props, perBroker);
    const values = typedValues(props, new Set([...defaults.keys(), ...perBroker.keys()]));
    const times = logTimes((n) => values.get(n) ?? null, (n) => props.get(n));
    if ('text' in times) return `requirement failed: ${times.text}`;
    let connectionOverrides: Map<string, number>;
    try {
      connectionOverrides = parseConnectionOverrides(valueToString(values.get('max.connections.per.ip.overrides') ?? '', 'string') ?? '');
    } catch (e) {
      if (e instanceof ConfigError) return e.message;
      throw e;
    }
    if (values.get('max.connections.per.ip') === 0 && connectionOverrides.size === 0) {
      return 'requirement failed: max.connections.per.ip can be set to zero only if max.connections.per.ip.overrides property is set.';
    }
    return { values, times, connectionOverrides };
  }

  /**
   * Kafka's DescribeConfigsResponse.ConfigSource-ordered synonyms of a broker
   * config (dynamic per-broker, dynamic default, static, then default), following
   * ConfigHelper.configSynonyms: entries before the first one named `name` are
   * dropped. A dynamic-only config has no default synonym, as in Kafka.
   */
  synonymsOf(name: string, synonymNames: string[] = brokerConfigSynonyms(name)): ConfigSynonym[] {
    const out: ConfigSynonym[] = [];
    const known = BROKER_CONFIGS.get(name);
    const sensitive = known ? known.sensitive : true;
    const layers: [ReadonlyMap<string, string>, ConfigSource][] = [
      [this.dynamicBroker, ConfigSource.DYNAMIC_BROKER_CONFIG],
      [this.dynamicDefault, ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG],
      [this.originals, ConfigSource.STATIC_BROKER_CONFIG],
    ];
    for (const [layer, source] of layers) {
      for (const s of synonymNames) {
        const raw = layer.get(s);
        if (raw === undefined || (source === ConfigSource.STATIC_BROKER_CONFIG && BROKER_CONFIGS.get(s)?.dynamicOnly)) continue;
        out.push({ name: s, value: sensitive ? null : raw, source });
      }
    }
    for (const s of synonymNames) {
      const d = BROKER_CONFIGS.get(s);
      if (d && d.defaultString !== null && !d.dynamicOnly) {
        out.push({ name: s, value: sensitive ? null : d.defaultString, source: ConfigSource.DEFAULT_CONFIG });
      }
    }
    const first = out.findIndex((s) => s.name === name);
    return first < 0 ? [] : out.slice(first);
  }

  /**
   * DescribeConfigs entries for this broker (resource name = node id), as
   * Kafka's ConfigHelper.createBrokerConfigEntry builds them: every known
   * config (a dynamic-only one when set) plus every unknown static or dynamic
   * key (those are typed UNKNOWN and, like Kafka, treated as sensitive).
   * `names` null/empty = all; names that do not exist are silently left out.
   * Sorted by name. `level` 'default' describes the cluster-wide defaults
   * (resource ""): only the keys set there, each with that one synonym.
   */
  describe(names?: readonly string[] | null, opts: DescribeOptions = {}, level: DynamicLevel = 'broker'): ConfigEntry[] {
    const dynamicKeys = [...this.dynamicBroker.keys(), ...this.dynamicDefault.keys()];
    const listed = [...BROKER_CONFIGS.values()].filter((k) => !k.internal && !k.dynamicOnly).map((k) => k.name);
    const all = level === 'default'
      ? new Set(this.dynamicDefault.keys())
      : new Set<string>([...listed, ...dynamicKeys, ...[...this.originals.keys()].filter((k) => !BROKER_CONFIGS.get(k)?.dynamicOnly)]);
    const wanted = names && names.length > 0 ? names.filter((n) => all.has(n)) : [...all];
    const out: ConfigEntry[] = [];
    for (const name of [...new Set(wanted)].sort()) {
      const def = BROKER_CONFIGS.get(name);
      const sensitive = def ? def.sensitive : true;
      let value: string | null;
      let synonyms: ConfigSynonym[];
      if (level === 'default') {
        value = sensitive ? null : this.dynamicDefault.get(name)!;
        synonyms = [{ name, value, source: ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG }];
      } else {
        value = sensitive ? null : def ? valueToString(this.values.get(name) ?? null, def.type) : null;
        synonyms = this.synonymsOf(name);
      }
      out.push({
        name,
        value,
        readOnly: !(def?.dynamic ?? false),
        source: synonyms.length > 0 ? synonyms[0].source : ConfigSource.DEFAULT_CONFIG,
        isSensitive: sensitive,
        synonyms: opts.includeSynonyms ? synonyms : [],
        configType: def ? def.configType : ConfigType.UNKNOWN,
        documentation: opts.includeDocumentation ? def?.doc ?? null : null,
      });
    }
    return out;
  }

  /** All known keys with their reported values (passwords redacted), for a startup log line. */
  toLogObject(): Record<string, string | null> {
    const o: Record<string, string | null> = {};
    for (const [name, def] of BROKER_CONFIGS) {
      o[name] = def.sensitive ? '[hidden]' : valueToString(this.values.get(name) ?? null, def.type);
    }
    return o;
  }
}

/** Typed config values compared (lists element by element). */
function sameValue(a: ConfigValue, b: ConfigValue): boolean {
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => x === b[i]);
  return a === b;
}

/** Applies explicit CLI flags on top of the merged file/--set properties. */
function applyFlags(props: Map<string, string>, flags: BrokerCliFlags, put: (k: string, v: string) => void): void {
  const def = (k: string) => BROKER_CONFIGS.get(k)!.defaultString ?? '';
  const protoMap = parseSecurityProtocolMap(props.get('listener.security.protocol.map') ?? def('listener.security.protocol.map'));
  const controller = new Set(
    (props.get('controller.listener.names') ?? '').split(',').map((s) => s.trim().toUpperCase()).filter(Boolean),
  );
  const firstClient = (eps: Endpoint[]) => eps.findIndex((e) => !controller.has(e.name));

  if (flags.port !== undefined) checkPort('--port', flags.port);
  if (flags.advertisedPort !== undefined) checkPort('--advertised-port', flags.advertisedPort);

  let listeners: Endpoint[] | undefined;
  if (flags.host !== undefined || flags.port !== undefined) {
    listeners = parseListeners(props.get('listeners') ?? def('listeners'), 'listeners', protoMap);
    const i = firstClient(listeners);
    if (i < 0) {
      listeners.push({ name: 'PLAINTEXT', securityProtocol: 'PLAINTEXT', host: flags.host ?? '', port: flags.port ?? 9092 });
    } else {
      listeners[i] = { ...listeners[i], host: flags.host ?? listeners[i].host, port: flags.port ?? listeners[i].port };
    }
    put('listeners', formatListeners(listeners));
  }

  if (flags.advertisedHost !== undefined || flags.advertisedPort !== undefined) {
    const advRaw = props.get('advertised.listeners');
    if (advRaw !== undefined && advRaw.trim() !== '') {
      const adv = parseListeners(advRaw, 'advertised.listeners', protoMap);
      adv[0] = { ...adv[0], host: flags.advertisedHost ?? adv[0].host, port: flags.advertisedPort ?? adv[0].port };
      put('advertised.listeners', formatListeners(adv));
    } else {
      const ls = listeners ?? parseListeners(props.get('listeners') ?? def('listeners'), 'listeners', protoMap);
      const base = ls[Math.max(0, firstClient(ls))];
      if (!base) throw new ConfigError('No listener to advertise: listeners is empty', 'listeners');
      const host = flags.advertisedHost ?? (isWildcardHost(base.host) ? DEFAULT_ADVERTISED_HOST : base.host);
      put('advertised.listeners', formatListeners([{ ...base, host, port: flags.advertisedPort ?? base.port }]));
    }
  }

  if (flags.dataDir !== undefined) {
    if (flags.dataDir.trim() === '') throw new ConfigError('Invalid value for --data-dir: must not be empty', '--data-dir');
    put('log.dirs', flags.dataDir);
  }

  if (flags.nodeId !== undefined) {
    if (!Number.isInteger(flags.nodeId) || flags.nodeId < 0 || flags.nodeId > 2147483647) {
      throw new ConfigError(`Invalid value ${flags.nodeId} for --node-id: must be a non-negative integer`, '--node-id', flags.nodeId);
    }
    put('node.id', String(flags.nodeId));
    if (props.has('broker.id')) put('broker.id', String(flags.nodeId));
  }
}

/**
 * Applies IncrementalAlterConfigs operations (SET 0, DELETE 1, APPEND 2, SUBTRACT 3) to a BROKER
 * resource's dynamic configs, as Kafka's ConfigAdminManager.prepareIncrementalConfigs: APPEND and
 * SUBTRACT only on LIST configs, starting from the resource's value or else the config's default.
 * The error is Kafka's INVALID_CONFIG text. The result still needs validateDynamicConfigs.
 */
export function applyBrokerConfigOps(
  current: Readonly<Record<string, string>>,
  ops: ReadonlyArray<{ name: string; op: number; value: string | null }>,
): { configs: Record<string, string> } | { error: string } {
  const next: Record<string, string> = { ...current };
  for (const { name, op, value } of ops) {
    if (op === 0) next[name] = value ?? '';
    else if (op === 1) delete next[name];
    else {
      const def = BROKER_CONFIGS.get(name);
      if (!def) return { error: `Unknown config name: ${name}` };
      const verb = op === 2 ? 'append' : 'subtract';
      if (def.type !== 'list') return { error: `Config value ${verb} is not allowed for config key: ${name}` };
      const base = next[name] ?? def.defaultString ?? '';
      const given = (value ?? '').split(',');
      if (op === 2) {
        const old = base === '' ? [] : base.split(',');
        next[name] = [...old, ...given.filter((v) => !old.includes(v))].join(',');
      } else {
        // Scala's List.diff: each subtracted element removes one occurrence.
        const left = base.split(',');
        for (const v of given) {
          const i = left.indexOf(v);
          if (i >= 0) left.splice(i, 1);
        }
        next[name] = left.join(',');
      }
    }
  }
  return { configs: next };
}
