// An Authorizer for authorization tests: allows everything except the (operation, resource type,
// resource name) triples a test denies, whoever asks; a test swaps its denials between requests.
// It also records every check asked, so a test can see what a handler checked.
import type { Session } from '../../src/security/principal';
import { AclOperation, ResourceType, type Authorizer } from '../../src/security/acl';

/** Every name of the type, in deny(); authorizeByResourceType is refused only by such a denial. */
export const ANY_NAME = '*';

export interface AskedCheck {
  operation: AclOperation;
  resourceType: ResourceType;
  /** null for authorizeByResourceType. */
  resourceName: string | null;
}

export class TestAuthorizer implements Authorizer {
  private readonly denied = new Set<string>();
  readonly asked: AskedCheck[] = [];

  /** Refuses `operation` on the named resource (or every resource of the type with ANY_NAME). */
  deny(operation: AclOperation, resourceType: ResourceType, resourceName: string = ANY_NAME): this {
    this.denied.add(key(operation, resourceType, resourceName));
    return this;
  }

  /** Back to allowing everything, and forgets the checks asked. */
  reset(): void {
    this.denied.clear();
    this.asked.length = 0;
  }

  /** The checks asked so far as 'OPERATION TYPE name' lines (ANY_NAME for by-resource-type checks). */
  askedLines(): string[] {
    return this.asked.map((c) => `${AclOperation[c.operation]} ${ResourceType[c.resourceType]} ${c.resourceName ?? ANY_NAME}`);
  }

  authorize(_session: Session, operation: AclOperation, resourceType: ResourceType, resourceName: string): boolean {
    this.asked.push({ operation, resourceType, resourceName });
    return !this.denied.has(key(operation, resourceType, resourceName)) && !this.denied.has(key(operation, resourceType, ANY_NAME));
  }

  authorizeByResourceType(_session: Session, operation: AclOperation, resourceType: ResourceType): boolean {
    this.asked.push({ operation, resourceType, resourceName: null });
    return !this.denied.has(key(operation, resourceType, ANY_NAME));
  }
}

function key(operation: AclOperation, resourceType: ResourceType, resourceName: string): string {
  return `${operation}/${resourceType}/${resourceName}`;
}
