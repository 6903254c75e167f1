// OffsetFetch (key 9), versions 0-9.
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
import { ApiKey } from '../protocol/generated';
import type { OffsetFetchResponseTopic } from '../protocol/generated/OffsetFetchResponse';
import { ErrorCode } from '../common/errors';
import type { GroupCoordinator } from '../group';
import type { FetchingMember } from '../group/coordinator';
import { defineHandler } from './handler';

export interface OffsetFetchServices {
  readonly groups: Pick<GroupCoordinator, 'fetchOffsets'>;
}

export const offsetFetch = defineHandler(ApiKey.OffsetFetch, { minVersion: 0, maxVersion: 9 }, (s: OffsetFetchServices) => (req, ctx) => {
  const v = ctx.apiVersion;
  const requireStable = v >= 7 && (req.requireStable ?? false);
  if (v >= 8) {
    return {
      throttleTimeMs: 0, topics: [], errorCode: ErrorCode.NONE,
      groups: req.groups.map((g) => {
        const member = v >= 9 ? { memberId: g.memberId ?? null, memberEpoch: g.memberEpoch ?? -1 } : undefined;
        const fetched = fetch(s.groups, g.groupId, g.topics, requireStable, member);
        return { groupId: g.groupId, topics: fetched.topics, errorCode: fetched.errorCode };
      }),
    };
  }
  const fetched = fetch(s.groups, req.groupId, v >= 2 ? req.topics : req.topics ?? [], requireStable);
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

function fetch(groups: OffsetFetchServices['groups'], groupId: string, topics: { name?: string; partitionIndexes: number[] }[] | null,
  requireStable: boolean, member?: FetchingMember): { errorCode: number; topics: OffsetFetchResponseTopic[] } {
  const result = groups.fetchOffsets(groupId, topics && topics.map((t) => ({ name: t.name ?? '', partitions: t.partitionIndexes })),
    requireStable, member);
  return {
    errorCode: result.errorCode,
    topics: result.topics.map((t) => ({
      name: t.name,
      partitions: t.partitions.map((p) => ({
        partitionIndex: p.partition, committedOffset: BigInt(p.offset), committedLeaderEpoch: p.leaderEpoch,
        metadata: p.metadata, errorCode: p.errorCode,
      })),
    })),
  };
}
