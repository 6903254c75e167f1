// DeleteAcls (key 31), versions 0-3 (Kafka 4 serves 1-3; v0 is kept for older clients), as Kafka's
// AclApis.handleDeleteAcls and AclControlManager.deleteAcls answer.
// - No authorizer is configured: every filter is answered SECURITY_DISABLED with "No Authorizer is
//   configured." and no matching ACLs (DeleteAclsRequest.getErrorResponse).
// - The principal needs ALTER on the CLUSTER: else every filter is CLUSTER_AUTHORIZATION_FAILED.
// - A filter with an UNKNOWN code is INVALID_REQUEST ("Unknown patternFilter." / "Unknown
//   entryFilter."); the others delete, all at once, every ACL they match (as DescribeAcls matches),
//   each filter answered with the ACLs it matched (an ACL two filters match is in both answers).
import { ApiKey } from '../protocol/generated';
import { ErrorCode } from '../common/errors';
import { AclOperation, CLUSTER_RESOURCE_NAME, ResourceType } from '../security/acl';
import { invalidFilter } from '../security/acl-binding';
import { SECURITY_DISABLED } from './shared/no-authorizer';
import { CLUSTER_DENIED, toFilter, wireBinding, type AclServices } from './shared/acl-requests';
import { defineHandler } from './handler';

export const deleteAcls = defineHandler(ApiKey.DeleteAcls, { minVersion: 0, maxVersion: 3 }, (s: AclServices) => async (req, ctx) => {
  const store = s.aclStore;
  if (!store) return { throttleTimeMs: 0, filterResults: req.filters.map(() => ({ ...SECURITY_DISABLED, matchingAcls: [] })) };
  if (!ctx.authorize(AclOperation.ALTER, ResourceType.CLUSTER, CLUSTER_RESOURCE_NAME)) {
    return { throttleTimeMs: 0, filterResults: req.filters.map(() => ({ ...CLUSTER_DENIED, matchingAcls: [] })) };
  }
  const filters = req.filters.map(toFilter);
  const refusals = filters.map(invalidFilter);
  const matched = await store.deleteAcls(filters.filter((_, i) => refusals[i] === null));
  let next = 0;
  return {
    throttleTimeMs: 0,
    filterResults: refusals.map((why) => (why !== null
      ? { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: why, matchingAcls: [] }
      : {
        errorCode: ErrorCode.NONE,
        errorMessage: null,
        matchingAcls: matched[next++].map((b) => ({ errorCode: ErrorCode.NONE, errorMessage: null, ...wireBinding(b) })),
      })),
  };
});
