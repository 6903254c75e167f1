// Where a follower cuts its log before it fetches from a new leader (Kafka's
// AbstractFetcherThread.getOffsetTruncationState, KIP-101/KIP-279). The follower asks the leader
// OffsetForLeaderEpoch for its own latest epoch; the leader answers the largest epoch it has at or
// below that one and where that epoch ends in its log. Everything the follower has past that point
// was written under a leader whose writes the new leader does not have: it is cut (truncateTo), and
// fetching resumes there (appendAsFollower). No record the ISR acknowledged is cut: those are below
// the high watermark, which every ISR member, and so the leader, has.
//
// A follower whose log has no leader epoch yet asks nothing and truncates to its high watermark.
import { UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET, type PartitionLog } from '../storage';

/** The leader's OffsetForLeaderEpoch answer for one partition. */
export interface LeaderEpochEndOffset {
  epoch: number;
  endOffset: number;
}

/** Where to truncate; `complete` false means ask the leader again with the follower's new latest epoch. */
export interface TruncationPoint {
  offset: number;
  complete: boolean;
}

/** What the rule reads of the follower's log. */
export type FollowerLog = Pick<PartitionLog, 'logEndOffset' | 'highWatermark' | 'endOffsetForEpoch'>;

/**
 * The follower's truncation offset given the leader's answer:
 *  - the leader does not know the epoch (end offset -1): the high watermark, the follower's fetch offset;
 *  - no epoch in the answer (an old leader): the leader's end offset, capped by the follower's log end;
 *  - the follower has the epoch the leader answered: the smaller of the two end offsets for it, capped
 *    by the follower's log end; done;
 *  - the follower has only a smaller epoch than the leader's answer: the end of that one on the
 *    follower, capped by its log end, and not done: the next question asks from there;
 *  - the follower has no epoch at or below the answer: the leader's end offset, capped by the log end.
 */
export function followerTruncationPoint(log: FollowerLog, leader: LeaderEpochEndOffset): TruncationPoint {
  const logEnd = log.logEndOffset;
  if (leader.endOffset === UNDEFINED_EPOCH_OFFSET) return { offset: log.highWatermark, complete: true };
  if (leader.epoch === UNDEFINED_EPOCH) return { offset: Math.min(leader.endOffset, logEnd), complete: true };
  const own = log.endOffsetForEpoch(leader.epoch);
  if (own.epoch === UNDEFINED_EPOCH || own.endOffset === UNDEFINED_EPOCH_OFFSET) {
    return { offset: Math.min(leader.endOffset, logEnd), complete: true };
  }
  if (own.epoch !== leader.epoch) return { offset: Math.min(own.endOffset, logEnd), complete: false };
  return { offset: Math.min(own.endOffset, leader.endOffset, logEnd), complete: true };
}
