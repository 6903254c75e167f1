// The share fetch path (Kafka's SharePartitionManager and DelayedShareFetch): one SharePartition per
// (share group, topic partition) led here, the share sessions, and what ShareFetch and
// ShareAcknowledge do with them.
// - A share-partition is made on the first fetch of its group and partition, at the partition's
//   current leader epoch, and loaded once (a failed load drops it: the next fetch tries again). It is
//   closed and dropped when this broker stops leading the partition, its topic is deleted, or the
//   leader epoch moved on (found at the next fetch).
// - A fetch reads the log from each share-partition's nextFetchOffset() (whole batches, the
//   replica layer's reads and byte budget, read_committed up to the last stable offset with the
//   aborted transactions), acquires up to MaxRecords over all partitions, and answers the batches
//   that hold acquired records, their bytes copied at most once.
// - Long polling: with nothing acquirable, the fetch waits in the replica layer's fetch purgatory
//   until MaxWaitMs passes or a partition has acquirable records: appends that move its high
//   watermark (read_committed: its last stable offset), records released or whose locks expired
//   (SharePartition.onAvailable), a partition gone. MinBytes counts as "some record".
// - A session that ends (FINAL epoch, its connection closed) releases what the member holds.
import type { Logger } from 'pino';
import { ErrorCode } from '../common/errors';
import { partitionKey } from '../storage';
import type { FetchIsolation, FetchPartitionResult } from '../replica/fetch-reads';
import type { ReplicaManager } from '../replica/replica-manager';
import { DelayedFetch } from '../replica/delayed-fetch';
import { EARLIEST_TIMESTAMP, LATEST_TIMESTAMP } from '../replica/offset-lookups';
import type { SharePartitionKey } from '../share-state/persister';
import { acquiredBatches, logBatches } from './log-batches';
import type { AcknowledgementBatch, AcquiredRecords, SharePartition } from './share-partition';
import { ShareSessionCache, type ShareSession } from './share-sessions';

/** What a new share-partition is made from; the factory adds the persister, the group's settings... */
export interface SharePartitionSpec {
  readonly key: SharePartitionKey;
  readonly topicName: string;
  readonly leaderEpoch: number;
}

/** The group's share.* values the fetch path reads (ShareGroupSettings has them). */
export interface ShareFetchSettings {
  readonly readCommitted: boolean;
  readonly recordLockDurationMs: number;
}

export interface SharePartitionManagerOptions {
  readonly replicas: Pick<ReplicaManager, 'fetchMessages' | 'leaderPartition' | 'partition' | 'fetchPurgatory' | 'onLeadershipEnded' | 'fetchOffsetForTimestamp'>;
  /** Makes a share-partition (createSharePartition with the share coordinator's persister). */
  readonly createPartition: (spec: SharePartitionSpec) => SharePartition;
  readonly settings: (groupId: string) => ShareFetchSettings;
  /** group.share.max.share.sessions. */
  readonly maxSessions: () => number;
  readonly logger: Logger;
}

/** A partition of a share fetch, its topic known. */
export interface ShareFetchPartition {
  readonly topicId: string;
  readonly topicName: string;
  readonly partition: number;
}

export interface ShareFetchParams {
  readonly groupId: string;
  readonly memberId: string;
  readonly maxWaitMs: number;
  readonly maxBytes: number;
  readonly maxRecords: number;
  /** ShareAcquireMode record_limit: never more than maxRecords (batch_optimized may finish a batch past it). */
  readonly recordLimit: boolean;
  /** Where records read go (the connection's pool, given back once the response is written). */
  readonly allocate: (size: number) => Buffer;
}

export interface ShareFetchPartitionResult {
  readonly errorCode: number;
  /** The partition's leader epoch here; -1 when it is not led here. */
  readonly leaderEpoch: number;
  readonly records: Buffer;
  readonly acquired: readonly AcquiredRecords[];
}

interface Entry {
  readonly sharePartition: SharePartition;
  readonly topicName: string;
  readonly leaderEpoch: number;
  /** Settles with load()'s code. */
  readonly loaded: Promise<number>;
  closed: boolean;
}

const NO_RECORDS = Buffer.alloc(0);
const entryKey = (groupId: string, topicId: string, partition: number): string => `${groupId}\u0000${topicId}\u0000${partition}`;

