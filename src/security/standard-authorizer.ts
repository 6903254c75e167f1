// Fjord's StandardAuthorizer: Kafka's org.apache.kafka.metadata.authorizer.StandardAuthorizer
// decisions over the cluster's ACLs (given whole by whoever stores them; no I/O here).
//
// authorize, as StandardAuthorizerData: a super user (super.users) may do anything. Otherwise the
// ACLs on the resource are those of its exact LITERAL name, of every PREFIXED name it starts with,
// and of the LITERAL wildcard '*'; of those, the ones whose principal is the session's or 'User:*'
// and whose host is the client's or '*' decide: any DENY for the operation (or ALL) denies; else
// any ALLOW for it (or ALL, or an operation implying it: READ, WRITE, DELETE, ALTER imply DESCRIBE;
// ALTER_CONFIGS implies DESCRIBE_CONFIGS; only in ALLOW ACLs) allows; else it is denied, unless the
// resource has no ACL at all (for anyone), when allow.everyone.if.no.acl.found decides.
// authorizeByResourceType is Kafka's Authorizer default method (KIP-679).
// Every decision is logged as kafka.authorizer.logger logs it: denials at info, grants at debug
// (trace when the check only computes authorized operations or filters).
import type { Logger } from 'pino';
import { AclOperation, AclPermissionType, PatternType, ResourceType, type Authorizer, type AuthorizationAudit } from './acl';
import { describeBinding, operationName, patternTypeName, resourceTypeCamelName, WILDCARD, WILDCARD_PRINCIPAL, type AclBinding } from './acl-binding';
import { principalToString, type Session } from './principal';

export interface StandardAuthorizerOptions {
  /** Principals ('User:admin') allowed everything. */
  superUsers: readonly string[];
  /** The decision for a resource no ACL names (allow.everyone.if.no.acl.found). */
  allowEveryoneIfNoAclFound: boolean;
  /** Where the decisions are logged (a child named kafka.authorizer.logger is made of it). */
  logger?: Logger;
}

/** Kafka's StandardAuthorizer.getConfiguredSuperUsers: super.users split on ';', trimmed, blanks dropped. */
export function parseSuperUsers(value: string): string[] {
  return value.split(';').map((s) => s.trim()).filter((s) => s !== '');
}

/** One resource type's ACLs, indexed for the questions asked on every request. */
interface TypeIndex {
  /** LITERAL ACLs by resource name ('*' included). */
  literal: Map<string, AclBinding[]>;
  /** PREFIXED ACLs by prefix. */
  prefixed: Map<string, AclBinding[]>;
  /** The lengths of the prefixes present: a name is checked against only these. */
  prefixLengths: number[];
  /** Every ACL of the type (authorizeByResourceType scans them). */
  all: AclBinding[];
}

const IMPLIES_DESCRIBE = new Set([AclOperation.DESCRIBE, AclOperation.READ, AclOperation.WRITE, AclOperation.DELETE, AclOperation.ALTER]);
const IMPLIES_DESCRIBE_CONFIGS = new Set([AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS]);

/** Kafka's findResult: how one ACL (whose resource matches) bears on the request; null: not at all. */
function aclResult(acl: AclBinding, principal: string, host: string, op: AclOperation): AclPermissionType | null {
  if (acl.principal !== principal && acl.principal !== WILDCARD_PRINCIPAL) return null;
  if (acl.host !== WILDCARD && acl.host !== host) return null;
  if (acl.operation !== AclOperation.ALL) {
    if (acl.permissionType === AclPermissionType.ALLOW) {
      if (op === AclOperation.DESCRIBE) {
        if (!IMPLIES_DESCRIBE.has(acl.operation)) return null;
      } else if (op === AclOperation.DESCRIBE_CONFIGS) {
        if (!IMPLIES_DESCRIBE_CONFIGS.has(acl.operation)) return null;
      } else if (op !== acl.operation) {
        return null;
      }
    } else if (op !== acl.operation) {
      return null;
    }
  }
  return acl.permissionType;
}

/** What decided: an ACL, or a named rule (Kafka's MatchingRule; its toString is in the log line). */
type Rule = { allowed: boolean; acl: AclBinding | null; name: string };
const SUPER_USER_RULE: Rule = { allowed: true, acl: null, name: 'SuperUser' };
const DEFAULT_DENY: Rule = { allowed: false, acl: null, name: 'DefaultDeny' };
const ruleText = (rule: Rule): string => (rule.acl ? `MatchingAcl(acl=${describeBinding(rule.acl)})` : rule.name);

export class StandardAuthorizer implements Authorizer {
  private readonly superUsers: ReadonlySet<string>;
  private readonly noAclRule: Rule;
  private readonly log: Logger | undefined;
  private byType = new Map<ResourceType, TypeIndex>();
  private current: readonly AclBinding[] = [];

  constructor(options: StandardAuthorizerOptions) {
    this.superUsers = new Set(options.superUsers);
    this.noAclRule = options.allowEveryoneIfNoAclFound ? { allowed: true, acl: null, name: 'DefaultAllow' } : DEFAULT_DENY;
    this.log = options.logger?.child({ logger: 'kafka.authorizer.logger' });
  }

  /** The ACLs now in force (as last given to setAcls). */
  acls(): readonly AclBinding[] {
    return this.current;
  }

