// DescribeTransactions (key 65), version 0 (KIP-664).
// - Per transactional id: its state by Kafka's name ("Ongoing", "CompleteCommit", ...), timeout,
//   start time, producer id and epoch, and the partitions of its transaction.
// - TRANSACTIONAL_ID_NOT_FOUND for an id the coordinator does not know, INVALID_REQUEST for an empty
//   one, COORDINATOR_LOAD_IN_PROGRESS while __transaction_state loads, COORDINATOR_NOT_AVAILABLE
//   before it exists.
import { ApiKey } from '../protocol/generated';
import type { DescribeTransactionsResponseTopicData } from '../protocol/generated/DescribeTransactionsResponse';
import type { TransactionCoordinator } from '../txn';
import { defineHandler } from './handler';

export interface DescribeTransactionsServices {
  readonly transactions: Pick<TransactionCoordinator, 'describe'>;
}

export const describeTransactions = defineHandler(ApiKey.DescribeTransactions, { minVersion: 0, maxVersion: 0 },
  (s: DescribeTransactionsServices) => (req) => ({
    throttleTimeMs: 0,
    transactionStates: req.transactionalIds.map((id) => {
      const d = s.transactions.describe(id);
      const topics: DescribeTransactionsResponseTopicData[] = [];
      for (const tp of d.partitions) {
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
