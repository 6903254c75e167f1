// The leader's view of one partition's replicas (Kafka's Partition, leader side, with its Replica
// objects): each follower's log end offset and last caught-up time as its fetches report them, the
// in-sync replica set (ISR) and the high watermark, and the acks=all rule. It holds no log: it reads
// the leader's log end offset through a getter and proposes ISR changes through an injected
// AlterPartition call (the controller decides; a refusal, e.g. a stale partition epoch, comes back
// with the current state). Time comes from an injected clock.
//
// The rules, as Kafka's:
//  - A follower is caught up at a fetch when its log end offset (its fetch offset) reaches the
//    leader's log end offset, or reaches the leader's log end offset of its previous fetch (caught
//    up as of that fetch) (Replica.updateFetchStateOrThrow, lastCaughtUpTimeMs).
//  - The high watermark is the smallest log end offset of the maximal ISR (the committed ISR plus a
//    member an AlterPartition in flight would add, minus none it would remove), leader included, and
//    of any follower caught up and about to join; it never moves back (maybeIncrementLeaderHW).
//  - A follower of the ISR not caught up for replica.lag.time.max.ms leaves it (getOutOfSyncReplicas;
//    the caller runs maybeShrinkIsr every replica.lag.time.max.ms / 2, as Kafka's isr-expiration task).
//  - A follower outside the ISR rejoins once its log end offset reaches the high watermark and the
//    start offset of the current leader epoch (isFollowerInSync), at its fetch.
//  - One AlterPartition at a time; while one is in flight no other change is proposed.
//  - acks=all: NOT_ENOUGH_REPLICAS before the append when the ISR is below min.insync.replicas; an
//    append is complete once the high watermark passes it, NOT_ENOUGH_REPLICAS_AFTER_APPEND if the
//    ISR has shrunk below min.insync.replicas by then (checkEnoughReplicasReachOffset).
//
// A single broker's partition, ISR = [leader], has as high watermark its log end offset.
import { ErrorCode } from '../common/errors';

/** Kafka's replica.lag.time.max.ms default. */
export const DEFAULT_REPLICA_LAG_TIME_MAX_MS = 30_000;

/** A partition's replication state as the controller keeps it (Kafka's PartitionRegistration / LeaderAndIsr). */
export interface PartitionState {
  leader: number;
  leaderEpoch: number;
  isr: readonly number[];
  /** Bumped by every change; an AlterPartition based on an older one is refused (INVALID_UPDATE_VERSION). */
  partitionEpoch: number;
}

/** The controller's answer to an ISR change: the new state, or a refusal with the current state when known. */
export type AlterPartitionResult = { state: PartitionState } | { errorCode: number; state?: PartitionState };

/** Proposes `isr` for the partition, based on the leader and partition epochs the leader has. */
export type AlterPartition = (proposal: { leaderEpoch: number; partitionEpoch: number; isr: number[] }) => Promise<AlterPartitionResult>;

/** What the acks=all rule answers for an append: not yet, or its error code (NONE once complete). */
export type AcksAllResult = 'pending' | number;

const UNKNOWN_OFFSET = -1;

/** What the leader knows of one follower (Kafka's ReplicaState). */
interface FollowerState {
  /** UNKNOWN_OFFSET until its first fetch in this leader epoch. */
  logEndOffset: number;
  lastCaughtUpTimeMs: number;
  /** The leader's log end offset at the follower's previous fetch. */
  lastFetchLeaderLogEndOffset: number;
  lastFetchTimeMs: number;
}

export interface PartitionReplicasOptions {
  /** This broker, the leader. */
  brokerId: number;
  /** The assigned replicas, the leader among them. */
  replicas: readonly number[];
  /** The state in which this broker leads (leader = brokerId). */
  state: PartitionState;
  /** The leader's log end offset when its epoch began (its first offset in the epoch). */
  leaderEpochStartOffset: number;
  /** The log's high watermark when leadership began: the new one starts there. */
  highWatermark: number;
  leaderLogEndOffset: () => number;
  alterPartition: AlterPartition;
  replicaLagTimeMaxMs?: number;
  /** Kafka's isReplicaIsrEligible (replication.ts); absent: every follower is. */
  isReplicaIsrEligible?: (brokerId: number) => boolean;
  now: () => number;
  /** Told each time the high watermark moves (delayed produces and fetches wait on it). */
  onHighWatermark?: (highWatermark: number) => void;
  /** Told of each ISR change the controller accepted (Kafka's markShrink / markExpand: the metrics). */
  onIsrChanged?: (change: 'shrink' | 'expand') => void;
}

export class PartitionReplicas {
  private state: PartitionState;
  private hw: number;
  private readonly followers = new Map<number, FollowerState>();
  /** The AlterPartition in flight and the ISR it proposes. */
  private pending?: { isr: readonly number[]; done: Promise<void> };
  private readonly lagTimeMaxMs: number;

