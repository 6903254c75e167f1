/**
 * The console API's failures as HTTP answers: a status and `{ error: "NAME: message" }`. Apart from
 * console-api.ts so that the listener can answer errors without loading the Kafka client, which the
 * console API loads on its first request.
 */
import { AdminError, toAdminError } from '../admin/errors';

/** A failure with the HTTP status it is answered with. */
export class HttpError extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
  }
}

/** Kafka's error names the console answers other than 502 (a failure of the cluster). */
const STATUS_OF_ERROR: Record<string, number> = {
  UNKNOWN_TOPIC_OR_PARTITION: 404,
  UNKNOWN_TOPIC_ID: 404,
  GROUP_ID_NOT_FOUND: 404,
  TOPIC_ALREADY_EXISTS: 409,
  NON_EMPTY_GROUP: 409,
  INVALID_TOPIC_EXCEPTION: 400,
  INVALID_PARTITIONS: 400,
  INVALID_REPLICATION_FACTOR: 400,
  INVALID_REPLICA_ASSIGNMENT: 400,
  INVALID_CONFIG: 400,
  INVALID_REQUEST: 400,
  INVALID_GROUP_ID: 400,
  POLICY_VIOLATION: 400,
  OFFSET_OUT_OF_RANGE: 400,
  TOPIC_AUTHORIZATION_FAILED: 403,
  GROUP_AUTHORIZATION_FAILED: 403,
  CLUSTER_AUTHORIZATION_FAILED: 403,
  TOPIC_DELETION_DISABLED: 403,
};

/** The status and `{ error }` body of a failure. */
export function errorResponse(e: unknown): { status: number; error: string; unexpected: boolean } {
  if (e instanceof HttpError) return { status: e.status, error: e.message, unexpected: false };
  const code = (e as { code?: unknown })?.code;
  const fromClient = typeof code === 'string' && code.startsWith('PLT_KFK_');
  if (!(e instanceof AdminError) && !fromClient) return { status: 500, error: `INTERNAL: ${(e as Error)?.message ?? String(e)}`, unexpected: true };
  const admin = toAdminError(e);
  if (admin.errorName) return { status: STATUS_OF_ERROR[admin.errorName] ?? 502, error: admin.message, unexpected: false };
  // An AdminError without a Kafka name is the admin layer refusing its input; the client's own
  // refusals (PLT_KFK_USER) are bad input too; the rest (network, timeouts) is the cluster's failure.
  const badInput = e instanceof AdminError || code === 'PLT_KFK_USER';
  return { status: badInput ? 400 : 502, error: admin.message, unexpected: false };
}
