// Kafka's classic group coordinator, as the handlers see it: its lifecycle (it follows the
// leadership of __consumer_offsets' partitions as Kafka 4's CoordinatorRuntime does: an election
// loads that one partition's groups from its log, a resignation drops them; leader epochs order
// these events), the group listings and deletions, and the two halves it
// composes: the rebalance protocol (./rebalance.ts: JoinGroup, SyncGroup, Heartbeat, LeaveGroup)
// and the committed offsets (./offsets.ts, Kafka's OffsetMetadataManager). They share the groups,
// timers and store through ./coordinator-state.ts. Handlers translate requests into these calls
// and the answers back.
import type { Logger } from 'pino';
import { CONSUMER_PROTOCOL_TYPE } from './consumer-protocol';
import { ErrorCode, quoteInMessage } from '../common/errors';
import type { Timer } from '../replica/delayed/timing-wheel';
import { CONSUMER_GROUP_ASSIGNORS } from './assignors';
import {
  ConsumerGroupManager, type ConsumerGroupDescription, type ConsumerGroupTopics, type ConsumerHeartbeatRequest,
  type ConsumerHeartbeatResult, type GroupConfigLookup,
} from './consumer-coordinator';
import { CoordinatorState, type GroupCoordinatorConfig, type HostedPartition } from './coordinator-state';
import type { ConsumerGroup } from './consumer-group';
import { ClassicGroup, GroupMember, GroupState, joinError, type JoinResult, type SyncResult } from './group';
import {
  OffsetMetadataManager, type CommitRequest, type FetchingMember, type FetchResult, type OffsetDeleteResult, type TxnCommitRequest,
} from './offsets';
import { RebalanceManager, type JoinRequest, type LeaveResult, type MemberIdentity, type SyncRequest } from './rebalance';
import type { LoadedGroup, OffsetsStore } from './store';
import {
  ShareGroupManager, type ShareGroupDescription, type ShareGroupLookup, type ShareHeartbeatRequest, type ShareHeartbeatResult,
  type ShareStateInitializer,
} from './share-membership';
import { SHARE_PROTOCOL_TYPE } from './share-group';
import { StreamsGroupManager, type InternalTopicCreator, type StreamsGroupDescription, type StreamsHeartbeatRequest, type StreamsHeartbeatResult } from './streams-coordinator';
import { retentionKey } from './timers';
import type { GroupMetrics } from '../metrics/state-instruments';

export type { GroupCoordinatorConfig } from './coordinator-state';
export type { CommitPartition, CommitRequest, FetchedPartition, FetchingMember, FetchResult, OffsetDeleteResult, TxnCommitRequest } from './offsets';
export type { JoinRequest, LeaveResult, MemberIdentity, SyncRequest } from './rebalance';
export type {
  ShareGroupDescription, ShareGroupLookup, ShareHeartbeatRequest, ShareHeartbeatResult, ShareStateInitializer,
} from './share-membership';
export type {
  ConsumerGroupDescription, ConsumerGroupTopics, ConsumerHeartbeatRequest, ConsumerHeartbeatResult, GroupConfigLookup,
} from './consumer-coordinator';

/** What the coordinator may be given besides its config. */
export interface GroupCoordinatorDeps {
  /** The cluster's topics (consumer groups assign their partitions); none when absent. */
  topics?: ConsumerGroupTopics;
  /** Each group's config overrides (consumer.session.timeout.ms, consumer.heartbeat.interval.ms). */
  groupConfig?: GroupConfigLookup;
  /** Creates the internal topics of streams groups; none created when absent. */
  createInternalTopics?: InternalTopicCreator;
  /** Initializes share groups' share-partitions at the share coordinator; absent: they count as initialized at once. */
  initializeShareState?: ShareStateInitializer;
  /**
   * A share group is being deleted (DeleteGroups): its share-partitions' state is to go
   * (DeleteShareGroupState). An error fails the deletion (the group stays).
   */
  onShareGroupDeleted?: ShareGroupDeletionHook;
  /** Where completed rebalances are counted (the broker's metrics); none in unit tests. */
  metrics?: GroupMetrics;
}

