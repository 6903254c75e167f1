// DescribeShareGroupOffsets (key 90), versions 0-1 (KIP-932; kafka-share-groups --describe --offsets).
// - Per group, per partition: the share-partition start offset and leader epoch the share coordinator
//   holds (src/share/share-group-admin.ts), and (v1) the lag: end offset - start offset - records
//   whose delivery is complete, -1 while unknown. Null topics: every partition the group has state
//   for; an empty list: none. A topic that does not exist, or a partition without state, answers
//   start offset -1 with no error, as Kafka.
// - Without share.version >= 1 finalized: UNSUPPORTED_VERSION per group.
// - Authorization: GROUP DESCRIBE per group (GROUP_AUTHORIZATION_FAILED); topics named that the
//   principal may not DESCRIBE answer TOPIC_AUTHORIZATION_FAILED per partition, after the others;
//   asked for all topics, those are left out.
import { ApiKey } from '../protocol/generated';
import type { DescribeShareGroupOffsetsResponseGroup } from '../protocol/generated/DescribeShareGroupOffsetsResponse';
import type { DescribeShareGroupOffsetsRequestGroup } from '../protocol/generated/DescribeShareGroupOffsetsRequest';
import { ErrorCode, errorMessage } from '../common/errors';
import { ZERO_UUID } from '../protocol/primitives';
import type { ShareGroupAdmin } from '../share/share-group-admin';
import { AclOperation, ResourceType } from '../security/acl';
import { shareProtocolEnabled, type ShareProtocolServices } from './shared/share-requests';
import { defineHandler, type RequestContext } from './handler';

export interface DescribeShareGroupOffsetsServices extends ShareProtocolServices {
  readonly shareGroupAdmin: Pick<ShareGroupAdmin, 'describeOffsets'>;
}

export const describeShareGroupOffsets = defineHandler(ApiKey.DescribeShareGroupOffsets, { minVersion: 0, maxVersion: 1 }, (s: DescribeShareGroupOffsetsServices) => async (req, ctx) => ({
  throttleTimeMs: 0,
  groups: await Promise.all(req.groups.map((g) => describeGroup(s, ctx, g))),
}));

async function describeGroup(s: DescribeShareGroupOffsetsServices, ctx: RequestContext, g: DescribeShareGroupOffsetsRequestGroup): Promise<DescribeShareGroupOffsetsResponseGroup> {
  const groupId = g.groupId;
  const failed = (errorCode: number) => ({ groupId, topics: [], errorCode, errorMessage: null });
  if (!shareProtocolEnabled(s)) return failed(ErrorCode.UNSUPPORTED_VERSION);
  if (!ctx.authorize(AclOperation.DESCRIBE, ResourceType.GROUP, groupId)) return failed(ErrorCode.GROUP_AUTHORIZATION_FAILED);
  const describable = (name: string) => ctx.authorize(AclOperation.DESCRIBE, ResourceType.TOPIC, name);
  if (g.topics === null) {
    const described = await s.shareGroupAdmin.describeOffsets(groupId, null);
    return { ...described, topics: described.topics.filter((t) => describable(t.topicName)) };
  }
  if (g.topics.length === 0) return failed(ErrorCode.NONE);
  const allowed = g.topics.filter((t) => describable(t.topicName));
  const described = await s.shareGroupAdmin.describeOffsets(groupId, allowed);
  if (described.errorCode !== ErrorCode.NONE) return described;
  const refused = g.topics.filter((t) => !allowed.includes(t)).map((t) => ({
    topicName: t.topicName, topicId: ZERO_UUID,
    partitions: t.partitions.map((partitionIndex) => ({
      partitionIndex, startOffset: -1n, leaderEpoch: 0, lag: -1n,
      errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED, errorMessage: errorMessage(ErrorCode.TOPIC_AUTHORIZATION_FAILED),
    })),
  }));
  return { ...described, topics: [...described.topics, ...refused] };
}
