// The consumer group metadata hash (KIP-1101) against what Kafka's Utils.computeTopicHash and
// computeGroupHash give, computed with hash4j 0.22 (the library Kafka uses) for these topics.
import { expect } from 'chai';
import type { TopicRecord } from '../../src/cluster/metadata-store';
import { groupHash, topicHash } from '../../src/group/metadata-hash';

const topic = (name: string, id: string, partitions: number): TopicRecord => ({
  name, id, configs: {},
  partitions: Array.from({ length: partitions }, (_, index) => ({ index, replicas: [1], leader: 1, leaderEpoch: 0, isr: [1] })),
});

describe('consumer group metadata hash', () => {
  const orders = topic('orders', '0123456789abcdef0123456789abcdef', 3);
  const payments = topic('payments-é', 'fedcba9876543210fedcba9876543210', 120);

  it('hashes a topic as Kafka does: id, name (UTF-16), partition count and each partition', () => {
    expect(topicHash(orders)).to.equal(-8854699333701640572n);
    expect(topicHash(payments)).to.equal(1755864002043098629n);
  });

  it('hashes the group over its topics\' hashes in the order of their names; 0 for none', () => {
    const expected = 2175958860641854793n;
    expect(groupHash(new Map([['orders', topicHash(orders)], ['payments-é', topicHash(payments)]]))).to.equal(expected);
    expect(groupHash(new Map([['payments-é', topicHash(payments)], ['orders', topicHash(orders)]]))).to.equal(expected);
    expect(groupHash(new Map())).to.equal(0n);
  });
});
