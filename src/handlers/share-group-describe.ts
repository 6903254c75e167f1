// ShareGroupDescribe (key 77), version 1: share groups (KIP-932) as the coordinator has them.
// - Per group: state (Empty, Stable), group epoch, target assignment epoch, the assignor
//   (`simple`), and each member's rack, client, epoch, subscribed topics and assignment (topic ids
//   with their names).
// - GROUP_ID_NOT_FOUND with Kafka's message for an unknown id ("Group X not found.") and for another
//   kind of group's ("Group X is not a share group."); NOT_COORDINATOR and
//   COORDINATOR_LOAD_IN_PROGRESS as the other group APIs.
// - Authorized operations when asked (what the authorizer allows of those a group supports), else Integer.MIN_VALUE.
// - UNSUPPORTED_VERSION for every group while share groups are off (share.version 0), as Kafka.
// - A group the principal may not DESCRIBE: GROUP_AUTHORIZATION_FAILED; a group whose members
//   subscribe to or are assigned a topic it may not DESCRIBE: TOPIC_AUTHORIZATION_FAILED, no members.
import { ErrorCode } from '../common/errors';
import { ApiKey } from '../protocol/generated';
import { authorizedOperations, NOT_REQUESTED } from './shared/authorized-operations';
import type { GroupCoordinator } from '../group';
import { AclOperation, ResourceType } from '../security/acl';
import { defineHandler } from './handler';
import { shareProtocolEnabled, type ShareProtocolServices } from './shared/share-requests';

export interface ShareGroupDescribeServices extends ShareProtocolServices {
  readonly groups: Pick<GroupCoordinator, 'shareGroupDescribe'>;
}

export const shareGroupDescribe = defineHandler(ApiKey.ShareGroupDescribe, { minVersion: 1, maxVersion: 1 },
  (s: ShareGroupDescribeServices) => (req, ctx) => ({
    throttleTimeMs: 0,
    groups: req.groupIds.map((groupId) => {
      const refused = (errorCode: number, errorMessage: string | null = null) => ({
        errorCode, errorMessage, groupId, groupState: '', groupEpoch: 0, assignmentEpoch: 0, assignorName: '', members: [],
        authorizedOperations: NOT_REQUESTED,
      });
      if (!shareProtocolEnabled(s)) return refused(ErrorCode.UNSUPPORTED_VERSION);
      if (!ctx.authorize(AclOperation.DESCRIBE, ResourceType.GROUP, groupId)) return refused(ErrorCode.GROUP_AUTHORIZATION_FAILED);
      const d = s.groups.shareGroupDescribe(groupId);
      const topics = new Set(d.members.flatMap((m) => [...m.subscribedTopicNames, ...m.assignment.map((t) => t.topicName)]));
      if ([...topics].some((t) => !ctx.authorize(AclOperation.DESCRIBE, ResourceType.TOPIC, t))) {
        return refused(ErrorCode.TOPIC_AUTHORIZATION_FAILED, 'The group has described topic(s) that the client is not authorized to describe.');
      }
      return {
        ...d,
        members: d.members.map((m) => ({ ...m, assignment: { topicPartitions: m.assignment } })),
        authorizedOperations: req.includeAuthorizedOperations && d.errorCode === 0
          ? authorizedOperations(ctx, ResourceType.GROUP, groupId) : NOT_REQUESTED,
      };
    }),
  }));
