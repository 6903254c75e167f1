// JoinGroup (key 11), versions 0-9: the classic group coordinator's join phase (src/group/coordinator.ts).
// - The answer waits until the join phase ends (every member rejoined, or the rebalance timeout,
//   or group.initial.rebalance.delay.ms for a group's first rebalance); the leader gets every
//   member's metadata for the chosen protocol, the others none.
// - v0 has no rebalance timeout: the session timeout stands for it, as in Kafka.
// - v4+ (KIP-394): a first join without member id gets MEMBER_ID_REQUIRED and an id
//   (`${clientId}-${uuid}`) to join with.
// - v5+ carry group.instance.id (KIP-345 static membership; FENCED_INSTANCE_ID for a stale member id).
// - v7+ answer protocolType and a nullable protocolName (older versions get "" for none).
// - v9 (KIP-814): a restarted static leader of a Stable group is told skipAssignment.
// - To a consumer group (KIP-848) the classic protocol's requests are its classic members'
//   (src/group/consumer-coordinator.ts): the answer comes at once, generation = member epoch, no
//   leader and no members; an empty consumer group gives way to a classic one.
// - Errors: INVALID_GROUP_ID, INVALID_SESSION_TIMEOUT, INCONSISTENT_GROUP_PROTOCOL,
//   UNKNOWN_MEMBER_ID, GROUP_MAX_SIZE_REACHED, COORDINATOR_LOAD_IN_PROGRESS, REBALANCE_IN_PROGRESS
//   (a retried join replaces a still-parked one).
// - Without READ on the group: GROUP_AUTHORIZATION_FAILED (Kafka's error response: generation -1, no member id).
import { ApiKey } from '../protocol/generated';
import type { GroupCoordinator } from '../group';
import { ErrorCode } from '../common/errors';
import { AclOperation, ResourceType } from '../security/acl';
import { clientHost, defineHandler } from './handler';

export interface JoinGroupServices {
  readonly groups: Pick<GroupCoordinator, 'joinGroup'>;
}

export const joinGroup = defineHandler(ApiKey.JoinGroup, { minVersion: 0, maxVersion: 9 }, (s: JoinGroupServices) => async (req, ctx) => {
  const v = ctx.apiVersion;
  if (!ctx.authorize(AclOperation.READ, ResourceType.GROUP, req.groupId)) {
    return {
      throttleTimeMs: 0, errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED, generationId: -1, protocolType: null,
      protocolName: v >= 7 ? null : '', leader: '', skipAssignment: false, memberId: '', members: [],
    };
  }
  const result = await s.groups.joinGroup({
    groupId: req.groupId,
    memberId: req.memberId,
    groupInstanceId: v >= 5 ? req.groupInstanceId ?? null : null,
    clientId: ctx.clientId ?? '',
    clientHost: clientHost(ctx),
    rebalanceTimeoutMs: v >= 1 ? req.rebalanceTimeoutMs ?? req.sessionTimeoutMs : req.sessionTimeoutMs,
    sessionTimeoutMs: req.sessionTimeoutMs,
    protocolType: req.protocolType,
    protocols: req.protocols,
    requireKnownMemberId: v >= 4,
    supportSkippingAssignment: v >= 9,
  });
  return {
    throttleTimeMs: 0,
    errorCode: result.errorCode,
    generationId: result.generationId,
    protocolType: result.protocolType,
    protocolName: v >= 7 ? result.protocolName : result.protocolName ?? '',
    leader: result.leader,
    skipAssignment: result.skipAssignment,
    memberId: result.memberId,
    members: result.members.map((m) => ({ memberId: m.memberId, groupInstanceId: m.groupInstanceId, metadata: m.metadata })),
  };
});
