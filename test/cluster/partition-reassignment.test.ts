// The reassignment state machine as pure functions (Kafka 4.4's PartitionReassignmentReplicas,
// PartitionReassignmentRevert, completeReassignmentIfNeeded), and the active controller's round
// over a cache holding reassignments (planRound).
import { expect } from 'chai';
import {
  completeReassignment, fitToReplicas, revertReassignment, startReassignment, targetReplicationFactor,
} from '../../src/cluster/partition-reassignment';
import { planRound } from '../../src/cluster/etcd/cluster-controller';
import type { MetadataCache } from '../../src/cluster/etcd/metadata-cache';
import type { PartitionState as StoredState, TopicAssignment } from '../../src/cluster/etcd/layout';
import type { PartitionState } from '../../src/cluster/partition-change';

const alive = (...ids: number[]) => (id: number) => ids.includes(id);
const state = (replicas: number[], leader: number, isr: number[], leaderEpoch = 5, partitionEpoch = 9): PartitionState =>
  ({ replicas, leader, isr, leaderEpoch, partitionEpoch });

describe('partition reassignment rules', () => {
  describe('startReassignment (PartitionReassignmentReplicas)', () => {
    it('a new target: the target then the removed replicas, adding and removing in ascending order', () => {
      expect(startReassignment({ replicas: [2, 1, 3], reassignment: null }, [5, 3, 4])).to.deep.equal({
        replicas: [5, 3, 4, 1, 2], reassignment: { adding: [4, 5], removing: [1, 2] },
      });
    });

    it('only removing: a reassignment with nothing to add; only reordering: none, the new order at once', () => {
      expect(startReassignment({ replicas: [1, 2, 3], reassignment: null }, [2, 1]))
        .to.deep.equal({ replicas: [2, 1, 3], reassignment: { adding: [], removing: [3] } });
      expect(startReassignment({ replicas: [1, 2, 3], reassignment: null }, [3, 1, 2])).to.deep.equal({ replicas: [3, 1, 2], reassignment: null });
    });

    it('the current assignment again: no change', () => {
      expect(startReassignment({ replicas: [1, 2], reassignment: null }, [1, 2])).to.equal(null);
      const ongoing = { replicas: [2, 3, 1], reassignment: { adding: [3], removing: [1] } };
      expect(startReassignment(ongoing, [2, 3, 1])).to.equal(null);
    });

    it('over a reassignment in progress: from its full set, keeping its adding list where the new one adds nothing (as Kafka)', () => {
      const ongoing = { replicas: [3, 4, 1, 2], reassignment: { adding: [3, 4], removing: [1, 2] } };
      expect(startReassignment(ongoing, [1, 2])).to.deep.equal({ replicas: [1, 2, 3, 4], reassignment: { adding: [3, 4], removing: [3, 4] } });
      expect(startReassignment(ongoing, [3, 5])).to.deep.equal({ replicas: [3, 5, 1, 2, 4], reassignment: { adding: [5], removing: [1, 2, 4] } });
    });

    it('the replication factor a partition is heading for: its replicas less those being removed', () => {
      expect(targetReplicationFactor([1, 2, 3], null)).to.equal(3);
      expect(targetReplicationFactor([3, 4, 5, 1, 2], { adding: [4, 5], removing: [1, 2] })).to.equal(3);
    });
  });

  describe('completeReassignment', () => {
    const moving = { adding: [4], removing: [1] }; // [1,2,3] -> [2,3,4]

    it('waits while an adding replica is not in the ISR (behind, or its broker dead)', () => {
      expect(completeReassignment(state([2, 3, 4, 1], 2, [1, 2, 3]), moving, alive(1, 2, 3, 4))).to.equal(null);
      expect(completeReassignment(state([2, 3, 4, 1], 2, [1, 2, 3]), moving, alive(1, 2, 3))).to.equal(null);
    });

    it('adding replicas in sync: replicas become the target, the ISR drops the removed; the leader stays, its epoch bumped', () => {
      expect(completeReassignment(state([2, 3, 4, 1], 2, [1, 2, 3, 4]), moving, alive(1, 2, 3, 4)))
        .to.deep.equal(state([2, 3, 4], 2, [2, 3, 4], 6, 10));
    });

    it('the leader being removed: leadership moves to the first target replica in the ISR, epoch bumped once', () => {
      expect(completeReassignment(state([2, 3, 4, 1], 1, [1, 3, 4]), moving, alive(1, 2, 3, 4)))
        .to.deep.equal(state([2, 3, 4], 3, [3, 4], 6, 10));
    });

    it('a reassignment that only removes completes as soon as some ISR member is left; never to an empty ISR', () => {
      expect(completeReassignment(state([1, 2, 3], 1, [1, 3]), { adding: [], removing: [3] }, alive(1, 2, 3)))
        .to.deep.equal(state([1, 2], 1, [1], 6, 10));
      expect(completeReassignment(state([2, 1], 1, [1]), { adding: [], removing: [1] }, alive(1, 2))).to.equal(null);
    });

    it('pure additions: replicas grow, nothing else changes but the partition epoch', () => {
      expect(completeReassignment(state([1, 2], 1, [1, 2]), { adding: [2], removing: [] }, alive(1, 2)))
        .to.deep.equal(state([1, 2], 1, [1, 2], 5, 10));
    });
  });

  describe('cancel (PartitionReassignmentRevert, then the ISR and leader fitted to the original replicas)', () => {
    it('reverts to the original replicas and the ISR without the adding replicas', () => {
      expect(revertReassignment([2, 3, 4, 1], [1, 2, 3, 4], { adding: [4], removing: [1] }))
        .to.deep.equal({ replicas: [2, 3, 1], isr: [1, 2, 3], unclean: false });
    });

    it('unclean when only adding replicas are in sync: the first original replica becomes the ISR', () => {
      expect(revertReassignment([4, 1], [4], { adding: [4], removing: [1] })).to.deep.equal({ replicas: [1], isr: [1], unclean: true });
    });

    it('the controller drops the adding replicas from the ISR and re-elects when one of them led', () => {
      expect(fitToReplicas(state([2, 3, 1], 4, [4, 2, 3]), alive(1, 2, 3, 4), false)).to.deep.equal(state([2, 3, 1], 2, [2, 3], 6, 10));
      expect(fitToReplicas(state([2, 3, 1], 2, [2, 4]), alive(1, 2, 3, 4), false)).to.deep.equal(state([2, 3, 1], 2, [2], 5, 10));
      expect(fitToReplicas(state([2, 3, 1], 2, [2, 3]), alive(1, 2, 3, 4), false)).to.equal(null);
    });
  });
});

