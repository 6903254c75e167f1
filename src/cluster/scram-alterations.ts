// AlterUserScramCredentials' rules, as Kafka 4.4's ScramControlManager.alterCredentials applies them:
// each user is altered at most once per request (a second deletion or upsertion of the same user,
// whatever the mechanism, makes that user DUPLICATE_RESOURCE and drops the first too), an empty user
// name or an iteration count out of range is UNACCEPTABLE_CREDENTIAL, an unknown mechanism
// UNSUPPORTED_SASL_MECHANISM, deleting a credential that does not exist RESOURCE_NOT_FOUND. The
// request carries salted passwords; the broker keeps what ScramFormatter derives from them.
import { ErrorCode } from '../common/errors';
import type { ScramMechanism } from '../security/sasl';
import {
  SCRAM_MAX_ITERATIONS, SCRAM_MIN_ITERATIONS, credentialFromSaltedPassword, scramMechanismOfType, type UserScramCredentials,
} from '../security/scram';

export interface ScramDeletion {
  name: string;
  mechanism: number;
}

export interface ScramUpsertion extends ScramDeletion {
  iterations: number;
  salt: Buffer;
  saltedPassword: Buffer;
}

export interface ScramAlterationResult {
  user: string;
  errorCode: number;
  errorMessage: string | null;
}

export interface ScramAlterationPlan {
  /** Kafka's order: the deletions done, the upsertions done, then the users refused. */
  results: ScramAlterationResult[];
  /** Each altered user's credentials after the request (empty: none left). */
  changes: Map<string, UserScramCredentials>;
}

const ALTERED_TWICE = 'A user credential cannot be altered twice in the same request';

function checkUserAndMechanism(name: string, mechanism: number): ScramAlterationResult | ScramMechanism {
  if (name === '') return { user: name, errorCode: ErrorCode.UNACCEPTABLE_CREDENTIAL, errorMessage: 'Username must not be empty' };
  return scramMechanismOfType(mechanism) ?? { user: name, errorCode: ErrorCode.UNSUPPORTED_SASL_MECHANISM, errorMessage: 'Unknown SCRAM mechanism' };
}

export function planScramAlterations(deletions: readonly ScramDeletion[], upsertions: readonly ScramUpsertion[],
  current: (user: string) => UserScramCredentials): ScramAlterationPlan {
  const refused = new Map<string, ScramAlterationResult>();
  const deleting = new Map<string, ScramMechanism>();
  const upserting = new Map<string, { mechanism: ScramMechanism; upsertion: ScramUpsertion }>();
  const refuse = (user: string, errorCode: number, errorMessage: string) => refused.set(user, { user, errorCode, errorMessage });

  for (const d of deletions) {
    if (refused.has(d.name)) continue;
    if (deleting.delete(d.name)) {
      refuse(d.name, ErrorCode.DUPLICATE_RESOURCE, ALTERED_TWICE);
      continue;
    }
    const mechanism = checkUserAndMechanism(d.name, d.mechanism);
    if (typeof mechanism !== 'string') refused.set(d.name, mechanism);
    else if (!current(d.name)[mechanism]) refuse(d.name, ErrorCode.RESOURCE_NOT_FOUND, 'Attempt to delete a user credential that does not exist');
    else deleting.set(d.name, mechanism);
  }
  for (const u of upsertions) {
    if (refused.has(u.name)) continue;
    if (deleting.delete(u.name) || upserting.delete(u.name)) {
      refuse(u.name, ErrorCode.DUPLICATE_RESOURCE, ALTERED_TWICE);
      continue;
    }
    const mechanism = checkUserAndMechanism(u.name, u.mechanism);
    if (typeof mechanism !== 'string') refused.set(u.name, mechanism);
    else if (u.iterations < SCRAM_MIN_ITERATIONS) refuse(u.name, ErrorCode.UNACCEPTABLE_CREDENTIAL, 'Too few iterations');
    else if (u.iterations > SCRAM_MAX_ITERATIONS) refuse(u.name, ErrorCode.UNACCEPTABLE_CREDENTIAL, 'Too many iterations');
    else upserting.set(u.name, { mechanism, upsertion: u });
  }

  const changes = new Map<string, UserScramCredentials>();
  const results: ScramAlterationResult[] = [];
  for (const [user, mechanism] of deleting) {
    const { [mechanism]: _, ...rest } = current(user);
    changes.set(user, rest);
    results.push({ user, errorCode: ErrorCode.NONE, errorMessage: null });
  }
  for (const [user, { mechanism, upsertion: u }] of upserting) {
    changes.set(user, { ...current(user), [mechanism]: credentialFromSaltedPassword(mechanism, u.salt, u.saltedPassword, u.iterations) });
    results.push({ user, errorCode: ErrorCode.NONE, errorMessage: null });
  }
  results.push(...refused.values());
  return { results, changes };
}
