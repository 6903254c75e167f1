// Kafka's classic group coordinator, as the handlers see it: its lifecycle (load from
// __consumer_offsets, resign, close), the group listings and deletions, and the two halves it
// composes: the rebalance protocol (./rebalance.ts: JoinGroup, SyncGroup, Heartbeat, LeaveGroup)
// and the committed offsets (./offsets.ts, Kafka's OffsetMetadataManager). They share the groups,
// timers and store through ./coordinator-state.ts. Handlers translate requests into these calls
// and the answers back.
import type { Logger } from 'pino';
import { ErrorCode } from '../common/errors';
import type { Timer } from '../replica/delayed/timing-wheel';
import { CoordinatorState, type GroupCoordinatorConfig } from './coordinator-state';
import { ClassicGroup, GroupMember, GroupState, type JoinResult, type SyncResult } from './group';
import {
  OffsetMetadataManager, type CommitRequest, type FetchResult, type OffsetDeleteResult, type TxnCommitRequest,
} from './offsets';
import { RebalanceManager, type JoinRequest, type LeaveResult, type MemberIdentity, type SyncRequest } from './rebalance';
import type { LoadedGroup, OffsetsStore } from './store';

export type { GroupCoordinatorConfig } from './coordinator-state';
export type { CommitPartition, CommitRequest, FetchedPartition, FetchResult, OffsetDeleteResult, TxnCommitRequest } from './offsets';
export type { JoinRequest, LeaveResult, MemberIdentity, SyncRequest } from './rebalance';

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

const EMPTY = Buffer.alloc(0);

export class GroupCoordinator {
  private readonly state: CoordinatorState;
  private readonly rebalance: RebalanceManager;
  private readonly offsets: OffsetMetadataManager;
  /** Counts load() calls: a load that an unload() overtook while it read drops what it read. */
  private loads = 0;

  constructor(
    config: GroupCoordinatorConfig,
    timer: Timer,
    private readonly log: Logger,
    /** Wall clock (commit timestamps, state timestamps, retention). */
    now: () => number = Date.now,
  ) {
    this.state = new CoordinatorState(config, timer, log, now);
    this.rebalance = new RebalanceManager(this.state);
    this.offsets = new OffsetMetadataManager(this.state, this.rebalance);
  }

  // ================================================================= lifecycle

  isActive(): boolean {
    return this.state.status === 'active';
  }

  private isClosed(): boolean {
    return this.state.status === 'closed';
  }

  /**
   * Rebuilds every group from `store`, then starts answering (and expiring offsets).
   * `numPartitions`: the partitions of __consumer_offsets, over which groups are spread.
   */
  async load(store: OffsetsStore, numPartitions: number): Promise<void> {
    if (this.isClosed()) return;
    const load = ++this.loads;
    this.state.store = store;
    this.state.numPartitions = numPartitions;
    const loaded = await store.loadAll();
    if (this.isClosed() || load !== this.loads) return; // closed, or unloaded and loaded again, while reading
    for (const l of loaded) this.loadGroup(l);
    this.state.status = 'active';
    this.offsets.onLoaded();
    this.log.info({ groups: this.state.groups.size }, 'group coordinator loaded');
  }

  /** Answers every parked request with NOT_COORDINATOR and stops every timer. */
  close(): void {
    if (this.state.status === 'closed') return;
    this.state.status = 'closed';
    this.resign();
  }

  /**
   * Kafka's onResignation, for a deleted __consumer_offsets: parked requests get NOT_COORDINATOR,
   * every group and timer goes, and requests get COORDINATOR_LOAD_IN_PROGRESS until load() is
   * called again (with the new topic).
   */
  unload(): void {
    if (this.state.status === 'closed') return;
    this.state.status = 'loading';
    this.loads++;
    this.resign();
    this.state.groups.clear();
  }

  private resign(): void {
    this.state.timers.cancelAll();
    this.rebalance.answerParkedRequests();
  }

  private loadGroup(l: LoadedGroup): void {
    const snap = l.group;
    const hasMembers = snap !== null && snap.members.length > 0;
    const group = new ClassicGroup(l.groupId, hasMembers ? GroupState.Stable : GroupState.Empty, this.state.now);
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
    this.offsets.loadOffsets(group, l);
    this.state.groups.set(group.groupId, group);
    this.rebalance.onGroupLoaded(group);
  }