/** A MetadataCache holding one topic, as planRound reads it. */
function cacheOf(live: number[], topic: TopicAssignment, states: StoredState[]): MetadataCache {
  return {
    brokers: () => live.map((brokerId) => ({ brokerId, incarnationId: 'x', endpoints: [], rack: null })),
    topics: () => [topic],
    partitionState: (name: string, partition: number) => (name === topic.name ? states[partition] : undefined),
    topicModRevision: () => 42,
  } as unknown as MetadataCache;
}

describe('planRound with reassignments', () => {
  const topic: TopicAssignment = {
    name: 't', id: 'ab'.repeat(16), replicas: [[2, 3, 1], [1, 2]], configs: {}, reassignments: { 0: { adding: [3], removing: [1] } },
  };

  it('a reassignment whose adding replica is not in sync (its broker dead or behind) writes nothing', () => {
    const states = [{ leader: 1, leaderEpoch: 0, isr: [1, 2], partitionEpoch: 0 }, { leader: 1, leaderEpoch: 0, isr: [1, 2], partitionEpoch: 0 }];
    expect(planRound(cacheOf([1, 2], topic, states), () => false)).to.deep.equal([]);
    expect(planRound(cacheOf([1, 2, 3], topic, states), () => false)).to.deep.equal([]);
  });

  it('once it is in sync: the topic and the partition state in one transaction, conditioned on both as read', () => {
    const states = [{ leader: 1, leaderEpoch: 0, isr: [1, 2, 3], partitionEpoch: 2 }, { leader: 1, leaderEpoch: 0, isr: [1, 2], partitionEpoch: 0 }];
    const batches = planRound(cacheOf([1, 2, 3], topic, states), () => false);
    expect(batches.map((b) => b.ops)).to.deep.equal([[
      { type: 'topicUnchanged', name: 't', modRevision: 42 },
      { type: 'putTopic', topic: { name: 't', id: topic.id, replicas: [[2, 3], [1, 2]], configs: {} } },
      { type: 'putPartitionState', topicId: topic.id, partition: 0, expectedPartitionEpoch: 2, state: { leader: 2, leaderEpoch: 1, isr: [2, 3] } },
    ]]);
  });

  it('a cancelled reassignment (replicas cut, ISR still holding the dropped one): the ISR fitted to the replicas', () => {
    const cancelled: TopicAssignment = { name: 't', id: topic.id, replicas: [[1, 2], [1, 2]], configs: {} };
    const states = [{ leader: 3, leaderEpoch: 4, isr: [3, 1, 2], partitionEpoch: 7 }, { leader: 1, leaderEpoch: 0, isr: [1, 2], partitionEpoch: 0 }];
    const ops = planRound(cacheOf([1, 2, 3], cancelled, states), () => false).flatMap((b) => b.ops);
    expect(ops).to.deep.equal([
      { type: 'topicUnchanged', name: 't', modRevision: 42 },
      { type: 'putPartitionState', topicId: topic.id, partition: 0, expectedPartitionEpoch: 7, state: { leader: 1, leaderEpoch: 5, isr: [1, 2] } },
    ]);
  });
});