  constructor(private readonly opts: PartitionReplicasOptions) {
    if (opts.state.leader !== opts.brokerId) throw new Error(`Broker ${opts.brokerId} is not the leader in ${JSON.stringify(opts.state)}`);
    this.state = opts.state;
    this.hw = opts.highWatermark;
    this.lagTimeMaxMs = opts.replicaLagTimeMaxMs ?? DEFAULT_REPLICA_LAG_TIME_MAX_MS;
    const now = opts.now();
    // Kafka's resetReplicaState for a new leader: ISR members count as caught up now.
    for (const id of opts.replicas) {
      if (id === opts.brokerId) continue;
      this.followers.set(id, {
        logEndOffset: UNKNOWN_OFFSET, lastCaughtUpTimeMs: opts.state.isr.includes(id) ? now : 0,
        lastFetchLeaderLogEndOffset: UNKNOWN_OFFSET, lastFetchTimeMs: 0,
      });
    }
  }

  get highWatermark(): number {
    return this.hw;
  }

  /** The committed ISR. */
  get isr(): readonly number[] {
    return this.state.isr;
  }

  /** The committed ISR with the member an AlterPartition in flight adds (one it removes still counts). */
  get maximalIsr(): readonly number[] {
    const pending = this.pending?.isr ?? [];
    return [...this.state.isr, ...pending.filter((id) => !this.state.isr.includes(id))];
  }

  get partitionState(): PartitionState {
    return this.state;
  }

  /** Settles once the AlterPartition in flight, if any, has its answer applied. */
  isrChangeSettled(): Promise<void> {
    return this.pending?.done ?? Promise.resolve();
  }

  /** A follower's log end offset as its last fetch said, or -1 (not a follower, or no fetch yet). */
  followerLogEndOffset(replicaId: number): number {
    return this.followers.get(replicaId)?.logEndOffset ?? UNKNOWN_OFFSET;
  }

  /**
   * A follower fetched from `fetchOffset`, so it has everything below it (Kafka's
   * updateFollowerFetchState): updates its caught-up time, may propose it back into the ISR, may
   * move the high watermark. False when `replicaId` is no follower of this partition (Kafka answers
   * the fetch NOT_LEADER_OR_FOLLOWER then).
   */
  updateFollowerFetch(replicaId: number, fetchOffset: number): boolean {
    const follower = this.followers.get(replicaId);
    if (!follower) return false;
    const now = this.opts.now();
    const leaderEnd = this.opts.leaderLogEndOffset();
    if (fetchOffset >= leaderEnd) follower.lastCaughtUpTimeMs = Math.max(follower.lastCaughtUpTimeMs, now);
    else if (fetchOffset >= follower.lastFetchLeaderLogEndOffset) follower.lastCaughtUpTimeMs = Math.max(follower.lastCaughtUpTimeMs, follower.lastFetchTimeMs);
    follower.logEndOffset = fetchOffset;
    follower.lastFetchLeaderLogEndOffset = leaderEnd;
    follower.lastFetchTimeMs = now;
    this.maybeExpandIsr(replicaId, follower);
    this.maybeIncrementHighWatermark();
    return true;
  }

  /** The leader appended: with no follower to wait for, the high watermark moves with it. */
  onLeaderAppend(): void {
    this.maybeIncrementHighWatermark();
  }

  /** ISR followers not caught up for replica.lag.time.max.ms (Kafka's getOutOfSyncReplicas). */
  outOfSyncReplicas(): number[] {
    const now = this.opts.now();
    const leaderEnd = this.opts.leaderLogEndOffset();
    return this.state.isr.filter((id) => {
      const follower = this.followers.get(id);
      return follower !== undefined && !this.isCaughtUp(follower, leaderEnd, now);
    });
  }

  /**
   * Proposes the ISR without its out-of-sync followers (Kafka's maybeShrinkIsr), unless an ISR change
   * is in flight. Resolves once the answer is applied.
   */
  maybeShrinkIsr(): Promise<void> {
    if (this.pending) return Promise.resolve();
    const out = this.outOfSyncReplicas();
    if (out.length === 0) return Promise.resolve();
    return this.propose(this.state.isr.filter((id) => !out.includes(id)));
  }

  /**
   * The controller's newer state for the partition (a change it made itself, or one seen in
   * metadata): replaces the ISR, drops an AlterPartition in flight (its answer will be stale) and
   * ignores states not newer than the current one. A state in which this broker no longer leads
   * ends this object's use: the caller makes the partition a follower.
   */
  updatePartitionState(state: PartitionState): void {
    if (state.leaderEpoch < this.state.leaderEpoch || (state.leaderEpoch === this.state.leaderEpoch && state.partitionEpoch <= this.state.partitionEpoch)) return;
    this.pending = undefined;
    this.state = state;
    this.maybeIncrementHighWatermark();
  }

