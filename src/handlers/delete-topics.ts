// DeleteTopics (key 20), versions 0-6.
// - v0-5 name topics; v6 names them by name or by id (a zero id means "by name").
// - As Kafka's ControllerApis.deleteTopics: neither name nor id, or both, is INVALID_REQUEST for
//   that entry; a name (or id) given twice is answered once, INVALID_REQUEST "Duplicate topic
//   name." ("Duplicate topic id."), and not deleted; a name that maps to an id also given is
//   INVALID_REQUEST and neither is deleted. Kafka shuffles its answers; here they follow the request.
// - UNKNOWN_TOPIC_OR_PARTITION / UNKNOWN_TOPIC_ID for topics that do not exist. With
//   delete.topic.enable off, every entry is TOPIC_DELETION_DISABLED (INVALID_REQUEST before v3).
// - Authorization (ControllerApis.deleteTopics): a topic the principal may not DESCRIBE is
//   TOPIC_AUTHORIZATION_FAILED before anything else, with no name when it was given by id (the id
//   does not reveal it); one it may DESCRIBE but not DELETE is TOPIC_AUTHORIZATION_FAILED too.
// - controller_mutation_rate: each topic found is charged its partitions; from v5 a client already
//   over it gets THROTTLING_QUOTA_EXCEEDED for the topic (as CreateTopics).
// - The internal topics can be deleted, as in Kafka: their coordinators start over (Controller).
import { ApiKey } from '../protocol/generated';
import type { DeleteTopicsResponseDeletableTopicResult as DeletableTopicResult } from '../protocol/generated/DeleteTopicsResponse';
import { ErrorCode, errorMessage } from '../common/errors';
import { ZERO_UUID } from '../protocol/primitives';
import type { Controller } from '../cluster/controller';
import { AclOperation, ResourceType } from '../security/acl';
import type { ClientQuotas } from '../cluster/client-quota-manager';
import { defineHandler } from './handler';
import { repeatedNames } from './shared/repeated-names';

export interface DeleteTopicsServices {
  readonly controller: Pick<Controller, 'topic' | 'topicById' | 'deleteTopic'>;
  readonly quotas: Pick<ClientQuotas, 'controllerMutation'>;
}

/** The first DeleteTopics version whose client knows THROTTLING_QUOTA_EXCEEDED (KIP-599). */
const STRICT_QUOTA_FROM = 5;

export const deleteTopics = defineHandler(ApiKey.DeleteTopics, { minVersion: 0, maxVersion: 6 }, (s: DeleteTopicsServices) => async (req, ctx) => {
  const wanted = ctx.apiVersion >= 6
    ? req.topics.map((t) => ({ name: t.name ?? null, topicId: t.topicId }))
    : (req.topicNames ?? []).map((name) => ({ name: name as string | null, topicId: ZERO_UUID }));
  const byName = wanted.filter((w) => w.name !== null && w.topicId === ZERO_UUID).map((w) => w.name as string);
  const repeatedName = repeatedNames(byName);
  const repeatedId = repeatedNames(wanted.filter((w) => w.name === null && w.topicId !== ZERO_UUID).map((w) => w.topicId));
  const idsGiven = new Set(wanted.filter((w) => w.name === null).map((w) => w.topicId));
  const idsNamed = new Set(byName.map((name) => s.controller.topic(name)?.id));
  const quota = s.quotas.controllerMutation.forRequest(ctx.session.principal.name, ctx.clientId ?? '', ctx.apiVersion >= STRICT_QUOTA_FROM);
  const answered = new Set<string>();
  const responses: DeletableTopicResult[] = [];
  const answer = (name: string | null, topicId: string, errorCode: number, message: string | null) =>
    responses.push({ name, topicId, errorCode, errorMessage: message });
  const refuse = (name: string | null, topicId: string) =>
    answer(name, topicId, ErrorCode.TOPIC_AUTHORIZATION_FAILED, errorMessage(ErrorCode.TOPIC_AUTHORIZATION_FAILED));
  const describable = (name: string) => ctx.authorize(AclOperation.DESCRIBE, ResourceType.TOPIC, name);
  const deletable = (name: string) => ctx.authorize(AclOperation.DELETE, ResourceType.TOPIC, name);
  for (const w of wanted) {
    if (w.name === null && w.topicId === ZERO_UUID) {
      answer(null, ZERO_UUID, ErrorCode.INVALID_REQUEST, 'Neither topic name nor id were specified.');
    } else if (w.name !== null && w.topicId !== ZERO_UUID) {
      answer(w.name, w.topicId, ErrorCode.INVALID_REQUEST, 'You may not specify both topic name and topic id.');
    } else if (w.name !== null ? repeatedName.has(w.name) : repeatedId.has(w.topicId)) {
      const key = w.name ?? w.topicId;
      if (answered.has(key)) continue;
      answered.add(key);
      if (w.name !== null) answer(w.name, ZERO_UUID, ErrorCode.INVALID_REQUEST, 'Duplicate topic name.');
      else answer(null, w.topicId, ErrorCode.INVALID_REQUEST, 'Duplicate topic id.');
    } else if (w.name === null) {
      // Kafka drops an id that a name in the request also maps to, without an answer of its own.
      if (idsNamed.has(w.topicId)) continue;
      const name = s.controller.topicById(w.topicId)?.name;
      if (name === undefined) answer(null, w.topicId, ErrorCode.UNKNOWN_TOPIC_ID, 'This server does not host this topic ID.');
      else if (!describable(name)) refuse(null, w.topicId);
      else if (!deletable(name)) refuse(name, w.topicId);
      else responses.push(await deleteOne(name, w.topicId));
    } else {
      const id = s.controller.topic(w.name)?.id;
      if (!describable(w.name)) {
        refuse(w.name, ZERO_UUID);
      } else if (id !== undefined && idsGiven.has(id)) {
        answer(w.name, id, ErrorCode.INVALID_REQUEST, 'The provided topic name maps to an ID that was already supplied.');
      } else if (id !== undefined && !deletable(w.name)) {
        refuse(w.name, id);
      } else {
        responses.push(await deleteOne(w.name, ZERO_UUID));
      }
    }
  }
  return { throttleTimeMs: quota.throttleTimeMs, responses };

  async function deleteOne(name: string, topicId: string): Promise<DeletableTopicResult> {
    const outcome = await s.controller.deleteTopic(name, quota);
    if (outcome.errorCode === ErrorCode.TOPIC_DELETION_DISABLED && ctx.apiVersion < 3) {
      return { name, topicId, errorCode: ErrorCode.INVALID_REQUEST, errorMessage: outcome.errorMessage };
    }
    return { name, topicId: outcome.topic?.id ?? topicId, errorCode: outcome.errorCode, errorMessage: outcome.errorMessage };
  }
});
