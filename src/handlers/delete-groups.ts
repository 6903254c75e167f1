// DeleteGroups (key 42), versions 0-3.
// - Deletes Empty groups with all their committed offsets (tombstones in __consumer_offsets); an
//   Empty share group after its share-partitions' state (the share coordinator's).
// - Per group: GROUP_ID_NOT_FOUND for an unknown group, NON_EMPTY_GROUP while it has members,
//   COORDINATOR_LOAD_IN_PROGRESS while loading. A group named twice is answered once.
// - v3+: the coordinator's message with an error when it has one, else none (Kafka 4.4 sends none
//   with GROUP_ID_NOT_FOUND).
// - A group the principal may not DELETE: GROUP_AUTHORIZATION_FAILED, left as it is.
import { ApiKey } from '../protocol/generated';
import type { GroupCoordinator } from '../group';
import { ErrorCode } from '../common/errors';
import { AclOperation, ResourceType } from '../security/acl';
import { defineHandler } from './handler';

export interface DeleteGroupsServices {
  readonly groups: Pick<GroupCoordinator, 'deleteGroups'>;
}

export const deleteGroups = defineHandler(ApiKey.DeleteGroups, { minVersion: 0, maxVersion: 3 }, (s: DeleteGroupsServices) => async (req, ctx) => {
  const named = [...new Set(req.groupsNames)];
  const deletable = named.filter((groupId) => ctx.authorize(AclOperation.DELETE, ResourceType.GROUP, groupId));
  const deleted = new Map((await s.groups.deleteGroups(deletable)).map((r) => [r.groupId, r]));
  return {
    throttleTimeMs: 0,
    results: named.map((groupId) => {
      const r = deleted.get(groupId);
      return r ? { groupId, errorCode: r.errorCode, errorMessage: r.errorMessage ?? null } : { groupId, errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED, errorMessage: null };
    }),
  };
});
