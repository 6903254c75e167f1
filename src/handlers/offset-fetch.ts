// OffsetFetch (key 9), versions 0-10.
// - The committed offset, leader epoch (v5+) and metadata of each partition asked for; -1, -1 and
//   "" where nothing is committed, or the group does not exist. Null topics (v2+) mean every
//   committed partition of the group.
// - v8+ ask for several groups at once, each answered with its own error.
// - require_stable (v7+): a partition with a transactional offset (TxnOffsetCommit) whose
//   transaction has not ended is answered UNSTABLE_OFFSET_COMMIT with offset -1, on the partition
//   in every version (v8+ too: the group's own error stays NONE, as in Kafka 4). Without it, such a
//   partition shows its last committed offset; pending transactional offsets are never shown.
// - v9+: a consumer group's member (KIP-848) fetches at its member epoch: UNKNOWN_MEMBER_ID,
//   STALE_MEMBER_EPOCH otherwise; without member id and epoch anyone may fetch.
// - Group errors (COORDINATOR_LOAD_IN_PROGRESS...): at the top (v2-7) or per group (v8+); v0-1 have
//   no such field and carry the error on each partition.
// - v10 names topics by id (KIP-848), resolved once per topic: an unknown id is UNKNOWN_TOPIC_ID on
//   each of its partitions. Asked for every topic (null), a v10 answer leaves out committed topics
//   that no longer exist, which an id cannot name.
// - Authorization, per group: without DESCRIBE on it, GROUP_AUTHORIZATION_FAILED; topics named that
//   the principal may not DESCRIBE are answered TOPIC_AUTHORIZATION_FAILED per partition (not
//   fetched); all topics (null) leaves those out.
import { ApiKey } from '../protocol/generated';
import type { OffsetFetchResponseTopic, OffsetFetchResponseTopics } from '../protocol/generated/OffsetFetchResponse';
import { ErrorCode } from '../common/errors';
import { ZERO_UUID } from '../protocol/primitives';
import type { Controller } from '../cluster/controller';
import type { GroupCoordinator } from '../group';
import type { FetchingMember } from '../group/coordinator';
import { AclOperation, ResourceType } from '../security/acl';
import { defineHandler, type RequestContext } from './handler';

export interface OffsetFetchServices {
  readonly controller: Pick<Controller, 'topic' | 'topicById'>;
  readonly groups: Pick<GroupCoordinator, 'fetchOffsets'>;
}

export const offsetFetch = defineHandler(ApiKey.OffsetFetch, { minVersion: 0, maxVersion: 10 }, (s: OffsetFetchServices) => (req, ctx) => {
  const v = ctx.apiVersion;
  const requireStable = v >= 7 && (req.requireStable ?? false);
  if (v >= 8) {
    return {
      throttleTimeMs: 0, topics: [], errorCode: ErrorCode.NONE,
      groups: req.groups.map((g) => {
        const member = v >= 9 ? { memberId: g.memberId ?? null, memberEpoch: g.memberEpoch ?? -1 } : undefined;
        const fetched = v >= 10 ? fetchByTopicIds(s, ctx, g.groupId, g.topics, requireStable, member) : fetch(s.groups, ctx, g.groupId, g.topics, requireStable, member);
        return { groupId: g.groupId, topics: fetched.topics, errorCode: fetched.errorCode };
      }),
    };
  }
  const fetched = fetch(s.groups, ctx, req.groupId, v >= 2 ? req.topics : req.topics ?? [], requireStable);
  if (fetched.errorCode !== ErrorCode.NONE && v < 2) {
    const topics = (req.topics ?? []).map((t) => ({
      name: t.name,
      partitions: t.partitionIndexes.map((partitionIndex) => ({
        partitionIndex, committedOffset: -1n, committedLeaderEpoch: -1, metadata: '', errorCode: fetched.errorCode,
      })),
    }));
    return { throttleTimeMs: 0, topics, errorCode: fetched.errorCode, groups: [] };
  }
  return { throttleTimeMs: 0, topics: fetched.topics, errorCode: fetched.errorCode, groups: [] };
});

interface FetchedTopics<T> {
  errorCode: number;
  topics: T[];
}

/** v10: the topics named by their ids, and each topic answered with its id. */
function fetchByTopicIds(s: OffsetFetchServices, ctx: RequestContext, groupId: string, topics: { topicId?: string; partitionIndexes: number[] }[] | null,
  requireStable: boolean, member?: FetchingMember): FetchedTopics<OffsetFetchResponseTopics> {
  const named = topics && topics.map((t) => ({ ...t, name: s.controller.topicById(t.topicId ?? ZERO_UUID)?.name }));
  const known = named && named.filter((t): t is typeof t & { name: string } => t.name !== undefined);
  const fetched = fetch(s.groups, ctx, groupId, known, requireStable, member);
  if (fetched.errorCode !== ErrorCode.NONE) return { errorCode: fetched.errorCode, topics: [] };
  const answered = fetched.topics.flatMap((t) => {
    const id = s.controller.topic(t.name)?.id;
    return id === undefined ? [] : [{ ...t, topicId: id }];
  });
  const unknown = (named ?? []).filter((t) => t.name === undefined).map((t) => ({
    name: '', topicId: t.topicId ?? ZERO_UUID,
    partitions: t.partitionIndexes.map((partitionIndex) => ({
      partitionIndex, committedOffset: -1n, committedLeaderEpoch: -1, metadata: '', errorCode: ErrorCode.UNKNOWN_TOPIC_ID,
    })),
  }));
  return { errorCode: fetched.errorCode, topics: [...answered, ...unknown] };
}

function fetch(groups: OffsetFetchServices['groups'], ctx: RequestContext, groupId: string,
  topics: { name?: string; partitionIndexes: number[] }[] | null, requireStable: boolean, member?: FetchingMember): FetchedTopics<OffsetFetchResponseTopic> {
  if (!ctx.authorize(AclOperation.DESCRIBE, ResourceType.GROUP, groupId)) return { errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED, topics: [] };
  const describable = (name: string) => ctx.authorize(AclOperation.DESCRIBE, ResourceType.TOPIC, name);
  const allowed: { name: string; partitions: number[] }[] = [];
  const refused: OffsetFetchResponseTopic[] = [];
  for (const t of topics ?? []) {
    const name = t.name ?? '';
    if (describable(name)) allowed.push({ name, partitions: t.partitionIndexes });
    else {
      refused.push({
        name, partitions: t.partitionIndexes.map((partitionIndex) => ({
          partitionIndex, committedOffset: -1n, committedLeaderEpoch: -1, metadata: '', errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
        })),
      });
    }
  }
  const result = groups.fetchOffsets(groupId, topics && allowed, requireStable, member);
  if (result.errorCode !== ErrorCode.NONE) return { errorCode: result.errorCode, topics: [] };
  return {
    errorCode: result.errorCode,
    topics: [...(topics === null ? result.topics.filter((t) => describable(t.name)) : result.topics).map((t) => ({
      name: t.name,
      partitions: t.partitions.map((p) => ({
        partitionIndex: p.partition, committedOffset: BigInt(p.offset), committedLeaderEpoch: p.leaderEpoch,
        metadata: p.metadata, errorCode: p.errorCode,
      })),
    })), ...refused],
  };
}
