// The SASL state of one connection on a SASL_* listener, as Kafka's SaslServerAuthenticator and
// KafkaChannel keep it. The connection asks `admit` of every frame and hands the SaslHandshake and
// SaslAuthenticate requests this object (as ctx.sasl), so the whole exchange lives here:
// - Before authentication only ApiVersions and SaslHandshake are served (then, after a v1 handshake,
//   only SaslAuthenticate); anything else closes the connection with Kafka's reason ("Unexpected
//   Kafka request of type METADATA during SASL handshake."). Frames are taken one at a time meanwhile.
// - SaslHandshake v0: the client then sends the mechanism's tokens as bare size-prefixed frames, and
//   each reply goes back the same way (`rawToken`).
// - An unsupported mechanism, a failed exchange, or a re-authentication that changes the principal or
//   the mechanism: the error answer waits connection.failed.authentication.delay.ms, then the
//   connection closes after writing it (`failed`); the failure is logged at info with the peer and
//   mechanism (the reason is the mechanism's text, which never holds the password).
// - KIP-368: a completed exchange's session lasts min(connections.max.reauth.ms, the credential's
//   expiry - now), told to v1+ clients as session_lifetime_ms. A SaslHandshake on an authenticated
//   connection whose client spoke SaslAuthenticate v1+ starts a re-authentication (Kafka's
//   maybeBeginServerReauthentication); any other request after the session expired closes the
//   connection. A successful re-authentication replaces the connection's session.
// - The exchange (and each re-authentication) must complete within settings.authenticationTimeoutMs,
//   or the connection is closed: a client that stalls holds a socket no longer than that.
import type { Logger } from 'pino';
import { ApiKey, getApiSpec } from '../protocol/generated';
import { ErrorCode } from '../common/errors';
import { SaslAuthenticationError, type SaslAuthenticateResult, type SaslExchange, type SaslServer } from '../security/sasl';
import type { KafkaPrincipal, Session } from '../security/principal';
import type { SaslListenerSettings } from '../security/sasl-config';

type State =
  | 'handshake'      // expecting ApiVersions or SaslHandshake
  | 'authenticate'   // a mechanism is chosen: expecting its tokens
  | 'complete'
  | 'failed';

/** What the connection is told to do with the authenticator's outcome. */
export interface SaslConnectionHooks {
  /** The exchange completed: requests from now on carry this session. */
  authenticated(session: Session): void;
  /** The exchange failed (its answer says so; the connection closes after it). */
  failed(): void;
  /** Closes the connection now (a stalled exchange, an expired session). */
  close(reason: string): void;
}

/** Kafka's ApiKeys name of an API, e.g. SASL_HANDSHAKE, as its messages print them. */
function apiKeyName(apiKey: number): string {
  const spec = getApiSpec(apiKey);
  return spec ? spec.name.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase() : `unknown API key ${apiKey}`;
}

export class SaslAuthenticator implements SaslExchange {
  private state: State = 'handshake';
  private server: SaslServer | null = null;
  private mechanism: string | null = null;
  /** After SaslHandshake v0: the tokens come as bare frames. */
  private rawTokens = false;
  /** The client used SaslAuthenticate v1+, so a SaslHandshake may begin a re-authentication. */
  private clientSupportsReauthentication = false;
  /** Set during a re-authentication: what it must not change. */
  private previous: { mechanism: string; principal: KafkaPrincipal } | null = null;
  /** A re-authentication asked for another mechanism: its first token fails with this. */
  private badMechanismMessage: string | null = null;
  private sessionExpiresAtMs: number | null = null;
  private deadline: NodeJS.Timeout | null = null;
  /** Why the exchange failed; the connection closes once the answer is written. */
  failure: string | null = null;

  constructor(
    private readonly settings: SaslListenerSettings,
    private session: Session,
    private readonly peer: string,
    private readonly log: Logger,
    private readonly hooks: SaslConnectionHooks,
    private readonly now: () => number = Date.now,
  ) {
    this.startDeadline();
  }

  /** Before completion, frames are taken one at a time, each after the previous one's answer. */
  get exchanging(): boolean {
    return this.state !== 'complete';
  }

