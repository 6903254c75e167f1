// TxnOffsetCommit (key 28), versions 0-6: a transactional producer commits a consumer group's
// offsets as part of its transaction (KIP-98; the member fields of v3+ are KIP-447's; v6 names topics
// by id, UNKNOWN_TOPIC_ID for an id this broker does not know).
// - The offsets are written to the group's __consumer_offsets partition as one transactional batch
//   of the producer, and stay pending until the transaction's marker: invisible to OffsetFetch
//   (UNSTABLE_OFFSET_COMMIT with require_stable), committed or dropped when it ends.
// - Errors, per partition: UNKNOWN_TOPIC_OR_PARTITION (topic or partition does not exist; the other
//   partitions are still committed), OFFSET_METADATA_TOO_LARGE (above offset.metadata.max.bytes),
//   ILLEGAL_GENERATION (a stale generation, or a generation for a group that does not exist),
//   UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID (v3+: a static member's old incarnation), INVALID_GROUP_ID
//   (""), COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE (a group being deleted), the
//   write's errors (NOT_COORDINATOR, INVALID_PRODUCER_EPOCH for a fenced producer...).
// - Before v3 there is no member identity: the commit is taken whatever the group's state, as in
//   Kafka. Unlike OffsetCommit, a group in CompletingRebalance is not refused, and a commit does
//   not keep a member's session alive.
// - With transaction.partition.verification.enable (the default), the transaction coordinator must
//   have the group's __consumer_offsets partition in the producer's transaction (AddOffsetsToTxn),
//   else every partition gets TRANSACTION_ABORTABLE (v4) or INVALID_TXN_STATE, and nothing is
//   written: offsets no marker would ever end would stay pending. Not in a cluster (as Produce's check,
//   see broker.ts): the transactional id's coordinator may be another broker, and the local one would
//   answer NOT_COORDINATOR, turned into NOT_ENOUGH_REPLICAS, for ever.
// - v5+ is a transaction version 2 producer (KIP-890 part 2), which sends no AddOffsetsToTxn: the
//   group's __consumer_offsets partition is added to its transaction before the offsets are written,
//   as Produce v12 adds its partitions. A failed add answers every partition with its error, as Kafka's
//   group coordinator maps it (NOT_ENOUGH_REPLICAS, "not now", becomes COORDINATOR_NOT_AVAILABLE).
// - Authorization: WRITE on the transactional id (else TRANSACTIONAL_ID_AUTHORIZATION_FAILED), READ on
//   the group (else GROUP_AUTHORIZATION_FAILED), each for every partition; then READ on each topic
//   (TOPIC_AUTHORIZATION_FAILED for its partitions).
import { ApiKey } from '../protocol/generated';
import { ErrorCode } from '../common/errors';
import type { BrokerConfig } from '../config/broker-config';
import type { Controller } from '../cluster/controller';
import { GROUP_METADATA_TOPIC_NAME } from '../cluster/topic-names';
import type { GroupCoordinator } from '../group';
import type { TxnCommitRequest } from '../group/coordinator';
import type { TransactionCoordinator, TxnPartitionAdds } from '../txn';
import { commitKnownPartitions } from './shared/commit-partitions';
import { AclOperation, ResourceType } from '../security/acl';
import { defineHandler } from './handler';

export interface TxnOffsetCommitServices {
  readonly config: Pick<BrokerConfig, 'getBool' | 'etcdConnect'>;
  readonly controller: Pick<Controller, 'topic' | 'topicById'>;
  readonly groups: Pick<GroupCoordinator, 'partitionFor' | 'commitTxnOffsets'>;
  readonly transactions: Pick<TransactionCoordinator, 'verifyTransactionalWrite'>;
  readonly partitionAdds: Pick<TxnPartitionAdds, 'add'>;
}

/** The first version whose producer has its offsets partition added implicitly (transaction version 2). */
const FIRST_ADDING_VERSION = 5;
const FIRST_TOPIC_ID_VERSION = 6;

export const txnOffsetCommit = defineHandler(ApiKey.TxnOffsetCommit, { minVersion: 0, maxVersion: 6 },
  (s: TxnOffsetCommitServices) => async (req, ctx) => {
    const v = ctx.apiVersion;
    // Kafka's order: the transactional id, then the group, each failing every partition.
    const refused = !ctx.authorize(AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, req.transactionalId)
      ? ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
      : !ctx.authorize(AclOperation.READ, ResourceType.GROUP, req.groupId) ? ErrorCode.GROUP_AUTHORIZATION_FAILED : ErrorCode.NONE;
    if (refused !== ErrorCode.NONE) {
      return {
        throttleTimeMs: 0,
        topics: req.topics.map((t) => ({
          name: t.name, topicId: t.topicId, partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode: refused })),
        })),
      };
    }
    const commit: Omit<TxnCommitRequest, 'partitions'> = {
      groupId: req.groupId,
      producerId: Number(req.producerId),
      producerEpoch: req.producerEpoch,
      generationId: v >= 3 ? req.generationIdOrMemberEpoch ?? -1 : -1,
      memberId: v >= 3 ? req.memberId ?? '' : '',
      groupInstanceId: v >= 3 ? req.groupInstanceId ?? null : null,
    };
    const byId = v >= FIRST_TOPIC_ID_VERSION;
    const named = req.topics.map((t) => ({ ...t, name: byId ? s.controller.topicById(t.topicId ?? '')?.name : t.name }));
    const offsetsPartition = { topic: GROUP_METADATA_TOPIC_NAME, partition: s.groups.partitionFor(req.groupId) };
    const answered = await commitKnownPartitions(s.controller, named, (topic, p) => ({
      topic, partition: p.partitionIndex, offset: Number(p.committedOffset),
      leaderEpoch: v >= 2 ? p.committedLeaderEpoch ?? -1 : -1, metadata: p.committedMetadata,
    }), async (partitions) => {
      if (v >= FIRST_ADDING_VERSION) {
        const added = await s.partitionAdds.add(req.transactionalId, commit.producerId, commit.producerEpoch, offsetsPartition);
        const refused = added === ErrorCode.NOT_ENOUGH_REPLICAS ? ErrorCode.COORDINATOR_NOT_AVAILABLE : added;
        if (refused !== ErrorCode.NONE) return partitions.map(() => refused);
      } else if (s.config.etcdConnect === null && s.config.getBool('transaction.partition.verification.enable')) {
        const refused = s.transactions.verifyTransactionalWrite(req.transactionalId, commit.producerId, commit.producerEpoch,
          offsetsPartition.topic, offsetsPartition.partition, v >= 4);
        if (refused !== ErrorCode.NONE) return partitions.map(() => refused);
      }
      return s.groups.commitTxnOffsets({ ...commit, partitions });
    }, (topic) => ctx.authorize(AclOperation.READ, ResourceType.TOPIC, topic));
    const topics = answered.map((t, i) => ({
      name: t.name, topicId: req.topics[i].topicId,
      partitions: byId && named[i].name === undefined
        ? t.partitions.map((p) => ({ ...p, errorCode: ErrorCode.UNKNOWN_TOPIC_ID })) : t.partitions,
    }));
    return { throttleTimeMs: 0, topics };
  });
