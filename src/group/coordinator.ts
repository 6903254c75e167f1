// Kafka's classic group coordinator (GroupCoordinator.scala in 3.x, GroupMetadataManager's classic
// part and ClassicGroup in 4.x): the join / sync rebalance protocol, heartbeats and session
// timeouts, static membership (KIP-345), member ids handed out first (KIP-394), committed offsets
// and their retention. Handlers translate requests into these calls and the answers back.
//
// Every decision and state change is made synchronously, in one turn of the event loop, exactly
// where Kafka holds the group lock. Writes to __consumer_offsets are awaited only at the points
// Kafka waits for its append callback, and what follows a write re-checks the group first ("still
// CompletingRebalance, still this generation?"), as Kafka's callbacks do: a join that slips in while
// the leader's assignment is being written starts a new rebalance and the stale write changes nothing.
//
// Timers (sessions, join phase, sync phase, pending member ids, retention) are named tasks on the
// broker's timing wheel; a group's timers are cancelled when it dies.
//
// Transactional offsets (TxnOffsetCommit, KIP-98 / KIP-447) are written as the producer's
// transactional batch and stay pending per (group, producer) until the transaction coordinator
// has written the transaction's marker to the group's partition and calls onTransactionCompleted:
// COMMIT makes them the committed offsets (unless a later plain commit of the partition is there
// already), ABORT drops them. OffsetFetch never shows them; with require_stable it answers
// UNSTABLE_OFFSET_COMMIT for their partitions. Every write gets a number in log order (loaded
// offsets their place in the log), and "later" always means the higher number.
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { ErrorCode } from '../common/errors';
import type { Timer } from '../replica/delayed/timing-wheel';
import {
  ClassicGroup, GroupMember, GroupState, joinError, syncError, type JoinResult, type Protocol, type SequencedOffset,
  type SyncResult,
} from './group';
import { OffsetsLog, offsetKey } from './offsets-log';
import { GroupTimers } from './timers';

/** How much of the client or instance id starts a member id (at most 3 bytes a character). */
const MEMBER_ID_PREFIX_CHARS = 1000;
import type {
  GroupSnapshot, LoadedGroup, LoadedOffset, OffsetsStore, TopicPartitionKey, TopicPartitionOffset, TxnProducer,
} from './store';

/** How long a brand-new member's JoinGroup may wait before it is dropped (Kafka's 5 minutes). */
export const NEW_MEMBER_JOIN_TIMEOUT_MS = 5 * 60 * 1000;

export interface GroupCoordinatorConfig {
  minSessionTimeoutMs: number;
  maxSessionTimeoutMs: number;
  maxSize: number;
  initialRebalanceDelayMs: number;
  offsetMetadataMaxBytes: number;
  offsetsRetentionMs: number;
  offsetsRetentionCheckIntervalMs: number;
}

export interface JoinRequest {
  groupId: string;
  memberId: string;
  groupInstanceId: string | null;
  clientId: string;
  clientHost: string;
  rebalanceTimeoutMs: number;
  sessionTimeoutMs: number;
  protocolType: string;
  protocols: Protocol[];
  /** JoinGroup v4+: a first join without member id gets MEMBER_ID_REQUIRED. */
  requireKnownMemberId: boolean;
  /** JoinGroup v9+: a static leader rejoining a Stable group is told to skip the assignment. */
  supportSkippingAssignment: boolean;
}

export interface SyncRequest {
  groupId: string;
  generationId: number;
  memberId: string;
  groupInstanceId: string | null;
  protocolType: string | null;
  protocolName: string | null;
  assignments: { memberId: string; assignment: Buffer }[];
}

export interface MemberIdentity {
  memberId: string;
  groupInstanceId: string | null;
}

export interface LeaveResult {
  errorCode: number;
  members: (MemberIdentity & { errorCode: number })[];
}

export interface CommitPartition {
  topic: string;
  partition: number;
  offset: number;
  leaderEpoch: number;
  metadata: string | null;
}

export interface CommitRequest {
  groupId: string;
  generationId: number;
  memberId: string;
  groupInstanceId: string | null;
  apiVersion: number;
  /** -1: the broker's retention (v2-4 may set one). */
  retentionTimeMs: number;
  partitions: (CommitPartition & { /** v1 only; -1 means now. */ commitTimestamp: number })[];
}

/** TxnOffsetCommit; before v3 the member fields are absent: generation -1, member "", no instance. */
export interface TxnCommitRequest {
  groupId: string;
  producerId: number;
  producerEpoch: number;
  generationId: number;
  memberId: string;
  groupInstanceId: string | null;
  partitions: CommitPartition[];
}

export interface FetchedPartition {
  partition: number;
  offset: number;
  leaderEpoch: number;
  metadata: string;
  errorCode: number;
}

export interface FetchResult {
  errorCode: number;
  topics: { name: string; partitions: FetchedPartition[] }[];
}

export interface GroupOverview {
  groupId: string;
  protocolType: string;
  state: string;
  type: 'classic';
}

export interface GroupDescription {
  errorCode: number;
  groupId: string;
  state: string;
  protocolType: string;
  protocolData: string;
  members: {
    memberId: string; groupInstanceId: string | null; clientId: string; clientHost: string;
    metadata: Buffer; assignment: Buffer;
  }[];
}

export interface OffsetDeleteResult {
  errorCode: number;
  topics: { name: string; partitions: { partition: number; errorCode: number }[] }[];
}

type Status = 'loading' | 'active' | 'closed';

/** A TxnOffsetCommit batch being written; its transaction may end before the write completes. */
interface TxnOffsetWrite {
  group: ClassicGroup;
  producerId: number;
  offsets: SequencedOffset[];
  /** Set when the transaction ends meanwhile (true: committed): the marker follows the batch in the log. */
  outcome: boolean | null;
}

interface TxnCompletion {
  producerId: number;
  offsetsPartition: number;
  commit: boolean;
}

const EMPTY = Buffer.alloc(0);

// Timer keys: JSON arrays, so a group's keys share an unambiguous prefix whatever its id contains.
const groupPrefix = (groupId: string): string => `${JSON.stringify([groupId]).slice(0, -1)},`;
const heartbeatKey = (groupId: string, memberId: string): string => JSON.stringify([groupId, 'heartbeat', memberId]);
const joinKey = (groupId: string): string => JSON.stringify([groupId, 'join']);
const syncKey = (groupId: string): string => JSON.stringify([groupId, 'sync']);
const RETENTION_KEY = 'offsets-retention';

export class GroupCoordinator {
  private readonly groups = new Map<string, ClassicGroup>();
  private readonly timers: GroupTimers;
  private status: Status = 'loading';
  /** Orders offset writes: the newest write for a partition is the one that sticks. */
  private writeSeq = 0;
  private readonly txnWritesInFlight = new Set<TxnOffsetWrite>();
  /** Transactions that ended while loading: applied once loaded, to what the load left pending. */
  private readonly completedWhileLoading: TxnCompletion[] = [];

  /** Set by load(): nothing is written before the groups are read back. */
  private store!: OffsetsStore;
  private numPartitions = 1;
  /** Counts load() calls: a load that an unload() overtook while it read drops what it read. */
  private loads = 0;

