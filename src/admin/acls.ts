/**
 * ACLs as `kafka-acls` lists, adds and removes them. Names are Kafka's (READ, TOPIC, LITERAL, ...);
 * a broker without an authorizer answers SECURITY_DISABLED, reported as it is.
 */
import { AclOperations, AclPermissionTypes, ResourcePatternTypes, ResourceTypes } from '@platformatic/kafka';
import { AdminError, toAdminError } from './errors';
import type { KafkaConnection } from './connection';

export type AclResourceType = 'TOPIC' | 'GROUP' | 'CLUSTER' | 'TRANSACTIONAL_ID' | 'DELEGATION_TOKEN' | 'USER';
export type AclPatternType = 'LITERAL' | 'PREFIXED';

export interface AclBinding {
  resourceType: AclResourceType;
  resourceName: string;
  patternType: AclPatternType;
  principal: string;
  host: string;
  operation: string;
  permissionType: 'ALLOW' | 'DENY';
}

/** What to list or delete: a field left out matches any value (Kafka's ANY / null). */
export interface AclBindingFilter {
  resourceType?: AclResourceType;
  resourceName?: string;
  /** Default ANY when listing; MATCH finds the ACLs that apply to a resource name (literal, prefixed and *). */
  patternType?: AclPatternType | 'ANY' | 'MATCH';
  principal?: string;
  host?: string;
  operation?: string;
  permissionType?: 'ALLOW' | 'DENY';
}

/** Kafka's operation names (AclOperation), for the CLI's choices and checks. */
export const ACL_OPERATIONS = Object.keys(AclOperations).filter((k) => k !== 'UNKNOWN' && k !== 'ANY');

function code<T extends Record<string, number>>(table: T, kind: string, name: string): T[keyof T] {
  const value = table[name.toUpperCase().replace(/-/g, '_') as keyof T];
  if (value === undefined) throw new AdminError(`unknown ${kind} '${name}'`, 'INVALID_REQUEST');
  return value;
}

function nameOf(table: Record<string, number>, value: number): string {
  return Object.entries(table).find(([, v]) => v === value)?.[0] ?? 'UNKNOWN';
}

function toFilter(f: AclBindingFilter) {
  return {
    resourceType: f.resourceType ? code(ResourceTypes, 'resource type', f.resourceType) : ResourceTypes.ANY,
    resourceName: f.resourceName ?? null,
    resourcePatternType: f.patternType ? code(ResourcePatternTypes, 'pattern type', f.patternType) : ResourcePatternTypes.ANY,
    principal: f.principal ?? null,
    host: f.host ?? null,
    operation: f.operation ? code(AclOperations, 'operation', f.operation) : AclOperations.ANY,
    permissionType: f.permissionType ? code(AclPermissionTypes, 'permission type', f.permissionType) : AclPermissionTypes.ANY,
  };
}

/** An ACL as the broker's codes give it, by Kafka's names. */
function bindingOf(a: { resourceType: number; resourceName: string; resourcePatternType: number; principal: string; host: string; operation: number; permissionType: number }): AclBinding {
  return {
    resourceType: nameOf(ResourceTypes, a.resourceType) as AclResourceType,
    resourceName: a.resourceName,
    patternType: nameOf(ResourcePatternTypes, a.resourcePatternType) as AclPatternType,
    principal: a.principal,
    host: a.host,
    operation: nameOf(AclOperations, a.operation),
    permissionType: nameOf(AclPermissionTypes, a.permissionType) as 'ALLOW' | 'DENY',
  };
}

export async function listAcls(c: KafkaConnection, filter: AclBindingFilter = {}): Promise<AclBinding[]> {
  try {
    const resources = await c.admin().describeAcls({ filter: toFilter(filter) });
    return resources.flatMap((r) =>
      r.acls.map((a) => bindingOf({ ...a, resourceType: r.resourceType, resourceName: r.resourceName, resourcePatternType: r.resourcePatternType })),
    );
  } catch (e) {
    throw toAdminError(e);
  }
}

export async function createAcls(c: KafkaConnection, bindings: AclBinding[]): Promise<void> {
  try {
    await c.admin().createAcls({
      creations: bindings.map((b) => ({
        resourceType: code(ResourceTypes, 'resource type', b.resourceType),
        resourceName: b.resourceName,
        resourcePatternType: code(ResourcePatternTypes, 'pattern type', b.patternType),
        principal: b.principal,
        host: b.host,
        operation: code(AclOperations, 'operation', b.operation),
        permissionType: code(AclPermissionTypes, 'permission type', b.permissionType),
      })),
    });
  } catch (e) {
    throw toAdminError(e);
  }
}

/** Deletes the ACLs matching any of the filters; returns those deleted. */
export async function deleteAcls(c: KafkaConnection, filters: AclBindingFilter[]): Promise<AclBinding[]> {
  try {
    const deleted = await c.admin().deleteAcls({ filters: filters.map(toFilter) });
    return deleted.map(bindingOf);
  } catch (e) {
    throw toAdminError(e);
  }
}
