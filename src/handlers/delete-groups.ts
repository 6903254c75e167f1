// DeleteGroups (key 42), versions 0-2.
// - Deletes Empty groups with all their committed offsets (tombstones in __consumer_offsets).
// - Per group: GROUP_ID_NOT_FOUND for an unknown group, NON_EMPTY_GROUP while it has members,
//   COORDINATOR_LOAD_IN_PROGRESS while loading. A group named twice is answered once.
import { ApiKey } from '../protocol/generated';
import type { GroupCoordinator } from '../group';
import { defineHandler } from './handler';

export interface DeleteGroupsServices {
  readonly groups: Pick<GroupCoordinator, 'deleteGroups'>;
}

export const deleteGroups = defineHandler(ApiKey.DeleteGroups, { minVersion: 0, maxVersion: 2 },
  (s: DeleteGroupsServices) => async (req) => ({ throttleTimeMs: 0, results: await s.groups.deleteGroups(req.groupsNames) }));
