// A follower's fetcher for one leader broker (Kafka's ReplicaFetcherThread over AbstractFetcherThread):
// one loop that asks the leader for what its partitions lack and appends it as-is
// (PartitionLog.appendAsFollower), each append written before that partition is fetched again.
//
// A partition's state is Kafka's PartitionFetchState: truncating or fetching, its fetch offset, the
// epoch of its last fetched batch, a backoff after an error, or parked (Kafka's failed partitions)
// until the manager adds it again. As in Kafka 4.4:
// - A partition added (a new leader, or a new leader epoch) whose log has a leader epoch fetches at
//   once from its log end with lastFetchedEpoch, when the leader's Fetch is v12+: the leader answers
//   a divergent tail with divergingEpoch (KIP-320) and the follower truncates there
//   (followerTruncationPoint). Below v12 it first asks OffsetForLeaderEpoch, again until the rule
//   says done. A log without epochs truncates to the follower's high watermark.
// - Truncation may go below the high watermark (only after an unclean election): warned, as Kafka does,
//   naming the offsets removed.
// - OFFSET_OUT_OF_RANGE: ListOffsets for the leader's end; if the follower is ahead, it truncates there;
//   else, if the leader's log start is past the follower's end, the follower's log is emptied and
//   fetching restarts at the leader's log start (the gap is accepted by appendAsFollower; the log
//   start moves up once the high watermark covers it); else it fetches again from its end.
// - FENCED_LEADER_EPOCH (the leader is newer): parked until added again. NOT_LEADER_OR_FOLLOWER,
//   UNKNOWN_LEADER_EPOCH (the leader has not taken its epoch yet), unknown topic and other errors:
//   retried after replica.fetch.backoff.ms, as Kafka's partitionsWithError.
// - A storage error on append or truncation parks the partition (logged); a corrupt batch is retried.
// - A failed connection or request closes the connection; the next one is made after the backoff.
// - Throttling (Kafka's shouldFollowerThrottle): a partition not in sync (its lag, the leader's high
//   watermark less its fetch offset after the last records, unknown or above 0) that the follower
//   quota throttles is left out of the requests while that quota is exceeded; with nothing else to
//   fetch the fetcher waits replica.fetch.backoff.ms (Kafka's empty fetch). The records received of
//   throttled partitions are recorded on the quota.
// The follower's high watermark is min(leader's, log end) (never below the log start), kept here and
// reported through onHighWatermark; the log start follows the leader's up to it (deleteRecordsBefore).
//
// Everything a partition's state changes across an await is checked against the map first: a state
// removed or replaced (removePartitions, addPartitions at a new epoch) is left alone.
import { ApiKey, type ApiRequestMap, type ApiResponseMap } from '../protocol/generated';
import type { FetchResponsePartitionData } from '../protocol/generated/FetchResponse';
import { ErrorCode, errorName } from '../common/errors';
import type { Logger } from '../common/logger';
import { StorageError, partitionKey, type PartitionLog } from '../storage';
import { followerTruncationPoint, type FollowerLog, type LeaderEpochEndOffset } from './follower-truncation';
import type { ReplicaQuota } from './replication-quota';
import type { TopicMetrics } from '../metrics/topic-metrics';
import {
  EARLIEST_TIMESTAMP, LATEST_TIMESTAMP, buildFetchRequest, fetchAnswers, listOffsetsRequest, offsetForLeaderEpochRequest,
  wholeBatches, type FetchLimits, type FetchedPartition, type PartitionFetch, type Replica,
} from './replica-fetcher-requests';

/** The requests a follower sends its leader. */
export type LeaderApi = typeof ApiKey.Fetch | typeof ApiKey.OffsetForLeaderEpoch | typeof ApiKey.ListOffsets;

