// EndTxn (key 26), versions 0-5.
// - Commits or aborts the producer's ongoing transaction: PrepareCommit/PrepareAbort in
//   __transaction_state, a marker in every partition of the transaction, then CompleteCommit/
//   CompleteAbort; answered once the markers are in.
// - Retrying a commit (abort) that is already complete is NONE; the opposite of a completed one,
//   or ending a transaction that has not started, INVALID_TXN_STATE; while the markers are being
//   written, CONCURRENT_TRANSACTIONS. INVALID_PRODUCER_ID_MAPPING, PRODUCER_FENCED
//   (INVALID_PRODUCER_EPOCH before v2), COORDINATOR_LOAD_IN_PROGRESS / NOT_COORDINATOR.
// - v5 is a transaction version 2 client (KIP-890 part 2, as Kafka decides it from the version alone):
//   every end bumps the epoch (an abort with no transaction open too), the markers carry the new
//   epoch, and the answer gives the producer id and epoch to go on with: the bumped epoch, or a new
//   producer id at epoch 0 once the epoch runs out. A retry (the epoch before the bump) of the end that
//   completed answers NONE with them again; -1 and -1 on errors. v4 and before keep version 1's rules.
// - Without WRITE on the transactional id: TRANSACTIONAL_ID_AUTHORIZATION_FAILED, nothing ended.
import { ApiKey } from '../protocol/generated';
import type { TransactionCoordinator } from '../txn';
import { producerFencedForVersion } from '../txn/coordinator';
import { EPOCH_BUMP_TRANSACTION_VERSION } from '../txn/transaction-metadata';
import { ErrorCode } from '../common/errors';
import { AclOperation, ResourceType } from '../security/acl';
import { defineHandler } from './handler';

export interface EndTxnServices {
  readonly transactions: Pick<TransactionCoordinator, 'endTransaction'>;
}

export const endTxn = defineHandler(ApiKey.EndTxn, { minVersion: 0, maxVersion: 5 }, (s: EndTxnServices) => async (req, ctx) => {
  if (!ctx.authorize(AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, req.transactionalId)) {
    return { throttleTimeMs: 0, errorCode: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, producerId: -1n, producerEpoch: -1 };
  }
  const clientTransactionVersion = ctx.apiVersion >= 5 ? EPOCH_BUMP_TRANSACTION_VERSION : 0;
  const ended = await s.transactions.endTransaction(req.transactionalId, Number(req.producerId), req.producerEpoch, req.committed,
    clientTransactionVersion);
  return {
    throttleTimeMs: 0, errorCode: producerFencedForVersion(ended.errorCode, ctx.apiVersion, 2),
    producerId: BigInt(ended.producerId), producerEpoch: ended.producerEpoch,
  };
});
