// SaslHandshake (key 17), versions 0-1.
// - On a SASL_* listener, picks the mechanism of the connection's exchange (src/net/sasl-authenticator.ts):
//   the enabled mechanisms come back either way; a mechanism not enabled is UNSUPPORTED_SASL_MECHANISM,
//   answered after connection.failed.authentication.delay.ms, and the connection then closes.
// - v0: the mechanism's tokens follow as bare size-prefixed frames (no SaslAuthenticate); v1: they
//   come in SaslAuthenticate requests.
// - On an authenticated connection whose client used SaslAuthenticate v1+, it starts a KIP-368
//   re-authentication; otherwise, and on a listener without SASL, ILLEGAL_SASL_STATE (as KafkaApis).
import { ApiKey } from '../protocol/generated';
import type { SaslHandshakeResponse } from '../protocol/generated/SaslHandshakeResponse';
import { ErrorCode } from '../common/errors';
import { defineHandler } from './handler';

export const saslHandshake = defineHandler(ApiKey.SaslHandshake, { minVersion: 0, maxVersion: 1 },
  () => async (req, ctx): Promise<SaslHandshakeResponse> => {
    if (!ctx.sasl) return { errorCode: ErrorCode.ILLEGAL_SASL_STATE, mechanisms: [] };
    return ctx.sasl.handshake(req.mechanism, ctx.apiVersion);
  });
