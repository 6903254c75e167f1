// DescribeCluster (key 60), versions 0-1.
// - The brokers (this one), the cluster id and the controller id (also this broker).
// - EndpointType (v1+): 1 = brokers, 2 = controllers; Fjord's broker is its own controller,
//   so both answer with this node. Any other value is INVALID_REQUEST.
import { ApiKey } from '../protocol/generated';
import type { DescribeClusterRequest } from '../protocol/generated/DescribeClusterRequest';
import type { DescribeClusterResponse } from '../protocol/generated/DescribeClusterResponse';
import { ErrorCode } from '../common/errors';
import { CLUSTER_OPERATIONS, NOT_REQUESTED } from '../cluster/acl-operations';
import type { HandlerFactory } from './handler';

export const describeCluster: HandlerFactory = (broker) => ({
  apiKey: ApiKey.DescribeCluster,
  name: 'DescribeCluster',
  minVersion: 0,
  maxVersion: 1,
  handle(req: DescribeClusterRequest): DescribeClusterResponse {
    const endpointType = req.endpointType ?? 1;
    const base = { throttleTimeMs: 0, endpointType, clusterId: broker.clusterId, controllerId: broker.controller.controllerId };
    if (endpointType !== 1 && endpointType !== 2) {
      return { ...base, errorCode: ErrorCode.INVALID_REQUEST, errorMessage: `Unsupported endpoint type ${endpointType}`, brokers: [] };
    }
    return {
      ...base,
      errorCode: ErrorCode.NONE,
      errorMessage: null,
      brokers: broker.controller.brokers().map((b) => ({ brokerId: b.nodeId, host: b.host, port: b.port, rack: b.rack })),
      clusterAuthorizedOperations: req.includeClusterAuthorizedOperations ? CLUSTER_OPERATIONS : NOT_REQUESTED,
    };
  },
});
