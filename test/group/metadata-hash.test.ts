// The consumer group metadata hash (KIP-1101) against what Kafka's Utils.computeTopicHash and
// computeGroupHash give, computed with hash4j 0.22 (the library Kafka uses) for these topics.
import { expect } from 'chai';
import type { TopicRecord } from '../../src/cluster/metadata-store';
import { groupHash, partitionRacks, topicHash, type RackOf } from '../../src/group/metadata-hash';

const topic = (name: string, id: string, replicas: number[][]): TopicRecord => ({
  name, id, configs: {}, partitions: replicas.map((r, index) => ({ index, replicas: r, leader: r[0], leaderEpoch: 0, isr: r })),
});
const hash = (t: TopicRecord, rackOf: RackOf = () => null): bigint => topicHash(t, partitionRacks(t, rackOf));

describe('consumer group metadata hash', () => {
  const orders = topic('orders', '0123456789abcdef0123456789abcdef', [[1], [1], [1]]);
  const payments = topic('payments-é', 'fedcba9876543210fedcba9876543210', Array.from({ length: 120 }, () => [1]));

  it('hashes a topic as Kafka does: id, name (UTF-16), partition count and each partition', () => {
    expect(hash(orders)).to.equal(-8854699333701640572n);
    expect(hash(payments)).to.equal(1755864002043098629n);
  });

  it('hashes each partition\'s replicas\' racks, sorted; brokers without one add nothing', () => {
    const racked = topic('t', '00000000000000010000000000000002', [[1, 2], [3]]);
    const racks = new Map([[1, 'rack-b'], [2, 'rack-a'], [3, null]]);
    expect(hash(racked, (nodeId) => racks.get(nodeId))).to.equal(1184746207931291939n);
  });

  it('hashes the group over its topics\' hashes in the order of their names; 0 for none', () => {
    const expected = 2175958860641854793n;
    expect(groupHash(new Map([['orders', hash(orders)], ['payments-é', hash(payments)]]))).to.equal(expected);
    expect(groupHash(new Map([['payments-é', hash(payments)], ['orders', hash(orders)]]))).to.equal(expected);
    expect(groupHash(new Map())).to.equal(0n);
  });
});
