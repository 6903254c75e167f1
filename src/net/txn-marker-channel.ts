// The remote transaction marker channel (Kafka's TransactionMarkerChannelManager): the transaction
// coordinator's markers for partitions led by other brokers, sent as WriteTxnMarkers to each leader.
// - The leader and its endpoint come from the metadata at each try (controller.topic(t).partitions[p]
//   .leader, controller.brokers()); no leader, or one not registered, is LEADER_NOT_AVAILABLE.
// - One BrokerClient per destination broker (BrokerConnections).
// - Markers queued for a broker in the same turn of the event loop go in one request (Kafka drains
//   its per-broker queue into one WriteTxnMarkers request the same way).
// - v2 carries the transaction's version (a peer at v1 is sent none: it checks the epoch as before 2).
// - One try only: a lost connection is NETWORK_EXCEPTION, no answer in time REQUEST_TIMED_OUT, for
//   each of that request's partitions; what to retry is the caller's decision (TxnMarkerRouter).
import type { Logger } from 'pino';
import type { BrokerEndpoint, Controller } from '../cluster/controller';
import { ErrorCode } from '../common/errors';
import { ApiKey } from '../protocol/generated';
import type { WriteTxnMarkersRequestWritableTxnMarker } from '../protocol/generated/WriteTxnMarkersRequest';
import type { WriteTxnMarkersResponse } from '../protocol/generated/WriteTxnMarkersResponse';
import { UnsupportedVersionError } from '../protocol/primitives';
import type { TxnMarker } from '../replica/replica-manager';
import type { TxnMarkerChannel } from '../txn';
import type { TopicPartition } from '../txn/transaction-metadata';
import { BrokerConnectionError, RequestTimeoutError } from './broker-client';
import { BrokerConnections, type BrokerConnectionsOptions } from './broker-connections';

export type RemoteTxnMarkerChannelOptions = BrokerConnectionsOptions;

/** A marker waiting for the next request to its partitions' leader. */
interface QueuedMarker {
  readonly marker: TxnMarker;
  readonly partitions: readonly TopicPartition[];
  readonly done: (errorCodes: number[]) => void;
}

/** A broker we send markers to, at its latest endpoint. */
interface Destination {
  endpoint: BrokerEndpoint;
  queue: QueuedMarker[];
}

const endpointKey = (b: BrokerEndpoint) => `${b.host}:${b.port}`;

export class RemoteTxnMarkerChannel implements TxnMarkerChannel {
  private readonly destinations = new Map<number, Destination>();
  private readonly connections: BrokerConnections;

  constructor(
    private readonly metadata: Pick<Controller, 'topic' | 'brokers'>,
    opts: RemoteTxnMarkerChannelOptions,
    private readonly log?: Logger,
  ) {
    this.connections = new BrokerConnections(opts);
  }

  async writeMarkers(marker: TxnMarker, partitions: readonly TopicPartition[]): Promise<number[]> {
    const errorCodes = partitions.map((): number => ErrorCode.LEADER_NOT_AVAILABLE);
    const brokers = new Map(this.metadata.brokers().map((b) => [b.nodeId, b]));
    const byLeader = new Map<number, number[]>(); // leader -> indexes into partitions
    partitions.forEach((tp, i) => {
      const record = this.metadata.topic(tp.topic)?.partitions[tp.partition];
      if (!record) errorCodes[i] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
      else if (brokers.has(record.leader)) byLeader.set(record.leader, [...byLeader.get(record.leader) ?? [], i]);
    });
    await Promise.all([...byLeader].map(async ([leader, indexes]) => {
      const answered = await this.enqueue(brokers.get(leader)!, marker, indexes.map((i) => partitions[i]));
      indexes.forEach((i, j) => (errorCodes[i] = answered[j]));
    }));
    return errorCodes;
  }

  /** Closes every connection; later markers fail at once. */
  close(): void {
    this.connections.close('the marker channel closed');
    this.destinations.clear();
  }

  private enqueue(endpoint: BrokerEndpoint, marker: TxnMarker, partitions: readonly TopicPartition[]): Promise<number[]> {
    if (this.connections.isClosed) return Promise.resolve(partitions.map(() => ErrorCode.NETWORK_EXCEPTION));
    let dest = this.destinations.get(endpoint.nodeId);
    if (!dest) this.destinations.set(endpoint.nodeId, (dest = { endpoint, queue: [] }));
    dest.endpoint = endpoint;
    const queued = dest;
    if (queued.queue.length === 0) setImmediate(() => void this.flush(queued));
    return new Promise((done) => queued.queue.push({ marker, partitions, done }));
  }

  /** Sends every marker queued for the destination in one WriteTxnMarkers request. */
  private async flush(dest: Destination): Promise<void> {
    const batch = dest.queue.splice(0);
    let response: WriteTxnMarkersResponse;
    try {
      const client = await this.connections.get(dest.endpoint);
      response = await client.request(ApiKey.WriteTxnMarkers, { markers: batch.map((q) => markerEntry(q.marker, q.partitions)) });
    } catch (err) {
      const errorCode = requestError(err);
      this.log?.warn({ broker: dest.endpoint.nodeId, peer: endpointKey(dest.endpoint), err: (err as Error).message },
        'sending transaction markers failed');
      for (const q of batch) q.done(q.partitions.map(() => errorCode));
      return;
    }
    batch.forEach((q, i) => {
      // Answered in the request's order; a partition missing from the answer is retried.
      const topics = response.markers[i]?.topics ?? [];
      q.done(q.partitions.map((tp) => topics.find((t) => t.name === tp.topic)?.partitions
        .find((p) => p.partitionIndex === tp.partition)?.errorCode ?? ErrorCode.UNKNOWN_SERVER_ERROR));
    });
  }
}

/** One marker of a WriteTxnMarkers request, its partitions grouped by topic. */
function markerEntry(marker: TxnMarker, partitions: readonly TopicPartition[]): WriteTxnMarkersRequestWritableTxnMarker {
  const byTopic = new Map<string, number[]>();
  for (const tp of partitions) byTopic.set(tp.topic, [...byTopic.get(tp.topic) ?? [], tp.partition]);
  return {
    producerId: BigInt(marker.producerId), producerEpoch: marker.producerEpoch, transactionResult: marker.commit,
    coordinatorEpoch: marker.coordinatorEpoch, transactionVersion: marker.transactionVersion ?? 0,
    topics: [...byTopic].map(([name, partitionIndexes]) => ({ name, partitionIndexes })),
  };
}

/** The error every partition of a request that got no answer takes. */
function requestError(err: unknown): number {
  if (err instanceof RequestTimeoutError) return ErrorCode.REQUEST_TIMED_OUT;
  if (err instanceof BrokerConnectionError) return ErrorCode.NETWORK_EXCEPTION;
  if (err instanceof UnsupportedVersionError) return ErrorCode.UNSUPPORTED_VERSION;
  return ErrorCode.UNKNOWN_SERVER_ERROR;
}