/** A connection to a leader broker (net/ provides it over BrokerClient). */
export interface LeaderConnection {
  /** The version request() sends an API at (the highest both sides support); undefined if the leader has none. */
  versionOf(apiKey: LeaderApi): number | undefined;
  /** Rejects when the connection fails or the request times out; the fetcher then drops the connection. */
  request<K extends LeaderApi>(apiKey: K, body: ApiRequestMap[K]): Promise<ApiResponseMap[K]>;
  close(): void;
}

/** Opens a connection to a broker by id; rejects when it cannot (unknown broker, refused, timed out). */
export type ConnectToLeader = (leaderId: number) => Promise<LeaderConnection>;

/** The replica.fetch.* broker settings. */
export interface ReplicaFetcherConfig {
  /** replica.fetch.wait.max.ms (Kafka: 500) */
  readonly fetchWaitMaxMs: number;
  /** replica.fetch.min.bytes (1) */
  readonly fetchMinBytes: number;
  /** replica.fetch.response.max.bytes (10485760) */
  readonly fetchResponseMaxBytes: number;
  /** replica.fetch.max.bytes (1048576) */
  readonly fetchMaxBytes: number;
  /** replica.fetch.backoff.ms (1000) */
  readonly fetchBackoffMs: number;
}

/** A partition this broker follows: what addPartitions takes. */
export interface FollowerPartition extends FetchedPartition {
  readonly log: PartitionLog;
  /** The follower's high watermark so far (its checkpoint, or what it had as leader); 0 if not given. */
  readonly highWatermark?: number;
}

export interface ReplicaFetcherOptions extends Replica {
  readonly connect: ConnectToLeader;
  readonly config: ReplicaFetcherConfig;
  readonly logger: Logger;
  readonly onHighWatermark: (topic: string, partition: number, highWatermark: number) => void;
  /** The follower replication quota; none: nothing is throttled. */
  readonly quota?: ReplicaQuota;
  /** Where the records appended are counted (ReplicationBytesInPerSec); none: not counted. */
  readonly topicMetrics?: TopicMetrics;
}

/** Kafka's PartitionFetchState, plus the follower's high watermark. */
interface PartitionState extends PartitionFetch {
  readonly target: FollowerPartition;
  mode: 'truncating' | 'fetching' | 'parked';
  fetchOffset: number;
  lastFetchedEpoch: number | undefined;
  highWatermark: number;
  /** The leader's high watermark less the fetch offset, after the last records appended; undefined before any answer. */
  lag: number | undefined;
  /** No request for it before this time (Date.now()), after an error. */
  delayedUntil: number;
  /** Until this settles (the previous fetcher's last write), nothing is done with the partition. */
  waitingFor: Promise<unknown> | undefined;
  readonly logStartOffset: number;
}

export class ReplicaFetcher {
  private readonly states = new Map<string, PartitionState>();
  /** Each partition's storage operation in progress (an append, a truncation), for removePartitions. */
  private readonly inFlight = new Map<string, Promise<unknown>>();
  private connection: LeaderConnection | undefined;
  private closed = false;
  private wakeUp: (() => void) | undefined;
  /** After a failed round (connection, request): no new one before this time (replica.fetch.backoff.ms). */
  private retryAt = 0;
  private readonly loop: Promise<void>;
  private readonly logger: Logger;

  constructor(readonly leaderId: number, private readonly opts: ReplicaFetcherOptions) {
    this.logger = opts.logger.child({ replicaFetcher: leaderId });
    this.loop = this.run();
  }

  get partitionCount(): number {
    return this.states.size;
  }