/**
 * What DeleteGroups calls before a share group goes, with its share-partitions (initialized or
 * being initialized) by topic id: NONE once their state is deleted, else the error DeleteGroups answers.
 */
export type ShareGroupDeletionHook = (groupId: string, topics: readonly { topicId: string; partitions: readonly number[] }[]) => Promise<number>;

const NO_TOPICS: ConsumerGroupTopics = { topic: () => undefined, topics: () => [], brokers: () => [] };

export interface GroupOverview {
  groupId: string;
  protocolType: string;
  state: string;
  type: 'classic' | 'consumer' | 'streams' | 'share';
}

export interface GroupDescription {
  /** GROUP_ID_NOT_FOUND (with its message) for an id that is not a classic group's. */
  errorCode: number;
  /** More than the code says, for DescribeGroups v6+ (absent: none, or the handler's for an unknown group). */
  errorMessage?: string;
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
/** The protocol type ListGroups shows for a streams group (Kafka's StreamsGroup.PROTOCOL_TYPE). */
const STREAMS_PROTOCOL_TYPE = 'streams';

export class GroupCoordinator {
  private readonly state: CoordinatorState;
  private readonly rebalance: RebalanceManager;
  private readonly offsets: OffsetMetadataManager;
  private readonly consumer: ConsumerGroupManager;
  private readonly streams: StreamsGroupManager;
  private readonly share: ShareGroupManager;
  private readonly onShareGroupDeleted: ShareGroupDeletionHook;
  /** The last leader epoch seen per partition of __consumer_offsets: older elections and resignations are stale. */
  private readonly epochs = new Map<number, number>();
  private readonly loadsInFlight = new Set<Promise<void>>();

  constructor(
    config: GroupCoordinatorConfig,
    timer: Timer,
    private readonly log: Logger,
    /** Wall clock (commit timestamps, state timestamps, retention). */
    now: () => number = Date.now,
    deps: GroupCoordinatorDeps = {},
  ) {
    this.state = new CoordinatorState(config, timer, log, now, deps.metrics);
    this.rebalance = new RebalanceManager(this.state);
    const topics = deps.topics ?? NO_TOPICS;
    this.offsets = new OffsetMetadataManager(this.state, this.rebalance, (name) => topics.topic(name)?.id);
    const assignors = config.consumerAssignors.map((name) => {
      const assignor = CONSUMER_GROUP_ASSIGNORS.find((a) => a.name === name);
      if (!assignor) throw new Error(`group.consumer.assignors: unknown assignor ${name}`);
      return assignor;
    });
    this.consumer = new ConsumerGroupManager(this.state, {
      sessionTimeoutMs: config.consumerSessionTimeoutMs, heartbeatIntervalMs: config.consumerHeartbeatIntervalMs,
      maxSize: config.consumerMaxSize, assignors, migrationPolicy: config.consumerMigrationPolicy,
      assignmentIntervalMs: config.consumerAssignmentIntervalMs,
    }, this.rebalance, topics, deps.groupConfig);
    this.streams = new StreamsGroupManager(this.state, {
      sessionTimeoutMs: config.streamsSessionTimeoutMs, heartbeatIntervalMs: config.streamsHeartbeatIntervalMs,
      numStandbyReplicas: config.streamsNumStandbyReplicas, initialRebalanceDelayMs: config.streamsInitialRebalanceDelayMs,
    }, topics, deps.createInternalTopics ?? (() => Promise.resolve()), deps.groupConfig);
    this.share = new ShareGroupManager(this.state, {
      sessionTimeoutMs: config.shareSessionTimeoutMs, heartbeatIntervalMs: config.shareHeartbeatIntervalMs,
      maxSize: config.shareMaxSize, assignmentIntervalMs: config.shareAssignmentIntervalMs,
    }, topics, (groupId) => this.isNotShareGroup(groupId), deps.initializeShareState, deps.groupConfig);
    this.onShareGroupDeleted = deps.onShareGroupDeleted ?? (() => Promise.resolve(ErrorCode.NONE));
  }

