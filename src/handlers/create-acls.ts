// CreateAcls (key 30), versions 0-3 (Kafka 4 serves 1-3; v0 is kept for older clients).
// - No authorizer is configured: every creation is answered SECURITY_DISABLED with "No Authorizer
//   is configured.", as Kafka's AclApis answers then (CreateAclsRequest.getErrorResponse).
import { ApiKey } from '../protocol/generated';
import { SECURITY_DISABLED } from './shared/no-authorizer';
import { defineHandler } from './handler';

export const createAcls = defineHandler(ApiKey.CreateAcls, { minVersion: 0, maxVersion: 3 },
  () => (req) => ({ throttleTimeMs: 0, results: req.creations.map(() => ({ ...SECURITY_DISABLED })) }));
