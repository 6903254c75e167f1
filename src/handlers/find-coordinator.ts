// FindCoordinator (key 10), versions 0-6.
// - Key type 0 (group): the leader of the group's __consumer_offsets partition
//   (abs(hash(group.id)) mod the topic's partition count) in the metadata, as Kafka's getCoordinator
//   answers; COORDINATOR_NOT_AVAILABLE while the topic does not exist (the coordinator's start-up
//   creates it), the partition has no leader or its leader is not a live broker, and (unlike
//   Kafka, so that a single broker's clients never meet COORDINATOR_LOAD_IN_PROGRESS after asking)
//   while that leader is this broker and has not loaded the partition yet.
// - Key type 1 (transaction): this broker, the only one, coordinates every key. A transactional
//   id's is the leader of its __transaction_state partition: the first such request creates that topic. Until a
//   coordinator is loaded COORDINATOR_NOT_AVAILABLE, which clients retry. Any other key type is
//   INVALID_REQUEST for every key.
// - v0-3 ask for one key and answer at the top level; v4+ batch coordinatorKeys and answer one
//   entry per key (KIP-699).
// - errorMessage is Kafka's Errors.message(): "NONE" on success.
import { ApiKey } from '../protocol/generated';
import type { FindCoordinatorResponseCoordinator } from '../protocol/generated/FindCoordinatorResponse';
import { ErrorCode, errorMessage } from '../common/errors';
import type { Controller } from '../cluster/controller';
import { coordinatorPartitionFor } from '../cluster/coordinator-partition';
import { GROUP_METADATA_TOPIC_NAME } from '../cluster/topic-names';
import type { GroupCoordinator } from '../group';
import type { TransactionCoordinator } from '../txn';
import { defineHandler } from './handler';

const GROUP_KEY_TYPE = 0;
const TRANSACTION_KEY_TYPE = 1;

type Answer = Omit<FindCoordinatorResponseCoordinator, 'key'>;

export interface FindCoordinatorServices {
  readonly nodeId: number;
  readonly controller: Pick<Controller, 'topic' | 'brokers'>;
  readonly groups: Pick<GroupCoordinator, 'isLoaded'>;
  readonly transactions: Pick<TransactionCoordinator, 'isActive'>;
  /** Creates __transaction_state if needed and loads the transaction coordinator. */
  startTransactions(): Promise<void>;
}

export const findCoordinator = defineHandler(ApiKey.FindCoordinator, { minVersion: 0, maxVersion: 6 }, (s: FindCoordinatorServices) => (req, ctx) => {
  const keyType = req.keyType ?? GROUP_KEY_TYPE;
  const answer = (key: string): Answer =>
    keyType === GROUP_KEY_TYPE || keyType === TRANSACTION_KEY_TYPE ? coordinatorFor(s, key, keyType) : failed(ErrorCode.INVALID_REQUEST);
  if (ctx.apiVersion >= 4) {
    return {
      throttleTimeMs: 0, errorCode: ErrorCode.NONE, nodeId: 0, host: '', port: 0, // (not in v4+)
      coordinators: req.coordinatorKeys.map((key) => ({ key, ...answer(key) })),
    };
  }
  return { throttleTimeMs: 0, ...answer(req.key), coordinators: [] };
});

function coordinatorFor(s: FindCoordinatorServices, key: string, keyType: number): Answer {
  if (keyType === GROUP_KEY_TYPE) {
    const topic = s.controller.topic(GROUP_METADATA_TOPIC_NAME);
    const partition = topic ? coordinatorPartitionFor(key, topic.partitions.length) : -1;
    const leader = topic?.partitions[partition]?.leader ?? -1;
    const node = s.controller.brokers().find((b) => b.nodeId === leader);
    if (!node || (leader === s.nodeId && !s.groups.isLoaded(partition))) return failed(ErrorCode.COORDINATOR_NOT_AVAILABLE);
    return { nodeId: node.nodeId, host: node.host, port: node.port, errorCode: ErrorCode.NONE, errorMessage: 'NONE' };
  }
  if (!s.transactions.isActive()) {
    // The first ask for a transaction coordinator creates __transaction_state, as in Kafka.
    void s.startTransactions();
    return failed(ErrorCode.COORDINATOR_NOT_AVAILABLE);
  }
  const self = s.controller.brokers().find((b) => b.nodeId === s.nodeId);
  if (!self) return failed(ErrorCode.COORDINATOR_NOT_AVAILABLE);
  return { nodeId: self.nodeId, host: self.host, port: self.port, errorCode: ErrorCode.NONE, errorMessage: 'NONE' };
}

function failed(errorCode: number): Answer {
  return { nodeId: -1, host: '', port: -1, errorCode, errorMessage: errorMessage(errorCode) };
}
