// AlterShareGroupOffsets (key 91), version 0 (KIP-932; kafka-share-groups --reset-offsets --execute).
// - Sets the start offset of an empty share group's partitions (src/share/share-group-admin.ts): a
//   group with members is NON_EMPTY_GROUP "The group is not empty.", one of another type
//   GROUP_ID_NOT_FOUND "Group g is not a share group."; a group that does not exist yet is altered
//   as an empty one (Kafka creates it). Per partition: UNKNOWN_TOPIC_OR_PARTITION for a topic that
//   does not exist or a partition past its count; the share coordinator's error otherwise.
// - Without share.version >= 1 finalized: UNSUPPORTED_VERSION. An empty group id: INVALID_GROUP_ID.
// - Authorization: GROUP READ (GROUP_AUTHORIZATION_FAILED, nothing altered); each topic READ, else
//   TOPIC_AUTHORIZATION_FAILED for its partitions (answered first, as Kafka's response builder).
import { ApiKey } from '../protocol/generated';
import type { AlterShareGroupOffsetsResponseTopic } from '../protocol/generated/AlterShareGroupOffsetsResponse';
import { ErrorCode, errorMessage } from '../common/errors';
import { ZERO_UUID } from '../protocol/primitives';
import type { Controller } from '../cluster/controller';
import type { ShareGroupAdmin } from '../share/share-group-admin';
import { AclOperation, ResourceType } from '../security/acl';
import { shareProtocolEnabled, type ShareProtocolServices } from './shared/share-requests';
import { defineHandler } from './handler';

export interface AlterShareGroupOffsetsServices extends ShareProtocolServices {
  readonly controller: Pick<Controller, 'topic'>;
  readonly shareGroupAdmin: Pick<ShareGroupAdmin, 'alterOffsets'>;
}

export const alterShareGroupOffsets = defineHandler(ApiKey.AlterShareGroupOffsets, { minVersion: 0, maxVersion: 0 }, (s: AlterShareGroupOffsetsServices) => async (req, ctx) => {
  const failed = (errorCode: number) => ({ throttleTimeMs: 0, errorCode, errorMessage: errorMessage(errorCode), responses: [] });
  if (!shareProtocolEnabled(s)) return failed(ErrorCode.UNSUPPORTED_VERSION);
  if (!ctx.authorize(AclOperation.READ, ResourceType.GROUP, req.groupId)) return failed(ErrorCode.GROUP_AUTHORIZATION_FAILED);
  if (req.groupId === '') return failed(ErrorCode.INVALID_GROUP_ID);
  const readable = req.topics.filter((t) => ctx.authorize(AclOperation.READ, ResourceType.TOPIC, t.topicName));
  const refused: AlterShareGroupOffsetsResponseTopic[] = req.topics.filter((t) => !readable.includes(t)).map((t) => ({
    topicName: t.topicName, topicId: s.controller.topic(t.topicName)?.id ?? ZERO_UUID,
    partitions: t.partitions.map((p) => ({
      partitionIndex: p.partitionIndex, errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED, errorMessage: errorMessage(ErrorCode.TOPIC_AUTHORIZATION_FAILED),
    })),
  }));
  const altered = await s.shareGroupAdmin.alterOffsets(req.groupId, readable);
  if (altered.errorCode !== ErrorCode.NONE) return altered;
  return { ...altered, responses: [...refused, ...altered.responses] };
});
