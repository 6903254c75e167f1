// The Persister the share-partitions' leaders use (Kafka's DefaultStatePersister): each call goes to
// the share coordinator of its key, the leader of the key's __share_group_state partition in the
// metadata: this broker's coordinator directly, another broker's over the RPCs 83-87 (`remote`, the
// inter-broker client of src/net/share-state-rpc.ts; a single broker has none and is the leader of
// every partition).
// - The first call creates __share_group_state if it does not exist (Kafka's persister finds its
//   coordinator with FindCoordinator, which creates the topic).
// - NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE and lost or timed-out
//   requests are retried against the coordinator as the metadata names it then, with Kafka's backoff
//   (PersisterStateManager: 1 s doubling to 30 s, 20% jitter, 5 attempts); the last error is answered.
// - A read of a key never initialized, which the coordinator refuses (INVALID_REQUEST "Read operation
//   on uninitialized share partition not allowed.", as Kafka's), answers UNKNOWN_TOPIC_OR_PARTITION
//   here: what a share-partition takes for "the coordinator never saw it" (src/share/in-flight-records.ts:
//   it starts where share.auto.offset.reset says and initializes it, as Kafka's group coordinator
//   would have). A key initialized at start offset -1 reads as such, without error.
import type { Logger } from 'pino';
import type { Controller } from '../cluster/controller';
import { ErrorCode } from '../common/errors';
import { READ_UNINITIALIZED_SHARE_PARTITION, type ShareCoordinator, type StateChange } from './coordinator';
import type { Persister, PersisterError, ReadResult, SharePartitionKey, StateSummary } from './persister';
import { SHARE_STATE_TOPIC } from './share-state-log';

/** The RPCs 83-87 to another broker's share coordinator, one key each; transport failures come back as NETWORK_EXCEPTION. */
export interface RemoteShareState {
  read(nodeId: number, key: SharePartitionKey, leaderEpoch: number): Promise<ReadResult>;
  write(nodeId: number, key: SharePartitionKey, change: StateChange): Promise<PersisterError>;
  initialize(nodeId: number, key: SharePartitionKey, stateEpoch: number, startOffset: bigint): Promise<PersisterError>;
  delete(nodeId: number, key: SharePartitionKey): Promise<PersisterError>;
  readSummary(nodeId: number, key: SharePartitionKey, leaderEpoch: number): Promise<StateSummary>;
}

export interface PersisterRetry {
  attempts: number;
  backoffMs: number;
  maxBackoffMs: number;
}

/** PersisterStateManager's REQUEST_BACKOFF_MS, REQUEST_BACKOFF_MAX_MS and MAX_FIND_COORD_ATTEMPTS. */
export const KAFKA_PERSISTER_RETRY: PersisterRetry = { attempts: 5, backoffMs: 1000, maxBackoffMs: 30_000 };

const RETRIABLE = new Set<number>([
  ErrorCode.NOT_COORDINATOR, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.COORDINATOR_NOT_AVAILABLE,
  ErrorCode.NETWORK_EXCEPTION, ErrorCode.REQUEST_TIMED_OUT,
]);

const asIs = (e: PersisterError): PersisterError => e;

export class ShareStatePersister implements Persister {
  private closed = false;

  constructor(
    private readonly coordinator: ShareCoordinator,
    private readonly nodeId: number,
    private readonly metadata: Pick<Controller, 'topic'>,
    /** Creates __share_group_state (and on a single broker loads it); never rejects. */
    private readonly ensureTopic: () => Promise<void>,
    private readonly remote?: RemoteShareState,
    private readonly retry: PersisterRetry = KAFKA_PERSISTER_RETRY,
    private readonly log?: Logger,
  ) {}

  async read(key: SharePartitionKey, leaderEpoch: number): Promise<ReadResult> {
    const result = await this.call(key, () => this.coordinator.read(key, leaderEpoch), (node, r) => r.read(node, key, leaderEpoch), asIs);
    if (result.errorCode === ErrorCode.INVALID_REQUEST && 'errorMessage' in result && result.errorMessage === READ_UNINITIALIZED_SHARE_PARTITION) {
      return { errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: READ_UNINITIALIZED_SHARE_PARTITION };
    }
    return result;
  }

  write(key: SharePartitionKey, change: StateChange): Promise<PersisterError> {
    return this.call(key, () => this.coordinator.write(key, change), (node, r) => r.write(node, key, change), asIs);
  }

  initialize(key: SharePartitionKey, stateEpoch: number, startOffset: bigint): Promise<PersisterError> {
    return this.call(key, () => this.coordinator.initialize(key, stateEpoch, startOffset), (node, r) => r.initialize(node, key, stateEpoch, startOffset), asIs);
  }

  delete(key: SharePartitionKey): Promise<PersisterError> {
    return this.call(key, () => this.coordinator.delete(key), (node, r) => r.delete(node, key), asIs);
  }

  readSummary(key: SharePartitionKey, leaderEpoch: number): Promise<StateSummary> {
    return this.call(key, () => this.coordinator.readSummary(key, leaderEpoch), (node, r) => r.readSummary(node, key, leaderEpoch),
      (e) => ({ ...e, stateEpoch: 0, leaderEpoch: 0, startOffset: -1n, deliveryCompleteCount: -1 }));
  }

  /** Stops retrying: calls in flight answer their last error. */
  close(): void {
    this.closed = true;
  }

  private async call<T extends { readonly errorCode: number }>(key: SharePartitionKey, local: () => Promise<T>,
    remote: (nodeId: number, channel: RemoteShareState) => Promise<T>, failed: (e: PersisterError) => T): Promise<T> {
    let backoff = this.retry.backoffMs;
    for (let attempt = 1; ; attempt++) {
      if (!this.metadata.topic(SHARE_STATE_TOPIC)) await this.ensureTopic();
      const topic = this.metadata.topic(SHARE_STATE_TOPIC);
      const leader = topic?.partitions[this.coordinator.partitionFor(key)]?.leader ?? -1;
      let result: T;
      if (!this.remote || leader === this.nodeId) result = await local();
      else if (leader < 0) result = failed({ errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE, errorMessage: null });
      else result = await remote(leader, this.remote);
      if (!RETRIABLE.has(result.errorCode) || attempt >= this.retry.attempts || this.closed) return result;
      this.log?.debug({ key, errorCode: result.errorCode, attempt }, 'share coordinator not reachable yet; retrying');
      const jitter = 1 + (Math.random() * 2 - 1) * 0.2;
      await new Promise((resolve) => setTimeout(resolve, backoff * jitter).unref());
      backoff = Math.min(backoff * 2, this.retry.maxBackoffMs);
    }
  }
}
