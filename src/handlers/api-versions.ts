// ApiVersions (key 18), versions 0-4.
// - Lists exactly the APIs this broker has handlers for, with the versions each serves.
// - An ApiVersions version we do not know is answered in the v0 format with UNSUPPORTED_VERSION
//   and our ranges (KIP-511), so the client can retry with a version we serve; the connection
//   sends that answer (apiVersionsUnsupported) without decoding the request it cannot read.
// - The response header is always v0, even for flexible versions (the client cannot yet know
//   which header we speak); the generated responseHeaderVersion encodes that rule.
import { ApiKey } from '../protocol/generated';
import type { ApiVersionsResponse } from '../protocol/generated/ApiVersionsResponse';
import { ErrorCode } from '../common/errors';
import { defineHandler, type VersionRange } from './handler';

export interface ServedApi extends VersionRange {
  readonly apiKey: number;
}

export interface ApiVersionsServices {
  /** Every API the broker serves, ordered by key. */
  readonly servedApis: readonly ServedApi[];
}

export const apiVersions = defineHandler(ApiKey.ApiVersions, { minVersion: 0, maxVersion: 4 },
  (s: ApiVersionsServices) => () => ({ errorCode: ErrorCode.NONE, apiKeys: ranges(s.servedApis), throttleTimeMs: 0 }));

/** The KIP-511 answer to an unknown ApiVersions version, to be sent as v0: a body any client can read. */
export function apiVersionsUnsupported(servedApis: readonly ServedApi[]): ApiVersionsResponse {
  return { errorCode: ErrorCode.UNSUPPORTED_VERSION, apiKeys: ranges(servedApis), throttleTimeMs: 0 };
}

function ranges(servedApis: readonly ServedApi[]) {
  return servedApis.map(({ apiKey, minVersion, maxVersion }) => ({ apiKey, minVersion, maxVersion }));
}
