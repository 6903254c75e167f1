/**
 * Topic-level configs (Kafka 4.4's LogConfig), their broker synonyms
 * (ServerTopicConfigSynonyms), validation as the controller does it, and the
 * effective-config views for DescribeConfigs and CreateTopics.
 *
 * Overrides are stored as the raw strings the client sent (Kafka stores them
 * verbatim too); values are parsed when used or described.
 */
import { quoteInMessage } from '../common/errors';
import { BrokerConfig } from './broker-config';
import {
  CLEANUP_POLICIES,
  COMPRESSION_TYPES,
  ConfigEntry,
  ConfigError,
  ConfigKey,
  ConfigKeyDef,
  ConfigSource,
  ConfigSynonym,
  ConfigValue,
  LONG_MAX,
  MIN_SEGMENT_BYTES,
  TIMESTAMP_AFTER_MAX_MS,
  TIMESTAMP_TYPES,
  Validator,
  atLeast,
  between,
  brokerConfigSynonyms,
  defineConfigs,
  gzipLevel,
  invalidValue,
  lz4Level,
  parseType,
  parseValue,
  validList,
  validString,
  valueToString,
  zstdLevel,
} from './definitions';

export type TopicConfigMap = Record<string, string> | ReadonlyMap<string, string>;

/** A broker config that supplies a topic config's default; converter turns its value into the topic unit. */
export interface TopicConfigSynonym {
  name: string;
  converter?: 'hoursToMs' | 'minutesToMs';
}

export interface TopicConfigKeyDef extends ConfigKeyDef {
  /** Broker synonyms, highest priority first (empty: no broker default). */
  synonyms: TopicConfigSynonym[];
}

export type TopicConfigKey = TopicConfigKeyDef & ConfigKey;

/** LogConfig.ThrottledReplicaListValidator */
const throttledReplicas: Validator = {
  description: "[partitionId]:[brokerId],[partitionId]:[brokerId],...",
  ensureValid(name, value) {
    const list = ((value as string[]) ?? []).map((s) => s.trim());
    if (!(list.every((s) => /^([0-9]+:[0-9]+)?$/.test(s)) || list.join('') === '*')) {
      throw invalidValue(name, '[' + list.join(', ') + ']',
        `${name} must be the literal '*' or a list of replicas in the following format: [partitionId]:[brokerId],[partitionId]:[brokerId],...`);
    }
  },
};

const LONG_MAX_S = LONG_MAX.toString();
const syn = (name: string, converter?: TopicConfigSynonym['converter']): TopicConfigSynonym =>
  converter ? { name, converter } : { name };