  /** Replaces the ACLs (the metadata changed); the same array again is a no-op. */
  setAcls(acls: readonly AclBinding[]): void {
    if (acls === this.current) return;
    const byType = new Map<ResourceType, TypeIndex>();
    for (const acl of acls) {
      let index = byType.get(acl.resourceType);
      if (!index) byType.set(acl.resourceType, (index = { literal: new Map(), prefixed: new Map(), prefixLengths: [], all: [] }));
      const map = acl.patternType === PatternType.PREFIXED ? index.prefixed : index.literal;
      const list = map.get(acl.resourceName);
      if (list) list.push(acl);
      else map.set(acl.resourceName, [acl]);
      index.all.push(acl);
    }
    for (const index of byType.values()) {
      index.prefixLengths = [...new Set([...index.prefixed.keys()].map((p) => p.length))].sort((a, b) => a - b);
    }
    this.byType = byType;
    this.current = acls;
  }

  authorize(session: Session, operation: AclOperation, resourceType: ResourceType, resourceName: string, audit?: AuthorizationAudit): boolean {
    const principal = principalToString(session.principal);
    const rule = this.superUsers.has(principal) ? SUPER_USER_RULE : this.findRule(principal, session.clientAddress, operation, resourceType, resourceName);
    if (this.log) this.logDecision(rule, principal, session.clientAddress, operation, resourceType, resourceName, audit);
    return rule.allowed;
  }

  /**
   * Kafka's Authorizer.authorizeByResourceType: allowed on a resource named "hardcode" (super users,
   * wildcard ALLOWs, allow.everyone with no ACL), or some LITERAL or PREFIXED ALLOW for exactly this
   * operation (or ALL) that no DENY covers: a LITERAL DENY of the same name, a PREFIXED DENY of a
   * prefix of it, a LITERAL DENY of '*' (which denies outright).
   */
  authorizeByResourceType(session: Session, operation: AclOperation, resourceType: ResourceType, audit?: AuthorizationAudit): boolean {
    if (this.authorize(session, operation, resourceType, 'hardcode', { requestName: audit?.requestName ?? '', logIfDenied: false })) return true;
    const principal = principalToString(session.principal);
    const host = session.clientAddress;
    const deniedLiteral = new Set<string>();
    const deniedPrefixes = new Set<string>();
    const allowed: AclBinding[] = [];
    for (const acl of this.byType.get(resourceType)?.all ?? []) {
      if (acl.host !== host && acl.host !== WILDCARD) continue;
      if (acl.principal !== principal && acl.principal !== WILDCARD_PRINCIPAL) continue;
      if (acl.operation !== operation && acl.operation !== AclOperation.ALL) continue;
      if (acl.permissionType === AclPermissionType.DENY) {
        if (acl.patternType === PatternType.LITERAL) {
          if (acl.resourceName === WILDCARD) return false;
          deniedLiteral.add(acl.resourceName);
        } else {
          deniedPrefixes.add(acl.resourceName);
        }
      } else if (acl.permissionType === AclPermissionType.ALLOW) {
        if (acl.patternType === PatternType.LITERAL && acl.resourceName === WILDCARD) return true;
        allowed.push(acl);
      }
    }
    return allowed.some((acl) => {
      if (acl.patternType === PatternType.LITERAL && deniedLiteral.has(acl.resourceName)) return false;
      for (let i = 1; i <= acl.resourceName.length; i++) if (deniedPrefixes.has(acl.resourceName.slice(0, i))) return false;
      return true;
    });
  }

  private findRule(principal: string, host: string, op: AclOperation, type: ResourceType, name: string): Rule {
    const index = this.byType.get(type);
    if (!index) return this.noAclRule;
    // The name's own ACLs and those of its prefixes first, then the wildcard's (Kafka's order: a
    // DENY found first is the one the log line names).
    const found: { allow: AclBinding | null; deny: AclBinding | null; hasResourceAcls: boolean } = { allow: null, deny: null, hasResourceAcls: false };
    const scan = (acls: AclBinding[] | undefined): boolean => {
      if (!acls) return false;
      found.hasResourceAcls = true;
      for (const acl of acls) {
        const result = aclResult(acl, principal, host, op);
        if (result === AclPermissionType.DENY) {
          found.deny = acl;
          return true;
        }
        if (result === AclPermissionType.ALLOW) found.allow ??= acl;
      }
      return false;
    };
    let denied = scan(index.literal.get(name));
    for (const length of index.prefixLengths) {
      if (denied || length > name.length) break;
      denied = scan(index.prefixed.get(name.slice(0, length)));
    }
    if (!denied && name !== WILDCARD) scan(index.literal.get(WILDCARD));
    if (found.deny) return { allowed: false, acl: found.deny, name: '' };
    if (found.allow) return { allowed: true, acl: found.allow, name: '' };
    return found.hasResourceAcls ? DEFAULT_DENY : this.noAclRule;
  }

  private logDecision(rule: Rule, principal: string, host: string, op: AclOperation, type: ResourceType, name: string,
    audit: AuthorizationAudit | undefined): void {
    const log = this.log!;
    const level = rule.allowed ? (audit?.logIfAllowed ?? true ? 'debug' : 'trace') : (audit?.logIfDenied ?? true ? 'info' : 'trace');
    if (!log.isLevelEnabled(level)) return;
    log[level](`Principal = ${principal} is ${rule.allowed ? 'Allowed' : 'Denied'} operation = ${operationName(op)} from host = ${host} `
      + `on resource = ${resourceTypeCamelName(type)}:${patternTypeName(PatternType.LITERAL)}:${name} for request = ${audit?.requestName ?? ''} `
      + `with resourceRefCount = 1 based on rule ${ruleText(rule)}`);
  }
}
