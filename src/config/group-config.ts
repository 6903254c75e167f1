/**
 * Group-level configs (Kafka 4.4's GroupConfig): a GROUP config resource's overrides, checked as
 * Kafka checks them against the broker's bounds, described with their broker synonyms, and the
 * effective values the group coordinator uses.
 *
 * Overrides are stored as the raw strings the client sent, like topic configs. A group's configs
 * outlive the group: deleting a group leaves them, as in Kafka.
 */
import { BrokerConfig } from './broker-config';
import {
  ConfigEntry,
  ConfigError,
  ConfigKey,
  ConfigKeyDef,
  ConfigSource,
  ConfigSynonym,
  atLeast,
  custom,
  defineConfigs,
  parseValue,
  validString,
} from './definitions';

export interface GroupConfigKeyDef extends ConfigKeyDef {
  /** The broker config that supplies the default; none: the group config's own default. */
  brokerSynonym?: string;
}

export type GroupConfigKey = GroupConfigKeyDef & ConfigKey;

/** ShareGroupAutoOffsetResetStrategy's check: earliest, latest or by_duration:<ISO-8601 duration>. */
const shareAutoOffsetReset = custom('[earliest, latest, by_duration:PnDTnHnMn.nS]', (v) =>
  v === 'earliest' || v === 'latest' || /^by_duration:P(?!$)(\d+D)?(T(?!$)(\d+H)?(\d+M)?(\d+(\.\d+)?S)?)?$/.test(String(v))
    ? null
    : `Invalid value \`${String(v)}\` for configuration share.auto.offset.reset. The value must be either 'earliest', 'latest' or of the format 'by_duration:<PnDTnHnMn.nS>'.`,
);

export const GROUP_CONFIG_DEFS: GroupConfigKeyDef[] = [
  { name: 'consumer.session.timeout.ms', type: 'int', default: '45000', validator: atLeast(1), brokerSynonym: 'group.consumer.session.timeout.ms', doc: 'Session timeout of this consumer group\'s members' },
  { name: 'consumer.heartbeat.interval.ms', type: 'int', default: '5000', validator: atLeast(1), brokerSynonym: 'group.consumer.heartbeat.interval.ms', doc: 'Heartbeat interval of this consumer group\'s members' },
  { name: 'consumer.assignment.interval.ms', type: 'int', default: '1000', validator: atLeast(0), brokerSynonym: 'group.consumer.assignment.interval.ms', doc: 'Least time between two target assignments of this consumer group' },
  { name: 'share.session.timeout.ms', type: 'int', default: '45000', validator: atLeast(1), brokerSynonym: 'group.share.session.timeout.ms', doc: 'Session timeout of this share group\'s members' },
  { name: 'share.heartbeat.interval.ms', type: 'int', default: '5000', validator: atLeast(1), brokerSynonym: 'group.share.heartbeat.interval.ms', doc: 'Heartbeat interval of this share group\'s members' },
  { name: 'share.record.lock.duration.ms', type: 'int', default: '30000', validator: atLeast(1000), brokerSynonym: 'group.share.record.lock.duration.ms', doc: 'How long a record stays acquired by a share group member' },
  { name: 'share.delivery.count.limit', type: 'int', default: '5', validator: atLeast(2), brokerSynonym: 'group.share.delivery.count.limit', doc: 'Deliveries of a record before it is archived' },
  { name: 'share.partition.max.record.locks', type: 'int', default: '2000', validator: atLeast(100), brokerSynonym: 'group.share.partition.max.record.locks', doc: 'Records of a share partition acquired at once' },
  { name: 'share.auto.offset.reset', type: 'string', default: 'latest', validator: shareAutoOffsetReset, doc: 'Where a share partition starts: earliest, latest or by_duration:<ISO-8601 duration>' },
  { name: 'share.isolation.level', type: 'string', default: 'read_uncommitted', validator: validString('read_committed', 'read_uncommitted'), doc: 'Whether the share group reads aborted transactional records' },
  { name: 'share.renew.acknowledge.enable', type: 'boolean', default: 'true', doc: 'Whether share group members may renew an acquisition' },
  { name: 'share.assignment.interval.ms', type: 'int', default: '1000', validator: atLeast(0), brokerSynonym: 'group.share.assignment.interval.ms', doc: 'Least time between two target assignments of this share group' },
  { name: 'streams.session.timeout.ms', type: 'int', default: '45000', validator: atLeast(1), brokerSynonym: 'group.streams.session.timeout.ms', doc: 'Session timeout of this streams group\'s members' },
  { name: 'streams.heartbeat.interval.ms', type: 'int', default: '5000', validator: atLeast(1), brokerSynonym: 'group.streams.heartbeat.interval.ms', doc: 'Heartbeat interval of this streams group\'s members' },
  { name: 'streams.num.standby.replicas', type: 'int', default: '0', validator: atLeast(0), brokerSynonym: 'group.streams.num.standby.replicas', doc: 'Standby replicas of each task' },
  { name: 'streams.initial.rebalance.delay.ms', type: 'int', default: '3000', validator: atLeast(0), brokerSynonym: 'group.streams.initial.rebalance.delay.ms', doc: 'Wait before the group\'s first assignment' },
  { name: 'streams.assignment.interval.ms', type: 'int', default: '1000', validator: atLeast(0), brokerSynonym: 'group.streams.assignment.interval.ms', doc: 'Least time between two target assignments of this streams group', noEffect: true },
  { name: 'streams.assignor.name', type: 'string', default: 'sticky', brokerSynonym: 'group.streams.assignors', doc: 'Task assignor of this streams group', noEffect: true },
  { name: 'streams.rack.aware.assignment.tags', type: 'list', default: '', brokerSynonym: 'group.streams.rack.aware.assignment.tags', doc: 'Client tags that rack-aware assignment spreads standbys over', noEffect: true },
  { name: 'errors.deadletterqueue.topic.name', type: 'string', default: '', doc: 'Dead-letter queue topic of this share group (empty: none)' },
  { name: 'errors.deadletterqueue.copy.record.enable', type: 'boolean', default: 'false', doc: 'Whether the dead-letter queue gets the record itself or only its context' },
];

