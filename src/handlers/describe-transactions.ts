// DescribeTransactions (key 65), version 0 (KIP-664).
// - Per transactional id: its state by Kafka's name ("Ongoing", "CompleteCommit", ...), timeout,
//   start time, producer id and epoch, and the partitions of its transaction.
// - TRANSACTIONAL_ID_NOT_FOUND for an id the coordinator does not know, INVALID_REQUEST for an empty
//   one, COORDINATOR_LOAD_IN_PROGRESS while __transaction_state loads, COORDINATOR_NOT_AVAILABLE
//   before it exists.
// - A transactional id the principal may not DESCRIBE: TRANSACTIONAL_ID_AUTHORIZATION_FAILED; the
//   partitions of topics it may not DESCRIBE are left out of a transaction's.
import { ApiKey } from '../protocol/generated';
import type { DescribeTransactionsResponseTopicData } from '../protocol/generated/DescribeTransactionsResponse';
import type { TransactionCoordinator } from '../txn';
import { ErrorCode } from '../common/errors';
import { AclOperation, ResourceType } from '../security/acl';
import { defineHandler } from './handler';

export interface DescribeTransactionsServices {
  readonly transactions: Pick<TransactionCoordinator, 'describe'>;
}

export const describeTransactions = defineHandler(ApiKey.DescribeTransactions, { minVersion: 0, maxVersion: 0 },
  (s: DescribeTransactionsServices) => (req, ctx) => ({
    throttleTimeMs: 0,
    transactionStates: req.transactionalIds.map((id) => {
      if (!ctx.authorize(AclOperation.DESCRIBE, ResourceType.TRANSACTIONAL_ID, id)) {
        return {
          errorCode: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, transactionalId: id, transactionState: '', transactionTimeoutMs: 0,
          transactionStartTimeMs: -1n, producerId: -1n, producerEpoch: -1, topics: [],
        };
      }
      const d = s.transactions.describe(id);
      const topics: DescribeTransactionsResponseTopicData[] = [];
      const describable = new Map<string, boolean>();
      for (const tp of d.partitions) {
        let allowed = describable.get(tp.topic);
        if (allowed === undefined) describable.set(tp.topic, (allowed = ctx.authorize(AclOperation.DESCRIBE, ResourceType.TOPIC, tp.topic)));
        if (!allowed) continue;
        let topic = topics.find((t) => t.topic === tp.topic);
        if (!topic) topics.push((topic = { topic: tp.topic, partitions: [] }));
        topic.partitions.push(tp.partition);
      }
      return {
        errorCode: d.errorCode, transactionalId: id, transactionState: d.state, transactionTimeoutMs: d.timeoutMs,
        transactionStartTimeMs: BigInt(d.startTimeMs), producerId: BigInt(d.producerId), producerEpoch: d.producerEpoch, topics,
      };
    }),
  }));
