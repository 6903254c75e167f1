// Partition end offsets for DescribeShareGroupOffsets' lag, asked of each partition's leader as
// Kafka's NetworkPartitionMetadataClient does (ListOffsets, LATEST, read_uncommitted: the high
// watermark): read here when this broker leads the partition, else sent to the leader.
// - No leader, or one not registered: LEADER_NOT_AVAILABLE; a topic or partition not in the
//   metadata: UNKNOWN_TOPIC_OR_PARTITION; a lost connection or no answer: NETWORK_EXCEPTION.
import type { Logger } from 'pino';
import type { Controller } from '../cluster/controller';
import { ErrorCode } from '../common/errors';
import { ApiKey } from '../protocol/generated';
import { LATEST_TIMESTAMP } from '../replica/offset-lookups';
import type { PartitionEndOffsets } from '../share/share-group-admin';
import { BrokerConnections, type BrokerConnectionsOptions } from './broker-connections';

const CONSUMER_REPLICA_ID = -1;
const READ_UNCOMMITTED = 0;

export class LeaderEndOffsets implements PartitionEndOffsets {
  private readonly connections: BrokerConnections;

  constructor(
    private readonly nodeId: number,
    private readonly metadata: Pick<Controller, 'topic' | 'brokers'>,
    private readonly local: PartitionEndOffsets,
    opts: BrokerConnectionsOptions,
    private readonly log?: Logger,
  ) {
    this.connections = new BrokerConnections(opts);
  }

  async latestOffset(topic: string, partition: number): Promise<{ errorCode: number; offset: bigint }> {
    const failed = (errorCode: number) => ({ errorCode, offset: -1n });
    const leader = this.metadata.topic(topic)?.partitions[partition]?.leader;
    if (leader === undefined) return failed(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    if (leader === this.nodeId) return this.local.latestOffset(topic, partition);
    const endpoint = this.metadata.brokers().find((b) => b.nodeId === leader);
    if (!endpoint || this.connections.isClosed) return failed(ErrorCode.LEADER_NOT_AVAILABLE);
    try {
      const client = await this.connections.get(endpoint);
      const res = await client.request(ApiKey.ListOffsets, {
        replicaId: CONSUMER_REPLICA_ID, isolationLevel: READ_UNCOMMITTED,
        topics: [{ name: topic, partitions: [{ partitionIndex: partition, currentLeaderEpoch: -1, timestamp: BigInt(LATEST_TIMESTAMP) }] }],
      });
      const answer = res.topics.find((t) => t.name === topic)?.partitions.find((p) => p.partitionIndex === partition);
      if (!answer) return failed(ErrorCode.UNKNOWN_SERVER_ERROR);
      return answer.errorCode === ErrorCode.NONE ? { errorCode: ErrorCode.NONE, offset: answer.offset ?? -1n } : failed(answer.errorCode);
    } catch (err) {
      this.log?.warn({ leader, topic, partition, err: (err as Error).message }, 'ListOffsets to a partition leader failed');
      return failed(ErrorCode.NETWORK_EXCEPTION);
    }
  }

  close(): void {
    this.connections.close('the end offsets client closed');
  }
}
