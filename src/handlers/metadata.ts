// Metadata (key 3), versions 0-13.
// - Null topics (v1+) or an empty list at v0 means all topics; topics can be named by id from v12.
// - At v10-11 the request carries topic ids and nullable names, but Kafka refuses both there: a null
//   name or a non-zero id answers every topic INVALID_REQUEST (name "" for a null one), as Kafka's
//   MetadataRequest.getErrorResponse does. Response names are nullable only from v12.
// - Unknown topics are created when auto.create.topics.enable is on and the request allows it
//   (always at v0-3), with num.partitions and default.replication.factor.
// - Errors per topic: INVALID_TOPIC_EXCEPTION for bad names, UNKNOWN_TOPIC_OR_PARTITION,
//   UNKNOWN_TOPIC_ID for unknown ids.
// - Authorization (Kafka's getTopicMetadata): "all topics" leaves out those the principal may not
//   DESCRIBE; a topic named (or, from v12, known by id) that it may not DESCRIBE is answered
//   TOPIC_AUTHORIZATION_FAILED (by id: name null, the id kept). Auto-creation needs CREATE on the
//   cluster or on the topic: without it the topic is TOPIC_AUTHORIZATION_FAILED and never created.
// - Brokers are listed with their endpoint of the listener the request came in on; brokers without
//   that listener are left out, and a partition whose leader is one of them answers leader -1 with
//   LISTENER_NOT_FOUND (LEADER_NOT_AVAILABLE below v6), as Kafka's MetadataCache.
// - Authorized operations are filled only when asked (v8+); those the authorizer allows (AclEntry.supportedOperations).
// - v13's top-level error code (KIP-1102, e.g. REBOOTSTRAP_REQUIRED) is NONE, as Kafka's broker
//   answers: nothing here asks a client to bootstrap again.
import { ApiKey } from '../protocol/generated';
import type { MetadataRequestTopic } from '../protocol/generated/MetadataRequest';
import type { MetadataResponse, MetadataResponseTopic } from '../protocol/generated/MetadataResponse';
import { ErrorCode } from '../common/errors';
import { ZERO_UUID } from '../protocol/primitives';
import type { BrokerConfig } from '../config/broker-config';
import type { BrokerEndpoint, Controller } from '../cluster/controller';
import type { TopicRecord } from '../cluster/metadata-store';
import { isInternalTopic, validateTopicName } from '../cluster/topic-names';
import { authorizedOperations, clusterAuthorizedOperations, NOT_REQUESTED } from './shared/authorized-operations';
import { AclOperation, CLUSTER_RESOURCE_NAME, ResourceType } from '../security/acl';
import { defineHandler, type RequestContext } from './handler';

export interface MetadataServices {
  readonly clusterId: string;
  readonly config: Pick<BrokerConfig, 'getBool'>;
  readonly controller: Pick<Controller, 'brokers' | 'controllerId' | 'topics' | 'topic' | 'topicById' | 'createTopic'>;
}

export const metadata = defineHandler(ApiKey.Metadata, { minVersion: 0, maxVersion: 13 }, (s: MetadataServices) => async (req, ctx) => {
  const v = ctx.apiVersion;
  const withTopicOps = v >= 8 && req.includeTopicAuthorizedOperations;
  const topicOps: TopicOps = (name) => (withTopicOps ? authorizedOperations(ctx, ResourceType.TOPIC, name) : NOT_REQUESTED);
  const allTopics = req.topics === null || (v === 0 && req.topics.length === 0);
  if (!allTopics && v < 12 && req.topics!.some((t) => t.name === null || (t.topicId ?? ZERO_UUID) !== ZERO_UUID)) {
    return invalidTopicsResponse(req.topics!);
  }
  const topics: MetadataResponseTopic[] = [];
  if (allTopics) {
    for (const t of s.controller.topics()) {
      if (ctx.authorize(AclOperation.DESCRIBE, ResourceType.TOPIC, t.name)) topics.push(describeTopic(t, topicOps));
    }
  } else {
    const autoCreate = (v < 4 || req.allowAutoTopicCreation !== false) && s.config.getBool('auto.create.topics.enable');
    for (const wanted of req.topics!) {
      topics.push(await lookupTopic(s, ctx, wanted.name, wanted.topicId ?? ZERO_UUID, autoCreate, topicOps));
    }
  }
  const controller = s.controller;
  // After the topics: an auto-creation may have waited for brokers to come and go.
  const brokers = controller.brokers(ctx.session.listenerName);
  const live = controller.brokers();
  if (live.length !== brokers.length) hideLeadersWithoutListener(topics, brokers, live, v >= 6 ? ErrorCode.LISTENER_NOT_FOUND : ErrorCode.LEADER_NOT_AVAILABLE);
  return {
    throttleTimeMs: 0,
    brokers: brokers.map((b) => ({ nodeId: b.nodeId, host: b.host, port: b.port, rack: b.rack })),
    clusterId: s.clusterId,
    controllerId: controller.controllerId,
    topics,
    clusterAuthorizedOperations: v >= 8 && v <= 10 && req.includeClusterAuthorizedOperations ? clusterAuthorizedOperations(ctx) : NOT_REQUESTED,
    errorCode: ErrorCode.NONE,
  };
});

