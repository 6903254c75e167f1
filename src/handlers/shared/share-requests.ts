// What ShareFetch and ShareAcknowledge do alike (Kafka's KafkaApis): check the request, apply a
// partition's acknowledgement batches once checked, and tell a client that asked the wrong broker
// where a partition's leader is.
import { ErrorCode } from '../../common/errors';
import type { Controller } from '../../cluster/controller';
import { AclOperation, ResourceType } from '../../security/acl';
import { validateAcknowledgements } from '../../share/in-flight-records';
import { AcknowledgeType, type AcknowledgementBatch } from '../../share/share-partition';
import type { ShareFetchPartition, SharePartitionManager } from '../../share/share-partition-manager';
import type { ShareSessionPartition } from '../../share/share-sessions';
import type { RequestContext } from '../handler';

/** What tells whether share groups are served. */
export interface ShareProtocolServices {
  /** The finalized share.version feature. */
  shareVersion(): number;
}

/** Kafka's isShareGroupProtocolEnabled: share.version 1 or more. */
export function shareProtocolEnabled(s: ShareProtocolServices): boolean {
  return s.shareVersion() >= 1;
}

/** Kafka's isMemberIdValid: a member id is given, not empty, and at most 36 characters. */
export function isMemberIdValid(memberId: string | null): memberId is string {
  return memberId !== null && memberId.length > 0 && memberId.length <= 36;
}

/** A whole ShareFetch or ShareAcknowledge answered with one error. */
export function shareRequestRefusal(errorCode: number, errorMessage: string | null = null) {
  return { throttleTimeMs: 0, errorCode, errorMessage, acquisitionLockTimeoutMs: 0, responses: [] as never[], nodeEndpoints: [] as never[] };
}

/**
 * What ShareFetch and ShareAcknowledge check of the request before its partitions (Kafka's order):
 * share groups served, a group id, READ on the group, a valid member id. The ids once checked, or the error.
 */
export function checkShareRequest(
  s: ShareProtocolServices, ctx: RequestContext, groupId: string | null, memberId: string | null,
): { groupId: string; memberId: string } | { errorCode: number; errorMessage: string | null } {
  const refused = (errorCode: number, errorMessage: string | null = null) => ({ errorCode, errorMessage });
  if (!shareProtocolEnabled(s)) return refused(ErrorCode.UNSUPPORTED_VERSION);
  if (groupId === null) return refused(ErrorCode.INVALID_REQUEST, 'Invalid group id in the request.');
  if (!ctx.authorize(AclOperation.READ, ResourceType.GROUP, groupId)) return refused(ErrorCode.GROUP_AUTHORIZATION_FAILED);
  if (!isMemberIdValid(memberId)) return refused(ErrorCode.INVALID_REQUEST, 'Invalid member id in the request.');
  return { groupId, memberId };
}

interface RequestBatch {
  readonly firstOffset: bigint;
  readonly lastOffset: bigint;
  readonly acknowledgeTypes: readonly number[];
}

/** Errors after which the client looks for the partition's leader: the response tells it where. */
export function needsLeader(errorCode: number): boolean {
  return errorCode === ErrorCode.NOT_LEADER_OR_FOLLOWER || errorCode === ErrorCode.FENCED_LEADER_EPOCH;
}

export interface LeaderEndpoint {
  readonly nodeId: number;
  readonly host: string;
  readonly port: number;
  readonly rack: string | null;
}

/**
 * The current leader and epoch of a partition by the metadata, and the leaders' endpoints on the
 * request's listener (NodeEndpoints) for those of `partitions` that need one.
 */
export function currentLeaders(
  controller: Pick<Controller, 'topic' | 'brokers'>, listenerName: string,
  partitions: ReadonlyArray<{ topicName: string; partition: number; errorCode: number }>,
): { leaderOf: (topicName: string, partition: number) => { leaderId: number; leaderEpoch: number }; nodeEndpoints: LeaderEndpoint[] } {
  const leaderOf = (topicName: string, partition: number) => {
    const p = controller.topic(topicName)?.partitions[partition];
    return p ? { leaderId: p.leader, leaderEpoch: p.leaderEpoch } : { leaderId: -1, leaderEpoch: -1 };
  };
  const wanted = new Set(partitions.filter((p) => needsLeader(p.errorCode)).map((p) => leaderOf(p.topicName, p.partition).leaderId).filter((id) => id >= 0));
  const nodeEndpoints = wanted.size === 0 ? [] : controller.brokers(listenerName).filter((b) => wanted.has(b.nodeId))
    .map((b) => ({ nodeId: b.nodeId, host: b.host, port: b.port, rack: b.rack }));
  return { leaderOf, nodeEndpoints };
}

/** A partition's acknowledgement batches as a request carries them. */
export interface RequestBatches extends ShareSessionPartition {
  readonly batches: readonly RequestBatch[];
}

/** READ on a topic, asked once per topic name of the request. */
export function topicReadability(ctx: RequestContext): (topicName: string) => boolean {
  const asked = new Map<string, boolean>();
  return (topicName) => {
    let allowed = asked.get(topicName);
    if (allowed === undefined) asked.set(topicName, allowed = ctx.authorize(AclOperation.READ, ResourceType.TOPIC, topicName));
    return allowed;
  };
}

/** One partition's acknowledgements: the refusal of its topic, a malformed batch, or the share-partition's answer. */
export async function acknowledgePartition(
  sharePartitions: Pick<SharePartitionManager, 'acknowledge'>, apiVersion: number, isRenewAck: boolean, groupId: string, memberId: string,
  p: ShareFetchPartition, batches: readonly RequestBatch[], refusal: number,
): Promise<number> {
  if (refusal !== ErrorCode.NONE) return refusal;
  const acknowledgements = batches as readonly AcknowledgementBatch[];
  // RENEW only from v2 on, in a request that says IsRenewAck (KIP-1222).
  const renewAllowed = apiVersion >= 2 && isRenewAck;
  if (!renewAllowed && acknowledgements.some((b) => b.acknowledgeTypes.includes(AcknowledgeType.RENEW))) return ErrorCode.INVALID_REQUEST;
  const invalid = validateAcknowledgements(acknowledgements);
  if (invalid !== ErrorCode.NONE) return invalid;
  return sharePartitions.acknowledge(groupId, memberId, p, acknowledgements);
}
