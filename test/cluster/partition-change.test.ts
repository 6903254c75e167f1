import { expect } from 'chai';
import {
  NO_LEADER,
  brokerFenced,
  brokerUnfenced,
  changePartition,
  isUncleanElection,
  preferredLeaderElection,
  requestedElection,
  type PartitionState,
} from '../../src/cluster/partition-change';

const state = (replicas: number[], isr: number[], leader: number): PartitionState =>
  ({ replicas, isr, leader, leaderEpoch: 5, partitionEpoch: 9 });
const alive = (...ids: number[]) => (id: number): boolean => ids.includes(id);

describe('cluster/partition-change (PartitionChangeBuilder)', () => {
  describe('a broker dies (fenced or unregistered)', () => {
    it('a follower leaves the ISR: same leader and leader epoch, partition epoch bumped', () => {
      expect(brokerFenced(state([1, 2, 3], [1, 2, 3], 1), 3, alive(1, 2), false))
        .to.deep.equal({ replicas: [1, 2, 3], isr: [1, 2], leader: 1, leaderEpoch: 5, partitionEpoch: 10 });
    });

    it('the leader: the first live ISR member in assignment order leads, with a new leader epoch', () => {
      expect(brokerFenced(state([1, 2, 3], [1, 2, 3], 1), 1, alive(2, 3), false))
        .to.deep.equal({ replicas: [1, 2, 3], isr: [2, 3], leader: 2, leaderEpoch: 6, partitionEpoch: 10 });
      // 2 is dead too but not yet out of the ISR: it is passed over, and stays in the ISR.
      expect(brokerFenced(state([1, 2, 3], [1, 2, 3], 1), 1, alive(3), false))
        .to.deep.equal({ replicas: [1, 2, 3], isr: [2, 3], leader: 3, leaderEpoch: 6, partitionEpoch: 10 });
      // Assignment order, not ISR order, decides.
      expect(brokerFenced(state([3, 1, 2], [1, 2, 3], 2), 2, alive(1, 3), false)?.leader).to.equal(3);
    });

    it('the last ISR member stays in the ISR; with no one electable the leader is -1', () => {
      expect(brokerFenced(state([1, 2, 3], [2], 2), 2, alive(1, 3), false))
        .to.deep.equal({ replicas: [1, 2, 3], isr: [2], leader: NO_LEADER, leaderEpoch: 6, partitionEpoch: 10 });
    });

    it('unclean election: the first live replica leads and the ISR is just it', () => {
      expect(brokerFenced(state([1, 2, 3], [2], 2), 2, alive(1, 3), true))
        .to.deep.equal({ replicas: [1, 2, 3], isr: [1], leader: 1, leaderEpoch: 6, partitionEpoch: 10 });
      // An ISR member that can lead still wins over the out-of-sync ones.
      expect(brokerFenced(state([1, 2, 3], [2, 3], 2), 2, alive(1, 3), true))
        .to.deep.equal({ replicas: [1, 2, 3], isr: [3], leader: 3, leaderEpoch: 6, partitionEpoch: 10 });
      // Nobody alive: leaderless even so.
      expect(brokerFenced(state([1, 2, 3], [2], 2), 2, alive(), true))
        .to.deep.equal({ replicas: [1, 2, 3], isr: [2], leader: NO_LEADER, leaderEpoch: 6, partitionEpoch: 10 });
    });

    it('nothing to change: null', () => {
      expect(brokerFenced(state([1, 2, 3], [2], NO_LEADER), 2, alive(1, 3), false)).to.equal(null);
      expect(brokerFenced(state([1, 2, 3], [1, 2], 1), 3, alive(1, 2), false)).to.equal(null);
    });
  });

  describe('a broker comes back (unfenced)', () => {
    it('the last ISR member leads its leaderless partition again', () => {
      expect(brokerUnfenced(state([1, 2, 3], [2], NO_LEADER), 2, alive(1), false))
        .to.deep.equal({ replicas: [1, 2, 3], isr: [2], leader: 2, leaderEpoch: 6, partitionEpoch: 10 });
    });

    it('an out-of-sync replica does not, unless unclean election is on (then the first live replica does)', () => {
      expect(brokerUnfenced(state([1, 2, 3], [2], NO_LEADER), 3, alive(1), false)).to.equal(null);
      expect(brokerUnfenced(state([1, 2, 3], [2], NO_LEADER), 3, alive(1), true))
        .to.deep.equal({ replicas: [1, 2, 3], isr: [1], leader: 1, leaderEpoch: 6, partitionEpoch: 10 });
    });

    it('a partition that has a leader keeps it', () => {
      expect(brokerUnfenced(state([1, 2, 3], [2, 3], 3), 1, alive(2, 3), false)).to.equal(null);
    });
  });

  describe('preferred leader election', () => {
    it('moves leadership to the first replica when it is alive and in the ISR', () => {
      expect(preferredLeaderElection(state([1, 2, 3], [1, 2, 3], 2), alive(1, 2, 3)))
        .to.deep.equal({ replicas: [1, 2, 3], isr: [1, 2, 3], leader: 1, leaderEpoch: 6, partitionEpoch: 10 });
    });

    it('changes nothing when the first replica already leads, is out of sync or dead', () => {
      expect(preferredLeaderElection(state([1, 2, 3], [1, 2, 3], 1), alive(1, 2, 3))).to.equal(null);
      expect(preferredLeaderElection(state([1, 2, 3], [2, 3], 2), alive(1, 2, 3))).to.equal(null);
      expect(preferredLeaderElection(state([1, 2, 3], [1, 2, 3], 2), alive(2, 3))).to.equal(null);
    });

    it('a leaderless partition still gets a leader from its ISR', () => {
      expect(preferredLeaderElection(state([1, 2, 3], [1, 3], NO_LEADER), alive(2, 3)))
        .to.deep.equal({ replicas: [1, 2, 3], isr: [1, 3], leader: 3, leaderEpoch: 6, partitionEpoch: 10 });
    });
  });

  describe('ElectLeaders (requestedElection)', () => {
    it('PREFERRED: not needed when the first replica leads; else leadership back to it', () => {
      expect(requestedElection(state([1, 2, 3], [1, 2, 3], 1), 'preferred', alive(1, 2, 3))).to.equal('not-needed');
      expect(requestedElection(state([1, 2, 3], [1, 2, 3], 2), 'preferred', alive(1, 2, 3)))
        .to.deep.equal({ replicas: [1, 2, 3], isr: [1, 2, 3], leader: 1, leaderEpoch: 6, partitionEpoch: 10 });
    });

    it('PREFERRED: not possible when the first replica is dead or out of sync and the leader stays', () => {
      expect(requestedElection(state([1, 2, 3], [1, 2, 3], 2), 'preferred', alive(2, 3))).to.equal('not-possible');
      expect(requestedElection(state([1, 2, 3], [2, 3], 2), 'preferred', alive(1, 2, 3))).to.equal('not-possible');
      // Leaderless, with no live ISR member: no out-of-sync replica is taken.
      expect(requestedElection(state([1, 2, 3], [1], NO_LEADER), 'preferred', alive(2, 3))).to.equal('not-possible');
    });

    it('UNCLEAN: not needed while the partition has a leader, even a non-preferred one', () => {
      expect(requestedElection(state([1, 2, 3], [2, 3], 2), 'unclean', alive(1, 2, 3))).to.equal('not-needed');
    });

    it('UNCLEAN: a live ISR member first; else the first live replica, alone in the new ISR; else not possible', () => {
      expect(requestedElection(state([1, 2, 3], [1, 3], NO_LEADER), 'unclean', alive(2, 3)))
        .to.deep.equal({ replicas: [1, 2, 3], isr: [1, 3], leader: 3, leaderEpoch: 6, partitionEpoch: 10 });
      expect(requestedElection(state([1, 2, 3], [1], NO_LEADER), 'unclean', alive(3, 2)))
        .to.deep.equal({ replicas: [1, 2, 3], isr: [2], leader: 2, leaderEpoch: 6, partitionEpoch: 10 });
      expect(requestedElection(state([1, 2, 3], [1], NO_LEADER), 'unclean', alive())).to.equal('not-possible');
    });

    it('isUncleanElection: a new leader from outside the old ISR', () => {
      expect(isUncleanElection({ leader: NO_LEADER, isr: [1] }, { leader: 2 })).to.equal(true);
      expect(isUncleanElection({ leader: NO_LEADER, isr: [1, 3] }, { leader: 3 })).to.equal(false);
      expect(isUncleanElection({ leader: 1, isr: [1] }, { leader: NO_LEADER })).to.equal(false);
    });
  });

  it('an ISR change alone (AlterPartition-style) bumps only the partition epoch; an empty target ISR is not applied', () => {
    const s = state([1, 2, 3], [1, 2], 1);
    expect(changePartition(s, { targetIsr: [1, 2, 3], election: 'online', isAcceptableLeader: alive(1, 2, 3) }))
      .to.deep.equal({ replicas: [1, 2, 3], isr: [1, 2, 3], leader: 1, leaderEpoch: 5, partitionEpoch: 10 });
    expect(changePartition(s, { targetIsr: [], election: 'online', isAcceptableLeader: alive(1) }))
      .to.deep.equal({ replicas: [1, 2, 3], isr: [1, 2], leader: NO_LEADER, leaderEpoch: 6, partitionEpoch: 10 });
  });

  it('never changes the state it is given', () => {
    const s = state([1, 2, 3], [1, 2, 3], 1);
    const copy = structuredClone(s);
    brokerFenced(s, 1, alive(2, 3), true);
    brokerFenced(s, 3, alive(1, 2), false);
    expect(s).to.deep.equal(copy);
  });
});
