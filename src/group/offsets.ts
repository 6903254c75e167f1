// Committed offsets (Kafka's OffsetMetadataManager): OffsetCommit, TxnOffsetCommit and the end of
// their transactions, OffsetFetch, OffsetDelete, and offsets.retention.minutes.
//
// Transactional offsets (TxnOffsetCommit, KIP-98 / KIP-447) are written as the producer's
// transactional batch and stay pending per (group, producer) until the transaction coordinator
// has written the transaction's marker to the group's partition and calls onTransactionCompleted:
// COMMIT makes them the committed offsets (unless a later plain commit of the partition is there
// already), ABORT drops them. OffsetFetch never shows them; with require_stable it answers
// UNSTABLE_OFFSET_COMMIT for their partitions. Every write gets a number in log order (loaded
// offsets their place in the log), and "later" always means the higher number.
import type { Logger } from 'pino';
import { ErrorCode } from '../common/errors';
import type { CoordinatorState, GroupCoordinatorConfig, HostedPartition } from './coordinator-state';
import { GroupState, type ClassicGroup, type SequencedOffset } from './group';
import type { MemberIdentity, RebalanceManager } from './rebalance';
import {
  offsetKey, type LoadedGroup, type LoadedOffset, type OffsetsStore, type TopicPartitionKey, type TopicPartitionOffset,
  type TxnProducer,
} from './store';
import { retentionKey } from './timers';

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

/** Who fetches (OffsetFetch v9+): a consumer group's member is checked as for a commit. */
export interface FetchingMember {
  memberId: string | null;
  /** -1: none. */
  memberEpoch: number;
}

export const NO_FETCHING_MEMBER: FetchingMember = { memberId: null, memberEpoch: -1 };

export interface OffsetDeleteResult {
  errorCode: number;
  topics: { name: string; partitions: { partition: number; errorCode: number }[] }[];
}

/** The error of one partition of a commit, checked before it is written. */
type PartitionCommitCheck = (p: CommitPartition) => number;

/** A TxnOffsetCommit batch being written; its transaction may end before the write completes. */
interface TxnOffsetWrite {
  group: ClassicGroup;
  producerId: number;
  offsets: SequencedOffset[];
  /** Set when the transaction ends meanwhile (true: committed): the marker follows the batch in the log. */
  outcome: boolean | null;
}

export class OffsetMetadataManager {
  private readonly groups: Map<string, ClassicGroup>;
  private readonly config: GroupCoordinatorConfig;
  private readonly log: Logger;
  /** Orders offset writes: the newest write for a partition is the one that sticks. */
  private writeSeq = 0;
  private readonly txnWritesInFlight = new Set<TxnOffsetWrite>();

  constructor(
    private readonly state: CoordinatorState,
    /** Commits keep a member's session alive. */
    private readonly rebalance: Pick<RebalanceManager, 'scheduleHeartbeat'>,
    /** The id of a topic of the cluster, by name (consumer group members' commits are checked against their assignments by id). */
    private readonly topicId: (name: string) => string | undefined,
  ) {
    this.groups = state.groups;
    this.config = state.config;
    this.log = state.log;
  }

  /** The offsets of a group read back from the log, committed and pending. */
  loadOffsets(group: ClassicGroup, loaded: LoadedGroup): void {
    for (const o of loaded.offsets.values()) group.applyOffset(this.loadedOffset(o));
    for (const [producerId, pending] of loaded.pendingTxnOffsets) {
      for (const o of pending.values()) group.addPendingTxnOffset(producerId, this.loadedOffset(o));
    }
  }

  /** A loaded offset is numbered by its place in the log (+1: 0 means "never written"); new writes number on past it. */
  private loadedOffset(loaded: LoadedOffset): SequencedOffset {
    const { logOffset, ...offset } = loaded;
    this.writeSeq = Math.max(this.writeSeq, logOffset + 1);
    return { offset, seq: logOffset + 1 };
  }

  /** A partition is loaded: the transactions that ended meanwhile, and its retention checks. */
  onPartitionLoaded(partition: HostedPartition): void {
    // The load may have read the log before those markers were written (if not, nothing is pending for them).
    for (const c of partition.endedWhileLoading.splice(0)) this.onTransactionCompleted(c.producerId, partition.index, c.commit);
    this.scheduleRetention(partition);
  }

