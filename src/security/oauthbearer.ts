// SASL/OAUTHBEARER (RFC 7628) as Kafka's OAuthBearerSaslServer, with its two broker-side token
// validators:
// - unsecured JWS (alg "none"): Kafka's default, OAuthBearerUnsecuredValidatorCallbackHandler, with
//   the OAuthBearerLoginModule options unsecuredValidatorPrincipalClaimName (sub),
//   unsecuredValidatorScopeClaimName (scope), unsecuredValidatorRequiredScope (space-separated) and
//   unsecuredValidatorAllowableClockSkewMs (0);
// - signed JWTs (OAuthBearerValidatorCallbackHandler): RS256/384/512 and ES256/384/512 verified with
//   node:crypto against the keys of a JWKS (sasl.oauthbearer.jwks.endpoint.url, file:// or https://),
//   exp required, nbf and iat honoured, aud and iss checked when expected ones are configured,
//   the principal from sasl.oauthbearer.sub.claim.name, all within sasl.oauthbearer.clock.skew.seconds.
// An invalid token is answered, as Kafka does, with the challenge {"status":"invalid_token"}
// (insufficient_scope and the scope for a missing required scope); the client then sends a single
// 0x01 and the exchange fails with that text. A malformed client message fails with the generic text.
import { createPublicKey, verify as verifySignature, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ConfigError } from '../config/definitions';
import { SaslAuthenticationError, type SaslServer } from './sasl';

export const OAUTHBEARER_LOGIN_MODULE = 'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule';
export const JWT_VALIDATOR_CALLBACK_HANDLER = 'org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler';

export interface OAuthBearerToken {
  readonly principalName: string;
  /** The token's exp, in ms since the epoch. */
  readonly lifetimeMs: number;
  readonly scope: readonly string[];
}

export type TokenValidation =
  | { readonly token: OAuthBearerToken }
  | { readonly errorStatus: 'invalid_token' | 'insufficient_scope'; readonly errorScope?: string; readonly reason: string };

export interface OAuthBearerValidator {
  validate(tokenValue: string): TokenValidation | Promise<TokenValidation>;
}

/** A token or client message the server will not take; the client is told only the generic text. */
export class OAuthBearerMalformedMessage extends Error {}

const CONTROL_A = '\x01';

export class OAuthBearerSaslServer implements SaslServer {
  readonly mechanism = 'OAUTHBEARER';
  private token: OAuthBearerToken | null = null;
  /** The JSON challenge of a refused token: the client's 0x01 reply ends the exchange with it. */
  private errorMessage: string | null = null;

  constructor(private readonly validator: OAuthBearerValidator) {}

  async evaluateResponse(response: Buffer): Promise<Buffer> {
    if (response.length === 1 && response[0] === 1 && this.errorMessage !== null) {
      throw new SaslAuthenticationError(this.errorMessage);
    }
    this.errorMessage = null;
    const { authorizationId, tokenValue } = parseClientInitialResponse(response.toString('utf8'));
    const result = await this.validator.validate(tokenValue);
    if (!('token' in result)) {
      this.errorMessage = `{"status":"${result.errorStatus}"${result.errorScope !== undefined ? `, "scope":"${result.errorScope}"` : ''}}`;
      return Buffer.from(this.errorMessage, 'utf8');
    }
    if (authorizationId !== '' && authorizationId !== result.token.principalName) {
      throw new SaslAuthenticationError(`Authentication failed: Client requested an authorization id (${authorizationId}) that is different from the token's principal name (${result.token.principalName})`);
    }
    this.token = result.token;
    return Buffer.alloc(0);
  }

  isComplete(): boolean {
    return this.token !== null;
  }

  authorizationId(): string {
    if (this.token === null) throw new Error('Authentication exchange has not completed');
    return this.token.principalName;
  }

  credentialExpiresAtMs(): number | null {
    return this.token?.lifetimeMs ?? null;
  }
}

/**
 * The client's first message: gs2 header "n,[a=<authzid>]," then 0x01-separated key=value pairs
 * (auth=Bearer <token>, and SASL extensions) closed by 0x01 0x01 (RFC 7628 3.1).
 */
