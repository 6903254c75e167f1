// DescribeConfigs (key 32), versions 0-4.
// - TOPIC: every topic config with its effective value; source TOPIC_CONFIG for overrides,
//   else the broker synonym's source (STATIC_BROKER_CONFIG or DEFAULT_CONFIG).
// - BROKER: this node's configs (resource name = node id); "" names the cluster-wide dynamic
//   defaults, of which Fjord has none. Another id is INVALID_REQUEST.
// - BROKER_LOGGER: the root logger's level.
// - Synonyms from v1 when asked, documentation from v3 when asked; isDefault at v0 only.
import { ApiKey } from '../protocol/generated';
import type { DescribeConfigsRequest, DescribeConfigsRequestDescribeConfigsResource as DescribeConfigsResource } from '../protocol/generated/DescribeConfigsRequest';
import type { DescribeConfigsResponse, DescribeConfigsResponseDescribeConfigsResult as DescribeConfigsResult } from '../protocol/generated/DescribeConfigsResponse';
import { ErrorCode } from '../common/errors';
import { ConfigSource, ConfigType, type ConfigEntry } from '../config/broker-config';
import { describeTopicConfigs } from '../config/topic-config';
import { ResourceType, checkBrokerResource, unsupportedResource } from './shared/config-resources';
import type { HandlerFactory } from './handler';
import type { Broker } from '../broker';

export const describeConfigs: HandlerFactory = (broker) => ({
  apiKey: ApiKey.DescribeConfigs,
  name: 'DescribeConfigs',
  minVersion: 0,
  maxVersion: 4,
  handle(req: DescribeConfigsRequest, ctx): DescribeConfigsResponse {
    const opts = { includeSynonyms: ctx.apiVersion >= 1 && !!req.includeSynonyms, includeDocumentation: !!req.includeDocumentation };
    return { throttleTimeMs: 0, results: req.resources.map((r) => describeResource(broker, r, ctx.apiVersion, opts)) };
  },
});

function describeResource(
  broker: Broker, r: DescribeConfigsResource, version: number, opts: { includeSynonyms: boolean; includeDocumentation: boolean },
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
      const topic = broker.controller.topic(r.resourceName);
      if (!topic) return result(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, 'This server does not host this topic-partition.', []);
      return result(ErrorCode.NONE, null, describeTopicConfigs(broker.config, topic.configs, r.configurationKeys, opts));
    }
    case ResourceType.BROKER: {
      const bad = checkBrokerResource(r.resourceName, broker.nodeId, true);
      if (bad) return result(bad.errorCode, bad.errorMessage, []);
      if (r.resourceName === '') return result(ErrorCode.NONE, null, []);
      return result(ErrorCode.NONE, null, broker.config.describe(r.configurationKeys, opts));
    }
    case ResourceType.BROKER_LOGGER: {
      const bad = checkBrokerResource(r.resourceName, broker.nodeId, false);
      if (bad) return result(bad.errorCode, bad.errorMessage, []);
      const level = broker.log.level.toUpperCase();
      return result(ErrorCode.NONE, null, [{
        name: 'root', value: level, readOnly: false, source: ConfigSource.DYNAMIC_BROKER_LOGGER_CONFIG, isSensitive: false,
        synonyms: [], configType: ConfigType.STRING, documentation: null,
      }]);
    }
    default: {
      const bad = unsupportedResource(r.resourceType);
      return result(bad.errorCode, bad.errorMessage, []);
    }
  }
}
