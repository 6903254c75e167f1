// What one auto leader rebalance pass writes (planPreferredElections), from a metadata view.
import { expect } from 'chai';
import { planPreferredElections } from '../../src/cluster/etcd/leader-balancer';
import type { BrokerRegistration, PartitionState, TopicAssignment } from '../../src/cluster/etcd/layout';

function view(live: number[], topics: { topic: TopicAssignment; states: (PartitionState | undefined)[]; modRevision: number }[]) {
  return {
    brokers: () => live.map((brokerId) => ({ brokerId }) as BrokerRegistration),
    topics: () => topics.map((t) => t.topic),
    topicModRevision: (name: string) => topics.find((t) => t.topic.name === name)?.modRevision,
    partitionState: (name: string, partition: number) => topics.find((t) => t.topic.name === name)?.states[partition],
  };
}
const topic = (name: string, replicas: number[][]): TopicAssignment => ({ name, id: `${name}-id`, replicas, configs: {} });
const state = (leader: number, isr: number[], partitionEpoch = 3): PartitionState => ({ leader, leaderEpoch: 7, isr, partitionEpoch });

describe('cluster/etcd leader balancer (auto leader rebalance)', () => {
  it('elects the preferred replica where it is alive, in sync and not leading; one fenced write each', () => {
    const planned = planPreferredElections(view([1, 2, 3], [{
      topic: topic('t', [[1, 2, 3], [2, 3, 1], [3, 1, 2], [1, 2, 3]]),
      states: [state(2, [1, 2, 3], 9), state(2, [2, 3, 1]), state(1, [1, 2]), undefined],
      modRevision: 42,
    }]));
    // Partition 0: 1 takes over; 1 leads already (its preferred); 2's preferred 3 is out of sync; 3 has no state yet.
    expect(planned).to.deep.equal([{
      topic: 't', partition: 0, oldLeader: 2, newLeader: 1, leaderEpoch: 8,
      ops: [
        { type: 'topicUnchanged', name: 't', modRevision: 42 },
        { type: 'putPartitionState', topicId: 't-id', partition: 0, expectedPartitionEpoch: 9, state: { leader: 1, leaderEpoch: 8, isr: [1, 2, 3] } },
      ],
    }]);
  });

  it('leaves a dead preferred replica, and a leaderless partition (the active controller\'s), alone', () => {
    expect(planPreferredElections(view([2, 3], [{ topic: topic('t', [[1, 2, 3]]), states: [state(2, [1, 2, 3])], modRevision: 1 }]))).to.deep.equal([]);
    // Leaderless with its preferred replica dead: a PREFERRED election would elect 2, not the preferred one.
    expect(planPreferredElections(view([2, 3], [{ topic: topic('t', [[1, 2, 3]]), states: [state(-1, [1, 2])], modRevision: 1 }]))).to.deep.equal([]);
  });

  it('covers every topic', () => {
    const planned = planPreferredElections(view([1, 2], [
      { topic: topic('a', [[1, 2]]), states: [state(2, [1, 2])], modRevision: 5 },
      { topic: topic('b', [[2, 1], [1, 2]]), states: [state(1, [1, 2]), state(2, [1, 2])], modRevision: 6 },
    ]));
    expect(planned.map((e) => [e.topic, e.partition, e.newLeader])).to.deep.equal([['a', 0, 1], ['b', 0, 2], ['b', 1, 1]]);
  });
});
