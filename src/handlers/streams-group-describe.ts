// StreamsGroupDescribe (key 89), versions 0-1: streams groups (KIP-1071) as the coordinator has them.
// - Per group: state (Empty, NotReady, Assigning, Reconciling, Stable), group epoch, target
//   assignment epoch, the topology (subtopologies with their source, repartition and changelog
//   topics), and each member's process, endpoint, client tags, epochs, tasks and target tasks.
// - GROUP_ID_NOT_FOUND with Kafka's message for an unknown id ("Group X not found.") and for another
//   kind of group's ("Group X is not a streams group."); NOT_COORDINATOR and
//   COORDINATOR_LOAD_IN_PROGRESS as the other group APIs.
// - v1: no topology description (none is stored without a plugin: status NOT_STORED when asked for), the assignor `sticky`.
// - Authorized operations when asked (what the authorizer allows of those a group supports), else Integer.MIN_VALUE.
// - UNSUPPORTED_VERSION for every group while the streams protocol is off (streams.version 0, or no
//   `streams` in group.coordinator.rebalance.protocols), as Kafka.
// - A group the principal may not DESCRIBE: GROUP_AUTHORIZATION_FAILED; a group whose topology uses a
//   topic it may not DESCRIBE: TOPIC_AUTHORIZATION_FAILED, no members, no topology.
import { ErrorCode } from '../common/errors';
import { ApiKey } from '../protocol/generated';
import { authorizedOperations, NOT_REQUESTED } from './shared/authorized-operations';
import type { GroupCoordinator } from '../group';
import { AclOperation, ResourceType } from '../security/acl';
import { defineHandler } from './handler';
import { streamsProtocolEnabled, type StreamsProtocolServices } from './streams-group-heartbeat';

export interface StreamsGroupDescribeServices extends StreamsProtocolServices {
  readonly groups: Pick<GroupCoordinator, 'streamsGroupDescribe'>;
}

export const streamsGroupDescribe = defineHandler(ApiKey.StreamsGroupDescribe, { minVersion: 0, maxVersion: 1 },
  (s: StreamsGroupDescribeServices) => (req, ctx) => ({
    throttleTimeMs: 0,
    groups: req.groupIds.map((groupId) => {
      if (!streamsProtocolEnabled(s)) {
        return { errorCode: ErrorCode.UNSUPPORTED_VERSION, errorMessage: null, groupId, groupState: '', groupEpoch: 0, assignmentEpoch: 0, members: [] };
      }
      const refused = { groupId, groupState: '', groupEpoch: 0, assignmentEpoch: 0, members: [] };
      if (!ctx.authorize(AclOperation.DESCRIBE, ResourceType.GROUP, groupId)) return { ...refused, errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED, errorMessage: null };
      const d = s.groups.streamsGroupDescribe(groupId);
      const topics = new Set(d.topology?.subtopologies.flatMap((st) => [
        ...st.sourceTopics, ...st.repartitionSinkTopics, ...st.repartitionSourceTopics.map((t) => t.name), ...st.stateChangelogTopics.map((t) => t.name),
      ]) ?? []);
      if ([...topics].some((t) => !ctx.authorize(AclOperation.DESCRIBE, ResourceType.TOPIC, t))) {
        return { ...refused, errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED, errorMessage: 'The described group uses topics that the client is not authorized to describe.' };
      }
      return {
        errorCode: d.errorCode,
        errorMessage: d.errorMessage,
        groupId: d.groupId,
        groupState: d.groupState,
        groupEpoch: d.groupEpoch,
        assignmentEpoch: d.assignmentEpoch,
        topology: d.topology === null ? null : {
          epoch: d.topology.epoch,
          subtopologies: d.topology.subtopologies.map((st) => ({
            subtopologyId: st.subtopologyId, sourceTopics: [...st.sourceTopics], repartitionSinkTopics: [...st.repartitionSinkTopics],
            stateChangelogTopics: st.stateChangelogTopics.map((t) => ({ ...t, topicConfigs: [...t.topicConfigs] })),
            repartitionSourceTopics: st.repartitionSourceTopics.map((t) => ({ ...t, topicConfigs: [...t.topicConfigs] })),
          })),
        },
        members: d.members.map((m) => ({ ...m, taskOffsets: [], taskEndOffsets: [], isClassic: false })),
        authorizedOperations: req.includeAuthorizedOperations && d.errorCode === 0
          ? authorizedOperations(ctx, ResourceType.GROUP, groupId) : NOT_REQUESTED,
        topologyDescription: null,
        // NOT_REQUESTED (0), or NOT_STORED (1): no plugin stores descriptions.
        topologyDescriptionStatus: req.includeTopologyDescription && d.errorCode === 0 ? 1 : 0,
        assignorName: d.errorCode === 0 ? 'sticky' : null,
      };
    }),
  }));
