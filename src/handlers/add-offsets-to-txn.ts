// AddOffsetsToTxn (key 25), versions 0-4.
// - Adds the group's partition of __consumer_offsets to the transaction, so that EndTxn writes a
//   marker there too and the offsets TxnOffsetCommit sends become visible (or are dropped) with it.
// - The coordinator's answers as for AddPartitionsToTxn: INVALID_PRODUCER_ID_MAPPING, PRODUCER_FENCED
//   (INVALID_PRODUCER_EPOCH before v2), CONCURRENT_TRANSACTIONS, COORDINATOR_LOAD_IN_PROGRESS /
//   NOT_COORDINATOR; COORDINATOR_NOT_AVAILABLE until __consumer_offsets is there.
// - Authorization: WRITE on the transactional id (else TRANSACTIONAL_ID_AUTHORIZATION_FAILED), then READ
//   on the group (else GROUP_AUTHORIZATION_FAILED).
import { ApiKey } from '../protocol/generated';
import { ErrorCode } from '../common/errors';
import { GROUP_METADATA_TOPIC_NAME } from '../cluster/topic-names';
import type { GroupCoordinator } from '../group';
import type { TransactionCoordinator } from '../txn';
import { producerFencedForVersion } from '../txn/coordinator';
import { AclOperation, ResourceType } from '../security/acl';
import { defineHandler } from './handler';

export interface AddOffsetsToTxnServices {
  readonly groups: Pick<GroupCoordinator, 'isActive' | 'partitionFor'>;
  readonly transactions: Pick<TransactionCoordinator, 'addPartitions'>;
}

export const addOffsetsToTxn = defineHandler(ApiKey.AddOffsetsToTxn, { minVersion: 0, maxVersion: 4 }, (s: AddOffsetsToTxnServices) => async (req, ctx) => {
  if (!ctx.authorize(AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, req.transactionalId)) {
    return { throttleTimeMs: 0, errorCode: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED };
  }
  if (!ctx.authorize(AclOperation.READ, ResourceType.GROUP, req.groupId)) return { throttleTimeMs: 0, errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED };
  if (!s.groups.isActive()) return { throttleTimeMs: 0, errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE };
  const offsetsPartition = { topic: GROUP_METADATA_TOPIC_NAME, partition: s.groups.partitionFor(req.groupId) };
  const errorCode = await s.transactions.addPartitions(req.transactionalId, Number(req.producerId), req.producerEpoch, [offsetsPartition]);
  return { throttleTimeMs: 0, errorCode: producerFencedForVersion(errorCode, ctx.apiVersion, 2) };
});
