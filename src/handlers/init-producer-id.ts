// InitProducerId (key 22), versions 0-5.
// - Without a transactional id (idempotent producers): a producer id never handed out before,
//   by this process or an earlier one, with epoch 0 (Kafka's TransactionCoordinator
//   .handleInitProducerId "blindly accepts" these). An existing producerId/epoch in the request
//   (v3+, KIP-360) changes nothing: the producer still gets a new id. transactionTimeoutMs is
//   not looked at.
// - producerId and producerEpoch (v3+) must be both -1 or both set, else INVALID_REQUEST.
// - With a transactional id, the transaction coordinator (src/txn) answers: the id's producer id
//   with its next epoch, which fences any older producer with the same id. An empty id is
//   INVALID_REQUEST, a timeout outside (0, transaction.max.timeout.ms] INVALID_TRANSACTION_TIMEOUT;
//   CONCURRENT_TRANSACTIONS while an earlier transaction of the id is being ended (an Ongoing one
//   is aborted first); PRODUCER_FENCED (INVALID_PRODUCER_EPOCH before v4) for a v3+ request whose
//   producer is not the id's current one; COORDINATOR_LOAD_IN_PROGRESS / NOT_COORDINATOR.
// - Errors answer producerId -1 and producerEpoch -1.
// - Authorization (Kafka's handleInitProducerIdRequest): with a transactional id, WRITE on it (else
//   TRANSACTIONAL_ID_AUTHORIZATION_FAILED); without, IDEMPOTENT_WRITE on the cluster or WRITE on
//   some topic (KIP-679; else CLUSTER_AUTHORIZATION_FAILED).
import type { Logger } from 'pino';
import { ApiKey } from '../protocol/generated';
import type { InitProducerIdResponse } from '../protocol/generated/InitProducerIdResponse';
import { ErrorCode } from '../common/errors';
import type { TransactionCoordinator } from '../txn';
import { producerFencedForVersion } from '../txn/coordinator';
import type { ProducerIdManager } from '../txn/producer-ids';
import { AclOperation, ResourceType } from '../security/acl';
import { authorizeCluster } from './shared/authorization';
import { defineHandler } from './handler';

const NO_PRODUCER_ID = -1n;
const NO_PRODUCER_EPOCH = -1;

export interface InitProducerIdServices {
  readonly transactions: Pick<TransactionCoordinator, 'initProducerId'>;
  readonly producerIds: Pick<ProducerIdManager, 'nextId'>;
  readonly log: Pick<Logger, 'error'>;
}

export const initProducerId = defineHandler(ApiKey.InitProducerId, { minVersion: 0, maxVersion: 5 }, (s: InitProducerIdServices) => async (req, ctx) => {
  const failed = (errorCode: number): InitProducerIdResponse => ({
    throttleTimeMs: 0, errorCode, producerId: NO_PRODUCER_ID, producerEpoch: NO_PRODUCER_EPOCH,
  });
  if (req.transactionalId !== null
    ? !ctx.authorize(AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, req.transactionalId)
    : !authorizeCluster(ctx, AclOperation.IDEMPOTENT_WRITE) && !ctx.authorizeByResourceType(AclOperation.WRITE, ResourceType.TOPIC)) {
    return failed(req.transactionalId !== null ? ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED : ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
  }
  const producerId = req.producerId ?? NO_PRODUCER_ID;
  const producerEpoch = req.producerEpoch ?? NO_PRODUCER_EPOCH;
  if ((producerId === NO_PRODUCER_ID) !== (producerEpoch === NO_PRODUCER_EPOCH)) return failed(ErrorCode.INVALID_REQUEST);

  if (req.transactionalId !== null) {
    const expected = producerId === NO_PRODUCER_ID ? null : { producerId: Number(producerId), producerEpoch };
    const result = await s.transactions.initProducerId(req.transactionalId, req.transactionTimeoutMs, expected);
    if (result.errorCode !== ErrorCode.NONE) return failed(producerFencedForVersion(result.errorCode, ctx.apiVersion, 4));
    return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, producerId: BigInt(result.producerId), producerEpoch: result.producerEpoch };
  }

  let id: number;
  try {
    id = await s.producerIds.nextId();
  } catch (err) {
    s.log.error({ err }, 'could not allocate a producer id');
    return failed(ErrorCode.UNKNOWN_SERVER_ERROR);
  }
  return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, producerId: BigInt(id), producerEpoch: 0 };
});
