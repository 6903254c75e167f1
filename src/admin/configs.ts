/**
 * Configs of topics, brokers and groups as `kafka-configs` shows and changes them: DescribeConfigs
 * and IncrementalAlterConfigs, sent to the broker itself for a broker's own configs (only it
 * answers for them) and to any broker otherwise (the cluster-wide broker default, topics, groups).
 */
import { ConfigResourceTypes, ConfigSources, IncrementalAlterConfigOperationTypes, describeConfigsV4, incrementalAlterConfigsV1, type Connection } from '@platformatic/kafka';
import { AdminError, toAdminError } from './errors';
import type { KafkaConnection } from './connection';
import { anyBrokerConnection, brokerConnection, clusterMetadata } from './brokers';

export interface ConfigEntry {
  name: string;
  value: string | null;
  /** Kafka's ConfigEntry.ConfigSource name: DYNAMIC_TOPIC_CONFIG, DYNAMIC_BROKER_CONFIG, STATIC_BROKER_CONFIG, DEFAULT_CONFIG, ... */
  source: string;
  isDefault: boolean;
  readOnly: boolean;
  sensitive: boolean;
}

/** A broker target with name '' is the cluster-wide broker default (kafka-configs --entity-default). */
export type ConfigTarget = { type: 'topic' | 'broker' | 'group'; name: string };

const SOURCE_NAMES: Record<number, string> = {
  [ConfigSources.UNKNOWN]: 'UNKNOWN',
  [ConfigSources.TOPIC_CONFIG]: 'DYNAMIC_TOPIC_CONFIG',
  [ConfigSources.DYNAMIC_BROKER_CONFIG]: 'DYNAMIC_BROKER_CONFIG',
  [ConfigSources.DYNAMIC_DEFAULT_BROKER_CONFIG]: 'DYNAMIC_DEFAULT_BROKER_CONFIG',
  [ConfigSources.STATIC_BROKER_CONFIG]: 'STATIC_BROKER_CONFIG',
  [ConfigSources.DEFAULT_CONFIG]: 'DEFAULT_CONFIG',
  [ConfigSources.DYNAMIC_BROKER_LOGGER_CONFIG]: 'DYNAMIC_BROKER_LOGGER_CONFIG',
  [ConfigSources.CLIENT_METRICS_CONFIG]: 'CLIENT_METRICS_CONFIG',
  [ConfigSources.GROUP_CONFIG]: 'DYNAMIC_GROUP_CONFIG',
};

const RESOURCE_TYPES = { topic: ConfigResourceTypes.TOPIC, broker: ConfigResourceTypes.BROKER, group: ConfigResourceTypes.GROUP } as const;

/** The source of the configs set on the target itself: what kafka-configs --describe lists without --all. */
function ownSource(target: ConfigTarget): number {
  if (target.type === 'topic') return ConfigSources.TOPIC_CONFIG;
  if (target.type === 'group') return ConfigSources.GROUP_CONFIG;
  return target.name === '' ? ConfigSources.DYNAMIC_DEFAULT_BROKER_CONFIG : ConfigSources.DYNAMIC_BROKER_CONFIG;
}

async function connectionFor(c: KafkaConnection, target: ConfigTarget): Promise<Connection> {
  if (target.type !== 'broker' || target.name === '') return anyBrokerConnection(c);
  const nodeId = Number(target.name);
  if (!Number.isInteger(nodeId) || nodeId < 0) throw new AdminError(`'${target.name}' is not a broker id`, 'INVALID_REQUEST');
  const metadata = await clusterMetadata(c, []);
  if (!metadata.brokers.some((b) => b.nodeId === nodeId)) throw new AdminError(`Broker ${nodeId} is not in the cluster.`, 'BROKER_NOT_AVAILABLE');
  return brokerConnection(c, metadata, nodeId);
}

/** The target's configs, by name: only those set on it unless `all`. */
export async function describeConfigs(c: KafkaConnection, target: ConfigTarget, opts: { all?: boolean } = {}): Promise<ConfigEntry[]> {
  try {
    const response = await describeConfigsV4.api.async(await connectionFor(c, target), [{ resourceType: RESOURCE_TYPES[target.type], resourceName: target.name, configurationKeys: null }], false, false);
    const own = ownSource(target);
    return response.results
      .flatMap((r) => r.configs)
      .filter((e) => opts.all || e.configSource === own)
      .map((e) => ({
        name: e.name,
        value: e.value ?? null,
        source: SOURCE_NAMES[e.configSource] ?? 'UNKNOWN',
        isDefault: e.configSource === ConfigSources.DEFAULT_CONFIG,
        readOnly: e.readOnly,
        sensitive: e.isSensitive,
      }))
      .sort((a, b) => a.name.localeCompare(b.name));
  } catch (e) {
    throw toAdminError(e);
  }
}

/** Sets and removes configs of the target in one IncrementalAlterConfigs (all or nothing on the broker). */
export async function alterConfigs(c: KafkaConnection, target: ConfigTarget, changes: { set?: Record<string, string>; delete?: string[] }): Promise<void> {
  const configs = [
    ...Object.entries(changes.set ?? {}).map(([name, value]) => ({ name, configOperation: IncrementalAlterConfigOperationTypes.SET, value })),
    ...(changes.delete ?? []).map((name) => ({ name, configOperation: IncrementalAlterConfigOperationTypes.DELETE })),
  ];
  if (configs.length === 0) return;
  try {
    await incrementalAlterConfigsV1.api.async(await connectionFor(c, target), [{ resourceType: RESOURCE_TYPES[target.type], resourceName: target.name, configs }], false);
  } catch (e) {
    throw toAdminError(e);
  }
}
