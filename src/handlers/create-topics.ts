// CreateTopics (key 19), versions 0-7.
// - numPartitions / replicationFactor -1 take num.partitions / default.replication.factor;
//   explicit assignments exclude both. Rules and error codes live in the Controller.
// - A name given twice in one request: INVALID_REQUEST for each entry of that name.
// - More than 10,000 partitions asked for in all (Kafka's MAX_PARTITIONS_PER_BATCH, counted as
//   Kafka counts them, validateOnly or not): POLICY_VIOLATION for every topic, nothing created.
// - validateOnly checks everything and creates nothing.
// - Authorization (Kafka's ControllerApis.createTopics): CREATE on the cluster, or else on each
//   topic; a topic without it is TOPIC_AUTHORIZATION_FAILED "Authorization failed." and left out
//   of the rest (the partition cap counts only the others). A created topic's configs are
//   answered only with DESCRIBE_CONFIGS on it, else topicConfigErrorCode TOPIC_AUTHORIZATION_FAILED.
// - controller_mutation_rate: each topic that passes every check is charged its partitions (Kafka's
//   ControllerMutationQuota); from v6 a client already over it gets THROTTLING_QUOTA_EXCEEDED for
//   the topic, before v6 it is only throttled. throttle_time_ms says how long until it is under.
// - From v5 a successful answer carries partitions, replication factor and the topic's
//   effective configs; from v7 its topic id.
import { ApiKey } from '../protocol/generated';
import type { CreateTopicsRequestCreatableTopic as CreatableTopic } from '../protocol/generated/CreateTopicsRequest';
import type { CreateTopicsResponseCreatableTopicResult as CreatableTopicResult } from '../protocol/generated/CreateTopicsResponse';
import { ErrorCode, quoteInMessage } from '../common/errors';
import { ZERO_UUID } from '../protocol/primitives';
import type { BrokerConfig } from '../config/broker-config';
import { createTopicConfigs } from '../config/topic-config';
import type { Controller } from '../cluster/controller';
import { AclOperation, CLUSTER_RESOURCE_NAME, ResourceType } from '../security/acl';
import type { ClientQuotas, MutationQuota } from '../cluster/client-quota-manager';
import { defineHandler, type RequestContext } from './handler';
import { repeatedNames } from './shared/repeated-names';

export interface CreateTopicsServices {
  /** The broker defaults a created topic's effective configs are described with. */
  readonly config: BrokerConfig;
  readonly controller: Pick<Controller, 'checkPartitionsToCreate' | 'createTopic'>;
  readonly quotas: Pick<ClientQuotas, 'controllerMutation'>;
}

/** The first CreateTopics version whose client knows THROTTLING_QUOTA_EXCEEDED (KIP-599). */
const STRICT_QUOTA_FROM = 6;

export const createTopics = defineHandler(ApiKey.CreateTopics, { minVersion: 0, maxVersion: 7 }, (s: CreateTopicsServices) => async (req, ctx) => {
  const repeated = repeatedNames(req.topics.map((t) => t.name));
  const clusterCreate = ctx.authorize(AclOperation.CREATE, ResourceType.CLUSTER, CLUSTER_RESOURCE_NAME);
  const creatable = new Set(req.topics.filter((t) => !repeated.has(t.name)
    && (clusterCreate || ctx.authorize(AclOperation.CREATE, ResourceType.TOPIC, t.name))).map((t) => t.name));
  const tooMany = s.controller.checkPartitionsToCreate(req.topics.filter((t) => creatable.has(t.name)));
  if (tooMany) return { throttleTimeMs: 0, topics: req.topics.map((t) => failed(t.name, tooMany.errorCode, tooMany.errorMessage)) };
  const quota = s.quotas.controllerMutation.forRequest(ctx.session.principal.name, ctx.clientId ?? '', ctx.apiVersion >= STRICT_QUOTA_FROM);
  const topics: CreatableTopicResult[] = [];
  for (const t of req.topics) {
    if (repeated.has(t.name)) topics.push(failed(t.name, ErrorCode.INVALID_REQUEST, 'Duplicate topic name.'));
    else if (!creatable.has(t.name)) topics.push(failed(t.name, ErrorCode.TOPIC_AUTHORIZATION_FAILED, 'Authorization failed.'));
    else topics.push(await createOne(s, ctx, t, req.validateOnly ?? false, quota));
  }
  return { throttleTimeMs: quota.throttleTimeMs, topics };
});

async function createOne(
  s: CreateTopicsServices, ctx: RequestContext, t: CreatableTopic, validateOnly: boolean, quota: MutationQuota,
): Promise<CreatableTopicResult> {
  const configs: Record<string, string> = {};
  for (const c of t.configs) {
    if (c.value === null) return failed(t.name, ErrorCode.INVALID_CONFIG, `Null value not supported for topic configs: ${quoteInMessage(c.name)}`);
    configs[c.name] = c.value;
  }
  const outcome = await s.controller.createTopic({
    name: t.name,
    numPartitions: t.numPartitions,
    replicationFactor: t.replicationFactor,
    assignments: t.assignments,
    configs,
  }, validateOnly, quota);
  if (!outcome.topic) return failed(t.name, outcome.errorCode, outcome.errorMessage);
  const topic = outcome.topic;
  const describable = ctx.authorize(AclOperation.DESCRIBE_CONFIGS, ResourceType.TOPIC, t.name);
  return {
    name: t.name,
    topicId: topic.id,
    errorCode: ErrorCode.NONE,
    errorMessage: null,
    numPartitions: topic.partitions.length,
    replicationFactor: topic.partitions[0].replicas.length,
    ...(describable ? {
      configs: createTopicConfigs(s.config, topic.configs).map((e) => ({
        name: e.name, value: e.value, readOnly: e.readOnly, configSource: e.source, isSensitive: e.isSensitive,
      })),
    } : { configs: [], topicConfigErrorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED }),
  };
}

function failed(name: string, errorCode: number, errorMessage: string | null): CreatableTopicResult {
  return { name, topicId: ZERO_UUID, errorCode, errorMessage, numPartitions: -1, replicationFactor: -1, configs: null };
}
