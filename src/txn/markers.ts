// Writing transaction markers (COMMIT / ABORT control batches) into the partitions of a transaction:
// what Kafka's coordinator sends as WriteTxnMarkers to each partition's leader. Here every leader is
// this broker, so the coordinator and the WriteTxnMarkers handler both come through writeTxnMarker.
// A marker in a partition of __consumer_offsets also ends the transaction's pending offsets in the
// group coordinator, once the marker is in the log (Kafka: GroupCoordinator.onTransactionCompleted).
import type { Logger } from 'pino';
import { GROUP_METADATA_TOPIC_NAME } from '../cluster/topic-names';
import type { GroupCoordinator } from '../group';
import { ErrorCode } from '../common/errors';
import { StorageError } from '../storage';
import type { ReplicaManager, TxnMarker } from '../replica/replica-manager';
import type { TxnMarkerRequest, TxnMarkerWriter } from './coordinator';
import type { TopicPartition } from './transaction-metadata';

/** Appends the marker to one partition and waits until it is in the log; resolves to the partition's error code. */
export async function writeTxnMarker(replicas: ReplicaManager, groups: GroupCoordinator, tp: TopicPartition, marker: TxnMarker): Promise<number> {
  const partition = replicas.partition(tp.topic, tp.partition);
  if (!partition) return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
  const appended = await replicas.appendTxnMarker(partition, marker, Date.now());
  if (appended.errorCode !== ErrorCode.NONE) return appended.errorCode;
  try {
    await appended.done;
  } catch (e) {
    return e instanceof StorageError ? e.errorCode : ErrorCode.KAFKA_STORAGE_ERROR;
  }
  if (tp.topic === GROUP_METADATA_TOPIC_NAME) groups.onTransactionCompleted(marker.producerId, tp.partition, marker.commit);
  return ErrorCode.NONE;
}

/** The coordinator's marker writer: which failures to retry (Kafka's TransactionMarkerRequestCompletionHandler). */
export class LocalTxnMarkerWriter implements TxnMarkerWriter {
  constructor(private readonly replicas: ReplicaManager, private readonly groups: GroupCoordinator, private readonly log?: Logger) {}

  async write(m: TxnMarkerRequest): Promise<TopicPartition[]> {
    const marker: TxnMarker = { producerId: m.producerId, producerEpoch: m.producerEpoch, coordinatorEpoch: m.coordinatorEpoch, commit: m.commit };
    const results = await Promise.all(m.partitions.map((tp) => writeTxnMarker(this.replicas, this.groups, tp, marker)));
    const retry: TopicPartition[] = [];
    results.forEach((errorCode, i) => {
      const tp = m.partitions[i];
      switch (errorCode) {
        case ErrorCode.NONE:
          return;
        case ErrorCode.UNKNOWN_TOPIC_OR_PARTITION:
          // The topic was deleted: there is nothing left to mark.
          this.log?.info({ ...tp, producerId: m.producerId }, 'skipping the transaction marker of a partition that no longer exists');
          return;
        case ErrorCode.INVALID_PRODUCER_EPOCH:
        case ErrorCode.TRANSACTION_COORDINATOR_FENCED:
          // A newer epoch or coordinator has written to the partition since: this marker is stale.
          this.log?.error({ ...tp, producerId: m.producerId, errorCode }, 'transaction marker refused as stale; not retrying');
          return;
        default:
          this.log?.warn({ ...tp, producerId: m.producerId, errorCode }, 'writing a transaction marker failed; will retry');
          retry.push(tp);
      }
    });
    return retry;
  }
}
