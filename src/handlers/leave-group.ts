// LeaveGroup (key 13), versions 0-5.
// - v0-2: one member by member id; the answer's error is the group's or that member's.
// - v3+ (KIP-345): a batch of members, each by member id, or by group.instance.id alone (empty
//   member id: an administrator removing a static member); one error per member.
// - A leaving member rebalances the group (or ends a join phase that only waited for it); a
//   member id only handed out (KIP-394) is just forgotten.
// - To a consumer group (KIP-848) the classic protocol's requests are its classic members'
//   (src/group/consumer-coordinator.ts): they leave as with epoch -1, answered once the group's
//   records are written (a failed write is the answer's error, the members still there).
// - Errors: UNKNOWN_MEMBER_ID (per member, also when the group does not exist),
//   FENCED_INSTANCE_ID, INVALID_GROUP_ID, COORDINATOR_LOAD_IN_PROGRESS.
// - Without READ on the group: GROUP_AUTHORIZATION_FAILED, no member answers.
import { ApiKey } from '../protocol/generated';
import { ErrorCode } from '../common/errors';
import type { GroupCoordinator } from '../group';
import { AclOperation, ResourceType } from '../security/acl';
import { defineHandler } from './handler';

export interface LeaveGroupServices {
  readonly groups: Pick<GroupCoordinator, 'leaveGroup'>;
}

export const leaveGroup = defineHandler(ApiKey.LeaveGroup, { minVersion: 0, maxVersion: 5 }, (s: LeaveGroupServices) => async (req, ctx) => {
  if (!ctx.authorize(AclOperation.READ, ResourceType.GROUP, req.groupId)) return { throttleTimeMs: 0, errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED, members: [] };
  const batched = ctx.apiVersion >= 3;
  const leaving = batched
    ? req.members.map((m) => ({ memberId: m.memberId, groupInstanceId: m.groupInstanceId ?? null }))
    : [{ memberId: req.memberId, groupInstanceId: null }];
  const result = await s.groups.leaveGroup(req.groupId, leaving);
  if (batched) return { throttleTimeMs: 0, errorCode: result.errorCode, members: result.members };
  const memberError = result.members.find((m) => m.errorCode !== ErrorCode.NONE)?.errorCode ?? ErrorCode.NONE;
  return { throttleTimeMs: 0, errorCode: result.errorCode !== ErrorCode.NONE ? result.errorCode : memberError, members: [] };
});