  constructor(
    private readonly config: GroupCoordinatorConfig,
    timer: Timer,
    private readonly log: Logger,
    /** Wall clock (commit timestamps, state timestamps, retention). */
    private readonly now: () => number = Date.now,
  ) {
    this.timers = new GroupTimers(timer);
  }

  // ================================================================= lifecycle

  isActive(): boolean {
    return this.status === 'active';
  }

  private isClosed(): boolean {
    return this.status === 'closed';
  }

  /**
   * Rebuilds every group from `store`, then starts answering (and expiring offsets).
   * `numPartitions`: the partitions of __consumer_offsets, over which groups are spread.
   */
  async load(store: OffsetsStore, numPartitions: number): Promise<void> {
    if (this.isClosed()) return;
    const load = ++this.loads;
    this.store = store;
    this.numPartitions = numPartitions;
    const loaded = await store.loadAll();
    if (this.isClosed() || load !== this.loads) return; // closed, or unloaded and loaded again, while reading
    for (const l of loaded) this.loadGroup(l);
    this.status = 'active';
    // The load may have read the log before those markers were written (if not, nothing is pending for them).
    for (const c of this.completedWhileLoading.splice(0)) this.onTransactionCompleted(c.producerId, c.offsetsPartition, c.commit);
    this.scheduleRetention();
    this.log.info({ groups: this.groups.size }, 'group coordinator loaded');
  }

  /** Answers every parked request with NOT_COORDINATOR and stops every timer. */
  close(): void {
    if (this.status === 'closed') return;
    this.status = 'closed';
    this.resign();
  }

  /**
   * Kafka's onResignation, for a deleted __consumer_offsets: parked requests get NOT_COORDINATOR,
   * every group and timer goes, and requests get COORDINATOR_LOAD_IN_PROGRESS until load() is
   * called again (with the new topic).
   */
  unload(): void {
    if (this.status === 'closed') return;
    this.status = 'loading';
    this.loads++;
    this.resign();
    this.groups.clear();
  }

  private resign(): void {
    this.timers.cancelAll();
    for (const group of this.groups.values()) {
      for (const m of group.members.values()) {
        group.completeJoin(m, joinError(m.memberId, ErrorCode.NOT_COORDINATOR));
        group.completeSync(m, syncError(ErrorCode.NOT_COORDINATOR));
      }
    }
  }

  /** The partition of __consumer_offsets that holds the group (FindCoordinator). */
  partitionFor(groupId: string): number {
    return OffsetsLog.partitionFor(groupId, this.numPartitions);
  }

  /** Scheduled timers (for tests: none may outlive the groups that made them). */
  get scheduledTimers(): string[] {
    return this.timers.keys();
  }

  group(groupId: string): ClassicGroup | undefined {
    return this.groups.get(groupId);
  }

  private loadGroup(l: LoadedGroup): void {
    const snap = l.group;
    const hasMembers = snap !== null && snap.members.length > 0;
    const group = new ClassicGroup(l.groupId, hasMembers ? GroupState.Stable : GroupState.Empty, this.now);
    if (snap) {
      group.generationId = snap.generationId;
      group.protocolType = snap.protocolType === '' ? null : snap.protocolType;
      group.protocolName = snap.protocolName;
      group.currentStateTimestamp = snap.currentStateTimestamp;
      for (const m of snap.members) {
        const protocols = snap.protocolName === null ? [] : [{ name: snap.protocolName, metadata: m.subscription }];
        group.add(new GroupMember(m.memberId, m.groupInstanceId, m.clientId, m.clientHost, m.rebalanceTimeoutMs,
          m.sessionTimeoutMs, snap.protocolType, protocols, m.assignment), null);
      }
      group.leaderId = snap.leader !== null && group.has(snap.leader) ? snap.leader : group.members.keys().next().value ?? null;
      group.refreshSubscribedTopics();
    }
    for (const o of l.offsets.values()) group.applyOffset(this.loadedOffset(o));
    for (const [producerId, pending] of l.pendingTxnOffsets) {
      for (const o of pending.values()) group.addPendingTxnOffset(producerId, this.loadedOffset(o));
    }
    this.groups.set(group.groupId, group);
    // Kafka's onGroupLoaded: members of a Stable group must heartbeat within their session.
    if (group.size > this.config.maxSize) this.prepareRebalance(group, 'freshly loaded group is over capacity');
    for (const m of group.members.values()) this.scheduleHeartbeat(group, m);
  }

  /** A loaded offset is numbered by its place in the log (+1: 0 means "never written"); new writes number on past it. */
  private loadedOffset(loaded: LoadedOffset): SequencedOffset {
    const { logOffset, ...offset } = loaded;
    this.writeSeq = Math.max(this.writeSeq, logOffset + 1);
    return { offset, seq: logOffset + 1 };
  }

  private validateStatus(groupId: string, emptyIdAllowed: boolean): number {
    if (!emptyIdAllowed && groupId === '') return ErrorCode.INVALID_GROUP_ID;
    if (this.status === 'loading') return ErrorCode.COORDINATOR_LOAD_IN_PROGRESS;
    if (this.status === 'closed') return ErrorCode.COORDINATOR_NOT_AVAILABLE;
    return ErrorCode.NONE;
  }

  private validateMember(group: ClassicGroup, memberId: string, groupInstanceId: string | null): number {
    if (groupInstanceId !== null) {
      const current = group.staticMemberId(groupInstanceId);
      if (current === undefined) return ErrorCode.UNKNOWN_MEMBER_ID;
      if (current !== memberId) return ErrorCode.FENCED_INSTANCE_ID;
    }
    return group.has(memberId) ? ErrorCode.NONE : ErrorCode.UNKNOWN_MEMBER_ID;
  }

  // ================================================================= JoinGroup

  joinGroup(req: JoinRequest): Promise<JoinResult> {
    const statusError = this.validateStatus(req.groupId, false);
    if (statusError) return Promise.resolve(joinError(req.memberId, statusError));
    if (req.sessionTimeoutMs < this.config.minSessionTimeoutMs || req.sessionTimeoutMs > this.config.maxSessionTimeoutMs) {
      return Promise.resolve(joinError(req.memberId, ErrorCode.INVALID_SESSION_TIMEOUT));
    }
    const isUnknownMember = req.memberId === '';
    let group = this.groups.get(req.groupId);
    if (!group) {
      // A group is created by a first join without member id; a known member id needs a known group.
      if (!isUnknownMember) return Promise.resolve(joinError(req.memberId, ErrorCode.UNKNOWN_MEMBER_ID));
      group = this.createGroup(req.groupId);
    }
    const g = group;
    const protocols = req.protocols.map((p) => ({ name: p.name, metadata: Buffer.from(p.metadata) }));
    return new Promise<JoinResult>((resolve) => {
      if (!this.acceptJoiningMember(g, req.memberId)) {
        this.dropMember(g, req.memberId);
        resolve(joinError('', ErrorCode.GROUP_MAX_SIZE_REACHED));
      } else if (isUnknownMember) {
        this.joinNewMember(g, { ...req, protocols }, resolve);
      } else {
        this.joinExistingMember(g, { ...req, protocols }, resolve);
      }
      if (g.is(GroupState.PreparingRebalance)) this.maybeCompleteJoinPhase(g);
    });
  }