  /** The partition of __consumer_offsets that holds the group (FindCoordinator). */
  partitionFor(groupId: string): number {
    return this.state.partitionFor(groupId);
  }

  /** Scheduled timers (for tests: none may outlive the groups that made them). */
  get scheduledTimers(): string[] {
    return this.state.timers.keys();
  }

  group(groupId: string): ClassicGroup | undefined {
    return this.state.groups.get(groupId);
  }

  // ================================================================= rebalance protocol

  joinGroup(req: JoinRequest): Promise<JoinResult> {
    return this.rebalance.joinGroup(req);
  }

  syncGroup(req: SyncRequest): Promise<SyncResult> {
    return this.rebalance.syncGroup(req);
  }

  heartbeat(groupId: string, memberId: string, groupInstanceId: string | null, generationId: number): number {
    return this.rebalance.heartbeat(groupId, memberId, groupInstanceId, generationId);
  }

  leaveGroup(groupId: string, leaving: MemberIdentity[]): LeaveResult {
    return this.rebalance.leaveGroup(groupId, leaving);
  }

  // ================================================================= offsets

  /** The error of each partition of `req.partitions`, in order. */
  commitOffsets(req: CommitRequest): Promise<number[]> {
    return this.offsets.commitOffsets(req);
  }

  /** TxnOffsetCommit: the error of each partition of `req.partitions`, in order. */
  commitTxnOffsets(req: TxnCommitRequest): Promise<number[]> {
    return this.offsets.commitTxnOffsets(req);
  }

  /** The transaction of `producerId` ended and its marker is in partition `offsetsPartition` of __consumer_offsets. */
  onTransactionCompleted(producerId: number, offsetsPartition: number, commit: boolean): void {
    this.offsets.onTransactionCompleted(producerId, offsetsPartition, commit);
  }

  fetchOffsets(groupId: string, topics: { name: string; partitions: number[] }[] | null, requireStable: boolean): FetchResult {
    return this.offsets.fetchOffsets(groupId, topics, requireStable);
  }

  deleteOffsets(groupId: string, topics: { name: string; partitions: number[] }[]): Promise<OffsetDeleteResult> {
    return this.offsets.deleteOffsets(groupId, topics);
  }

  /** offsets.retention.minutes, checked now (it also runs every offsets.retention.check.interval.ms). */
  expireOffsets(now?: number): void {
    this.offsets.expireOffsets(now);
  }

  // ================================================================= ListGroups, DescribeGroups, DeleteGroups

  listGroups(states: string[], types: string[]): { errorCode: number; groups: GroupOverview[] } {
    if (this.state.status === 'closed') return { errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE, groups: [] };
    const wantedStates = new Set(states.map((s) => s.toLowerCase()));
    const classicWanted = types.length === 0 || types.some((t) => t.toLowerCase() === 'classic');
    const groups: GroupOverview[] = [];
    for (const g of this.state.groups.values()) {
      if (g.is(GroupState.Dead) || !classicWanted) continue;
      if (wantedStates.size > 0 && !wantedStates.has(g.state.toLowerCase())) continue;
      groups.push({ groupId: g.groupId, protocolType: g.protocolType ?? '', state: g.state, type: 'classic' });
    }
    const errorCode = this.state.status === 'loading' ? ErrorCode.COORDINATOR_LOAD_IN_PROGRESS : ErrorCode.NONE;
    return { errorCode, groups };
  }

  describeGroup(groupId: string): GroupDescription {
    const blank = { groupId, protocolType: '', protocolData: '', members: [] };
    const statusError = this.state.validateStatus(groupId, true);
    if (statusError) return { ...blank, errorCode: statusError, state: '' };
    const group = this.state.groups.get(groupId);
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
    const statusError = this.state.validateStatus(groupId, true);
    if (statusError) return statusError;
    const group = this.state.groups.get(groupId);
    if (!group || group.is(GroupState.Dead)) return ErrorCode.GROUP_ID_NOT_FOUND;
    if (!group.is(GroupState.Empty)) return ErrorCode.NON_EMPTY_GROUP;
    return this.state.removeGroup(group, this.offsets.partitionsWithOffsets(group));
  }
}
