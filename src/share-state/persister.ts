// What a share-partition's leader needs from the share coordinator (Kafka's Persister): its durable
// state, read when it takes the partition and written after every change. The share coordinator of
// the key answers, on this broker (a direct call) or another (the RPCs 83-87); the implementation
// hides which. Errors are Kafka's codes, as the RPCs carry them (NOT_COORDINATOR,
// COORDINATOR_LOAD_IN_PROGRESS, FENCED_STATE_EPOCH, FENCED_LEADER_EPOCH, UNKNOWN_TOPIC_OR_PARTITION...).

/** A record's state as the share coordinator stores it (ACQUIRED is never stored: it reads as AVAILABLE). */
export enum DeliveryState {
  AVAILABLE = 0,
  ACQUIRED = 1,
  ACKNOWLEDGED = 2,
  /** On its way to the group's dead-letter queue (Kafka 4.4, KIP-1191): redone after a restart, then ARCHIVED. */
  ARCHIVING = 3,
  ARCHIVED = 4,
}

/** A run of offsets in one state with one delivery count (Kafka's PersisterStateBatch). */
export interface StateBatch {
  readonly firstOffset: bigint;
  readonly lastOffset: bigint;
  readonly deliveryState: DeliveryState;
  readonly deliveryCount: number;
}

/** A share-partition: a share group's view of one topic partition. */
export interface SharePartitionKey {
  readonly groupId: string;
  /** The topic id as the generated codec and TopicRecord.id carry it: 32 lowercase hex chars (Kafka prints it base64url). */
  readonly topicId: string;
  readonly partition: number;
}

/** A share-partition's durable state: where it starts and the batches past the start that are not plain AVAILABLE. */
export interface ShareState {
  /** Bumped by InitializeShareGroupState (AlterShareGroupOffsets): a leader holding an older one is fenced. */
  readonly stateEpoch: number;
  readonly leaderEpoch: number;
  /** -1: not initialized (share.auto.offset.reset decides where it starts). */
  readonly startOffset: bigint;
  /** Offsets at or past startOffset whose delivery is complete (KIP-1226); -1 unknown. */
  readonly deliveryCompleteCount: number;
  readonly stateBatches: readonly StateBatch[];
}

export interface PersisterError {
  readonly errorCode: number;
  readonly errorMessage: string | null;
}

export type ReadResult = ({ readonly errorCode: 0 } & ShareState) | PersisterError;

export interface StateSummary {
  readonly errorCode: number;
  readonly errorMessage: string | null;
  readonly stateEpoch: number;
  readonly leaderEpoch: number;
  readonly startOffset: bigint;
  readonly deliveryCompleteCount: number;
}

export interface Persister {
  /** ReadShareGroupState: the leader of the partition at leaderEpoch takes the share-partition. */
  read(key: SharePartitionKey, leaderEpoch: number): Promise<ReadResult>;
  /**
   * WriteShareGroupState: the batches replace, offset by offset, what was stored for those offsets;
   * startOffset (if not -1) moves the start and drops everything below it.
   */
  write(key: SharePartitionKey, change: {
    stateEpoch: number; leaderEpoch: number; startOffset: bigint; deliveryCompleteCount: number; stateBatches: readonly StateBatch[];
  }): Promise<PersisterError>;
  /** InitializeShareGroupState: (re)starts the share-partition at startOffset with this state epoch, dropping its batches. */
  initialize(key: SharePartitionKey, stateEpoch: number, startOffset: bigint): Promise<PersisterError>;
  /** DeleteShareGroupState. */
  delete(key: SharePartitionKey): Promise<PersisterError>;
  /** ReadShareGroupStateSummary (DescribeShareGroupOffsets): the start offset without the batches. */
  readSummary(key: SharePartitionKey, leaderEpoch: number): Promise<StateSummary>;
}
