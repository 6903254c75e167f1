// SCRAM-SHA-256 and SCRAM-SHA-512 (RFC 5802, RFC 7677) as Kafka 4.4 speaks them: the server side of
// the exchange over the cluster's credentials (Kafka's ScramSaslServer), a client (inter-broker SASL,
// tests), and the derivation of what the broker keeps from a password (Kafka's ScramFormatter).
//
// The messages are parsed with Kafka's grammar (ScramMessages): gs2 header "n" only (no channel
// binding), an optional authzid that must name the user itself, the ASCII-only saslname with its
// =2C / =3D escapes, extensions after the nonce. Every failure but the authzid one is a ScramFailure
// (Kafka's SaslException), whose reason is for the broker's log only: the authenticator answers the
// client Kafka's generic message, naming only the mechanism, so that a client cannot tell an unknown
// user from a wrong password. The authzid refusal is a SaslAuthenticationError, worded for the client.
import * as crypto from 'node:crypto';
import { SaslAuthenticationError, type SaslServer, type ScramCredential, type ScramCredentialLookup, type ScramMechanism } from './sasl';

export const SCRAM_MECHANISMS: readonly ScramMechanism[] = ['SCRAM-SHA-256', 'SCRAM-SHA-512'];

/** Kafka's ScramMechanism.minIterations (4096 for both) and ScramControlManager.MAX_ITERATIONS. */
export const SCRAM_MIN_ITERATIONS = 4096;
export const SCRAM_MAX_ITERATIONS = 16384;

/** The admin API's mechanism codes (org.apache.kafka.clients.admin.ScramMechanism): 0 is UNKNOWN. */
const MECHANISM_TYPES: ReadonlyMap<number, ScramMechanism> = new Map([[1, 'SCRAM-SHA-256'], [2, 'SCRAM-SHA-512']]);

export function scramMechanismOfType(type: number): ScramMechanism | null {
  return MECHANISM_TYPES.get(type) ?? null;
}

export function scramMechanismType(mechanism: ScramMechanism): number {
  return mechanism === 'SCRAM-SHA-256' ? 1 : 2;
}

export function isScramMechanism(name: string): name is ScramMechanism {
  return (SCRAM_MECHANISMS as readonly string[]).includes(name);
}

const hashOf = (mechanism: ScramMechanism): 'sha256' | 'sha512' => (mechanism === 'SCRAM-SHA-256' ? 'sha256' : 'sha512');
const hmac = (mechanism: ScramMechanism, key: Buffer, text: string | Buffer): Buffer =>
  crypto.createHmac(hashOf(mechanism), key).update(text).digest();
const hash = (mechanism: ScramMechanism, data: Buffer): Buffer => crypto.createHash(hashOf(mechanism)).update(data).digest();

function xor(a: Buffer, b: Buffer): Buffer {
  const out = Buffer.alloc(a.length);
  for (let i = 0; i < a.length; i++) out[i] = a[i] ^ b[i];
  return out;
}

/** Hi(password, salt, i) of RFC 5802: PBKDF2 with the mechanism's HMAC, as long as its hash. Kafka applies no SASLprep. */
export function saltedPassword(mechanism: ScramMechanism, password: string, salt: Buffer, iterations: number): Buffer {
  const hashLength = mechanism === 'SCRAM-SHA-256' ? 32 : 64;
  return crypto.pbkdf2Sync(Buffer.from(password, 'utf8'), salt, iterations, hashLength, hashOf(mechanism));
}

/** What the broker keeps of a salted password (the request of AlterUserScramCredentials carries one). */
export function credentialFromSaltedPassword(mechanism: ScramMechanism, salt: Buffer, salted: Buffer, iterations: number): ScramCredential {
  const clientKey = hmac(mechanism, salted, 'Client Key');
  return { salt, storedKey: hash(mechanism, clientKey), serverKey: hmac(mechanism, salted, 'Server Key'), iterations };
}

/** A credential for a password, with a random salt unless given (tests, users configured in files). */
export function scramCredential(mechanism: ScramMechanism, password: string, iterations: number, salt: Buffer = crypto.randomBytes(32)): ScramCredential {
  return credentialFromSaltedPassword(mechanism, salt, saltedPassword(mechanism, password, salt, iterations), iterations);
}

