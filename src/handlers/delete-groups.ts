// DeleteGroups (key 42), versions 0-3.
// - Deletes Empty groups with all their committed offsets (tombstones in __consumer_offsets).
// - Per group: GROUP_ID_NOT_FOUND for an unknown group, NON_EMPTY_GROUP while it has members,
//   COORDINATOR_LOAD_IN_PROGRESS while loading. A group named twice is answered once.
// - v3+: the coordinator's message with an error when it has one, else none (Kafka 4.4 sends none
//   with GROUP_ID_NOT_FOUND).
import { ApiKey } from '../protocol/generated';
import type { GroupCoordinator } from '../group';
import { defineHandler } from './handler';

export interface DeleteGroupsServices {
  readonly groups: Pick<GroupCoordinator, 'deleteGroups'>;
}

export const deleteGroups = defineHandler(ApiKey.DeleteGroups, { minVersion: 0, maxVersion: 3 }, (s: DeleteGroupsServices) => async (req) => ({
  throttleTimeMs: 0,
  results: (await s.groups.deleteGroups(req.groupsNames)).map((r) => ({ groupId: r.groupId, errorCode: r.errorCode, errorMessage: r.errorMessage ?? null })),
}));
