// DescribeConfigs (key 32), versions 0-4.
// - TOPIC: every topic config with its effective value; source TOPIC_CONFIG for overrides,
//   else the broker synonym's source (STATIC_BROKER_CONFIG or DEFAULT_CONFIG). An illegal name
//   is INVALID_TOPIC_EXCEPTION, an unknown topic UNKNOWN_TOPIC_OR_PARTITION.
// - BROKER: this node's configs (resource name = node id), each with its effective value and source
//   (DYNAMIC_BROKER_CONFIG > DYNAMIC_DEFAULT_BROKER_CONFIG > STATIC_BROKER_CONFIG > DEFAULT_CONFIG);
//   "" names the cluster-wide dynamic defaults: only those set, as Kafka lists them. Another id is
//   INVALID_REQUEST.
// - BROKER_LOGGER: the root logger's level.
// - GROUP: every group config, the group's override (DYNAMIC_GROUP_CONFIG) or the broker's default, whether
//   or not the group exists; an empty name is INVALID_REQUEST.
// - CLIENT_METRICS: Fjord has no client metrics subscriptions: no configs.
// - A resource the principal may not DESCRIBE_CONFIGS (the topic, the group, the cluster for the
//   others) is answered TOPIC_/GROUP_/CLUSTER_AUTHORIZATION_FAILED with no configs, before any check.
// - Synonyms from v1 when asked, documentation from v3 when asked; isDefault at v0 only.
// - The error message is "" (not null) on success and for an unknown topic, as Kafka 4.4 sends it.
import type { Logger } from 'pino';
import { ApiKey } from '../protocol/generated';
import type { DescribeConfigsRequestDescribeConfigsResource as DescribeConfigsResource } from '../protocol/generated/DescribeConfigsRequest';
import type { DescribeConfigsResponseDescribeConfigsResult as DescribeConfigsResult } from '../protocol/generated/DescribeConfigsResponse';
import { ErrorCode } from '../common/errors';
import { ConfigSource, ConfigType, type BrokerConfig, type ConfigEntry } from '../config/broker-config';
import { describeGroupConfigs } from '../config/group-config';
import { describeTopicConfigs } from '../config/topic-config';
import type { Controller } from '../cluster/controller';
import { validateTopicName } from '../cluster/topic-names';
import { AclOperation } from '../security/acl';
import { ResourceType, checkBrokerResource, configResourceRefusal, unsupportedResource } from './shared/config-resources';
import { defineHandler } from './handler';

export interface DescribeConfigsServices {
  readonly nodeId: number;
  /** This node's configs, and the defaults a topic's configs fall back to. */
  readonly config: BrokerConfig;
  readonly controller: Pick<Controller, 'topic' | 'groupConfigs'>;
  /** Its level is the BROKER_LOGGER resource's one config. */
  readonly log: Pick<Logger, 'level'>;
}

export const describeConfigs = defineHandler(ApiKey.DescribeConfigs, { minVersion: 0, maxVersion: 4 }, (s: DescribeConfigsServices) => (req, ctx) => {
  const opts = { includeSynonyms: ctx.apiVersion >= 1 && !!req.includeSynonyms, includeDocumentation: !!req.includeDocumentation };
  return { throttleTimeMs: 0, results: req.resources.map((r) => {
    const refused = configResourceRefusal(ctx, AclOperation.DESCRIBE_CONFIGS, r.resourceType, r.resourceName);
    return refused ? { ...refused, resourceType: r.resourceType, resourceName: r.resourceName, configs: [] } : describeResource(s, r, ctx.apiVersion, opts);
  }) };
});

function describeResource(
  s: DescribeConfigsServices, r: DescribeConfigsResource, version: number, opts: { includeSynonyms: boolean; includeDocumentation: boolean },
): DescribeConfigsResult {
  const result = (errorCode: number, errorMessage: string | null, entries: ConfigEntry[]): DescribeConfigsResult => ({
    errorCode, errorMessage, resourceType: r.resourceType, resourceName: r.resourceName,
    configs: entries.map((e) => ({
      name: e.name, value: e.value, readOnly: e.readOnly, isDefault: version === 0 && e.source === ConfigSource.DEFAULT_CONFIG,
      configSource: e.source, isSensitive: e.isSensitive, synonyms: e.synonyms, configType: e.configType,
      documentation: e.documentation,
    })),
  });
  switch (r.resourceType) {
    case ResourceType.TOPIC: {
      const invalidName = validateTopicName(r.resourceName);
      if (invalidName) return result(ErrorCode.INVALID_TOPIC_EXCEPTION, invalidName, []);
      const topic = s.controller.topic(r.resourceName);
      if (!topic) return result(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, '', []);
      return result(ErrorCode.NONE, '', describeTopicConfigs(s.config, topic.configs, r.configurationKeys, opts));
    }
    case ResourceType.BROKER: {
      const bad = checkBrokerResource(r.resourceName, s.nodeId, true);
      if (bad) return result(bad.errorCode, bad.errorMessage, []);
      return result(ErrorCode.NONE, '', s.config.describe(r.configurationKeys, opts, r.resourceName === '' ? 'default' : 'broker'));
    }
    case ResourceType.BROKER_LOGGER: {
      const bad = checkBrokerResource(r.resourceName, s.nodeId, false);
      if (bad) return result(bad.errorCode, bad.errorMessage, []);
      const level = s.log.level.toUpperCase();
      return result(ErrorCode.NONE, '', [{
        name: 'root', value: level, readOnly: false, source: ConfigSource.DYNAMIC_BROKER_LOGGER_CONFIG, isSensitive: false,
        synonyms: [], configType: ConfigType.STRING, documentation: null,
      }]);
    }
    case ResourceType.GROUP: {
      if (r.resourceName === '') return result(ErrorCode.INVALID_REQUEST, 'Group name must not be empty', []);
      return result(ErrorCode.NONE, '', describeGroupConfigs(s.config, s.controller.groupConfigs(r.resourceName), r.configurationKeys, opts));
    }
    case ResourceType.CLIENT_METRICS:
      return result(ErrorCode.NONE, '', []);
    default: {
      const bad = unsupportedResource(r.resourceType);
      return result(bad.errorCode, bad.errorMessage, []);
    }
  }
}
