// CreateAcls (key 30), versions 0-3 (Kafka 4 serves 1-3; v0 is kept for older clients), as Kafka's
// AclApis.handleCreateAcls and AclControlManager.createAcls answer.
// - No authorizer is configured: every creation is answered SECURITY_DISABLED with "No Authorizer
//   is configured.", before looking at the request (CreateAclsRequest.getErrorResponse).
// - The principal needs ALTER on the CLUSTER: else every creation is CLUSTER_AUTHORIZATION_FAILED.
// - Each creation is checked on its own (invalidNewAcl): a CLUSTER resource not named kafka-cluster,
//   an empty name, UNKNOWN/ANY resource type, operation or permission, a pattern other than LITERAL
//   or PREFIXED, a principal without 'Type:' are INVALID_REQUEST with Kafka's message; the valid
//   ones are stored together (durably: the metadata snapshot, or etcd in a cluster) and apply at once.
// - An ACL that already exists is left as it is and answered as created.
import { ApiKey } from '../protocol/generated';
import { ErrorCode } from '../common/errors';
import { AclOperation, AclPermissionType, CLUSTER_RESOURCE_NAME, PatternType, ResourceType } from '../security/acl';
import { invalidNewAcl, knownCode, type AclBinding } from '../security/acl-binding';
import { SECURITY_DISABLED } from './shared/no-authorizer';
import { CLUSTER_DENIED, type AclServices } from './shared/acl-requests';
import { defineHandler } from './handler';

export const createAcls = defineHandler(ApiKey.CreateAcls, { minVersion: 0, maxVersion: 3 }, (s: AclServices) => async (req, ctx) => {
  const store = s.aclStore;
  if (!store) return { throttleTimeMs: 0, results: req.creations.map(() => ({ ...SECURITY_DISABLED })) };
  if (!ctx.authorize(AclOperation.ALTER, ResourceType.CLUSTER, CLUSTER_RESOURCE_NAME)) {
    return { throttleTimeMs: 0, results: req.creations.map(() => ({ ...CLUSTER_DENIED })) };
  }
  const bindings: AclBinding[] = req.creations.map((c) => ({
    resourceType: knownCode(ResourceType, c.resourceType),
    resourceName: c.resourceName,
    patternType: knownCode(PatternType, c.resourcePatternType ?? PatternType.LITERAL),
    principal: c.principal,
    host: c.host,
    operation: knownCode(AclOperation, c.operation),
    permissionType: knownCode(AclPermissionType, c.permissionType),
  }));
  const refusals = bindings.map(invalidNewAcl);
  await store.createAcls(bindings.filter((_, i) => refusals[i] === null));
  return {
    throttleTimeMs: 0,
    results: refusals.map((why) => (why === null
      ? { errorCode: ErrorCode.NONE, errorMessage: null }
      : { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: why })),
  };
});