/** Definition order follows Kafka's LogConfig (it decides which bad value is reported first). */
export const TOPIC_CONFIG_DEFS: TopicConfigKeyDef[] = [
  { name: 'segment.bytes', type: 'int', default: '1073741824', validator: atLeast(MIN_SEGMENT_BYTES), synonyms: [syn('log.segment.bytes')], doc: 'Size at which a segment is rolled' },
  { name: 'segment.ms', type: 'long', default: '604800000', validator: atLeast(1), synonyms: [syn('log.roll.ms'), syn('log.roll.hours', 'hoursToMs')], doc: 'Age at which a segment is rolled' },
  { name: 'segment.jitter.ms', type: 'long', default: '0', validator: atLeast(0), synonyms: [syn('log.roll.jitter.ms'), syn('log.roll.jitter.hours', 'hoursToMs')], doc: 'Random jitter subtracted from the roll age' },
  { name: 'segment.index.bytes', type: 'int', default: '10485760', validator: atLeast(4), synonyms: [syn('log.index.size.max.bytes')], doc: 'Largest offset index file' },
  { name: 'flush.messages', type: 'long', default: LONG_MAX_S, validator: atLeast(1), synonyms: [syn('log.flush.interval.messages')], doc: 'Records appended between forced flushes' },
  { name: 'flush.ms', type: 'long', default: LONG_MAX_S, validator: atLeast(0), synonyms: [syn('log.flush.interval.ms'), syn('log.flush.scheduler.interval.ms')], doc: 'Most time data stays unflushed' },
  { name: 'retention.bytes', type: 'long', default: '-1', synonyms: [syn('log.retention.bytes')], doc: 'Per-partition size cap (-1: none)' },
  { name: 'retention.ms', type: 'long', default: '604800000', validator: atLeast(-1), synonyms: [syn('log.retention.ms'), syn('log.retention.minutes', 'minutesToMs'), syn('log.retention.hours', 'hoursToMs')], doc: 'Keep data this long (-1: forever)' },
  { name: 'max.message.bytes', type: 'int', default: '1048588', validator: atLeast(0), synonyms: [syn('message.max.bytes')], doc: 'Largest record batch accepted' },
  { name: 'index.interval.bytes', type: 'int', default: '4096', validator: atLeast(0), synonyms: [syn('log.index.interval.bytes')], doc: 'Bytes between offset index entries' },
  { name: 'delete.retention.ms', type: 'long', default: '86400000', validator: atLeast(0), synonyms: [syn('log.cleaner.delete.retention.ms')], doc: 'How long tombstones survive compaction' },
  { name: 'min.compaction.lag.ms', type: 'long', default: '0', validator: atLeast(0), synonyms: [syn('log.cleaner.min.compaction.lag.ms')], doc: 'Least age before a record may be compacted' },
  { name: 'max.compaction.lag.ms', type: 'long', default: LONG_MAX_S, validator: atLeast(1), synonyms: [syn('log.cleaner.max.compaction.lag.ms')], doc: 'Most age before a record must be compactable' },
  { name: 'file.delete.delay.ms', type: 'long', default: '60000', validator: atLeast(0), synonyms: [syn('log.segment.delete.delay.ms')], doc: 'Delay before a deleted segment file is removed' },
  { name: 'min.cleanable.dirty.ratio', type: 'double', default: '0.5', validator: between(0, 1), synonyms: [syn('log.cleaner.min.cleanable.ratio')], doc: 'Dirty ratio that triggers compaction' },
  { name: 'cleanup.policy', type: 'list', default: 'delete', validator: validList(...CLEANUP_POLICIES), synonyms: [syn('log.cleanup.policy')], doc: 'delete, compact, or both' },
  { name: 'unclean.leader.election.enable', type: 'boolean', default: 'false', synonyms: [syn('unclean.leader.election.enable')], doc: 'Allow out-of-sync replicas to become leader' },
  { name: 'min.insync.replicas', type: 'int', default: '1', validator: atLeast(1), synonyms: [syn('min.insync.replicas')], doc: 'Replicas that must ack an acks=all write' },
  { name: 'compression.type', type: 'string', default: 'producer', validator: validString(...COMPRESSION_TYPES), synonyms: [syn('compression.type')], doc: 'Codec for stored batches; producer keeps what the client sent' },
  { name: 'compression.gzip.level', type: 'int', default: '-1', validator: gzipLevel, synonyms: [syn('compression.gzip.level')], doc: 'Gzip level when compression.type is gzip' },
  { name: 'compression.lz4.level', type: 'int', default: '9', validator: lz4Level, synonyms: [syn('compression.lz4.level')], doc: 'LZ4 level when compression.type is lz4' },
  { name: 'compression.zstd.level', type: 'int', default: '3', validator: zstdLevel, synonyms: [syn('compression.zstd.level')], doc: 'Zstd level when compression.type is zstd' },
  { name: 'preallocate', type: 'boolean', default: 'false', synonyms: [syn('log.preallocate')], doc: 'Preallocate segment files' },
  { name: 'message.timestamp.type', type: 'string', default: 'CreateTime', validator: validString(...TIMESTAMP_TYPES), synonyms: [syn('log.message.timestamp.type')], doc: 'Keep the producer timestamp or stamp append time' },
  { name: 'message.timestamp.before.max.ms', type: 'long', default: LONG_MAX_S, validator: atLeast(0), synonyms: [syn('log.message.timestamp.before.max.ms')], doc: 'How far in the past a CreateTime timestamp may be' },
  { name: 'message.timestamp.after.max.ms', type: 'long', default: TIMESTAMP_AFTER_MAX_MS, validator: atLeast(0), synonyms: [syn('log.message.timestamp.after.max.ms')], doc: 'How far in the future a CreateTime timestamp may be' },
  { name: 'leader.replication.throttled.replicas', type: 'list', default: '', validator: throttledReplicas, synonyms: [], doc: 'Replicas throttled on the leader side (leader.replication.throttled.rate)' },
  { name: 'follower.replication.throttled.replicas', type: 'list', default: '', validator: throttledReplicas, synonyms: [], doc: 'Replicas throttled on the follower side (follower.replication.throttled.rate)' },
  { name: 'remote.storage.enable', type: 'boolean', default: 'false', synonyms: [], doc: 'Tiered storage for this topic (not available in Fjord)' },
  { name: 'local.retention.ms', type: 'long', default: '-2', validator: atLeast(-2), synonyms: [syn('log.local.retention.ms')], doc: 'Local retention with tiered storage (-2: use retention.ms)' },
  { name: 'local.retention.bytes', type: 'long', default: '-2', validator: atLeast(-2), synonyms: [syn('log.local.retention.bytes')], doc: 'Local size cap with tiered storage (-2: use retention.bytes)' },
  { name: 'errors.deadletterqueue.group.enable', type: 'boolean', default: 'false', synonyms: [], doc: 'Whether share groups may use this topic as their dead-letter queue (KIP-1191)' },
  // Kafka 4's way to segments below segment.bytes' 1 MiB minimum (its tests use it, as do Fjord's).
  { name: 'internal.segment.bytes', type: 'int', default: null, validator: atLeast(14), synonyms: [], internal: true, doc: 'Segment size that overrides segment.bytes, without its minimum' },
];

