// Produce (key 0), versions 3-13 served; 0-2 advertised and refused, as Kafka 4 does.
// - Advertising v0 matters: librdkafka up to 2.11 silently stops compressing when a broker's
//   lowest Produce version is above 0 (KAFKA-18659). Requests at v0-2 get UNSUPPORTED_VERSION
//   for every partition.
// - acks must be -1, 0 or 1 (else INVALID_REQUIRED_ACKS). acks=-1 needs at least
//   min.insync.replicas in the ISR before the append (else NOT_ENOUGH_REPLICAS), and answers once
//   every in-sync replica has the records (NOT_ENOUGH_REPLICAS_AFTER_APPEND if the ISR shrank below
//   it meanwhile, REQUEST_TIMED_OUT after the request's timeoutMs). A single broker is its own ISR.
// - Each partition is validated and appended by the ReplicaManager (one v2 batch, CRC, sizes,
//   timestamps, idempotent sequences); a rejected partition writes nothing, the others proceed.
//   Partitions of one request take their place in each partition's order with no await between
//   them, so pipelined requests keep their order, even when a compressed batch is still being
//   checked off the event loop (its partition's later appends wait for it); the response waits
//   for every write.
// - A producer's first transactional batch on a partition is checked with the transaction
//   coordinator (transaction.partition.verification.enable, KIP-890 part 1): a partition not in
//   its transaction gets TRANSACTION_ABORTABLE (INVALID_TXN_STATE before v11), a fenced producer
//   INVALID_PRODUCER_EPOCH, a transaction being ended NOT_ENOUGH_REPLICAS (which clients retry).
// - v12+ is a transaction version 2 producer (KIP-890 part 2), which sends no AddPartitionsToTxn: its
//   first transactional batch on a partition has the coordinator add the partition to its transaction
//   before the append (same errors). A write from a transaction already ended meets the marker's
//   bumped epoch: INVALID_PRODUCER_EPOCH.
// - A partition still loading at start-up (after a crash, being recovered) answers
//   NOT_LEADER_OR_FOLLOWER, as Kafka does for a partition it does not host yet: clients retry.
// - v13 names topics by id (KIP-516), resolved once per topic: an unknown id is UNKNOWN_TOPIC_ID
//   for each of its partitions, and the answer names each topic by the id it was sent. v12 is v11
//   on the wire (it tells the broker the producer may leave AddPartitionsToTxn to it).
// - Authorization (Kafka's KafkaApis.handleProduceRequest): transactional batches need WRITE on the
//   request's transactional id (else TRANSACTIONAL_ID_AUTHORIZATION_FAILED for every partition);
//   each topic needs WRITE (else TOPIC_AUTHORIZATION_FAILED for its partitions, whether it exists or
//   not; an unknown topic id is UNKNOWN_TOPIC_ID first). Idempotence is checked at InitProducerId,
//   not here (KIP-679). One check per topic, none per partition.
// - acks=0: no response at all. If any partition failed, the connection is closed instead, so
//   the client notices (Kafka does the same).
import { ApiKey } from '../protocol/generated';
import type { ProduceRequest } from '../protocol/generated/ProduceRequest';
import type { ProduceResponse, ProduceResponsePartitionProduceResponse } from '../protocol/generated/ProduceResponse';
import { ErrorCode } from '../common/errors';
import { ZERO_UUID } from '../protocol/primitives';
import { hasTransactionalBatch } from '../records/batch';
import { AclOperation, ResourceType } from '../security/acl';
import type { Controller } from '../cluster/controller';
import {
  failedAppend, NO_LEADER_EPOCH, type AppendResult, type Partition, type PartitionAppend, type ReplicaManager,
} from '../replica/replica-manager';
import { defineHandler, type RequestContext } from './handler';

/** The lowest Produce version Kafka 4 actually serves (KIP-896). */
const MIN_SERVED_VERSION = 3;

export interface ProduceServices {
  readonly controller: Pick<Controller, 'topicById'>;
  readonly replicas: Pick<ReplicaManager, 'leaderPartition' | 'partitionLoading' | 'append' | 'checkEnoughReplicasForAppend' | 'waitForInSyncReplicas'>;
}

