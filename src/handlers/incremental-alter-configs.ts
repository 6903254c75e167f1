// IncrementalAlterConfigs (key 44), versions 0-1.
// - TOPIC: SET (0) and DELETE (1) one override each; APPEND (2) and SUBTRACT (3) edit list
//   configs (cleanup.policy...), starting from the current value, the override or else the
//   default. APPEND/SUBTRACT on a non-list config is INVALID_CONFIG; a key named twice in one
//   resource is INVALID_REQUEST. The result is validated like any topic config change.
// - GROUP: SET and DELETE a group's overrides (APPEND/SUBTRACT: INVALID_CONFIG, as Kafka refuses them
//   for every group config), checked against the broker's bounds; the group need not exist. An
//   empty name, or a null value to SET, is INVALID_REQUEST.
// - BROKER: Fjord's broker configs are static; altering them is INVALID_REQUEST.
import { ApiKey } from '../protocol/generated';
import type { IncrementalAlterConfigsRequestAlterConfigsResource as AlterConfigsResource } from '../protocol/generated/IncrementalAlterConfigsRequest';
import { ErrorCode } from '../common/errors';
import type { BrokerConfig } from '../config/broker-config';
import { applyGroupConfigOps } from '../config/group-config';
import { applyAlterConfigOps } from '../config/topic-config';
import type { Controller, Outcome } from '../cluster/controller';
import { ResourceType, alterEach, brokerConfigsNotDynamic, checkBrokerResource, checkGroupResource, nullValueRefused, unsupportedResource } from './shared/config-resources';
import { defineHandler } from './handler';

export interface IncrementalAlterConfigsServices {
  readonly nodeId: number;
  /** The defaults that APPEND/SUBTRACT start from and that validation checks against. */
  readonly config: BrokerConfig;
  readonly controller: Pick<Controller, 'topic' | 'setTopicConfigs' | 'setGroupConfigs'>;
}

export const incrementalAlterConfigs = defineHandler(ApiKey.IncrementalAlterConfigs, { minVersion: 0, maxVersion: 1 },
  (s: IncrementalAlterConfigsServices) => async (req) => ({
    throttleTimeMs: 0, responses: await alterEach(req.resources, (r) => alterResource(s, r, req.validateOnly)),
  }));

async function alterResource(s: IncrementalAlterConfigsServices, r: AlterConfigsResource, validateOnly: boolean): Promise<Outcome> {
  const names = r.configs.map((c) => c.name);
  if (new Set(names).size !== names.length) {
    return { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'Error due to duplicate config keys' };
  }
  const unknownOp = r.configs.find((c) => c.configOperation < 0 || c.configOperation > 3);
  switch (r.resourceType) {
    case ResourceType.TOPIC: {
      if (!s.controller.topic(r.resourceName)) {
        return { errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: 'This server does not host this topic-partition.' };
      }
      if (unknownOp) return { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: `Unknown config operation ${unknownOp.configOperation}` };
      const ops = r.configs.map((c) => ({ name: c.name, op: c.configOperation, value: c.value }));
      return s.controller.setTopicConfigs(r.resourceName, (current) => {
        const applied = applyAlterConfigOps(current, ops, s.config);
        return 'error' in applied ? { errorCode: ErrorCode.INVALID_CONFIG, errorMessage: applied.error.message } : applied.configs;
      }, validateOnly);
    }
    case ResourceType.GROUP: {
      const bad = checkGroupResource(r.resourceName);
      if (bad) return bad;
      if (unknownOp) return { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: `Unknown config operation ${unknownOp.configOperation}` };
      const nullSet = r.configs.find((c) => c.configOperation === 0 && c.value === null);
      if (nullSet) return nullValueRefused(nullSet.name);
      const ops = r.configs.map((c) => ({ name: c.name, op: c.configOperation, value: c.value }));
      return s.controller.setGroupConfigs(r.resourceName, (current) => {
        const applied = applyGroupConfigOps(current, ops);
        return 'error' in applied ? { errorCode: ErrorCode.INVALID_CONFIG, errorMessage: applied.error.message } : applied.configs;
      }, validateOnly);
    }
    case ResourceType.BROKER:
      return checkBrokerResource(r.resourceName, s.nodeId, true) ?? brokerConfigsNotDynamic(names);
    default:
      return unsupportedResource(r.resourceType);
  }
}
