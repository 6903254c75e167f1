/**
 * Topic names as Kafka checks them (org.apache.kafka.common.internals.Topic
 * and the controller's ReplicationControlManager.validateNewTopicNames).
 */
import { ErrorCode, quoteInMessage } from '../common/errors';

export const GROUP_METADATA_TOPIC_NAME = '__consumer_offsets';
export const TRANSACTION_STATE_TOPIC_NAME = '__transaction_state';
/** The share coordinator's log of share-partition state (KIP-932). */
export const SHARE_GROUP_STATE_TOPIC_NAME = '__share_group_state';
/** KRaft's metadata log; never a client-visible topic. */
export const CLUSTER_METADATA_TOPIC_NAME = '__cluster_metadata';

/** Kafka's internal topics (Metadata reports is_internal=true for these). */
export const INTERNAL_TOPICS: ReadonlySet<string> = new Set([GROUP_METADATA_TOPIC_NAME, TRANSACTION_STATE_TOPIC_NAME, SHARE_GROUP_STATE_TOPIC_NAME]);

export const MAX_TOPIC_NAME_LENGTH = 249;
export const LEGAL_CHARS = '[a-zA-Z0-9._-]';

export class InvalidTopicError extends Error {
  readonly errorCode = ErrorCode.INVALID_TOPIC_EXCEPTION;
  constructor(message: string) {
    super(message);
    this.name = 'InvalidTopicError';
  }
}

function containsValidPattern(name: string): boolean {
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    const ok =
      (c >= 97 && c <= 122) || // a-z
      (c >= 65 && c <= 90) || // A-Z
      (c >= 48 && c <= 57) || // 0-9
      c === 46 || c === 95 || c === 45; // . _ -
    if (!ok) return false;
  }
  return true;
}

/** Why a name is not a legal topic name (Kafka's wording), or null when it is. */
export function detectInvalidTopic(name: string): string | null {
  if (name.length === 0) return 'the empty string is not allowed';
  if (name === '.') return "'.' is not allowed";
  if (name === '..') return "'..' is not allowed";
  if (name.length > MAX_TOPIC_NAME_LENGTH) {
    return `the length of '${quoteInMessage(name)}' is longer than the max allowed length ${MAX_TOPIC_NAME_LENGTH}`;
  }
  if (!containsValidPattern(name)) {
    return `'${quoteInMessage(name)}' contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'`;
  }
  return null;
}

/** "Topic name is invalid: <reason>", or null for a legal name. */
export function topicNameError(name: string): string | null {
  const reason = detectInvalidTopic(name);
  return reason === null ? null : `Topic name is invalid: ${reason}`;
}

export function isValidTopicName(name: string): boolean {
  return detectInvalidTopic(name) === null;
}

/**
 * Kafka's Topic.validate as a check: the INVALID_TOPIC_EXCEPTION message
 * ("Topic name is invalid: ...") for an illegal name, null for a legal one.
 */
export function validateTopicName(name: string): string | null {
  return topicNameError(name);
}

/** Throws InvalidTopicError (INVALID_TOPIC_EXCEPTION) for an illegal name. */
export function assertValidTopicName(name: string): void {
  const msg = topicNameError(name);
  if (msg !== null) throw new InvalidTopicError(msg);
}

export function isInternalTopic(name: string): boolean {
  return INTERNAL_TOPICS.has(name);
}

/** '.' and '_' collide in metric names. */
export function hasCollisionChars(name: string): boolean {
  return name.includes('_') || name.includes('.');
}

export function unifyCollisionChars(name: string): string {
  return name.replace(/\./g, '_');
}

export function hasCollision(a: string, b: string): boolean {
  return unifyCollisionChars(a) === unifyCollisionChars(b);
}

/**
 * An existing topic, other than `name` itself, that `name` collides with
 * ('.' vs '_'), or null. The least such name is returned so the message is
 * deterministic.
 */
export function findCollision(name: string, existing: Iterable<string>): string | null {
  if (!hasCollisionChars(name)) return null;
  const unified = unifyCollisionChars(name);
  let found: string | null = null;
  for (const t of existing) {
    if (t !== name && unifyCollisionChars(t) === unified && (found === null || t < found)) found = t;
  }
  return found;
}

/** Alias of findCollision. */
export const topicCollision = findCollision;

export interface TopicNameProblem {
  errorCode: number;
  errorName: 'TOPIC_ALREADY_EXISTS' | 'INVALID_TOPIC_EXCEPTION';
  message: string;
}

/**
 * The checks CreateTopics makes on a new name against the existing topics,
 * in Kafka's order: already exists (TOPIC_ALREADY_EXISTS "Topic 'x' already
 * exists."), then illegal name, then '.'/'_' collision (both
 * INVALID_TOPIC_EXCEPTION; a collision message wins over an illegal-name one,
 * as in Kafka). Null when the name can be created.
 */
export function checkNewTopicName(name: string, existing: Iterable<string> & { has?(n: string): boolean }): TopicNameProblem | null {
  const exists = typeof existing.has === 'function' ? existing.has(name) : [...existing].includes(name);
  if (exists) {
    return { errorCode: ErrorCode.TOPIC_ALREADY_EXISTS, errorName: 'TOPIC_ALREADY_EXISTS', message: `Topic '${name}' already exists.` };
  }
  let problem: TopicNameProblem | null = null;
  const invalid = topicNameError(name);
  if (invalid !== null) problem = { errorCode: ErrorCode.INVALID_TOPIC_EXCEPTION, errorName: 'INVALID_TOPIC_EXCEPTION', message: invalid };
  const colliding = findCollision(name, existing);
  if (colliding !== null) {
    problem = {
      errorCode: ErrorCode.INVALID_TOPIC_EXCEPTION,
      errorName: 'INVALID_TOPIC_EXCEPTION',
      message: `Topic '${name}' collides with existing topic: ${colliding}`,
    };
  }
  return problem;
}
