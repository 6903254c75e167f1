// DescribeCluster (key 60), versions 0-2.
// - The brokers, the cluster id and the controller id. Each broker with its endpoint of the listener
//   the request came in on; brokers without that listener are left out (Kafka's getAliveBrokerNodes).
// - EndpointType (v1+): 1 = brokers, 2 = controllers; Fjord's broker is its own controller,
//   so both answer with this node. Any other value is INVALID_REQUEST.
// - IncludeFencedBrokers / IsFenced (v2, KIP-1073): Kafka adds registered brokers its controller
//   has fenced. Fjord has no such state (a cluster member whose etcd session ends leaves the
//   registry, a single broker is always in), so every broker listed is unfenced and none is added.
import { ApiKey } from '../protocol/generated';
import { ErrorCode } from '../common/errors';
import { clusterAuthorizedOperations, NOT_REQUESTED } from './shared/authorized-operations';
import type { Controller } from '../cluster/controller';
import { defineHandler } from './handler';

export interface DescribeClusterServices {
  readonly clusterId: string;
  readonly controller: Pick<Controller, 'controllerId' | 'brokers'>;
}

export const describeCluster = defineHandler(ApiKey.DescribeCluster, { minVersion: 0, maxVersion: 2 }, (s: DescribeClusterServices) => (req, ctx) => {
  const endpointType = req.endpointType ?? 1;
  const base = { throttleTimeMs: 0, endpointType, clusterId: s.clusterId, controllerId: s.controller.controllerId };
  if (endpointType !== 1 && endpointType !== 2) {
    return { ...base, errorCode: ErrorCode.INVALID_REQUEST, errorMessage: `Unsupported endpoint type ${endpointType}`, brokers: [] };
  }
  return {
    ...base,
    errorCode: ErrorCode.NONE,
    errorMessage: null,
    brokers: s.controller.brokers(ctx.session.listenerName).map((b) => ({ brokerId: b.nodeId, host: b.host, port: b.port, rack: b.rack, isFenced: false })),
    clusterAuthorizedOperations: req.includeClusterAuthorizedOperations ? clusterAuthorizedOperations(ctx) : NOT_REQUESTED,
  };
});
