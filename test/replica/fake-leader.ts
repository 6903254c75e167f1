// A leader for the replica fetcher's tests: a LeaderConnection answered from a real PartitionLog as
// Kafka's leader answers a replica (leader-epoch checks, divergingEpoch for Fetch v12+, out of range
// offsets, OffsetForLeaderEpoch and ListOffsets), with switches to fail requests and a record of
// what was asked. One topic, partition 0.
import { ApiKey, type ApiRequestMap, type ApiResponseMap } from '../../src/protocol/generated';
import type { FetchResponsePartitionData } from '../../src/protocol/generated/FetchResponse';
import { ErrorCode } from '../../src/common/errors';
import { lastOffsetForLeaderEpoch } from '../../src/replica/offset-lookups';
import type { LeaderApi, LeaderConnection } from '../../src/replica/replica-fetcher';
import type { PartitionLog } from '../../src/storage/partition-log';

export interface FakeLeaderOptions {
  /** The leader's Fetch version (17 by default; below 12 there is no divergingEpoch). */
  fetchVersion?: number;
  /** False: the leader serves no OffsetForLeaderEpoch. */
  offsetForLeaderEpoch?: boolean;
}

export class FakeLeader {
  /** Every request sent to any connection, in order. */
  readonly requests: Array<{ apiKey: LeaderApi; body: unknown }> = [];
  /** Every Fetch answer given. */
  readonly fetchAnswers: FetchResponsePartitionData[] = [];
  /** Connections opened, and how many more attempts to refuse. */
  connections = 0;
  refuseConnections = 0;
  /** Connections the fetcher closed. */
  closedConnections = 0;
  /** How many more requests fail as a dropped connection would. */
  failRequests = 0;
  /** How many more answers with records have a byte of them flipped (a CRC mismatch). */
  corruptRecords = 0;
  /** Called at each Fetch, before it is answered (checks of the follower's state). */
  onFetch: (fetchOffset: number) => void = () => undefined;

  constructor(readonly topic: string, readonly topicId: string, public log: PartitionLog, public leaderEpoch: number, private readonly opts: FakeLeaderOptions = {}) {}

  readonly connect = async (_leaderId: number): Promise<LeaderConnection> => {
    if (this.refuseConnections > 0) {
      this.refuseConnections--;
      throw new Error('connection refused');
    }
    this.connections++;
    let closed = false;
    return {
      versionOf: (apiKey) => {
        if (apiKey === ApiKey.Fetch) return this.opts.fetchVersion ?? 17;
        if (apiKey === ApiKey.OffsetForLeaderEpoch) return this.opts.offsetForLeaderEpoch === false ? undefined : 4;
        return 9;
      },
      request: async <K extends LeaderApi>(apiKey: K, body: ApiRequestMap[K]): Promise<ApiResponseMap[K]> => {
        if (closed) throw new Error('connection closed');
        this.requests.push({ apiKey, body });
        if (this.failRequests > 0) {
          this.failRequests--;
          closed = true;
          throw new Error('connection dropped');
        }
        return this.answer(apiKey, body) as Promise<ApiResponseMap[K]>;
      },
      close: () => {
        if (!closed) this.closedConnections++;
        closed = true;
      },
    };
  };

  fetches(): Array<ApiRequestMap[typeof ApiKey.Fetch]> {
    return this.requests.filter((r) => r.apiKey === ApiKey.Fetch).map((r) => r.body as ApiRequestMap[typeof ApiKey.Fetch]);
  }

  private answer(apiKey: LeaderApi, body: unknown): Promise<unknown> {
    if (apiKey === ApiKey.Fetch) return this.fetch(body as ApiRequestMap[typeof ApiKey.Fetch]);
    if (apiKey === ApiKey.OffsetForLeaderEpoch) return Promise.resolve(this.offsetForLeaderEpoch(body as ApiRequestMap[typeof ApiKey.OffsetForLeaderEpoch]));
    return Promise.resolve(this.listOffsets(body as ApiRequestMap[typeof ApiKey.ListOffsets]));
  }

  private epochError(currentLeaderEpoch: number | undefined): number {
    if (currentLeaderEpoch === undefined || currentLeaderEpoch < 0) return ErrorCode.NONE;
    if (currentLeaderEpoch < this.leaderEpoch) return ErrorCode.FENCED_LEADER_EPOCH;
    if (currentLeaderEpoch > this.leaderEpoch) return ErrorCode.UNKNOWN_LEADER_EPOCH;
    return ErrorCode.NONE;
  }

