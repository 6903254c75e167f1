// AddPartitionsToTxn (key 24), versions 0-5.
// - v0-3: one transaction (the producer's own request), of a transaction version 1 client. v4+ (KIP-890):
//   a batch of transactions from partition leaders, each either added to (for a transaction version 2
//   producer's write, so at version 2) or, with verifyOnly, checked against the coordinator's state; a
//   top-level error.
// - Partitions the metadata does not have: UNKNOWN_TOPIC_OR_PARTITION, and every other
//   partition of that transaction OPERATION_NOT_ATTEMPTED (nothing is added), as Kafka answers.
// - Otherwise every partition gets the coordinator's answer: NONE once the new partition set is in
//   __transaction_state; INVALID_PRODUCER_ID_MAPPING, PRODUCER_FENCED (INVALID_PRODUCER_EPOCH before
//   v2), CONCURRENT_TRANSACTIONS while the transaction is being committed or aborted,
//   COORDINATOR_LOAD_IN_PROGRESS / NOT_COORDINATOR.
// - verifyOnly: NONE for a partition in the transaction, else TRANSACTION_ABORTABLE (v5) or
//   INVALID_TXN_STATE (v4).
// - Authorization (Kafka's handleAddPartitionsToTxnRequest): v4+ (brokers) needs CLUSTER_ACTION on the
//   cluster, else CLUSTER_AUTHORIZATION_FAILED for the request; v3- needs WRITE on the transactional
//   id, else TRANSACTIONAL_ID_AUTHORIZATION_FAILED for every partition. Every version needs WRITE on
//   each topic (never granted for internal topics below v4: a broker adds __consumer_offsets for a
//   transaction version 2 offset commit): TOPIC_AUTHORIZATION_FAILED for its partitions,
//   before UNKNOWN_TOPIC_OR_PARTITION, and OPERATION_NOT_ATTEMPTED for the others.
import { ApiKey } from '../protocol/generated';
import type { AddPartitionsToTxnRequestAddPartitionsToTxnTopic } from '../protocol/generated/AddPartitionsToTxnRequest';
import type { AddPartitionsToTxnResponseAddPartitionsToTxnTopicResult } from '../protocol/generated/AddPartitionsToTxnResponse';
import { ErrorCode } from '../common/errors';
import type { Controller } from '../cluster/controller';
import type { TransactionCoordinator } from '../txn';
import { producerFencedForVersion } from '../txn/coordinator';
import { EPOCH_BUMP_TRANSACTION_VERSION, type TopicPartition } from '../txn/transaction-metadata';
import { isInternalTopic } from '../cluster/topic-names';
import { AclOperation, ResourceType } from '../security/acl';
import { authorizeCluster } from './shared/authorization';
import { defineHandler, type RequestContext } from './handler';

export interface AddPartitionsToTxnServices {
  readonly controller: Pick<Controller, 'topic'>;
  readonly transactions: Pick<TransactionCoordinator, 'addPartitions' | 'verifyPartitions'>;
}

interface TransactionRequest {
  transactionalId: string;
  producerId: bigint;
  producerEpoch: number;
  verifyOnly: boolean;
  topics: AddPartitionsToTxnRequestAddPartitionsToTxnTopic[];
}

export const addPartitionsToTxn = defineHandler(ApiKey.AddPartitionsToTxn, { minVersion: 0, maxVersion: 5 },
  (s: AddPartitionsToTxnServices) => async (req, ctx) => {
    const v = ctx.apiVersion;
    if (v <= 3) {
      const t = {
        transactionalId: req.v3AndBelowTransactionalId, producerId: req.v3AndBelowProducerId,
        producerEpoch: req.v3AndBelowProducerEpoch, verifyOnly: false, topics: req.v3AndBelowTopics,
      };
      const topicResults = ctx.authorize(AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, t.transactionalId)
        ? await addToTransaction(s, ctx, t, v) : everyPartition(t.topics, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
      return { throttleTimeMs: 0, resultsByTransaction: [], resultsByTopicV3AndBelow: topicResults };
    }
    if (!authorizeCluster(ctx, AclOperation.CLUSTER_ACTION)) {
      return { throttleTimeMs: 0, errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, resultsByTransaction: [], resultsByTopicV3AndBelow: [] };
    }
    const resultsByTransaction = await Promise.all(req.transactions.map(async (t) => ({
      transactionalId: t.transactionalId,
      topicResults: await addToTransaction(s, ctx, { ...t, verifyOnly: t.verifyOnly ?? false }, v),
    })));
    return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, resultsByTransaction, resultsByTopicV3AndBelow: [] };
  });

async function addToTransaction(
  s: AddPartitionsToTxnServices, ctx: RequestContext, t: TransactionRequest, v: number,
): Promise<AddPartitionsToTxnResponseAddPartitionsToTxnTopicResult[]> {
  const partitions: TopicPartition[] = t.topics.flatMap((topic) => topic.partitions.map((partition) => ({ topic: topic.name, partition })));
  const writable = new Set(t.topics.map((topic) => topic.name)
    // Brokers (v4+) add __consumer_offsets for transaction version 2 offset commits; clients may not.
    .filter((name) => (v >= 4 || !isInternalTopic(name)) && ctx.authorize(AclOperation.WRITE, ResourceType.TOPIC, name)));
  const refusal = (tp: TopicPartition): number => (!writable.has(tp.topic) ? ErrorCode.TOPIC_AUTHORIZATION_FAILED
    : s.controller.topic(tp.topic)?.partitions[tp.partition] === undefined ? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION : ErrorCode.NONE);
  let errors: number[];
  if (partitions.some((tp) => refusal(tp) !== ErrorCode.NONE)) {
    errors = partitions.map((tp) => refusal(tp) || ErrorCode.OPERATION_NOT_ATTEMPTED);
  } else {
    const producerId = Number(t.producerId);
    const answer = t.verifyOnly
      ? s.transactions.verifyPartitions(t.transactionalId, producerId, t.producerEpoch, partitions,
        v >= 5 ? ErrorCode.TRANSACTION_ABORTABLE : ErrorCode.INVALID_TXN_STATE)
      : await s.transactions.addPartitions(t.transactionalId, producerId, t.producerEpoch, partitions,
        v >= 4 ? EPOCH_BUMP_TRANSACTION_VERSION : 0);
    errors = typeof answer === 'number' ? partitions.map(() => producerFencedForVersion(answer, v, 2)) : answer;
  }
  let i = 0;
  return t.topics.map((topic) => ({
    name: topic.name,
    resultsByPartition: topic.partitions.map((partitionIndex) => ({ partitionIndex, partitionErrorCode: errors[i++] })),
  }));
}

function everyPartition(topics: AddPartitionsToTxnRequestAddPartitionsToTxnTopic[], partitionErrorCode: number): AddPartitionsToTxnResponseAddPartitionsToTxnTopicResult[] {
  return topics.map((topic) => ({ name: topic.name, resultsByPartition: topic.partitions.map((partitionIndex) => ({ partitionIndex, partitionErrorCode })) }));
}