/** A nonce as Kafka's ScramFormatter.secureRandomString makes one: 130 random bits in base 36. */
function randomNonce(): string {
  return BigInt('0x' + crypto.randomBytes(17).toString('hex')).toString(36);
}

// Kafka's ScramMessages grammar (RFC 5802 restricted to ASCII): value-safe-char excludes ',' and '='.
const SASLNAME = '(?:[\\x01-\\x2B\\x2D-\\x3C\\x3E-\\x7F]|=2C|=3D)+';
const VALUE = '[\\x01-\\x2B\\x2D-\\x7F]+';
const PRINTABLE = '[\\x21-\\x2B\\x2D-\\x7E]+';
const BASE64 = '(?:[a-zA-Z0-9/+]{4})*(?:[a-zA-Z0-9/+]{3}=|[a-zA-Z0-9/+]{2}==)?';
const EXTENSIONS = `(?:,[A-Za-z]+=${VALUE})*`;
const CLIENT_FIRST = new RegExp(`^n,(?:a=(${SASLNAME}))?,((?:m=${VALUE},)?n=(${SASLNAME}),r=(${PRINTABLE})(${EXTENSIONS}))$`);
const SERVER_FIRST = new RegExp(`^(?:m=${VALUE},)?r=(${PRINTABLE}),s=(${BASE64}),i=([0-9]+)${EXTENSIONS}$`);
const CLIENT_FINAL = new RegExp(`^(c=(${BASE64}),r=(${PRINTABLE})${EXTENSIONS}),p=(${BASE64})$`);
const SERVER_FINAL = new RegExp(`^(?:e=([\\x01-\\x2B\\x2D-\\x3C\\x3E-\\x7F]+)|v=(${BASE64}))${EXTENSIONS}$`);

/** A saslname's user: "=2C" is ',' and "=3D" is '=' (ScramFormatter.username). */
export function userOfSaslName(saslName: string): string {
  return saslName.replace(/=2C/g, ',').replace(/=3D/g, '=');
}

export function saslNameOfUser(user: string): string {
  return user.replace(/=/g, '=3D').replace(/,/g, '=2C');
}

function parseExtensions(text: string): Map<string, string> {
  const extensions = new Map<string, string>();
  for (const pair of text.split(',').filter((p) => p !== '')) {
    const i = pair.indexOf('=');
    extensions.set(pair.slice(0, i), pair.slice(i + 1));
  }
  return extensions;
}

/**
 * A failed exchange whose reason the client must not learn (Kafka's SaslException): the authenticator
 * answers "Authentication failed during authentication due to invalid credentials with SASL mechanism M".
 */
export class ScramFailure extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'ScramFailure';
  }
}

export interface ScramServerOptions {
  /** The server's part of the nonce (tests pin it to replay RFC 7677's exchange); random otherwise. */
  serverNonce?: () => string;
}

type ServerState =
  | { step: 'client-first' }
  | { step: 'client-final'; user: string; credential: ScramCredential; clientFirstBare: string; serverFirst: string; nonce: string }
  | { step: 'complete'; user: string }
  | { step: 'failed' };

/** One SCRAM exchange on the server: client-first -> server-first, client-final -> server-final. */
export class ScramSaslServer implements SaslServer {
  private state: ServerState = { step: 'client-first' };

  constructor(
    readonly mechanism: ScramMechanism,
    private readonly credentials: ScramCredentialLookup,
    private readonly options: ScramServerOptions = {},
  ) {}

  evaluateResponse(response: Buffer): Buffer {
    try {
      switch (this.state.step) {
        case 'client-first': return this.clientFirst(response.toString('utf8'));
        case 'client-final': return this.clientFinal(response.toString('utf8'), this.state);
        default: throw new ScramFailure(`unexpected SCRAM message in state ${this.state.step}`);
      }
    } catch (e) {
      this.state = { step: 'failed' };
      throw e;
    }
  }

  isComplete(): boolean {
    return this.state.step === 'complete';
  }

  authorizationId(): string {
    if (this.state.step !== 'complete') throw new Error('Authentication exchange has not completed');
    return this.state.user;
  }

  /** SCRAM credentials do not expire (delegation tokens, which do, are not supported). */
  credentialExpiresAtMs(): null {
    return null;
  }

