// ListConfigResources (key 74), versions 0-1 (v0 was ListClientMetricsResources; v1 lists every
// kind of config resource, KIP-1142).
// - v0: the client metrics resources, of which Fjord has none: an empty list.
// - v1: the resources of the types asked for (none asked: all of them), as Kafka 4.4 lists them:
//   the groups that have configs, each broker as BROKER_LOGGER and as BROKER, every topic
//   (internal ones too), client metrics (none). A type that has no config resources is
//   UNSUPPORTED_VERSION with an empty list.
// - Without DESCRIBE_CONFIGS on the cluster: CLUSTER_AUTHORIZATION_FAILED and an empty list.
import { ApiKey } from '../protocol/generated';
import { ErrorCode } from '../common/errors';
import type { Controller } from '../cluster/controller';
import { ResourceType } from './shared/config-resources';
import { AclOperation } from '../security/acl';
import { authorizeCluster } from './shared/authorization';
import { defineHandler } from './handler';

export interface ListConfigResourcesServices {
  readonly controller: Pick<Controller, 'brokers' | 'topics' | 'groupsWithConfigs'>;
}

/** Kafka 4.4's order of the resource kinds in its answer, whatever the order asked for. */
const LISTED_TYPES = [ResourceType.CLIENT_METRICS, ResourceType.GROUP, ResourceType.BROKER_LOGGER, ResourceType.BROKER, ResourceType.TOPIC];

export const listConfigResources = defineHandler(ApiKey.ListConfigResources, { minVersion: 0, maxVersion: 1 },
  (s: ListConfigResourcesServices) => (req, ctx) => {
    if (!authorizeCluster(ctx, AclOperation.DESCRIBE_CONFIGS)) return { throttleTimeMs: 0, errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, configResources: [] };
    const asked = ctx.apiVersion === 0 ? [ResourceType.CLIENT_METRICS] : req.resourceTypes ?? [];
    if (asked.some((t) => !LISTED_TYPES.includes(t))) return { throttleTimeMs: 0, errorCode: ErrorCode.UNSUPPORTED_VERSION, configResources: [] };
    const types = LISTED_TYPES.filter((t) => asked.length === 0 || asked.includes(t));
    return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, configResources: types.flatMap((t) => resourceNames(s, t).map((resourceName) => ({ resourceName, resourceType: t }))) };
  });

function resourceNames(s: ListConfigResourcesServices, type: ResourceType): string[] {
  switch (type) {
    case ResourceType.GROUP:
      return s.controller.groupsWithConfigs();
    case ResourceType.BROKER_LOGGER:
    case ResourceType.BROKER:
      return s.controller.brokers().map((b) => String(b.nodeId));
    case ResourceType.TOPIC:
      return s.controller.topics().map((t) => t.name);
    default:
      return []; // client metrics: Fjord has no subscriptions
  }
}
