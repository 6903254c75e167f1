// DeleteGroups (key 42), versions 0-2.
// - Deletes Empty groups with all their committed offsets (tombstones in __consumer_offsets).
// - Per group: GROUP_ID_NOT_FOUND for an unknown group, NON_EMPTY_GROUP while it has members,
//   COORDINATOR_LOAD_IN_PROGRESS while loading. A group named twice is answered once.
import { ApiKey } from '../protocol/generated';
import type { DeleteGroupsRequest } from '../protocol/generated/DeleteGroupsRequest';
import type { DeleteGroupsResponse } from '../protocol/generated/DeleteGroupsResponse';
import type { HandlerFactory } from './handler';

export const deleteGroups: HandlerFactory = (broker) => ({
  apiKey: ApiKey.DeleteGroups,
  name: 'DeleteGroups',
  minVersion: 0,
  maxVersion: 2,
  async handle(req: DeleteGroupsRequest): Promise<DeleteGroupsResponse> {
    return { throttleTimeMs: 0, results: await broker.groups.deleteGroups(req.groupsNames) };
  },
});
