// DescribeAcls (key 29), versions 0-3 (Kafka 4 serves 1-3; v0 is kept for older clients), as Kafka's
// AclApis.handleDescribeAcls answers.
// - No authorizer is configured: SECURITY_DISABLED with "No Authorizer is configured on the broker"
//   at the top and no resources, whatever the filter.
// - The principal needs DESCRIBE on the CLUSTER: else CLUSTER_AUTHORIZATION_FAILED, no resources.
// - Otherwise the ACLs the filter matches (filterMatches: ANY and null match anything; the MATCH
//   pattern matches the name's LITERAL ACLs, the LITERAL '*' and the PREFIXED ACLs of its prefixes),
//   grouped by resource pattern. A filter with an UNKNOWN code is INVALID_REQUEST.
import { ApiKey } from '../protocol/generated';
import { ErrorCode } from '../common/errors';
import { AclOperation, CLUSTER_RESOURCE_NAME, ResourceType } from '../security/acl';
import { filterMatches, invalidFilter, type AclBinding } from '../security/acl-binding';
import { DESCRIBE_SECURITY_DISABLED } from './shared/no-authorizer';
import { CLUSTER_DENIED, toFilter, type AclServices } from './shared/acl-requests';
import { defineHandler } from './handler';

export const describeAcls = defineHandler(ApiKey.DescribeAcls, { minVersion: 0, maxVersion: 3 }, (s: AclServices) => (req, ctx) => {
  const store = s.aclStore;
  if (!store) return { throttleTimeMs: 0, ...DESCRIBE_SECURITY_DISABLED, resources: [] };
  if (!ctx.authorize(AclOperation.DESCRIBE, ResourceType.CLUSTER, CLUSTER_RESOURCE_NAME)) {
    return { throttleTimeMs: 0, ...CLUSTER_DENIED, resources: [] };
  }
  const filter = toFilter(req);
  const invalid = invalidFilter(filter);
  if (invalid !== null) return { throttleTimeMs: 0, errorCode: ErrorCode.INVALID_REQUEST, errorMessage: invalid, resources: [] };
  const byPattern = new Map<string, { pattern: AclBinding; acls: AclBinding[] }>();
  for (const b of store.acls()) {
    if (!filterMatches(filter, b)) continue;
    const key = JSON.stringify([b.resourceType, b.patternType, b.resourceName]);
    const group = byPattern.get(key);
    if (group) group.acls.push(b);
    else byPattern.set(key, { pattern: b, acls: [b] });
  }
  return {
    throttleTimeMs: 0,
    errorCode: ErrorCode.NONE,
    errorMessage: null,
    resources: [...byPattern.values()].map(({ pattern, acls }) => ({
      resourceType: pattern.resourceType,
      resourceName: pattern.resourceName,
      patternType: pattern.patternType,
      acls: acls.map((a) => ({ principal: a.principal, host: a.host, operation: a.operation, permissionType: a.permissionType })),
    })),
  };
});
