// Kafka's ACL vocabulary, with the codes the wire protocol uses (AclOperation, ResourceType,
// PatternType, AclPermissionType in Kafka's clients), and the Authorizer the handlers ask.
import type { Session } from './principal';

export enum AclOperation {
  UNKNOWN = 0, ANY = 1, ALL = 2, READ = 3, WRITE = 4, CREATE = 5, DELETE = 6, ALTER = 7, DESCRIBE = 8,
  CLUSTER_ACTION = 9, DESCRIBE_CONFIGS = 10, ALTER_CONFIGS = 11, IDEMPOTENT_WRITE = 12,
  CREATE_TOKENS = 13, DESCRIBE_TOKENS = 14, TWO_PHASE_COMMIT = 15,
}

export enum ResourceType {
  UNKNOWN = 0, ANY = 1, TOPIC = 2, GROUP = 3, CLUSTER = 4, TRANSACTIONAL_ID = 5, DELEGATION_TOKEN = 6, USER = 7,
}

export enum PatternType {
  UNKNOWN = 0, ANY = 1, MATCH = 2, LITERAL = 3, PREFIXED = 4,
}

export enum AclPermissionType {
  UNKNOWN = 0, ANY = 1, DENY = 2, ALLOW = 3,
}

/** The name of the one CLUSTER resource. */
export const CLUSTER_RESOURCE_NAME = 'kafka-cluster';

/** What the authorizer's log line says of a check (Kafka's Action flags and request type). */
export interface AuthorizationAudit {
  /** The API asking, as Kafka names it in the log line ('Fetch'). */
  readonly requestName: string;
  /** false: a grant is logged at trace, not debug (a check that only computes authorized operations). */
  readonly logIfAllowed?: boolean;
  /** false: a denial is logged at trace, not info (authorized operations, or filtering what a client sees). */
  readonly logIfDenied?: boolean;
}

/** What the handlers ask before acting, as Kafka's Authorizer.authorize / authorizeByResourceType. */
export interface Authorizer {
  /** May the session perform `operation` on the resource of this type and (literal) name? */
  authorize(session: Session, operation: AclOperation, resourceType: ResourceType, resourceName: string, audit?: AuthorizationAudit): boolean;
  /**
   * May it perform `operation` on at least one resource of this type (an ALLOW that no DENY covers
   * entirely, KIP-679)? The handlers combine it as Kafka's KafkaApis does: an idempotent
   * InitProducerId passes with IDEMPOTENT_WRITE on the cluster or WRITE on some topic.
   */
  authorizeByResourceType(session: Session, operation: AclOperation, resourceType: ResourceType, audit?: AuthorizationAudit): boolean;
}

/** No authorizer configured: everything is allowed, as in Kafka without authorizer.class.name. */
export const ALLOW_EVERYTHING: Authorizer = {
  authorize: () => true,
  authorizeByResourceType: () => true,
};
