// ListGroups (key 16), versions 0-5.
// - Every group this coordinator has (all of them: one broker), with its protocol type.
// - v4+: the state of each, and a states filter (case-insensitive; empty = all).
// - v5+: the type of each ("classic", "consumer" (KIP-848), "streams" (KIP-1071) or "share" (KIP-932)),
//   and a types filter (case-insensitive; any other type matches nothing). A consumer group's states:
//   Empty, Assigning, Reconciling, Stable; a share group's: Empty, Stable.
// - COORDINATOR_LOAD_IN_PROGRESS while the groups are being read back.
// - Every group with DESCRIBE on the cluster; else only the groups the principal may DESCRIBE.
import { ApiKey } from '../protocol/generated';
import type { GroupCoordinator } from '../group';
import { AclOperation, ResourceType } from '../security/acl';
import { authorizeCluster } from './shared/authorization';
import { defineHandler } from './handler';

export interface ListGroupsServices {
  readonly groups: Pick<GroupCoordinator, 'listGroups'>;
}

export const listGroups = defineHandler(ApiKey.ListGroups, { minVersion: 0, maxVersion: 5 }, (s: ListGroupsServices) => (req, ctx) => {
  const v = ctx.apiVersion;
  const result = s.groups.listGroups(v >= 4 ? req.statesFilter : [], v >= 5 ? req.typesFilter : []);
  const listed = authorizeCluster(ctx, AclOperation.DESCRIBE) ? result.groups
    : result.groups.filter((g) => ctx.authorize(AclOperation.DESCRIBE, ResourceType.GROUP, g.groupId));
  return {
    throttleTimeMs: 0,
    errorCode: result.errorCode,
    groups: listed.map((g) => ({ groupId: g.groupId, protocolType: g.protocolType, groupState: g.state, groupType: g.type })),
  };
});
