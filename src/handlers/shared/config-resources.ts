// Shared by DescribeConfigs, AlterConfigs and IncrementalAlterConfigs: Kafka's resource types
// and how a config resource name is checked against this broker.
import { ErrorCode, errorMessage, quoteInMessage } from '../../common/errors';
import type { Outcome } from '../../cluster/controller';
import { AclOperation, CLUSTER_RESOURCE_NAME, ResourceType as AclResourceType } from '../../security/acl';
import type { RequestContext } from '../handler';

export const enum ResourceType {
  TOPIC = 2,
  BROKER = 4,
  BROKER_LOGGER = 8,
  CLIENT_METRICS = 16,
  GROUP = 32,
}

/**
 * The refusal of a config resource the principal may not describe or alter (DESCRIBE_CONFIGS or
 * ALTER_CONFIGS): on the topic, the group, or the cluster for broker, logger and client-metrics
 * resources, as Kafka's ConfigHelper and KafkaApis ask; null when allowed, or for a type that has
 * no check (answered as unsupported). Kafka's describe answer carries the error's default message,
 * its alter answers none.
 */
export function configResourceRefusal(
  ctx: Pick<RequestContext, 'authorize'>, operation: AclOperation.DESCRIBE_CONFIGS | AclOperation.ALTER_CONFIGS,
  type: number, name: string,
): Outcome | null {
  let errorCode: number;
  switch (type) {
    case ResourceType.TOPIC:
      if (ctx.authorize(operation, AclResourceType.TOPIC, name)) return null;
      errorCode = ErrorCode.TOPIC_AUTHORIZATION_FAILED;
      break;
    case ResourceType.GROUP:
      if (ctx.authorize(operation, AclResourceType.GROUP, name)) return null;
      errorCode = ErrorCode.GROUP_AUTHORIZATION_FAILED;
      break;
    case ResourceType.BROKER: case ResourceType.BROKER_LOGGER: case ResourceType.CLIENT_METRICS:
      if (ctx.authorize(operation, AclResourceType.CLUSTER, CLUSTER_RESOURCE_NAME)) return null;
      errorCode = ErrorCode.CLUSTER_AUTHORIZATION_FAILED;
      break;
    default:
      return null;
  }
  return { errorCode, errorMessage: operation === AclOperation.DESCRIBE_CONFIGS ? errorMessage(errorCode) : null };
}

/** A BROKER resource must name this node, or "" for cluster-wide defaults; a BROKER_LOGGER one, this node. */
export function checkBrokerResource(name: string, nodeId: number, allowEmpty: boolean): Outcome | null {
  if (allowEmpty && name === '') return null;
  if (name === String(nodeId)) return null;
  if (name === '') return { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'Broker id must not be empty' };
  return {
    errorCode: ErrorCode.INVALID_REQUEST,
    errorMessage: allowEmpty
      ? `Unexpected broker id, expected ${nodeId} or empty string, but received ${quoteInMessage(name)}`
      : `Unexpected broker id, expected ${nodeId} but received ${quoteInMessage(name)}`,
  };
}

/** A GROUP resource must name a group: Kafka has no cluster-wide group config resource. */
export function checkGroupResource(name: string): Outcome | null {
  return name === '' ? { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'Default group resources are not allowed.' } : null;
}

/** Kafka's (odd) text for a null value where one is needed, outside topic configs. */
export function nullValueRefused(name: string): Outcome {
  return { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: `Null value not supported for : ${name}` };
}

export function unsupportedResource(type: number): Outcome {
  return { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: `Unsupported resource type ${type}` };
}

/**
 * A BROKER resource to alter must be "" (the cluster-wide default) or this node's id, as Kafka's
 * ConfigAdminManager checks it (admin clients send a broker's configs to that broker).
 */
export function checkBrokerAlterResource(name: string, nodeId: number): Outcome | null {
  if (name === '') return null;
  if (!/^[+-]?\d+$/.test(name) || Math.abs(Number(name)) > 2147483647) {
    return { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: `Node id must be an integer, but it is: ${quoteInMessage(name)}` };
  }
  if (Number(name) !== nodeId) {
    return { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: `Unexpected broker id, expected ${nodeId}, but received ${quoteInMessage(name)}` };
  }
  return null;
}

/** Alters resources one after another; each answer names its resource, as both Alter APIs reply. */
export async function alterEach<R extends { resourceType: number; resourceName: string }>(
  resources: R[], alter: (r: R) => Outcome | Promise<Outcome>,
): Promise<(Outcome & { resourceType: number; resourceName: string })[]> {
  const out = [];
  for (const r of resources) out.push({ ...(await alter(r)), resourceType: r.resourceType, resourceName: r.resourceName });
  return out;
}
