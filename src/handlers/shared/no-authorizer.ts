// What the ACL APIs answer while no authorizer is configured (authorizer.class.name empty): Kafka's AclApis
// then answers SECURITY_DISABLED, before looking at the request's contents, with one message for
// CreateAcls and DeleteAcls and another for DescribeAcls (both checked against Kafka 4.4.0).
import { ErrorCode } from '../../common/errors';

export const SECURITY_DISABLED = { errorCode: ErrorCode.SECURITY_DISABLED, errorMessage: 'No Authorizer is configured.' } as const;

export const DESCRIBE_SECURITY_DISABLED = { errorCode: ErrorCode.SECURITY_DISABLED, errorMessage: 'No Authorizer is configured on the broker' } as const;
