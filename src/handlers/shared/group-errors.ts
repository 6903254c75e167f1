// The error messages DescribeGroups (v6+) and DeleteGroups (v3+) send with a group's error code.
import { ErrorCode, errorMessage, quoteInMessage } from '../../common/errors';

/**
 * The coordinator's own message when it has one; else, for an unknown group, the message of the
 * exception Kafka's group coordinator throws on looking it up ("Group <id> not found.", a long id
 * cut so that the message fits a protocol string); else Kafka's default message for the code; null
 * without an error.
 */
export function groupErrorMessage(groupId: string, errorCode: number, own?: string): string | null {
  if (own !== undefined) return own;
  if (errorCode === ErrorCode.NONE) return null;
  return errorCode === ErrorCode.GROUP_ID_NOT_FOUND ? `Group ${quoteInMessage(groupId)} not found.` : errorMessage(errorCode);
}