  /**
   * Starts fetching these partitions. One already here at the same leader epoch (same topic id and
   * log) and not parked keeps its state (Kafka's addPartitions); any other starts over (truncation
   * first). `after` holds, by partition key, what must settle before this fetcher touches the
   * partition (the previous fetcher's write).
   */
  addPartitions(partitions: readonly FollowerPartition[], after = new Map<string, Promise<unknown>>()): void {
    for (const target of partitions) {
      const key = partitionKey(target.topic, target.partition);
      const current = this.states.get(key);
      const same = current && current.target.leaderEpoch === target.leaderEpoch && current.target.topicId === target.topicId && current.target.log === target.log;
      if (same && current.mode !== 'parked') continue;
      const log = target.log;
      const waitingFor = after.get(key);
      const state: PartitionState = {
        target, mode: 'truncating', fetchOffset: log.logEndOffset, lastFetchedEpoch: undefined, lag: undefined, delayedUntil: 0, waitingFor,
        highWatermark: Math.min(target.highWatermark ?? current?.highWatermark ?? 0, log.logEndOffset),
        get logStartOffset() { return log.logStartOffset; },
      };
      this.states.set(key, state);
      if (waitingFor) {
        this.inFlight.set(key, waitingFor);
        void waitingFor.catch(() => undefined).then(() => {
          state.waitingFor = undefined;
          if (this.inFlight.get(key) === waitingFor) this.inFlight.delete(key);
          this.wake();
        });
      }
    }
    this.wake();
  }

  /** Stops fetching these partitions; resolves once no append or truncation of theirs is in flight. */
  async removePartitions(partitions: ReadonlyArray<{ topic: string; partition: number }>): Promise<void> {
    const pending: Array<Promise<unknown>> = [];
    for (const { topic, partition } of partitions) {
      const key = partitionKey(topic, partition);
      this.states.delete(key);
      const op = this.inFlight.get(key);
      if (op) pending.push(op);
    }
    await Promise.allSettled(pending);
  }

  /** The follower's high watermark of a partition here, parked ones included. */
  highWatermark(topic: string, partition: number): number | undefined {
    return this.states.get(partitionKey(topic, partition))?.highWatermark;
  }

  /** Whether a partition is parked (fenced or failed) until it is added again. */
  isParked(topic: string, partition: number): boolean {
    return this.states.get(partitionKey(topic, partition))?.mode === 'parked';
  }

  /** Stops the loop and closes the connection; resolves once the loop has ended (writes in flight done). */
  async close(): Promise<void> {
    this.closed = true;
    this.connection?.close();
    this.wake();
    await this.loop;
  }

  // ---------------------------------------------------------------- the loop

  private async run(): Promise<void> {
    while (!this.closed) {
      try {
        await this.runOnce();
      } catch (err) {
        if (this.closed) break;
        this.logger.warn({ err }, `Error in the fetch from broker ${this.leaderId}; retrying in ${this.opts.config.fetchBackoffMs} ms`);
        this.dropConnection();
        // A partition added meanwhile wakes the loop, but does not cut the backoff short.
        this.retryAt = Date.now() + this.opts.config.fetchBackoffMs;
      }
    }
    this.dropConnection();
  }

  /** One round: connect if needed, truncate the partitions that must, fetch the others. */
  private async runOnce(): Promise<void> {
    const backoff = this.retryAt - Date.now();
    if (backoff > 0) {
      await this.pause(backoff);
      return;
    }
    if (this.ready('truncating').length + this.ready('fetching').length === 0) {
      await this.pause(this.nextDelayMs());
      return;
    }
    const connection = await this.connected();
    if (!connection) return;
    const truncating = this.ready('truncating');
    if (truncating.length > 0) await this.settleAll(truncating.map((s) => this.truncateBeforeFetching(connection, s)));
    const fetching = this.ready('fetching');
    if (fetching.length === 0) return;
    const unthrottled = fetching.filter((s) => !this.shouldFollowerThrottle(s));
    if (unthrottled.length > 0) await this.fetch(connection, unthrottled);
    else await this.pause(this.opts.config.fetchBackoffMs);
  }

  /** Kafka's shouldFollowerThrottle: an in-sync replica is never held back (the ISR would thrash). */
  private shouldFollowerThrottle(state: PartitionState): boolean {
    const quota = this.opts.quota;
    const inSync = state.lag !== undefined && state.lag <= 0;
    return quota !== undefined && !inSync && quota.isThrottled(state.target.topic, state.target.partition) && quota.isQuotaExceeded();
  }

