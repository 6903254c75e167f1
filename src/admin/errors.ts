/**
 * Errors of the admin commands as one line a person can act on: the Kafka error name and the
 * broker's message (`TOPIC_ALREADY_EXISTS: Topic 'orders' already exists.`), or what went wrong
 * before any broker answered.
 */

/** A failure a command reports as it is: `errorName` is Kafka's name of the code when a broker sent one. */
export class AdminError extends Error {
  constructor(message: string, readonly errorName?: string) {
    super(errorName ? `${errorName}: ${message}` : message);
    this.name = 'AdminError';
  }
}

interface ClientErrorShape {
  message?: string;
  /** @platformatic/kafka's ProtocolError: Kafka's error name, its code and the broker's message. */
  apiId?: string;
  apiCode?: number;
  serverErrorMessage?: string | null;
  errors?: unknown[];
}

/** Finds the broker's error inside @platformatic/kafka's nested errors (ResponseError, MultipleErrors). */
export function toAdminError(e: unknown): AdminError {
  if (e instanceof AdminError) return e;
  const found = findProtocolError(e, 0);
  if (found?.apiId) return new AdminError(found.serverErrorMessage || found.message || found.apiId, found.apiId);
  const shape = e as ClientErrorShape;
  const inner = shape?.errors?.map((x) => (x as ClientErrorShape).message).filter(Boolean) ?? [];
  const message = shape?.message ?? String(e);
  return new AdminError(inner.length ? `${message} (${[...new Set(inner)].join('; ')})` : message);
}

function findProtocolError(e: unknown, depth: number): ClientErrorShape | undefined {
  if (!e || typeof e !== 'object' || depth > 5) return undefined;
  const shape = e as ClientErrorShape;
  if (typeof shape.apiId === 'string') return shape;
  for (const inner of shape.errors ?? []) {
    const found = findProtocolError(inner, depth + 1);
    if (found) return found;
  }
  return undefined;
}
