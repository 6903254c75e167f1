// FindCoordinator (key 10), versions 0-6.
// - Key type 0 (group): the leader of the group's __consumer_offsets partition
//   (abs(hash(group.id)) mod the topic's partition count) in the metadata, as Kafka's getCoordinator
//   answers. Key type 1 (transaction): the leader of the id's __transaction_state partition; the
//   first such request creates that topic, as in Kafka.
// - COORDINATOR_NOT_AVAILABLE, which clients retry, while the topic does not exist, the partition
//   has no leader or its leader is not a live broker, and (unlike Kafka, so that the coordinator
//   named is ready when it is this broker) while this broker leads the partition but has not
//   loaded it yet, or when the leader has no endpoint on the listener the request came in on (the
//   answer names the coordinator's endpoint of that listener, as Kafka's). Any other key type is
//   INVALID_REQUEST for every key.
// - v0-3 ask for one key and answer at the top level; v4+ batch coordinatorKeys and answer one
//   entry per key (KIP-699).
// - errorMessage is Kafka's Errors.message(): "NONE" on success.
// - Each key needs DESCRIBE on its group (else GROUP_AUTHORIZATION_FAILED) or transactional id (else
//   TRANSACTIONAL_ID_AUTHORIZATION_FAILED), with no node.
// - Key type 2 (share, KIP-932; brokers ask it for their share-partitions): v6 only (INVALID_REQUEST
//   below); CLUSTER_ACTION on the cluster, else CLUSTER_AUTHORIZATION_FAILED; the key is
//   "groupId:topicId:partition" as Kafka's SharePartitionKey.getInstance reads it (split on ':', the
//   last two parts a base64url topic id and an int, the rest a group id not blank), else
//   INVALID_REQUEST; the answer is the leader of the key's __share_group_state partition (the key
//   hashed as Kafka prints it back), and the first such request creates that topic.
import { ApiKey } from '../protocol/generated';
import type { FindCoordinatorResponseCoordinator } from '../protocol/generated/FindCoordinatorResponse';
import { ErrorCode, errorMessage } from '../common/errors';
import type { Controller } from '../cluster/controller';
import { coordinatorPartitionFor } from '../cluster/coordinator-partition';
import { GROUP_METADATA_TOPIC_NAME, SHARE_GROUP_STATE_TOPIC_NAME, TRANSACTION_STATE_TOPIC_NAME } from '../cluster/topic-names';
import type { GroupCoordinator } from '../group';
import type { TransactionCoordinator } from '../txn';
import type { ShareCoordinator } from '../share-state';
import { parseSharePartitionKey, shareStatePartitionFor } from '../share-state/share-state-log';
import type { SharePartitionKey } from '../share-state/persister';
import { authorizeCluster } from './shared/authorization';
import { AclOperation, ResourceType } from '../security/acl';
import { defineHandler } from './handler';

const GROUP_KEY_TYPE = 0;
const TRANSACTION_KEY_TYPE = 1;
const SHARE_KEY_TYPE = 2;

type Answer = Omit<FindCoordinatorResponseCoordinator, 'key'>;

export interface FindCoordinatorServices {
  readonly nodeId: number;
  readonly controller: Pick<Controller, 'topic' | 'brokers'>;
  readonly groups: Pick<GroupCoordinator, 'isLoaded'>;
  readonly transactions: Pick<TransactionCoordinator, 'isLoaded'>;
  readonly shareCoordinator: Pick<ShareCoordinator, 'isLoaded'>;
  /** Creates __transaction_state if needed and loads the transaction coordinator. */
  startTransactions(): Promise<void>;
  /** Creates __share_group_state if needed and loads the share coordinator. */
  startShareCoordinator(): Promise<void>;
}

