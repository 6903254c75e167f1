// The partition adds of transaction version 2 writes whose transactional id another broker coordinates:
// AddPartitionsToTxn v4+ (one transaction, verifyOnly false) to that broker, as Kafka's
// AddPartitionsToTxnManager sends them with the ADD_PARTITION operation. One try: what to answer the
// writer is the txn layer's transactionalWriteError.
// - A lost connection or no answer in time is NETWORK_EXCEPTION (Kafka's wasDisconnected/wasTimedOut);
//   a broker not registered is COORDINATOR_NOT_AVAILABLE.
// - The answer's top-level error, else the first partition error of the transaction, else NONE.
import type { Logger } from 'pino';
import type { Controller } from '../cluster/controller';
import { ErrorCode } from '../common/errors';
import { ApiKey } from '../protocol/generated';
import type { RemotePartitionAdds } from '../txn';
import type { TopicPartition } from '../txn/transaction-metadata';
import { BrokerConnections, type BrokerConnectionsOptions } from './broker-connections';

export class RemoteAddPartitionsToTxn implements RemotePartitionAdds {
  private readonly connections: BrokerConnections;

  constructor(
    private readonly metadata: Pick<Controller, 'brokers'>,
    opts: BrokerConnectionsOptions,
    private readonly log?: Logger,
  ) {
    this.connections = new BrokerConnections(opts);
  }

  async add(coordinatorId: number, transactionalId: string, producerId: number, producerEpoch: number,
    partitions: readonly TopicPartition[]): Promise<number> {
    const endpoint = this.metadata.brokers().find((b) => b.nodeId === coordinatorId);
    if (!endpoint || this.connections.isClosed) return ErrorCode.COORDINATOR_NOT_AVAILABLE;
    const byTopic = new Map<string, number[]>();
    for (const tp of partitions) byTopic.set(tp.topic, [...byTopic.get(tp.topic) ?? [], tp.partition]);
    try {
      const client = await this.connections.get(endpoint);
      const res = await client.request(ApiKey.AddPartitionsToTxn, {
        transactions: [{
          transactionalId, producerId: BigInt(producerId), producerEpoch, verifyOnly: false,
          topics: [...byTopic].map(([name, ps]) => ({ name, partitions: ps })),
        }],
        v3AndBelowTransactionalId: '', v3AndBelowProducerId: 0n, v3AndBelowProducerEpoch: 0, v3AndBelowTopics: [],
      });
      if (res.errorCode) return res.errorCode;
      const result = res.resultsByTransaction.find((t) => t.transactionalId === transactionalId);
      const errors = (result?.topicResults ?? []).flatMap((t) => t.resultsByPartition.map((p) => p.partitionErrorCode));
      if (!result) return ErrorCode.UNKNOWN_SERVER_ERROR;
      return errors.find((e) => e !== ErrorCode.NONE) ?? ErrorCode.NONE;
    } catch (err) {
      this.log?.warn({ coordinator: coordinatorId, transactionalId, err: (err as Error).message }, 'AddPartitionsToTxn to the transaction coordinator failed');
      return ErrorCode.NETWORK_EXCEPTION;
    }
  }

  close(): void {
    this.connections.close('the partition adds closed');
  }
}
