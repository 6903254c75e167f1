// The share groups' dead-letter queue records for a DLQ partition another broker leads: a Produce
// request to that leader, as Kafka's ShareGroupDLQStateManager sends it (acks=all, a 30 s timeout,
// one uncompressed batch of records without a producer id). A lost connection or no answer in time
// is NETWORK_EXCEPTION, a broker not registered LEADER_NOT_AVAILABLE: the writer retries those.
import type { Logger } from 'pino';
import type { Controller } from '../cluster/controller';
import type { TopicRecord } from '../cluster/metadata-store';
import { ErrorCode } from '../common/errors';
import { ApiKey } from '../protocol/generated';
import { buildBatchSync, type BuildRecord } from '../records';
import type { DeadLetterWriteResult, RemoteDeadLetterProducer } from '../share/dead-letter-queue';
import { BrokerConnections, type BrokerConnectionsOptions } from './broker-connections';

/** Kafka's ProduceRequestData of the DLQ writes: acks all, timeoutMs 30000. */
const ACKS_ALL = -1;
const PRODUCE_TIMEOUT_MS = 30_000;

export class RemoteDeadLetterProduce implements RemoteDeadLetterProducer {
  private readonly connections: BrokerConnections;

  constructor(
    private readonly metadata: Pick<Controller, 'brokers'>,
    opts: BrokerConnectionsOptions,
    private readonly log?: Logger,
  ) {
    this.connections = new BrokerConnections(opts);
  }

  async produce(leaderId: number, topic: Pick<TopicRecord, 'name' | 'id'>, partition: number, records: BuildRecord[]): Promise<DeadLetterWriteResult> {
    if (this.connections.isClosed) return { errorCode: ErrorCode.NETWORK_EXCEPTION, errorMessage: 'the DLQ producer is closed' };
    const endpoint = this.metadata.brokers().find((b) => b.nodeId === leaderId);
    if (!endpoint) return { errorCode: ErrorCode.LEADER_NOT_AVAILABLE, errorMessage: null };
    const nowMs = Date.now();
    try {
      const client = await this.connections.get(endpoint);
      const res = await client.request(ApiKey.Produce, {
        transactionalId: null, acks: ACKS_ALL, timeoutMs: PRODUCE_TIMEOUT_MS,
        topicData: [{ name: topic.name, topicId: topic.id, partitionData: [{ index: partition, records: buildBatchSync({ records, nowMs }) }] }],
      });
      const answer = res.responses.flatMap((t) => t.partitionResponses).find((p) => p.index === partition);
      if (!answer) return { errorCode: ErrorCode.UNKNOWN_SERVER_ERROR, errorMessage: 'no answer for the DLQ partition' };
      return { errorCode: answer.errorCode, errorMessage: answer.errorMessage ?? null };
    } catch (err) {
      this.log?.warn({ leader: leaderId, topic: topic.name, partition, err: (err as Error).message }, 'Produce to a DLQ partition leader failed');
      return { errorCode: ErrorCode.NETWORK_EXCEPTION, errorMessage: (err as Error).message };
    }
  }

  close(): void {
    this.connections.close('the DLQ producer closed');
  }
}