  /**
   * Whether the id is a group of another kind than share (Kafka's groups map holds it with another
   * type): a consumer or streams group, or a classic group with members or committed offsets.
   */
  private isNotShareGroup(groupId: string): boolean {
    if (this.state.consumerGroups.has(groupId) || this.state.streamsGroups.has(groupId)) return true;
    const classic = this.state.groups.get(groupId);
    return classic !== undefined && !classic.is(GroupState.Dead) &&
      (!classic.is(GroupState.Empty) || this.offsets.partitionsWithOffsets(classic).length > 0);
  }

  // ================================================================= lifecycle

  /** __consumer_offsets is known (partitionFor answers for it); groups are served where partitions are elected. */
  isActive(): boolean {
    return !this.state.closed && this.state.store !== null;
  }

  /**
   * The __consumer_offsets to serve from, once it exists: `numPartitions` fixes each group's
   * partition. No partition is hosted until onElection. Until this call every group request
   * answers COORDINATOR_LOAD_IN_PROGRESS.
   */
  useOffsetsTopic(store: OffsetsStore, numPartitions: number): void {
    if (this.state.closed) return;
    this.state.store = store;
    this.state.numPartitions = numPartitions;
  }

  /**
   * Kafka's onElection: this broker leads `partition` of __consumer_offsets from `leaderEpoch` on.
   * Its groups and offsets are read back from its log (COORDINATOR_LOAD_IN_PROGRESS meanwhile),
   * then served. A stale epoch is ignored, and so is an election of a partition already hosted.
   */
  onElection(partition: number, leaderEpoch: number): void {
    const store = this.state.store;
    if (this.state.closed) return;
    if (store === null) {
      this.log.warn({ partition, leaderEpoch }, 'ignored an election: __consumer_offsets is not in use yet');
      return;
    }
    if (this.isStale(partition, leaderEpoch, 'election')) return;
    this.epochs.set(partition, leaderEpoch);
    const hosted = this.state.hosted.get(partition);
    if (hosted) {
      hosted.epoch = leaderEpoch;
      return;
    }
    const p: HostedPartition = { index: partition, epoch: leaderEpoch, status: 'loading', endedWhileLoading: [] };
    this.state.hosted.set(partition, p);
    const load = this.load(p, store).finally(() => this.loadsInFlight.delete(load));
    this.loadsInFlight.add(load);
  }

  /**
   * Kafka's onResignation: this broker no longer leads `partition`. Its groups go (parked joins and
   * syncs answered NOT_COORDINATOR), its timers stop and a load in flight is discarded; its
   * requests answer NOT_COORDINATOR. A stale epoch is ignored.
   */
  onResignation(partition: number, leaderEpoch: number): void {
    if (this.state.closed || this.isStale(partition, leaderEpoch, 'resignation')) return;
    this.epochs.set(partition, leaderEpoch);
    const hosted = this.state.hosted.get(partition);
    if (!hosted) return;
    this.unloadPartition(hosted);
    this.log.info({ partition, leaderEpoch }, 'group coordinator resigned a partition');
  }

  /** Whether this broker hosts `partition` of __consumer_offsets and has loaded it (serves its groups). */
  isLoaded(partition: number): boolean {
    return this.state.hosted.get(partition)?.status === 'active';
  }

  /** Resolves once every load started so far has ended. */
  async loaded(): Promise<void> {
    await Promise.all(this.loadsInFlight);
  }

  /** Answers every parked request with NOT_COORDINATOR and stops every timer. */
  close(): void {
    if (this.state.closed) return;
    this.unloadAll();
    this.state.closed = true;
  }

  /**
   * __consumer_offsets was deleted: every partition resigns (Kafka's onResignation without epoch)
   * and their epochs are forgotten; requests get COORDINATOR_LOAD_IN_PROGRESS until
   * useOffsetsTopic is called again (with the new topic).
   */
  unloadAll(): void {
    for (const p of [...this.state.hosted.values()]) this.unloadPartition(p);
    this.epochs.clear();
    this.state.store = null;
  }

