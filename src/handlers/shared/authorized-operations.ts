// Authorized-operations bit fields (Metadata, DescribeCluster, DescribeGroups, ...): bit n set for
// each operation of Kafka's code n that applies to the resource's type (AclEntry.supportedOperations)
// and that the request's principal may perform on it, as Kafka's AuthHelper.authorizedOperations.
// The checks are logged at trace only: they grant nothing by themselves.
import { SUPPORTED_OPERATIONS } from '../../security/acl-binding';
import { AclOperation, CLUSTER_RESOURCE_NAME, ResourceType } from '../../security/acl';
import type { RequestContext } from '../handler';

/** Kafka's "not requested" sentinel: Integer.MIN_VALUE. */
export const NOT_REQUESTED = -2147483648;

const QUIET = { logIfAllowed: false, logIfDenied: false } as const;

export function authorizedOperations(ctx: Pick<RequestContext, 'authorize'>, resourceType: ResourceType, resourceName: string): number {
  let bits = 0;
  for (const op of SUPPORTED_OPERATIONS[resourceType] ?? []) {
    if (ctx.authorize(op, resourceType, resourceName, QUIET)) bits |= 1 << op;
  }
  return bits;
}

/** The cluster's, as Metadata and DescribeCluster answer them: 0 unless DESCRIBE on it is allowed (Kafka's KafkaApis). */
export function clusterAuthorizedOperations(ctx: Pick<RequestContext, 'authorize'>): number {
  if (!ctx.authorize(AclOperation.DESCRIBE, ResourceType.CLUSTER, CLUSTER_RESOURCE_NAME, { logIfDenied: false })) return 0;
  return authorizedOperations(ctx, ResourceType.CLUSTER, CLUSTER_RESOURCE_NAME);
}
