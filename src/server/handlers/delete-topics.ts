// DeleteTopics (key 20), versions 0-6.
// - v0-5 name topics; v6 names them by name or by id (a zero id means "by name").
// - UNKNOWN_TOPIC_OR_PARTITION / UNKNOWN_TOPIC_ID for topics that do not exist,
//   TOPIC_DELETION_DISABLED when delete.topic.enable is off.
import { ApiKey } from '../../protocol/generated';
import type { DeleteTopicsRequest } from '../../protocol/generated/DeleteTopicsRequest';
import type { DeleteTopicsResponse, DeleteTopicsResponseDeletableTopicResult as DeletableTopicResult } from '../../protocol/generated/DeleteTopicsResponse';
import { ErrorCode } from '../../protocol/errors';
import { ZERO_UUID } from '../../protocol/primitives';
import type { HandlerFactory } from '../router';

export const deleteTopics: HandlerFactory = (broker) => ({
  apiKey: ApiKey.DeleteTopics,
  name: 'DeleteTopics',
  minVersion: 0,
  maxVersion: 6,
  async handle(req: DeleteTopicsRequest, ctx): Promise<DeleteTopicsResponse> {
    const wanted = ctx.apiVersion >= 6
      ? req.topics.map((t) => ({ name: t.name ?? null, topicId: t.topicId }))
      : (req.topicNames ?? []).map((name) => ({ name: name as string | null, topicId: ZERO_UUID }));
    const responses: DeletableTopicResult[] = [];
    for (const w of wanted) {
      const byId = w.topicId !== ZERO_UUID;
      const name = byId ? broker.controller.topicById(w.topicId)?.name ?? null : w.name;
      if (name === null) {
        responses.push({ name: null, topicId: w.topicId, errorCode: byId ? ErrorCode.UNKNOWN_TOPIC_ID : ErrorCode.INVALID_REQUEST,
          errorMessage: byId ? 'This server does not host this topic ID.' : 'Neither topic name nor id were specified.' });
        continue;
      }
      const outcome = await broker.controller.deleteTopic(name);
      responses.push({ name, topicId: outcome.topic?.id ?? w.topicId, errorCode: outcome.errorCode, errorMessage: outcome.errorMessage });
    }
    return { throttleTimeMs: 0, responses };
  },
});
