import { expect } from 'chai';
import { ErrorCode } from '../../src/common/errors';
import {
  PartitionReplicas, type AlterPartition, type AlterPartitionResult, type PartitionReplicasOptions, type PartitionState,
} from '../../src/replica/partition-replicas';

const LAG_MS = 30_000;

/** A leader (broker 1) of replicas 1, 2, 3 with a clock, a log end offset and a controller the test drives. */
class Fixture {
  nowMs = 1_000_000;
  leaderEnd = 0;
  readonly proposals: Array<{ isr: number[]; partitionEpoch: number; answer: (r: AlterPartitionResult) => void }> = [];
  readonly hwSeen: number[] = [];
  /** The ISR changes accepted, as the metrics count them. */
  readonly isrChanges: Array<'shrink' | 'expand'> = [];
  readonly replicas: PartitionReplicas;

  constructor(overrides: Partial<PartitionReplicasOptions> = {}) {
    const alterPartition: AlterPartition = (p) => new Promise((answer) => this.proposals.push({ isr: p.isr, partitionEpoch: p.partitionEpoch, answer }));
    this.replicas = new PartitionReplicas({
      brokerId: 1, replicas: [1, 2, 3], state: { leader: 1, leaderEpoch: 5, isr: [1, 2, 3], partitionEpoch: 10 },
      leaderEpochStartOffset: 0, highWatermark: 0, leaderLogEndOffset: () => this.leaderEnd, alterPartition,
      replicaLagTimeMaxMs: LAG_MS, now: () => this.nowMs, onHighWatermark: (hw) => this.hwSeen.push(hw),
      onIsrChanged: (change) => this.isrChanges.push(change), ...overrides,
    });
  }

  append(records: number): void {
    this.leaderEnd += records;
    this.replicas.onLeaderAppend();
  }

  /** The controller accepts the proposal in flight: the ISR it proposed, the next partition epoch. */
  async accept(): Promise<PartitionState> {
    const p = this.proposals.shift()!;
    const state = { leader: 1, leaderEpoch: 5, isr: p.isr, partitionEpoch: p.partitionEpoch + 1 };
    p.answer({ state });
    await this.replicas.isrChangeSettled();
    return state;
  }
}

