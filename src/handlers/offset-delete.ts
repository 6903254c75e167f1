// OffsetDelete (key 47), version 0 (KIP-496).
// - Deletes a group's committed offsets for the partitions named (tombstones in __consumer_offsets);
//   partitions without an offset are answered NONE too.
// - A consumer group ("consumer" protocol) with members keeps the offsets of topics its members
//   subscribe to (read from their subscriptions): GROUP_SUBSCRIBED_TO_TOPIC for those partitions.
//   Any other group must be Empty: NON_EMPTY_GROUP.
// - GROUP_ID_NOT_FOUND for an unknown group, INVALID_GROUP_ID for an empty id (group errors answer
//   no partitions); UNKNOWN_TOPIC_OR_PARTITION for the partitions of a topic that does not exist.
// - Without DELETE on the group: GROUP_AUTHORIZATION_FAILED; a topic the principal may not READ:
//   TOPIC_AUTHORIZATION_FAILED for its partitions (before UNKNOWN_TOPIC_OR_PARTITION).
import { ApiKey } from '../protocol/generated';
import type { OffsetDeleteResponseTopic } from '../protocol/generated/OffsetDeleteResponse';
import { ErrorCode } from '../common/errors';
import type { Controller } from '../cluster/controller';
import type { GroupCoordinator } from '../group';
import { AclOperation, ResourceType } from '../security/acl';
import { defineHandler } from './handler';

export interface OffsetDeleteServices {
  readonly controller: Pick<Controller, 'topic'>;
  readonly groups: Pick<GroupCoordinator, 'deleteOffsets'>;
}

export const offsetDelete = defineHandler(ApiKey.OffsetDelete, { minVersion: 0, maxVersion: 0 }, (s: OffsetDeleteServices) => async (req, ctx) => {
  if (!ctx.authorize(AclOperation.DELETE, ResourceType.GROUP, req.groupId)) return { errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED, throttleTimeMs: 0, topics: [] };
  const unknown: OffsetDeleteResponseTopic[] = [];
  const known: { name: string; partitions: number[] }[] = [];
  for (const t of req.topics) {
    const partitions = t.partitions.map((p) => p.partitionIndex);
    const refused = !ctx.authorize(AclOperation.READ, ResourceType.TOPIC, t.name) ? ErrorCode.TOPIC_AUTHORIZATION_FAILED
      : !s.controller.topic(t.name) ? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION : ErrorCode.NONE;
    if (refused === ErrorCode.NONE) known.push({ name: t.name, partitions });
    else unknown.push({ name: t.name, partitions: partitions.map((partitionIndex) => ({ partitionIndex, errorCode: refused })) });
  }
  const result = await s.groups.deleteOffsets(req.groupId, known);
  if (result.errorCode !== ErrorCode.NONE) return { errorCode: result.errorCode, throttleTimeMs: 0, topics: [] };
  const deleted = result.topics.map((t) => ({
    name: t.name, partitions: t.partitions.map((p) => ({ partitionIndex: p.partition, errorCode: p.errorCode })),
  }));
  return { errorCode: ErrorCode.NONE, throttleTimeMs: 0, topics: [...deleted, ...unknown] };
});
