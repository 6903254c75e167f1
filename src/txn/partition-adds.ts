// The partitions transaction version 2 producers write to, added to their transactions (Kafka's
// AddPartitionsToTxnManager with the ADD_PARTITION operation, KIP-890 part 2): a Produce v12+ batch or
// a TxnOffsetCommit v5+ whose producer has no transaction open on the partition yet has the
// transaction coordinator add it before the write.
// - Adds for one producer (transactional id, producer id and epoch) are batched: those asked in the same
//   turn of the event loop go as one, and while one is being written the next ones wait and then go as
//   one. Without it, a producer's pipelined requests would meet each other's pending write in the
//   coordinator (CONCURRENT_TRANSACTIONS) and be retried by the client.
// - The coordinator's answer is turned into the writer's error (transactionalWriteError).
import { ErrorCode } from '../common/errors';
import { transactionalWriteError } from './coordinator';
import { topicPartitionKey, type TopicPartition } from './transaction-metadata';

/** Adds partitions to a producer's transaction, as a version 2 client would: one error code for all of them. */
export type AddPartitions = (transactionalId: string, producerId: number, producerEpoch: number, partitions: TopicPartition[]) => Promise<number>;

interface PendingAdd {
  readonly partitions: Map<string, TopicPartition>;
  readonly waiters: ((errorCode: number) => void)[];
}

interface ProducerAdds {
  /** The add being written, if any. */
  inFlight: Promise<void> | undefined;
  /** The partitions asked for since, sent once the one in flight is done. */
  next: PendingAdd | undefined;
}

export class TxnPartitionAdds {
  private readonly producers = new Map<string, ProducerAdds>();

  constructor(private readonly addPartitions: AddPartitions) {}

  /** Adds the partition to the producer's transaction; resolves to NONE or the writer's error. */
  add(transactionalId: string, producerId: number, producerEpoch: number, tp: TopicPartition): Promise<number> {
    const key = `${producerId}:${producerEpoch}:${transactionalId}`;
    let producer = this.producers.get(key);
    if (!producer) this.producers.set(key, (producer = { inFlight: undefined, next: undefined }));
    const pending: PendingAdd = producer.next ??= { partitions: new Map(), waiters: [] };
    pending.partitions.set(topicPartitionKey(tp), tp);
    const answer = new Promise<number>((resolve) => pending.waiters.push(resolve));
    if (!producer.inFlight && pending.waiters.length === 1) this.sendNext(key, producer, transactionalId, producerId, producerEpoch);
    return answer;
  }

  /** Sends what is pending once this turn is over; then whatever was asked for meanwhile, until nothing is. */
  private sendNext(key: string, producer: ProducerAdds, transactionalId: string, producerId: number, producerEpoch: number): void {
    producer.inFlight = new Promise<void>((resolve) => setImmediate(resolve)).then(async () => {
      const pending = producer.next!;
      producer.next = undefined;
      let errorCode: number;
      try {
        errorCode = transactionalWriteError(await this.addPartitions(transactionalId, producerId, producerEpoch, [...pending.partitions.values()]));
      } catch {
        errorCode = ErrorCode.UNKNOWN_SERVER_ERROR;
      }
      for (const resolve of pending.waiters) resolve(errorCode);
    }).finally(() => {
      producer.inFlight = undefined;
      if (producer.next) this.sendNext(key, producer, transactionalId, producerId, producerEpoch);
      else this.producers.delete(key);
    });
  }
}