export class SharePartitionManager {
  private readonly entries = new Map<string, Entry>();
  readonly sessions: ShareSessionCache;

  constructor(private readonly options: SharePartitionManagerOptions) {
    this.sessions = new ShareSessionCache(options.maxSessions, (session) => void this.releaseSession(session));
    options.replicas.onLeadershipEnded((topic, partition) => this.leadershipEnded(topic, partition));
  }

  /** The group's share.* values the fetch path reads. */
  settings(groupId: string): ShareFetchSettings {
    return this.options.settings(groupId);
  }

  /** Share-partitions held now (tests, metrics). */
  get size(): number {
    return this.entries.size;
  }

  /**
   * Where a share-partition starts when share.auto.offset.reset decides it: the log start, the high
   * watermark, or the first record at or after a time (none: the high watermark, as Kafka).
   */
  async resetOffset(topicName: string, partition: number, to: 'earliest' | 'latest' | { timestampMs: number }): Promise<bigint> {
    const { replicas } = this.options;
    const lookup = (timestamp: number) => replicas.fetchOffsetForTimestamp(topicName, partition, -1, timestamp, 'high-watermark');
    let found = await lookup(to === 'earliest' ? EARLIEST_TIMESTAMP : to === 'latest' ? LATEST_TIMESTAMP : to.timestampMs);
    if (found.errorCode === ErrorCode.NONE && found.offset < 0) found = await lookup(LATEST_TIMESTAMP);
    if (found.errorCode !== ErrorCode.NONE) throw new Error(`cannot find where ${topicName}-${partition} starts: error ${found.errorCode}`);
    return BigInt(found.offset);
  }

  /**
   * The share-partition of the group for this partition, made and loaded on first use; the error
   * code instead when the partition is not led here or the load failed.
   */
  private async sharePartition(groupId: string, p: ShareFetchPartition): Promise<Entry | { errorCode: number }> {
    const leader = this.options.replicas.leaderPartition(p.topicName, p.partition, -1);
    if ('errorCode' in leader) return { errorCode: leader.errorCode };
    const key = entryKey(groupId, p.topicId, p.partition);
    let entry = this.entries.get(key);
    if (entry && entry.leaderEpoch !== leader.leaderEpoch) {
      this.drop(key, entry);
      entry = undefined;
    }
    if (!entry) entry = this.create(key, { key: { groupId, topicId: p.topicId, partition: p.partition }, topicName: p.topicName, leaderEpoch: leader.leaderEpoch });
    const errorCode = await entry.loaded;
    if (errorCode !== ErrorCode.NONE) {
      if (this.entries.get(key) === entry) this.drop(key, entry);
      return { errorCode };
    }
    return entry.closed ? { errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER } : entry;
  }

  private create(key: string, spec: SharePartitionSpec): Entry {
    const sharePartition = this.options.createPartition(spec);
    const loaded = sharePartition.load().catch((err: unknown) => {
      this.options.logger.error({ err, ...spec.key }, 'could not load a share-partition');
      return ErrorCode.UNKNOWN_SERVER_ERROR as number;
    });
    const entry: Entry = { sharePartition, topicName: spec.topicName, leaderEpoch: spec.leaderEpoch, loaded, closed: false };
    // Fetches waiting on the partition look again (released records, expired locks).
    sharePartition.onAvailable(() => {
      if (!entry.closed) this.options.replicas.fetchPurgatory.checkAndComplete(partitionKey(spec.topicName, spec.key.partition));
    });
    this.entries.set(key, entry);
    return entry;
  }

  /**
   * The share-partition's durable state was replaced or deleted (AlterShareGroupOffsets,
   * DeleteShareGroupOffsets, DeleteGroups): it is dropped; the next fetch makes it again from the
   * share coordinator's state.
   */
  reset(key: SharePartitionKey): void {
    const k = entryKey(key.groupId, key.topicId, key.partition);
    const entry = this.entries.get(k);
    if (entry) this.drop(k, entry);
  }

  private drop(key: string, entry: Entry): void {
    this.entries.delete(key);
    entry.closed = true;
    entry.sharePartition.close();
  }

  /** The replica layer: this broker no longer leads the partition. */
  private leadershipEnded(topic: string, partition: number): void {
    for (const [key, entry] of this.entries) {
      if (entry.topicName === topic && entry.sharePartition.key.partition === partition) this.drop(key, entry);
    }
  }