export const GROUP_CONFIGS: ReadonlyMap<string, GroupConfigKey> = defineConfigs(GROUP_CONFIG_DEFS);
const GROUP_CONFIG_NAMES = [...GROUP_CONFIGS.keys()].sort();

export type GroupConfigMap = Readonly<Record<string, string>>;

/** The bounds GroupConfig.validateValues checks a group's values against: broker config names. */
const BROKER_RANGES: ReadonlyArray<[config: string, min: string, max: string]> = [
  ['consumer.heartbeat.interval.ms', 'group.consumer.min.heartbeat.interval.ms', 'group.consumer.max.heartbeat.interval.ms'],
  ['consumer.session.timeout.ms', 'group.consumer.min.session.timeout.ms', 'group.consumer.max.session.timeout.ms'],
  ['consumer.assignment.interval.ms', 'group.consumer.min.assignment.interval.ms', 'group.consumer.max.assignment.interval.ms'],
  ['share.heartbeat.interval.ms', 'group.share.min.heartbeat.interval.ms', 'group.share.max.heartbeat.interval.ms'],
  ['share.session.timeout.ms', 'group.share.min.session.timeout.ms', 'group.share.max.session.timeout.ms'],
  ['share.record.lock.duration.ms', 'group.share.min.record.lock.duration.ms', 'group.share.max.record.lock.duration.ms'],
  ['share.delivery.count.limit', 'group.share.min.delivery.count.limit', 'group.share.max.delivery.count.limit'],
  ['share.partition.max.record.locks', 'group.share.min.partition.max.record.locks', 'group.share.max.partition.max.record.locks'],
  ['share.assignment.interval.ms', 'group.share.min.assignment.interval.ms', 'group.share.max.assignment.interval.ms'],
  ['streams.heartbeat.interval.ms', 'group.streams.min.heartbeat.interval.ms', 'group.streams.max.heartbeat.interval.ms'],
  ['streams.session.timeout.ms', 'group.streams.min.session.timeout.ms', 'group.streams.max.session.timeout.ms'],
];

/** Kafka's message for a refused group config: the handlers answer INVALID_CONFIG with it. */
export type GroupConfigError = { message: string };

/**
 * Checks a group's overrides as Kafka's GroupConfig.validate does: unknown names, then each value's
 * type and own bound, then (for the overrides given) the broker's min/max bounds, then each
 * session timeout against its heartbeat interval and the dead-letter queue's name.
 */
