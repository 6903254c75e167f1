// Metadata (key 3), versions 0-12.
// - Null topics (v1+) or an empty list at v0 means all topics; topics can be named by id from v10.
// - Unknown topics are created when auto.create.topics.enable is on and the request allows it
//   (always at v0-3), with num.partitions and default.replication.factor.
// - Errors per topic: INVALID_TOPIC_EXCEPTION for bad names, UNKNOWN_TOPIC_OR_PARTITION,
//   UNKNOWN_TOPIC_ID for unknown ids.
// - Authorized operations are filled only when asked (v8+); without ACLs everything is allowed.
import { ApiKey } from '../../protocol/generated';
import type { MetadataRequest } from '../../protocol/generated/MetadataRequest';
import type { MetadataResponse, MetadataResponseTopic } from '../../protocol/generated/MetadataResponse';
import { ErrorCode } from '../../protocol/errors';
import { ZERO_UUID } from '../../protocol/primitives';
import type { TopicRecord } from '../../cluster/metadata-store';
import { isInternalTopic, validateTopicName } from '../../cluster/topic-names';
import { CLUSTER_OPERATIONS, TOPIC_OPERATIONS, NOT_REQUESTED } from '../../cluster/acl-operations';
import type { HandlerFactory } from '../router';
import type { Broker } from '../../broker';

export const metadata: HandlerFactory = (broker) => ({
  apiKey: ApiKey.Metadata,
  name: 'Metadata',
  minVersion: 0,
  maxVersion: 12,
  async handle(req: MetadataRequest, ctx): Promise<MetadataResponse> {
    const v = ctx.apiVersion;
    const withTopicOps = v >= 8 && req.includeTopicAuthorizedOperations;
    const allTopics = req.topics === null || (v === 0 && req.topics.length === 0);
    const topics: MetadataResponseTopic[] = [];
    if (allTopics) {
      for (const t of broker.controller.topics()) topics.push(describeTopic(broker, t, withTopicOps));
    } else {
      const autoCreate = (v < 4 || req.allowAutoTopicCreation !== false) && broker.config.getBool('auto.create.topics.enable');
      for (const wanted of req.topics!) {
        topics.push(await lookupTopic(broker, wanted.name, wanted.topicId ?? ZERO_UUID, autoCreate, withTopicOps));
      }
    }
    const controller = broker.controller;
    return {
      throttleTimeMs: 0,
      brokers: controller.brokers().map((b) => ({ nodeId: b.nodeId, host: b.host, port: b.port, rack: b.rack })),
      clusterId: broker.clusterId,
      controllerId: controller.controllerId,
      topics,
      clusterAuthorizedOperations: v >= 8 && v <= 10 && req.includeClusterAuthorizedOperations ? CLUSTER_OPERATIONS : NOT_REQUESTED,
    };
  },
});

async function lookupTopic(
  broker: Broker, name: string | null, topicId: string, autoCreate: boolean, withOps: boolean,
): Promise<MetadataResponseTopic> {
  if (name === null) {
    const byId = broker.controller.topicById(topicId);
    return byId ? describeTopic(broker, byId, withOps) : topicError(ErrorCode.UNKNOWN_TOPIC_ID, null, topicId);
  }
  const known = broker.controller.topic(name);
  if (known) return describeTopic(broker, known, withOps);
  if (validateTopicName(name)) return topicError(ErrorCode.INVALID_TOPIC_EXCEPTION, name);
  if (!autoCreate) return topicError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, name);
  const created = await broker.controller.createTopic(
    { name, numPartitions: -1, replicationFactor: -1, assignments: [], configs: {} }, false);
  if (created.topic) return describeTopic(broker, created.topic, withOps);
  // Lost a race with another creator: answer with whatever exists now.
  const raced = broker.controller.topic(name);
  return raced ? describeTopic(broker, raced, withOps) : topicError(created.errorCode, name);
}

function topicError(errorCode: number, name: string | null, topicId = ZERO_UUID): MetadataResponseTopic {
  return { errorCode, name, topicId, isInternal: false, partitions: [], topicAuthorizedOperations: NOT_REQUESTED };
}

function describeTopic(broker: Broker, t: TopicRecord, withOps: boolean): MetadataResponseTopic {
  const leader = broker.nodeId;
  return {
    errorCode: ErrorCode.NONE,
    name: t.name,
    topicId: t.id,
    isInternal: isInternalTopic(t.name),
    partitions: t.partitions.map((p) => ({
      errorCode: ErrorCode.NONE,
      partitionIndex: p.index,
      leaderId: leader,
      leaderEpoch: p.leaderEpoch,
      replicaNodes: [...p.replicas],
      isrNodes: [...p.replicas],
      offlineReplicas: [],
    })),
    topicAuthorizedOperations: withOps ? TOPIC_OPERATIONS : NOT_REQUESTED,
  };
}
