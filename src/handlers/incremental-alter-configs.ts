// IncrementalAlterConfigs (key 44), versions 0-1.
// - TOPIC: SET (0) and DELETE (1) one override each; APPEND (2) and SUBTRACT (3) edit list
//   configs (cleanup.policy...), starting from the current value, the override or else the
//   default. APPEND/SUBTRACT on a non-list config is INVALID_CONFIG; a key named twice in one
//   resource is INVALID_REQUEST. The result is validated like any topic config change.
// - BROKER: Fjord's broker configs are static; altering them is INVALID_REQUEST.
import { ApiKey } from '../protocol/generated';
import type { IncrementalAlterConfigsRequest, IncrementalAlterConfigsRequestAlterConfigsResource as AlterConfigsResource } from '../protocol/generated/IncrementalAlterConfigsRequest';
import type { IncrementalAlterConfigsResponse } from '../protocol/generated/IncrementalAlterConfigsResponse';
import { ErrorCode } from '../common/errors';
import type { Outcome } from '../cluster/controller';
import { applyAlterConfigOps } from '../config/topic-config';
import { ResourceType, alterEach, brokerConfigsNotDynamic, checkBrokerResource, unsupportedResource } from './shared/config-resources';
import type { HandlerFactory } from './handler';
import type { Broker } from '../broker';

export const incrementalAlterConfigs: HandlerFactory = (broker) => ({
  apiKey: ApiKey.IncrementalAlterConfigs,
  name: 'IncrementalAlterConfigs',
  minVersion: 0,
  maxVersion: 1,
  async handle(req: IncrementalAlterConfigsRequest): Promise<IncrementalAlterConfigsResponse> {
    return { throttleTimeMs: 0, responses: await alterEach(req.resources, (r) => alterResource(broker, r, req.validateOnly)) };
  },
});

async function alterResource(broker: Broker, r: AlterConfigsResource, validateOnly: boolean): Promise<Outcome> {
  const names = r.configs.map((c) => c.name);
  if (new Set(names).size !== names.length) {
    return { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'Error due to duplicate config keys' };
  }
  switch (r.resourceType) {
    case ResourceType.TOPIC: {
      if (!broker.controller.topic(r.resourceName)) {
        return { errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: 'This server does not host this topic-partition.' };
      }
      const unknownOp = r.configs.find((c) => c.configOperation < 0 || c.configOperation > 3);
      if (unknownOp) return { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: `Unknown config operation ${unknownOp.configOperation}` };
      const ops = r.configs.map((c) => ({ name: c.name, op: c.configOperation, value: c.value }));
      return broker.controller.setTopicConfigs(r.resourceName, (current) => {
        const applied = applyAlterConfigOps(current, ops, broker.config);
        return 'error' in applied ? { errorCode: ErrorCode.INVALID_CONFIG, errorMessage: applied.error.message } : applied.configs;
      }, validateOnly);
    }
    case ResourceType.BROKER:
      return checkBrokerResource(r.resourceName, broker.nodeId, true) ?? brokerConfigsNotDynamic(names);
    default:
      return unsupportedResource(r.resourceType);
  }
}