  private createGroup(groupId: string): ClassicGroup {
    const group = new ClassicGroup(groupId, GroupState.Empty, this.now);
    this.groups.set(groupId, group);
    return group;
  }

  /** group.max.size: members already waiting in the join phase keep their place, new ones wait their turn. */
  private acceptJoiningMember(group: ClassicGroup, memberId: string): boolean {
    switch (group.state) {
      case GroupState.Empty:
      case GroupState.Dead:
        return true;
      case GroupState.PreparingRebalance:
        return (group.has(memberId) && group.get(memberId).awaitingJoin !== null) || group.numAwaiting < this.config.maxSize;
      default:
        return group.has(memberId) || group.size < this.config.maxSize;
    }
  }

  private joinNewMember(group: ClassicGroup, req: JoinRequest, resolve: (r: JoinResult) => void): void {
    if (group.is(GroupState.Dead)) return resolve(joinError('', ErrorCode.COORDINATOR_NOT_AVAILABLE));
    if (!group.supportsProtocols(req.protocolType, req.protocols)) return resolve(joinError('', ErrorCode.INCONSISTENT_GROUP_PROTOCOL));
    // Kafka's form, "<instance id or client id>-<uuid>", with the prefix cut so that the id of a
    // 32 KB client id still fits the protocol's 32,767-byte string in the response.
    const newMemberId = `${(req.groupInstanceId ?? req.clientId).slice(0, MEMBER_ID_PREFIX_CHARS)}-${randomUUID()}`;
    if (req.groupInstanceId !== null) {
      const existing = group.staticMemberId(req.groupInstanceId);
      if (existing !== undefined) return this.replaceStaticMember(group, existing, newMemberId, req, resolve);
      return this.addMemberAndRebalance(group, newMemberId, req, resolve);
    }
    if (req.requireKnownMemberId) {
      // KIP-394: hand out the id and wait for the member to come back with it (within its session).
      group.addPendingMember(newMemberId);
      this.timers.schedule(heartbeatKey(group.groupId, newMemberId), req.sessionTimeoutMs,
        () => this.expireHeartbeat(group, newMemberId));
      return resolve(joinError(newMemberId, ErrorCode.MEMBER_ID_REQUIRED));
    }
    this.addMemberAndRebalance(group, newMemberId, req, resolve);
  }

  private joinExistingMember(group: ClassicGroup, req: JoinRequest, resolve: (r: JoinResult) => void): void {
    const { memberId } = req;
    if (group.is(GroupState.Dead)) return resolve(joinError(memberId, ErrorCode.COORDINATOR_NOT_AVAILABLE));
    if (!group.supportsProtocols(req.protocolType, req.protocols)) return resolve(joinError(memberId, ErrorCode.INCONSISTENT_GROUP_PROTOCOL));
    if (group.isPendingMember(memberId)) {
      // Pending ids are only handed to dynamic members.
      if (req.groupInstanceId !== null) return resolve(joinError(memberId, ErrorCode.UNKNOWN_SERVER_ERROR));
      return this.addMemberAndRebalance(group, memberId, req, resolve);
    }
    const memberError = this.validateMember(group, memberId, req.groupInstanceId);
    if (memberError) return resolve(joinError(memberId, memberError));
    const member = group.get(memberId);
    switch (group.state) {
      case GroupState.PreparingRebalance:
        return this.updateMemberAndRebalance(group, member, req, resolve, `member ${memberId} joining during PreparingRebalance`);
      case GroupState.CompletingRebalance:
        // Same metadata: it missed its JoinGroup answer; give it the current generation again.
        if (member.matches(req.protocols)) return resolve(this.currentGeneration(group, memberId, group.isLeader(memberId)));
        return this.updateMemberAndRebalance(group, member, req, resolve, `member ${memberId} changed its metadata`);
      case GroupState.Stable:
        // The leader rejoining forces a rebalance (its view of the topics may have changed).
        if (group.isLeader(memberId)) return this.updateMemberAndRebalance(group, member, req, resolve, `leader ${memberId} rejoined`);
        if (!member.matches(req.protocols)) return this.updateMemberAndRebalance(group, member, req, resolve, `member ${memberId} changed its metadata`);
        return resolve(this.currentGeneration(group, memberId, false));
      default:
        return resolve(joinError(memberId, ErrorCode.UNKNOWN_MEMBER_ID));
    }
  }

  private currentGeneration(group: ClassicGroup, memberId: string, withMembers: boolean): JoinResult {
    return {
      errorCode: ErrorCode.NONE, memberId, generationId: group.generationId, protocolType: group.protocolType,
      protocolName: group.protocolName, leader: group.leaderId ?? '', skipAssignment: false,
      members: withMembers ? group.currentMembers() : [],
    };
  }

  private addMemberAndRebalance(group: ClassicGroup, memberId: string, req: JoinRequest, resolve: (r: JoinResult) => void): void {
    const member = new GroupMember(memberId, req.groupInstanceId, req.clientId, req.clientHost, req.rebalanceTimeoutMs,
      req.sessionTimeoutMs, req.protocolType, req.protocols);
    member.isNew = true;
    // A new member during the first rebalance's initial delay buys the group one more delay.
    if (group.is(GroupState.PreparingRebalance) && group.generationId === 0) group.newMemberAdded = true;
    group.add(member, resolve);
    // Its session does not run while it waits, but a member that vanished must not hold the group forever.
    this.scheduleHeartbeat(group, member, NEW_MEMBER_JOIN_TIMEOUT_MS);
    this.maybePrepareRebalance(group, `adding member ${memberId}`);
  }

  private updateMemberAndRebalance(group: ClassicGroup, member: GroupMember, req: JoinRequest,
    resolve: (r: JoinResult) => void, reason: string): void {
    group.updateMember(member, req.protocols, req.rebalanceTimeoutMs, req.sessionTimeoutMs, resolve);
    this.maybePrepareRebalance(group, reason);
  }

