// ShareGroupHeartbeat (key 76), version 1: share group membership (KIP-932, Kafka's share consumer),
// served by the group coordinator's share groups (src/group/share-membership.ts).
// - Epoch 0 joins with the client's own member id (Kafka 4.x: the client makes it) and
//   SubscribedTopicNames; -1 leaves; any other epoch heartbeats, SubscribedTopicNames null when unchanged.
// - The answer: the member epoch, the heartbeat interval (the group's share.heartbeat.interval.ms,
//   else group.share.heartbeat.interval.ms), and the assignment (topic ids and partitions; several
//   members may have one partition) when joining, when the subscription was sent or when it changed,
//   else null. Partitions are assigned once their share state is initialized, so a join's first
//   answer may have none: a later heartbeat gets them.
// - Errors with Kafka's messages: INVALID_REQUEST (a member id empty or longer than 36 characters,
//   Kafka's "Invalid member id in the request."; the coordinator's checks), GROUP_ID_NOT_FOUND (an
//   unknown group on a heartbeat, or the id of another kind of group), UNKNOWN_MEMBER_ID,
//   FENCED_MEMBER_EPOCH, GROUP_MAX_SIZE_REACHED (group.share.max.size).
// - UNSUPPORTED_VERSION while share groups are off: the finalized share.version is 0 (Kafka's
//   isShareGroupProtocolEnabled).
// - Authorization (Kafka's handleShareGroupHeartbeatRequest): READ on the group, else
//   GROUP_AUTHORIZATION_FAILED; subscribed topic names the principal may not all DESCRIBE:
//   TOPIC_AUTHORIZATION_FAILED, the heartbeat not taken.
import { ErrorCode } from '../common/errors';
import { ApiKey } from '../protocol/generated';
import type { GroupCoordinator } from '../group';
import { AclOperation, ResourceType } from '../security/acl';
import { clientHost, defineHandler } from './handler';
import { isMemberIdValid, shareProtocolEnabled, type ShareProtocolServices } from './shared/share-requests';

export interface ShareGroupHeartbeatServices extends ShareProtocolServices {
  readonly groups: Pick<GroupCoordinator, 'shareGroupHeartbeat'>;
}

export const shareGroupHeartbeat = defineHandler(ApiKey.ShareGroupHeartbeat, { minVersion: 1, maxVersion: 1 },
  (s: ShareGroupHeartbeatServices) => (req, ctx) => {
    const refusal = (errorCode: number, errorMessage: string | null = null) => ({
      throttleTimeMs: 0, errorCode, errorMessage, memberId: null, memberEpoch: 0, heartbeatIntervalMs: 0, assignment: null,
    });
    if (!shareProtocolEnabled(s)) return refusal(ErrorCode.UNSUPPORTED_VERSION);
    if (!ctx.authorize(AclOperation.READ, ResourceType.GROUP, req.groupId)) return refusal(ErrorCode.GROUP_AUTHORIZATION_FAILED);
    if (!isMemberIdValid(req.memberId)) return refusal(ErrorCode.INVALID_REQUEST, 'Invalid member id in the request.');
    if (req.subscribedTopicNames?.some((t) => !ctx.authorize(AclOperation.DESCRIBE, ResourceType.TOPIC, t))) {
      return refusal(ErrorCode.TOPIC_AUTHORIZATION_FAILED);
    }
    const r = s.groups.shareGroupHeartbeat({
      groupId: req.groupId,
      memberId: req.memberId,
      memberEpoch: req.memberEpoch,
      rackId: req.rackId ?? null,
      subscribedTopicNames: req.subscribedTopicNames ?? null,
      clientId: ctx.clientId ?? '',
      clientHost: clientHost(ctx),
    });
    return {
      throttleTimeMs: 0,
      errorCode: r.errorCode,
      errorMessage: r.errorMessage,
      memberId: r.memberId,
      memberEpoch: r.memberEpoch,
      heartbeatIntervalMs: r.heartbeatIntervalMs,
      assignment: r.assignment === null ? null : { topicPartitions: r.assignment },
    };
  });