  /**
   * Acquires records of `partitions` for the member, waiting up to maxWaitMs for some to be
   * acquirable; one result per partition, in order.
   */
  async fetch(params: ShareFetchParams, partitions: readonly ShareFetchPartition[]): Promise<ShareFetchPartitionResult[]> {
    const found = await Promise.all(partitions.map((p) => this.sharePartition(params.groupId, p)));
    const isolation: FetchIsolation = this.options.settings(params.groupId).readCommitted ? 'txn-committed' : 'high-watermark';
    const deadline = Date.now() + params.maxWaitMs;
    // Share-partitions whose last read was out of range at this next offset: not acquirable there
    // until it moves (else a wait would end at once, again and again).
    const outOfRange = new Map<Entry, bigint>();
    for (;;) {
      const results = await this.readAndAcquire(params, partitions, found, isolation, outOfRange);
      const remainingMs = deadline - Date.now();
      if (remainingMs <= 0 || results.some((r) => r.acquired.length > 0 || r.errorCode !== ErrorCode.NONE)) return results;
      await this.waitUntilAcquirable(partitions, found, isolation, remainingMs, outOfRange);
    }
  }

  /** One pass: reads what each share-partition may acquire and acquires it (maxRecords over all of them). */
  private async readAndAcquire(
    params: ShareFetchParams, partitions: readonly ShareFetchPartition[], found: ReadonlyArray<Entry | { errorCode: number }>,
    isolation: FetchIsolation, outOfRange: Map<Entry, bigint>,
  ): Promise<ShareFetchPartitionResult[]> {
    const results: ShareFetchPartitionResult[] = found.map((f) => ({
      errorCode: 'errorCode' in f ? f.errorCode : f.closed ? ErrorCode.NOT_LEADER_OR_FOLLOWER : ErrorCode.NONE,
      leaderEpoch: 'errorCode' in f ? -1 : f.leaderEpoch, records: NO_RECORDS, acquired: [],
    }));
    const toRead: number[] = [];
    found.forEach((f, i) => {
      if (!('errorCode' in f) && !f.closed && this.acquirable(partitions[i], f, isolation, outOfRange)) toRead.push(i);
    });
    if (toRead.length === 0) return results;
    const fetchOffsets = toRead.map((i) => Number((found[i] as Entry).sharePartition.nextFetchOffset()));
    const reads = await this.options.replicas.fetchMessages(
      { maxWaitMs: 0, minBytes: 0, maxBytes: params.maxBytes, isolation, allocate: params.allocate },
      toRead.map((i, n) => ({
        topic: partitions[i].topicName, partition: partitions[i].partition, maxBytes: params.maxBytes,
        fetchOffset: fetchOffsets[n], currentLeaderEpoch: (found[i] as Entry).leaderEpoch,
      })));
    let remaining = params.maxRecords;
    toRead.forEach((i, n) => {
      const entry = found[i] as Entry;
      const read = reads[n];
      if (entry.closed) return;
      // Retention or DeleteRecords may have passed the start offset: it follows, and a read that
      // was out of range for it is read again from the new start.
      if (read.logStartOffset >= 0) entry.sharePartition.logStartOffsetChanged(BigInt(read.logStartOffset));
      if (read.errorCode === ErrorCode.OFFSET_OUT_OF_RANGE) {
        outOfRange.set(entry, BigInt(fetchOffsets[n]));
        return;
      }
      if (read.errorCode !== ErrorCode.NONE) {
        results[i] = { ...results[i], errorCode: read.errorCode };
        return;
      }
      if (remaining <= 0 || read.records.length === 0) return;
      results[i] = { ...results[i], ...this.acquire(params, entry.sharePartition, read, remaining, BigInt(fetchOffsets[n])) };
      for (const a of results[i].acquired) remaining -= Number(a.lastOffset - a.firstOffset) + 1;
    });
    return results;
  }

  private acquire(
    params: ShareFetchParams, sharePartition: SharePartition, read: FetchPartitionResult, maxRecords: number, fetchOffset: bigint,
  ): Pick<ShareFetchPartitionResult, 'records' | 'acquired'> {
    const batches = logBatches(read.records);
    const aborted = read.abortedTransactions?.map((t) => ({ producerId: BigInt(t.producerId), firstOffset: BigInt(t.firstOffset) }));
    const acquired = sharePartition.acquire(params.memberId, batches, maxRecords, aborted, fetchOffset, params.recordLimit);
    return { acquired, records: acquired.length === 0 ? NO_RECORDS : acquiredBatches(read.records, batches, acquired, params.allocate) };
  }