  /**
   * KIP-345: a known group.instance.id joins with no member id (the instance restarted). It takes
   * over the old member, assignment included. In a Stable group whose protocol stays the same this
   * is persisted and answered without a rebalance; otherwise the group rebalances.
   */
  private replaceStaticMember(group: ClassicGroup, oldMemberId: string, newMemberId: string, req: JoinRequest,
    resolve: (r: JoinResult) => void): void {
    const instanceId = req.groupInstanceId!;
    const currentLeader = group.leaderId;
    const old = group.get(oldMemberId);
    const previous = { protocols: old.protocols, rebalanceTimeoutMs: old.rebalanceTimeoutMs, sessionTimeoutMs: old.sessionTimeoutMs };
    const member = group.replaceStaticMember(instanceId, oldMemberId, newMemberId);
    this.timers.cancel(heartbeatKey(group.groupId, oldMemberId));
    this.scheduleHeartbeat(group, member);
    group.updateMember(member, req.protocols, req.rebalanceTimeoutMs, req.sessionTimeoutMs, resolve);

    switch (group.state) {
      case GroupState.Stable: {
        if (group.protocolName !== group.selectProtocol()) {
          return this.maybePrepareRebalance(group, `static member ${instanceId} rejoined with a different protocol`);
        }
        const generationId = group.generationId;
        void this.write(() => this.store.storeGroup(group.groupId, this.snapshot(group))).then((code) => {
          if (code !== ErrorCode.NONE) {
            group.completeJoin(member, {
              ...joinError('', code), generationId, protocolType: group.protocolType, protocolName: group.protocolName,
              leader: currentLeader ?? '',
            });
            // Undo the replacement if nothing moved on meanwhile: the old member id is still the one on record.
            if (group.is(GroupState.Stable) && group.generationId === generationId && group.has(newMemberId)) {
              group.updateMember(member, previous.protocols, previous.rebalanceTimeoutMs, previous.sessionTimeoutMs, null);
              const restored = group.replaceStaticMember(instanceId, newMemberId, oldMemberId);
              this.timers.cancel(heartbeatKey(group.groupId, newMemberId));
              this.scheduleHeartbeat(group, restored);
            }
          } else if (req.supportSkippingAssignment) {
            // v9 (KIP-814): the static leader learns it leads but keeps the current assignment.
            const isLeader = group.isLeader(newMemberId);
            group.completeJoin(member, { ...this.currentGeneration(group, newMemberId, isLeader), skipAssignment: isLeader });
          } else {
            // Older versions: name the old leader id so that even a restarted leader does not
            // compute an assignment the Stable group would ignore; SyncGroup returns the current one.
            group.completeJoin(member, { ...this.currentGeneration(group, newMemberId, false), leader: currentLeader ?? '' });
          }
        });
        return;
      }
      case GroupState.CompletingRebalance:
        // The leader may already be assigning to the old member id: start over.
        return this.prepareRebalance(group, `static member ${instanceId} rejoined during CompletingRebalance`);
      default:
        // PreparingRebalance: it simply takes part in the join phase under its new id.
        return;
    }
  }

  // ================================================================= rebalance phases

  private maybePrepareRebalance(group: ClassicGroup, reason: string): void {
    if (group.canRebalance()) this.prepareRebalance(group, reason);
  }

  /** Starts a join phase: members waiting for an assignment are told to rejoin. */
  private prepareRebalance(group: ClassicGroup, reason: string): void {
    if (group.is(GroupState.CompletingRebalance)) this.resetAndPropagateAssignmentError(group, ErrorCode.REBALANCE_IN_PROGRESS);
    this.clearPendingSync(group);
    const fromEmpty = group.is(GroupState.Empty);
    group.transitionTo(GroupState.PreparingRebalance);
    this.log.info({ group: group.groupId, generation: group.generationId, reason }, 'preparing to rebalance group');
    if (fromEmpty) {
      // group.initial.rebalance.delay.ms: let more members arrive before the first generation.
      const delay = this.config.initialRebalanceDelayMs;
      this.scheduleInitialJoin(group, delay, Math.max(group.rebalanceTimeoutMs() - delay, 0));
    } else {
      this.timers.schedule(joinKey(group.groupId), group.rebalanceTimeoutMs(), () => this.completeJoinPhase(group));
      this.maybeCompleteJoinPhase(group);
    }
  }

  /** Kafka's InitialDelayedJoin: each new arrival during the delay extends it, up to the rebalance timeout. */
  private scheduleInitialJoin(group: ClassicGroup, delayMs: number, remainingMs: number): void {
    this.timers.schedule(joinKey(group.groupId), delayMs, () => {
      if (group.newMemberAdded && remainingMs !== 0) {
        group.newMemberAdded = false;
        this.scheduleInitialJoin(group, Math.min(this.config.initialRebalanceDelayMs, remainingMs), Math.max(remainingMs - delayMs, 0));
      } else {
        this.completeJoinPhase(group);
      }
    });
  }

  /** Ends the join phase early once every member has rejoined (never during the initial delay). */
  private maybeCompleteJoinPhase(group: ClassicGroup): void {
    if (group.is(GroupState.PreparingRebalance) && group.hasAllMembersJoined() && group.previousState !== GroupState.Empty) {
      this.completeJoinPhase(group);
    }
  }

  /** The join phase ends: members that did not rejoin go, the next generation starts. */
  private completeJoinPhase(group: ClassicGroup): void {
    this.timers.cancel(joinKey(group.groupId));
    if (!group.is(GroupState.PreparingRebalance)) return;
    for (const m of [...group.members.values()]) {
      if (m.awaitingJoin === null && m.groupInstanceId === null) this.dropMember(group, m.memberId);
    }
    if (!group.maybeElectNewJoinedLeader() && group.size > 0) {
      // Only static members that did not rejoin are left: wait for them (or for their sessions to end).
      this.timers.schedule(joinKey(group.groupId), group.rebalanceTimeoutMs(), () => this.completeJoinPhase(group));
      return;
    }
    group.initNextGeneration();
    if (group.is(GroupState.Empty)) {
      this.log.info({ group: group.groupId, generation: group.generationId }, 'group is now empty');
      void this.write(() => this.store.storeGroup(group.groupId, this.snapshot(group))).then((code) => {
        if (code !== ErrorCode.NONE) this.log.warn({ group: group.groupId, errorCode: code }, 'could not write empty group metadata');
      });
      return;
    }
    this.log.info({ group: group.groupId, generation: group.generationId, members: group.size }, 'group stabilizing');
    for (const m of group.members.values()) {
      group.completeJoin(m, this.currentGeneration(group, m.memberId, group.isLeader(m.memberId)));
      this.scheduleHeartbeat(group, m);
      m.isNew = false;
      group.pendingSync.add(m.memberId);
    }
    // Members that never send SyncGroup are removed after the rebalance timeout.
    const generationId = group.generationId;
    this.timers.schedule(syncKey(group.groupId), group.rebalanceTimeoutMs(), () => this.expirePendingSync(group, generationId));
  }

  private clearPendingSync(group: ClassicGroup): void {
    group.pendingSync.clear();
    this.timers.cancel(syncKey(group.groupId));
  }

  private expirePendingSync(group: ClassicGroup, generationId: number): void {
    if (generationId !== group.generationId) return;
    if (!group.is(GroupState.CompletingRebalance) && !group.is(GroupState.Stable)) return;
    if (group.pendingSync.size === 0) return;
    const late = [...group.pendingSync];
    for (const id of late) this.dropMember(group, id);
    this.prepareRebalance(group, `members ${late.join(', ')} did not send SyncGroup in time`);
  }

  // ================================================================= SyncGroup

  syncGroup(req: SyncRequest): Promise<SyncResult> {
    const statusError = this.validateStatus(req.groupId, false);
    // While loading, the rebalance in flight is lost: the member must rejoin (older clients do not know LOAD_IN_PROGRESS here).
    if (statusError === ErrorCode.COORDINATOR_LOAD_IN_PROGRESS) return Promise.resolve(syncError(ErrorCode.REBALANCE_IN_PROGRESS));
    if (statusError) return Promise.resolve(syncError(statusError));
    const group = this.groups.get(req.groupId);
    if (!group) return Promise.resolve(syncError(ErrorCode.UNKNOWN_MEMBER_ID));
    const error = this.validateSync(group, req);
    if (error) return Promise.resolve(syncError(error));

    switch (group.state) {
      case GroupState.Empty:
        return Promise.resolve(syncError(ErrorCode.UNKNOWN_MEMBER_ID));
      case GroupState.PreparingRebalance:
        return Promise.resolve(syncError(ErrorCode.REBALANCE_IN_PROGRESS));
      case GroupState.Stable: {
        const member = group.get(req.memberId);
        this.removePendingSync(group, req.memberId);
        this.scheduleHeartbeat(group, member);
        return Promise.resolve({ errorCode: ErrorCode.NONE, protocolType: group.protocolType, protocolName: group.protocolName, assignment: member.assignment });
      }
      default:
        return new Promise<SyncResult>((resolve) => {
          const member = group.get(req.memberId);
          const previous = member.awaitingSync;
          member.awaitingSync = resolve;
          previous?.(syncError(ErrorCode.REBALANCE_IN_PROGRESS));
          this.removePendingSync(group, req.memberId);
          if (group.isLeader(req.memberId)) this.leaderSync(group, req);
        });
    }
  }

