// ApiVersions (key 18), versions 0-5.
// - Lists exactly the APIs this broker has handlers for, with the versions each serves.
// - v3+: the features (KIP-584) as Kafka 4.4 reports them: those this broker supports, the
//   cluster's finalized levels (features at level 0 are not listed) and their epoch;
//   ZkMigrationReady false. Below v4 a supported feature whose minimum is 0 is left out, as Kafka
//   does (KAFKA-17011: older clients cannot read a minimum of 0).
// - v5 (KIP-1242): a client may name the cluster and node it means to reach. Naming only one of
//   them is INVALID_REQUEST; naming another cluster or node is REBOOTSTRAP_REQUIRED (the client
//   reached the wrong broker: it must bootstrap again). Both answers are empty, as Kafka's.
// - An ApiVersions version we do not know is answered in the v0 format with UNSUPPORTED_VERSION
//   and our ranges (KIP-511), so the client can retry with a version we serve; the connection
//   sends that answer (apiVersionsUnsupported) without decoding the request it cannot read.
// - The response header is always v0, even for flexible versions (the client cannot yet know
//   which header we speak); the generated responseHeaderVersion encodes that rule.
import { ApiKey } from '../protocol/generated';
import type { ApiVersionsResponse } from '../protocol/generated/ApiVersionsResponse';
import { ErrorCode } from '../common/errors';
import type { Features } from '../cluster/features';
import { defineHandler, type VersionRange } from './handler';

export interface ServedApi extends VersionRange {
  readonly apiKey: number;
}

export interface ApiVersionsServices {
  /** Every API the broker serves, ordered by key. */
  readonly servedApis: readonly ServedApi[];
  readonly features: Pick<Features, 'supported' | 'finalized'>;
  readonly clusterId: string;
  readonly nodeId: number;
}

export const apiVersions = defineHandler(ApiKey.ApiVersions, { minVersion: 0, maxVersion: 5 },
  (s: ApiVersionsServices) => (req, ctx): ApiVersionsResponse => {
    if (ctx.apiVersion < 3) return { errorCode: ErrorCode.NONE, apiKeys: ranges(s.servedApis), throttleTimeMs: 0 };
    const clusterId = req.clusterId ?? null;
    const nodeId = req.nodeId ?? -1;
    if ((clusterId === null) !== (nodeId === -1)) return { errorCode: ErrorCode.INVALID_REQUEST, apiKeys: [], throttleTimeMs: 0 };
    if (clusterId !== null && (clusterId !== s.clusterId || nodeId !== s.nodeId)) {
      return { errorCode: ErrorCode.REBOOTSTRAP_REQUIRED, apiKeys: [], throttleTimeMs: 0 };
    }
    const { levels, epoch } = s.features.finalized();
    return {
      errorCode: ErrorCode.NONE,
      apiKeys: ranges(s.servedApis),
      throttleTimeMs: 0,
      supportedFeatures: s.features.supported().filter((f) => ctx.apiVersion >= 4 || f.minVersion > 0)
        .map(({ name, minVersion, maxVersion }) => ({ name, minVersion, maxVersion })),
      finalizedFeaturesEpoch: BigInt(epoch),
      finalizedFeatures: Object.entries(levels).filter(([, level]) => level > 0)
        .map(([name, level]) => ({ name, maxVersionLevel: level, minVersionLevel: level })),
      zkMigrationReady: false,
    };
  });

/** The KIP-511 answer to an unknown ApiVersions version, to be sent as v0: a body any client can read. */
export function apiVersionsUnsupported(servedApis: readonly ServedApi[]): ApiVersionsResponse {
  return { errorCode: ErrorCode.UNSUPPORTED_VERSION, apiKeys: ranges(servedApis), throttleTimeMs: 0 };
}

function ranges(servedApis: readonly ServedApi[]) {
  return servedApis.map(({ apiKey, minVersion, maxVersion }) => ({ apiKey, minVersion, maxVersion }));
}