describe('replica/partition-replicas (the leader\'s ISR and high watermark)', () => {
  it('a single replica\'s high watermark is its log end offset', () => {
    const f = new Fixture({ replicas: [1], state: { leader: 1, leaderEpoch: 0, isr: [1], partitionEpoch: 0 } });
    f.append(3);
    expect(f.replicas.highWatermark).to.equal(3);
    f.append(2);
    expect(f.hwSeen).to.deep.equal([3, 5]);
  });

  it('the high watermark moves only with the slowest member of the ISR', () => {
    const f = new Fixture();
    f.append(10);
    expect(f.replicas.highWatermark).to.equal(0); // no follower has fetched yet
    f.replicas.updateFollowerFetch(2, 10);
    expect(f.replicas.highWatermark).to.equal(0);
    f.replicas.updateFollowerFetch(3, 4);
    expect(f.replicas.highWatermark).to.equal(4);
    f.replicas.updateFollowerFetch(3, 7);
    expect(f.replicas.highWatermark).to.equal(7);
    f.replicas.updateFollowerFetch(3, 10);
    expect(f.replicas.highWatermark).to.equal(10);
    expect(f.hwSeen).to.deep.equal([4, 7, 10]);
    expect(f.replicas.updateFollowerFetch(9, 10)).to.equal(false); // not a replica of the partition
  });

  it('never moves the high watermark back', () => {
    const f = new Fixture({ highWatermark: 6 });
    f.append(10);
    f.replicas.updateFollowerFetch(2, 10);
    f.replicas.updateFollowerFetch(3, 2); // a follower behind the high watermark the leader started with
    expect(f.replicas.highWatermark).to.equal(6);
    f.replicas.updateFollowerFetch(3, 8);
    expect(f.replicas.highWatermark).to.equal(8);
    f.replicas.updatePartitionState({ leader: 1, leaderEpoch: 5, isr: [1, 2, 3], partitionEpoch: 11 });
    f.replicas.updateFollowerFetch(3, 8);
    expect(f.replicas.highWatermark).to.equal(8);
    expect(f.hwSeen).to.deep.equal([8]);
  });

  it('removes a follower not caught up for replica.lag.time.max.ms, and the high watermark then moves on', async () => {
    const f = new Fixture();
    f.append(10);
    f.replicas.updateFollowerFetch(2, 10);
    f.replicas.updateFollowerFetch(3, 10); // both caught up at t0
    f.append(5);
    f.replicas.updateFollowerFetch(2, 15);
    f.nowMs += LAG_MS; // follower 3 last caught up exactly the lag ago: still in sync
    f.replicas.updateFollowerFetch(3, 12); // fetching, but behind
    expect(f.replicas.outOfSyncReplicas()).to.deep.equal([]);
    await f.replicas.maybeShrinkIsr();
    expect(f.proposals).to.have.length(0);
    expect(f.replicas.highWatermark).to.equal(12);

    f.nowMs += 1;
    expect(f.replicas.outOfSyncReplicas()).to.deep.equal([3]);
    const shrink = f.replicas.maybeShrinkIsr();
    expect(f.proposals.map((p) => p.isr)).to.deep.equal([[1, 2]]);
    expect(f.replicas.maximalIsr).to.deep.equal([1, 2, 3]); // until the controller answers
    expect(f.replicas.highWatermark).to.equal(12);
    expect(f.isrChanges).to.deep.equal([]);
    await f.accept();
    expect(f.isrChanges).to.deep.equal(['shrink']);
    await shrink;
    expect(f.replicas.isr).to.deep.equal([1, 2]);
    expect(f.replicas.partitionState.partitionEpoch).to.equal(11);
    expect(f.replicas.highWatermark).to.equal(15);
  });

  it('does not wait for a caught-up follower the controller dropped from the ISR once its broker is gone (isReplicaIsrEligible)', () => {
    const registered = new Set([1, 2, 3]);
    const f = new Fixture({ isReplicaIsrEligible: (id) => registered.has(id) });
    f.append(10);
    f.replicas.updateFollowerFetch(2, 10);
    f.replicas.updateFollowerFetch(3, 10); // both caught up now
    f.append(5);
    f.replicas.updateFollowerFetch(2, 15);
    // Broker 3 dies: the controller fences it, out of the ISR. Still caught up by the lag time, and
    // registered, it would be waited for (it may rejoin at once, as in Kafka)...
    f.replicas.updatePartitionState({ leader: 1, leaderEpoch: 5, isr: [1, 2], partitionEpoch: 11 });
    expect(f.replicas.highWatermark).to.equal(10);
    // ...but its registration is gone: acks=all no longer waits for it.
    registered.delete(3);
    f.replicas.updatePartitionState({ leader: 1, leaderEpoch: 5, isr: [1, 2], partitionEpoch: 12 });
    expect(f.replicas.highWatermark).to.equal(15);
    // Nor may it rejoin the ISR until it is registered again.
    f.replicas.updateFollowerFetch(3, 15);
    expect(f.proposals).to.have.length(0);
  });

  it('counts a follower caught up as of its previous fetch when it reaches what the leader had then', () => {
    const f = new Fixture();
    f.append(10);
    f.replicas.updateFollowerFetch(2, 10);
    f.replicas.updateFollowerFetch(3, 10);
    f.nowMs += 20_000;
    f.append(5);
    f.replicas.updateFollowerFetch(3, 10); // the leader had 15 at this fetch
    f.append(5);
    f.nowMs += 15_000;
    f.replicas.updateFollowerFetch(3, 15); // reached 15: caught up as of the previous fetch, 15 s ago
    f.replicas.updateFollowerFetch(2, 20);
    expect(f.replicas.outOfSyncReplicas()).to.deep.equal([]);
    f.nowMs += 15_001;
    expect(f.replicas.outOfSyncReplicas()).to.deep.equal([3]);
  });

  it('lets a follower out of the ISR rejoin once it reaches the high watermark in the current leader epoch', async () => {
    const f = new Fixture({ state: { leader: 1, leaderEpoch: 5, isr: [1, 2], partitionEpoch: 10 }, leaderEpochStartOffset: 8 });
    f.append(10);
    f.replicas.updateFollowerFetch(2, 10);
    expect(f.replicas.highWatermark).to.equal(10);
    f.append(5);
    f.replicas.updateFollowerFetch(3, 7); // below the high watermark and the epoch's start
    expect(f.proposals).to.have.length(0);
    expect(f.replicas.highWatermark).to.equal(10); // a follower out of the ISR and behind is not waited for
    f.replicas.updateFollowerFetch(3, 10);
    expect(f.proposals.map((p) => p.isr)).to.deep.equal([[1, 2, 3]]);
    expect(f.replicas.maximalIsr).to.deep.equal([1, 2, 3]); // counted for the high watermark already
    f.replicas.updateFollowerFetch(2, 15);
    expect(f.replicas.highWatermark).to.equal(10);
    f.replicas.updateFollowerFetch(3, 12); // one proposal at a time
    expect(f.proposals).to.have.length(1);
    await f.accept();
    expect(f.replicas.isr).to.deep.equal([1, 2, 3]);
    expect(f.isrChanges).to.deep.equal(['expand']);
    expect(f.replicas.highWatermark).to.equal(12);
  });

  it('does not let a follower rejoin before it has this leader epoch\'s start, even past the high watermark', () => {
    // A new leader whose high watermark lags its log: the epoch starts at 10, the high watermark is 4.
    const f = new Fixture({ state: { leader: 1, leaderEpoch: 5, isr: [1, 2], partitionEpoch: 10 }, leaderEpochStartOffset: 10, highWatermark: 4 });
    f.leaderEnd = 10;
    f.replicas.updateFollowerFetch(3, 6);
    expect(f.proposals).to.have.length(0);
    f.replicas.updateFollowerFetch(3, 10);
    expect(f.proposals.map((p) => p.isr)).to.deep.equal([[1, 2, 3]]);
  });

  it('drops a refused ISR change and takes the state the refusal carries; proposes again from it', async () => {
    const f = new Fixture({ state: { leader: 1, leaderEpoch: 5, isr: [1, 2], partitionEpoch: 10 } });
    f.append(4);
    f.replicas.updateFollowerFetch(3, 4);
    const stale = f.proposals.shift()!;
    expect(stale.partitionEpoch).to.equal(10);
    stale.answer({ errorCode: ErrorCode.INVALID_UPDATE_VERSION, state: { leader: 1, leaderEpoch: 5, isr: [1], partitionEpoch: 12 } });
    await f.replicas.isrChangeSettled();
    expect(f.replicas.isr).to.deep.equal([1]);
    expect(f.isrChanges).to.deep.equal([]); // refused: no change counted
    f.replicas.updateFollowerFetch(3, 4);
    expect(f.proposals.map((p) => [p.isr, p.partitionEpoch])).to.deep.equal([[[1, 3], 12]]);
  });

  it('applies min.insync.replicas before the append and when acks=all completes', async () => {
    const f = new Fixture();
    expect(f.replicas.checkEnoughReplicasForAppend(2)).to.equal(ErrorCode.NONE);
    f.append(3); // offsets 0-2
    f.replicas.updateFollowerFetch(2, 3);
    expect(f.replicas.acksAllResult(2, 2)).to.equal('pending'); // follower 3 has not fetched it
    f.replicas.updateFollowerFetch(3, 2);
    expect(f.replicas.acksAllResult(1, 2)).to.equal(ErrorCode.NONE);
    expect(f.replicas.acksAllResult(2, 2)).to.equal('pending');

    // The leader takes one more record; followers 2 and 3 stop fetching, both leave the ISR, and the
    // pending produce then completes, short of replicas.
    f.append(1);
    f.nowMs += LAG_MS + 1;
    const shrink = f.replicas.maybeShrinkIsr();
    await f.accept();
    await shrink;
    expect(f.replicas.isr).to.deep.equal([1]);
    expect(f.replicas.acksAllResult(2, 2)).to.equal(ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND);
    expect(f.replicas.acksAllResult(2, 1)).to.equal(ErrorCode.NONE);
    expect(f.replicas.checkEnoughReplicasForAppend(2)).to.equal(ErrorCode.NOT_ENOUGH_REPLICAS);
    expect(f.replicas.checkEnoughReplicasForAppend(1)).to.equal(ErrorCode.NONE);
  });
  it('a reassignment changes the replicas within the epoch: a new follower is tracked and may join, a removed one refused and no longer waited for', async () => {
    const f = new Fixture({ replicas: [1, 2], state: { leader: 1, leaderEpoch: 5, isr: [1, 2], partitionEpoch: 10 } });
    f.append(10);
    f.replicas.updateFollowerFetch(2, 4);
    expect(f.replicas.updateFollowerFetch(3, 0)).to.equal(false); // not a replica yet
    f.replicas.updateReplicas([1, 2, 3]);
    f.replicas.updateFollowerFetch(3, 10);
    expect(f.replicas.highWatermark).to.equal(4);
    f.replicas.updateFollowerFetch(2, 10);
    expect(f.replicas.highWatermark).to.equal(10);
    expect(f.proposals.map((p) => p.isr)).to.deep.equal([[1, 2, 3]]); // 3 caught up: into the ISR
    await f.accept();
    // Completion: 2 leaves the replicas; the high watermark no longer waits for it, its fetches are refused.
    f.replicas.updateReplicas([1, 3]);
    f.replicas.updatePartitionState({ leader: 1, leaderEpoch: 6, isr: [1, 3], partitionEpoch: 12 });
    f.append(5);
    f.replicas.updateFollowerFetch(3, 15);
    expect(f.replicas.highWatermark).to.equal(15);
    expect(f.replicas.updateFollowerFetch(2, 15)).to.equal(false);
  });
});
