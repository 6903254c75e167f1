// ConsumerGroupDescribe (key 69), versions 0-1: consumer groups (KIP-848) as the coordinator has them.
// - Per group: state (Empty, Assigning, Reconciling, Stable), group epoch, target assignment
//   epoch, the assignor in use, and each member's subscription, epoch, assignment and target
//   assignment (topics named; a deleted topic's partitions are left out).
// - GROUP_ID_NOT_FOUND with Kafka's message for an unknown id ("Group X not found.") and for a
//   classic group's ("Group X is not a consumer group."); NOT_COORDINATOR and
//   COORDINATOR_LOAD_IN_PROGRESS as the other group APIs.
// - v1: each member's type (0: it joined with JoinGroup, the classic protocol; 1: with ConsumerGroupHeartbeat).
// - Authorized operations when asked (what the authorizer allows of those a group supports), else Integer.MIN_VALUE.
// - UNSUPPORTED_VERSION for every group while the consumer protocol is off (group.version 0, or
//   no `consumer` in group.coordinator.rebalance.protocols), as Kafka.
// - A group the principal may not DESCRIBE: GROUP_AUTHORIZATION_FAILED; a group whose members'
//   (target) assignments hold a topic it may not DESCRIBE: TOPIC_AUTHORIZATION_FAILED, no members.
import { ErrorCode } from '../common/errors';
import { ApiKey } from '../protocol/generated';
import { authorizedOperations, NOT_REQUESTED } from './shared/authorized-operations';
import type { GroupCoordinator } from '../group';
import { consumerProtocolEnabled, type ConsumerProtocolServices } from './consumer-group-heartbeat';
import { AclOperation, ResourceType } from '../security/acl';
import { defineHandler } from './handler';

export interface ConsumerGroupDescribeServices extends ConsumerProtocolServices {
  readonly groups: Pick<GroupCoordinator, 'consumerGroupDescribe'>;
}

export const consumerGroupDescribe = defineHandler(ApiKey.ConsumerGroupDescribe, { minVersion: 0, maxVersion: 1 },
  (s: ConsumerGroupDescribeServices) => (req, ctx) => ({
    throttleTimeMs: 0,
    groups: req.groupIds.map((groupId) => {
      if (!consumerProtocolEnabled(s)) {
        return {
          errorCode: ErrorCode.UNSUPPORTED_VERSION, errorMessage: null, groupId, groupState: '', groupEpoch: 0, assignmentEpoch: 0,
          assignorName: '', members: [], authorizedOperations: NOT_REQUESTED,
        };
      }
      const refused = {
        errorMessage: null, groupId, groupState: '', groupEpoch: 0, assignmentEpoch: 0, assignorName: '', members: [], authorizedOperations: NOT_REQUESTED,
      };
      if (!ctx.authorize(AclOperation.DESCRIBE, ResourceType.GROUP, groupId)) return { ...refused, errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED };
      const d = s.groups.consumerGroupDescribe(groupId);
      const topics = new Set(d.members.flatMap((m) => [...m.assignment, ...m.targetAssignment].map((p) => p.topicName)));
      if ([...topics].some((t) => !ctx.authorize(AclOperation.DESCRIBE, ResourceType.TOPIC, t))) {
        return {
          ...refused, errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
          errorMessage: 'The group has described topic(s) that the client is not authorized to describe.',
        };
      }
      return {
        ...d,
        members: d.members.map((m) => ({
          ...m, assignment: { topicPartitions: m.assignment }, targetAssignment: { topicPartitions: m.targetAssignment },
        })),
        authorizedOperations: req.includeAuthorizedOperations && d.errorCode === 0
          ? authorizedOperations(ctx, ResourceType.GROUP, groupId) : NOT_REQUESTED,
      };
    }),
  }));
