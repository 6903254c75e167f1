// What several handlers ask alike: an operation on the one CLUSTER resource, as Kafka's
// AuthHelper.authorize(request.context, op, CLUSTER, CLUSTER_NAME).
import { errorMessage, ErrorCode } from '../../common/errors';
import { CLUSTER_RESOURCE_NAME, ResourceType, type AclOperation } from '../../security/acl';
import type { RequestContext } from '../handler';

export function authorizeCluster(ctx: Pick<RequestContext, 'authorize'>, operation: AclOperation): boolean {
  return ctx.authorize(operation, ResourceType.CLUSTER, CLUSTER_RESOURCE_NAME);
}

/** Kafka's text of a refused cluster operation (ClusterAuthorizationException's default message). */
export const CLUSTER_AUTHORIZATION_MESSAGE = errorMessage(ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
