// What the ACL APIs answer while no authorizer is configured (Fjord has none yet): Kafka's AclApis
// then answers SECURITY_DISABLED with this message, before looking at the request's contents.
import { ErrorCode } from '../../common/errors';

export const SECURITY_DISABLED = { errorCode: ErrorCode.SECURITY_DISABLED, errorMessage: 'No Authorizer is configured.' } as const;