export function validateGroupConfigs(configs: GroupConfigMap, broker: BrokerConfig): GroupConfigError | null {
  for (const name of Object.keys(configs)) {
    if (!GROUP_CONFIGS.has(name)) return { message: `Unknown group config name: ${name}` };
  }
  const values = new Map<string, unknown>();
  for (const [name, raw] of Object.entries(configs)) {
    try {
      values.set(name, parseValue(GROUP_CONFIGS.get(name)!, raw));
    } catch (e) {
      if (e instanceof ConfigError) return { message: e.message };
      throw e;
    }
  }
  for (const [config, minName, maxName] of BROKER_RANGES) {
    const value = values.get(config) as number | undefined;
    const [min, max] = [broker.getInt(minName), broker.getInt(maxName)];
    if (value !== undefined && (value < min || value > max)) return { message: `${config} must be in the range ${min} to ${max} inclusive.` };
  }
  const standbys = values.get('streams.num.standby.replicas') as number | undefined;
  const maxStandbys = broker.getInt('group.streams.max.standby.replicas');
  if (standbys !== undefined && standbys > maxStandbys) return { message: `streams.num.standby.replicas must be less than or equal to ${maxStandbys}` };
  for (const kind of ['consumer', 'share', 'streams']) {
    const session = `${kind}.session.timeout.ms`;
    const heartbeat = `${kind}.heartbeat.interval.ms`;
    if (!values.has(session) && !values.has(heartbeat)) continue;
    const effective = (name: string) => (values.get(name) as number | undefined) ?? broker.getInt(GROUP_CONFIGS.get(name)!.brokerSynonym!);
    if (effective(session) <= effective(heartbeat)) return { message: `${session} must be greater than ${heartbeat}` };
  }
  const assignor = values.get('streams.assignor.name') as string | undefined;
  const assignors = broker.getList('group.streams.assignors');
  if (assignor !== undefined && !assignors.includes(assignor)) {
    return { message: `streams.assignor.name '${assignor}' is not a registered task assignor. Registered assignors are: [${assignors.join(', ')}].` };
  }
  const dlq = values.get('errors.deadletterqueue.topic.name') as string | undefined;
  if (dlq?.startsWith('__')) return { message: "errors.deadletterqueue.topic.name: DLQ topic name must not start with '__'" };
  return null;
}

/** A group config's default as Kafka reports it: its broker synonym's value (the first of a list for an assignor), else its own. */
function defaultValue(key: GroupConfigKey, broker: BrokerConfig): string | null {
  if (!key.brokerSynonym) return key.defaultString;
  if (key.name === 'streams.assignor.name') return broker.getList(key.brokerSynonym)[0] ?? null;
  return broker.valueString(key.brokerSynonym);
}

/**
 * DescribeConfigs entries of a GROUP resource, as Kafka 4.4 answers: every group config (or those
 * in `keys`), the override with source DYNAMIC_GROUP_CONFIG, else the default with DEFAULT_CONFIG; the
 * synonyms are the override, then the broker synonym's settings (or the config's own default).
 */
export function describeGroupConfigs(
  broker: BrokerConfig,
  overrides: GroupConfigMap,
  keys: readonly string[] | null | undefined,
  opts: { includeSynonyms?: boolean; includeDocumentation?: boolean } = {},
): ConfigEntry[] {
  const names = keys && keys.length > 0 ? GROUP_CONFIG_NAMES.filter((n) => keys.includes(n)) : GROUP_CONFIG_NAMES;
  return names.map((name) => {
    const key = GROUP_CONFIGS.get(name)!;
    const raw = overrides[name];
    const synonyms: ConfigSynonym[] = key.brokerSynonym
      ? broker.synonymsOf(key.brokerSynonym)
      : [{ name, value: key.defaultString, source: ConfigSource.DEFAULT_CONFIG }];
    if (key.name === 'streams.assignor.name') for (const s of synonyms) s.value = s.value?.split(',')[0] ?? null;
    if (raw !== undefined) synonyms.unshift({ name, value: raw, source: ConfigSource.DYNAMIC_GROUP_CONFIG });
    return {
      name,
      value: raw ?? defaultValue(key, broker),
      readOnly: false,
      source: raw !== undefined ? ConfigSource.DYNAMIC_GROUP_CONFIG : ConfigSource.DEFAULT_CONFIG,
      isSensitive: false,
      synonyms: opts.includeSynonyms ? synonyms : [],
      configType: key.configType,
      documentation: opts.includeDocumentation ? key.doc : null,
    };
  });
}

/** What the group coordinator takes from a consumer group's configs: the override, else the broker's setting. */
export interface ConsumerGroupConfig {
  sessionTimeoutMs: number;
  heartbeatIntervalMs: number;
  assignmentIntervalMs: number;
}

