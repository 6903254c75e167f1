// The share coordinator of another broker, asked over the inter-broker client (Kafka's
// PersisterStateManager sends the same RPCs): ReadShareGroupState, WriteShareGroupState (v1),
// InitializeShareGroupState, DeleteShareGroupState and ReadShareGroupStateSummary (v1), one key per
// request. One try each: the persister (src/share-state/state-persister.ts) retries what is retriable.
// - A broker not registered is COORDINATOR_NOT_AVAILABLE; a lost connection or no answer in time
//   NETWORK_EXCEPTION; an answer without the key's result UNKNOWN_SERVER_ERROR.
import type { Logger } from 'pino';
import type { Controller } from '../cluster/controller';
import { ErrorCode } from '../common/errors';
import { ApiKey } from '../protocol/generated';
import type { RemoteShareState, StateChange } from '../share-state';
import type { PersisterError, ReadResult, SharePartitionKey, StateSummary } from '../share-state/persister';
import type { BrokerClient } from './broker-client';
import { BrokerConnections, type BrokerConnectionsOptions } from './broker-connections';

interface PartitionAnswer {
  partition: number;
  errorCode: number;
  errorMessage?: string | null;
}

export class RemoteShareStateChannel implements RemoteShareState {
  private readonly connections: BrokerConnections;

  constructor(
    private readonly metadata: Pick<Controller, 'brokers'>,
    opts: BrokerConnectionsOptions,
    private readonly log?: Logger,
  ) {
    this.connections = new BrokerConnections(opts);
  }

  async read(nodeId: number, key: SharePartitionKey, leaderEpoch: number): Promise<ReadResult> {
    const p = await this.ask(nodeId, key, (client) => client.request(ApiKey.ReadShareGroupState, {
      groupId: key.groupId, topics: [{ topicId: key.topicId, partitions: [{ partition: key.partition, leaderEpoch }] }],
    }));
    if ('failed' in p) return p.failed;
    if (p.errorCode !== ErrorCode.NONE) return { errorCode: p.errorCode, errorMessage: p.errorMessage ?? null };
    return {
      errorCode: ErrorCode.NONE, stateEpoch: p.stateEpoch, leaderEpoch, startOffset: p.startOffset, deliveryCompleteCount: -1,
      stateBatches: p.stateBatches.map((b) => ({ ...b })),
    };
  }

  async write(nodeId: number, key: SharePartitionKey, change: StateChange): Promise<PersisterError> {
    return asError(await this.ask(nodeId, key, (client) => client.request(ApiKey.WriteShareGroupState, {
      groupId: key.groupId,
      topics: [{
        topicId: key.topicId,
        partitions: [{
          partition: key.partition, stateEpoch: change.stateEpoch, leaderEpoch: change.leaderEpoch, startOffset: change.startOffset,
          deliveryCompleteCount: change.deliveryCompleteCount, stateBatches: change.stateBatches.map((b) => ({ ...b })),
        }],
      }],
    })));
  }

  async initialize(nodeId: number, key: SharePartitionKey, stateEpoch: number, startOffset: bigint): Promise<PersisterError> {
    return asError(await this.ask(nodeId, key, (client) => client.request(ApiKey.InitializeShareGroupState, {
      groupId: key.groupId, topics: [{ topicId: key.topicId, partitions: [{ partition: key.partition, stateEpoch, startOffset }] }],
    })));
  }

  async delete(nodeId: number, key: SharePartitionKey): Promise<PersisterError> {
    return asError(await this.ask(nodeId, key, (client) => client.request(ApiKey.DeleteShareGroupState, {
      groupId: key.groupId, topics: [{ topicId: key.topicId, partitions: [{ partition: key.partition }] }],
    })));
  }

  async readSummary(nodeId: number, key: SharePartitionKey, leaderEpoch: number): Promise<StateSummary> {
    const p = await this.ask(nodeId, key, (client) => client.request(ApiKey.ReadShareGroupStateSummary, {
      groupId: key.groupId, topics: [{ topicId: key.topicId, partitions: [{ partition: key.partition, leaderEpoch }] }],
    }));
    if ('failed' in p) return { ...p.failed, stateEpoch: 0, leaderEpoch: 0, startOffset: -1n, deliveryCompleteCount: -1 };
    return {
      errorCode: p.errorCode, errorMessage: p.errorMessage ?? null, stateEpoch: p.stateEpoch, leaderEpoch: p.leaderEpoch,
      startOffset: p.startOffset, deliveryCompleteCount: p.deliveryCompleteCount ?? -1,
    };
  }

  close(): void {
    this.connections.close('the share state channel closed');
  }

  /** The key's partition result of one request to the broker, or the error that stands for it. */
  private async ask<P extends PartitionAnswer>(nodeId: number, key: SharePartitionKey,
    send: (client: BrokerClient) => Promise<{ results: { topicId: string; partitions: P[] }[] }>): Promise<P | { failed: PersisterError }> {
    const endpoint = this.connections.isClosed ? undefined : this.metadata.brokers().find((b) => b.nodeId === nodeId);
    if (!endpoint) return { failed: { errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE, errorMessage: null } };
    let res;
    try {
      res = await send(await this.connections.get(endpoint));
    } catch (err) {
      this.log?.warn({ coordinator: nodeId, err: (err as Error).message }, 'a request to a share coordinator failed');
      return { failed: { errorCode: ErrorCode.NETWORK_EXCEPTION, errorMessage: (err as Error).message } };
    }
    const p = res.results.find((t) => t.topicId === key.topicId)?.partitions.find((x) => x.partition === key.partition);
    return p ?? { failed: { errorCode: ErrorCode.UNKNOWN_SERVER_ERROR, errorMessage: 'the share coordinator did not answer for the key' } };
  }
}

function asError(p: PartitionAnswer | { failed: PersisterError }): PersisterError {
  return 'failed' in p ? p.failed : { errorCode: p.errorCode, errorMessage: p.errorMessage ?? null };
}
