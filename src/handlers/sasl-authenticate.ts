// SaslAuthenticate (key 36), versions 0-2.
// - Carries one token of the mechanism chosen by SaslHandshake v1 to the connection's exchange
//   (src/net/sasl-authenticator.ts) and its reply back.
// - A failed exchange: SASL_AUTHENTICATION_FAILED with the mechanism's message (Kafka's texts, e.g.
//   "Authentication failed: Invalid username or password"), answered after
//   connection.failed.authentication.delay.ms; the connection then closes.
// - v1+: session_lifetime_ms of a completed exchange (KIP-368; 0 when the session does not expire).
// - Outside an exchange, and on a listener without SASL: ILLEGAL_SASL_STATE, as KafkaApis answers.
import { ApiKey } from '../protocol/generated';
import type { SaslAuthenticateResponse } from '../protocol/generated/SaslAuthenticateResponse';
import { ErrorCode } from '../common/errors';
import { defineHandler } from './handler';

export const saslAuthenticate = defineHandler(ApiKey.SaslAuthenticate, { minVersion: 0, maxVersion: 2 },
  () => async (req, ctx): Promise<SaslAuthenticateResponse> => {
    if (!ctx.sasl) {
      return {
        errorCode: ErrorCode.ILLEGAL_SASL_STATE, errorMessage: 'SaslAuthenticate request received after successful authentication',
        authBytes: Buffer.alloc(0), sessionLifetimeMs: 0n,
      };
    }
    const r = await ctx.sasl.authenticate(req.authBytes, ctx.apiVersion);
    return { errorCode: r.errorCode, errorMessage: r.errorMessage, authBytes: r.authBytes, sessionLifetimeMs: BigInt(r.sessionLifetimeMs) };
  });