  /**
   * The assigned replicas changed within this leader epoch (a reassignment added replicas, or
   * removed ones not in the ISR; Kafka's updateAssignmentAndIsr): new followers are tracked from
   * their first fetch, removed ones forgotten (their fetches are refused), and the high watermark
   * no longer waits for them.
   */
  updateReplicas(replicas: readonly number[]): void {
    for (const id of [...this.followers.keys()]) if (!replicas.includes(id)) this.followers.delete(id);
    for (const id of replicas) {
      if (id === this.opts.brokerId || this.followers.has(id)) continue;
      this.followers.set(id, { logEndOffset: UNKNOWN_OFFSET, lastCaughtUpTimeMs: 0, lastFetchLeaderLogEndOffset: UNKNOWN_OFFSET, lastFetchTimeMs: 0 });
    }
    this.maybeIncrementHighWatermark();
  }

  /** acks=all, before appending (Kafka's appendRecordsToLeader): NOT_ENOUGH_REPLICAS when the ISR is too small. */
  checkEnoughReplicasForAppend(minInsyncReplicas: number): number {
    return this.state.isr.length >= minInsyncReplicas ? ErrorCode.NONE : ErrorCode.NOT_ENOUGH_REPLICAS;
  }

  /**
   * acks=all, after appending up to `lastOffset` (Kafka's checkEnoughReplicasReachOffset): pending
   * until the high watermark passes it; then NONE, or NOT_ENOUGH_REPLICAS_AFTER_APPEND when the
   * ISR has shrunk below min.insync.replicas meanwhile.
   */
  acksAllResult(lastOffset: number, minInsyncReplicas: number): AcksAllResult {
    if (this.hw <= lastOffset) return 'pending';
    return this.maximalIsr.length >= minInsyncReplicas ? ErrorCode.NONE : ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND;
  }

  private isReplicaIsrEligible(brokerId: number): boolean {
    return this.opts.isReplicaIsrEligible?.(brokerId) ?? true;
  }

  /** Kafka's ReplicaState.isCaughtUp. */
  private isCaughtUp(follower: FollowerState, leaderEnd: number, now: number): boolean {
    return follower.logEndOffset === leaderEnd || now - follower.lastCaughtUpTimeMs <= this.lagTimeMaxMs;
  }

  /** Kafka's maybeExpandIsr with isFollowerInSync: caught up to the high watermark, within this leader's epoch. */
  private maybeExpandIsr(replicaId: number, follower: FollowerState): void {
    if (this.pending || this.state.isr.includes(replicaId) || !this.isReplicaIsrEligible(replicaId)) return;
    if (follower.logEndOffset >= this.hw && follower.logEndOffset >= this.opts.leaderEpochStartOffset) {
      void this.propose([...this.state.isr, replicaId]);
    }
  }

  /** Kafka's maybeIncrementLeaderHW (see the file comment); tells onHighWatermark when it moves. */
  private maybeIncrementHighWatermark(): void {
    const now = this.opts.now();
    const leaderEnd = this.opts.leaderLogEndOffset();
    const maximal = this.maximalIsr;
    let hw = leaderEnd;
    for (const [id, follower] of this.followers) {
      // A caught-up follower outside the ISR is waited for only while it may join it (Kafka's shouldWaitForReplicaToJoinIsr).
      const waitFor = maximal.includes(id) || (this.isCaughtUp(follower, leaderEnd, now) && this.isReplicaIsrEligible(id));
      if (waitFor && follower.logEndOffset < hw) hw = follower.logEndOffset;
    }
    if (hw <= this.hw) return;
    this.hw = hw;
    this.opts.onHighWatermark?.(hw);
  }

  /**
   * Sends an AlterPartition for `isr`; its answer applies only if no newer state replaced the one it
   * was based on meanwhile. A refusal, or a failed call, drops the proposal (the next fetch or
   * shrink check proposes again, from the state the refusal carries when it carries one).
   */
  private propose(isr: readonly number[]): Promise<void> {
    const base = this.state;
    const request = this.opts.alterPartition({ leaderEpoch: base.leaderEpoch, partitionEpoch: base.partitionEpoch, isr: [...isr] });
    const pending = {
      isr,
      done: request.then(
        (result) => {
          if (this.pending !== pending) return;
          this.pending = undefined;
          if (!('errorCode' in result)) this.opts.onIsrChanged?.(isr.length < base.isr.length ? 'shrink' : 'expand');
          if (result.state) this.updatePartitionState(result.state);
          this.maybeIncrementHighWatermark();
        },
        () => {
          if (this.pending === pending) this.pending = undefined;
        },
      ),
    };
    this.pending = pending;
    return pending.done;
  }
}
