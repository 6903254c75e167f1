// Kafka's classic group rebalance protocol (GroupCoordinator.scala in 3.x, the classic part of
// GroupMetadataManager in 4.x): JoinGroup and SyncGroup, the join and sync phases of a rebalance,
// heartbeats and session timeouts, LeaveGroup, static membership (KIP-345) and member ids handed out
// first (KIP-394).
//
// Every decision and state change is made synchronously, in one turn of the event loop, exactly
// where Kafka holds the group lock. Writes of the group to __consumer_offsets are awaited only where
// Kafka waits for its append callback, and what follows a write re-checks the group first ("still
// CompletingRebalance, still this generation?"), as Kafka's callbacks do: a join that slips in while
// the leader's assignment is being written starts a new rebalance and the stale write changes nothing.
//
// Timers (sessions, join phase, sync phase, pending member ids) are named tasks on the broker's
// timing wheel; a group's timers are cancelled when it dies.
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { ErrorCode } from '../common/errors';
import type { CoordinatorState, GroupCoordinatorConfig } from './coordinator-state';
import {
  ClassicGroup, GroupMember, GroupState, joinError, syncError, type JoinResult, type Protocol, type SyncResult,
} from './group';
import { CONSUMER_PROTOCOL_TYPE } from './consumer-protocol';
import type { GroupSnapshot } from './store';
import { groupTimersPrefix, heartbeatKey, joinKey, syncKey, type GroupTimers } from './timers';

/** How long a brand-new member's JoinGroup may wait before it is dropped (Kafka's 5 minutes). */
export const NEW_MEMBER_JOIN_TIMEOUT_MS = 5 * 60 * 1000;

/** How much of the client or instance id starts a member id (at most 3 bytes a character). */
const MEMBER_ID_PREFIX_CHARS = 1000;

const EMPTY = Buffer.alloc(0);

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

export class RebalanceManager {
  private readonly groups: Map<string, ClassicGroup>;
  private readonly timers: GroupTimers;
  private readonly config: GroupCoordinatorConfig;
  private readonly log: Logger;

  constructor(private readonly state: CoordinatorState) {
    this.groups = state.groups;
    this.timers = state.timers;
    this.config = state.config;
    this.log = state.log;
  }

  /** Kafka's onGroupLoaded: members of a Stable group must heartbeat within their session. */
  onGroupLoaded(group: ClassicGroup): void {
    if (group.size > this.config.maxSize) this.prepareRebalance(group, 'freshly loaded group is over capacity');
    for (const m of group.members.values()) this.scheduleHeartbeat(group, m);
  }

  /**
   * Kafka's onGroupUnloaded (its partition resigned): parked JoinGroup and SyncGroup requests are
   * answered NOT_COORDINATOR, its timers stop, and it is Dead, so that a write of it still in flight
   * changes nothing when it returns. The caller forgets it.
   */
  unloadGroup(group: ClassicGroup): void {
    for (const m of group.members.values()) {
      group.completeJoin(m, joinError(m.memberId, ErrorCode.NOT_COORDINATOR));
      group.completeSync(m, syncError(ErrorCode.NOT_COORDINATOR));
    }
    group.transitionTo(GroupState.Dead);
    this.timers.cancelAll(groupTimersPrefix(group.groupId));
  }

  /**
   * The group's members move to the consumer group of its id (the online upgrade, KIP-848): their
   * parked joins and syncs are told to rejoin, their timers stop, and the group is left Empty,
   * holding the committed offsets.
   */
  handOverMembers(group: ClassicGroup): void {
    for (const m of [...group.members.values()]) {
      group.completeJoin(m, joinError(m.memberId, ErrorCode.REBALANCE_IN_PROGRESS));
      group.completeSync(m, syncError(ErrorCode.REBALANCE_IN_PROGRESS));
      group.remove(m.memberId);
    }
    this.timers.cancelAll(groupTimersPrefix(group.groupId));
    if (!group.is(GroupState.PreparingRebalance)) group.transitionTo(GroupState.PreparingRebalance);
    group.transitionTo(GroupState.Empty);
  }

