// StreamsGroupHeartbeat (key 88), versions 0-1: the streams rebalance protocol (KIP-1071, Kafka
// Streams' group.protocol=streams), served by the group coordinator's streams groups
// (src/group/streams-coordinator.ts).
// - Epoch 0 joins with the topology (the client's own member id); -1 leaves; -2 is a static
//   member leaving for a while.
// - The answer: the member epoch, the heartbeat interval, the acceptable recovery lag and task
//   offset interval (Kafka's defaults), the statuses (missing source or internal topics, which the
//   broker creates; a stale topology; a requested application shutdown), the tasks when joining or
//   when they changed (else null), and the endpoints' partitions when the client's are out of date.
// - Errors with Kafka's messages: INVALID_REQUEST, STREAMS_INVALID_TOPOLOGY, GROUP_ID_NOT_FOUND (the
//   id of another kind of group), UNKNOWN_MEMBER_ID, FENCED_MEMBER_EPOCH, UNRELEASED_INSTANCE_ID.
// - v1: TopologyDescriptionRequired, always false (no topology description plugin, as Kafka without one).
// - UNSUPPORTED_VERSION while the streams protocol is off: the finalized streams.version is 0, or
//   group.coordinator.rebalance.protocols lacks `streams` (Kafka's isStreamsGroupProtocolEnabled).
// - Authorization (Kafka's handleStreamsGroupHeartbeat): READ on the group, else
//   GROUP_AUTHORIZATION_FAILED; then every topic of a topology sent (source, repartition, changelog)
//   needs DESCRIBE, else TOPIC_AUTHORIZATION_FAILED naming them. A topology naming an internal or
//   invalid topic is left to the coordinator's STREAMS_INVALID_TOPOLOGY, which Kafka answers first.
import { ErrorCode } from '../common/errors';
import type { BrokerConfig } from '../config/broker-config';
import { ApiKey } from '../protocol/generated';
import type { GroupCoordinator } from '../group';
import { isInternalTopic, validateTopicName } from '../cluster/topic-names';
import { AclOperation, ResourceType } from '../security/acl';
import { clientHost, defineHandler } from './handler';

/** What tells whether the streams rebalance protocol is served. */
export interface StreamsProtocolServices {
  readonly config: Pick<BrokerConfig, 'getList'>;
  /** The finalized streams.version feature. */
  streamsVersion(): number;
}

/** Kafka's isStreamsGroupProtocolEnabled: `streams` in group.coordinator.rebalance.protocols, and streams.version 1 or more. */
export function streamsProtocolEnabled(s: StreamsProtocolServices): boolean {
  return s.streamsVersion() >= 1 && s.config.getList('group.coordinator.rebalance.protocols').includes('streams');
}

export interface StreamsGroupHeartbeatServices extends StreamsProtocolServices {
  readonly groups: Pick<GroupCoordinator, 'streamsGroupHeartbeat'>;
}

export const streamsGroupHeartbeat = defineHandler(ApiKey.StreamsGroupHeartbeat, { minVersion: 0, maxVersion: 1 },
  (s: StreamsGroupHeartbeatServices) => (req, ctx) => {
    if (!streamsProtocolEnabled(s)) {
      return {
        throttleTimeMs: 0, errorCode: ErrorCode.UNSUPPORTED_VERSION, errorMessage: null, memberId: req.memberId, memberEpoch: 0,
        heartbeatIntervalMs: 0, acceptableRecoveryLagLegacy: 0, taskOffsetIntervalMs: 0, status: null, endpointInformationEpoch: 0,
      };
    }
    const topology = req.topology ?? null;
    const refusal = (errorCode: number, errorMessage: string | null) => ({
      throttleTimeMs: 0, errorCode, errorMessage, memberId: req.memberId, memberEpoch: 0,
      heartbeatIntervalMs: 0, acceptableRecoveryLagLegacy: 0, taskOffsetIntervalMs: 0, status: null, endpointInformationEpoch: 0,
    });
    if (!ctx.authorize(AclOperation.READ, ResourceType.GROUP, req.groupId)) return refusal(ErrorCode.GROUP_AUTHORIZATION_FAILED, null);
    const required = topology?.subtopologies.flatMap((st) => [
      ...st.sourceTopics, ...st.repartitionSinkTopics, ...st.repartitionSourceTopics.map((t) => t.name), ...st.stateChangelogTopics.map((t) => t.name),
    ]) ?? [];
    if (required.every((t) => !isInternalTopic(t) && validateTopicName(t) === null)) {
      const unauthorized = [...new Set(required)].filter((t) => !ctx.authorize(AclOperation.DESCRIBE, ResourceType.TOPIC, t));
      if (unauthorized.length > 0) return refusal(ErrorCode.TOPIC_AUTHORIZATION_FAILED, `Unauthorized topics: ${unauthorized.join(',')}`);
    }
    const r = s.groups.streamsGroupHeartbeat({
      groupId: req.groupId,
      memberId: req.memberId,
      memberEpoch: req.memberEpoch,
      endpointInformationEpoch: req.endpointInformationEpoch,
      instanceId: req.instanceId ?? null,
      rackId: req.rackId ?? null,
      rebalanceTimeoutMs: req.rebalanceTimeoutMs ?? -1,
      topology: topology === null ? null : {
        epoch: topology.epoch,
        subtopologies: topology.subtopologies.map((st) => ({
          subtopologyId: st.subtopologyId, sourceTopics: st.sourceTopics, repartitionSinkTopics: st.repartitionSinkTopics,
          stateChangelogTopics: st.stateChangelogTopics, repartitionSourceTopics: st.repartitionSourceTopics,
          copartitionGroups: st.copartitionGroups,
        })),
      },
      sourceTopicRegexes: topology?.subtopologies.flatMap((st) => st.sourceTopicRegex) ?? [],
      activeTasks: req.activeTasks ?? null,
      standbyTasks: req.standbyTasks ?? null,
      warmupTasks: req.warmupTasks ?? null,
      processId: req.processId ?? null,
      userEndpoint: req.userEndpoint ?? null,
      clientTags: req.clientTags ?? null,
      shutdownApplication: req.shutdownApplication ?? false,
      clientId: ctx.clientId ?? '',
      clientHost: clientHost(ctx),
    });
    return {
      throttleTimeMs: 0,
      errorCode: r.errorCode,
      errorMessage: r.errorMessage,
      memberId: r.memberId,
      memberEpoch: r.memberEpoch,
      heartbeatIntervalMs: r.heartbeatIntervalMs,
      // v0's int32 field, replaced by v1's int64 one: Kafka 4.4 leaves it 0.
      acceptableRecoveryLagLegacy: 0,
      acceptableRecoveryLag: BigInt(r.acceptableRecoveryLag),
      taskOffsetIntervalMs: r.taskOffsetIntervalMs,
      status: r.status,
      activeTasks: r.activeTasks,
      standbyTasks: r.standbyTasks,
      warmupTasks: r.warmupTasks,
      topologyDescriptionRequired: false,
      endpointInformationEpoch: r.endpointInformationEpoch,
      partitionsByUserEndpoint: r.partitionsByUserEndpoint,
    };
  });
