// DescribeGroups (key 15), versions 0-6.
// - Per group: state, protocol type, and once Stable the protocol name and each member's metadata
//   and assignment bytes (before that, members are listed without them, as Kafka does).
// - An unknown group is answered as state "Dead": with no error before v6, with GROUP_ID_NOT_FOUND
//   and "Group <id> not found." from v6 (KIP-1043), as Kafka's group coordinator does (a long id
//   quoted in part, so that the message fits a protocol string). So is a consumer, streams or
//   share group's id (not a classic group), from v6 with "Group <id> is not a classic group.". Other errors
//   carry the coordinator's message when it has one, else none (Kafka 4.4 sends none with NOT_COORDINATOR).
// - v3+: authorized operations when asked (what the authorizer allows of those a group supports), else
//   Integer.MIN_VALUE. v4+: each member's group.instance.id.
// - A group the principal may not DESCRIBE: GROUP_AUTHORIZATION_FAILED, nothing of it described.
import { ApiKey } from '../protocol/generated';
import { authorizedOperations, NOT_REQUESTED } from './shared/authorized-operations';
import { ErrorCode, errorMessage, quoteInMessage } from '../common/errors';
import type { GroupCoordinator } from '../group';
import { GroupState } from '../group/group';
import { AclOperation, ResourceType } from '../security/acl';
import { defineHandler } from './handler';

export interface DescribeGroupsServices {
  readonly groups: Pick<GroupCoordinator, 'describeGroup'>;
}

export const describeGroups = defineHandler(ApiKey.DescribeGroups, { minVersion: 0, maxVersion: 6 }, (s: DescribeGroupsServices) => (req, ctx) => {
  const withOps = ctx.apiVersion >= 3 && req.includeAuthorizedOperations;
  return {
    throttleTimeMs: 0,
    groups: req.groups.map((groupId) => {
      const v6 = ctx.apiVersion >= 6;
      if (!ctx.authorize(AclOperation.DESCRIBE, ResourceType.GROUP, groupId)) {
        return {
          errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED, errorMessage: v6 ? errorMessage(ErrorCode.GROUP_AUTHORIZATION_FAILED) : null,
          groupId, groupState: '', protocolType: '', protocolData: '', members: [], authorizedOperations: NOT_REQUESTED,
        };
      }
      const d = s.groups.describeGroup(groupId);
      const notFound = v6 && d.errorCode === ErrorCode.NONE && d.state === GroupState.Dead;
      const notClassicBeforeV6 = !v6 && d.errorCode === ErrorCode.GROUP_ID_NOT_FOUND;
      return {
        errorCode: notFound ? ErrorCode.GROUP_ID_NOT_FOUND : notClassicBeforeV6 ? ErrorCode.NONE : d.errorCode,
        errorMessage: notFound ? `Group ${quoteInMessage(groupId)} not found.` : v6 ? d.errorMessage ?? null : null,
        groupId,
        groupState: d.state,
        protocolType: d.protocolType,
        protocolData: d.protocolData,
        members: d.members.map((m) => ({
          memberId: m.memberId, groupInstanceId: m.groupInstanceId, clientId: m.clientId, clientHost: m.clientHost,
          memberMetadata: m.metadata, memberAssignment: m.assignment,
        })),
        authorizedOperations: withOps ? authorizedOperations(ctx, ResourceType.GROUP, groupId) : NOT_REQUESTED,
      };
    }),
  };
});