export function parseClientInitialResponse(message: string): { authorizationId: string; tokenValue: string } {
  // eslint-disable-next-line no-control-regex -- RFC 7628 separates the parts with 0x01
  const m = /^n,(?:a=((?:[\x01-\x7F]|=2C|=3D)*?))?,\x01(.*)\x01\x01$/s.exec(message);
  if (!m) throw new OAuthBearerMalformedMessage('Invalid OAUTHBEARER client first message');
  const authorizationId = (m[1] ?? '').replace(/=2C/g, ',').replace(/=3D/g, '=');
  let tokenValue: string | null = null;
  for (const pair of m[2].split(CONTROL_A)) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new OAuthBearerMalformedMessage('Invalid OAUTHBEARER client first message');
    if (pair.slice(0, eq) !== 'auth') continue;
    const auth = /^(\w+) +([-_.a-zA-Z0-9]+)$/.exec(pair.slice(eq + 1));
    if (!auth) throw new OAuthBearerMalformedMessage('Invalid OAUTHBEARER client first message');
    if (auth[1].toLowerCase() !== 'bearer') throw new OAuthBearerMalformedMessage(`Invalid scheme in OAUTHBEARER client first message: ${auth[1]}`);
    tokenValue = auth[2];
  }
  if (tokenValue === null) throw new OAuthBearerMalformedMessage('Invalid OAUTHBEARER client first message');
  return { authorizationId, tokenValue };
}

/** The client's first message for a token (what kafkajs and Kafka's OAuthBearerSaslClient send). */
export function oauthBearerClientMessage(tokenValue: string, authorizationId = ''): Buffer {
  return Buffer.from(`n,${authorizationId === '' ? '' : `a=${authorizationId}`},${CONTROL_A}auth=Bearer ${tokenValue}${CONTROL_A}${CONTROL_A}`, 'utf8');
}

interface DecodedJwt {
  header: Record<string, unknown>;
  claims: Record<string, unknown>;
  signingInput: string;
  signature: Buffer;
}

