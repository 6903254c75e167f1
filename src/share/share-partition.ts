// The contract between a share-partition's in-flight state (which records are acquired, by whom,
// until when, delivered how often) and the fetch path that reads the log for it (ShareFetch,
// ShareAcknowledge, share sessions). One SharePartition per (share group, topic partition) that this
// broker leads; every change to its records goes through it, so what interleaves across an await is
// its concern alone.
import type { SharePartitionKey } from '../share-state/persister';

/** ShareAcknowledge's types (ShareFetch's AcknowledgementBatches carry the same). */
export enum AcknowledgeType {
  /** An offset with no record (compaction, control records): the client acknowledges the gap. */
  GAP = 0,
  ACCEPT = 1,
  RELEASE = 2,
  REJECT = 3,
  /** Keeps the record acquired for another lock duration (KIP-1222, ShareFetch/ShareAcknowledge v2). */
  RENEW = 4,
}

/** A batch as read from the log: its bounds from the header, nothing decompressed. */
export interface LogBatchBounds {
  readonly baseOffset: bigint;
  readonly lastOffset: bigint;
  /** Transaction markers: never delivered, their offsets are gaps. */
  readonly isControl: boolean;
  readonly isTransactional: boolean;
  readonly producerId: bigint;
}

/** An aborted transaction of the range read (read_committed): its producer's records from firstOffset are skipped. */
export interface AbortedTransaction {
  readonly producerId: bigint;
  readonly firstOffset: bigint;
}

/** What ShareFetch answers per range acquired (its AcquiredRecords). */
export interface AcquiredRecords {
  readonly firstOffset: bigint;
  readonly lastOffset: bigint;
  readonly deliveryCount: number;
}

/** One acknowledgement range: one type for the whole range, or one per offset. */
export interface AcknowledgementBatch {
  readonly firstOffset: bigint;
  readonly lastOffset: bigint;
  readonly acknowledgeTypes: readonly AcknowledgeType[];
}

/** Why records were archived: the dead-letter queue's __dlq.errors.message says it. */
export type ArchiveCause = 'rejected' | 'delivery-count-exceeded';

/** Records archived by a rejection or the delivery count limit (what the dead-letter queue takes). */
export interface ArchivedRecords {
  readonly key: SharePartitionKey;
  readonly topicName: string;
  readonly firstOffset: bigint;
  readonly lastOffset: bigint;
  readonly deliveryCount: number;
  readonly cause: ArchiveCause;
}

/**
 * Told of every archive for a cause; the dead-letter queue writer is one (it must not block the
 * share-partition). When the group has a dead-letter queue (ShareGroupSettings.deadLetterQueue),
 * the records stay ARCHIVING (stored so, the start offset waits for them, redone after a restart)
 * until the promise it returns settles (Kafka 4.4's ARCHIVING); returning none archives them at once.
 */
export type ArchiveListener = (records: ArchivedRecords) => void | Promise<void>;

export interface SharePartition {
  readonly key: SharePartitionKey;
  readonly topicName: string;
  /**
   * Reads the durable state (once; later calls share the first, a failed one is tried again): 0 once
   * loaded, else the code the fetch path answers, as Kafka maps the share coordinator's
   * (COORDINATOR_NOT_AVAILABLE for NOT_COORDINATOR and COORDINATOR_LOAD_IN_PROGRESS: retriable;
   * NOT_LEADER_OR_FOLLOWER for FENCED_STATE_EPOCH/FENCED_LEADER_EPOCH...). Not initialized yet: it
   * starts where share.auto.offset.reset says (and initializes a share-partition the coordinator never saw).
   */
  load(): Promise<number>;
  /** Where the next log read for this share-partition starts; null when nothing can be acquired now. */
  nextFetchOffset(): bigint | null;
  /**
   * Acquires for memberId, among the records of `batches` (read from nextFetchOffset() on, in
   * order), up to maxRecords that are available, each for the group's record lock duration. In
   * read_committed, records of `aborted` transactions are archived, never acquired; control batches
   * always are. `fetchOffset`: the nextFetchOffset() the log was read from; available records
   * between it and the first batch returned are gone from the log (compaction) and are archived.
   * maxRecords may be exceeded to the end of a batch (ShareAcquireMode batch_optimized, Kafka's
   * default), never with `recordLimit` (ShareAcquireMode record_limit: batches are split).
   */
  acquire(memberId: string, batches: readonly LogBatchBounds[], maxRecords: number,
    aborted?: readonly AbortedTransaction[], fetchOffset?: bigint, recordLimit?: boolean): AcquiredRecords[];
  /**
   * Applies memberId's acknowledgements (all or none: a range it does not hold fails the whole
   * call with INVALID_RECORD_STATE, a malformed one with INVALID_REQUEST); resolves with the error
   * code once the change is persisted. NOT_LEADER_OR_FOLLOWER: the share coordinator fenced this
   * share-partition (it is closed: make a new one, which reads the state again).
   */
  acknowledge(memberId: string, batches: readonly AcknowledgementBatch[]): Promise<number>;
  /** Makes every record memberId holds available again (its share session ended, its connection closed). */
  releaseAcquiredRecords(memberId: string): Promise<number>;
  /**
   * The partition's log start offset, as each fetch sees it: when it passed the start offset
   * (retention, DeleteRecords), the start offset follows and the records below it are archived.
   */
  logStartOffsetChanged(logStartOffset: bigint): void;
  /** Called whenever records may have become acquirable (released, lock expired, start moved, loaded). */
  onAvailable(listener: () => void): void;
  /** The share-partition start offset (SPSO) and the end of its in-flight records (SPEO). */
  startOffset(): bigint;
  endOffset(): bigint;
  /** Stops the lock timers: leadership moved, the group's state was deleted. */
  close(): void;
}