export const findCoordinator = defineHandler(ApiKey.FindCoordinator, { minVersion: 0, maxVersion: 6 }, (s: FindCoordinatorServices) => (req, ctx) => {
  const keyType = req.keyType ?? GROUP_KEY_TYPE;
  const answer = (key: string): Answer => {
    if (keyType === GROUP_KEY_TYPE) {
      return ctx.authorize(AclOperation.DESCRIBE, ResourceType.GROUP, key) ? coordinatorFor(s, key, keyType, ctx.session.listenerName) : failed(ErrorCode.GROUP_AUTHORIZATION_FAILED);
    }
    if (keyType === TRANSACTION_KEY_TYPE) {
      return ctx.authorize(AclOperation.DESCRIBE, ResourceType.TRANSACTIONAL_ID, key)
        ? coordinatorFor(s, key, keyType, ctx.session.listenerName) : failed(ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
    }
    if (keyType === SHARE_KEY_TYPE) {
      if (ctx.apiVersion < 6) return failed(ErrorCode.INVALID_REQUEST);
      if (!authorizeCluster(ctx, AclOperation.CLUSTER_ACTION)) return failed(ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
      const shareKey = parseSharePartitionKey(key);
      return shareKey ? shareCoordinatorFor(s, shareKey, ctx.session.listenerName) : failed(ErrorCode.INVALID_REQUEST);
    }
    return failed(ErrorCode.INVALID_REQUEST);
  };
  if (ctx.apiVersion >= 4) {
    return {
      throttleTimeMs: 0, errorCode: ErrorCode.NONE, nodeId: 0, host: '', port: 0, // (not in v4+)
      coordinators: req.coordinatorKeys.map((key) => ({ key, ...answer(key) })),
    };
  }
  return { throttleTimeMs: 0, ...answer(req.key), coordinators: [] };
});

function coordinatorFor(s: FindCoordinatorServices, key: string, keyType: number, listenerName: string): Answer {
  if (keyType === GROUP_KEY_TYPE) return leaderOf(s, GROUP_METADATA_TOPIC_NAME, (n) => coordinatorPartitionFor(key, n), listenerName, (p) => s.groups.isLoaded(p));
  // The first ask for a transaction coordinator creates __transaction_state, as in Kafka.
  if (!s.controller.topic(TRANSACTION_STATE_TOPIC_NAME)) void s.startTransactions();
  return leaderOf(s, TRANSACTION_STATE_TOPIC_NAME, (n) => coordinatorPartitionFor(key, n), listenerName, (p) => s.transactions.isLoaded(p));
}

function shareCoordinatorFor(s: FindCoordinatorServices, key: SharePartitionKey, listenerName: string): Answer {
  // The first ask for a share coordinator creates __share_group_state, as in Kafka.
  if (!s.controller.topic(SHARE_GROUP_STATE_TOPIC_NAME)) void s.startShareCoordinator();
  return leaderOf(s, SHARE_GROUP_STATE_TOPIC_NAME, (n) => shareStatePartitionFor(key, n), listenerName, (p) => s.shareCoordinator.isLoaded(p));
}

/** The leader of the key's partition of an internal topic, from the metadata (see the file comment). */
function leaderOf(s: FindCoordinatorServices, topicName: string, partitionOf: (numPartitions: number) => number, listenerName: string,
  isLoaded: (partition: number) => boolean): Answer {
  const topic = s.controller.topic(topicName);
  const partition = topic ? partitionOf(topic.partitions.length) : -1;
  const leader = topic?.partitions[partition]?.leader ?? -1;
  const node = s.controller.brokers(listenerName).find((b) => b.nodeId === leader);
  if (!node || (leader === s.nodeId && !isLoaded(partition))) return failed(ErrorCode.COORDINATOR_NOT_AVAILABLE);
  return { nodeId: node.nodeId, host: node.host, port: node.port, errorCode: ErrorCode.NONE, errorMessage: 'NONE' };
}

function failed(errorCode: number): Answer {
  return { nodeId: -1, host: '', port: -1, errorCode, errorMessage: errorMessage(errorCode) };
}
