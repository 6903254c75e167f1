// ShareFetch (key 78), versions 1-2 (KIP-932): a share consumer's fetch, as Kafka's
// KafkaApis.handleShareFetchRequest.
// - Request-level errors (ErrorCode, no partitions): UNSUPPORTED_VERSION while share.version is 0; a null group id or a member id that is empty or
//   over 36 characters INVALID_REQUEST; no READ on the group GROUP_AUTHORIZATION_FAILED; v2's
//   IsRenewAck with MaxBytes, MinBytes, MaxRecords or MaxWaitMs not 0 INVALID_REQUEST; the share
//   session's errors (SHARE_SESSION_NOT_FOUND, INVALID_SHARE_SESSION_EPOCH, SHARE_SESSION_LIMIT_REACHED,
//   INVALID_REQUEST for acknowledgements in an epoch 0 request), answered after MaxWaitMs as Kafka
//   does, so that a client does not spin.
// - Per partition: an unknown topic id UNKNOWN_TOPIC_ID, no READ on the topic TOPIC_AUTHORIZATION_FAILED,
//   a partition not led here NOT_LEADER_OR_FOLLOWER with CurrentLeader and NodeEndpoints (the
//   request's listener) so the client finds the leader, the share-partition's load errors.
// - Acknowledgements first (AcknowledgeErrorCode per partition: INVALID_REQUEST for malformed
//   batches, the share-partition's INVALID_RECORD_STATE...), then acquisition over the session's
//   partitions: Records (whole batches holding acquired records), AcquiredRecords with their
//   delivery counts, up to MaxRecords in all and min(MaxBytes, fetch.max.bytes) of records.
//   Long polling up to MaxWaitMs while nothing is acquirable (share/share-partition-manager.ts).
// - Epoch -1 fetches nothing: its acknowledgements apply, then the session ends and the member's
//   records are released. v2 IsRenewAck fetches nothing either (acknowledgements only).
// - A full session (epoch 0) answers every partition; an incremental one only those with records,
//   an error or acknowledgements. AcquisitionLockTimeoutMs is the group's share.record.lock.duration.ms.
// - v2 ShareAcquireMode: batch_optimized (0, the default) may finish a batch past MaxRecords,
//   record_limit (1) never exceeds it; another value INVALID_REQUEST. BatchSize is not used.
import { ApiKey } from '../protocol/generated';
import type { ShareFetchResponse, ShareFetchResponsePartitionData } from '../protocol/generated/ShareFetchResponse';
import { ErrorCode } from '../common/errors';
import type { BrokerConfig } from '../config/broker-config';
import type { Controller } from '../cluster/controller';
import type { SharePartitionManager, ShareFetchPartition } from '../share/share-partition-manager';
import type { ShareSessionPartition } from '../share/share-sessions';
import { defineHandler } from './handler';
import { acknowledgePartition, checkShareRequest, currentLeaders, shareRequestRefusal, type ShareProtocolServices, topicReadability, type RequestBatches } from './shared/share-requests';

export interface ShareFetchServices extends ShareProtocolServices {
  readonly config: Pick<BrokerConfig, 'getInt'>;
  readonly controller: Pick<Controller, 'topicById' | 'topic' | 'brokers'>;
  readonly sharePartitions: Pick<SharePartitionManager, 'sessions' | 'fetch' | 'acknowledge' | 'endSession' | 'settings'>;
}

/** One partition of the answer while it is being built. */
interface PartitionAnswer {
  readonly topicId: string;
  readonly topicName: string;
  readonly partition: number;
  errorCode: number;
  acknowledgeErrorCode: number;
  acknowledged: boolean;
  records: Buffer;
  acquired: ShareFetchResponsePartitionData['acquiredRecords'];
}

const NO_RECORDS = Buffer.alloc(0);
/** v2's ShareAcquireMode (KIP-1206): whole batches past MaxRecords, or MaxRecords exactly. */
const BATCH_OPTIMIZED = 0;
const RECORD_LIMIT = 1;