export const TOPIC_CONFIGS: ReadonlyMap<string, TopicConfigKey> = defineConfigs(TOPIC_CONFIG_DEFS);

/** Sorted topic config names (what DescribeConfigs lists: internal ones are not). */
export const TOPIC_CONFIG_NAMES: readonly string[] = [...TOPIC_CONFIGS.values()].filter((k) => !k.internal).map((k) => k.name).sort();

export function isTopicConfigName(name: string): boolean {
  return TOPIC_CONFIGS.has(name);
}

/** The broker config that supplies a topic config's default (Kafka's TOPIC_CONFIG_SYNONYMS). */
export function brokerSynonymOf(topicConfig: string): string | undefined {
  return TOPIC_CONFIGS.get(topicConfig)?.synonyms[0]?.name;
}

const TOPIC_DEFAULT_SOURCES = new Set([...TOPIC_CONFIGS.values()].flatMap((k) => k.synonyms.map((s) => s.name)));

/** Whether a broker config supplies some topic config's default (Kafka's DynamicLogConfig reacts to these). */
export function feedsTopicDefaults(brokerConfig: string): boolean {
  return TOPIC_DEFAULT_SOURCES.has(brokerConfig);
}

let defaultBroker: BrokerConfig | undefined;
function brokerOrDefault(b?: BrokerConfig): BrokerConfig {
  if (b) return b;
  return (defaultBroker ??= new BrokerConfig({}));
}

function toEntries(m: TopicConfigMap | undefined): Map<string, string> {
  if (!m) return new Map();
  return m instanceof Map ? new Map(m) : new Map(Object.entries(m as Record<string, string>));
}

/**
 * Kafka's KafkaConfig.extractLogConfigMap: each topic config's default as
 * typed value, taken from the broker's effective setting (e.g. retention.ms
 * from log.retention.ms > minutes > hours).
 */
