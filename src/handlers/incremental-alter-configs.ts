// IncrementalAlterConfigs (key 44), versions 0-1.
// - TOPIC: SET (0) and DELETE (1) one override each; APPEND (2) and SUBTRACT (3) edit list
//   configs (cleanup.policy...), starting from the current value, the override or else the
//   default. APPEND/SUBTRACT on a non-list config is INVALID_CONFIG; a key named twice in one
//   resource is INVALID_REQUEST. The result is validated like any topic config change.
// - GROUP: SET and DELETE a group's overrides (APPEND/SUBTRACT: INVALID_CONFIG, as Kafka refuses them
//   for every group config), checked against the broker's bounds; the group need not exist. An
//   empty name, or a null value to SET, is INVALID_REQUEST.
// - BROKER: the dynamic broker configs of "" (the cluster-wide default) or of this broker's id (another
//   id, or not a number: INVALID_REQUEST), as Kafka 4.4's ConfigAdminManager: a null value to SET is
//   INVALID_REQUEST; APPEND/SUBTRACT on an unknown or non-list config INVALID_CONFIG; the result is
//   checked as Kafka's DynamicBrokerConfig.validate (not dynamic, a bad value, per-broker only at the
//   default level, a requirement between keys, a thread count more than doubled or halved: all
//   INVALID_REQUEST, as Kafka answers), stored and applied at once (see Controller.setBrokerConfigs).
//   Custom (unknown) names are kept, as Kafka keeps them.
// - A resource the principal may not ALTER_CONFIGS (the topic, the group, the cluster for brokers):
//   TOPIC_/GROUP_/CLUSTER_AUTHORIZATION_FAILED with no message, before any other check.
import { ApiKey } from '../protocol/generated';
import type { IncrementalAlterConfigsRequestAlterConfigsResource as AlterConfigsResource } from '../protocol/generated/IncrementalAlterConfigsRequest';
import { ErrorCode } from '../common/errors';
import type { BrokerConfig } from '../config/broker-config';
import { applyBrokerConfigOps } from '../config/broker-config';
import { applyGroupConfigOps } from '../config/group-config';
import { applyAlterConfigOps } from '../config/topic-config';
import type { Controller, Outcome } from '../cluster/controller';
import { AclOperation } from '../security/acl';
import { ResourceType, alterEach, configResourceRefusal, checkBrokerAlterResource, checkGroupResource, nullValueRefused, unsupportedResource } from './shared/config-resources';
import { defineHandler } from './handler';

export interface IncrementalAlterConfigsServices {
  readonly nodeId: number;
  /** The defaults that APPEND/SUBTRACT start from and that validation checks against. */
  readonly config: BrokerConfig;
  readonly controller: Pick<Controller, 'topic' | 'setTopicConfigs' | 'setGroupConfigs' | 'setBrokerConfigs'>;
}

export const incrementalAlterConfigs = defineHandler(ApiKey.IncrementalAlterConfigs, { minVersion: 0, maxVersion: 1 },
  (s: IncrementalAlterConfigsServices) => async (req, ctx) => ({
    throttleTimeMs: 0, responses: await alterEach(req.resources, (r) => configResourceRefusal(ctx, AclOperation.ALTER_CONFIGS, r.resourceType, r.resourceName)
      ?? alterResource(s, r, req.validateOnly)),
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
    case ResourceType.BROKER: {
      const nullSets = r.configs.filter((c) => c.configOperation !== 1 && c.value === null).map((c) => c.name);
      if (nullSets.length > 0) return nullValueRefused(nullSets.join(', '));
      const bad = checkBrokerAlterResource(r.resourceName, s.nodeId);
      if (bad) return bad;
      if (unknownOp) return { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: `Unknown operations type ${unknownOp.configOperation}` };
      const ops = r.configs.map((c) => ({ name: c.name, op: c.configOperation, value: c.value }));
      return s.controller.setBrokerConfigs(r.resourceName, (current) => {
        const applied = applyBrokerConfigOps(current, ops);
        return 'error' in applied ? { errorCode: ErrorCode.INVALID_CONFIG, errorMessage: applied.error } : applied.configs;
      }, validateOnly);
    }
    default:
      return unsupportedResource(r.resourceType);
  }
}
