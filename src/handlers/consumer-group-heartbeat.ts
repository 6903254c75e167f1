// ConsumerGroupHeartbeat (key 68), versions 0-1: the consumer rebalance protocol (KIP-848), served
// by the group coordinator's consumer groups (src/group/consumer-coordinator.ts).
// - Epoch 0 joins (v0: the coordinator makes the member id; v1: the client's own, required);
//   -1 leaves; -2 is a static member leaving for a while (its instance id stays reserved).
// - The answer: the member id and epoch, the heartbeat interval, and the assignment when joining,
//   on a full request, or when it changed (else null: nothing new); it waits for the group's
//   records, and a failed write is its error, the group as it was before.
// - Errors with Kafka's messages: INVALID_REQUEST, UNSUPPORTED_ASSIGNOR, GROUP_ID_NOT_FOUND (the id
//   of a classic group), UNKNOWN_MEMBER_ID, FENCED_MEMBER_EPOCH, UNRELEASED_INSTANCE_ID,
//   FENCED_INSTANCE_ID, GROUP_MAX_SIZE_REACHED, INVALID_REGULAR_EXPRESSION (v1 SubscribedTopicRegex).
// - A join to a classic group of the consumer protocol upgrades it (group.consumer.migration.policy):
//   its members stay, of the classic protocol; when the last ConsumerGroupHeartbeat member leaves a
//   group of classic members, it is a classic group again.
// - UNSUPPORTED_VERSION while the consumer protocol is off: the finalized group.version is 0, or
//   group.coordinator.rebalance.protocols lacks `consumer` (Kafka's isConsumerGroupProtocolEnabled).
// - Authorization (Kafka's handleConsumerGroupHeartbeat): READ on the group, else
//   GROUP_AUTHORIZATION_FAILED; subscribed topic names the principal may not all DESCRIBE:
//   TOPIC_AUTHORIZATION_FAILED, the heartbeat not taken. (Regex matches are not filtered by ACLs.)
import { ErrorCode } from '../common/errors';
import type { BrokerConfig } from '../config/broker-config';
import { ApiKey } from '../protocol/generated';
import type { GroupCoordinator } from '../group';
import { AclOperation, ResourceType } from '../security/acl';
import { clientHost, defineHandler } from './handler';

/** What tells whether the consumer rebalance protocol is served. */
export interface ConsumerProtocolServices {
  readonly config: Pick<BrokerConfig, 'getList'>;
  /** The finalized group.version feature. */
  groupVersion(): number;
}

/** Kafka's isConsumerGroupProtocolEnabled: `consumer` in group.coordinator.rebalance.protocols, and group.version 1 or more. */
export function consumerProtocolEnabled(s: ConsumerProtocolServices): boolean {
  return s.groupVersion() >= 1 && s.config.getList('group.coordinator.rebalance.protocols').includes('consumer');
}

export interface ConsumerGroupHeartbeatServices extends ConsumerProtocolServices {
  readonly groups: Pick<GroupCoordinator, 'consumerGroupHeartbeat'>;
}

export const consumerGroupHeartbeat = defineHandler(ApiKey.ConsumerGroupHeartbeat, { minVersion: 0, maxVersion: 1 },
  (s: ConsumerGroupHeartbeatServices) => async (req, ctx) => {
    if (!consumerProtocolEnabled(s)) {
      return {
        throttleTimeMs: 0, errorCode: ErrorCode.UNSUPPORTED_VERSION, errorMessage: null, memberId: null, memberEpoch: 0,
        heartbeatIntervalMs: 0, assignment: null,
      };
    }
    const refused = !ctx.authorize(AclOperation.READ, ResourceType.GROUP, req.groupId) ? ErrorCode.GROUP_AUTHORIZATION_FAILED
      : req.subscribedTopicNames?.some((t) => !ctx.authorize(AclOperation.DESCRIBE, ResourceType.TOPIC, t)) ? ErrorCode.TOPIC_AUTHORIZATION_FAILED
        : ErrorCode.NONE;
    if (refused !== ErrorCode.NONE) {
      return { throttleTimeMs: 0, errorCode: refused, errorMessage: null, memberId: null, memberEpoch: 0, heartbeatIntervalMs: 0, assignment: null };
    }
    const result = await s.groups.consumerGroupHeartbeat({
      apiVersion: ctx.apiVersion,
      groupId: req.groupId,
      memberId: req.memberId,
      memberEpoch: req.memberEpoch,
      instanceId: req.instanceId ?? null,
      rackId: req.rackId ?? null,
      rebalanceTimeoutMs: req.rebalanceTimeoutMs ?? -1,
      subscribedTopicNames: req.subscribedTopicNames ?? null,
      subscribedTopicRegex: ctx.apiVersion >= 1 ? req.subscribedTopicRegex ?? null : null,
      serverAssignor: req.serverAssignor ?? null,
      topicPartitions: req.topicPartitions ?? null,
      clientId: ctx.clientId ?? '',
      clientHost: clientHost(ctx),
    });
    return {
      throttleTimeMs: 0,
      errorCode: result.errorCode,
      errorMessage: result.errorMessage,
      memberId: result.memberId,
      memberEpoch: result.memberEpoch,
      heartbeatIntervalMs: result.heartbeatIntervalMs,
      assignment: result.assignment === null ? null : { topicPartitions: result.assignment },
    };
  });