export function topicDefaultsFromBroker(broker?: BrokerConfig): Map<string, ConfigValue> {
  const b = brokerOrDefault(broker);
  const out = new Map<string, ConfigValue>();
  for (const [name, key] of TOPIC_CONFIGS) {
    let v: ConfigValue;
    switch (name) {
      case 'segment.ms': v = BigInt(b.logRollMs); break;
      case 'segment.jitter.ms': v = BigInt(b.logRollJitterMs); break;
      case 'retention.ms': v = BigInt(b.logRetentionMs); break;
      case 'flush.ms': v = b.getLongBig(b.get('log.flush.interval.ms') !== null ? 'log.flush.interval.ms' : 'log.flush.scheduler.interval.ms'); break;
      default:
        v = key.synonyms.length > 0 ? b.get(key.synonyms[0].name) : key.defaultValue;
    }
    out.set(name, v);
  }
  return out;
}

/** Same as topicDefaultsFromBroker, as the strings Kafka reports. */
export function topicDefaultStrings(broker?: BrokerConfig): Map<string, string | null> {
  const out = new Map<string, string | null>();
  for (const [name, v] of topicDefaultsFromBroker(broker)) out.set(name, valueToString(v, TOPIC_CONFIGS.get(name)!.type));
  return out;
}

export interface TopicConfigError {
  /** The offending config name. */
  name: string;
  /** Kafka's message; the handler answers INVALID_CONFIG (40) with it. */
  message: string;
}

/**
 * Validates topic config overrides as Kafka's controller does for
 * CreateTopics / AlterConfigs / IncrementalAlterConfigs: null values, then
 * unknown names ("Unknown topic config name: x"), then each value's type and
 * range (in LogConfig definition order), then cross-checks against the
 * broker defaults (min/max compaction lag, tiered storage).
 * Returns the first problem, or null when everything is valid.
 */
export function validateTopicConfigs(
  configs: Record<string, string | null> | ReadonlyMap<string, string | null> | Array<{ name: string; value: string | null }>,
  broker?: BrokerConfig,
): TopicConfigError | null {
  let entries: Array<[string, string | null]>;
  if (Array.isArray(configs)) entries = configs.map((c) => [c.name, c.value]);
  else if (configs instanceof Map) entries = [...configs.entries()];
  else entries = Object.entries(configs as Record<string, string | null>);

  const nulls = entries.filter(([, v]) => v === null || v === undefined).map(([k]) => k);
  if (nulls.length > 0) return { name: nulls[0], message: 'Null value not supported for topic configs: ' + quoteInMessage(nulls.join(',')) };
  for (const [k] of entries) {
    if (!TOPIC_CONFIGS.has(k)) return { name: k, message: `Unknown topic config name: ${quoteInMessage(k)}` };
  }
  const given = new Map(entries as Array<[string, string]>);
  const parsed = topicDefaultsFromBroker(broker);
  for (const [name, key] of TOPIC_CONFIGS) {
    const raw = given.get(name);
    if (raw === undefined) continue;
    try {
      parsed.set(name, parseValue(key, raw));
    } catch (e) {
      if (e instanceof ConfigError) return { name, message: e.message };
      throw e;
    }
  }
  const minLag = parsed.get('min.compaction.lag.ms') as bigint;
  const maxLag = parsed.get('max.compaction.lag.ms') as bigint;
  if (minLag > maxLag) {
    return {
      name: given.has('min.compaction.lag.ms') ? 'min.compaction.lag.ms' : 'max.compaction.lag.ms',
      message: `conflict topic config setting min.compaction.lag.ms (${minLag}) > max.compaction.lag.ms (${maxLag})`,
    };
  }
  if (parsed.get('remote.storage.enable') === true) {
    return {
      name: 'remote.storage.enable',
      message: 'Tiered Storage functionality is disabled in the broker. Topic cannot be configured with remote log storage.',
    };
  }
  return null;
}

