// ACL bindings and filters as Kafka's AclBinding / AclBindingFilter have them, with the checks
// Kafka's controller makes on a new binding (AclControlManager.validateNewAcl) and on a filter,
// and each resource type's operations (AclEntry.supportedOperations).
import { AclOperation, AclPermissionType, CLUSTER_RESOURCE_NAME, PatternType, ResourceType } from './acl';

/** One ACL: a resource pattern and an access control entry. Codes as on the wire. */
export interface AclBinding {
  readonly resourceType: ResourceType;
  readonly resourceName: string;
  readonly patternType: PatternType;
  /** 'User:alice', or 'User:*' for every principal. */
  readonly principal: string;
  /** A client IP address, or '*' for every host. */
  readonly host: string;
  readonly operation: AclOperation;
  readonly permissionType: AclPermissionType;
}

/** DescribeAcls / DeleteAcls: null fields match anything; ANY codes too; MATCH patterns as Kafka's ResourcePatternFilter. */
export interface AclBindingFilter {
  readonly resourceType: ResourceType;
  readonly resourceName: string | null;
  readonly patternType: PatternType;
  readonly principal: string | null;
  readonly host: string | null;
  readonly operation: AclOperation;
  readonly permissionType: AclPermissionType;
}

/** Whether a stored value (snapshot, etcd) has a binding's shape; what it says is checked when it was created. */
export function isAclBinding(v: unknown): v is AclBinding {
  const b = v as Record<string, unknown> | null;
  return typeof b === 'object' && b !== null && typeof b.resourceName === 'string' && typeof b.principal === 'string'
    && typeof b.host === 'string' && [b.resourceType, b.patternType, b.operation, b.permissionType].every(Number.isInteger);
}

/** The resource name and host that match every name and every host; the principal that matches every user. */
export const WILDCARD = '*';
export const WILDCARD_PRINCIPAL = 'User:*';

/** Names as Kafka's enums print them (log lines, error messages). */
export const operationName = (op: AclOperation): string => AclOperation[op] ?? 'UNKNOWN';
export const resourceTypeName = (t: ResourceType): string => ResourceType[t] ?? 'UNKNOWN';
export const patternTypeName = (p: PatternType): string => PatternType[p] ?? 'UNKNOWN';
export const permissionTypeName = (p: AclPermissionType): string => AclPermissionType[p] ?? 'UNKNOWN';

/** A code off the wire as the enum value, UNKNOWN for one Kafka does not define (its fromCode). */
export function knownCode<E extends number>(values: Record<string, string | number>, code: number): E {
  return (typeof values[code] === 'string' ? code : 0) as E;
}

/** Kafka's SecurityUtils.resourceTypeName: TRANSACTIONAL_ID -> TransactionalId (the authorizer's log lines). */
export function resourceTypeCamelName(t: ResourceType): string {
  return resourceTypeName(t).toLowerCase().split('_').map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join('');
}

/** What a binding is, for sets of bindings (two equal bindings are one ACL, as Kafka's StandardAcl equality). */
export function bindingKey(b: AclBinding): string {
  return JSON.stringify([b.resourceType, b.patternType, b.resourceName, b.principal, b.host, b.operation, b.permissionType]);
}

/** Kafka's StandardAcl.toString, as the authorizer's log lines quote the ACL that decided. */
export function describeBinding(b: AclBinding): string {
  return `StandardAcl(resourceType=${resourceTypeName(b.resourceType)}, resourceName=${b.resourceName}, `
    + `patternType=${patternTypeName(b.patternType)}, principal=${b.principal}, host=${b.host}, `
    + `operation=${operationName(b.operation)}, permissionType=${permissionTypeName(b.permissionType)})`;
}

/**
 * Why a new binding is refused (INVALID_REQUEST), or null: Kafka's AclApis checks (the CLUSTER
 * resource's one name) then its controller's (AclControlManager.validateNewAcl), in that order.
 */
