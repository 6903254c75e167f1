// DeleteShareGroupOffsets (key 92), version 0 (KIP-932; kafka-share-groups --delete-offsets).
// - An empty share group forgets its state for whole topics (src/share/share-group-admin.ts).
//   Group errors, with no topics: GROUP_ID_NOT_FOUND ("Group g not found.", "Group g is not a share
//   group."), NON_EMPTY_GROUP "The group is not empty.", INVALID_GROUP_ID for an empty id. Per topic:
//   UNKNOWN_TOPIC_OR_PARTITION for a topic that does not exist or one the group has no state for
//   ("There is no offset information to delete."), the share coordinator's error otherwise.
// - Without share.version >= 1 finalized: UNSUPPORTED_VERSION.
// - Authorization: GROUP DELETE (GROUP_AUTHORIZATION_FAILED); each topic READ, else
//   TOPIC_AUTHORIZATION_FAILED for it (answered first, as Kafka).
import { ApiKey } from '../protocol/generated';
import { ErrorCode, errorMessage } from '../common/errors';
import { ZERO_UUID } from '../protocol/primitives';
import type { ShareGroupAdmin } from '../share/share-group-admin';
import { AclOperation, ResourceType } from '../security/acl';
import { shareProtocolEnabled, type ShareProtocolServices } from './shared/share-requests';
import { defineHandler } from './handler';

export interface DeleteShareGroupOffsetsServices extends ShareProtocolServices {
  readonly shareGroupAdmin: Pick<ShareGroupAdmin, 'deleteOffsets'>;
}

export const deleteShareGroupOffsets = defineHandler(ApiKey.DeleteShareGroupOffsets, { minVersion: 0, maxVersion: 0 }, (s: DeleteShareGroupOffsetsServices) => async (req, ctx) => {
  const failed = (errorCode: number) => ({ throttleTimeMs: 0, errorCode, errorMessage: errorMessage(errorCode), responses: [] });
  if (!shareProtocolEnabled(s)) return failed(ErrorCode.UNSUPPORTED_VERSION);
  if (!ctx.authorize(AclOperation.DELETE, ResourceType.GROUP, req.groupId)) return failed(ErrorCode.GROUP_AUTHORIZATION_FAILED);
  if (req.groupId === '') return failed(ErrorCode.INVALID_GROUP_ID);
  const names = req.topics.map((t) => t.topicName);
  const readable = names.filter((name) => ctx.authorize(AclOperation.READ, ResourceType.TOPIC, name));
  const refused = names.filter((name) => !readable.includes(name)).map((topicName) => ({
    topicName, topicId: ZERO_UUID, errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED, errorMessage: errorMessage(ErrorCode.TOPIC_AUTHORIZATION_FAILED),
  }));
  const deleted = await s.shareGroupAdmin.deleteOffsets(req.groupId, readable);
  if (deleted.errorCode !== ErrorCode.NONE) return deleted;
  return { ...deleted, responses: [...refused, ...deleted.responses] };
});
