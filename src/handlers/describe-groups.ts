// DescribeGroups (key 15), versions 0-6.
// - Per group: state, protocol type, and once Stable the protocol name and each member's metadata
//   and assignment bytes (before that, members are listed without them, as Kafka does).
// - An unknown group, or a consumer group's id (KIP-848: not a classic group), is answered as state
//   "Dead": v6+ with GROUP_ID_NOT_FOUND and Kafka's message ("Group X not found.", "Group X is not
//   a classic group."), before v6 with no error.
// - v3+: authorized operations when asked (no ACLs: everything a group supports), else
//   Integer.MIN_VALUE. v4+: each member's group.instance.id.
import { ErrorCode } from '../common/errors';
import { ApiKey } from '../protocol/generated';
import { GROUP_OPERATIONS, NOT_REQUESTED } from '../cluster/acl-operations';
import type { GroupCoordinator } from '../group';
import { defineHandler } from './handler';

export interface DescribeGroupsServices {
  readonly groups: Pick<GroupCoordinator, 'describeGroup'>;
}

export const describeGroups = defineHandler(ApiKey.DescribeGroups, { minVersion: 0, maxVersion: 6 }, (s: DescribeGroupsServices) => (req, ctx) => {
  const withOps = ctx.apiVersion >= 3 && req.includeAuthorizedOperations;
  return {
    throttleTimeMs: 0,
    groups: req.groups.map((groupId) => {
      const d = s.groups.describeGroup(groupId);
      const v6 = ctx.apiVersion >= 6;
      return {
        errorCode: !v6 && d.errorCode === ErrorCode.GROUP_ID_NOT_FOUND ? ErrorCode.NONE : d.errorCode,
        errorMessage: v6 ? d.errorMessage : null,
        groupId,
        groupState: d.state,
        protocolType: d.protocolType,
        protocolData: d.protocolData,
        members: d.members.map((m) => ({
          memberId: m.memberId, groupInstanceId: m.groupInstanceId, clientId: m.clientId, clientHost: m.clientHost,
          memberMetadata: m.metadata, memberAssignment: m.assignment,
        })),
        authorizedOperations: withOps ? GROUP_OPERATIONS : NOT_REQUESTED,
      };
    }),
  };
});