  private validateSync(group: ClassicGroup, req: SyncRequest): number {
    if (group.is(GroupState.Dead)) return ErrorCode.COORDINATOR_NOT_AVAILABLE;
    const memberError = this.validateMember(group, req.memberId, req.groupInstanceId);
    if (memberError) return memberError;
    if (req.generationId !== group.generationId) return ErrorCode.ILLEGAL_GENERATION;
    if (req.protocolType !== null && req.protocolType !== group.protocolType) return ErrorCode.INCONSISTENT_GROUP_PROTOCOL;
    if (req.protocolName !== null && req.protocolName !== group.protocolName) return ErrorCode.INCONSISTENT_GROUP_PROTOCOL;
    return ErrorCode.NONE;
  }

  /**
   * The leader's assignment: persisted with the group, then handed to every member. Members the
   * leader left out get empty bytes. If the group moved on while the write was in flight, the
   * write's outcome changes nothing (the rebalance that moved it has answered everyone already).
   */
  private leaderSync(group: ClassicGroup, req: SyncRequest): void {
    const assignment = new Map<string, Buffer>();
    for (const a of req.assignments) assignment.set(a.memberId, Buffer.from(a.assignment));
    const generationId = group.generationId;
    const snapshot = this.snapshot(group, (m) => assignment.get(m.memberId) ?? EMPTY);
    this.log.info({ group: group.groupId, generation: generationId, members: group.size }, 'assignment received from leader');
    void this.write(() => this.store.storeGroup(group.groupId, snapshot)).then((code) => {
      if (!group.is(GroupState.CompletingRebalance) || group.generationId !== generationId) return;
      if (code !== ErrorCode.NONE) {
        this.resetAndPropagateAssignmentError(group, code);
        this.maybePrepareRebalance(group, `error ${code} writing the assignment`);
        return;
      }
      for (const m of group.members.values()) m.assignment = assignment.get(m.memberId) ?? EMPTY;
      this.propagateAssignment(group, ErrorCode.NONE);
      group.transitionTo(GroupState.Stable);
    });
  }

  private resetAndPropagateAssignmentError(group: ClassicGroup, errorCode: number): void {
    for (const m of group.members.values()) m.assignment = EMPTY;
    this.propagateAssignment(group, errorCode);
  }

  private propagateAssignment(group: ClassicGroup, errorCode: number): void {
    const ok = errorCode === ErrorCode.NONE;
    for (const m of group.members.values()) {
      const answered = group.completeSync(m, {
        errorCode, protocolType: ok ? group.protocolType : null, protocolName: ok ? group.protocolName : null, assignment: m.assignment,
      });
      // Its session starts again from the answer (it could not heartbeat while parked).
      if (answered) this.scheduleHeartbeat(group, m);
    }
  }

  private removePendingSync(group: ClassicGroup, memberId: string): void {
    group.pendingSync.delete(memberId);
    if (group.pendingSync.size === 0) this.timers.cancel(syncKey(group.groupId));
  }

  // ================================================================= Heartbeat and sessions

  heartbeat(groupId: string, memberId: string, groupInstanceId: string | null, generationId: number): number {
    const statusError = this.validateStatus(groupId, false);
    // While loading there is nothing to check against: answer blindly, as Kafka does.
    if (statusError === ErrorCode.COORDINATOR_LOAD_IN_PROGRESS) return ErrorCode.NONE;
    if (statusError) return statusError;
    const group = this.groups.get(groupId);
    if (!group) return ErrorCode.UNKNOWN_MEMBER_ID;
    if (group.is(GroupState.Dead)) return ErrorCode.COORDINATOR_NOT_AVAILABLE;
    const memberError = this.validateMember(group, memberId, groupInstanceId);
    if (memberError) return memberError;
    if (generationId !== group.generationId) return ErrorCode.ILLEGAL_GENERATION;
    if (group.is(GroupState.Empty)) return ErrorCode.UNKNOWN_MEMBER_ID;
    this.scheduleHeartbeat(group, group.get(memberId));
    return group.is(GroupState.PreparingRebalance) ? ErrorCode.REBALANCE_IN_PROGRESS : ErrorCode.NONE;
  }

  /** (Re)starts the member's session: it must heartbeat again within `timeoutMs`. */
  private scheduleHeartbeat(group: ClassicGroup, member: GroupMember, timeoutMs = member.sessionTimeoutMs): void {
    const memberId = member.memberId;
    this.timers.schedule(heartbeatKey(group.groupId, memberId), timeoutMs, () => this.expireHeartbeat(group, memberId));
  }

  private expireHeartbeat(group: ClassicGroup, memberId: string): void {
    if (group.is(GroupState.Dead)) return;
    if (group.isPendingMember(memberId)) {
      group.remove(memberId);
      if (group.is(GroupState.PreparingRebalance)) this.maybeCompleteJoinPhase(group);
      return;
    }
    const member = group.members.get(memberId);
    if (!member) return;
    // A member parked in JoinGroup or SyncGroup cannot heartbeat: that is not a failure (unless it is new).
    if (!member.isNew && (member.awaitingJoin !== null || member.awaitingSync !== null)) return;
    this.log.info({ group: group.groupId, member: memberId }, 'member session expired, removing it from the group');
    this.removeMemberAndUpdateGroup(group, member, `member ${memberId} session expired`);
  }

  // ================================================================= LeaveGroup

  leaveGroup(groupId: string, leaving: MemberIdentity[]): LeaveResult {
    const statusError = this.validateStatus(groupId, false);
    if (statusError) return { errorCode: statusError, members: [] };
    const group = this.groups.get(groupId);
    if (!group) return { errorCode: ErrorCode.NONE, members: leaving.map((m) => ({ ...m, errorCode: ErrorCode.UNKNOWN_MEMBER_ID })) };
    if (group.is(GroupState.Dead)) return { errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE, members: [] };
    const members = leaving.map((m) => ({ ...m, errorCode: this.leaveOne(group, m) }));
    return { errorCode: ErrorCode.NONE, members };
  }

  private leaveOne(group: ClassicGroup, m: MemberIdentity): number {
    if (m.memberId === '') {
      // An administrative removal names the static member by instance id only.
      const current = m.groupInstanceId === null ? undefined : group.staticMemberId(m.groupInstanceId);
      if (current === undefined) return ErrorCode.UNKNOWN_MEMBER_ID;
      this.removeMemberAndUpdateGroup(group, group.get(current), `static member ${m.groupInstanceId} removed by LeaveGroup`);
      return ErrorCode.NONE;
    }
    if (group.isPendingMember(m.memberId)) {
      group.remove(m.memberId);
      this.timers.cancel(heartbeatKey(group.groupId, m.memberId));
      if (group.is(GroupState.PreparingRebalance)) this.maybeCompleteJoinPhase(group);
      return ErrorCode.NONE;
    }
    const error = this.validateMember(group, m.memberId, m.groupInstanceId);
    if (error) return error;
    this.removeMemberAndUpdateGroup(group, group.get(m.memberId), `member ${m.memberId} left the group`);
    return ErrorCode.NONE;
  }

