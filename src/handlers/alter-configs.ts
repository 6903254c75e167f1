// AlterConfigs (key 33), versions 0-2.
// - TOPIC: the given configs replace the topic's whole set of overrides (the legacy semantics);
//   values are validated by type and range (INVALID_CONFIG), validateOnly changes nothing.
// - GROUP: the given configs replace the group's overrides, checked as IncrementalAlterConfigs does.
// - BROKER: Fjord's broker configs are static; altering them is INVALID_REQUEST.
import { ApiKey } from '../protocol/generated';
import type { AlterConfigsRequestAlterConfigsResource as AlterConfigsResource } from '../protocol/generated/AlterConfigsRequest';
import { ErrorCode, quoteInMessage } from '../common/errors';
import type { Controller, Outcome } from '../cluster/controller';
import { ResourceType, alterEach, brokerConfigsNotDynamic, checkBrokerResource, checkGroupResource, nullValueRefused, unsupportedResource } from './shared/config-resources';
import { defineHandler } from './handler';

export interface AlterConfigsServices {
  readonly nodeId: number;
  readonly controller: Pick<Controller, 'setTopicConfigs' | 'setGroupConfigs'>;
}

export const alterConfigs = defineHandler(ApiKey.AlterConfigs, { minVersion: 0, maxVersion: 2 }, (s: AlterConfigsServices) => async (req) => ({
  throttleTimeMs: 0, responses: await alterEach(req.resources, (r) => alterResource(s, r, req.validateOnly)),
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
    case ResourceType.BROKER:
      return checkBrokerResource(r.resourceName, s.nodeId, true) ?? brokerConfigsNotDynamic(r.configs.map((c) => c.name));
    default:
      return unsupportedResource(r.resourceType);
  }
}
