// DeleteGroups (key 42), versions 0-3.
// - Deletes Empty groups with all their committed offsets (tombstones in __consumer_offsets).
// - Per group: GROUP_ID_NOT_FOUND for an unknown group, NON_EMPTY_GROUP while it has members,
//   COORDINATOR_LOAD_IN_PROGRESS while loading. A group named twice is answered once.
// - v3+: each error with a message (the coordinator's, or as DescribeGroups v6 words it).
import { ApiKey } from '../protocol/generated';
import type { GroupCoordinator } from '../group';
import { groupErrorMessage } from './shared/group-errors';
import { defineHandler } from './handler';

export interface DeleteGroupsServices {
  readonly groups: Pick<GroupCoordinator, 'deleteGroups'>;
}

export const deleteGroups = defineHandler(ApiKey.DeleteGroups, { minVersion: 0, maxVersion: 3 }, (s: DeleteGroupsServices) => async (req) => ({
  throttleTimeMs: 0,
  results: (await s.groups.deleteGroups(req.groupsNames)).map((r) => ({
    groupId: r.groupId, errorCode: r.errorCode, errorMessage: groupErrorMessage(r.groupId, r.errorCode, r.errorMessage),
  })),
}));
