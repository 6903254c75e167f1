// DescribeClientQuotas (key 48), versions 0-1.
// - Needs DESCRIBE_CONFIGS on the cluster: else CLUSTER_AUTHORIZATION_FAILED, no entries.
// - The filter as Kafka's ClientQuotasImage.describe reads it: each component names an entity type
//   (user, client-id, ip) with a match type (0 exact name, 1 the default entity, 2 any name); an
//   entity matches when it has every type named as asked; strict: and no other type. A bad filter
//   (empty or repeated type, a match string where none belongs, ip with user or client-id) is
//   INVALID_REQUEST, an unknown entity type UNSUPPORTED_VERSION, with Kafka's messages and null entries.
import { ApiKey } from '../protocol/generated';
import { ErrorCode, errorMessage } from '../common/errors';
import { AclOperation, CLUSTER_RESOURCE_NAME, ResourceType } from '../security/acl';
import type { Controller } from '../cluster/controller';
import { describeQuotas } from '../cluster/client-quotas';
import { defineHandler } from './handler';

export interface DescribeClientQuotasServices {
  readonly controller: Pick<Controller, 'clientQuotas'>;
}

export const describeClientQuotas = defineHandler(ApiKey.DescribeClientQuotas, { minVersion: 0, maxVersion: 1 },
  (s: DescribeClientQuotasServices) => (req, ctx) => {
    if (!ctx.authorize(AclOperation.DESCRIBE_CONFIGS, ResourceType.CLUSTER, CLUSTER_RESOURCE_NAME)) {
      const code = ErrorCode.CLUSTER_AUTHORIZATION_FAILED;
      return { throttleTimeMs: 0, errorCode: code, errorMessage: errorMessage(code), entries: null };
    }
    const found = describeQuotas(s.controller.clientQuotas(), req.components, req.strict);
    if ('errorCode' in found) return { throttleTimeMs: 0, ...found, entries: null };
    return {
      throttleTimeMs: 0, errorCode: ErrorCode.NONE, errorMessage: null,
      entries: found.map(({ entity, values }) => ({
        entity: Object.entries(entity).map(([entityType, entityName]) => ({ entityType, entityName })),
        values: Object.entries(values).map(([key, value]) => ({ key, value })),
      })),
    };
  });