  /** A member is gone (left or expired): its parked requests are answered and the group rebalances. */
  private removeMemberAndUpdateGroup(group: ClassicGroup, member: GroupMember, reason: string): void {
    group.completeJoin(member, joinError('', ErrorCode.UNKNOWN_MEMBER_ID));
    this.dropMember(group, member.memberId);
    switch (group.state) {
      case GroupState.Stable:
      case GroupState.CompletingRebalance:
        return this.maybePrepareRebalance(group, reason);
      case GroupState.PreparingRebalance:
        return this.maybeCompleteJoinPhase(group);
      default:
        return;
    }
  }

  /** Takes a member out with its session timer; a parked SyncGroup of its own is told it is unknown. */
  private dropMember(group: ClassicGroup, memberId: string): void {
    const member = group.remove(memberId);
    if (member) group.completeSync(member, syncError(ErrorCode.UNKNOWN_MEMBER_ID));
    this.timers.cancel(heartbeatKey(group.groupId, memberId));
  }

  // ================================================================= offsets

  /** The error of each partition of `req.partitions`, in order. */
  async commitOffsets(req: CommitRequest): Promise<number[]> {
    const all = (code: number): number[] => req.partitions.map(() => code);
    const statusError = this.validateStatus(req.groupId, true);
    if (statusError) return all(statusError);
    let group = this.groups.get(req.groupId);
    if (!group) {
      // Generation -1: a consumer that only stores offsets here (or the admin client): a "simple" group.
      if (req.generationId >= 0) return all(req.apiVersion >= 9 ? ErrorCode.GROUP_ID_NOT_FOUND : ErrorCode.ILLEGAL_GENERATION);
      group = this.createGroup(req.groupId);
    }
    const error = this.validateOffsetCommit(group, req, false);
    if (error) return all(error);
    // Commits keep a classic member's session alive.
    if (req.memberId !== '' && group.has(req.memberId) &&
      (group.is(GroupState.Stable) || group.is(GroupState.PreparingRebalance))) {
      this.scheduleHeartbeat(group, group.get(req.memberId));
    }

    const expireTimestamp = req.retentionTimeMs === -1 ? -1 : this.now() + req.retentionTimeMs;
    const results = all(ErrorCode.NONE);
    const writes = this.offsetWrites(req.partitions, expireTimestamp, results);
    if (writes.length === 0) return results;
    const g = group;
    const code = await this.writeOffsets(g, writes, (offsets) => this.store.storeOffsets(g.groupId, offsets));
    if (code !== ErrorCode.NONE) {
      for (const w of writes) results[w.index] = code;
    } else if (this.groups.get(g.groupId) === g) {
      for (const w of writes) g.applyOffset(w);
    }
    return results;
  }

  /**
   * TxnOffsetCommit: the error of each partition of `req.partitions`, in order. The offsets are
   * written as the producer's transactional batch and stay pending until onTransactionCompleted.
   * Kafka 4's checks: a group that does not exist is created (generation -1, a simple group) or
   * answered ILLEGAL_GENERATION; then the KIP-447 member checks, without REBALANCE_IN_PROGRESS.
   */
  async commitTxnOffsets(req: TxnCommitRequest): Promise<number[]> {
    const all = (code: number): number[] => req.partitions.map(() => code);
    const statusError = this.validateStatus(req.groupId, false);
    if (statusError) return all(statusError);
    let group = this.groups.get(req.groupId);
    if (!group) {
      if (req.generationId >= 0) return all(ErrorCode.ILLEGAL_GENERATION);
      group = this.createGroup(req.groupId);
    }
    const error = this.validateOffsetCommit(group, req, true);
    if (error) return all(error);

    const results = all(ErrorCode.NONE);
    const writes = this.offsetWrites(req.partitions, -1, results);
    if (writes.length === 0) return results;
    const g = group;
    const producer: TxnProducer = { producerId: req.producerId, producerEpoch: req.producerEpoch };
    const inFlight: TxnOffsetWrite = { group: g, producerId: req.producerId, offsets: writes, outcome: null };
    this.txnWritesInFlight.add(inFlight);
    const code = await this.writeOffsets(g, writes, (offsets) => this.store.storeTxnOffsets(g.groupId, producer, offsets));
    this.txnWritesInFlight.delete(inFlight);
    if (code !== ErrorCode.NONE) {
      for (const w of writes) results[w.index] = code;
    } else if (this.groups.get(g.groupId) === g) {
      if (inFlight.outcome === null) for (const w of writes) g.addPendingTxnOffset(req.producerId, w);
      else if (inFlight.outcome) for (const w of writes) g.applyOffset(w);
    }
    return results;
  }

  /**
   * The transaction of `producerId` ended and its marker is in partition `offsetsPartition` of
   * __consumer_offsets (Kafka's onTransactionCompleted): the producer's pending offsets in the
   * groups of that partition become committed (commit) or are dropped (abort).
   */
  onTransactionCompleted(producerId: number, offsetsPartition: number, commit: boolean): void {
    if (this.status === 'closed') return;
    if (this.status === 'loading') {
      this.completedWhileLoading.push({ producerId, offsetsPartition, commit });
      return;
    }
    for (const w of this.txnWritesInFlight) {
      if (w.producerId === producerId && this.partitionFor(w.group.groupId) === offsetsPartition) w.outcome = commit;
    }
    for (const group of this.groups.values()) {
      const pending = group.pendingTxnOffsets.get(producerId);
      if (!pending || this.partitionFor(group.groupId) !== offsetsPartition) continue;
      group.pendingTxnOffsets.delete(producerId);
      if (commit) for (const o of pending.values()) group.applyOffset(o);
    }
  }

  /**
   * The offsets to write, each numbered and with its place in the request; a partition whose
   * metadata is too large gets OFFSET_METADATA_TOO_LARGE in `results` and is not written.
   */
  private offsetWrites(partitions: (CommitPartition & { commitTimestamp?: number })[], expireTimestamp: number,
    results: number[]): (SequencedOffset & { index: number })[] {
    const now = this.now();
    const writes: (SequencedOffset & { index: number })[] = [];
    partitions.forEach((p, index) => {
      const metadata = p.metadata ?? '';
      if (metadata.length > this.config.offsetMetadataMaxBytes) {
        results[index] = ErrorCode.OFFSET_METADATA_TOO_LARGE;
        return;
      }
      const commitTimestamp = p.commitTimestamp !== undefined && p.commitTimestamp >= 0 ? p.commitTimestamp : now;
      writes.push({
        offset: { topic: p.topic, partition: p.partition, offset: p.offset, leaderEpoch: p.leaderEpoch, metadata, commitTimestamp, expireTimestamp },
        seq: ++this.writeSeq,
        index,
      });
    });
    return writes;
  }

