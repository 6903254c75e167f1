// DeleteAcls (key 31), versions 0-3 (Kafka 4 serves 1-3; v0 is kept for older clients).
// - No authorizer is configured: every filter is answered SECURITY_DISABLED with "No Authorizer is
//   configured." and no matching ACLs, as Kafka's AclApis answers then (DeleteAclsRequest.getErrorResponse).
import { ApiKey } from '../protocol/generated';
import { SECURITY_DISABLED } from './shared/no-authorizer';
import { defineHandler } from './handler';

export const deleteAcls = defineHandler(ApiKey.DeleteAcls, { minVersion: 0, maxVersion: 3 },
  () => (req) => ({ throttleTimeMs: 0, filterResults: req.filters.map(() => ({ ...SECURITY_DISABLED, matchingAcls: [] })) }));