  private clientFirst(message: string): Buffer {
    const m = CLIENT_FIRST.exec(message);
    if (!m) throw new ScramFailure(`Invalid SCRAM client first message format: ${message}`);
    const [, authzid, clientFirstBare, saslName, clientNonce, extensions] = m;
    if (parseExtensions(extensions).get('tokenauth')?.toLowerCase() === 'true') {
      throw new ScramFailure('delegation token authentication is not supported');
    }
    const user = userOfSaslName(saslName);
    const credential = this.credentials.scramCredential(user, this.mechanism);
    if (!credential) throw new ScramFailure('Authentication failed: Invalid user credentials');
    if (authzid !== undefined && userOfSaslName(authzid) !== user) {
      // The one failure Kafka words for the client (a SaslAuthenticationException).
      throw new SaslAuthenticationError('Authentication failed: Client requested an authorization id that is different from username');
    }
    if (credential.iterations < SCRAM_MIN_ITERATIONS) {
      throw new ScramFailure(`Iterations ${credential.iterations} is less than the minimum ${SCRAM_MIN_ITERATIONS} for ${this.mechanism}`);
    }
    const nonce = clientNonce + (this.options.serverNonce ?? randomNonce)();
    const serverFirst = `r=${nonce},s=${credential.salt.toString('base64')},i=${credential.iterations}`;
    this.state = { step: 'client-final', user, credential, clientFirstBare, serverFirst, nonce };
    return Buffer.from(serverFirst, 'utf8');
  }

  private clientFinal(message: string, state: Extract<ServerState, { step: 'client-final' }>): Buffer {
    const m = CLIENT_FINAL.exec(message);
    if (!m) throw new ScramFailure(`Invalid SCRAM client final message format: ${message}`);
    const [, withoutProof, , nonce, proofText] = m;
    if (nonce !== state.nonce) throw new ScramFailure('Invalid client nonce in the final client message.');
    const authMessage = `${state.clientFirstBare},${state.serverFirst},${withoutProof}`;
    const { storedKey, serverKey } = state.credential;
    const proof = Buffer.from(proofText, 'base64');
    const clientSignature = hmac(this.mechanism, storedKey, authMessage);
    const computedStoredKey = proof.length === clientSignature.length ? hash(this.mechanism, xor(proof, clientSignature)) : Buffer.alloc(0);
    if (computedStoredKey.length !== storedKey.length || !crypto.timingSafeEqual(computedStoredKey, storedKey)) {
      throw new ScramFailure('Invalid client credentials');
    }
    this.state = { step: 'complete', user: state.user };
    return Buffer.from(`v=${hmac(this.mechanism, serverKey, authMessage).toString('base64')}`, 'utf8');
  }
}

/** The server for one exchange of `mechanism` over the cluster's credentials, as the SASL registry makes it. */
export function createScramServer(mechanism: ScramMechanism, credentials: ScramCredentialLookup, options?: ScramServerOptions): SaslServer {
  return new ScramSaslServer(mechanism, credentials, options);
}

/** The client side of one exchange (Kafka's ScramSaslClient): for inter-broker SASL and tests. */
export class ScramSaslClient {
  private readonly clientNonce: string;
  private readonly authzid: string | undefined;
  private readonly extensions: Record<string, string>;
  private clientFirstBare: string | null = null;
  private expectedServerSignature: Buffer | null = null;

  constructor(
    readonly mechanism: ScramMechanism,
    private readonly user: string,
    private readonly password: string,
    options: { clientNonce?: string; authorizationId?: string; extensions?: Record<string, string> } = {},
  ) {
    this.clientNonce = options.clientNonce ?? randomNonce();
    this.authzid = options.authorizationId;
    this.extensions = options.extensions ?? {};
  }

  /** client-first-message: gs2 header, user, nonce, extensions. */
  firstMessage(): Buffer {
    const extensions = Object.entries(this.extensions).map(([k, v]) => `,${k}=${v}`).join('');
    this.clientFirstBare = `n=${saslNameOfUser(this.user)},r=${this.clientNonce}${extensions}`;
    return Buffer.from(`${this.gs2Header()}${this.clientFirstBare}`, 'utf8');
  }