  /** Whether the share-partition may acquire something now: its next offset is below what reads may reach. */
  private acquirable(p: ShareFetchPartition, entry: Entry, isolation: FetchIsolation, outOfRange: ReadonlyMap<Entry, bigint>): boolean {
    const next = entry.sharePartition.nextFetchOffset();
    const partition = this.options.replicas.partition(p.topicName, p.partition);
    if (next === null || !partition || outOfRange.get(entry) === next) return false;
    const bound = isolation === 'txn-committed' ? partition.log.lastStableOffset : partition.log.highWatermark;
    return next < BigInt(bound);
  }

  /** Waits until a share-partition of the fetch has acquirable records, one is gone, or `ms` pass. */
  private waitUntilAcquirable(
    partitions: readonly ShareFetchPartition[], found: ReadonlyArray<Entry | { errorCode: number }>, isolation: FetchIsolation, ms: number,
    outOfRange: ReadonlyMap<Entry, bigint>,
  ): Promise<void> {
    const { replicas } = this.options;
    const watched = partitions.map((p, i) => ({ p, entry: found[i], partition: replicas.partition(p.topicName, p.partition) }));
    const ready = (): boolean => watched.some(({ p, entry, partition }) => 'errorCode' in entry || entry.closed
      || replicas.partition(p.topicName, p.partition) !== partition || this.acquirable(p, entry, isolation, outOfRange));
    const keys = [...new Set(partitions.map((p) => partitionKey(p.topicName, p.partition)))];
    // DelayedFetch answers at once when told undefined: here, when something became acquirable.
    return new Promise((resolve) => replicas.fetchPurgatory.tryCompleteElseWatch(new DelayedFetch(ms, 1, () => (ready() ? undefined : 0), resolve), keys));
  }

  /**
   * Applies the member's acknowledgements of one partition (all or none); UNKNOWN_TOPIC_OR_PARTITION
   * when no share-partition of the group is held here for it.
   */
  async acknowledge(groupId: string, memberId: string, p: ShareFetchPartition, batches: readonly AcknowledgementBatch[]): Promise<number> {
    const key = entryKey(groupId, p.topicId, p.partition);
    const entry = this.entries.get(key);
    if (!entry || (await entry.loaded) !== ErrorCode.NONE || entry.closed) return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
    return this.fencedCheck(key, entry, await entry.sharePartition.acknowledge(memberId, batches));
  }

  /**
   * NOT_LEADER_OR_FOLLOWER from a share-partition: the share coordinator fenced it and it closed
   * itself; it is dropped so that the next fetch makes a new one, which reads the state again.
   */
  private fencedCheck(key: string, entry: Entry, errorCode: number): number {
    if (errorCode === ErrorCode.NOT_LEADER_OR_FOLLOWER && this.entries.get(key) === entry) this.drop(key, entry);
    return errorCode;
  }

  /** Ends the member's session (a FINAL request), releasing what it holds; false when it had none. */
  async endSession(groupId: string, memberId: string): Promise<boolean> {
    const session = this.sessions.remove(groupId, memberId);
    if (!session) return false;
    await this.releaseSession(session);
    return true;
  }

  /** Releases every record the session's member holds of the session's partitions. */
  private async releaseSession(session: ShareSession): Promise<void> {
    await Promise.all([...session.partitions.values()].map(async (p) => {
      const key = entryKey(session.groupId, p.topicId, p.partition);
      const entry = this.entries.get(key);
      if (!entry || entry.closed || (await entry.loaded) !== ErrorCode.NONE) return;
      const errorCode = this.fencedCheck(key, entry, await entry.sharePartition.releaseAcquiredRecords(session.memberId));
      if (errorCode !== ErrorCode.NONE) {
        this.options.logger.warn({ groupId: session.groupId, memberId: session.memberId, ...p, errorCode }, 'could not release a member\'s records');
      }
    }));
  }

  /** Closes every share-partition (the broker stops). */
  close(): void {
    for (const [key, entry] of this.entries) this.drop(key, entry);
  }
}
