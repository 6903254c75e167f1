// ListTransactions (key 66), versions 0-1 (KIP-664; v1 adds the duration filter, KIP-994).
// - Every transactional id the coordinator knows that matches all the filters: states by Kafka's
//   names, producer ids, and (v1) started more than DurationFilter ms ago; an empty list or -1
//   filters nothing. Filter names that are no state come back in unknownStateFilters.
// - COORDINATOR_LOAD_IN_PROGRESS while __transaction_state loads.
import { ApiKey } from '../protocol/generated';
import type { TransactionCoordinator } from '../txn';
import { defineHandler } from './handler';

export interface ListTransactionsServices {
  readonly transactions: Pick<TransactionCoordinator, 'list'>;
}

export const listTransactions = defineHandler(ApiKey.ListTransactions, { minVersion: 0, maxVersion: 1 }, (s: ListTransactionsServices) => (req) => {
  const listed = s.transactions.list(req.stateFilters, req.producerIdFilters.map(Number), Number(req.durationFilter ?? -1n));
  return {
    throttleTimeMs: 0, errorCode: listed.errorCode, unknownStateFilters: listed.unknownStateFilters,
    transactionStates: listed.transactions.map((t) => ({ transactionalId: t.transactionalId, producerId: BigInt(t.producerId), transactionState: t.state })),
  };
});
