// OffsetForLeaderEpoch (key 23), versions 0-4.
// - Per partition: the largest leader epoch <= the requested one and its end offset (where the
//   next epoch starts, or the log end offset for the latest epoch), as Kafka's
//   LeaderEpochFileCache.endOffsetFor. An epoch below every known one answers itself with the
//   first known start offset; one above every known one, or -1, answers -1/-1 with no error.
// - The current leader epoch is known from the moment this broker leads the partition, starting
//   at the log end offset of that moment (Kafka's Partition.makeLeader puts it in the epoch
//   cache): an empty log answers epoch 0 with end offset 0, and a log written before a leader
//   epoch bump answers the new epoch with the log end offset, as Kafka does. The Java consumer
//   validates its position with this after a rebalance and resets on a -1 answer.
// - currentLeaderEpoch (v2+, -1 when not given): older than ours FENCED_LEADER_EPOCH, newer
//   UNKNOWN_LEADER_EPOCH. UNKNOWN_TOPIC_OR_PARTITION for partitions we do not have,
//   KAFKA_STORAGE_ERROR for an offline log.
// Also home of the leader-partition and epoch helpers ListOffsets shares.
import { ApiKey } from '../protocol/generated';
import type { OffsetForLeaderEpochRequest } from '../protocol/generated/OffsetForLeaderEpochRequest';
import type {
  OffsetForLeaderEpochResponse, OffsetForLeaderEpochResponseEpochEndOffset as EpochEndOffset,
} from '../protocol/generated/OffsetForLeaderEpochResponse';
import { ErrorCode } from '../common/errors';
import type { PartitionLog } from '../storage';
import type { HandlerFactory } from './handler';
import { leaderPartition, NO_LEADER_EPOCH } from './shared/leader-partition';

export interface EpochEntry {
  epoch: number;
  startOffset: number;
}

/**
 * The epoch cache as Kafka's leader holds it: the log's entries (from the batches written) plus
 * the current leader epoch at the log end offset when no batch of it was written yet (Kafka
 * assigns it on becoming leader, dropping entries that do not start below it).
 */
export function leaderEpochEntries(log: PartitionLog, leaderEpoch: number): EpochEntry[] {
  const entries = log.leaderEpochEntries().map((e) => ({ epoch: e.epoch, startOffset: e.startOffset }));
  const latest = entries.length > 0 ? entries[entries.length - 1].epoch : -1;
  if (leaderEpoch > latest) {
    const leo = log.logEndOffset;
    while (entries.length > 0 && entries[entries.length - 1].startOffset >= leo) entries.pop();
    entries.push({ epoch: leaderEpoch, startOffset: leo });
  }
  return entries;
}

/** Kafka's LeaderEpochFileCache.endOffsetFor over `entries`; -1/-1 when undefined. */
export function endOffsetFor(entries: EpochEntry[], requestedEpoch: number, logEndOffset: number): { epoch: number; endOffset: number } {
  const undefinedAnswer = { epoch: -1, endOffset: -1 };
  if (requestedEpoch === -1) return undefinedAnswer;
  if (entries.length > 0 && entries[entries.length - 1].epoch === requestedEpoch) return { epoch: requestedEpoch, endOffset: logEndOffset };
  const higher = entries.findIndex((e) => e.epoch > requestedEpoch);
  if (higher < 0) return undefinedAnswer;
  if (higher === 0) return { epoch: requestedEpoch, endOffset: entries[0].startOffset };
  return { epoch: entries[higher - 1].epoch, endOffset: entries[higher].startOffset };
}

export const offsetForLeaderEpoch: HandlerFactory = (broker) => ({
  apiKey: ApiKey.OffsetForLeaderEpoch,
  name: 'OffsetForLeaderEpoch',
  minVersion: 0,
  maxVersion: 4,
  handle(req: OffsetForLeaderEpochRequest): OffsetForLeaderEpochResponse {
    return {
      throttleTimeMs: 0,
      topics: req.topics.map((t) => ({
        topic: t.topic,
        partitions: t.partitions.map((p): EpochEndOffset => {
          const found = leaderPartition(broker, t.topic, p.partition, p.currentLeaderEpoch ?? NO_LEADER_EPOCH);
          if ('errorCode' in found) return { errorCode: found.errorCode, partition: p.partition, leaderEpoch: -1, endOffset: -1n };
          const { log } = found.partition;
          const end = endOffsetFor(leaderEpochEntries(log, found.leaderEpoch), p.leaderEpoch, log.logEndOffset);
          return { errorCode: ErrorCode.NONE, partition: p.partition, leaderEpoch: end.epoch, endOffset: BigInt(end.endOffset) };
        }),
      })),
    };
  },
});
