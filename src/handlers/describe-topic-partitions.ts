// DescribeTopicPartitions (key 75), version 0 (KIP-966): the partitions of topics, a page at a
// time (what the Java AdminClient's describeTopics uses), as Kafka's
// DescribeTopicPartitionsRequestHandler and MetadataCache.describeTopicResponse answer.
// - Topics named in the request, or every topic when the list is empty; each once, sorted by name,
//   from the cursor's topic on (names before it are left out).
// - Per topic: its id, whether it is internal, and its partitions from the cursor's partition
//   (its own topic only; others from 0): leader, leader epoch, replicas, ISR, ELR and last known
//   ELR (empty: Fjord keeps no ELR), offline replicas (none). A partition without a leader answers
//   LEADER_NOT_AVAILABLE, as in Metadata.
// - A page holds at most min(ResponsePartitionLimit, max.request.partition.size.limit), at least
//   1, partitions. When they run out inside a topic, NextCursor names that topic and the next
//   partition; when they run out at a topic's end and more topics follow, the next topic and 0.
// - A named topic that does not exist: UNKNOWN_TOPIC_OR_PARTITION, or INVALID_TOPIC_EXCEPTION for
//   a name no topic may have, with no partitions (it takes no room in the page); all topics
//   leaves such errors out.
// - A cursor whose topic is not among the named topics, or with a negative partition, is
//   INVALID_REQUEST for every named topic (Kafka's InvalidRequestException for the request).
// - Topics the principal may not DESCRIBE are left out; named ones are answered after the page,
//   TOPIC_AUTHORIZATION_FAILED with a zero id and no partitions (taking no room), as Kafka does.
// - Authorized operations are always filled (Kafka ignores IncludeTopicAuthorizedOperations
//   here): those the authorizer allows the principal on the topic.
import { ApiKey } from '../protocol/generated';
import type {
  DescribeTopicPartitionsResponse, DescribeTopicPartitionsResponseTopic as ResponseTopic,
} from '../protocol/generated/DescribeTopicPartitionsResponse';
import { ErrorCode } from '../common/errors';
import { ZERO_UUID } from '../protocol/primitives';
import type { BrokerConfig } from '../config/broker-config';
import type { Controller } from '../cluster/controller';
import type { TopicRecord } from '../cluster/metadata-store';
import { isInternalTopic, validateTopicName } from '../cluster/topic-names';
import { authorizedOperations } from './shared/authorized-operations';
import { AclOperation, ResourceType } from '../security/acl';
import { defineHandler } from './handler';

export interface DescribeTopicPartitionsServices {
  readonly config: Pick<BrokerConfig, 'getInt'>;
  readonly controller: Pick<Controller, 'topic' | 'topics'>;
}

export const describeTopicPartitions = defineHandler(ApiKey.DescribeTopicPartitions, { minVersion: 0, maxVersion: 0 },
  (s: DescribeTopicPartitionsServices) => (req, ctx): DescribeTopicPartitionsResponse => {
    const ops = (name: string) => authorizedOperations(ctx, ResourceType.TOPIC, name);
    const cursor = req.cursor ?? null;
    const fromTopic = cursor?.topicName ?? '';
    const allTopics = req.topics.length === 0;
    const named = allTopics ? s.controller.topics().map((t) => t.name) : req.topics.map((t) => t.name);
    const names = [...new Set(named.filter((name) => name >= fromTopic))].sort();
    if (cursor && ((!allTopics && !names.includes(cursor.topicName)) || cursor.partitionIndex < 0)) {
      return {
        throttleTimeMs: 0, nextCursor: null,
        topics: req.topics.map((t) => ({ errorCode: ErrorCode.INVALID_REQUEST, name: t.name, topicId: ZERO_UUID, partitions: [] })),
      };
    }
    let room = Math.max(Math.min(s.config.getInt('max.request.partition.size.limit'), req.responsePartitionLimit ?? 2000), 1);
    const topics: ResponseTopic[] = [];
    const refused: ResponseTopic[] = [];
    for (const name of names) {
      if (room === 0) return { throttleTimeMs: 0, topics: [...topics, ...refused], nextCursor: { topicName: name, partitionIndex: 0 } };
      if (!ctx.authorize(AclOperation.DESCRIBE, ResourceType.TOPIC, name)) {
        if (!allTopics) refused.push({ ...unknownTopic(name, ops(name)), errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED, isInternal: false });
        continue;
      }
      const topic = s.controller.topic(name);
      if (!topic) {
        if (!allTopics) topics.push(unknownTopic(name, ops(name)));
        continue;
      }
      const first = name === cursor?.topicName ? cursor.partitionIndex : 0;
      const end = Math.min(topic.partitions.length, first + room);
      topics.push(describeTopic(topic, first, end, ops(name)));
      room -= Math.max(end - first, 0);
      if (end < topic.partitions.length) return { throttleTimeMs: 0, topics: [...topics, ...refused], nextCursor: { topicName: name, partitionIndex: end } };
    }
    return { throttleTimeMs: 0, topics: [...topics, ...refused], nextCursor: null };
  });

function unknownTopic(name: string, topicAuthorizedOperations: number): ResponseTopic {
  const errorCode = validateTopicName(name) ? ErrorCode.INVALID_TOPIC_EXCEPTION : ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
  return { errorCode, name, topicId: ZERO_UUID, isInternal: isInternalTopic(name), partitions: [], topicAuthorizedOperations };
}

/** The topic with its partitions [first, end). */
function describeTopic(t: TopicRecord, first: number, end: number, topicAuthorizedOperations: number): ResponseTopic {
  return {
    errorCode: ErrorCode.NONE,
    name: t.name,
    topicId: t.id,
    isInternal: isInternalTopic(t.name),
    partitions: t.partitions.slice(first, end).map((p) => ({
      errorCode: p.leader === -1 ? ErrorCode.LEADER_NOT_AVAILABLE : ErrorCode.NONE,
      partitionIndex: p.index,
      leaderId: p.leader,
      leaderEpoch: p.leaderEpoch,
      replicaNodes: [...p.replicas],
      isrNodes: [...p.isr],
      eligibleLeaderReplicas: [],
      lastKnownElr: [],
      offlineReplicas: [],
    })),
    topicAuthorizedOperations,
  };
}
