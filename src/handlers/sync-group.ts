// SyncGroup (key 14), versions 0-5: the classic group coordinator's sync phase.
// - The leader's assignment is written to __consumer_offsets with the group, then each member
//   gets its own bytes, whole; a member the leader left out gets empty bytes (never null).
//   Followers that sync first wait for it; in a Stable group any member gets its current assignment.
// - Errors: UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION, REBALANCE_IN_PROGRESS (during a join phase, or
//   when one starts while waiting), FENCED_INSTANCE_ID (v3+ group.instance.id), and
//   COORDINATOR_LOAD_IN_PROGRESS reported as REBALANCE_IN_PROGRESS as Kafka does.
// - To a consumer group (KIP-848) the classic protocol's requests are its classic members'
//   (src/group/consumer-coordinator.ts): the member's assigned partitions as its assignment,
//   REBALANCE_IN_PROGRESS when it must join again.
// - v5+ must name the protocol type and name, and they must be the group's, else
//   INCONSISTENT_GROUP_PROTOCOL; the answer names them back (null on errors).
// - Without READ on the group: GROUP_AUTHORIZATION_FAILED and an empty assignment.
import { ApiKey } from '../protocol/generated';
import { ErrorCode } from '../common/errors';
import type { GroupCoordinator } from '../group';
import { AclOperation, ResourceType } from '../security/acl';
import { defineHandler } from './handler';

export interface SyncGroupServices {
  readonly groups: Pick<GroupCoordinator, 'syncGroup'>;
}

export const syncGroup = defineHandler(ApiKey.SyncGroup, { minVersion: 0, maxVersion: 5 }, (s: SyncGroupServices) => async (req, ctx) => {
  const v = ctx.apiVersion;
  if (!ctx.authorize(AclOperation.READ, ResourceType.GROUP, req.groupId)) {
    return { throttleTimeMs: 0, errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED, protocolType: null, protocolName: null, assignment: Buffer.alloc(0) };
  }
  const protocolType = v >= 5 ? req.protocolType ?? null : null;
  const protocolName = v >= 5 ? req.protocolName ?? null : null;
  if (v >= 5 && (protocolType === null || protocolName === null)) {
    return { throttleTimeMs: 0, errorCode: ErrorCode.INCONSISTENT_GROUP_PROTOCOL, protocolType: null, protocolName: null, assignment: Buffer.alloc(0) };
  }
  const result = await s.groups.syncGroup({
    groupId: req.groupId,
    generationId: req.generationId,
    memberId: req.memberId,
    groupInstanceId: v >= 3 ? req.groupInstanceId ?? null : null,
    protocolType,
    protocolName,
    assignments: req.assignments,
  });
  return { throttleTimeMs: 0, ...result };
});
