import { expect } from 'chai';
import { followerTruncationPoint, type FollowerLog } from '../../src/replica/follower-truncation';
import { lastOffsetForLeaderEpoch } from '../../src/replica/offset-lookups';
import { PartitionLog } from '../../src/storage/partition-log';
import { partitionLogs } from '../storage/helpers';
import { fetchFrom, leaderAppend, logBytes } from '../storage/replication-helpers';

/** A follower log with these epoch entries, for the rule alone. */
function followerLog(entries: Array<[epoch: number, startOffset: number]>, logEndOffset: number, highWatermark: number): FollowerLog {
  return {
    logEndOffset,
    highWatermark,
    endOffsetForEpoch(epoch: number) {
      if (entries.length > 0 && entries[entries.length - 1][0] === epoch) return { epoch, endOffset: logEndOffset };
      const higher = entries.findIndex(([e]) => e > epoch);
      if (higher <= 0) return higher === 0 ? { epoch, endOffset: entries[0][1] } : { epoch: -1, endOffset: -1 };
      return { epoch: entries[higher - 1][0], endOffset: entries[higher][1] };
    },
  };
}

describe('replica/follower truncation', () => {
  describe('followerTruncationPoint (Kafka\'s getOffsetTruncationState)', () => {
    const log = followerLog([[0, 0], [1, 5], [3, 8]], 12, 4);

    it('the leader has the follower\'s epoch: the smaller end offset of the two', () => {
      expect(followerTruncationPoint(log, { epoch: 1, endOffset: 6 })).to.deep.equal({ offset: 6, complete: true });
      expect(followerTruncationPoint(log, { epoch: 3, endOffset: 20 })).to.deep.equal({ offset: 12, complete: true });
    });

    it('the leader answers an epoch the follower lacks: the end of the follower\'s epoch below it, and ask again', () => {
      expect(followerTruncationPoint(log, { epoch: 2, endOffset: 9 })).to.deep.equal({ offset: 8, complete: false });
    });

    it('the leader does not know the epoch: the follower\'s high watermark', () => {
      expect(followerTruncationPoint(log, { epoch: -1, endOffset: -1 })).to.deep.equal({ offset: 4, complete: true });
    });

    it('an answer without epoch, or one below every epoch of the follower: the leader\'s end offset, within the log', () => {
      expect(followerTruncationPoint(log, { epoch: -1, endOffset: 7 })).to.deep.equal({ offset: 7, complete: true });
      expect(followerTruncationPoint(followerLog([[4, 3]], 9, 0), { epoch: 2, endOffset: 30 })).to.deep.equal({ offset: 3, complete: true });
      expect(followerTruncationPoint(followerLog([], 9, 0), { epoch: 2, endOffset: 5 })).to.deep.equal({ offset: 5, complete: true });
    });
  });

  describe('two logs that diverged after a leader change', () => {
    const openLog = partitionLogs('fjord-diverge-', 400).open;

    /**
     * What a follower does before fetching from a leader of `leaderEpoch`: OffsetForLeaderEpoch for
     * its latest epoch, truncation, again until the rule says it is done.
     */
    async function truncateDivergentTail(follower: PartitionLog, leader: PartitionLog, leaderEpoch: number): Promise<number[]> {
      const cuts: number[] = [];
      for (;;) {
        const latest = follower.latestEpoch();
        const point = latest === undefined
          ? { offset: follower.highWatermark, complete: true }
          : followerTruncationPoint(follower, lastOffsetForLeaderEpoch(leader, leaderEpoch, latest));
        cuts.push(point.offset);
        await follower.truncateTo(point.offset);
        if (point.complete) return cuts;
      }
    }

    /**
     * Broker A leads epoch 0 (offsets 0-4, which B fetches), B leads epoch 1 and writes 5-9 that A
     * never fetches, then A leads epoch 2; A and B are returned.
     */
    async function diverged(): Promise<{ a: PartitionLog; b: PartitionLog }> {
      const a = await openLog();
      const b = await openLog();
      leaderAppend(a, { records: 2, epoch: 0, producerId: 7, sequence: 0 });
      await leaderAppend(a, { records: 3, epoch: 0 }).done;
      await fetchFrom(a, b);
      leaderAppend(b, { records: 2, epoch: 1, producerId: 7, sequence: 2, tag: 'lost' });
      await leaderAppend(b, { records: 3, epoch: 1, tag: 'lost' }).done;
      expect(b.logEndOffset).to.equal(10);
      return { a, b };
    }

    it('end identical once the follower truncates and fetches from the new leader', async () => {
      const { a, b } = await diverged();
      leaderAppend(a, { records: 2, epoch: 2, producerId: 7, sequence: 2, tag: 'kept' });
      leaderAppend(a, { records: 1, epoch: 2, tag: 'kept' });
      await leaderAppend(a, { records: 4, epoch: 2, tag: 'kept' }).done;

      expect(await truncateDivergentTail(b, a, 2)).to.deep.equal([5]);
      expect(b.logEndOffset).to.equal(5);
      await fetchFrom(a, b);

      expect(b.logEndOffset).to.equal(a.logEndOffset);
      expect(await logBytes(b)).to.deep.equal(await logBytes(a, 0));
      expect(b.leaderEpochEntries()).to.deep.equal([{ epoch: 0, startOffset: 0 }, { epoch: 2, startOffset: 5 }]);
      expect(b.producerState.lastEntry(7)).to.deep.equal(a.producerState.lastEntry(7));
    });

    it('a new leader that has written nothing yet still cuts the old leader\'s tail', async () => {
      const { a, b } = await diverged();
      expect(await truncateDivergentTail(b, a, 2)).to.deep.equal([5]);
      expect(await logBytes(b)).to.deep.equal(await logBytes(a, 0));
      expect(b.producerState.lastEntry(7)?.batches.map((m) => m.lastOffset)).to.deep.equal([1]);
    });

    it('takes several questions when the follower has epochs the leader never saw', async () => {
      // B led epochs 1 and 3 without A fetching; A then leads epoch 4 after writing in epoch 2.
      const { a, b } = await diverged();
      await leaderAppend(b, { records: 2, epoch: 3, tag: 'lost' }).done; // 10-11
      await leaderAppend(a, { records: 3, epoch: 2, tag: 'kept' }).done; // 5-7
      await leaderAppend(a, { records: 2, epoch: 4, tag: 'kept' }).done; // 8-9
      // Asked for 3, A answers epoch 2 ending at 8; B has no epoch 2, its epoch 1 ends at 10: cut to 10,
      // ask for 1, A answers epoch 0 ending at 5: cut to 5.
      expect(await truncateDivergentTail(b, a, 4)).to.deep.equal([10, 5]);
      await fetchFrom(a, b);
      expect(await logBytes(b)).to.deep.equal(await logBytes(a, 0));
    });
  });
});