  /**
   * A consumer group's members coming back to the classic protocol (the online downgrade, KIP-848):
   * the group takes them at `generationId` with their assignments, as a Stable group, and starts a
   * rebalance for them to join. Returns the group's record as it took them, for the caller to write
   * at once (Kafka writes it with the conversion).
   */
  adoptMembers(group: ClassicGroup, generationId: number, protocolName: string, members: GroupMember[], reason: string): GroupSnapshot {
    group.generationId = generationId;
    group.protocolType = CONSUMER_PROTOCOL_TYPE;
    group.protocolName = protocolName;
    for (const m of members) group.add(m, null);
    group.leaderId = members[0]?.memberId ?? null;
    group.refreshSubscribedTopics();
    group.transitionTo(GroupState.PreparingRebalance);
    group.transitionTo(GroupState.CompletingRebalance);
    group.transitionTo(GroupState.Stable);
    for (const m of members) this.scheduleHeartbeat(group, m);
    const record = groupSnapshot(group);
    this.prepareRebalance(group, reason);
    return record;
  }

  // ================================================================= JoinGroup

  joinGroup(req: JoinRequest): Promise<JoinResult> {
    const statusError = this.state.validateStatus(req.groupId, false);
    if (statusError) return Promise.resolve(joinError(req.memberId, statusError));
    if (req.sessionTimeoutMs < this.config.minSessionTimeoutMs || req.sessionTimeoutMs > this.config.maxSessionTimeoutMs) {
      return Promise.resolve(joinError(req.memberId, ErrorCode.INVALID_SESSION_TIMEOUT));
    }
    const isUnknownMember = req.memberId === '';
    let group = this.groups.get(req.groupId);
    if (!group) {
      // A group is created by a first join without member id; a known member id needs a known group.
      if (!isUnknownMember) return Promise.resolve(joinError(req.memberId, ErrorCode.UNKNOWN_MEMBER_ID));
      group = this.state.createGroup(req.groupId);
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
    const memberError = this.state.validateMember(group, memberId, req.groupInstanceId);
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
        void this.state.write(group.groupId, (store) => store.storeGroup(group.groupId, groupSnapshot(group))).then((code) => {
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
      void this.state.write(group.groupId, (store) => store.storeGroup(group.groupId, groupSnapshot(group))).then((code) => {
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
    const statusError = this.state.validateStatus(req.groupId, false);
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
    const memberError = this.state.validateMember(group, req.memberId, req.groupInstanceId);
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
    const snapshot = groupSnapshot(group, (m) => assignment.get(m.memberId) ?? EMPTY);
    this.log.info({ group: group.groupId, generation: generationId, members: group.size }, 'assignment received from leader');
    void this.state.write(group.groupId, (store) => store.storeGroup(group.groupId, snapshot)).then((code) => {
      if (!group.is(GroupState.CompletingRebalance) || group.generationId !== generationId) return;
      if (code !== ErrorCode.NONE) {
        this.resetAndPropagateAssignmentError(group, code);
        this.maybePrepareRebalance(group, `error ${code} writing the assignment`);
        return;
      }
      for (const m of group.members.values()) m.assignment = assignment.get(m.memberId) ?? EMPTY;
      this.propagateAssignment(group, ErrorCode.NONE);
      group.transitionTo(GroupState.Stable);
      this.state.metrics?.completedRebalances.inc({ type: 'classic' });
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
    const statusError = this.state.validateStatus(groupId, false);
    // While loading there is nothing to check against: answer blindly, as Kafka does.
    if (statusError === ErrorCode.COORDINATOR_LOAD_IN_PROGRESS) return ErrorCode.NONE;
    if (statusError) return statusError;
    const group = this.groups.get(groupId);
    if (!group) return ErrorCode.UNKNOWN_MEMBER_ID;
    if (group.is(GroupState.Dead)) return ErrorCode.COORDINATOR_NOT_AVAILABLE;
    const memberError = this.state.validateMember(group, memberId, groupInstanceId);
    if (memberError) return memberError;
    if (generationId !== group.generationId) return ErrorCode.ILLEGAL_GENERATION;
    if (group.is(GroupState.Empty)) return ErrorCode.UNKNOWN_MEMBER_ID;
    this.scheduleHeartbeat(group, group.get(memberId));
    return group.is(GroupState.PreparingRebalance) ? ErrorCode.REBALANCE_IN_PROGRESS : ErrorCode.NONE;
  }

  /** (Re)starts the member's session: it must heartbeat again within `timeoutMs`. */
  scheduleHeartbeat(group: ClassicGroup, member: GroupMember, timeoutMs = member.sessionTimeoutMs): void {
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
    const statusError = this.state.validateStatus(groupId, false);
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
    const error = this.state.validateMember(group, m.memberId, m.groupInstanceId);
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
}

/** The group as __consumer_offsets records it; `assignmentOf` overrides the members' current assignments. */
function groupSnapshot(group: ClassicGroup, assignmentOf: (m: GroupMember) => Buffer = (m) => m.assignment): GroupSnapshot {
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
