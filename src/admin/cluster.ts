/**
 * The cluster as `fjord cluster describe` shows it: its id, controller and brokers (DescribeCluster)
 * and its features (KIP-584) with their finalized levels, which only ApiVersions v3+ carries, in
 * tagged fields that @platformatic/kafka's own ApiVersions parser skips: hence the parser here.
 */
import { Reader, Writer, createAPI, describeClusterV1 } from '@platformatic/kafka';
import { AdminError, toAdminError } from './errors';
import type { KafkaConnection } from './connection';
import { anyBrokerConnection } from './brokers';
import { packageVersion } from '../common/package-version';

export interface ClusterDescription {
  clusterId: string;
  controllerId: number;
  brokers: { nodeId: number; host: string; port: number; rack: string | null }[];
  /** Every feature the broker supports; finalizedLevel null when the cluster has not finalized it. */
  features: { name: string; minVersion: number; maxVersion: number; finalizedLevel: number | null }[];
}

const BROKERS_ENDPOINT = 1;

interface ApiVersionsFeatures {
  errorCode: number;
  supported: { name: string; minVersion: number; maxVersion: number }[];
  finalized: { name: string; maxVersionLevel: number; minVersionLevel: number }[];
}

/**
 * ApiVersions v4 (flexible; the format of v3), read down to its tagged fields. v4, not v3: below v4 a
 * broker leaves out the features whose minimum is 0 (KAFKA-17011), i.e. all but metadata.version.
 */
const apiVersionsV4 = createAPI<[clientSoftwareName: string, clientSoftwareVersion: string], ApiVersionsFeatures>(
  18,
  4,
  (name: string, version: string) => Writer.create().appendString(name).appendString(version).appendTaggedFields(),
  (_correlationId: number, _apiKey: number, _apiVersion: number, reader: Reader) => {
    const result: ApiVersionsFeatures = { errorCode: reader.readInt16(), supported: [], finalized: [] };
    reader.readArray((r) => [r.readInt16(), r.readInt16(), r.readInt16()]);
    reader.readInt32(); // throttle_time_ms
    const tags = reader.readUnsignedVarInt();
    for (let i = 0; i < tags; i++) {
      const tag = reader.readUnsignedVarInt();
      const size = reader.readUnsignedVarInt();
      if (tag === 0) result.supported = reader.readArray((r) => ({ name: r.readString(), minVersion: r.readInt16(), maxVersion: r.readInt16() }));
      else if (tag === 2) result.finalized = reader.readArray((r) => ({ name: r.readString(), maxVersionLevel: r.readInt16(), minVersionLevel: r.readInt16() }));
      else reader.skip(size);
    }
    return result;
  },
  true,
  false,
);

export async function describeCluster(c: KafkaConnection): Promise<ClusterDescription> {
  try {
    const connection = await anyBrokerConnection(c);
    const [cluster, versions] = await Promise.all([
      describeClusterV1.api.async(connection, false, BROKERS_ENDPOINT),
      apiVersionsV4.async(connection, 'fjord-cli', packageVersion()),
    ]);
    if (versions.errorCode !== 0) throw new AdminError(`ApiVersions failed with error code ${versions.errorCode}`);
    const finalized = new Map(versions.finalized.map((f) => [f.name, f.maxVersionLevel]));
    return {
      clusterId: cluster.clusterId,
      controllerId: cluster.controllerId,
      brokers: cluster.brokers.map((b) => ({ nodeId: b.brokerId, host: b.host, port: b.port, rack: b.rack ?? null })).sort((a, b) => a.nodeId - b.nodeId),
      features: versions.supported
        .map((f) => ({ name: f.name, minVersion: f.minVersion, maxVersion: f.maxVersion, finalizedLevel: finalized.get(f.name) ?? null }))
        .sort((a, b) => a.name.localeCompare(b.name)),
    };
  } catch (e) {
    throw toAdminError(e);
  }
}