  /** The error of each partition of `req.partitions`, in order. */
  async commitOffsets(req: CommitRequest): Promise<number[]> {
    const all = (code: number): number[] => req.partitions.map(() => code);
    const statusError = this.state.validateStatus(req.groupId, true);
    if (statusError) return all(statusError);
    let group = this.groups.get(req.groupId);
    const modernGroup = this.state.modernGroup(req.groupId);
    if (modernGroup) {
      const error = modernGroup.validateOffsetCommit(req.memberId, req.groupInstanceId, req.generationId, false, req.apiVersion);
      if (error) return all(error);
      group ??= this.state.createGroup(req.groupId);
    } else {
      if (!group) {
        // Generation -1: a consumer that only stores offsets here (or the admin client): a "simple" group.
        if (req.generationId >= 0) return all(req.apiVersion >= 9 ? ErrorCode.GROUP_ID_NOT_FOUND : ErrorCode.ILLEGAL_GENERATION);
        group = this.state.createGroup(req.groupId);
      }
      const error = this.validateOffsetCommit(group, req, false);
      if (error) return all(error);
    }
    // Commits keep a classic member's session alive.
    if (req.memberId !== '' && group.has(req.memberId) &&
      (group.is(GroupState.Stable) || group.is(GroupState.PreparingRebalance))) {
      this.rebalance.scheduleHeartbeat(group, group.get(req.memberId));
    }

    const expireTimestamp = req.retentionTimeMs === -1 ? -1 : this.state.now() + req.retentionTimeMs;
    const results = all(ErrorCode.NONE);
    const writes = this.offsetWrites(req.partitions, expireTimestamp, results, this.partitionCommitCheck(req));
    if (writes.length === 0) return results;
    const g = group;
    const code = await this.writeOffsets(g, writes, (store, offsets) => store.storeOffsets(g.groupId, offsets));
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
    const statusError = this.state.validateStatus(req.groupId, false);
    if (statusError) return all(statusError);
    let group = this.groups.get(req.groupId);
    const modernGroup = this.state.modernGroup(req.groupId);
    if (modernGroup) {
      const error = modernGroup.validateOffsetCommit(req.memberId, req.groupInstanceId, req.generationId, true);
      if (error) return all(error);
      group ??= this.state.createGroup(req.groupId);
    } else {
      if (!group) {
        if (req.generationId >= 0) return all(ErrorCode.ILLEGAL_GENERATION);
        group = this.state.createGroup(req.groupId);
      }
      const error = this.validateOffsetCommit(group, req, true);
      if (error) return all(error);
    }

    const results = all(ErrorCode.NONE);
    const writes = this.offsetWrites(req.partitions, -1, results, this.partitionCommitCheck(req));
    if (writes.length === 0) return results;
    const g = group;
    const producer: TxnProducer = { producerId: req.producerId, producerEpoch: req.producerEpoch };
    const inFlight: TxnOffsetWrite = { group: g, producerId: req.producerId, offsets: writes, outcome: null };
    this.txnWritesInFlight.add(inFlight);
    const code = await this.writeOffsets(g, writes, (store, offsets) => store.storeTxnOffsets(g.groupId, producer, offsets));
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
    // Not hosted here: the marker is in the log, where the partition's next load reads it.
    const partition = this.state.hosted.get(offsetsPartition);
    if (!partition) return;
    if (partition.status === 'loading') {
      partition.endedWhileLoading.push({ producerId, commit });
      return;
    }
    for (const w of this.txnWritesInFlight) {
      if (w.producerId === producerId && this.state.partitionFor(w.group.groupId) === offsetsPartition) w.outcome = commit;
    }
    for (const group of this.groups.values()) {
      const pending = group.pendingTxnOffsets.get(producerId);
      if (!pending || this.state.partitionFor(group.groupId) !== offsetsPartition) continue;
      group.pendingTxnOffsets.delete(producerId);
      if (commit) for (const o of pending.values()) group.applyOffset(o);
    }
  }

  /** A consumer group member's check of each partition it commits (at an older member epoch: the partitions it owned then). */
  private partitionCommitCheck(req: MemberIdentity & { groupId: string; generationId: number }): PartitionCommitCheck {
    const group = this.state.consumerGroups.get(req.groupId);
    if (!group) return () => ErrorCode.NONE;
    return (p) => group.partitionCommitError(req.memberId, req.generationId, this.topicId(p.topic), p.partition);
  }