async function lookupTopic(
  s: MetadataServices, ctx: RequestContext, name: string | null, topicId: string, autoCreate: boolean, ops: TopicOps,
): Promise<MetadataResponseTopic> {
  // From v12 a non-zero id names the topic (Kafka then ignores the name); below v12 both were refused above.
  if (name === null || topicId !== ZERO_UUID) {
    const byId = s.controller.topicById(topicId);
    if (!byId) return topicError(ErrorCode.UNKNOWN_TOPIC_ID, null, topicId);
    // Ids are not secret: the id is answered, the name is not.
    return ctx.authorize(AclOperation.DESCRIBE, ResourceType.TOPIC, byId.name)
      ? describeTopic(byId, ops) : topicError(ErrorCode.TOPIC_AUTHORIZATION_FAILED, null, topicId);
  }
  if (!ctx.authorize(AclOperation.DESCRIBE, ResourceType.TOPIC, name)) return topicError(ErrorCode.TOPIC_AUTHORIZATION_FAILED, name);
  const known = s.controller.topic(name);
  if (known) return describeTopic(known, ops);
  if (autoCreate && !ctx.authorize(AclOperation.CREATE, ResourceType.CLUSTER, CLUSTER_RESOURCE_NAME)
    && !ctx.authorize(AclOperation.CREATE, ResourceType.TOPIC, name)) {
    return { ...topicError(ErrorCode.TOPIC_AUTHORIZATION_FAILED, name), isInternal: isInternalTopic(name) };
  }
  if (validateTopicName(name)) return topicError(ErrorCode.INVALID_TOPIC_EXCEPTION, name);
  if (!autoCreate) return topicError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, name);
  const created = await s.controller.createTopic(
    { name, numPartitions: -1, replicationFactor: -1, assignments: [], configs: {} }, false);
  if (created.topic) return describeTopic(created.topic, ops);
  // Lost a race with another creator: answer with whatever exists now.
  const raced = s.controller.topic(name);
  return raced ? describeTopic(raced, ops) : topicError(created.errorCode, name);
}

/** Partitions led by a live broker that lacks the request's listener: no leader, `errorCode`. */
function hideLeadersWithoutListener(topics: MetadataResponseTopic[], withListener: BrokerEndpoint[], live: BrokerEndpoint[], errorCode: number): void {
  const reachable = new Set(withListener.map((b) => b.nodeId));
  const unreachable = new Set(live.filter((b) => !reachable.has(b.nodeId)).map((b) => b.nodeId));
  for (const t of topics) {
    for (const p of t.partitions) {
      if (!unreachable.has(p.leaderId)) continue;
      p.leaderId = -1;
      p.errorCode = errorCode;
    }
  }
}

/** Kafka's error response for the whole request: no brokers, every topic answered with INVALID_REQUEST. */
function invalidTopicsResponse(wanted: MetadataRequestTopic[]): MetadataResponse {
  return {
    throttleTimeMs: 0,
    brokers: [],
    clusterId: null,
    controllerId: -1,
    topics: wanted.map((t) => topicError(ErrorCode.INVALID_REQUEST, t.name ?? '', t.topicId ?? ZERO_UUID)),
    clusterAuthorizedOperations: NOT_REQUESTED,
  };
}

function topicError(errorCode: number, name: string | null, topicId = ZERO_UUID): MetadataResponseTopic {
  return { errorCode, name, topicId, isInternal: false, partitions: [], topicAuthorizedOperations: NOT_REQUESTED };
}

/** A topic's authorized-operations field: the bits, or NOT_REQUESTED when the client did not ask. */
type TopicOps = (name: string) => number;

function describeTopic(t: TopicRecord, ops: TopicOps): MetadataResponseTopic {
  return {
    errorCode: ErrorCode.NONE,
    name: t.name,
    topicId: t.id,
    isInternal: isInternalTopic(t.name),
    partitions: t.partitions.map((p) => ({
      partitionIndex: p.index,
      // A partition without a leader is still listed, with LEADER_NOT_AVAILABLE (Kafka's MetadataCache).
      errorCode: p.leader === -1 ? ErrorCode.LEADER_NOT_AVAILABLE : ErrorCode.NONE,
      leaderId: p.leader,
      leaderEpoch: p.leaderEpoch,
      replicaNodes: [...p.replicas],
      isrNodes: [...p.isr],
      offlineReplicas: [],
    })),
    topicAuthorizedOperations: ops(t.name),
  };
}
