// OffsetCommit (key 8), versions 0-10.
// - Members of the group's current generation commit; so may anyone with generation -1 and no
//   member id while the group is Empty (a consumer that only stores offsets here, or the admin
//   client), which creates the group if needed. v0 carries neither: it commits only to Empty groups.
// - Errors, per partition: UNKNOWN_TOPIC_OR_PARTITION (topic or partition does not exist),
//   OFFSET_METADATA_TOO_LARGE (above offset.metadata.max.bytes), ILLEGAL_GENERATION,
//   UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID (v7+), REBALANCE_IN_PROGRESS (a member between its
//   JoinGroup and SyncGroup), GROUP_ID_NOT_FOUND (v9+, unknown group with a generation; older
//   versions ILLEGAL_GENERATION), COORDINATOR_LOAD_IN_PROGRESS, and the write's own errors.
// - A null metadata is stored as "". v1's commit timestamp is used when set; v2-4's retention
//   time, when not -1, gives the offset its own expiry (now + retention), as Kafka 4 does.
// - A commit keeps a classic member's session alive.
// - v10 names topics by id (KIP-848), resolved once per topic: an unknown id is UNKNOWN_TOPIC_ID for
//   each of its partitions; the answer names each topic by the id it was sent.
// - Authorization: READ on the group (else GROUP_AUTHORIZATION_FAILED for every partition), then READ
//   on each topic (TOPIC_AUTHORIZATION_FAILED for its partitions).
import { ApiKey } from '../protocol/generated';
import { ZERO_UUID } from '../protocol/primitives';
import type { Controller } from '../cluster/controller';
import type { GroupCoordinator } from '../group';
import type { CommitRequest } from '../group/coordinator';
import { commitKnownPartitions } from './shared/commit-partitions';
import { ErrorCode } from '../common/errors';
import { AclOperation, ResourceType } from '../security/acl';
import { defineHandler } from './handler';

export interface OffsetCommitServices {
  readonly controller: Pick<Controller, 'topic' | 'topicById'>;
  readonly groups: Pick<GroupCoordinator, 'commitOffsets'>;
}

export const offsetCommit = defineHandler(ApiKey.OffsetCommit, { minVersion: 0, maxVersion: 10 }, (s: OffsetCommitServices) => async (req, ctx) => {
  const v = ctx.apiVersion;
  if (!ctx.authorize(AclOperation.READ, ResourceType.GROUP, req.groupId)) {
    return {
      throttleTimeMs: 0,
      topics: req.topics.map((t) => ({
        name: t.name, topicId: t.topicId ?? ZERO_UUID,
        partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED })),
      })),
    };
  }
  const commit: Omit<CommitRequest, 'partitions'> = {
    groupId: req.groupId,
    generationId: v >= 1 ? req.generationIdOrMemberEpoch ?? -1 : -1,
    memberId: v >= 1 ? req.memberId ?? '' : '',
    groupInstanceId: v >= 7 ? req.groupInstanceId ?? null : null,
    apiVersion: v,
    retentionTimeMs: v >= 2 && v <= 4 ? Number(req.retentionTimeMs ?? -1n) : -1,
  };
  const usesTopicIds = v >= 10;
  const named = req.topics.map((t) => ({ ...t, name: usesTopicIds ? s.controller.topicById(t.topicId ?? ZERO_UUID)?.name : t.name }));
  const topics = await commitKnownPartitions(s.controller, named, (topic, p) => ({
    topic, partition: p.partitionIndex, offset: Number(p.committedOffset),
    leaderEpoch: v >= 6 ? p.committedLeaderEpoch ?? -1 : -1, metadata: p.committedMetadata,
    commitTimestamp: v === 1 ? Number(p.commitTimestamp ?? -1n) : -1,
  }), (partitions) => s.groups.commitOffsets({ ...commit, partitions }),
  (topic) => ctx.authorize(AclOperation.READ, ResourceType.TOPIC, topic));
  return { throttleTimeMs: 0, topics: topics.map((t, i) => ({ ...t, topicId: req.topics[i].topicId ?? ZERO_UUID })) };
});
