// The error the consumer, streams and share group managers throw inside a request and answer with.
import { ErrorCode, quoteInMessage } from '../common/errors';

/** A Kafka error to answer with (Kafka's ApiException): thrown inside a heartbeat, answered by it. */
export class GroupError extends Error {
  constructor(readonly code: number, message = '') {
    super(message);
  }
}

/** UNKNOWN_MEMBER_ID with Kafka's message. */
export function unknownMemberError(groupId: string, memberId: string): GroupError {
  return new GroupError(ErrorCode.UNKNOWN_MEMBER_ID, `Member ${quoteInMessage(memberId)} is not a member of group ${quoteInMessage(groupId)}.`);
}