export function consumerGroupConfig(broker: BrokerConfig, overrides: GroupConfigMap): ConsumerGroupConfig {
  const value = (name: string): number => {
    const raw = overrides[name];
    return raw !== undefined ? (parseValue(GROUP_CONFIGS.get(name)!, raw) as number) : broker.getInt(GROUP_CONFIGS.get(name)!.brokerSynonym!);
  };
  return {
    sessionTimeoutMs: value('consumer.session.timeout.ms'),
    heartbeatIntervalMs: value('consumer.heartbeat.interval.ms'),
    assignmentIntervalMs: value('consumer.assignment.interval.ms'),
  };
}

/** A share group's dead-letter queue (KIP-1191): its topic (null: none, the default) and whether records are copied. */
export interface DeadLetterQueueConfig {
  topicName: string | null;
  copyRecord: boolean;
}

export function deadLetterQueueConfig(overrides: GroupConfigMap): DeadLetterQueueConfig {
  const topicName = overrides['errors.deadletterqueue.topic.name'];
  const copy = overrides['errors.deadletterqueue.copy.record.enable'];
  return {
    topicName: topicName ? topicName : null,
    copyRecord: copy !== undefined && (parseValue(GROUP_CONFIGS.get('errors.deadletterqueue.copy.record.enable')!, copy) as boolean),
  };
}

/** What a share-partition takes from its share group's configs (read at each use: they may change). */
export interface ShareGroupSettings {
  recordLockDurationMs: number;
  deliveryCountLimit: number;
  maxRecordLocks: number;
  /** share.auto.offset.reset: by_duration reads as the duration to go back from now. */
  autoOffsetReset: 'earliest' | 'latest' | { durationMs: number };
  /** share.isolation.level is read_committed. */
  readCommitted: boolean;
  /** share.renew.acknowledge.enable: members may acknowledge with RENEW. */
  renewAcknowledgeEnable: boolean;
  /** errors.deadletterqueue.topic.name is set: rejected records and those past the limit go there (KIP-1191). */
  deadLetterQueue?: boolean;
}

/** An ISO-8601 duration as share.auto.offset.reset's by_duration takes it (PnDTnHnMn.nS, checked by its validator). */
export function parseShareResetDuration(duration: string): number {
  const m = /^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$/.exec(duration);
  if (!m) throw new ConfigError(`Invalid duration ${duration}`);
  const [days, hours, minutes, seconds] = [m[1], m[2], m[3], m[4]].map((v) => Number(v ?? 0));
  return Math.round((((days * 24 + hours) * 60 + minutes) * 60 + seconds) * 1000);
}

/** A share group's settings: each override, else the broker's setting (or the group config's own default). */
export function shareGroupSettings(broker: BrokerConfig, overrides: GroupConfigMap): ShareGroupSettings {
  const value = (name: string): unknown => {
    const key = GROUP_CONFIGS.get(name)!;
    const raw = overrides[name];
    if (raw !== undefined) return parseValue(key, raw);
    return key.brokerSynonym ? broker.get(key.brokerSynonym) : key.defaultValue;
  };
  const reset = value('share.auto.offset.reset') as string;
  return {
    recordLockDurationMs: value('share.record.lock.duration.ms') as number,
    deliveryCountLimit: value('share.delivery.count.limit') as number,
    maxRecordLocks: value('share.partition.max.record.locks') as number,
    autoOffsetReset: reset === 'earliest' || reset === 'latest'
      ? reset
      : { durationMs: parseShareResetDuration(reset.slice('by_duration:'.length)) },
    readCommitted: value('share.isolation.level') === 'read_committed',
    renewAcknowledgeEnable: value('share.renew.acknowledge.enable') as boolean,
    deadLetterQueue: (value('errors.deadletterqueue.topic.name') as string | null ?? '') !== '',
  };
}

/** IncrementalAlterConfigs on a group: SET and DELETE; no group config can be appended to or subtracted from, as in Kafka. */
export function applyGroupConfigOps(
  current: GroupConfigMap,
  ops: ReadonlyArray<{ name: string; op: number; value: string | null }>,
): { configs: Record<string, string> } | { error: GroupConfigError } {
  const configs: Record<string, string> = { ...current };
  for (const { name, op, value } of ops) {
    if (op === 0) configs[name] = value!;
    else if (op === 1) delete configs[name];
    else return { error: { message: `Can't ${op === 2 ? 'APPEND' : 'SUBTRACT'} to key ${name} because its type is not LIST.` } };
  }
  return { configs };
}
