// DescribeGroups (key 15), versions 0-5.
// - Per group: state, protocol type, and once Stable the protocol name and each member's metadata
//   and assignment bytes (before that, members are listed without them, as Kafka does).
// - An unknown group is answered as state "Dead" with no error (GROUP_ID_NOT_FOUND is v6+).
// - v3+: authorized operations when asked (no ACLs: everything a group supports), else
//   Integer.MIN_VALUE. v4+: each member's group.instance.id.
import { ApiKey } from '../protocol/generated';
import { GROUP_OPERATIONS, NOT_REQUESTED } from '../cluster/acl-operations';
import type { GroupCoordinator } from '../group';
import { defineHandler } from './handler';

export interface DescribeGroupsServices {
  readonly groups: Pick<GroupCoordinator, 'describeGroup'>;
}

export const describeGroups = defineHandler(ApiKey.DescribeGroups, { minVersion: 0, maxVersion: 5 }, (s: DescribeGroupsServices) => (req, ctx) => {
  const withOps = ctx.apiVersion >= 3 && req.includeAuthorizedOperations;
  return {
    throttleTimeMs: 0,
    groups: req.groups.map((groupId) => {
      const d = s.groups.describeGroup(groupId);
      return {
        errorCode: d.errorCode,
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
