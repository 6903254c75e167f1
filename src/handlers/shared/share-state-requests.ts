// What the share coordinator's five APIs (InitializeShareGroupState, ReadShareGroupState,
// WriteShareGroupState, DeleteShareGroupState, ReadShareGroupStateSummary) answer alike, as Kafka's
// KafkaApis and ShareCoordinatorService do:
// - Only brokers send them: without CLUSTER_ACTION on the cluster every partition is
//   CLUSTER_AUTHORIZATION_FAILED (toGlobalErrorResponse).
// - A request without a group id, without topics, or with a topic without partitions has nothing to
//   answer: no results (Kafka logs it and answers an empty response).
// - Each partition is one key of the coordinator, answered on its own; results follow the request's order.
import { ErrorCode, errorMessage } from '../../common/errors';
import type { SharePartitionKey } from '../../share-state/persister';
import { AclOperation } from '../../security/acl';
import type { RequestContext } from '../handler';
import { authorizeCluster } from './authorization';

interface ShareStateRequest<P extends { partition: number }> {
  groupId: string;
  topics: { topicId: string; partitions: P[] }[];
}

/**
 * The results per topic: `answer` for each partition, or `refused` (with its error) for all when
 * the sender may not ask; null when the request has nothing to answer.
 */
export async function answerSharePartitions<P extends { partition: number }, R>(
  req: ShareStateRequest<P>, ctx: Pick<RequestContext, 'authorize'>,
  answer: (key: SharePartitionKey, p: P) => Promise<R>,
  refused: (partition: number, errorCode: number, errorMessage: string) => R,
): Promise<{ topicId: string; partitions: R[] }[]> {
  if (!authorizeCluster(ctx, AclOperation.CLUSTER_ACTION)) {
    const code = ErrorCode.CLUSTER_AUTHORIZATION_FAILED;
    return req.topics.map((t) => ({ topicId: t.topicId, partitions: t.partitions.map((p) => refused(p.partition, code, errorMessage(code))) }));
  }
  if (req.groupId === '' || req.topics.length === 0 || req.topics.some((t) => t.partitions.length === 0)) return [];
  return Promise.all(req.topics.map(async (t) => ({
    topicId: t.topicId,
    partitions: await Promise.all(t.partitions.map((p) => answer({ groupId: req.groupId, topicId: t.topicId, partition: p.partition }, p))),
  })));
}
