// CreatePartitions (key 37), versions 0-3.
// - Grows a topic to `count` partitions; shrinking or staying equal is INVALID_PARTITIONS.
// - Explicit assignments must name one replica list per new partition.
// - A topic named twice in one request: INVALID_REQUEST for each entry. One result per topic.
// - More than 10,000 partitions added in all: POLICY_VIOLATION for every topic, nothing grown
//   (the cap CreateTopics has). Internal topics cannot grow: POLICY_VIOLATION.
// - A topic the principal may not ALTER: TOPIC_AUTHORIZATION_FAILED, left out of the cap's count
//   (Kafka's ControllerApis.createPartitions).
// - controller_mutation_rate: each topic that passes every check is charged the partitions it adds;
//   from v3 a client already over it gets THROTTLING_QUOTA_EXCEEDED for the topic (as CreateTopics).
import { ApiKey } from '../protocol/generated';
import type { CreatePartitionsResponseCreatePartitionsTopicResult as CreatePartitionsTopicResult } from '../protocol/generated/CreatePartitionsResponse';
import { ErrorCode, errorMessage } from '../common/errors';
import type { Controller } from '../cluster/controller';
import { AclOperation, ResourceType } from '../security/acl';
import type { ClientQuotas } from '../cluster/client-quota-manager';
import { defineHandler } from './handler';
import { repeatedNames } from './shared/repeated-names';

export interface CreatePartitionsServices {
  readonly controller: Pick<Controller, 'checkPartitionsToAdd' | 'createPartitions'>;
  readonly quotas: Pick<ClientQuotas, 'controllerMutation'>;
}

/** The first CreatePartitions version whose client knows THROTTLING_QUOTA_EXCEEDED (KIP-599). */
const STRICT_QUOTA_FROM = 3;

export const createPartitions = defineHandler(ApiKey.CreatePartitions, { minVersion: 0, maxVersion: 3 }, (s: CreatePartitionsServices) => async (req, ctx) => {
  const repeated = repeatedNames(req.topics.map((t) => t.name));
  const alterable = new Set(req.topics.filter((t) => !repeated.has(t.name) && ctx.authorize(AclOperation.ALTER, ResourceType.TOPIC, t.name))
    .map((t) => t.name));
  const tooMany = s.controller.checkPartitionsToAdd(req.topics.filter((t) => alterable.has(t.name)));
  if (tooMany) return { throttleTimeMs: 0, results: req.topics.map((t) => ({ name: t.name, ...tooMany })) };
  const quota = s.quotas.controllerMutation.forRequest(ctx.session.principal.name, ctx.clientId ?? '', ctx.apiVersion >= STRICT_QUOTA_FROM);
  const results: CreatePartitionsTopicResult[] = [];
  for (const t of req.topics) {
    if (repeated.has(t.name)) {
      results.push({ name: t.name, errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'Duplicate topic in request.' });
      continue;
    }
    if (!alterable.has(t.name)) {
      results.push({ name: t.name, errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED, errorMessage: errorMessage(ErrorCode.TOPIC_AUTHORIZATION_FAILED) });
      continue;
    }
    const assignments = t.assignments === null ? null : t.assignments.map((a) => a.brokerIds);
    const outcome = await s.controller.createPartitions(t.name, t.count, assignments, req.validateOnly, quota);
    results.push({ name: t.name, errorCode: outcome.errorCode, errorMessage: outcome.errorMessage });
  }
  return { throttleTimeMs: quota.throttleTimeMs, results };
});