  /** The next frame is a bare token, not a Kafka request. */
  get expectsRawToken(): boolean {
    return this.rawTokens && this.state === 'authenticate';
  }

  /** The largest frame taken now: sasl.server.max.receive.size until authenticated. */
  maxFrameBytes(maxRequestBytes: number): number {
    return this.state === 'complete' ? maxRequestBytes : Math.min(maxRequestBytes, this.settings.maxReceiveSize);
  }

  /** Null when a request of this API may be served now; else why the connection must close. */
  admit(apiKey: number): string | null {
    switch (this.state) {
      case 'handshake':
        if (apiKey === ApiKey.ApiVersions || apiKey === ApiKey.SaslHandshake) return null;
        return `Unexpected Kafka request of type ${apiKeyName(apiKey)} during SASL handshake.`;
      case 'authenticate':
        if (apiKey === ApiKey.SaslAuthenticate) return null;
        return `Unexpected Kafka request of type ${apiKeyName(apiKey)} during SASL authentication.`;
      case 'failed':
        return this.failure ?? 'SASL authentication failed';
      case 'complete': {
        if (apiKey === ApiKey.SaslHandshake && this.clientSupportsReauthentication) {
          this.beginReauthentication();
          return null;
        }
        if (this.sessionExpiresAtMs !== null && this.now() > this.sessionExpiresAtMs) {
          return `the SASL session of ${this.session.principal.name} expired (connections.max.reauth.ms or credential expiry) and the client did not re-authenticate`;
        }
        return null;
      }
    }
  }

  async handshake(mechanism: string, version: number): Promise<{ errorCode: number; mechanisms: string[] }> {
    const mechanisms = [...this.settings.enabledMechanisms];
    // Kafka's KafkaApis answer: the exchange is over and this is no re-authentication.
    if (this.state !== 'handshake') return { errorCode: ErrorCode.ILLEGAL_SASL_STATE, mechanisms: [] };
    const factory = this.settings.servers.get(mechanism);
    if (!factory) {
      this.fail(`Unsupported SASL mechanism ${mechanism}`, mechanism);
      await this.failureDelay();
      return { errorCode: ErrorCode.UNSUPPORTED_SASL_MECHANISM, mechanisms };
    }
    if (this.previous !== null && this.previous.mechanism !== mechanism) {
      this.badMechanismMessage = `SASL mechanism '${mechanism}' requested by client is not supported for re-authentication of mechanism '${this.previous.mechanism}'`;
    }
    this.mechanism = mechanism;
    this.server = factory();
    this.rawTokens = version === 0;
    this.state = 'authenticate';
    return { errorCode: ErrorCode.NONE, mechanisms };
  }

  async authenticate(authBytes: Buffer, version: number): Promise<SaslAuthenticateResult> {
    if (this.state !== 'authenticate') {
      return {
        errorCode: ErrorCode.ILLEGAL_SASL_STATE, errorMessage: 'SaslAuthenticate request received after successful authentication',
        authBytes: Buffer.alloc(0), sessionLifetimeMs: 0,
      };
    }
    if (version > 0) this.clientSupportsReauthentication = true;
    const outcome = await this.evaluate(authBytes);
    if ('failure' in outcome) {
      await this.failureDelay();
      return { errorCode: ErrorCode.SASL_AUTHENTICATION_FAILED, errorMessage: outcome.failure, authBytes: Buffer.alloc(0), sessionLifetimeMs: 0 };
    }
    return { errorCode: ErrorCode.NONE, errorMessage: null, authBytes: outcome.reply, sessionLifetimeMs: outcome.sessionLifetimeMs };
  }

  /** A bare token after SaslHandshake v0: its reply to send size-prefixed, or null when it failed. */
  async rawToken(token: Buffer): Promise<Buffer | null> {
    const outcome = await this.evaluate(token);
    if ('failure' in outcome) {
      await this.failureDelay();
      return null;
    }
    return outcome.reply;
  }

  /** The connection closed: no deadline may fire for it. */
  dispose(): void {
    if (this.deadline) clearTimeout(this.deadline);
    this.deadline = null;
  }

