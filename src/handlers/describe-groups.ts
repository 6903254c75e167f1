// DescribeGroups (key 15), versions 0-6.
// - Per group: state, protocol type, and once Stable the protocol name and each member's metadata
//   and assignment bytes (before that, members are listed without them, as Kafka does).
// - An unknown group is answered as state "Dead": with no error before v6, with GROUP_ID_NOT_FOUND
//   and "Group <id> not found." from v6 (KIP-1043), as Kafka's group coordinator does (a long id
//   quoted in part, so that the message fits a protocol string). Other errors carry the
//   coordinator's message when it has one, else none (Kafka 4.4 sends none with NOT_COORDINATOR).
// - v3+: authorized operations when asked (no ACLs: everything a group supports), else
//   Integer.MIN_VALUE. v4+: each member's group.instance.id.
import { ApiKey } from '../protocol/generated';
import { NOT_REQUESTED } from '../cluster/acl-operations';
import { ErrorCode, quoteInMessage } from '../common/errors';
import type { GroupCoordinator } from '../group';
import { GroupState } from '../group/group';
import { defineHandler } from './handler';

/** Kafka 4's AclEntry.supportedOperations(GROUP): READ(3), DELETE(6), DESCRIBE(8), DESCRIBE_CONFIGS(10), ALTER_CONFIGS(11). */
const GROUP_OPERATIONS = [3, 6, 8, 10, 11].reduce((bits, op) => bits | (1 << op), 0);

export interface DescribeGroupsServices {
  readonly groups: Pick<GroupCoordinator, 'describeGroup'>;
}

export const describeGroups = defineHandler(ApiKey.DescribeGroups, { minVersion: 0, maxVersion: 6 }, (s: DescribeGroupsServices) => (req, ctx) => {
  const withOps = ctx.apiVersion >= 3 && req.includeAuthorizedOperations;
  return {
    throttleTimeMs: 0,
    groups: req.groups.map((groupId) => {
      const d = s.groups.describeGroup(groupId);
      const notFound = ctx.apiVersion >= 6 && d.errorCode === ErrorCode.NONE && d.state === GroupState.Dead;
      return {
        errorCode: notFound ? ErrorCode.GROUP_ID_NOT_FOUND : d.errorCode,
        errorMessage: notFound ? `Group ${quoteInMessage(groupId)} not found.` : d.errorMessage ?? null,
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