export function invalidNewAcl(b: AclBinding): string | null {
  if (b.resourceType === ResourceType.CLUSTER && b.resourceName !== CLUSTER_RESOURCE_NAME) {
    return `The only valid name for the CLUSTER resource is ${CLUSTER_RESOURCE_NAME}`;
  }
  if (b.resourceName === '') return 'Invalid empty resource name';
  if (b.resourceType === ResourceType.UNKNOWN || b.resourceType === ResourceType.ANY) return `Invalid resourceType ${resourceTypeName(b.resourceType)}`;
  if (b.patternType !== PatternType.LITERAL && b.patternType !== PatternType.PREFIXED) return `Invalid patternType ${patternTypeName(b.patternType)}`;
  if (b.operation === AclOperation.UNKNOWN || b.operation === AclOperation.ANY) return `Invalid operation ${operationName(b.operation)}`;
  if (b.permissionType !== AclPermissionType.ALLOW && b.permissionType !== AclPermissionType.DENY) {
    return `Invalid permissionType ${permissionTypeName(b.permissionType)}`;
  }
  if (!b.principal.includes(':')) {
    return `Could not parse principal from \`${b.principal}\` (no colon is present separating the principal type from the principal name)`;
  }
  return null;
}

/** Why a filter is refused (INVALID_REQUEST), or null: AclControlManager.validateFilter. */
export function invalidFilter(f: AclBindingFilter): string | null {
  if (f.resourceType === ResourceType.UNKNOWN || f.patternType === PatternType.UNKNOWN) return 'Unknown patternFilter.';
  if (f.operation === AclOperation.UNKNOWN || f.permissionType === AclPermissionType.UNKNOWN) return 'Unknown entryFilter.';
  return null;
}

/** Kafka's AclBindingFilter.matches: ResourcePatternFilter then AccessControlEntryFilter. */
export function filterMatches(f: AclBindingFilter, b: AclBinding): boolean {
  if (f.resourceType !== ResourceType.ANY && f.resourceType !== b.resourceType) return false;
  if (f.patternType !== PatternType.ANY && f.patternType !== PatternType.MATCH && f.patternType !== b.patternType) return false;
  if (f.resourceName !== null) {
    if (f.patternType === PatternType.ANY || f.patternType === b.patternType) {
      if (f.resourceName !== b.resourceName) return false;
    } else if (b.patternType === PatternType.LITERAL) {
      // MATCH: the ACLs that apply to a resource of that name.
      if (f.resourceName !== b.resourceName && b.resourceName !== WILDCARD) return false;
    } else if (!f.resourceName.startsWith(b.resourceName)) {
      return false;
    }
  }
  if (f.principal !== null && f.principal !== b.principal) return false;
  if (f.host !== null && f.host !== b.host) return false;
  if (f.operation !== AclOperation.ANY && f.operation !== b.operation) return false;
  return f.permissionType === AclPermissionType.ANY || f.permissionType === b.permissionType;
}

const { READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE, CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE,
  CREATE_TOKENS, DESCRIBE_TOKENS, TWO_PHASE_COMMIT } = AclOperation;

/** The operations that apply to each resource type (Kafka's AclEntry.supportedOperations), in Kafka's order. */
export const SUPPORTED_OPERATIONS: Readonly<Partial<Record<ResourceType, readonly AclOperation[]>>> = {
  [ResourceType.TOPIC]: [READ, WRITE, CREATE, DESCRIBE, DELETE, ALTER, DESCRIBE_CONFIGS, ALTER_CONFIGS],
  [ResourceType.GROUP]: [READ, DESCRIBE, DELETE, DESCRIBE_CONFIGS, ALTER_CONFIGS],
  [ResourceType.CLUSTER]: [CREATE, CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE, ALTER, DESCRIBE],
  [ResourceType.TRANSACTIONAL_ID]: [DESCRIBE, WRITE, TWO_PHASE_COMMIT],
  [ResourceType.DELEGATION_TOKEN]: [DESCRIBE],
  [ResourceType.USER]: [CREATE_TOKENS, DESCRIBE_TOKENS],
};