  /**
   * The offsets to write, each numbered and with its place in the request; a partition the member
   * may not commit (`check`) gets its error in `results`, one whose metadata is too large
   * OFFSET_METADATA_TOO_LARGE, and is not written.
   */
  private offsetWrites(partitions: (CommitPartition & { commitTimestamp?: number })[], expireTimestamp: number,
    results: number[], check: PartitionCommitCheck): (SequencedOffset & { index: number })[] {
    const now = this.state.now();
    const writes: (SequencedOffset & { index: number })[] = [];
    partitions.forEach((p, index) => {
      const error = check(p);
      if (error !== ErrorCode.NONE) {
        results[index] = error;
        return;
      }
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
    write: (store: OffsetsStore, offsets: TopicPartitionOffset[]) => Promise<number>): Promise<number> {
    const keys = writes.map((w) => offsetKey(w.offset.topic, w.offset.partition));
    for (const key of keys) adjust(group.pendingCommits, key, 1);
    const code = await this.state.write(group.groupId, (store) => write(store, writes.map((w) => w.offset)));
    for (const key of keys) adjust(group.pendingCommits, key, -1);
    return code;
  }

  /** Kafka's ClassicGroup.validateOffsetCommit, for OffsetCommit and (`isTransactional`) TxnOffsetCommit. */
  private validateOffsetCommit(group: ClassicGroup, req: MemberIdentity & { generationId: number }, isTransactional: boolean): number {
    if (group.is(GroupState.Dead)) return ErrorCode.COORDINATOR_NOT_AVAILABLE;
    if (req.generationId < 0 && group.is(GroupState.Empty)) return ErrorCode.NONE;
    if (req.generationId >= 0 || req.memberId !== '' || req.groupInstanceId !== null) {
      const memberError = this.state.validateMember(group, req.memberId, req.groupInstanceId);
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
  fetchOffsets(groupId: string, topics: { name: string; partitions: number[] }[] | null, requireStable: boolean,
    member: FetchingMember = NO_FETCHING_MEMBER): FetchResult {
    const statusError = this.state.validateStatus(groupId, true);
    if (statusError) return { errorCode: statusError, topics: [] };
    const memberError = this.state.modernGroup(groupId)?.validateOffsetFetch(member.memberId, member.memberEpoch);
    if (memberError) return { errorCode: memberError, topics: [] };
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
    const statusError = this.state.validateStatus(groupId, false);
    if (statusError) return { errorCode: statusError, topics: [] };
    const found = this.groups.get(groupId);
    const group = found && !found.is(GroupState.Dead) ? found : undefined;
    // A consumer group's offsets are in the classic group of its id, if it committed any.
    const modernGroup = this.state.modernGroup(groupId);
    if (!modernGroup) {
      if (!group) return { errorCode: ErrorCode.GROUP_ID_NOT_FOUND, topics: [] };
      if (!group.is(GroupState.Empty) && !group.usesConsumerProtocol()) return { errorCode: ErrorCode.NON_EMPTY_GROUP, topics: [] };
    }
    const doomed: TopicPartitionKey[] = [];
    const result = topics.map((t) => {
      const subscribed = modernGroup ? modernGroup.isSubscribedToTopic(t.name) : group?.isSubscribedToTopic(t.name) ?? false;
      return {
        name: t.name,
        partitions: t.partitions.map((partition) => {
          if (subscribed) return { partition, errorCode: ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC };
          // The tombstone also ends the partition's pending transactional offsets (as Kafka's replay does).
          const key = offsetKey(t.name, partition);
          if (group?.offsets.has(key) || group?.hasPendingTxnOffset(key)) doomed.push({ topic: t.name, partition });
          return { partition, errorCode: ErrorCode.NONE };
        }),
      };
    });
    if (group && doomed.length > 0) {
      const code = await this.removeOffsets(group, doomed);
      if (code !== ErrorCode.NONE) return { errorCode: code, topics: [] };
    }
    return { errorCode: ErrorCode.NONE, topics: result };
  }

  /** Tombstones, then what was written of those partitions before them (committed or pending) leaves the cache. */
  private async removeOffsets(group: ClassicGroup, keys: TopicPartitionKey[]): Promise<number> {
    const seq = ++this.writeSeq;
    const code = await this.state.write(group.groupId, (store) => store.deleteOffsets(group.groupId, keys));
    if (code === ErrorCode.NONE) for (const k of keys) group.applyTombstone(offsetKey(k.topic, k.partition), seq);
    return code;
  }

  /**
   * Every partition the group has an offset of in the log: committed, pending in a transaction, or
   * in a transactional batch still being written (Kafka's deleteAllOffsets tombstones the pending
   * ones too, so that a later COMMIT marker cannot bring them back on load).
   */
  partitionsWithOffsets(group: ClassicGroup): TopicPartitionKey[] {
    const partitions = new Map<string, TopicPartitionKey>();
    const add = (o: TopicPartitionOffset) => partitions.set(offsetKey(o.topic, o.partition), { topic: o.topic, partition: o.partition });
    for (const o of group.offsets.values()) add(o);
    for (const pending of group.pendingTxnOffsets.values()) for (const o of pending.values()) add(o.offset);
    for (const w of this.txnWritesInFlight) if (w.group === group) for (const o of w.offsets) add(o.offset);
    return [...partitions.values()];
  }

  // ================================================================= retention

  /** Each hosted partition checks its groups' offsets on its own timer (Kafka's per-shard expiration). */
  private scheduleRetention(partition: HostedPartition): void {
    this.state.timers.schedule(retentionKey(partition.index), this.config.offsetsRetentionCheckIntervalMs, () => {
      this.expireOffsets(this.state.now(), partition.index);
      if (this.state.hosted.get(partition.index) === partition) this.scheduleRetention(partition);
    });
  }

  /**
   * offsets.retention.minutes (Kafka 4's OffsetExpirationCondition): an Empty group's offsets expire
   * that long after it became empty; a simple group's (no protocol) and a Stable consumer group's
   * unsubscribed topics' that long after their commit. An offset committed with its own retention
   * (v2-4) expires at its expire timestamp. An Empty group left with no offsets is deleted. Offsets of
   * a partition with a pending transactional offset wait, and so does a group with any (Kafka 4).
   * `offsetsPartition`: only the groups of that partition of __consumer_offsets (default: all).
   */
  expireOffsets(now = this.state.now(), offsetsPartition?: number): void {
    const retentionMs = this.config.offsetsRetentionMs;
    for (const group of [...this.groups.values()]) {
      if (offsetsPartition !== undefined && this.state.partitionFor(group.groupId) !== offsetsPartition) continue;
      // A consumer group's offsets (held by the classic group of its id) age from their commit, as
      // Kafka's ConsumerGroup has them, except those of topics it subscribes to; it goes once empty.
      const modernGroup = this.state.modernGroup(group.groupId);
      const base = modernGroup ? (o: TopicPartitionOffset) => o.commitTimestamp : expirationBase(group);
      if (base === null) continue;
      const subscribed = (topic: string): boolean => (modernGroup ? modernGroup.isSubscribedToTopic(topic) : group.isSubscribedToTopic(topic));
      const expired: TopicPartitionKey[] = [];
      let allExpired = (modernGroup?.members.size ?? 0) === 0;
      for (const [key, o] of group.offsets) {
        // Not while a commit of it is being written or a transaction has an offset of it pending.
        const isExpired = !subscribed(o.topic) && !group.pendingCommits.has(key) && !group.hasPendingTxnOffset(key) &&
          (o.expireTimestamp >= 0 ? now >= o.expireTimestamp : now - base(o) >= retentionMs);
        if (isExpired) expired.push({ topic: o.topic, partition: o.partition });
        else allExpired = false;
      }
      if (allExpired && group.is(GroupState.Empty) && group.pendingCommits.size === 0 && group.pendingTxnOffsets.size === 0 &&
        !group.hasPendingMembers()) {
        this.log.info({ group: group.groupId, offsets: expired.length }, 'group expired');
        void this.state.removeGroup(group, expired);
      } else if (expired.length > 0) {
        this.log.info({ group: group.groupId, offsets: expired.length }, 'offsets expired');
        void this.removeOffsets(group, expired);
      }
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
