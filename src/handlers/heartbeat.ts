// Heartbeat (key 12), versions 0-4: keeps a member's session alive.
// - NONE in CompletingRebalance and Stable; REBALANCE_IN_PROGRESS while a join phase runs (the
//   member must rejoin); UNKNOWN_MEMBER_ID for a member the group does not have (or an Empty
//   group); ILLEGAL_GENERATION for another generation; FENCED_INSTANCE_ID for a static member's
//   stale member id (v3+ group.instance.id); INVALID_GROUP_ID for an empty group id.
// - While the coordinator loads, heartbeats are answered NONE blindly, as Kafka does.
import { ApiKey } from '../protocol/generated';
import type { HeartbeatRequest } from '../protocol/generated/HeartbeatRequest';
import type { HeartbeatResponse } from '../protocol/generated/HeartbeatResponse';
import type { HandlerFactory } from '../net/router';

export const heartbeat: HandlerFactory = (broker) => ({
  apiKey: ApiKey.Heartbeat,
  name: 'Heartbeat',
  minVersion: 0,
  maxVersion: 4,
  handle(req: HeartbeatRequest, ctx): HeartbeatResponse {
    const groupInstanceId = ctx.apiVersion >= 3 ? req.groupInstanceId ?? null : null;
    return { throttleTimeMs: 0, errorCode: broker.groups.heartbeat(req.groupId, req.memberId, groupInstanceId, req.generationId) };
  },
});