export const shareFetch = defineHandler(ApiKey.ShareFetch, { minVersion: 1, maxVersion: 2 }, (s: ShareFetchServices) => async (req, ctx): Promise<ShareFetchResponse> => {
  const checked = checkShareRequest(s, ctx, req.groupId ?? null, req.memberId);
  if ('errorCode' in checked) return shareRequestRefusal(checked.errorCode, checked.errorMessage);
  const { groupId, memberId } = checked;
  const isRenewAck = ctx.apiVersion >= 2 && (req.isRenewAck ?? false);
  if (isRenewAck) {
    const nonZero = ([['MaxBytes', req.maxBytes ?? 0], ['MinBytes', req.minBytes], ['MaxRecords', req.maxRecords], ['MaxWaitMs', req.maxWaitMs]] as const)
      .filter(([, v]) => v !== 0).map(([name]) => name);
    if (nonZero.length > 0) return shareRequestRefusal(ErrorCode.INVALID_REQUEST, `${nonZero.join(', ')} must be 0 in a share fetch with IsRenewAck set.`);
  }
  const acquireMode = ctx.apiVersion >= 2 ? req.shareAcquireMode ?? BATCH_OPTIMIZED : BATCH_OPTIMIZED;
  if (acquireMode !== BATCH_OPTIMIZED && acquireMode !== RECORD_LIMIT) return shareRequestRefusal(ErrorCode.INVALID_REQUEST, `Unknown share acquire mode: ${acquireMode}`);

  const requested: ShareSessionPartition[] = [];
  const acknowledgements = new Map<string, RequestBatches>();
  for (const t of req.topics) {
    for (const p of t.partitions) {
      requested.push({ topicId: t.topicId, partition: p.partitionIndex });
      if (p.acknowledgementBatches.length > 0) acknowledgements.set(`${t.topicId}:${p.partitionIndex}`, { topicId: t.topicId, partition: p.partitionIndex, batches: p.acknowledgementBatches });
    }
  }
  const forgotten = req.forgottenTopicsData.flatMap((t) => t.partitions.map((partition) => ({ topicId: t.topicId, partition })));
  const context = s.sharePartitions.sessions.fetchContext(groupId, memberId, req.shareSessionEpoch, requested, forgotten, acknowledgements.size > 0, ctx);
  if (context.kind === 'error') {
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, req.maxWaitMs)));
    return shareRequestRefusal(context.errorCode);
  }

  // The partitions acknowledged and those of the session, each once, in the order named.
  const answers = new Map<string, PartitionAnswer>();
  const answerOf = (p: ShareSessionPartition): PartitionAnswer => {
    const key = `${p.topicId}:${p.partition}`;
    let answer = answers.get(key);
    if (!answer) {
      answer = {
        topicId: p.topicId, topicName: s.controller.topicById(p.topicId)?.name ?? '', partition: p.partition, errorCode: ErrorCode.NONE,
        acknowledgeErrorCode: ErrorCode.NONE, acknowledged: false, records: NO_RECORDS, acquired: [],
      };
      answers.set(key, answer);
    }
    return answer;
  };
  const readable = topicReadability(ctx);
  const refusal = (a: PartitionAnswer): number =>
    a.topicName === '' ? ErrorCode.UNKNOWN_TOPIC_ID : readable(a.topicName) ? ErrorCode.NONE : ErrorCode.TOPIC_AUTHORIZATION_FAILED;

  await Promise.all([...acknowledgements.values()].map(async (a) => {
    const answer = answerOf(a);
    answer.acknowledged = true;
    answer.acknowledgeErrorCode = await acknowledgePartition(s.sharePartitions, ctx.apiVersion, isRenewAck, groupId, memberId, answer, a.batches, refusal(answer));
  }));

  if (context.kind === 'final') {
    await s.sharePartitions.endSession(groupId, memberId);
  } else {
    const fetched: PartitionAnswer[] = [];
    for (const p of context.partitions) {
      const answer = answerOf(p);
      answer.errorCode = refusal(answer);
      if (answer.errorCode === ErrorCode.NONE && !isRenewAck) fetched.push(answer);
    }
    if (fetched.length > 0) {
      const results = await s.sharePartitions.fetch({
        groupId, memberId, maxWaitMs: req.maxWaitMs, maxRecords: req.maxRecords, recordLimit: acquireMode === RECORD_LIMIT,
        maxBytes: Math.min(req.maxBytes ?? 0x7fffffff, s.config.getInt('fetch.max.bytes')), allocate: ctx.responseBuffer,
      }, fetched as ShareFetchPartition[]);
      fetched.forEach((answer, i) => {
        const r = results[i];
        answer.errorCode = r.errorCode;
        answer.records = r.records;
        answer.acquired = r.acquired.map((a) => ({ firstOffset: a.firstOffset, lastOffset: a.lastOffset, deliveryCount: a.deliveryCount }));
      });
    }
  }

  const included = [...answers.values()].filter((a) => context.kind !== 'incremental'
    || a.acknowledged || a.errorCode !== ErrorCode.NONE || a.records.length > 0 || a.acquired.length > 0);
  const { leaderOf, nodeEndpoints } = currentLeaders(s.controller, ctx.session.listenerName, included);
  const responses: ShareFetchResponse['responses'] = [];
  for (const a of included) {
    let topic = responses[responses.length - 1];
    if (topic?.topicId !== a.topicId) responses.push(topic = { topicId: a.topicId, partitions: [] });
    topic.partitions.push({
      partitionIndex: a.partition, errorCode: a.errorCode, errorMessage: null,
      acknowledgeErrorCode: a.acknowledgeErrorCode, acknowledgeErrorMessage: null,
      currentLeader: leaderOf(a.topicName, a.partition),
      records: a.records, acquiredRecords: a.acquired,
    });
  }
  return {
    throttleTimeMs: 0, errorCode: ErrorCode.NONE, errorMessage: null,
    acquisitionLockTimeoutMs: s.sharePartitions.settings(groupId).recordLockDurationMs, responses, nodeEndpoints,
  };
});
