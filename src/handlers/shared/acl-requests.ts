// What the three ACL handlers share: the store they need, the request's filters and creations as
// bindings, and Kafka's answer when the principal may not touch the ACLs.
import type { Controller } from '../../cluster/controller';
import { ErrorCode, errorMessage } from '../../common/errors';
import { knownCode, type AclBinding, type AclBindingFilter } from '../../security/acl-binding';
import { AclOperation, AclPermissionType, PatternType, ResourceType } from '../../security/acl';

export interface AclServices {
  /** Where the ACLs are kept once an authorizer is configured; null: none is, the APIs answer SECURITY_DISABLED. */
  readonly aclStore: Pick<Controller, 'acls' | 'createAcls' | 'deleteAcls'> | null;
}

/** The answer to a principal not allowed the ACL API's operation on the cluster (Kafka's ClusterAuthorizationException). */
export const CLUSTER_DENIED = { errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, errorMessage: errorMessage(ErrorCode.CLUSTER_AUTHORIZATION_FAILED) } as const;

/** The fields a DescribeAcls request or a DeleteAcls filter has. */
export interface WireFilter {
  resourceTypeFilter: number;
  resourceNameFilter: string | null;
  patternTypeFilter?: number;
  principalFilter: string | null;
  hostFilter: string | null;
  operation: number;
  permissionType: number;
}

/** Codes Kafka does not define read as UNKNOWN, as its fromCode does. */
export function toFilter(f: WireFilter): AclBindingFilter {
  return {
    resourceType: knownCode(ResourceType, f.resourceTypeFilter),
    resourceName: f.resourceNameFilter,
    patternType: knownCode(PatternType, f.patternTypeFilter ?? PatternType.LITERAL),
    principal: f.principalFilter,
    host: f.hostFilter,
    operation: knownCode(AclOperation, f.operation),
    permissionType: knownCode(AclPermissionType, f.permissionType),
  };
}

/** A binding as the responses carry it. */
export function wireBinding(b: AclBinding) {
  return {
    resourceType: b.resourceType, resourceName: b.resourceName, patternType: b.patternType,
    principal: b.principal, host: b.host, operation: b.operation, permissionType: b.permissionType,
  };
}