  private isStale(partition: number, leaderEpoch: number, event: string): boolean {
    const last = this.epochs.get(partition);
    if (last === undefined || leaderEpoch >= last) return false;
    this.log.info({ partition, leaderEpoch, last }, `ignored a stale ${event} of a __consumer_offsets partition`);
    return true;
  }

  /** Reads the partition's groups back; discarded if the partition resigned meanwhile (even if elected again). */
  private async load(p: HostedPartition, store: OffsetsStore): Promise<void> {
    let loaded: LoadedGroup[];
    try {
      loaded = await store.loadPartition(p.index);
    } catch (err) {
      // Kafka's FAILED state: not served (NOT_COORDINATOR) until elected again.
      this.log.error({ err, partition: p.index }, 'could not load a partition of __consumer_offsets');
      if (this.state.hosted.get(p.index) === p) this.state.hosted.delete(p.index);
      return;
    }
    if (this.state.hosted.get(p.index) !== p) return;
    for (const l of loaded) this.loadGroup(l);
    p.status = 'active';
    this.offsets.onPartitionLoaded(p);
    this.log.info({ partition: p.index, leaderEpoch: p.epoch, groups: loaded.length }, 'group coordinator loaded a partition');
  }

  private unloadPartition(p: HostedPartition): void {
    this.state.hosted.delete(p.index);
    this.state.timers.cancel(retentionKey(p.index));
    for (const group of [...this.state.groups.values()]) {
      if (this.state.partitionFor(group.groupId) !== p.index) continue;
      this.rebalance.unloadGroup(group);
      this.state.groups.delete(group.groupId);
    }
    for (const group of [...this.state.consumerGroups.values()]) {
      if (this.state.partitionFor(group.groupId) === p.index) this.state.dropConsumerGroup(group.groupId);
    }
    for (const group of [...this.state.streamsGroups.values()]) {
      if (this.state.partitionFor(group.groupId) === p.index) this.state.dropStreamsGroup(group.groupId);
    }
    for (const group of [...this.state.shareGroups.values()]) {
      if (this.state.partitionFor(group.groupId) === p.index) this.state.dropShareGroup(group.groupId);
    }
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
    if (l.consumerGroup) this.consumer.loadGroup(l.groupId, l.consumerGroup);
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

  /**
   * A classic member joining: into a consumer group with members as one of them (KIP-848's mixed
   * groups); an empty consumer group of the id gives way to a classic group (its offsets stay), as in Kafka.
   */
  joinGroup(req: JoinRequest): Promise<JoinResult> {
    // A share group takes no classic members, even Empty (Kafka answers INCONSISTENT_GROUP_PROTOCOL, member id "").
    if (this.state.shareGroups.has(req.groupId) && this.state.validateStatus(req.groupId, false) === ErrorCode.NONE) {
      return Promise.resolve(joinError('', ErrorCode.INCONSISTENT_GROUP_PROTOCOL));
    }
    // A streams group takes no classic members (Kafka's "not a classic group", which JoinGroup answers so).
    if (this.state.streamsGroups.has(req.groupId) && this.state.validateStatus(req.groupId, false) === ErrorCode.NONE) {
      return Promise.resolve(joinError(req.memberId, ErrorCode.INCONSISTENT_GROUP_PROTOCOL));
    }
    const consumerGroup = this.state.consumerGroups.get(req.groupId);
    if (consumerGroup && this.state.validateStatus(req.groupId, false) === ErrorCode.NONE) {
      if (consumerGroup.members.size > 0) {
        const { minSessionTimeoutMs, maxSessionTimeoutMs } = this.state.config;
        if (req.sessionTimeoutMs < minSessionTimeoutMs || req.sessionTimeoutMs > maxSessionTimeoutMs) {
          return Promise.resolve(joinError(req.memberId, ErrorCode.INVALID_SESSION_TIMEOUT));
        }
        return this.consumer.classicJoin(consumerGroup, req);
      }
      // Its tombstones go first (appends keep their call order); the join does not wait for them, as in Kafka.
      const tombstones = this.state.dropConsumerGroup(req.groupId);
      void this.state.write(req.groupId, (store) => store.storeConsumerGroup(req.groupId, tombstones));
    }
    return this.rebalance.joinGroup(req);
  }

  syncGroup(req: SyncRequest): Promise<SyncResult> {
    const consumerGroup = this.servedConsumerGroup(req.groupId);
    return consumerGroup ? Promise.resolve(this.consumer.classicSync(consumerGroup, req)) : this.rebalance.syncGroup(req);
  }

  heartbeat(groupId: string, memberId: string, groupInstanceId: string | null, generationId: number): number {
    const consumerGroup = this.servedConsumerGroup(groupId);
    return consumerGroup
      ? this.consumer.classicHeartbeat(consumerGroup, memberId, groupInstanceId, generationId)
      : this.rebalance.heartbeat(groupId, memberId, groupInstanceId, generationId);
  }

  leaveGroup(groupId: string, leaving: MemberIdentity[]): Promise<LeaveResult> {
    const consumerGroup = this.servedConsumerGroup(groupId);
    return consumerGroup ? this.consumer.classicLeave(consumerGroup, leaving) : Promise.resolve(this.rebalance.leaveGroup(groupId, leaving));
  }

  /** The consumer group of the id, if there is one and this broker serves it now (classic requests to it are its members'). */
  private servedConsumerGroup(groupId: string): ConsumerGroup | undefined {
    const group = this.state.consumerGroups.get(groupId);
    return group && this.state.validateStatus(groupId, false) === ErrorCode.NONE ? group : undefined;
  }

  // ================================================================= consumer groups (KIP-848)

  consumerGroupHeartbeat(req: ConsumerHeartbeatRequest): Promise<ConsumerHeartbeatResult> {
    return this.consumer.heartbeat(req);
  }

  consumerGroupDescribe(groupId: string): ConsumerGroupDescription {
    return this.consumer.describe(groupId);
  }

  consumerGroup(groupId: string): ConsumerGroup | undefined {
    return this.state.consumerGroups.get(groupId);
  }

  // ================================================================= streams groups (KIP-1071)

  streamsGroupHeartbeat(req: StreamsHeartbeatRequest): StreamsHeartbeatResult {
    return this.streams.heartbeat(req);
  }

  streamsGroupDescribe(groupId: string): StreamsGroupDescription {
    return this.streams.describe(groupId);
  }


  // ================================================================= share groups (KIP-932)

  shareGroupHeartbeat(req: ShareHeartbeatRequest): ShareHeartbeatResult {
    return this.share.heartbeat(req);
  }

  shareGroupDescribe(groupId: string): ShareGroupDescription {
    return this.share.describe(groupId);
  }

  /**
   * A group as the share admin APIs (DescribeShareGroupOffsets, AlterShareGroupOffsets,
   * DeleteShareGroupOffsets) see it: none, another kind's, not served here, or a share group with
   * its member count and the share-partitions it has state for.
   */
  shareGroup(groupId: string): ShareGroupLookup {
    return this.share.lookup(groupId);
  }

  /** AlterShareGroupOffsets initialized these share-partitions at the share coordinator: the group has state for them. */
  markInitialized(groupId: string, topics: readonly { topicId: string; topicName: string; partitions: readonly number[] }[]): Promise<void> {
    this.share.markInitialized(groupId, topics);
    return Promise.resolve();
  }

  /** DeleteShareGroupOffsets deleted these topics' share state: the group has none for them any more. */
  forgetTopics(groupId: string, topicIds: readonly string[]): Promise<void> {
    this.share.forgetTopics(groupId, topicIds);
    return Promise.resolve();
  }

  /** Kafka's ShareGroup.validateOffsetCommit/Fetch/Delete: a share group commits no offsets. */
  private shareGroupRefusal(groupId: string): number {
    return this.state.shareGroups.has(groupId) && this.state.validateStatus(groupId, true) === ErrorCode.NONE ? ErrorCode.GROUP_ID_NOT_FOUND : ErrorCode.NONE;
  }

  // ================================================================= offsets

  /** The error of each partition of `req.partitions`, in order. */
  commitOffsets(req: CommitRequest): Promise<number[]> {
    const refusal = this.shareGroupRefusal(req.groupId);
    if (refusal) return Promise.resolve(req.partitions.map(() => refusal));
    return this.offsets.commitOffsets(req);
  }

  /** TxnOffsetCommit: the error of each partition of `req.partitions`, in order. */
  commitTxnOffsets(req: TxnCommitRequest): Promise<number[]> {
    const refusal = this.shareGroupRefusal(req.groupId);
    if (refusal) return Promise.resolve(req.partitions.map(() => refusal));
    return this.offsets.commitTxnOffsets(req);
  }

  /** The transaction of `producerId` ended and its marker is in partition `offsetsPartition` of __consumer_offsets. */
  onTransactionCompleted(producerId: number, offsetsPartition: number, commit: boolean): void {
    this.offsets.onTransactionCompleted(producerId, offsetsPartition, commit);
  }

  fetchOffsets(groupId: string, topics: { name: string; partitions: number[] }[] | null, requireStable: boolean,
    member?: FetchingMember): FetchResult {
    const refusal = this.shareGroupRefusal(groupId);
    if (refusal) return { errorCode: refusal, topics: [] };
    return this.offsets.fetchOffsets(groupId, topics, requireStable, member);
  }

  deleteOffsets(groupId: string, topics: { name: string; partitions: number[] }[]): Promise<OffsetDeleteResult> {
    const refusal = this.shareGroupRefusal(groupId);
    if (refusal) return Promise.resolve({ errorCode: refusal, topics: [] });
    return this.offsets.deleteOffsets(groupId, topics);
  }

  /** offsets.retention.minutes, checked now (it also runs every offsets.retention.check.interval.ms). */
  expireOffsets(now?: number): void {
    this.offsets.expireOffsets(now);
  }

  // ================================================================= ListGroups, DescribeGroups, DeleteGroups

  /**
   * The groups of the partitions hosted here. While one of them loads (or before the topic is known)
   * the answer is COORDINATOR_LOAD_IN_PROGRESS without groups, as Kafka's read over every partition fails.
   */
  listGroups(states: string[], types: string[]): { errorCode: number; groups: GroupOverview[] } {
    if (this.state.closed) return { errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE, groups: [] };
    if (this.state.store === null || [...this.state.hosted.values()].some((p) => p.status === 'loading')) {
      return { errorCode: ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, groups: [] };
    }
    const wantedStates = new Set(states.map((s) => s.toLowerCase().trim()));
    const wantedTypes = new Set(types.map((t) => t.toLowerCase()));
    const wanted = (type: GroupOverview['type'], state: string): boolean =>
      (wantedTypes.size === 0 || wantedTypes.has(type)) && (wantedStates.size === 0 || wantedStates.has(state.toLowerCase()));
    const groups: GroupOverview[] = [];
    for (const g of this.state.groups.values()) {
      // A classic group of a consumer group's id only holds its offsets.
      if (g.is(GroupState.Dead) || this.state.modernGroup(g.groupId) || !wanted('classic', g.state)) continue;
      groups.push({ groupId: g.groupId, protocolType: g.protocolType ?? '', state: g.state, type: 'classic' });
    }
    for (const g of this.state.consumerGroups.values()) {
      if (wanted('consumer', g.state)) groups.push({ groupId: g.groupId, protocolType: CONSUMER_PROTOCOL_TYPE, state: g.state, type: 'consumer' });
    }
    for (const g of this.state.streamsGroups.values()) {
      if (wanted('streams', g.state)) groups.push({ groupId: g.groupId, protocolType: STREAMS_PROTOCOL_TYPE, state: g.state, type: 'streams' });
    }
    for (const g of this.state.shareGroups.values()) {
      if (wanted('share', g.state)) groups.push({ groupId: g.groupId, protocolType: SHARE_PROTOCOL_TYPE, state: g.state, type: 'share' });
    }
    return { errorCode: ErrorCode.NONE, groups };
  }

  describeGroup(groupId: string): GroupDescription {
    const blank = { groupId, protocolType: '', protocolData: '', members: [] };
    const statusError = this.state.validateStatus(groupId, true);
    if (statusError) return { ...blank, errorCode: statusError, state: '' };
    const group = this.state.groups.get(groupId);
    // A consumer group's id is not a classic group's (Kafka's GROUP_ID_NOT_FOUND, which DescribeGroups before v6 answers as Dead).
    if (this.state.modernGroup(groupId) || this.state.shareGroups.has(groupId)) {
      return { ...blank, errorCode: ErrorCode.GROUP_ID_NOT_FOUND, errorMessage: `Group ${quoteInMessage(groupId)} is not a classic group.`, state: GroupState.Dead };
    }
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
  async deleteGroups(groupIds: string[]): Promise<{ groupId: string; errorCode: number; errorMessage?: string }[]> {
    const unique = [...new Set(groupIds)];
    return Promise.all(unique.map(async (groupId) => ({ groupId, errorCode: await this.deleteGroup(groupId) })));
  }

  private async deleteGroup(groupId: string): Promise<number> {
    const statusError = this.state.validateStatus(groupId, true);
    if (statusError) return statusError;
    const consumerGroup = this.state.consumerGroups.get(groupId);
    const group = this.state.groups.get(groupId);
    const classicLive = group !== undefined && !group.is(GroupState.Dead);
    if (consumerGroup) {
      if (consumerGroup.members.size > 0) return ErrorCode.NON_EMPTY_GROUP;
      // Without offsets it has no classic group of its id to go with (removeGroup takes both).
      if (!classicLive) {
        const tombstones = this.state.dropConsumerGroup(groupId);
        return this.state.write(groupId, (store) => store.storeConsumerGroup(groupId, tombstones));
      }
    }
    if (this.state.shareGroups.has(groupId)) return this.deleteShareGroup(groupId);
    const streamsGroup = this.state.streamsGroups.get(groupId);
    if (streamsGroup) {
      if (streamsGroup.members.size > 0) return ErrorCode.NON_EMPTY_GROUP;
      if (!classicLive) {
        this.state.dropStreamsGroup(groupId);
        return ErrorCode.NONE;
      }
    }
    if (!group || group.is(GroupState.Dead)) return ErrorCode.GROUP_ID_NOT_FOUND;
    if (!group.is(GroupState.Empty)) return ErrorCode.NON_EMPTY_GROUP;
    return this.state.removeGroup(group, this.offsets.partitionsWithOffsets(group));
  }

  /**
   * Kafka's share group deletion: Empty only (NON_EMPTY_GROUP while it has members); its
   * share-partitions' state goes first (onShareGroupDeleted), then the group. A member joining
   * meanwhile keeps it.
   */
  private async deleteShareGroup(groupId: string): Promise<number> {
    const group = this.state.shareGroups.get(groupId)!;
    if (group.members.size > 0) return ErrorCode.NON_EMPTY_GROUP;
    const topics = [...new Set([...group.initialized.keys(), ...group.initializing.keys()])]
      .map((topicId) => ({ topicId, partitions: [...group.knownPartitions(topicId)].sort((a, b) => a - b) }));
    let code: number;
    try {
      code = await this.onShareGroupDeleted(groupId, topics);
    } catch (err) {
      this.log.warn({ err, groupId }, 'could not delete the share-partitions of a share group');
      code = ErrorCode.UNKNOWN_SERVER_ERROR;
    }
    if (code !== ErrorCode.NONE) return code;
    if (this.state.shareGroups.get(groupId) !== group) return ErrorCode.GROUP_ID_NOT_FOUND;
    if (group.members.size > 0) return ErrorCode.NON_EMPTY_GROUP;
    this.state.dropShareGroup(groupId);
    return ErrorCode.NONE;
  }
}
