// ShareAcknowledge (key 79), versions 1-2 (KIP-932): a share consumer acknowledges records without
// fetching, as Kafka's KafkaApis.handleShareAcknowledgeRequest.
// - Request-level errors: UNSUPPORTED_VERSION while share.version is 0; a null group id or a member id that is empty or over 36 characters
//   INVALID_REQUEST; no READ on the group GROUP_AUTHORIZATION_FAILED; the share session's:
//   epoch 0 INVALID_SHARE_SESSION_EPOCH (only ShareFetch opens sessions), no session
//   SHARE_SESSION_NOT_FOUND, not its next epoch INVALID_SHARE_SESSION_EPOCH.
// - Per partition: an unknown topic id UNKNOWN_TOPIC_ID, no READ on the topic
//   TOPIC_AUTHORIZATION_FAILED, malformed batches INVALID_REQUEST (RENEW only from v2 and with
//   IsRenewAck), no share-partition of the group here UNKNOWN_TOPIC_OR_PARTITION, else the
//   share-partition's answer (INVALID_RECORD_STATE for records the member does not hold...).
//   CurrentLeader from the metadata, NodeEndpoints for NOT_LEADER_OR_FOLLOWER / FENCED_LEADER_EPOCH.
// - Epoch -1: the acknowledgements apply, then the session ends and the member's other records are released.
// - v2 answers AcquisitionLockTimeoutMs (the group's share.record.lock.duration.ms).
import { ApiKey } from '../protocol/generated';
import type { ShareAcknowledgeResponse } from '../protocol/generated/ShareAcknowledgeResponse';
import { ErrorCode } from '../common/errors';
import type { Controller } from '../cluster/controller';
import type { SharePartitionManager } from '../share/share-partition-manager';
import { FINAL_SHARE_SESSION_EPOCH } from '../share/share-sessions';
import { defineHandler } from './handler';
import { acknowledgePartition, checkShareRequest, currentLeaders, shareRequestRefusal, type ShareProtocolServices, topicReadability } from './shared/share-requests';

export interface ShareAcknowledgeServices extends ShareProtocolServices {
  readonly controller: Pick<Controller, 'topicById' | 'topic' | 'brokers'>;
  readonly sharePartitions: Pick<SharePartitionManager, 'sessions' | 'acknowledge' | 'endSession' | 'settings'>;
}

export const shareAcknowledge = defineHandler(ApiKey.ShareAcknowledge, { minVersion: 1, maxVersion: 2 },
  (s: ShareAcknowledgeServices) => async (req, ctx): Promise<ShareAcknowledgeResponse> => {
    const checked = checkShareRequest(s, ctx, req.groupId ?? null, req.memberId);
    if ('errorCode' in checked) return shareRequestRefusal(checked.errorCode, checked.errorMessage);
    const { groupId, memberId } = checked;
    const context = s.sharePartitions.sessions.acknowledgeContext(groupId, memberId, req.shareSessionEpoch);
    if ('errorCode' in context) return shareRequestRefusal(context.errorCode);

    const isRenewAck = ctx.apiVersion >= 2 && (req.isRenewAck ?? false);
    const readable = topicReadability(ctx);
    const partitions = await Promise.all(req.topics.flatMap((t) => {
      const topicName = s.controller.topicById(t.topicId)?.name ?? '';
      const refusal = topicName === '' ? ErrorCode.UNKNOWN_TOPIC_ID : readable(topicName) ? ErrorCode.NONE : ErrorCode.TOPIC_AUTHORIZATION_FAILED;
      return t.partitions.map(async (p) => {
        const partition = { topicId: t.topicId, topicName, partition: p.partitionIndex };
        const errorCode = await acknowledgePartition(s.sharePartitions, ctx.apiVersion, isRenewAck, groupId, memberId, partition, p.acknowledgementBatches, refusal);
        return { ...partition, errorCode };
      });
    }));
    if (req.shareSessionEpoch === FINAL_SHARE_SESSION_EPOCH) await s.sharePartitions.endSession(groupId, memberId);

    const { leaderOf, nodeEndpoints } = currentLeaders(s.controller, ctx.session.listenerName, partitions);
    const responses: ShareAcknowledgeResponse['responses'] = [];
    for (const p of partitions) {
      let topic = responses[responses.length - 1];
      if (topic?.topicId !== p.topicId) responses.push(topic = { topicId: p.topicId, partitions: [] });
      topic.partitions.push({ partitionIndex: p.partition, errorCode: p.errorCode, errorMessage: null, currentLeader: leaderOf(p.topicName, p.partition) });
    }
    return {
      throttleTimeMs: 0, errorCode: ErrorCode.NONE, errorMessage: null,
      acquisitionLockTimeoutMs: s.sharePartitions.settings(groupId).recordLockDurationMs, responses, nodeEndpoints,
    };
  });
