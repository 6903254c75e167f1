// Helpers for the replication tests: a leader's appends with their producer-state updates (what the
// ReplicaManager does around PartitionLog.append), and a follower's fetch-and-append from a leader.
import { expect } from 'chai';
import { buildBatchSync, buildEndTxnMarker } from '../../src/records/records';
import type { AppendResult, PartitionLog } from '../../src/storage';
import type { TxnMarker } from '../../src/storage/producer-state';

export interface LeaderBatch {
  records: number;
  /** The leader epoch the batch is written in. */
  epoch: number;
  /** An idempotent producer's batch (sequence numbers from `sequence`). */
  producerId?: number;
  sequence?: number;
  isTransactional?: boolean;
  /** Fills the record values, so that two logs' tails differ. */
  tag?: string;
}

/** Appends one batch as a leader does: the producer-state check, the append, the producer-state update. */
export function leaderAppend(log: PartitionLog, b: LeaderBatch): AppendResult {
  const producer = b.producerId === undefined ? undefined : {
    producerId: b.producerId, producerEpoch: 0, baseSequence: b.sequence ?? 0,
    lastSequence: (b.sequence ?? 0) + b.records - 1, isTransactional: b.isTransactional ?? false,
  };
  if (producer) expect(log.producerState.checkBatch(producer)).to.deep.equal({ kind: 'ok' });
  const bytes = buildBatchSync({
    ...producer, partitionLeaderEpoch: b.epoch, nowMs: 1_000,
    records: Array.from({ length: b.records }, (_, i) => ({ value: `${b.tag ?? 'v'}-${i}` })),
  });
  const appended = log.append(bytes);
  if (producer) log.producerState.recordBatch(producer, appended.baseOffset, appended.lastOffset, 1_000);
  return appended;
}

/** Appends a transaction marker as a leader does (WriteTxnMarkers). */
export function leaderAppendMarker(log: PartitionLog, producerId: number, commit: boolean, epoch: number): AppendResult {
  const marker: TxnMarker = { producerId, producerEpoch: 0, coordinatorEpoch: 0, commit };
  const offset = log.logEndOffset;
  const check = log.producerState.checkMarker(marker, offset);
  if (check.kind !== 'ok') throw new Error(check.errorMessage);
  const appended = log.append(buildEndTxnMarker({ ...marker, baseOffset: offset, partitionLeaderEpoch: epoch, timestamp: 1_000 }),
    check.completed?.isAborted ? check.completed : undefined);
  log.producerState.recordMarker(marker, check.completed, 1_000);
  appended.done.then(() => log.producerState.onHighWatermarkUpdated(log.highWatermark), () => undefined);
  return appended;
}

/** The bytes of a log from `from` to its high watermark, at most `maxBytes` (but at least one batch). */
export async function logBytes(log: PartitionLog, from = log.logStartOffset, maxBytes = 1 << 30): Promise<Buffer> {
  const read = await log.readBytes(from, maxBytes);
  if (read.outOfRange) throw new Error(`offset ${from} out of range`);
  return read.records;
}

/**
 * Follower fetches until the follower has all the leader has: each takes at most `maxBytes` from
 * the follower's log end offset and appends it as follower.
 */
export async function fetchFrom(leader: PartitionLog, follower: PartitionLog, maxBytes = 1 << 20): Promise<void> {
  while (follower.logEndOffset < leader.highWatermark) {
    await follower.appendAsFollower(await logBytes(leader, follower.logEndOffset, maxBytes)).done;
  }
}
