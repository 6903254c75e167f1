// FindCoordinator (key 10), versions 0-6.
// - Key type 0 (group) and 1 (transaction): this broker, the only one, coordinates every key.
//   A group's coordinator is the leader of its __consumer_offsets partition
//   (abs(hash(group.id)) mod the topic's partition count), which is this broker once the topic
//   exists; the group coordinator must also have loaded it. A transactional id's is the leader of
//   its __transaction_state partition in the metadata, as Kafka answers: the first such request
//   creates that topic. Until there is a coordinator COORDINATOR_NOT_AVAILABLE (no topic yet, no
//   leader, or this broker leads the partition but has not loaded it yet: unlike Kafka, so that the
//   coordinator named is ready when it is this one), which clients retry. Any other key type is
//   INVALID_REQUEST for every key.
// - v0-3 ask for one key and answer at the top level; v4+ batch coordinatorKeys and answer one
//   entry per key (KIP-699).
// - errorMessage is Kafka's Errors.message(): "NONE" on success.
import { ApiKey } from '../protocol/generated';
import type { FindCoordinatorResponseCoordinator } from '../protocol/generated/FindCoordinatorResponse';
import { ErrorCode, errorMessage } from '../common/errors';
import type { Controller } from '../cluster/controller';
import { GROUP_METADATA_TOPIC_NAME, TRANSACTION_STATE_TOPIC_NAME } from '../cluster/topic-names';
import type { GroupCoordinator } from '../group';
import type { TransactionCoordinator } from '../txn';
import { defineHandler } from './handler';

const GROUP_KEY_TYPE = 0;
const TRANSACTION_KEY_TYPE = 1;

type Answer = Omit<FindCoordinatorResponseCoordinator, 'key'>;

export interface FindCoordinatorServices {
  readonly nodeId: number;
  readonly controller: Pick<Controller, 'topic' | 'brokers'>;
  readonly groups: Pick<GroupCoordinator, 'isActive' | 'partitionFor'>;
  readonly transactions: Pick<TransactionCoordinator, 'partitionFor' | 'isLoaded'>;
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
    if (!s.groups.isActive() || !topic?.partitions[s.groups.partitionFor(key)]) {
      return failed(ErrorCode.COORDINATOR_NOT_AVAILABLE);
    }
  } else {
    return transactionCoordinator(s, key);
  }
  const self = s.controller.brokers().find((b) => b.nodeId === s.nodeId);
  if (!self) return failed(ErrorCode.COORDINATOR_NOT_AVAILABLE);
  return { nodeId: self.nodeId, host: self.host, port: self.port, errorCode: ErrorCode.NONE, errorMessage: 'NONE' };
}

/** The leader of the id's __transaction_state partition, from the metadata. */
function transactionCoordinator(s: FindCoordinatorServices, key: string): Answer {
  const topic = s.controller.topic(TRANSACTION_STATE_TOPIC_NAME);
  // The first ask for a transaction coordinator creates __transaction_state, as in Kafka.
  if (!topic) void s.startTransactions();
  const partition = topic ? s.transactions.partitionFor(key) : -1;
  const leader = topic?.partitions[partition]?.leader ?? -1;
  if (leader === s.nodeId && !s.transactions.isLoaded(partition)) return failed(ErrorCode.COORDINATOR_NOT_AVAILABLE);
  const node = s.controller.brokers().find((b) => b.nodeId === leader);
  if (!node) return failed(ErrorCode.COORDINATOR_NOT_AVAILABLE);
  return { nodeId: node.nodeId, host: node.host, port: node.port, errorCode: ErrorCode.NONE, errorMessage: 'NONE' };
}

function failed(errorCode: number): Answer {
  return { nodeId: -1, host: '', port: -1, errorCode, errorMessage: errorMessage(errorCode) };
}