function decodeJwt(tokenValue: string): DecodedJwt | string {
  const parts = tokenValue.split('.');
  if (parts.length !== 3) return `a JWS has 3 parts separated by '.', this one has ${parts.length}`;
  try {
    const header = JSON.parse(Buffer.from(parts[0], 'base64url').toString('utf8')) as unknown;
    const claims = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8')) as unknown;
    if (!isObject(header) || !isObject(claims)) return 'the header and claims must be JSON objects';
    return { header, claims, signingInput: `${parts[0]}.${parts[1]}`, signature: Buffer.from(parts[2], 'base64url') };
  } catch (err) {
    return `the header or claims are not base64url JSON (${(err as Error).message})`;
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A scope claim: a space-separated string or a list of strings. */
function scopeOf(value: unknown): string[] {
  if (typeof value === 'string') return value.split(' ').filter((s) => s !== '');
  if (Array.isArray(value)) return value.filter((s): s is string => typeof s === 'string');
  return [];
}

function invalid(reason: string): TokenValidation {
  return { errorStatus: 'invalid_token', reason };
}

export interface UnsecuredValidatorOptions {
  principalClaimName: string;
  scopeClaimName: string;
  requiredScope: readonly string[];
  allowableClockSkewMs: number;
}

/** The options of the listener's OAuthBearerLoginModule, with Kafka's defaults. */
export function unsecuredValidatorOptions(options: ReadonlyMap<string, string>): UnsecuredValidatorOptions {
  const skew = options.get('unsecuredValidatorAllowableClockSkewMs') ?? '0';
  const allowableClockSkewMs = Number(skew);
  if (!/^\d+$/.test(skew.trim())) {
    throw new ConfigError(`Not a non-negative integer value for unsecuredValidatorAllowableClockSkewMs: ${skew}`);
  }
  return {
    principalClaimName: (options.get('unsecuredValidatorPrincipalClaimName') ?? '').trim() || 'sub',
    scopeClaimName: (options.get('unsecuredValidatorScopeClaimName') ?? '').trim() || 'scope',
    requiredScope: (options.get('unsecuredValidatorRequiredScope') ?? '').split(' ').filter((s) => s !== ''),
    allowableClockSkewMs,
  };
}

/** Kafka's default broker validation: unsigned tokens whose claims are checked, for tests and trials. */
export class UnsecuredJwsValidator implements OAuthBearerValidator {
  constructor(private readonly options: UnsecuredValidatorOptions, private readonly now: () => number = Date.now) {}

  validate(tokenValue: string): TokenValidation {
    const jwt = decodeJwt(tokenValue);
    if (typeof jwt === 'string') return invalid(jwt);
    if (jwt.header.alg !== 'none') return invalid(`an unsecured JWS must have alg "none", not ${JSON.stringify(jwt.header.alg)}`);
    if (jwt.signature.length !== 0) return invalid('an unsecured JWS must have an empty signature');
    const { principalClaimName, scopeClaimName, requiredScope, allowableClockSkewMs: skew } = this.options;
    return checkClaims(jwt.claims, principalClaimName, scopeClaimName, skew, this.now(), (scope) => {
      const missing = requiredScope.filter((s) => !scope.includes(s));
      return missing.length === 0 ? null : { errorStatus: 'insufficient_scope', errorScope: requiredScope.join(' '), reason: `the token lacks the required scope ${missing.join(' ')}` };
    });
  }
}

/** The time and principal checks both validators make; `checkScope` adds the unsecured one's. */
function checkClaims(
  claims: Record<string, unknown>, principalClaimName: string, scopeClaimName: string, skewMs: number, now: number,
  checkScope: (scope: string[]) => TokenValidation | null = () => null,
): TokenValidation {
  const principal = claims[principalClaimName];
  if (typeof principal !== 'string' || principal.trim() === '') return invalid(`the ${principalClaimName} claim is missing or not a string`);
  const exp = claims.exp;
  if (typeof exp !== 'number') return invalid('the exp claim is missing or not a number');
  if (exp * 1000 + skewMs <= now) return invalid(`the token expired at ${new Date(exp * 1000).toISOString()}`);
  const iat = claims.iat;
  if (iat !== undefined) {
    if (typeof iat !== 'number') return invalid('the iat claim is not a number');
    if (iat * 1000 - skewMs > now) return invalid('the token is issued in the future');
    if (exp < iat) return invalid('the token expires before it is issued');
  }
  const nbf = claims.nbf;
  if (nbf !== undefined && (typeof nbf !== 'number' || nbf * 1000 - skewMs > now)) return invalid('the token is not valid yet (nbf)');
  const scope = scopeOf(claims[scopeClaimName]);
  return checkScope(scope) ?? { token: { principalName: principal, lifetimeMs: exp * 1000, scope } };
}

export interface JwtValidatorOptions {
  expectedAudience: readonly string[];
  expectedIssuer: string | null;
  subClaimName: string;
  scopeClaimName: string;
  clockSkewSeconds: number;
}

/** What each JWS alg verifies with: the digest, and the signature form node:crypto takes. */
const ALGORITHMS: Record<string, { digest: string; kty: string; ecdsa: boolean }> = {
  RS256: { digest: 'sha256', kty: 'RSA', ecdsa: false },
  RS384: { digest: 'sha384', kty: 'RSA', ecdsa: false },
  RS512: { digest: 'sha512', kty: 'RSA', ecdsa: false },
  ES256: { digest: 'sha256', kty: 'EC', ecdsa: true },
  ES384: { digest: 'sha384', kty: 'EC', ecdsa: true },
  ES512: { digest: 'sha512', kty: 'EC', ecdsa: true },
};

interface VerificationKey {
  readonly kid: string | undefined;
  readonly kty: string;
  readonly key: KeyObject;
}

function parseJwks(text: string, source: string): VerificationKey[] {
  const jwks = JSON.parse(text) as { keys?: unknown };
  if (!Array.isArray(jwks.keys)) throw new Error(`${source} is not a JWKS (no "keys" array)`);
  const keys: VerificationKey[] = [];
  for (const jwk of jwks.keys as Record<string, unknown>[]) {
    // Keys for encryption, and kinds we cannot verify with, are not verification keys.
    if (jwk.use !== undefined && jwk.use !== 'sig') continue;
    if (jwk.kty !== 'RSA' && jwk.kty !== 'EC') continue;
    keys.push({ kid: typeof jwk.kid === 'string' ? jwk.kid : undefined, kty: jwk.kty, key: createPublicKey({ key: jwk as never, format: 'jwk' }) });
  }
  return keys;
}

/**
 * The JWKS keys: a file is read at start (an unreadable one is a startup error, as Kafka's
 * JwksFileVerificationKeyResolver); a URL is fetched at first use and again every jwksRefreshMs, or
 * at once when a token names a key id it does not hold (at most once a second).
 */
export class JwksKeys {
  private keys: VerificationKey[] = [];
  private fetchedAtMs = -Infinity;
  private fetching: Promise<void> | null = null;
  private readonly fileBased: boolean;

  constructor(private readonly url: string, private readonly refreshMs: number) {
    this.fileBased = url.startsWith('file:');
    if (this.fileBased) this.keys = parseJwks(readFileSync(fileURLToPath(url), 'utf8'), url);
    // http: too, for a JWKS behind a local proxy (and tests).
    else if (!/^https?:\/\//.test(url)) throw new Error(`sasl.oauthbearer.jwks.endpoint.url must be a file: or https: URL, not ${url}`);
  }

  async find(kid: string | undefined): Promise<VerificationKey[]> {
    const matching = () => this.keys.filter((k) => kid === undefined || k.kid === kid);
    if (this.fileBased) return matching();
    const age = Date.now() - this.fetchedAtMs;
    if (age > this.refreshMs || (matching().length === 0 && age > 1000)) await this.refresh();
    return matching();
  }

  private refresh(): Promise<void> {
    this.fetching ??= (async () => {
      try {
        const res = await fetch(this.url, { signal: AbortSignal.timeout(10_000) });
        if (!res.ok) throw new Error(`${this.url} answered HTTP ${res.status}`);
        this.keys = parseJwks(await res.text(), this.url);
      } finally {
        // A failed fetch keeps the keys we had; it is tried again no sooner than a second later.
        this.fetchedAtMs = Date.now();
        this.fetching = null;
      }
    })();
    return this.fetching;
  }
}

/** Signed JWTs against a JWKS: what OAuthBearerValidatorCallbackHandler turns on. */
export class JwksJwtValidator implements OAuthBearerValidator {
  constructor(private readonly keys: JwksKeys, private readonly options: JwtValidatorOptions, private readonly now: () => number = Date.now) {}

  async validate(tokenValue: string): Promise<TokenValidation> {
    const jwt = decodeJwt(tokenValue);
    if (typeof jwt === 'string') return invalid(jwt);
    const alg = typeof jwt.header.alg === 'string' ? ALGORITHMS[jwt.header.alg] : undefined;
    if (!alg) return invalid(`unsupported JWS alg ${JSON.stringify(jwt.header.alg)}`);
    let candidates: VerificationKey[];
    try {
      candidates = await this.keys.find(typeof jwt.header.kid === 'string' ? jwt.header.kid : undefined);
    } catch (err) {
      return invalid(`the JWKS could not be read: ${(err as Error).message}`);
    }
    const verified = candidates.some((k) => k.kty === alg.kty && verifySignature(alg.digest, Buffer.from(jwt.signingInput),
      alg.ecdsa ? { key: k.key, dsaEncoding: 'ieee-p1363' } : k.key, jwt.signature));
    if (!verified) return invalid('no key of the JWKS verifies the signature');
    const { claims } = jwt;
    const { expectedAudience, expectedIssuer } = this.options;
    if (expectedAudience.length > 0) {
      const aud = typeof claims.aud === 'string' ? [claims.aud] : Array.isArray(claims.aud) ? claims.aud : [];
      if (!aud.some((a) => expectedAudience.includes(a as string))) return invalid(`the audience ${JSON.stringify(claims.aud)} is not one expected`);
    }
    if (expectedIssuer !== null && claims.iss !== expectedIssuer) return invalid(`the issuer ${JSON.stringify(claims.iss)} is not the expected one`);
    return checkClaims(claims, this.options.subClaimName, this.options.scopeClaimName, this.options.clockSkewSeconds * 1000, this.now());
  }
}