export const produce = defineHandler(ApiKey.Produce, { minVersion: 0, maxVersion: 13 },
  (s: ProduceServices) => async (req, ctx): Promise<ProduceResponse | null> => {
    const nowMs = Date.now();
    const requestError = ctx.apiVersion < MIN_SERVED_VERSION ? ErrorCode.UNSUPPORTED_VERSION
      : req.acks !== -1 && req.acks !== 0 && req.acks !== 1 ? ErrorCode.INVALID_REQUIRED_ACKS
        : transactionalIdDenied(req.transactionalId ?? null, req.topicData, ctx.authorize) ? ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
          : ErrorCode.NONE;
    const usesTopicIds = ctx.apiVersion >= 13;
    const appends: { topic: string; topicId: string; index: number; partition?: Partition; result: AppendResult }[] = [];
    for (const t of req.topicData) {
      const topicId = t.topicId ?? ZERO_UUID;
      const topic = usesTopicIds ? s.controller.topicById(topicId)?.name : t.name ?? '';
      const writable = requestError === ErrorCode.NONE && topic !== undefined && ctx.authorize(AclOperation.WRITE, ResourceType.TOPIC, topic);
      for (const p of t.partitionData) {
        let result: AppendResult;
        const found = topic === undefined || !writable ? undefined : s.replicas.leaderPartition(topic, p.index, NO_LEADER_EPOCH);
        const partition = found === undefined || 'errorCode' in found ? undefined : found.partition;
        if (requestError !== ErrorCode.NONE) result = failedAppend(requestError);
        else if (topic === undefined) result = failedAppend(ErrorCode.UNKNOWN_TOPIC_ID);
        else if (found === undefined) result = failedAppend(ErrorCode.TOPIC_AUTHORIZATION_FAILED);
        else if ('errorCode' in found) result = failedAppend(found.errorCode);
        else if (req.acks === -1 && s.replicas.checkEnoughReplicasForAppend(found.partition) !== ErrorCode.NONE) {
          result = failedAppend(ErrorCode.NOT_ENOUGH_REPLICAS);
        } else {
          result = s.replicas.append(found.partition, p.records, found.leaderEpoch,
            { produceVersion: ctx.apiVersion, nowMs, transactionalId: req.transactionalId });
        }
        appends.push({ topic: topic ?? topicId, topicId, index: p.index, partition, result });
      }
    }

    // Appends queued behind a compressed batch answer once they have had their turn; the others have already.
    const answered = appends.some((a) => a.result instanceof Promise)
      ? await Promise.all(appends.map((a) => a.result))
      : appends.map((a) => a.result as PartitionAppend);
    if (req.acks === 0) {
      const failed = answered.findIndex((r) => r.errorCode !== ErrorCode.NONE);
      if (failed >= 0) {
        const { topic, index } = appends[failed];
        ctx.closeConnection(`acks=0 produce to ${topic}-${index} failed with error ${answered[failed].errorCode}`);
      }
      return null;
    }
    const written = await Promise.allSettled(answered.map((r) => r.done));
    // acks=all: each written append then waits for the in-sync replicas (at once on a single broker):
    // the request's remote time.
    const waitStarted = performance.now();
    const replicated = req.acks === -1 ? await Promise.all(appends.map((a, i) =>
      (a.partition && written[i].status === 'fulfilled' && answered[i].errorCode === ErrorCode.NONE
        ? s.replicas.waitForInSyncReplicas(a.partition, answered[i].lastOffset, req.timeoutMs) : ErrorCode.NONE))) : undefined;
    if (replicated) ctx.waitedRemotely?.(waitStarted);
    const responses = new Map<string, { name: string; topicId: string; partitionResponses: ProduceResponsePartitionProduceResponse[] }>();
    appends.forEach((a, i) => {
      const replicationError = replicated?.[i] ?? ErrorCode.NONE;
      const r = written[i].status !== 'fulfilled' ? failedAppend(ErrorCode.KAFKA_STORAGE_ERROR)
        : replicationError !== ErrorCode.NONE ? failedAppend(replicationError) : answered[i];
      const key = usesTopicIds ? a.topicId : a.topic;
      let topic = responses.get(key);
      if (!topic) responses.set(key, (topic = { name: usesTopicIds ? '' : a.topic, topicId: a.topicId, partitionResponses: [] }));
      topic.partitionResponses.push({
        index: a.index, errorCode: r.errorCode, baseOffset: BigInt(r.baseOffset), logAppendTimeMs: BigInt(r.logAppendTimeMs),
        logStartOffset: BigInt(r.logStartOffset), errorMessage: r.errorMessage,
        recordErrors: r.recordErrors.map((e) => ({ batchIndex: e.batchIndex, batchIndexErrorMessage: e.message })),
      });
    });
    return {
      responses: [...responses.values()],
      throttleTimeMs: 0,
    };
  });

/**
 * Whether the request carries transactional batches its transactional id may not write (Kafka's
 * RequestUtils.hasTransactionalRecords, then WRITE on TRANSACTIONAL_ID); an allowed id spares the scan.
 */
function transactionalIdDenied(
  transactionalId: string | null, topics: ProduceRequest['topicData'], authorize: RequestContext['authorize'],
): boolean {
  if (transactionalId !== null && authorize(AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, transactionalId)) return false;
  for (const t of topics) {
    for (const p of t.partitionData) if (p.records !== null && hasTransactionalBatch(p.records)) return true;
  }
  return false;
}
