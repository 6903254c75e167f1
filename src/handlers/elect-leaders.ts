// ElectLeaders (key 43), versions 0-2.
// - ElectionType (v1+; v0 is always PREFERRED): 0 PREFERRED moves leadership back to the first
//   replica when it is alive and in sync; 1 UNCLEAN gives a leaderless partition a leader, an
//   out-of-sync live replica if no ISR member is alive (what only the old ISR had is lost).
// - Per partition (the Controller, as Kafka's ReplicationControlManager.electLeaders): NONE once the
//   new leader is written, ELECTION_NOT_NEEDED (the preferred replica leads / the partition has a
//   leader), PREFERRED_LEADER_NOT_AVAILABLE, ELIGIBLE_LEADERS_NOT_AVAILABLE,
//   UNKNOWN_TOPIC_OR_PARTITION ("No such topic as ...", "No such partition as ...").
// - TopicPartitions null: every partition of every topic; the answer lists every topic but leaves out
//   the partitions that needed no election.
// - Any other election type: INVALID_REQUEST at the top (v1+) and for every partition asked,
//   "Unknown election type N", as Kafka's ElectLeadersRequest.getErrorResponse.
// - TimeoutMs is not waited on: the answer comes once the elections are written.
// - Without ALTER on the cluster: CLUSTER_AUTHORIZATION_FAILED for the request and each partition named.
import { ApiKey } from '../protocol/generated';
import type { ElectLeadersRequest } from '../protocol/generated/ElectLeadersRequest';
import type { ElectLeadersResponse } from '../protocol/generated/ElectLeadersResponse';
import { ErrorCode } from '../common/errors';
import type { Controller } from '../cluster/controller';
import type { RequestedElection } from '../cluster/partition-change';
import { AclOperation } from '../security/acl';
import { authorizeCluster, CLUSTER_AUTHORIZATION_MESSAGE } from './shared/authorization';
import { defineHandler } from './handler';

export interface ElectLeadersServices {
  readonly controller: Pick<Controller, 'electLeaders'>;
}

/** Kafka's ElectionType values. */
const ELECTION_TYPES: Readonly<Record<number, RequestedElection>> = { 0: 'preferred', 1: 'unclean' };

export const electLeaders = defineHandler(ApiKey.ElectLeaders, { minVersion: 0, maxVersion: 2 }, (s: ElectLeadersServices) => async (req, ctx) => {
  if (!authorizeCluster(ctx, AclOperation.ALTER)) return failed(req.topicPartitions, ErrorCode.CLUSTER_AUTHORIZATION_FAILED, CLUSTER_AUTHORIZATION_MESSAGE);
  // v0 has no election type: it decodes as 0 (PREFERRED).
  const electionType = req.electionType;
  const type = ELECTION_TYPES[electionType];
  if (type === undefined) return failed(req.topicPartitions, ErrorCode.INVALID_REQUEST, `Unknown election type ${electionType}`);
  const results = await s.controller.electLeaders(type, req.topicPartitions);
  return {
    throttleTimeMs: 0,
    errorCode: ErrorCode.NONE,
    replicaElectionResults: results.map((t) => ({
      topic: t.topic,
      partitionResult: t.partitions.map((p) => ({ partitionId: p.partition, errorCode: p.outcome.errorCode, errorMessage: p.outcome.errorMessage })),
    })),
  };
});

/** Kafka's ElectLeadersRequest.getErrorResponse: the error for the request and each partition named. */
function failed(topicPartitions: ElectLeadersRequest['topicPartitions'], errorCode: number, errorMessage: string): ElectLeadersResponse {
  return {
    throttleTimeMs: 0,
    errorCode,
    replicaElectionResults: (topicPartitions ?? []).map((t) => ({
      topic: t.topic,
      partitionResult: t.partitions.map((partitionId) => ({ partitionId, errorCode, errorMessage })),
    })),
  };
}
