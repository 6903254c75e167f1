// AlterConfigs (key 33), versions 0-2.
// - TOPIC: the given configs replace the topic's whole set of overrides (the legacy semantics);
//   values are validated by type and range (INVALID_CONFIG), validateOnly changes nothing.
// - GROUP: the given configs replace the group's overrides, checked as IncrementalAlterConfigs does.
// - BROKER: the given configs replace the dynamic configs of "" (the cluster-wide default) or of this
//   broker's id, checked as IncrementalAlterConfigs checks them (a null value: INVALID_REQUEST).
// - A resource the principal may not ALTER_CONFIGS (the topic, the group, the cluster for brokers):
//   TOPIC_/GROUP_/CLUSTER_AUTHORIZATION_FAILED with no message, before any other check.
import { ApiKey } from '../protocol/generated';
import type { AlterConfigsRequestAlterConfigsResource as AlterConfigsResource } from '../protocol/generated/AlterConfigsRequest';
import { ErrorCode, quoteInMessage } from '../common/errors';
import type { Controller, Outcome } from '../cluster/controller';
import { AclOperation } from '../security/acl';
import { ResourceType, alterEach, configResourceRefusal, checkBrokerAlterResource, checkGroupResource, nullValueRefused, unsupportedResource } from './shared/config-resources';
import { defineHandler } from './handler';

export interface AlterConfigsServices {
  readonly nodeId: number;
  readonly controller: Pick<Controller, 'setTopicConfigs' | 'setGroupConfigs' | 'setBrokerConfigs'>;
}

export const alterConfigs = defineHandler(ApiKey.AlterConfigs, { minVersion: 0, maxVersion: 2 }, (s: AlterConfigsServices) => async (req, ctx) => ({
  throttleTimeMs: 0, responses: await alterEach(req.resources, (r) => configResourceRefusal(ctx, AclOperation.ALTER_CONFIGS, r.resourceType, r.resourceName)
      ?? alterResource(s, r, req.validateOnly)),
}));

async function alterResource(s: AlterConfigsServices, r: AlterConfigsResource, validateOnly: boolean): Promise<Outcome> {
  switch (r.resourceType) {
    case ResourceType.TOPIC: {
      const configs: Record<string, string> = {};
      for (const c of r.configs) {
        if (c.value === null) return { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: `Null value not supported for topic configs: ${quoteInMessage(c.name)}` };
        configs[c.name] = c.value;
      }
      return s.controller.setTopicConfigs(r.resourceName, () => configs, validateOnly);
    }
    case ResourceType.GROUP: {
      const bad = checkGroupResource(r.resourceName);
      if (bad) return bad;
      const configs: Record<string, string> = {};
      for (const c of r.configs) {
        if (c.value === null) return nullValueRefused(c.name);
        configs[c.name] = c.value;
      }
      return s.controller.setGroupConfigs(r.resourceName, () => configs, validateOnly);
    }
    case ResourceType.BROKER: {
      const nulls = r.configs.filter((c) => c.value === null).map((c) => c.name);
      if (nulls.length > 0) return nullValueRefused(nulls.join(', '));
      const bad = checkBrokerAlterResource(r.resourceName, s.nodeId);
      if (bad) return bad;
      const configs = Object.fromEntries(r.configs.map((c) => [c.name, c.value as string]));
      return s.controller.setBrokerConfigs(r.resourceName, () => configs, validateOnly);
    }
    default:
      return unsupportedResource(r.resourceType);
  }
}
