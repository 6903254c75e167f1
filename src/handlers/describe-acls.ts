// DescribeAcls (key 29), versions 0-3 (Kafka 4 serves 1-3; v0 is kept for older clients).
// - No authorizer is configured: SECURITY_DISABLED with "No Authorizer is configured on the broker"
//   at the top and no resources, whatever the filter, as Kafka's AclApis answers then.
import { ApiKey } from '../protocol/generated';
import { DESCRIBE_SECURITY_DISABLED } from './shared/no-authorizer';
import { defineHandler } from './handler';

export const describeAcls = defineHandler(ApiKey.DescribeAcls, { minVersion: 0, maxVersion: 3 },
  () => () => ({ throttleTimeMs: 0, ...DESCRIBE_SECURITY_DISABLED, resources: [] }));