/** Effective typed topic config, for the log layer. */
export interface TopicLogConfig {
  cleanupPolicy: string[];
  compact: boolean;
  delete: boolean;
  compressionType: string;
  compressionGzipLevel: number;
  compressionLz4Level: number;
  compressionZstdLevel: number;
  deleteRetentionMs: number;
  fileDeleteDelayMs: number;
  flushMessages: number;
  flushMs: number;
  indexIntervalBytes: number;
  maxCompactionLagMs: number;
  maxMessageBytes: number;
  messageTimestampType: 'CreateTime' | 'LogAppendTime';
  messageTimestampBeforeMaxMs: number;
  messageTimestampAfterMaxMs: number;
  minCleanableDirtyRatio: number;
  minCompactionLagMs: number;
  minInsyncReplicas: number;
  preallocate: boolean;
  retentionBytes: number;
  retentionMs: number;
  segmentBytes: number;
  segmentIndexBytes: number;
  segmentJitterMs: number;
  segmentMs: number;
  uncleanLeaderElectionEnable: boolean;
  remoteStorageEnable: boolean;
  localRetentionMs: number;
  localRetentionBytes: number;
}

/**
 * Broker defaults overlaid with the topic's overrides, typed. Longs are JS
 * numbers (Long.MAX_VALUE ≈ 9.22e18 still compares as "infinite").
 * Overrides were validated when they were set; here they are only parsed, so
 * that a topic set under older bounds (segment.bytes below Kafka 4's 1 MiB)
 * still opens. Throws ConfigError for an override that does not parse.
 */
export function resolveTopicConfig(broker: BrokerConfig | undefined, overrides?: TopicConfigMap): TopicLogConfig {
  const v = topicDefaultsFromBroker(broker);
  for (const [k, raw] of toEntries(overrides)) {
    const key = TOPIC_CONFIGS.get(k);
    if (key) v.set(k, parseType(k, raw, key.type));
  }
  const n = (k: string) => Number(v.get(k));
  const policy = (v.get('cleanup.policy') as string[]).map((p) => p.toLowerCase());
  return {
    cleanupPolicy: policy,
    compact: policy.includes('compact'),
    delete: policy.includes('delete'),
    compressionType: (v.get('compression.type') as string).toLowerCase(),
    compressionGzipLevel: n('compression.gzip.level'),
    compressionLz4Level: n('compression.lz4.level'),
    compressionZstdLevel: n('compression.zstd.level'),
    deleteRetentionMs: n('delete.retention.ms'),
    fileDeleteDelayMs: n('file.delete.delay.ms'),
    flushMessages: n('flush.messages'),
    flushMs: n('flush.ms'),
    indexIntervalBytes: n('index.interval.bytes'),
    maxCompactionLagMs: n('max.compaction.lag.ms'),
    maxMessageBytes: n('max.message.bytes'),
    messageTimestampType: v.get('message.timestamp.type') as 'CreateTime' | 'LogAppendTime',
    messageTimestampBeforeMaxMs: n('message.timestamp.before.max.ms'),
    messageTimestampAfterMaxMs: n('message.timestamp.after.max.ms'),
    minCleanableDirtyRatio: n('min.cleanable.dirty.ratio'),
    minCompactionLagMs: n('min.compaction.lag.ms'),
    minInsyncReplicas: n('min.insync.replicas'),
    preallocate: v.get('preallocate') as boolean,
    retentionBytes: n('retention.bytes'),
    retentionMs: n('retention.ms'),
    segmentBytes: v.get('internal.segment.bytes') !== null ? n('internal.segment.bytes') : n('segment.bytes'),
    segmentIndexBytes: n('segment.index.bytes'),
    segmentJitterMs: n('segment.jitter.ms'),
    segmentMs: n('segment.ms'),
    uncleanLeaderElectionEnable: v.get('unclean.leader.election.enable') as boolean,
    remoteStorageEnable: v.get('remote.storage.enable') as boolean,
    localRetentionMs: n('local.retention.ms'),
    localRetentionBytes: n('local.retention.bytes'),
  };
}

export interface TopicDescribeOptions {
  /** Default true. */
  includeSynonyms?: boolean;
  includeDocumentation?: boolean;
  /** Only these names (unknown names are silently skipped); null/empty = all. */
  names?: readonly string[] | null;
}

