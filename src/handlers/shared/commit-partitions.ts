// What OffsetCommit and TxnOffsetCommit do alike before the group coordinator (Kafka's KafkaApis):
// a partition of a topic this broker does not know, or past its partition count, is answered
// UNKNOWN_TOPIC_OR_PARTITION at once while the others are still committed; those go to the
// coordinator in one call, and each error it answers goes back to the partition's place. A topic
// the request named by an id this broker does not know (no name) is UNKNOWN_TOPIC_ID; one the
// principal may not READ is TOPIC_AUTHORIZATION_FAILED (after UNKNOWN_TOPIC_ID, before existence).
import type { Controller } from '../../cluster/controller';
import { ErrorCode } from '../../common/errors';

export interface CommitAnswerTopic {
  name: string;
  partitions: { partitionIndex: number; errorCode: number }[];
}

/**
 * `topics` are named (the caller resolves the ids of versions that send ids; undefined: an unknown
 * id). `toCommit` turns a request partition into what the coordinator takes; `commit` answers one
 * error per partition it was given, in order.
 */
export async function commitKnownPartitions<P extends { partitionIndex: number }, C>(
  controller: Pick<Controller, 'topic'>,
  topics: { name?: string; partitions: P[] }[],
  toCommit: (topic: string, p: P) => C,
  commit: (partitions: C[]) => Promise<number[]>,
  readable: (topic: string) => boolean,
): Promise<CommitAnswerTopic[]> {
  const answer: CommitAnswerTopic[] = topics.map((t) => ({
    name: t.name ?? '', partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode: ErrorCode.NONE })),
  }));
  const known: C[] = [];
  // Where each partition sent to the coordinator goes back in the answer.
  const slots: { topic: number; partition: number }[] = [];
  topics.forEach((t, ti) => {
    const name = t.name;
    const refused = name !== undefined && !readable(name);
    const meta = name === undefined || refused ? undefined : controller.topic(name);
    t.partitions.forEach((p, pi) => {
      if (refused) {
        answer[ti].partitions[pi].errorCode = ErrorCode.TOPIC_AUTHORIZATION_FAILED;
        return;
      }
      if (!meta || p.partitionIndex < 0 || p.partitionIndex >= meta.partitions.length) {
        answer[ti].partitions[pi].errorCode = name === undefined ? ErrorCode.UNKNOWN_TOPIC_ID : ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
        return;
      }
      slots.push({ topic: ti, partition: pi });
      known.push(toCommit(meta.name, p));
    });
  });
  if (known.length > 0) {
    const errors = await commit(known);
    errors.forEach((errorCode, i) => { answer[slots[i].topic].partitions[slots[i].partition].errorCode = errorCode; });
  }
  return answer;
}
