// Fetch sessions (KIP-227): a consumer that fetches the same partitions again and again sends
// only what changed, and the broker answers only the partitions with something new.
//
//   epoch -1, id 0      sessionless full fetch (v0-6 clients, or a client that opts out)
//   epoch -1, id N      close session N, then a sessionless full fetch
//   epoch 0             full fetch that opens a new session (closing id N if given)
//   epoch > 0, id N     incremental fetch in session N: FETCH_SESSION_ID_NOT_FOUND for an
//                       unknown id, INVALID_FETCH_SESSION_EPOCH for a wrong epoch
//
// An incremental answer carries a partition only if it has records, an error, or a high
// watermark, last stable offset or log start offset that changed since the last answer.
// Sessions are kept in a small LRU cache; a full cache evicts its least recently used session
// once that one has been idle for min.incremental.fetch.session.eviction.ms.
import { ErrorCode } from '../common/errors';

export const INITIAL_EPOCH = 0;
export const FINAL_EPOCH = -1;

/** What the client asks of one partition; a session remembers it between requests. */
export interface FetchPartitionRequest {
  topic: string;             // name; resolved from the id for v13+
  topicId: string;
  partition: number;
  fetchOffset: number;
  logStartOffset: number;
  maxBytes: number;
  currentLeaderEpoch: number;
  lastFetchedEpoch: number;
  /** A follower's high watermark (Fetch v18+); absent when unknown. */
  replicaHighWatermark?: number;
}

/** What was last answered for a partition, to decide whether an incremental answer must carry it. */
interface SessionPartition extends FetchPartitionRequest {
  highWatermark: number;
  lastStableOffset: number;
  answeredLogStartOffset: number;
}

/** The parts of a partition's answer that decide whether an incremental fetch includes it. */
export interface PartitionAnswer {
  errorCode: number;
  highWatermark: number;
  lastStableOffset: number;
  logStartOffset: number;
  hasRecords: boolean;
}

export class FetchSession {
  epoch = INITIAL_EPOCH + 1;
  lastUsedMs: number;
  readonly partitions = new Map<string, SessionPartition>();

  constructor(readonly id: number, readonly usesTopicIds: boolean, nowMs: number) {
    this.lastUsedMs = nowMs;
  }
}

/**
 * The outcome of looking a request up: which partitions to read, and how to filter the answer.
 * `errorCode` set means the whole request is answered with that error and no partitions.
 */
export interface FetchContext {
  errorCode: number;
  sessionId: number;
  /** Partitions to read, in a stable order. */
  partitions: FetchPartitionRequest[];
  /** Whether the answer must carry this partition; remembers what was answered. */
  include(p: FetchPartitionRequest, answer: PartitionAnswer): boolean;
}

export const partitionKey = (topicKey: string, partition: number): string => `${topicKey}:${partition}`;

export class FetchSessionCache {
  private readonly sessions = new Map<number, FetchSession>(); // insertion order = LRU order
  private nextId = 1 + Math.floor(Math.random() * 0x3fffffff);

  constructor(
    private readonly maxSessions: number,
    private readonly minEvictionMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  get size(): number {
    return this.sessions.size;
  }

  /**
   * Builds the context of one Fetch request. `requested` are the partitions named in this
   * request; `forgotten` the keys the client asks the session to drop (v7+).
   */
  newContext(
    sessionId: number, epoch: number, usesTopicIds: boolean,
    requested: FetchPartitionRequest[], forgotten: string[],
  ): FetchContext {
    const keyOf = (p: FetchPartitionRequest) => partitionKey(usesTopicIds ? p.topicId : p.topic, p.partition);
    if (epoch === INITIAL_EPOCH || epoch === FINAL_EPOCH) {
      if (sessionId !== 0) this.sessions.delete(sessionId);
      if (epoch === FINAL_EPOCH) return sessionless(requested);
      const session = this.maybeCreate(usesTopicIds);
      if (!session) return sessionless(requested);
      for (const p of requested) session.partitions.set(keyOf(p), fresh(p));
      return sessionContext(session, 0, keyOf);
    }

    const session = this.sessions.get(sessionId);
    if (!session) return errorContext(ErrorCode.FETCH_SESSION_ID_NOT_FOUND);
    if (session.epoch !== epoch) return errorContext(ErrorCode.INVALID_FETCH_SESSION_EPOCH);
    if (session.usesTopicIds !== usesTopicIds) return errorContext(ErrorCode.FETCH_SESSION_TOPIC_ID_ERROR);
    for (const p of requested) {
      const key = keyOf(p);
      const cached = session.partitions.get(key);
      session.partitions.set(key, cached ? { ...cached, ...p } : fresh(p));
    }
    for (const key of forgotten) session.partitions.delete(key);
    if (session.partitions.size === 0) {
      this.sessions.delete(sessionId);
      return sessionless(requested);
    }
    this.touch(session);
    session.epoch = session.epoch === 0x7fffffff ? 1 : session.epoch + 1;
    return sessionContext(session, session.id, keyOf);
  }

  private touch(session: FetchSession): void {
    session.lastUsedMs = this.now();
    this.sessions.delete(session.id);
    this.sessions.set(session.id, session);
  }

  private maybeCreate(usesTopicIds: boolean): FetchSession | null {
    if (this.maxSessions <= 0) return null;
    if (this.sessions.size >= this.maxSessions) {
      const [oldestId, oldest] = this.sessions.entries().next().value as [number, FetchSession];
      if (this.now() - oldest.lastUsedMs < this.minEvictionMs) return null;
      this.sessions.delete(oldestId);
    }
    let id = this.nextId;
    while (id === 0 || this.sessions.has(id)) id = (id % 0x7fffffff) + 1;
    this.nextId = (id % 0x7fffffff) + 1;
    const session = new FetchSession(id, usesTopicIds, this.now());
    this.sessions.set(id, session);
    return session;
  }
}

function fresh(p: FetchPartitionRequest): SessionPartition {
  return { ...p, highWatermark: -1, lastStableOffset: -1, answeredLogStartOffset: -1 };
}

function sessionless(requested: FetchPartitionRequest[]): FetchContext {
  return { errorCode: ErrorCode.NONE, sessionId: 0, partitions: requested, include: () => true };
}

function errorContext(errorCode: number): FetchContext {
  return { errorCode, sessionId: 0, partitions: [], include: () => false };
}

/** A full fetch (`full`: every partition is answered) or an incremental one in `session`. */
function sessionContext(session: FetchSession, incrementalId: number, keyOf: (p: FetchPartitionRequest) => string): FetchContext {
  const full = incrementalId === 0;
  return {
    errorCode: ErrorCode.NONE,
    sessionId: session.id,
    partitions: [...session.partitions.values()],
    include(p, answer) {
      const cached = session.partitions.get(keyOf(p));
      if (!cached) return full;
      let changed = answer.hasRecords;
      if (cached.highWatermark !== answer.highWatermark) changed = true;
      if (cached.lastStableOffset !== answer.lastStableOffset) changed = true;
      if (cached.answeredLogStartOffset !== answer.logStartOffset) changed = true;
      cached.highWatermark = answer.errorCode === ErrorCode.NONE ? answer.highWatermark : -1;
      cached.lastStableOffset = answer.lastStableOffset;
      cached.answeredLogStartOffset = answer.logStartOffset;
      if (answer.errorCode !== ErrorCode.NONE) changed = true;
      return full || changed;
    },
  };
}