  /** Writes offsets of `group`; while the write is in flight, retention leaves their partitions alone. */
  private async writeOffsets(group: ClassicGroup, writes: SequencedOffset[],
    store: (offsets: TopicPartitionOffset[]) => Promise<number>): Promise<number> {
    const keys = writes.map((w) => offsetKey(w.offset.topic, w.offset.partition));
    for (const key of keys) adjust(group.pendingCommits, key, 1);
    const code = await this.write(() => store(writes.map((w) => w.offset)));
    for (const key of keys) adjust(group.pendingCommits, key, -1);
    return code;
  }

  /** Kafka's ClassicGroup.validateOffsetCommit, for OffsetCommit and (`isTransactional`) TxnOffsetCommit. */
  private validateOffsetCommit(group: ClassicGroup, req: MemberIdentity & { generationId: number }, isTransactional: boolean): number {
    if (group.is(GroupState.Dead)) return ErrorCode.COORDINATOR_NOT_AVAILABLE;
    if (req.generationId < 0 && group.is(GroupState.Empty)) return ErrorCode.NONE;
    if (req.generationId >= 0 || req.memberId !== '' || req.groupInstanceId !== null) {
      const memberError = this.validateMember(group, req.memberId, req.groupInstanceId);
      if (memberError) return memberError;
      if (req.generationId !== group.generationId) return ErrorCode.ILLEGAL_GENERATION;
    } else if (!isTransactional && !group.is(GroupState.Empty)) {
      // No member id and no generation (v0, or the admin client): only while nobody is in the group.
      // TxnOffsetCommit before v3 carries neither, so a transactional producer is let through.
      return ErrorCode.UNKNOWN_MEMBER_ID;
    }
    // A member of this generation that has not synced yet: it must finish the rebalance first.
    // Not for transactional commits: Kafka lets them through (the transaction may still abort).
    if (!isTransactional && group.is(GroupState.CompletingRebalance)) return ErrorCode.REBALANCE_IN_PROGRESS;
    return ErrorCode.NONE;
  }

