// The partition adds of transaction version 2 writes whose transactional id another broker coordinates:
// AddPartitionsToTxn v4+ (verifyOnly false) to that broker, as Kafka's AddPartitionsToTxnManager sends
// them with the ADD_PARTITION operation. One try: what to answer the writer is the txn layer's
// transactionalWriteError.
// - The adds for one coordinator asked in the same turn of the event loop go in one request, one
//   transaction each. Two for the same transactional id: as Kafka, the one with the lower epoch is
//   answered INVALID_PRODUCER_EPOCH (the earlier one NETWORK_EXCEPTION at the same epoch, a retry).
// - A lost connection or no answer in time is NETWORK_EXCEPTION (Kafka's wasDisconnected/wasTimedOut);
//   a broker not registered is COORDINATOR_NOT_AVAILABLE.
// - Per transaction: the answer's top-level error, else its first partition error, else NONE.
import type { Logger } from 'pino';
import type { Controller } from '../cluster/controller';
import { ErrorCode } from '../common/errors';
import { ApiKey } from '../protocol/generated';
import type { RemotePartitionAdds } from '../txn';
import type { TopicPartition } from '../txn/transaction-metadata';
import { BrokerConnections, type BrokerConnectionsOptions } from './broker-connections';

interface QueuedAdd {
  readonly transactionalId: string;
  readonly producerId: number;
  readonly producerEpoch: number;
  readonly partitions: readonly TopicPartition[];
  readonly done: (errorCode: number) => void;
}

export class RemoteAddPartitionsToTxn implements RemotePartitionAdds {
  private readonly connections: BrokerConnections;
  /** Per coordinator broker, the adds waiting for this turn's request, by transactional id. */
  private readonly queues = new Map<number, Map<string, QueuedAdd>>();

  constructor(
    private readonly metadata: Pick<Controller, 'brokers'>,
    opts: BrokerConnectionsOptions,
    private readonly log?: Logger,
  ) {
    this.connections = new BrokerConnections(opts);
  }

  add(coordinatorId: number, transactionalId: string, producerId: number, producerEpoch: number,
    partitions: readonly TopicPartition[]): Promise<number> {
    if (this.connections.isClosed) return Promise.resolve(ErrorCode.COORDINATOR_NOT_AVAILABLE);
    let queue = this.queues.get(coordinatorId);
    if (!queue) {
      this.queues.set(coordinatorId, (queue = new Map()));
      setImmediate(() => void this.flush(coordinatorId));
    }
    const waiting = queue;
    return new Promise((done) => {
      const earlier = waiting.get(transactionalId);
      if (earlier && earlier.producerEpoch > producerEpoch) {
        done(ErrorCode.INVALID_PRODUCER_EPOCH);
        return;
      }
      earlier?.done(earlier.producerEpoch < producerEpoch ? ErrorCode.INVALID_PRODUCER_EPOCH : ErrorCode.NETWORK_EXCEPTION);
      waiting.set(transactionalId, { transactionalId, producerId, producerEpoch, partitions, done });
    });
  }

  /** Sends the coordinator's queued adds in one request. */
  private async flush(coordinatorId: number): Promise<void> {
    const batch = [...this.queues.get(coordinatorId)?.values() ?? []];
    this.queues.delete(coordinatorId);
    const endpoint = this.metadata.brokers().find((b) => b.nodeId === coordinatorId);
    if (!endpoint) {
      for (const q of batch) q.done(ErrorCode.COORDINATOR_NOT_AVAILABLE);
      return;
    }
    try {
      const client = await this.connections.get(endpoint);
      const res = await client.request(ApiKey.AddPartitionsToTxn, {
        transactions: batch.map((q) => ({
          transactionalId: q.transactionalId, producerId: BigInt(q.producerId), producerEpoch: q.producerEpoch, verifyOnly: false,
          topics: byTopic(q.partitions),
        })),
        v3AndBelowTransactionalId: '', v3AndBelowProducerId: 0n, v3AndBelowProducerEpoch: 0, v3AndBelowTopics: [],
      });
      for (const q of batch) {
        const result = res.resultsByTransaction.find((t) => t.transactionalId === q.transactionalId);
        const errors = (result?.topicResults ?? []).flatMap((t) => t.resultsByPartition.map((p) => p.partitionErrorCode));
        q.done(res.errorCode || (result ? errors.find((e) => e !== ErrorCode.NONE) ?? ErrorCode.NONE : ErrorCode.UNKNOWN_SERVER_ERROR));
      }
    } catch (err) {
      this.log?.warn({ coordinator: coordinatorId, err: (err as Error).message }, 'AddPartitionsToTxn to a transaction coordinator failed');
      for (const q of batch) q.done(ErrorCode.NETWORK_EXCEPTION);
    }
  }

  close(): void {
    this.connections.close('the partition adds closed');
  }
}

function byTopic(partitions: readonly TopicPartition[]): { name: string; partitions: number[] }[] {
  const topics = new Map<string, number[]>();
  for (const tp of partitions) topics.set(tp.topic, [...topics.get(tp.topic) ?? [], tp.partition]);
  return [...topics].map(([name, ps]) => ({ name, partitions: ps }));
}
