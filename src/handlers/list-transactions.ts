// ListTransactions (key 66), versions 0-2 (KIP-664; v1 adds the duration filter, KIP-994; v2 the
// transactional id pattern, KIP-1152).
// - Every transactional id the coordinator knows that matches all the filters: states by Kafka's
//   names, producer ids, (v1) started more than DurationFilter ms ago, and (v2) a transactional id
//   the TransactionalIdPattern matches whole; an empty list, -1, or a null or empty pattern filters
//   nothing. Filter names that are no state come back in unknownStateFilters.
// - The pattern is a regular expression as Kafka's RE2/J reads it (src/common/re2-pattern.ts); one
//   it cannot compile answers INVALID_REGULAR_EXPRESSION.
// - COORDINATOR_LOAD_IN_PROGRESS while __transaction_state loads (before the pattern is looked at).
// - Only the transactional ids the principal may DESCRIBE are listed.
import { ApiKey } from '../protocol/generated';
import { ErrorCode } from '../common/errors';
import { compileRe2Pattern, type Re2Pattern } from '../common/re2-pattern';
import type { TransactionCoordinator } from '../txn';
import { AclOperation, ResourceType } from '../security/acl';
import { defineHandler } from './handler';

export interface ListTransactionsServices {
  readonly transactions: Pick<TransactionCoordinator, 'list'>;
}

export const listTransactions = defineHandler(ApiKey.ListTransactions, { minVersion: 0, maxVersion: 2 }, (s: ListTransactionsServices) => (req, ctx) => {
  const listed = s.transactions.list(req.stateFilters, req.producerIdFilters.map(Number), Number(req.durationFilter ?? -1n));
  const patternText = req.transactionalIdPattern ?? '';
  let pattern: Re2Pattern | undefined;
  try {
    if (listed.errorCode === ErrorCode.NONE && patternText !== '') pattern = compileRe2Pattern(patternText);
  } catch {
    return { throttleTimeMs: 0, errorCode: ErrorCode.INVALID_REGULAR_EXPRESSION, unknownStateFilters: [], transactionStates: [] };
  }
  const matching = listed.transactions.filter((t) => (!pattern || pattern.matches(t.transactionalId))
    && ctx.authorize(AclOperation.DESCRIBE, ResourceType.TRANSACTIONAL_ID, t.transactionalId));
  return {
    throttleTimeMs: 0, errorCode: listed.errorCode, unknownStateFilters: listed.unknownStateFilters,
    transactionStates: matching.map((t) => ({ transactionalId: t.transactionalId, producerId: BigInt(t.producerId), transactionState: t.state })),
  };
});