  /**
   * Committed offsets of a group: the partitions asked for (-1 and "" where nothing is committed),
   * or with `topics` null every committed one. With `requireStable` (OffsetFetch v7+) a partition
   * with a pending transactional offset is answered UNSTABLE_OFFSET_COMMIT (and -1), as Kafka 4
   * does; the client retries until the transaction has ended.
   */
  fetchOffsets(groupId: string, topics: { name: string; partitions: number[] }[] | null, requireStable: boolean): FetchResult {
    const statusError = this.validateStatus(groupId, true);
    if (statusError) return { errorCode: statusError, topics: [] };
    const found = this.groups.get(groupId);
    const group = found && !found.is(GroupState.Dead) ? found : undefined;
    const answer = (topic: string, partition: number): FetchedPartition => {
      const key = offsetKey(topic, partition);
      if (requireStable && group?.hasPendingTxnOffset(key)) return { ...fetched(partition, undefined), errorCode: ErrorCode.UNSTABLE_OFFSET_COMMIT };
      return fetched(partition, group?.offsets.get(key));
    };
    if (topics === null) {
      if (!group) return { errorCode: ErrorCode.NONE, topics: [] };
      const byTopic = new Map<string, FetchedPartition[]>();
      for (const o of group.offsets.values()) {
        let list = byTopic.get(o.topic);
        if (!list) byTopic.set(o.topic, (list = []));
        list.push(answer(o.topic, o.partition));
      }
      return { errorCode: ErrorCode.NONE, topics: [...byTopic].map(([name, partitions]) => ({ name, partitions })) };
    }
    return {
      errorCode: ErrorCode.NONE,
      topics: topics.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => answer(t.name, p)) })),
    };
  }

  /** OffsetDelete: refused for members' subscribed topics, or for a non-consumer group with members. */
  async deleteOffsets(groupId: string, topics: { name: string; partitions: number[] }[]): Promise<OffsetDeleteResult> {
    const statusError = this.validateStatus(groupId, false);
    if (statusError) return { errorCode: statusError, topics: [] };
    const group = this.groups.get(groupId);
    if (!group || group.is(GroupState.Dead)) return { errorCode: ErrorCode.GROUP_ID_NOT_FOUND, topics: [] };
    if (!group.is(GroupState.Empty) && !group.usesConsumerProtocol()) return { errorCode: ErrorCode.NON_EMPTY_GROUP, topics: [] };
    const doomed: TopicPartitionKey[] = [];
    const result = topics.map((t) => {
      const subscribed = group.isSubscribedToTopic(t.name);
      return {
        name: t.name,
        partitions: t.partitions.map((partition) => {
          if (subscribed) return { partition, errorCode: ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC };
          // The tombstone also ends the partition's pending transactional offsets (as Kafka's replay does).
          const key = offsetKey(t.name, partition);
          if (group.offsets.has(key) || group.hasPendingTxnOffset(key)) doomed.push({ topic: t.name, partition });
          return { partition, errorCode: ErrorCode.NONE };
        }),
      };
    });
    if (doomed.length > 0) {
      const code = await this.removeOffsets(group, doomed);
      if (code !== ErrorCode.NONE) return { errorCode: code, topics: [] };
    }
    return { errorCode: ErrorCode.NONE, topics: result };
  }

  /** Tombstones, then what was written of those partitions before them (committed or pending) leaves the cache. */
  private async removeOffsets(group: ClassicGroup, keys: TopicPartitionKey[]): Promise<number> {
    const seq = ++this.writeSeq;
    const code = await this.write(() => this.store.deleteOffsets(group.groupId, keys));
    if (code === ErrorCode.NONE) for (const k of keys) group.applyTombstone(offsetKey(k.topic, k.partition), seq);
    return code;
  }

  // ================================================================= ListGroups, DescribeGroups, DeleteGroups

  listGroups(states: string[], types: string[]): { errorCode: number; groups: GroupOverview[] } {
    if (this.status === 'closed') return { errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE, groups: [] };
    const wantedStates = new Set(states.map((s) => s.toLowerCase()));
    const classicWanted = types.length === 0 || types.some((t) => t.toLowerCase() === 'classic');
    const groups: GroupOverview[] = [];
    for (const g of this.groups.values()) {
      if (g.is(GroupState.Dead) || !classicWanted) continue;
      if (wantedStates.size > 0 && !wantedStates.has(g.state.toLowerCase())) continue;
      groups.push({ groupId: g.groupId, protocolType: g.protocolType ?? '', state: g.state, type: 'classic' });
    }
    const errorCode = this.status === 'loading' ? ErrorCode.COORDINATOR_LOAD_IN_PROGRESS : ErrorCode.NONE;
    return { errorCode, groups };
  }

  describeGroup(groupId: string): GroupDescription {
    const blank = { groupId, protocolType: '', protocolData: '', members: [] };
    const statusError = this.validateStatus(groupId, true);
    if (statusError) return { ...blank, errorCode: statusError, state: '' };
    const group = this.groups.get(groupId);
    if (!group) return { ...blank, errorCode: ErrorCode.NONE, state: GroupState.Dead };
    // Protocol, metadata and assignments are only shown once they agree with each other (Stable).
    const stable = group.is(GroupState.Stable);
    return {
      errorCode: ErrorCode.NONE,
      groupId,
      state: group.state,
      protocolType: group.protocolType ?? '',
      protocolData: stable ? group.protocolName ?? '' : '',
      members: [...group.members.values()].map((m) => ({
        memberId: m.memberId, groupInstanceId: m.groupInstanceId, clientId: m.clientId, clientHost: m.clientHost,
        metadata: stable ? m.metadata(group.protocolName ?? '') : EMPTY, assignment: stable ? m.assignment : EMPTY,
      })),
    };
  }

  /** Deletes Empty groups with their offsets; each answer in the order asked (duplicates answered once). */
  async deleteGroups(groupIds: string[]): Promise<{ groupId: string; errorCode: number }[]> {
    const unique = [...new Set(groupIds)];
    return Promise.all(unique.map(async (groupId) => ({ groupId, errorCode: await this.deleteGroup(groupId) })));
  }

  private async deleteGroup(groupId: string): Promise<number> {
    const statusError = this.validateStatus(groupId, true);
    if (statusError) return statusError;
    const group = this.groups.get(groupId);
    if (!group || group.is(GroupState.Dead)) return ErrorCode.GROUP_ID_NOT_FOUND;
    if (!group.is(GroupState.Empty)) return ErrorCode.NON_EMPTY_GROUP;
    return this.removeGroup(group, this.partitionsWithOffsets(group));
  }

  /**
   * Every partition the group has an offset of in the log: committed, pending in a transaction, or
   * in a transactional batch still being written (Kafka's deleteAllOffsets tombstones the pending
   * ones too, so that a later COMMIT marker cannot bring them back on load).
   */
  private partitionsWithOffsets(group: ClassicGroup): TopicPartitionKey[] {
    const partitions = new Map<string, TopicPartitionKey>();
    const add = (o: TopicPartitionOffset) => partitions.set(offsetKey(o.topic, o.partition), { topic: o.topic, partition: o.partition });
    for (const o of group.offsets.values()) add(o);
    for (const pending of group.pendingTxnOffsets.values()) for (const o of pending.values()) add(o.offset);
    for (const w of this.txnWritesInFlight) if (w.group === group) for (const o of w.offsets) add(o.offset);
    return [...partitions.values()];
  }

  /**
   * The group dies at once (joins meanwhile get COORDINATOR_NOT_AVAILABLE and retry); once its
   * tombstones are written it is forgotten, and the next join starts a new one.
   */
  private async removeGroup(group: ClassicGroup, offsetKeys: TopicPartitionKey[]): Promise<number> {
    group.transitionTo(GroupState.Dead);
    this.timers.cancelAll(groupPrefix(group.groupId));
    const code = await this.write(() => this.store.deleteGroup(group.groupId, offsetKeys));
    if (this.groups.get(group.groupId) === group) this.groups.delete(group.groupId);
    return code;
  }

  // ================================================================= retention

  private scheduleRetention(): void {
    this.timers.schedule(RETENTION_KEY, this.config.offsetsRetentionCheckIntervalMs, () => {
      this.expireOffsets();
      if (this.status === 'active') this.scheduleRetention();
    });
  }

  /**
   * offsets.retention.minutes (Kafka 4's OffsetExpirationCondition): an Empty group's offsets expire
   * that long after it became empty; a simple group's (no protocol) and a Stable consumer group's
   * unsubscribed topics' that long after their commit. An offset committed with its own retention
   * (v2-4) expires at its expire timestamp. An Empty group left with no offsets is deleted. Offsets of
   * a partition with a pending transactional offset wait, and so does a group with any (Kafka 4).
   */
  expireOffsets(now = this.now()): void {
    const retentionMs = this.config.offsetsRetentionMs;
    for (const group of [...this.groups.values()]) {
      const base = expirationBase(group);
      if (base === null) continue;
      const expired: TopicPartitionKey[] = [];
      let allExpired = true;
      for (const [key, o] of group.offsets) {
        // Not while a commit of it is being written or a transaction has an offset of it pending.
        const isExpired = !group.isSubscribedToTopic(o.topic) && !group.pendingCommits.has(key) && !group.hasPendingTxnOffset(key) &&
          (o.expireTimestamp >= 0 ? now >= o.expireTimestamp : now - base(o) >= retentionMs);
        if (isExpired) expired.push({ topic: o.topic, partition: o.partition });
        else allExpired = false;
      }
      if (allExpired && group.is(GroupState.Empty) && group.pendingCommits.size === 0 && group.pendingTxnOffsets.size === 0 &&
        !group.hasPendingMembers()) {
        this.log.info({ group: group.groupId, offsets: expired.length }, 'group expired');
        void this.removeGroup(group, expired);
      } else if (expired.length > 0) {
        this.log.info({ group: group.groupId, offsets: expired.length }, 'offsets expired');
        void this.removeOffsets(group, expired);
      }
    }
  }

  // ================================================================= persistence

  /** The group as __consumer_offsets records it; `assignmentOf` overrides the members' current assignments. */
  private snapshot(group: ClassicGroup, assignmentOf: (m: GroupMember) => Buffer = (m) => m.assignment): GroupSnapshot {
    const protocol = group.protocolName ?? '';
    return {
      protocolType: group.protocolType ?? '',
      generationId: group.generationId,
      protocolName: group.protocolName,
      leader: group.leaderId,
      currentStateTimestamp: group.currentStateTimestamp,
      members: [...group.members.values()].map((m) => ({
        memberId: m.memberId, groupInstanceId: m.groupInstanceId, clientId: m.clientId, clientHost: m.clientHost,
        rebalanceTimeoutMs: m.rebalanceTimeoutMs, sessionTimeoutMs: m.sessionTimeoutMs,
        subscription: m.metadata(protocol), assignment: assignmentOf(m),
      })),
    };
  }

  /** A store call whose failure (a thrown error) becomes UNKNOWN_SERVER_ERROR. */
  private async write(op: () => Promise<number>): Promise<number> {
    try {
      return await op();
    } catch (err) {
      this.log.error({ err }, 'writing to __consumer_offsets failed');
      return ErrorCode.UNKNOWN_SERVER_ERROR;
    }
  }
}

function adjust(counts: Map<string, number>, key: string, delta: number): void {
  const n = (counts.get(key) ?? 0) + delta;
  if (n <= 0) counts.delete(key);
  else counts.set(key, n);
}

function fetched(partition: number, o: TopicPartitionOffset | undefined): FetchedPartition {
  return o
    ? { partition, offset: o.offset, leaderEpoch: o.leaderEpoch, metadata: o.metadata, errorCode: ErrorCode.NONE }
    : { partition, offset: -1, leaderEpoch: -1, metadata: '', errorCode: ErrorCode.NONE };
}

/** What an offset's age is measured from, or null when the group's offsets do not expire now. */
function expirationBase(group: ClassicGroup): ((o: TopicPartitionOffset) => number) | null {
  if (group.protocolType === null) return (o) => o.commitTimestamp;
  if (group.is(GroupState.Empty)) {
    return (o) => (group.currentStateTimestamp >= 0 ? group.currentStateTimestamp : o.commitTimestamp);
  }
  if (group.usesConsumerProtocol() && group.subscribedTopics !== null && group.is(GroupState.Stable)) return (o) => o.commitTimestamp;
  return null;
}
