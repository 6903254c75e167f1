// The server side of one SASL mechanism's exchange (Kafka's javax.security.sasl.SaslServer as its
// SaslServerAuthenticator drives it), and the SCRAM credentials mechanisms look up.

/** A failed authentication; `message` is what the client is told (Kafka's wording). */
export class SaslAuthenticationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SaslAuthenticationError';
  }
}

/** One exchange: created at SaslHandshake, fed each SaslAuthenticate's bytes until complete. */
export interface SaslServer {
  readonly mechanism: string;
  /**
   * Takes the client's next message and returns the challenge to send back (empty when there is
   * none). Throws SaslAuthenticationError when authentication fails.
   */
  evaluateResponse(response: Buffer): Buffer | Promise<Buffer>;
  isComplete(): boolean;
  /** The authenticated name (the principal is User:<it>); only once complete. */
  authorizationId(): string;
  /**
   * When the credential stops being valid (ms since the epoch; OAUTHBEARER's token expiry), which
   * bounds the session lifetime of KIP-368 re-authentication; null when it does not expire.
   */
  credentialExpiresAtMs(): number | null;
}

export type ScramMechanism = 'SCRAM-SHA-256' | 'SCRAM-SHA-512';

/** What the broker keeps of a SCRAM password (RFC 5802): never the password itself. */
export interface ScramCredential {
  readonly salt: Buffer;
  readonly storedKey: Buffer;
  readonly serverKey: Buffer;
  readonly iterations: number;
}

/** The credentials known to the cluster, read at each authentication (they change at runtime). */
export interface ScramCredentialLookup {
  scramCredential(user: string, mechanism: ScramMechanism): ScramCredential | null;
}

/** SaslAuthenticate's answer, as the connection's authenticator builds it. */
export interface SaslAuthenticateResult {
  readonly errorCode: number;
  readonly errorMessage: string | null;
  readonly authBytes: Buffer;
  /** KIP-368: how long the session lasts (0: no limit); only for a completed exchange. */
  readonly sessionLifetimeMs: number;
}

/**
 * One SASL connection's exchange, as the SaslHandshake and SaslAuthenticate handlers drive it
 * (src/net/sasl-authenticator.ts holds the state; the connection gives it to those requests).
 */
export interface SaslExchange {
  handshake(mechanism: string, version: number): Promise<{ errorCode: number; mechanisms: string[] }>;
  authenticate(authBytes: Buffer, version: number): Promise<SaslAuthenticateResult>;
}

/** The client side of one mechanism's exchange (inter-broker connections on a SASL listener). */
export interface SaslClient {
  readonly mechanism: string;
  /**
   * The next message: the first for null, then the answer to each server challenge; null when the
   * exchange is complete. Throws when a challenge is not what the mechanism expects.
   */
  evaluateChallenge(challenge: Buffer | null): Buffer | null | Promise<Buffer | null>;
}