function selectNames(names: readonly string[] | null | undefined): string[] {
  if (!names || names.length === 0) return [...TOPIC_CONFIG_NAMES];
  return [...new Set(names.filter((n) => TOPIC_CONFIG_NAMES.includes(n)))].sort();
}

/**
 * DescribeConfigs entries for a topic, as Kafka's
 * ConfigHelper.createTopicConfigEntry builds them:
 *  - value: the override if any, else the broker-derived default (parsed and
 *    re-printed, e.g. "1" for a double prints "1.0");
 *  - synonyms: the topic override (TOPIC_CONFIG) first, then the broker
 *    synonyms set statically (STATIC_BROKER_CONFIG), then their defaults
 *    (DEFAULT_CONFIG) -- dropping entries before the first one that carries
 *    the primary broker name (Kafka's quirk: retention.ms with only
 *    log.retention.hours set has no synonyms);
 *  - source: the first synonym's source, DEFAULT_CONFIG when there is none.
 */
export function effectiveTopicConfig(
  broker: BrokerConfig | undefined,
  overrides?: TopicConfigMap,
  opts: TopicDescribeOptions = {},
): ConfigEntry[] {
  const b = brokerOrDefault(broker);
  const ov = toEntries(overrides);
  const defaults = topicDefaultsFromBroker(b);
  const includeSynonyms = opts.includeSynonyms ?? true;
  const out: ConfigEntry[] = [];
  for (const name of selectNames(opts.names)) {
    const key = TOPIC_CONFIGS.get(name)!;
    const raw = ov.get(name);
    let value: string | null;
    if (raw !== undefined) {
      try {
        value = valueToString(parseValue(key, raw), key.type);
      } catch {
        value = raw;
      }
    } else {
      value = valueToString(defaults.get(name) ?? null, key.type);
    }
    const primary = key.synonyms[0]?.name;
    const synonyms: ConfigSynonym[] = primary ? b.synonymsOf(primary, brokerConfigSynonyms(primary)) : [];
    if (raw !== undefined) synonyms.unshift({ name, value, source: ConfigSource.TOPIC_CONFIG });
    out.push({
      name,
      value,
      readOnly: false,
      source: synonyms.length > 0 ? synonyms[0].source : ConfigSource.DEFAULT_CONFIG,
      isSensitive: false,
      synonyms: includeSynonyms ? synonyms : [],
      configType: key.configType,
      documentation: opts.includeDocumentation ? key.doc : null,
    });
  }
  return out;
}

/**
 * effectiveTopicConfig with a DescribeConfigs-shaped signature:
 * `keys` null/empty = all configs; opts.includeSynonyms defaults to true.
 */
export function describeTopicConfigs(
  broker: BrokerConfig | undefined,
  overrides?: TopicConfigMap,
  keys?: readonly string[] | null,
  opts: { includeSynonyms?: boolean; includeDocumentation?: boolean } = {},
): ConfigEntry[] {
  return effectiveTopicConfig(broker, overrides, { ...opts, names: keys });
}

/** True for LIST-typed topic configs (the only ones IncrementalAlterConfigs may APPEND/SUBTRACT). */
export function isListTopicConfig(name: string): boolean {
  return TOPIC_CONFIGS.get(name)?.type === 'list';
}

function convert(raw: string, c: TopicConfigSynonym['converter']): string {
  if (!c) return raw;
  const t = raw.trim();
  if (!/^[+-]?\d+$/.test(t)) return raw;
  return (BigInt(t) * (c === 'hoursToMs' ? 3600000n : 60000n)).toString();
}

/**
 * The configs CreateTopics v5+ returns for a created topic, as Kafka's
 * controller resolves them (KafkaConfigSchema.resolveEffectiveTopicConfigs):
 * the override verbatim (TOPIC_CONFIG), else the first broker synonym set
 * dynamically for this broker (DYNAMIC_BROKER_CONFIG), else for the cluster
 * (DYNAMIC_DEFAULT_BROKER_CONFIG), else statically (STATIC_BROKER_CONFIG),
 * converted to the topic's unit, else the topic default (DEFAULT_CONFIG). No
 * synonyms. Sorted by name.
 */
