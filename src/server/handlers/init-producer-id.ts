// InitProducerId (key 22), versions 0-5.
// - Without a transactional id (idempotent producers): a producer id never handed out before,
//   by this process or an earlier one, with epoch 0 (Kafka's TransactionCoordinator
//   .handleInitProducerId "blindly accepts" these). An existing producerId/epoch in the request
//   (v3+, KIP-360) changes nothing: the producer still gets a new id. transactionTimeoutMs is
//   not looked at.
// - producerId and producerEpoch (v3+) must be both -1 or both set, else INVALID_REQUEST.
// - With a transactional id: an empty one is INVALID_REQUEST and a timeout outside
//   (0, transaction.max.timeout.ms] INVALID_TRANSACTION_TIMEOUT, as Kafka checks them; any other
//   gets UNSUPPORTED_VERSION until transactions land. Clients reach this only past a
//   FindCoordinator we do not serve; a non-retriable error makes a transactional producer fail
//   at once (the Java client: a fatal KafkaException naming the error) instead of retrying
//   until its timeout, as COORDINATOR_NOT_AVAILABLE or NOT_COORDINATOR would make it.
// - Errors answer producerId -1 and producerEpoch -1.
import { ApiKey } from '../../protocol/generated';
import type { InitProducerIdRequest } from '../../protocol/generated/InitProducerIdRequest';
import type { InitProducerIdResponse } from '../../protocol/generated/InitProducerIdResponse';
import { ErrorCode } from '../../protocol/errors';
import type { HandlerFactory } from '../router';

const NO_PRODUCER_ID = -1n;
const NO_PRODUCER_EPOCH = -1;

export const initProducerId: HandlerFactory = (broker) => ({
  apiKey: ApiKey.InitProducerId,
  name: 'InitProducerId',
  minVersion: 0,
  maxVersion: 5,
  async handle(req: InitProducerIdRequest): Promise<InitProducerIdResponse> {
    const failed = (errorCode: number): InitProducerIdResponse => ({
      throttleTimeMs: 0, errorCode, producerId: NO_PRODUCER_ID, producerEpoch: NO_PRODUCER_EPOCH,
    });
    const producerId = req.producerId ?? NO_PRODUCER_ID;
    const producerEpoch = req.producerEpoch ?? NO_PRODUCER_EPOCH;
    if ((producerId === NO_PRODUCER_ID) !== (producerEpoch === NO_PRODUCER_EPOCH)) return failed(ErrorCode.INVALID_REQUEST);

    if (req.transactionalId !== null) {
      if (req.transactionalId === '') return failed(ErrorCode.INVALID_REQUEST);
      const maxTimeoutMs = broker.config.getInt('transaction.max.timeout.ms');
      if (req.transactionTimeoutMs <= 0 || req.transactionTimeoutMs > maxTimeoutMs) return failed(ErrorCode.INVALID_TRANSACTION_TIMEOUT);
      return failed(ErrorCode.UNSUPPORTED_VERSION);
    }

    let id: number;
    try {
      id = await broker.producerIds.nextId();
    } catch (err) {
      broker.log.error({ err }, 'could not allocate a producer id');
      return failed(ErrorCode.UNKNOWN_SERVER_ERROR);
    }
    return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, producerId: BigInt(id), producerEpoch: 0 };
  },
});
