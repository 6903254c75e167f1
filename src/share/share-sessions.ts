// Share sessions (KIP-932, Kafka's ShareSessionCache and ShareSession): what a share consumer
// fetches from this broker, keyed by (group id, member id).
// - Epoch 0 opens a session with the request's partitions (a member's earlier session is dropped,
//   its records stay acquired until their locks expire, as in Kafka); acknowledgements are refused
//   there (INVALID_REQUEST); a full cache answers SHARE_SESSION_LIMIT_REACHED.
// - Epoch > 0 must be the session's next epoch (INVALID_SHARE_SESSION_EPOCH, SHARE_SESSION_NOT_FOUND
//   without one): its topics are added, ForgottenTopicsData removed, and the whole session is fetched.
// - Epoch -1 (FINAL) ends it: the request's acknowledgements apply, then the member's records are
//   released; so does the connection that opened it closing.
// ShareAcknowledge never opens one (epoch 0 is INVALID_SHARE_SESSION_EPOCH).
import { ErrorCode } from '../common/errors';

export const INITIAL_SHARE_SESSION_EPOCH = 0;
export const FINAL_SHARE_SESSION_EPOCH = -1;

/** One partition a session fetches: the topic by id, as the request names it. */
export interface ShareSessionPartition {
  readonly topicId: string;
  readonly partition: number;
}

/** What a session needs of the connection that opened it: to hear of its close (returns the unsubscribe). */
export interface ConnectionCloseHook {
  onConnectionClose(listener: () => void): () => void;
}

export interface ShareSession {
  readonly groupId: string;
  readonly memberId: string;
  /** The epoch the member's next request must carry. */
  epoch: number;
  /** In the order added (the response follows it). */
  readonly partitions: Map<string, ShareSessionPartition>;
}

/** The partitions a ShareFetch acts on, or why it may not. */
export type ShareFetchContext =
  | { readonly kind: 'error'; readonly errorCode: number }
  /** Epoch -1: acknowledge, fetch nothing, then end the session. */
  | { readonly kind: 'final'; readonly session: ShareSession }
  | { readonly kind: 'full' | 'incremental'; readonly session: ShareSession; readonly partitions: readonly ShareSessionPartition[] };

const partitionKey = (p: ShareSessionPartition): string => `${p.topicId}:${p.partition}`;
const sessionKey = (groupId: string, memberId: string): string => `${groupId}\u0000${memberId}`;

/** Kafka's ShareRequestMetadata.nextEpoch: after Integer.MAX_VALUE comes 1 (0 would read as a new session). */
function nextEpoch(epoch: number): number {
  return epoch === 0x7fffffff ? 1 : epoch + 1;
}

interface SessionEntry {
  readonly session: ShareSession;
  /** Stops listening to the opening connection's close. */
  readonly unwatch: () => void;
}

export class ShareSessionCache {
  private readonly sessions = new Map<string, SessionEntry>();

  /**
   * @param maxSessions group.share.max.share.sessions, read at each new session.
   * @param sessionEnded called when a session ends without a FINAL request (its connection closed):
   *   the member's acquired records are to be released.
   */
  constructor(
    private readonly maxSessions: () => number,
    private readonly sessionEnded: (session: ShareSession) => void,
  ) {}

  get size(): number {
    return this.sessions.size;
  }

  get(groupId: string, memberId: string): ShareSession | undefined {
    return this.sessions.get(sessionKey(groupId, memberId))?.session;
  }

  /** Kafka's SharePartitionManager.newContext for a ShareFetch. */
  fetchContext(
    groupId: string, memberId: string, epoch: number, requested: readonly ShareSessionPartition[],
    forgotten: readonly ShareSessionPartition[], hasAcknowledgements: boolean, connection: ConnectionCloseHook,
  ): ShareFetchContext {
    const key = sessionKey(groupId, memberId);
    const existing = this.sessions.get(key);
    if (epoch === FINAL_SHARE_SESSION_EPOCH) {
      return existing ? { kind: 'final', session: existing.session } : { kind: 'error', errorCode: ErrorCode.SHARE_SESSION_NOT_FOUND };
    }
    if (epoch === INITIAL_SHARE_SESSION_EPOCH) {
      if (hasAcknowledgements) return { kind: 'error', errorCode: ErrorCode.INVALID_REQUEST };
      if (existing) this.drop(key, existing);
      if (this.sessions.size >= this.maxSessions()) return { kind: 'error', errorCode: ErrorCode.SHARE_SESSION_LIMIT_REACHED };
      const session: ShareSession = { groupId, memberId, epoch: nextEpoch(INITIAL_SHARE_SESSION_EPOCH), partitions: new Map() };
      for (const p of requested) session.partitions.set(partitionKey(p), p);
      const entry: SessionEntry = { session, unwatch: connection.onConnectionClose(() => this.connectionClosed(key, entry)) };
      this.sessions.set(key, entry);
      return { kind: 'full', session, partitions: [...session.partitions.values()] };
    }
    if (!existing) return { kind: 'error', errorCode: ErrorCode.SHARE_SESSION_NOT_FOUND };
    const { session } = existing;
    if (session.epoch !== epoch) return { kind: 'error', errorCode: ErrorCode.INVALID_SHARE_SESSION_EPOCH };
    for (const p of requested) if (!session.partitions.has(partitionKey(p))) session.partitions.set(partitionKey(p), p);
    for (const p of forgotten) session.partitions.delete(partitionKey(p));
    session.epoch = nextEpoch(session.epoch);
    return { kind: 'incremental', session, partitions: [...session.partitions.values()] };
  }

  /**
   * Kafka's acknowledgeSessionUpdate for a ShareAcknowledge: the session, its epoch moved on unless
   * it is the FINAL request (the caller then ends it), or the error.
   */
  acknowledgeContext(groupId: string, memberId: string, epoch: number): { session: ShareSession } | { errorCode: number } {
    if (epoch === INITIAL_SHARE_SESSION_EPOCH) return { errorCode: ErrorCode.INVALID_SHARE_SESSION_EPOCH };
    const existing = this.sessions.get(sessionKey(groupId, memberId));
    if (!existing) return { errorCode: ErrorCode.SHARE_SESSION_NOT_FOUND };
    if (epoch === FINAL_SHARE_SESSION_EPOCH) return { session: existing.session };
    if (existing.session.epoch !== epoch) return { errorCode: ErrorCode.INVALID_SHARE_SESSION_EPOCH };
    existing.session.epoch = nextEpoch(existing.session.epoch);
    return { session: existing.session };
  }

  /** Ends the session (a FINAL request); undefined if there was none. */
  remove(groupId: string, memberId: string): ShareSession | undefined {
    const key = sessionKey(groupId, memberId);
    const existing = this.sessions.get(key);
    if (!existing) return undefined;
    this.drop(key, existing);
    return existing.session;
  }

  private drop(key: string, entry: SessionEntry): void {
    this.sessions.delete(key);
    entry.unwatch();
  }

  /** The connection that opened the session closed: unless the member has opened another since, it ends. */
  private connectionClosed(key: string, entry: SessionEntry): void {
    if (this.sessions.get(key) !== entry) return;
    this.sessions.delete(key);
    this.sessionEnded(entry.session);
  }
}