export function createTopicConfigs(broker: BrokerConfig | undefined, overrides?: TopicConfigMap): ConfigEntry[] {
  const b = brokerOrDefault(broker);
  const ov = toEntries(overrides);
  const perBroker = b.dynamicConfigs('broker');
  const cluster = b.dynamicConfigs('default');
  const layers: [(name: string) => string | undefined, ConfigSource][] = [
    [(n) => perBroker[n], ConfigSource.DYNAMIC_BROKER_CONFIG],
    [(n) => cluster[n], ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG],
    [(n) => (BrokerConfig.definition(n)?.dynamicOnly ? undefined : b.original(n)), ConfigSource.STATIC_BROKER_CONFIG],
  ];
  const out: ConfigEntry[] = [];
  for (const name of TOPIC_CONFIG_NAMES) {
    const key = TOPIC_CONFIGS.get(name)!;
    let value: string | null = key.defaultString;
    let source = ConfigSource.DEFAULT_CONFIG;
    const raw = ov.get(name);
    if (raw !== undefined) {
      value = raw;
      source = ConfigSource.TOPIC_CONFIG;
    } else {
      found: for (const [layer, layerSource] of layers) {
        for (const s of key.synonyms) {
          const sv = layer(s.name);
          if (sv !== undefined) {
            value = convert(sv, s.converter);
            source = layerSource;
            break found;
          }
        }
      }
    }
    out.push({
      name, value, readOnly: false, source, isSensitive: false, synonyms: [],
      configType: key.configType, documentation: key.doc,
    });
  }
  return out;
}

/** IncrementalAlterConfigs operation types. */
export enum AlterConfigOp {
  SET = 0,
  DELETE = 1,
  APPEND = 2,
  SUBTRACT = 3,
}

/**
 * Applies IncrementalAlterConfigs operations to a topic's current overrides,
 * as Kafka's controller does, then validates the result. APPEND/SUBTRACT
 * work on LIST configs only, starting from the topic default when unset.
 */
export function applyAlterConfigOps(
  current: TopicConfigMap,
  ops: ReadonlyArray<{ name: string; op: AlterConfigOp | number; value: string | null }>,
  broker?: BrokerConfig,
): { configs: Record<string, string> } | { error: TopicConfigError } {
  const next = toEntries(current);
  for (const { name, op, value } of ops) {
    switch (op) {
      case AlterConfigOp.SET:
        if (value === null) return { error: { name, message: `Null value not supported for topic configs: ${quoteInMessage(name)}` } };
        next.set(name, value);
        break;
      case AlterConfigOp.DELETE:
        next.delete(name);
        break;
      case AlterConfigOp.APPEND:
      case AlterConfigOp.SUBTRACT: {
        const key = TOPIC_CONFIGS.get(name);
        const opName = op === AlterConfigOp.APPEND ? 'APPEND' : 'SUBTRACT';
        if (!key || key.type !== 'list') {
          return { error: { name, message: `Can't ${opName} to key ${quoteInMessage(name)} because its type is not LIST.` } };
        }
        const base = next.get(name) ?? key.defaultString ?? '';
        const parts = base.split(',').filter((p) => p !== '');
        for (const v of (value ?? '').split(',')) {
          if (op === AlterConfigOp.APPEND) {
            if (!parts.includes(v)) parts.push(v);
          } else {
            const i = parts.indexOf(v);
            if (i >= 0) parts.splice(i, 1);
          }
        }
        next.set(name, parts.join(','));
        break;
      }
      default:
        return { error: { name, message: `Unknown config operation ${op} for ${quoteInMessage(name)}` } };
    }
  }
  const err = validateTopicConfigs(next, broker);
  if (err) return { error: err };
  return { configs: Object.fromEntries(next) };
}
