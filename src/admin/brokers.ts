/**
 * Requests sent to a chosen broker, for what @platformatic/kafka's Admin class does not do or
 * does not do for internal topics (its metadata cache leaves them out, so its listOffsets cannot
 * reach them): the cluster's metadata with internal topics, and a connection to one node.
 */
import { metadataV12, type Connection } from '@platformatic/kafka';
import type { KafkaConnection } from './connection';

export type MetadataResponse = Awaited<ReturnType<typeof metadataV12.api.async>>;

function bootstrapBrokers(c: KafkaConnection): { host: string; port: number }[] {
  return c.options.bootstrapServers.map((s) => {
    const colon = s.lastIndexOf(':');
    return { host: s.slice(0, colon).replace(/^\[|\]$/g, ''), port: Number(s.slice(colon + 1)) };
  });
}

/** A connection to the first bootstrap server that answers. */
export function anyBrokerConnection(c: KafkaConnection): Promise<Connection> {
  return c.admin().connections.getFirstAvailable(bootstrapBrokers(c));
}

/** The cluster's metadata, internal topics included: every topic when `topics` is null. */
export async function clusterMetadata(c: KafkaConnection, topics: string[] | null = null): Promise<MetadataResponse> {
  return metadataV12.api.async(await anyBrokerConnection(c), topics, false, false);
}

/** A connection to node `nodeId` as the metadata advertises it. */
export function brokerConnection(c: KafkaConnection, metadata: MetadataResponse, nodeId: number): Promise<Connection> {
  const broker = metadata.brokers.find((b) => b.nodeId === nodeId);
  if (!broker) throw new Error(`broker ${nodeId} is not in the cluster's metadata`);
  return c.admin().connections.get({ host: broker.host, port: broker.port });
}