  /** client-final-message with the proof, for the server-first-message. */
  finalMessage(serverFirstMessage: Buffer): Buffer {
    if (this.clientFirstBare === null) throw new Error('firstMessage() first');
    const serverFirst = serverFirstMessage.toString('utf8');
    const m = SERVER_FIRST.exec(serverFirst);
    if (!m) throw new SaslAuthenticationError(`Invalid SCRAM server first message format: ${serverFirst}`);
    const [, nonce, saltText, iterationsText] = m;
    const iterations = Number(iterationsText);
    if (!nonce.startsWith(this.clientNonce)) throw new SaslAuthenticationError('Invalid server nonce: does not start with client nonce');
    if (iterations < SCRAM_MIN_ITERATIONS) {
      throw new SaslAuthenticationError(`Requested iterations ${iterations} is less than the minimum ${SCRAM_MIN_ITERATIONS} for ${this.mechanism}`);
    }
    const salted = saltedPassword(this.mechanism, this.password, Buffer.from(saltText, 'base64'), iterations);
    const withoutProof = `c=${Buffer.from(this.gs2Header(), 'utf8').toString('base64')},r=${nonce}`;
    const authMessage = `${this.clientFirstBare},${serverFirst},${withoutProof}`;
    const clientKey = hmac(this.mechanism, salted, 'Client Key');
    const clientSignature = hmac(this.mechanism, hash(this.mechanism, clientKey), authMessage);
    this.expectedServerSignature = hmac(this.mechanism, hmac(this.mechanism, salted, 'Server Key'), authMessage);
    return Buffer.from(`${withoutProof},p=${xor(clientKey, clientSignature).toString('base64')}`, 'utf8');
  }

  /** Checks the server-final-message: the server proved it knows the credential. Throws otherwise. */
  verifyServerFinal(serverFinalMessage: Buffer): void {
    const text = serverFinalMessage.toString('utf8');
    const m = SERVER_FINAL.exec(text);
    if (!m) throw new SaslAuthenticationError(`Invalid SCRAM server final message format: ${text}`);
    if (m[1] !== undefined) throw new SaslAuthenticationError(`Sasl authentication using ${this.mechanism} failed with error: ${m[1]}`);
    const signature = Buffer.from(m[2], 'base64');
    if (!this.expectedServerSignature || signature.length !== this.expectedServerSignature.length ||
      !crypto.timingSafeEqual(signature, this.expectedServerSignature)) {
      throw new SaslAuthenticationError('Invalid server signature in server final message');
    }
  }

  private gs2Header(): string {
    return `n,${this.authzid === undefined ? '' : `a=${saslNameOfUser(this.authzid)}`},`;
  }
}

/** A user's credentials, by mechanism (absent: none of that mechanism). */
export type UserScramCredentials = Readonly<Partial<Record<ScramMechanism, ScramCredential>>>;

/** How a user's credentials are kept in the metadata (snapshot, etcd): the byte strings in base64. */
export type StoredScramCredentials = Partial<Record<ScramMechanism, { salt: string; storedKey: string; serverKey: string; iterations: number }>>;

export function storeScramCredentials(credentials: UserScramCredentials): StoredScramCredentials {
  const stored: StoredScramCredentials = {};
  for (const mechanism of SCRAM_MECHANISMS) {
    const c = credentials[mechanism];
    if (c) {
      stored[mechanism] = {
        salt: c.salt.toString('base64'), storedKey: c.storedKey.toString('base64'), serverKey: c.serverKey.toString('base64'), iterations: c.iterations,
      };
    }
  }
  return stored;
}

/** The credentials kept as `stored`; throws on anything else (a corrupt snapshot or etcd value). */
export function loadScramCredentials(stored: unknown): UserScramCredentials {
  if (typeof stored !== 'object' || stored === null) throw new Error('SCRAM credentials are not an object');
  const credentials: Partial<Record<ScramMechanism, ScramCredential>> = {};
  for (const [mechanism, c] of Object.entries(stored as Record<string, Record<string, unknown>>)) {
    if (!isScramMechanism(mechanism) || typeof c !== 'object' || c === null || typeof c.salt !== 'string' || typeof c.storedKey !== 'string' ||
      typeof c.serverKey !== 'string' || !Number.isInteger(c.iterations)) {
      throw new Error(`bad SCRAM credential ${JSON.stringify(mechanism)}`);
    }
    credentials[mechanism] = Object.freeze({
      salt: Buffer.from(c.salt, 'base64'), storedKey: Buffer.from(c.storedKey, 'base64'), serverKey: Buffer.from(c.serverKey, 'base64'),
      iterations: c.iterations as number,
    });
  }
  return Object.freeze(credentials);
}
