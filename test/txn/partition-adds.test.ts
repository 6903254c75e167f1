// The partition adds of transaction version 2 writes, batched per producer: the adds of one turn go as
// one call, those asked while it runs go as the next, and the coordinator's answer becomes the writer's.
import { expect } from 'chai';
import { ErrorCode } from '../../src/common/errors';
import { TxnPartitionAdds } from '../../src/txn/partition-adds';
import type { TopicPartition } from '../../src/txn/transaction-metadata';

describe('txn/partition-adds', () => {
  it('sends the adds of one turn as one call per producer, and those asked meanwhile as the next', async () => {
    const calls: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const adds = new TxnPartitionAdds(async (transactionalId, producerId, producerEpoch, partitions: TopicPartition[]) => {
      calls.push(`${transactionalId} ${producerId}/${producerEpoch} ${partitions.map((p) => `${p.topic}-${p.partition}`).join(',')}`);
      if (calls.length === 1) await held;
      return ErrorCode.NONE;
    });
    const first = [adds.add('t', 1, 0, { topic: 'a', partition: 0 }), adds.add('t', 1, 0, { topic: 'a', partition: 1 }),
      adds.add('u', 2, 0, { topic: 'a', partition: 0 })];
    await new Promise((resolve) => setImmediate(resolve));
    const later = [adds.add('t', 1, 0, { topic: 'b', partition: 0 }), adds.add('t', 1, 0, { topic: 'b', partition: 1 })];
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(calls).to.deep.equal(['t 1/0 a-0,a-1', 'u 2/0 a-0']);
    release();
    expect(await Promise.all([...first, ...later])).to.deep.equal([0, 0, 0, 0, 0]);
    expect(calls).to.deep.equal(['t 1/0 a-0,a-1', 'u 2/0 a-0', 't 1/0 b-0,b-1']);
  });

  it('answers the writer\'s errors: a fenced producer INVALID_PRODUCER_EPOCH, "not now" NOT_ENOUGH_REPLICAS, a failure UNKNOWN_SERVER_ERROR', async () => {
    const answers = [ErrorCode.PRODUCER_FENCED, ErrorCode.CONCURRENT_TRANSACTIONS, ErrorCode.INVALID_PRODUCER_ID_MAPPING];
    const adds = new TxnPartitionAdds(async () => {
      const next = answers.shift();
      if (next === undefined) throw new Error('the coordinator failed');
      return next;
    });
    const tp = { topic: 'a', partition: 0 };
    expect(await adds.add('t', 1, 0, tp)).to.equal(ErrorCode.INVALID_PRODUCER_EPOCH);
    expect(await adds.add('t', 1, 0, tp)).to.equal(ErrorCode.NOT_ENOUGH_REPLICAS);
    expect(await adds.add('t', 1, 0, tp)).to.equal(ErrorCode.INVALID_PRODUCER_ID_MAPPING);
    expect(await adds.add('t', 1, 0, tp)).to.equal(ErrorCode.UNKNOWN_SERVER_ERROR);
  });
});
