// SASL/PLAIN (RFC 4616) as Kafka's PlainSaslServer with PlainServerCallbackHandler: one message,
// authzid NUL authcid NUL password, checked against the users of the listener's PlainLoginModule
// (its user_NAME="password" options). The failure texts are Kafka's.
import { timingSafeEqual, createHash } from 'node:crypto';
import { SaslAuthenticationError, type SaslClient, type SaslServer } from './sasl';
import type { JaasLoginModule } from './jaas';

export const PLAIN_LOGIN_MODULE = 'org.apache.kafka.common.security.plain.PlainLoginModule';

/** The user_NAME="password" options of a PlainLoginModule: name -> password. */
export function plainUsers(module: JaasLoginModule): Map<string, string> {
  const users = new Map<string, string>();
  for (const [key, value] of module.options) {
    if (key.startsWith('user_')) users.set(key.slice(5), value);
  }
  return users;
}

/** Compares in time that does not depend on where the strings differ (hashes make the lengths equal). */
function samePassword(a: string, b: string): boolean {
  return timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest());
}

export class PlainSaslServer implements SaslServer {
  readonly mechanism = 'PLAIN';
  private authorizedUser: string | null = null;

  constructor(private readonly users: ReadonlyMap<string, string>) {}

  evaluateResponse(response: Buffer): Buffer {
    const tokens = response.toString('utf8').split('\0');
    if (tokens.length !== 3) throw new SaslAuthenticationError(`Invalid SASL/PLAIN response: expected 3 tokens, got ${tokens.length}`);
    const [authorizationId, username, password] = tokens;
    if (username === '') throw new SaslAuthenticationError('Authentication failed: username not specified');
    if (password === '') throw new SaslAuthenticationError('Authentication failed: password not specified');
    const expected = this.users.get(username);
    if (expected === undefined || !samePassword(expected, password)) {
      throw new SaslAuthenticationError('Authentication failed: Invalid username or password');
    }
    if (authorizationId !== '' && authorizationId !== username) {
      throw new SaslAuthenticationError('Authentication failed: Client requested an authorization id that is different from username');
    }
    this.authorizedUser = username;
    return Buffer.alloc(0);
  }

  isComplete(): boolean {
    return this.authorizedUser !== null;
  }

  authorizationId(): string {
    if (this.authorizedUser === null) throw new Error('Authentication exchange has not completed');
    return this.authorizedUser;
  }

  credentialExpiresAtMs(): number | null {
    return null;
  }
}

/** The client's one message (SaslClientAuthenticator's PLAIN): no authzid, then user and password. */
export function plainClientMessage(username: string, password: string): Buffer {
  return Buffer.from(`\0${username}\0${password}`, 'utf8');
}

/** PLAIN from the client side: one message, and the server's empty answer ends it. */
export class PlainSaslClient implements SaslClient {
  readonly mechanism = 'PLAIN';
  private sent = false;

  constructor(private readonly username: string, private readonly password: string) {}

  evaluateChallenge(): Buffer | null {
    if (this.sent) return null;
    this.sent = true;
    return plainClientMessage(this.username, this.password);
  }
}
