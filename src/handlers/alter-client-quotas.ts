// AlterClientQuotas (key 49), versions 0-1.
// - Needs ALTER_CONFIGS on the cluster: else CLUSTER_AUTHORIZATION_FAILED for every entry.
// - Each entry's entity and operations (a value to set, or remove) are checked as Kafka's
//   ClientQuotaControlManager checks them (entity types user, client-id, ip; null name: the default
//   entity; known keys, values above 0, whole numbers for the byte rates), with its INVALID_REQUEST
//   messages per entry; the valid ones are written together, durably, and apply on every broker.
// - validate_only: checked, nothing written.
import { ApiKey } from '../protocol/generated';
import { ErrorCode, errorMessage } from '../common/errors';
import { AclOperation, CLUSTER_RESOURCE_NAME, ResourceType } from '../security/acl';
import type { Controller } from '../cluster/controller';
import { defineHandler } from './handler';

export interface AlterClientQuotasServices {
  readonly controller: Pick<Controller, 'alterClientQuotas'>;
}

export const alterClientQuotas = defineHandler(ApiKey.AlterClientQuotas, { minVersion: 0, maxVersion: 1 },
  (s: AlterClientQuotasServices) => async (req, ctx) => {
    const everyEntry = (errorCode: number, message: string | null) => ({
      throttleTimeMs: 0,
      entries: req.entries.map((e) => ({ errorCode, errorMessage: message, entity: e.entity })),
    });
    if (!ctx.authorize(AclOperation.ALTER_CONFIGS, ResourceType.CLUSTER, CLUSTER_RESOURCE_NAME)) {
      return everyEntry(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, errorMessage(ErrorCode.CLUSTER_AUTHORIZATION_FAILED));
    }
    const alterations = req.entries.map((e) => ({
      entity: e.entity,
      ops: e.ops.map((op) => ({ key: op.key, value: op.remove ? null : op.value })),
    }));
    const results = await s.controller.alterClientQuotas(alterations, req.validateOnly);
    if (!Array.isArray(results)) return everyEntry(results.errorCode, results.errorMessage);
    return {
      throttleTimeMs: 0,
      entries: results.map(({ entity, outcome }) => ({
        errorCode: outcome.errorCode, errorMessage: outcome.errorMessage,
        entity: Object.entries(entity).map(([entityType, entityName]) => ({ entityType, entityName })),
      })),
    };
  });
