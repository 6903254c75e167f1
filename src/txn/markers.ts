// Writing transaction markers (COMMIT / ABORT control batches) into the partitions of a transaction,
// as Kafka's TransactionMarkerChannelManager sends WriteTxnMarkers to each partition's leader:
// - TxnMarkerChannel: one try at writing a marker into some partitions, an error code each. The local
//   channel (here) appends to partitions this broker leads, for the coordinator and for the
//   WriteTxnMarkers handler; the remote one (src/net/txn-marker-channel.ts, wired by the broker) sends
//   WriteTxnMarkers to the other leaders.
// - TxnMarkerRouter: the coordinator's marker writer. It sends each partition to its leader's channel
//   and decides what to try again, with Kafka's TransactionMarkerRequestCompletionHandler rules.
// A marker in a partition of __consumer_offsets also ends the transaction's pending offsets in the
// group coordinator, once the marker is in the log (Kafka: GroupCoordinator.onTransactionCompleted).
import type { Logger } from 'pino';
import type { Controller } from '../cluster/controller';
import { GROUP_METADATA_TOPIC_NAME } from '../cluster/topic-names';
import type { GroupCoordinator } from '../group';
import { ErrorCode } from '../common/errors';
import { StorageError } from '../storage';
import type { ReplicaManager, TxnMarker } from '../replica/replica-manager';
import type { TxnMarkerRequest, TxnMarkerWriter } from './coordinator';
import type { TopicPartition } from './transaction-metadata';

export interface TxnMarkerChannel {
  /** One try at writing the marker into each partition: an error code per partition, in their order. */
  writeMarkers(marker: TxnMarker, partitions: readonly TopicPartition[]): Promise<number[]>;
}

/** What the local channel reads and writes: the broker provides all of it. */
export interface LocalTxnMarkerServices {
  readonly nodeId: number;
  readonly controller: Pick<Controller, 'topic'>;
  readonly replicas: ReplicaManager;
  readonly groups: GroupCoordinator;
}

/** Appends markers to partitions this broker leads (Kafka: ReplicaManager.appendRecords of the markers). */
export class LocalTxnMarkerChannel implements TxnMarkerChannel {
  constructor(private readonly s: LocalTxnMarkerServices) {}

  writeMarkers(marker: TxnMarker, partitions: readonly TopicPartition[]): Promise<number[]> {
    return Promise.all(partitions.map((tp) => this.writeMarker(tp, marker)));
  }

  /** Appends the marker to one partition and waits until it is in the log; resolves to the partition's error code. */
  async writeMarker(tp: TopicPartition, marker: TxnMarker): Promise<number> {
    const record = this.s.controller.topic(tp.topic)?.partitions[tp.partition];
    if (record && record.leader !== this.s.nodeId) return ErrorCode.NOT_LEADER_OR_FOLLOWER;
    const partition = this.s.replicas.partition(tp.topic, tp.partition);
    if (!record || !partition) return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
    const appended = await this.s.replicas.appendTxnMarker(partition, marker, Date.now());
    if (appended.errorCode !== ErrorCode.NONE) return appended.errorCode;
    try {
      await appended.done;
    } catch (e) {
      return e instanceof StorageError ? e.errorCode : ErrorCode.KAFKA_STORAGE_ERROR;
    }
    if (tp.topic === GROUP_METADATA_TOPIC_NAME) this.s.groups.onTransactionCompleted(marker.producerId, tp.partition, marker.commit);
    return ErrorCode.NONE;
  }
}

/**
 * The coordinator's marker writer: partitions this broker leads go to the local channel, the others
 * to the remote one (none for a single broker, which leads them all). A partition the metadata no
 * longer has (its topic deleted) is dropped, as Kafka's channel manager drops it.
 */
export class TxnMarkerRouter implements TxnMarkerWriter {
  constructor(
    private readonly nodeId: number,
    private readonly metadata: Pick<Controller, 'topic'>,
    private readonly local: TxnMarkerChannel,
    private readonly remote: TxnMarkerChannel | undefined,
    private readonly log?: Logger,
  ) {}

  async write(m: TxnMarkerRequest): Promise<TopicPartition[]> {
    const marker: TxnMarker = {
      producerId: m.producerId, producerEpoch: m.producerEpoch, coordinatorEpoch: m.coordinatorEpoch, commit: m.commit,
      transactionVersion: m.transactionVersion,
    };
    const local: TopicPartition[] = [];
    const remote: TopicPartition[] = [];
    const retry: TopicPartition[] = [];
    for (const tp of m.partitions) {
      const leader = this.metadata.topic(tp.topic)?.partitions[tp.partition]?.leader;
      if (leader === undefined) {
        this.log?.info({ ...tp, producerId: m.producerId }, 'skipping the transaction marker of a partition that no longer exists');
      } else if (leader === this.nodeId) {
        local.push(tp);
      } else if (leader >= 0 && this.remote) {
        remote.push(tp);
      } else {
        retry.push(tp); // no leader now: the next round may find one
      }
    }
    const [localCodes, remoteCodes] = await Promise.all([
      local.length > 0 ? this.local.writeMarkers(marker, local) : [],
      remote.length > 0 ? this.remote!.writeMarkers(marker, remote) : [],
    ]);
    const results: [TopicPartition, number][] = [
      ...local.map((tp, i): [TopicPartition, number] => [tp, localCodes[i]]),
      ...remote.map((tp, i): [TopicPartition, number] => [tp, remoteCodes[i]]),
    ];
    for (const [tp, errorCode] of results) if (this.shouldRetry(m, tp, errorCode)) retry.push(tp);
    return retry;
  }

  /** Kafka's TransactionMarkerRequestCompletionHandler, per partition. */
  private shouldRetry(m: TxnMarkerRequest, tp: TopicPartition, errorCode: number): boolean {
    switch (errorCode) {
      case ErrorCode.NONE:
        return false;
      case ErrorCode.INVALID_PRODUCER_EPOCH:
      case ErrorCode.TRANSACTION_COORDINATOR_FENCED:
        // A newer epoch or coordinator has written to the partition since: this marker is stale.
        this.log?.error({ ...tp, producerId: m.producerId, errorCode }, 'transaction marker refused as stale; not retrying');
        return false;
      case ErrorCode.UNSUPPORTED_FOR_MESSAGE_FORMAT:
      case ErrorCode.UNSUPPORTED_VERSION:
        // The producer could not have written to it either: nothing to mark.
        this.log?.error({ ...tp, producerId: m.producerId, errorCode }, 'the partition leader cannot take transaction markers; skipping it');
        return false;
      default:
        // NOT_LEADER_OR_FOLLOWER, UNKNOWN_TOPIC_OR_PARTITION, NOT_ENOUGH_REPLICAS(_AFTER_APPEND),
        // REQUEST_TIMED_OUT, a lost connection...: the leader or the metadata may change.
        this.log?.warn({ ...tp, producerId: m.producerId, errorCode }, 'writing a transaction marker failed; will retry');
        return true;
    }
  }
}
