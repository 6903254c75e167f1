// What the replica layer needs to replicate partitions in a cluster (Kafka's ReplicaManager,
// becomeLeaderOrFollower side): the role this broker has for each of its partitions, the follower
// fetchers it drives, and the produce requests with acks=all waiting for the in-sync replicas.
// A single broker has none of this: it leads every partition, alone, and its high watermark is what
// it has written.
//
// - Leader: a PartitionReplicas (partition-replicas.ts) tracks the followers' fetches, the ISR and
//   the high watermark, which it sets on the log; ISR changes go to the controller's store through
//   the injected alterPartition.
// - Follower: the fetchers (replica-fetcher-manager.ts, injected as FollowerFetchers) fetch from the leader
//   and append as-is; the high watermark comes with the leader's answers.
// - Throttling (replication-quota.ts): the leader holds back throttled partitions from followers
//   out of the ISR while its quota is exceeded; the fetchers leave them out of their requests while
//   the follower quota is.
// - acks=all: a DelayedProduce waits in the produce purgatory until the high watermark passes the
//   append (or the ISR shrank below min.insync.replicas), the request times out, or the partition
//   stops being led here.
import { ErrorCode } from '../common/errors';
import { DelayedOperation } from './delayed/purgatory';
import type { AcksAllResult, AlterPartitionResult, PartitionReplicas, PartitionState } from './partition-replicas';
import type { ReplicaFetcherManager } from './replica-fetcher-manager';
import type { ReplicationQuotas } from './replication-quota';

/** The follower fetchers as the replica manager drives them (replica-fetcher-manager.ts; a fake in tests). */
export type FollowerFetchers = Pick<ReplicaFetcherManager, 'addPartitions' | 'removePartitions' | 'close'>;

export interface ReplicationOptions {
  brokerId: number;
  /** Kafka's AlterPartition: proposes an ISR for a partition this broker leads. */
  alterPartition(topic: string, partition: number, proposal: { leaderEpoch: number; partitionEpoch: number; isr: number[] }): Promise<AlterPartitionResult>;
  fetchers: FollowerFetchers;
  /** replica.lag.time.max.ms */
  replicaLagTimeMaxMs: number;
  /**
   * The replication throttles (replication-quota.ts): the replica manager keeps their throttled
   * partitions in line with the topic configs and applies the leader's; the fetchers share the
   * follower's. None: nothing is throttled.
   */
  quotas?: ReplicationQuotas;
}

/** This broker's role for one of its partitions in a cluster. */
export type PartitionRole =
  | { kind: 'leader'; leaderEpoch: number; replicas: PartitionReplicas }
  | { kind: 'follower'; leaderEpoch: number; leader: number };

/** The controller's state of a partition as the replica layer applies it. */
export interface PartitionAssignment extends PartitionState {
  /** The assigned replicas, preferred leader first. */
  replicas: readonly number[];
}

/**
 * A produce with acks=all waiting for the in-sync replicas (Kafka's DelayedProduce): complete once
 * `result()` is no longer pending; at its timeout, REQUEST_TIMED_OUT.
 */
export class DelayedProduce extends DelayedOperation {
  constructor(
    delayMs: number,
    private readonly result: () => AcksAllResult,
    private readonly done: (errorCode: number) => void,
  ) {
    super(delayMs);
  }

  private answer: number = ErrorCode.REQUEST_TIMED_OUT;

  tryComplete(): boolean {
    const result = this.result();
    if (result === 'pending') return false;
    this.answer = result;
    return this.forceComplete();
  }

  onComplete(): void {
    this.done(this.answer);
  }

  onExpiration(): void {}
}
