// Heartbeat (key 12), versions 0-4: keeps a member's session alive.
// - NONE in CompletingRebalance and Stable; REBALANCE_IN_PROGRESS while a join phase runs (the
//   member must rejoin); UNKNOWN_MEMBER_ID for a member the group does not have (or an Empty
//   group); ILLEGAL_GENERATION for another generation; FENCED_INSTANCE_ID for a static member's
//   stale member id (v3+ group.instance.id); INVALID_GROUP_ID for an empty group id.
// - To a consumer group (KIP-848) the classic protocol's requests are its classic members'
//   (src/group/consumer-coordinator.ts): REBALANCE_IN_PROGRESS when the group epoch moved
//   past the member's (or partitions it waits for were released): it must join again.
// - While the coordinator loads, heartbeats are answered NONE blindly, as Kafka does.
// - Without READ on the group: GROUP_AUTHORIZATION_FAILED.
import { ApiKey } from '../protocol/generated';
import type { GroupCoordinator } from '../group';
import { ErrorCode } from '../common/errors';
import { AclOperation, ResourceType } from '../security/acl';
import { defineHandler } from './handler';

export interface HeartbeatServices {
  readonly groups: Pick<GroupCoordinator, 'heartbeat'>;
}

export const heartbeat = defineHandler(ApiKey.Heartbeat, { minVersion: 0, maxVersion: 4 }, (s: HeartbeatServices) => (req, ctx) => {
  if (!ctx.authorize(AclOperation.READ, ResourceType.GROUP, req.groupId)) return { throttleTimeMs: 0, errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED };
  const groupInstanceId = ctx.apiVersion >= 3 ? req.groupInstanceId ?? null : null;
  return { throttleTimeMs: 0, errorCode: s.groups.heartbeat(req.groupId, req.memberId, groupInstanceId, req.generationId) };
});