  private async fetch(request: ApiRequestMap[typeof ApiKey.Fetch]): Promise<ApiResponseMap[typeof ApiKey.Fetch]> {
    const asked = request.topics[0].partitions[0];
    const fetchOffset = Number(asked.fetchOffset);
    this.onFetch(fetchOffset);
    const data = await this.partitionData(asked, request.maxWaitMs);
    this.fetchAnswers.push(data);
    return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, sessionId: 0, responses: [{ topic: this.topic, topicId: this.topicId, partitions: [data] }] };
  }

  /** Kafka's leader: the epoch check, divergence (KIP-320), the range check, then the bytes up to the high watermark. */
  private async partitionData(asked: ApiRequestMap[typeof ApiKey.Fetch]['topics'][number]['partitions'][number], maxWaitMs: number): Promise<FetchResponsePartitionData> {
    const log = this.log;
    const answer = (errorCode: number, extra: Partial<FetchResponsePartitionData> = {}): FetchResponsePartitionData => ({
      partitionIndex: 0, errorCode, highWatermark: BigInt(log.highWatermark), lastStableOffset: BigInt(log.highWatermark),
      logStartOffset: BigInt(log.logStartOffset), records: null, ...extra,
    });
    const fetchOffset = Number(asked.fetchOffset);
    const epochError = this.epochError(asked.currentLeaderEpoch);
    if (epochError !== ErrorCode.NONE) return answer(epochError);
    const lastFetchedEpoch = asked.lastFetchedEpoch ?? -1;
    if (lastFetchedEpoch >= 0 && (this.opts.fetchVersion ?? 17) >= 12) {
      const end = lastOffsetForLeaderEpoch(log, this.leaderEpoch, lastFetchedEpoch);
      if (end.epoch < lastFetchedEpoch || end.endOffset < fetchOffset) {
        return answer(ErrorCode.NONE, { divergingEpoch: { epoch: end.epoch, endOffset: BigInt(end.endOffset) } });
      }
    }
    if (fetchOffset < log.logStartOffset || fetchOffset > log.logEndOffset) return answer(ErrorCode.OFFSET_OUT_OF_RANGE);
    if (fetchOffset >= log.highWatermark) {
      await new Promise((resolve) => setTimeout(resolve, maxWaitMs)); // the long poll, with nothing arriving
      return answer(ErrorCode.NONE);
    }
    const read = await log.readBytes(fetchOffset, asked.partitionMaxBytes);
    if (read.outOfRange) return answer(ErrorCode.OFFSET_OUT_OF_RANGE);
    const records = Buffer.from(read.records);
    if (this.corruptRecords > 0) {
      this.corruptRecords--;
      records[records.length - 1] ^= 0xff;
    }
    return answer(ErrorCode.NONE, { records });
  }

  private offsetForLeaderEpoch(request: ApiRequestMap[typeof ApiKey.OffsetForLeaderEpoch]): ApiResponseMap[typeof ApiKey.OffsetForLeaderEpoch] {
    const asked = request.topics[0].partitions[0];
    const errorCode = this.epochError(asked.currentLeaderEpoch);
    const end = errorCode === ErrorCode.NONE ? lastOffsetForLeaderEpoch(this.log, this.leaderEpoch, asked.leaderEpoch) : { epoch: -1, endOffset: -1 };
    return { throttleTimeMs: 0, topics: [{ topic: this.topic, partitions: [{ errorCode, partition: 0, leaderEpoch: end.epoch, endOffset: BigInt(end.endOffset) }] }] };
  }

  private listOffsets(request: ApiRequestMap[typeof ApiKey.ListOffsets]): ApiResponseMap[typeof ApiKey.ListOffsets] {
    const asked = request.topics[0].partitions[0];
    const errorCode = this.epochError(asked.currentLeaderEpoch);
    // A replica asking: the log end (latest) or the log start (earliest).
    const offset = asked.timestamp === -1n ? this.log.logEndOffset : this.log.logStartOffset;
    return {
      throttleTimeMs: 0,
      topics: [{ name: this.topic, partitions: [{ partitionIndex: 0, errorCode, oldStyleOffsets: [], timestamp: -1n, offset: BigInt(offset), leaderEpoch: this.leaderEpoch }] }],
    };
  }
}
