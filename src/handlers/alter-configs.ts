// AlterConfigs (key 33), versions 0-2.
// - TOPIC: the given configs replace the topic's whole set of overrides (the legacy semantics);
//   values are validated by type and range (INVALID_CONFIG), validateOnly changes nothing.
// - BROKER: Fjord's broker configs are static; altering them is INVALID_REQUEST.
import { ApiKey } from '../protocol/generated';
import type { AlterConfigsRequest, AlterConfigsRequestAlterConfigsResource as AlterConfigsResource } from '../protocol/generated/AlterConfigsRequest';
import type { AlterConfigsResponse } from '../protocol/generated/AlterConfigsResponse';
import { ErrorCode, quoteInMessage } from '../common/errors';
import type { Outcome } from '../cluster/controller';
import { ResourceType, alterEach, brokerConfigsNotDynamic, checkBrokerResource, unsupportedResource } from './shared/config-resources';
import type { HandlerFactory } from './handler';
import type { Broker } from '../broker';

export const alterConfigs: HandlerFactory = (broker) => ({
  apiKey: ApiKey.AlterConfigs,
  name: 'AlterConfigs',
  minVersion: 0,
  maxVersion: 2,
  async handle(req: AlterConfigsRequest): Promise<AlterConfigsResponse> {
    return { throttleTimeMs: 0, responses: await alterEach(req.resources, (r) => alterResource(broker, r, req.validateOnly)) };
  },
});

async function alterResource(broker: Broker, r: AlterConfigsResource, validateOnly: boolean): Promise<Outcome> {
  switch (r.resourceType) {
    case ResourceType.TOPIC: {
      const configs: Record<string, string> = {};
      for (const c of r.configs) {
        if (c.value === null) return { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: `Null value not supported for topic configs: ${quoteInMessage(c.name)}` };
        configs[c.name] = c.value;
      }
      return broker.controller.setTopicConfigs(r.resourceName, () => configs, validateOnly);
    }
    case ResourceType.BROKER:
      return checkBrokerResource(r.resourceName, broker.nodeId, true) ?? brokerConfigsNotDynamic(r.configs.map((c) => c.name));
    default:
      return unsupportedResource(r.resourceType);
  }
}
