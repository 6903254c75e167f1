// ApiVersions (key 18), versions 0-4.
// - Lists exactly the APIs this broker has handlers for, with the versions each serves.
// - An ApiVersions version we do not know is answered in the v0 format with UNSUPPORTED_VERSION
//   and our ranges (KIP-511), so the client can retry with a version we serve.
// - The response header is always v0, even for flexible versions (the client cannot yet know
//   which header we speak); the generated responseHeaderVersion encodes that rule.
import { ApiKey } from '../protocol/generated';
import type { ApiVersionsRequest } from '../protocol/generated/ApiVersionsRequest';
import type { ApiVersionsResponse } from '../protocol/generated/ApiVersionsResponse';
import { ErrorCode } from '../common/errors';
import type { Writer } from '../protocol/primitives';
import type { HandlerFactory, Router } from '../net/router';

export const apiVersions: HandlerFactory = (broker) => ({
  apiKey: ApiKey.ApiVersions,
  name: 'ApiVersions',
  minVersion: 0,
  maxVersion: 4,
  handle(_request: ApiVersionsRequest): ApiVersionsResponse {
    return { errorCode: ErrorCode.NONE, apiKeys: servedVersions(broker.router), throttleTimeMs: 0 };
  },
});

function servedVersions(router: Router) {
  return router.served().map((h) => ({ apiKey: h.apiKey, minVersion: h.minVersion, maxVersion: h.maxVersion }));
}

/** The KIP-511 answer to an unknown ApiVersions version: a v0 body any client can read. */
export function apiVersionsUnsupported(router: Router): (w: Writer) => void {
  return (w) => {
    const served = servedVersions(router);
    w.int16(ErrorCode.UNSUPPORTED_VERSION);
    w.int32(served.length);
    for (const v of served) {
      w.int16(v.apiKey);
      w.int16(v.minVersion);
      w.int16(v.maxVersion);
    }
  };
}