  /** Partitions in this mode that may be worked on now. */
  private ready(mode: 'truncating' | 'fetching'): PartitionState[] {
    const now = Date.now();
    return [...this.states.values()].filter((s) => s.mode === mode && s.delayedUntil <= now && s.waitingFor === undefined);
  }

  /** Until the first delayed partition may go again; Infinity (until woken) when none is delayed. */
  private nextDelayMs(): number {
    let until = Infinity;
    for (const s of this.states.values()) if (s.mode !== 'parked' && s.delayedUntil > 0) until = Math.min(until, s.delayedUntil);
    return Math.max(0, until - Date.now());
  }

  private async connected(): Promise<LeaderConnection | undefined> {
    if (this.connection) return this.connection;
    const connection = await this.opts.connect(this.leaderId);
    if (this.closed) {
      connection.close();
      return undefined;
    }
    this.connection = connection;
    return connection;
  }

  private dropConnection(): void {
    this.connection?.close();
    this.connection = undefined;
  }

  /** Waits `ms`, or until woken (a partition added, close()). */
  private pause(ms: number): Promise<void> {
    if (this.closed) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        if (this.wakeUp === done) this.wakeUp = undefined;
        resolve();
      };
      const timer = Number.isFinite(ms) ? setTimeout(done, ms) : undefined;
      this.wakeUp = done;
    });
  }

  private wake(): void {
    this.wakeUp?.();
  }

  /** Waits for every task, then rethrows the first failure (a connection error): no write is left running. */
  private async settleAll(tasks: Array<Promise<void>>): Promise<void> {
    const failed = (await Promise.allSettled(tasks)).find((r) => r.status === 'rejected');
    if (failed) throw (failed as PromiseRejectedResult).reason;
  }

  private isCurrent(state: PartitionState): boolean {
    return this.states.get(partitionKey(state.target.topic, state.target.partition)) === state;
  }

  // ---------------------------------------------------------------- fetching

  private async fetch(connection: LeaderConnection, partitions: PartitionState[]): Promise<void> {
    const version = connection.versionOf(ApiKey.Fetch);
    if (version === undefined) throw new Error(`Broker ${this.leaderId} serves no Fetch version we know`);
    const config = this.opts.config;
    const limits: FetchLimits = {
      maxWaitMs: config.fetchWaitMaxMs, minBytes: config.fetchMinBytes,
      maxBytes: config.fetchResponseMaxBytes, partitionMaxBytes: config.fetchMaxBytes,
    };
    const sent = partitions.map((state) => ({ state, fetchOffset: state.fetchOffset, target: state.target, lastFetchedEpoch: state.lastFetchedEpoch, logStartOffset: state.logStartOffset, highWatermark: state.highWatermark }));
    const response = await connection.request(ApiKey.Fetch, buildFetchRequest(version, this.opts, limits, sent));
    if (this.closed) return;
    if ((response.errorCode ?? ErrorCode.NONE) !== ErrorCode.NONE) {
      this.logger.warn(`Fetch from broker ${this.leaderId} failed with ${errorName(response.errorCode ?? 0)}`);
      for (const s of partitions) this.delay(s);
      return;
    }
    const tasks: Array<Promise<void>> = [];
    for (const [{ state, fetchOffset }, data] of fetchAnswers(version, sent, response)) {
      // Kafka's check: the partition is still fetched, from the offset asked (no truncation meanwhile).
      if (!this.isCurrent(state) || state.mode !== 'fetching' || state.fetchOffset !== fetchOffset) continue;
      tasks.push(this.onPartitionData(connection, state, data, version));
    }
    await this.settleAll(tasks);
  }

  private async onPartitionData(connection: LeaderConnection, state: PartitionState, data: FetchResponsePartitionData, version: number): Promise<void> {
    const { topic, partition } = state.target;
    switch (data.errorCode) {
      case ErrorCode.NONE:
        return this.appendFetched(state, data, version);
      case ErrorCode.OFFSET_OUT_OF_RANGE:
        return this.onOffsetOutOfRange(connection, state);
      case ErrorCode.FENCED_LEADER_EPOCH:
        this.park(state, `leader epoch ${state.target.leaderEpoch} is older than broker ${this.leaderId}'s`);
        return;
      default:
        this.logger.info(`Fetch of ${topic}-${partition} from broker ${this.leaderId} answered ${errorName(data.errorCode)}; retrying in ${this.opts.config.fetchBackoffMs} ms`);
        this.delay(state);
    }
  }

  /**
   * A divergence is truncated first and alone: the high watermark and log start wait for the next
   * fetch, after the cut (as Kafka 4.4's processFetchRequest does). Else appends what came (waiting
   * for the write), then follows the leader's high watermark and log start.
   */
  private async appendFetched(state: PartitionState, data: FetchResponsePartitionData, version: number): Promise<void> {
    const diverging = data.divergingEpoch;
    if (version >= 12 && diverging !== undefined && (diverging.epoch ?? -1) >= 0) {
      await this.truncateAt(state, { epoch: diverging.epoch ?? -1, endOffset: Number(diverging.endOffset ?? -1n) }, true);
      return;
    }
    const log = state.target.log;
    const { topic, partition } = state.target;
    const records = data.records === null ? Buffer.alloc(0) : wholeBatches(data.records);
    if (data.records && data.records.length > 0 && this.opts.quota?.isThrottled(topic, partition)) this.opts.quota.record(data.records.length);
    if (records.length > 0) {
      const written = this.storageStep(state, 'appending', async () => {
        const appended = log.appendAsFollower(records);
        state.fetchOffset = appended.lastOffset + 1;
        const metrics = this.opts.topicMetrics;
        if (metrics) metrics.replicated(metrics.find(topic), records.length);
        await appended.done;
      });
      if (!(await written) || !this.isCurrent(state)) return;
      state.lastFetchedEpoch = log.latestEpoch();
    }
    if (records.length > 0 || state.lag === undefined) state.lag = Math.max(0, Number(data.highWatermark) - state.fetchOffset);
    this.updateHighWatermark(state, Number(data.highWatermark));
    const leaderLogStart = Number(data.logStartOffset ?? -1n);
    // Kafka's maybeIncrementLogStartOffset on a follower: up to the leader's, never past the high watermark.
    if (leaderLogStart > log.logStartOffset && leaderLogStart <= state.highWatermark) {
      await this.storageStep(state, 'moving the log start of', () => log.deleteRecordsBefore(leaderLogStart));
    }
  }

  /** The follower's high watermark: the leader's, within the log's start and end (Kafka's updateHighWatermark). */
  private updateHighWatermark(state: PartitionState, leaderHighWatermark: number): void {
    const log = state.target.log;
    const hw = Math.max(log.logStartOffset, Math.min(leaderHighWatermark, log.logEndOffset));
    this.setHighWatermark(state, hw);
  }

  private setHighWatermark(state: PartitionState, hw: number): void {
    if (hw === state.highWatermark) return;
    state.highWatermark = hw;
    this.opts.onHighWatermark(state.target.topic, state.target.partition, hw);
  }

  /** Kafka's handleOutOfRangeError / fetchOffsetAndTruncate, through ListOffsets to the leader. */
  private async onOffsetOutOfRange(connection: LeaderConnection, state: PartitionState): Promise<void> {
    const log = state.target.log;
    const leaderEnd = await this.leaderOffset(connection, state, LATEST_TIMESTAMP);
    if (leaderEnd === undefined) return;
    const logEnd = log.logEndOffset;
    let fetchOffset = logEnd;
    if (leaderEnd < logEnd) {
      // The leader has less than we do (an unclean election): cut our tail to its end.
      this.logger.warn(`${log.topic}-${log.partition}: log end ${logEnd} is past broker ${this.leaderId}'s end ${leaderEnd}; truncating to it`);
      if (!(await this.truncateLog(state, leaderEnd))) return;
      fetchOffset = leaderEnd;
    } else {
      const leaderStart = await this.leaderOffset(connection, state, EARLIEST_TIMESTAMP);
      if (leaderStart === undefined) return;
      if (leaderStart > logEnd) {
        // What we lack is gone from the leader (retention): start over at its log start.
        this.logger.info(`${log.topic}-${log.partition}: broker ${this.leaderId}'s log starts at ${leaderStart}, past our end ${logEnd}; emptying the log and fetching from there`);
        if (!(await this.truncateLog(state, log.logStartOffset))) return;
        fetchOffset = leaderStart;
      }
    }
    if (!this.isCurrent(state)) return;
    state.fetchOffset = fetchOffset;
    state.lastFetchedEpoch = log.latestEpoch();
    state.mode = 'fetching';
  }

  /** ListOffsets for one partition; undefined (the partition delayed or parked) on an error answer. */
  private async leaderOffset(connection: LeaderConnection, state: PartitionState, timestamp: bigint): Promise<number | undefined> {
    const version = connection.versionOf(ApiKey.ListOffsets);
    if (version === undefined) throw new Error(`Broker ${this.leaderId} serves no ListOffsets version we know`);
    const response = await connection.request(ApiKey.ListOffsets, listOffsetsRequest(this.opts.brokerId, state.target, timestamp));
    if (!this.isCurrent(state)) return undefined;
    const answer = response.topics.find((t) => t.name === state.target.topic)?.partitions.find((p) => p.partitionIndex === state.target.partition);
    return this.epochAnswer(state, 'ListOffsets', answer?.errorCode ?? ErrorCode.UNKNOWN_SERVER_ERROR)
      ? Number(answer?.offset ?? answer?.oldStyleOffsets[0] ?? -1n)
      : undefined;
  }

  /** An answer's error: NONE is true; FENCED_LEADER_EPOCH parks the partition, any other delays it. */
  private epochAnswer(state: PartitionState, api: string, errorCode: number): boolean {
    if (errorCode === ErrorCode.NONE) return true;
    if (errorCode === ErrorCode.FENCED_LEADER_EPOCH) {
      this.park(state, `leader epoch ${state.target.leaderEpoch} is older than broker ${this.leaderId}'s`);
    } else {
      this.logger.info(`${api} for ${state.target.topic}-${state.target.partition} from broker ${this.leaderId} answered ${errorName(errorCode)}; retrying later`);
      this.delay(state);
    }
    return false;
  }

  // ---------------------------------------------------------------- truncation

  /**
   * A partition just added: fetch at once (Fetch v12+ and a log with epochs: the leader will say
   * where we diverge), ask OffsetForLeaderEpoch (older leaders), or cut to the high watermark (a log
   * without epochs, or a leader without OffsetForLeaderEpoch).
   */
  private async truncateBeforeFetching(connection: LeaderConnection, state: PartitionState): Promise<void> {
    const log = state.target.log;
    const latest = log.latestEpoch();
    const truncationOnFetch = (connection.versionOf(ApiKey.Fetch) ?? 0) >= 12;
    const epochVersion = connection.versionOf(ApiKey.OffsetForLeaderEpoch);
    if (latest !== undefined && truncationOnFetch) {
      state.fetchOffset = log.logEndOffset;
      state.lastFetchedEpoch = latest;
      state.mode = 'fetching';
      return;
    }
    if (latest === undefined || epochVersion === undefined) {
      if (!(await this.truncateLog(state, state.highWatermark)) || !this.isCurrent(state)) return;
      state.fetchOffset = log.logEndOffset;
      state.lastFetchedEpoch = log.latestEpoch();
      state.mode = 'fetching';
      return;
    }
    const response = await connection.request(ApiKey.OffsetForLeaderEpoch, offsetForLeaderEpochRequest(this.opts.brokerId, state.target, latest));
    if (!this.isCurrent(state)) return;
    const answer = response.topics.find((t) => t.topic === state.target.topic)?.partitions.find((p) => p.partition === state.target.partition);
    if (!answer || !this.epochAnswer(state, 'OffsetForLeaderEpoch', answer.errorCode)) return;
    await this.truncateAt(state, { epoch: answer.leaderEpoch ?? -1, endOffset: Number(answer.endOffset ?? -1n) }, truncationOnFetch);
  }

  /**
   * Truncates where the leader's epoch end offset says (followerTruncationPoint) and fetches from
   * there; the partition stays truncating (another OffsetForLeaderEpoch) when the rule is not done
   * and the leader's Fetch cannot report divergence itself.
   */
  private async truncateAt(state: PartitionState, leader: LeaderEpochEndOffset, truncationOnFetch: boolean): Promise<void> {
    const log = state.target.log;
    const view: FollowerLog = { logEndOffset: log.logEndOffset, highWatermark: state.highWatermark, endOffsetForEpoch: (e) => log.endOffsetForEpoch(e) };
    const point = followerTruncationPoint(view, leader);
    this.logger.info(`Truncating ${log.topic}-${log.partition} to ${point.offset} (leader epoch ${leader.epoch} ends at ${leader.endOffset} on broker ${this.leaderId})`);
    if (!(await this.truncateLog(state, point.offset)) || !this.isCurrent(state)) return;
    state.fetchOffset = point.offset;
    state.lastFetchedEpoch = log.latestEpoch();
    state.mode = truncationOnFetch || point.complete ? 'fetching' : 'truncating';
  }

  /** PartitionLog.truncateTo and the follower's high watermark with it; false if storage failed. */
  private async truncateLog(state: PartitionState, offset: number): Promise<boolean> {
    const log = state.target.log;
    if (offset >= log.logEndOffset) return true;
    if (offset < state.highWatermark) {
      // Records this replica counted committed go: only an unclean election elects a leader without them.
      const [from, to] = [offset, log.logEndOffset - 1];
      this.logger.warn({ topic: log.topic, partition: log.partition, from, to, count: to - from + 1, highWatermark: state.highWatermark },
        `Truncating ${log.topic}-${log.partition} to offset ${offset}, below its high watermark ${state.highWatermark}: ` +
        `offsets ${from}..${to} (${to - from + 1}) removed, ${state.highWatermark - from} of them committed before an unclean leader election`);
    }
    if (!(await this.storageStep(state, 'truncating', () => log.truncateTo(offset)))) return false;
    if (this.isCurrent(state)) this.setHighWatermark(state, Math.min(state.highWatermark, offset));
    return true;
  }

  // ---------------------------------------------------------------- errors

  /**
   * Runs a storage operation, tracked for removePartitions. A corrupt batch delays the partition
   * (Kafka retries it); any other failure parks it (Kafka's markPartitionFailed). False on failure.
   */
  private async storageStep(state: PartitionState, what: string, step: () => Promise<unknown>): Promise<boolean> {
    const key = partitionKey(state.target.topic, state.target.partition);
    const op = (async () => step())();
    this.inFlight.set(key, op);
    try {
      await op;
      return true;
    } catch (err) {
      if (!this.isCurrent(state)) return false;
      if (err instanceof StorageError && err.errorCode === ErrorCode.CORRUPT_MESSAGE) {
        this.logger.error({ err }, `Invalid batches ${what} ${key} from broker ${this.leaderId}; retrying`);
        this.delay(state);
      } else {
        this.park(state, `storage error ${what} it`, err);
      }
      return false;
    } finally {
      if (this.inFlight.get(key) === op) this.inFlight.delete(key);
    }
  }

  private delay(state: PartitionState): void {
    if (state.delayedUntil <= Date.now()) state.delayedUntil = Date.now() + this.opts.config.fetchBackoffMs;
  }

  private park(state: PartitionState, reason: string, err?: unknown): void {
    state.mode = 'parked';
    const message = `Stopped fetching ${state.target.topic}-${state.target.partition} from broker ${this.leaderId} until it is added again: ${reason}`;
    if (err === undefined) this.logger.info(message);
    else this.logger.error({ err }, message);
  }
}