  private async evaluate(token: Buffer): Promise<{ reply: Buffer; sessionLifetimeMs: number } | { failure: string }> {
    const server = this.server!;
    const mechanism = this.mechanism!;
    let reply: Buffer;
    try {
      if (this.badMechanismMessage !== null) throw new SaslAuthenticationError(this.badMechanismMessage);
      reply = await server.evaluateResponse(token);
      if (!server.isComplete()) return { reply, sessionLifetimeMs: 0 };
      const principal: KafkaPrincipal = { principalType: 'User', name: server.authorizationId() };
      const previous = this.previous;
      if (previous !== null && (previous.principal.principalType !== principal.principalType || previous.principal.name !== principal.name)) {
        throw new SaslAuthenticationError(`Cannot change principals during re-authentication from ${previous.principal.principalType}.${previous.principal.name}: ${principal.principalType}.${principal.name}`);
      }
      return { reply, sessionLifetimeMs: this.complete(principal, server, mechanism) };
    } catch (err) {
      // Other errors may say more than an unauthenticated client should learn (Kafka's SaslException).
      const message = err instanceof SaslAuthenticationError ? err.message
        : `Authentication failed during ${this.previous ? 're-authentication' : 'authentication'} due to invalid credentials with SASL mechanism ${mechanism}`;
      if (!(err instanceof SaslAuthenticationError)) this.log.debug({ peer: this.peer, mechanism, err }, 'SASL exchange failed');
      this.fail(message, mechanism);
      return { failure: message };
    }
  }

  /** The exchange is complete: the session is the new principal's, for its lifetime (KIP-368). */
  private complete(principal: KafkaPrincipal, server: SaslServer, mechanism: string): number {
    const nowMs = this.now();
    const maxReauthMs = this.settings.maxReauthMs.get(mechanism) ?? 0;
    const credentialExpiresAtMs = server.credentialExpiresAtMs();
    let lifetimeMs = 0;
    if (credentialExpiresAtMs !== null || maxReauthMs > 0) {
      const untilExpiry = credentialExpiresAtMs === null ? Infinity : credentialExpiresAtMs - nowMs;
      lifetimeMs = Math.max(0, Math.min(untilExpiry, maxReauthMs > 0 ? maxReauthMs : Infinity));
      this.sessionExpiresAtMs = nowMs + lifetimeMs;
    } else {
      this.sessionExpiresAtMs = null;
    }
    this.log.debug({ peer: this.peer, mechanism, principal: principal.name, sessionLifetimeMs: lifetimeMs, reauthentication: this.previous !== null },
      'SASL authentication complete');
    this.state = 'complete';
    this.previous = null;
    this.server = null;
    this.rawTokens = false;
    this.dispose();
    this.session = { ...this.session, principal };
    this.hooks.authenticated(this.session);
    return lifetimeMs;
  }

  private beginReauthentication(): void {
    this.previous = { mechanism: this.mechanism!, principal: this.session.principal };
    this.badMechanismMessage = null;
    this.state = 'handshake';
    this.startDeadline();
  }

  private fail(message: string, mechanism: string): void {
    this.state = 'failed';
    this.failure = message;
    this.hooks.failed();
    this.dispose();
    this.log.info({ peer: this.peer, mechanism, reason: message },
      `Failed ${this.previous ? 're-authentication' : 'authentication'} with ${this.peer} (${message})`);
  }

  /** connection.failed.authentication.delay.ms: brute force gets one answer per delay and connection. */
  private failureDelay(): Promise<void> {
    const ms = this.settings.failedAuthenticationDelayMs;
    return ms > 0 ? new Promise((resolve) => setTimeout(resolve, ms)) : Promise.resolve();
  }

  private startDeadline(): void {
    this.dispose();
    const ms = this.settings.authenticationTimeoutMs;
    this.deadline = setTimeout(() => {
      this.deadline = null;
      if (this.state !== 'complete') this.hooks.close(`SASL authentication did not complete within ${ms} ms`);
    }, ms);
    this.deadline.unref();
  }
}
