// EndTxn (key 26), versions 0-5.
// - Commits or aborts the producer's ongoing transaction: PrepareCommit/PrepareAbort in
//   __transaction_state, a marker in every partition of the transaction, then CompleteCommit/
//   CompleteAbort; answered once the markers are in.
// - Retrying a commit (abort) that is already complete is NONE; the opposite of a completed one,
//   or ending a transaction that has not started, INVALID_TXN_STATE; while the markers are being
//   written, CONCURRENT_TRANSACTIONS. INVALID_PRODUCER_ID_MAPPING, PRODUCER_FENCED
//   (INVALID_PRODUCER_EPOCH before v2), COORDINATOR_LOAD_IN_PROGRESS / NOT_COORDINATOR.
// - v5 answers the producer id and epoch to use next. Fjord serves transaction version 1 (it does
//   not advertise the transaction.version feature, so clients do not use KIP-890 part 2): the epoch
//   is not bumped and v5 answers the same id and epoch (-1 and -1 on errors).
import { ApiKey } from '../protocol/generated';
import { ErrorCode } from '../common/errors';
import type { TransactionCoordinator } from '../txn';
import { producerFencedForVersion } from '../txn/coordinator';
import { defineHandler } from './handler';

export interface EndTxnServices {
  readonly transactions: Pick<TransactionCoordinator, 'endTransaction'>;
}

export const endTxn = defineHandler(ApiKey.EndTxn, { minVersion: 0, maxVersion: 5 }, (s: EndTxnServices) => async (req, ctx) => {
  const errorCode = await s.transactions.endTransaction(req.transactionalId, Number(req.producerId), req.producerEpoch, req.committed);
  const ok = errorCode === ErrorCode.NONE;
  return {
    throttleTimeMs: 0, errorCode: producerFencedForVersion(errorCode, ctx.apiVersion, 2),
    producerId: ok ? req.producerId : -1n, producerEpoch: ok ? req.producerEpoch : -1,
  };
});
