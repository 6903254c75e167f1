import { expect } from 'chai';
import { Kafka, logLevel, type Admin, type Producer } from 'kafkajs';
import { ApiKey } from '../../src/protocol/generated';
import type { OffsetForLeaderEpochResponse } from '../../src/protocol/generated/OffsetForLeaderEpochResponse';
import { ErrorCode } from '../../src/common/errors';
import { RawClient } from '../helpers/raw-client';
import { withBroker } from '../helpers/broker';

describe('OffsetForLeaderEpoch', function () {
  this.timeout(20000);
  const broker = withBroker();
  let c: RawClient;
  let admin: Admin;
  let producer: Producer;

  before(async () => {
    const kafka = new Kafka({ brokers: [broker.current().bootstrap], clientId: 'epoch-test', logLevel: logLevel.NOTHING });
    admin = kafka.admin();
    producer = kafka.producer();
    await Promise.all([admin.connect(), producer.connect()]);
    await admin.createTopics({ topics: ['empty', 'written', 'late'].map((topic) => ({ topic, numPartitions: 1 })) });
    c = await RawClient.connect(broker.current().port);
  });
  after(async () => {
    c.close();
    await Promise.all([admin.disconnect(), producer.disconnect()]);
  });

  const write = (topic: string, n: number) =>
    producer.send({ topic, acks: -1, messages: Array.from({ length: n }, (_, i) => ({ value: `v${i}` })) });
  const bump = (topic: string, epoch: number) => broker.current().broker.store!.setLeaderEpoch(topic, 0, epoch);

  async function endOffset(topic: string, leaderEpoch: number, currentLeaderEpoch = -1, version = 4) {
    const res = await c.request<OffsetForLeaderEpochResponse>(ApiKey.OffsetForLeaderEpoch, version, {
      replicaId: -1, topics: [{ topic, partitions: [{ partition: 0, currentLeaderEpoch, leaderEpoch }] }],
    });
    const p = res.topics[0].partitions[0];
    expect(p.partition).to.equal(0);
    return [p.errorCode, p.leaderEpoch, Number(p.endOffset)];
  }

  it('answers an empty log with the current epoch ending at 0, as Kafka does', async () => {
    expect(await endOffset('empty', 0)).to.deep.equal([ErrorCode.NONE, 0, 0]);
    expect(await endOffset('empty', 0, 0)).to.deep.equal([ErrorCode.NONE, 0, 0]);
    expect(await endOffset('empty', 1)).to.deep.equal([ErrorCode.NONE, -1, -1]);
    expect(await endOffset('empty', -1)).to.deep.equal([ErrorCode.NONE, -1, -1]);
  });

  it('answers the end of each epoch as the log moves through epochs', async () => {
    await write('written', 3);
    expect(await endOffset('written', 0)).to.deep.equal([ErrorCode.NONE, 0, 3]);
    bump('written', 2);
    // Epoch 2 starts at the log end offset the moment it begins, before anything is written in it.
    expect(await endOffset('written', 0)).to.deep.equal([ErrorCode.NONE, 0, 3]);
    expect(await endOffset('written', 1)).to.deep.equal([ErrorCode.NONE, 0, 3]);
    expect(await endOffset('written', 2)).to.deep.equal([ErrorCode.NONE, 2, 3]);
    expect(await endOffset('written', 3)).to.deep.equal([ErrorCode.NONE, -1, -1]);
    await write('written', 2);
    expect(await endOffset('written', 0)).to.deep.equal([ErrorCode.NONE, 0, 3]);
    expect(await endOffset('written', 1)).to.deep.equal([ErrorCode.NONE, 0, 3]);
    expect(await endOffset('written', 2)).to.deep.equal([ErrorCode.NONE, 2, 5]);
    // v0 has no leader epoch in the answer.
    expect(await endOffset('written', 1, -1, 0)).to.deep.equal([ErrorCode.NONE, -1, 3]);
    expect(await endOffset('written', 2, -1, 2)).to.deep.equal([ErrorCode.NONE, 2, 5]);
  });

  it('answers an epoch older than the log with the first known start offset', async () => {
    bump('late', 3);
    await write('late', 4);
    expect(await endOffset('late', 1)).to.deep.equal([ErrorCode.NONE, 1, 0]);
    expect(await endOffset('late', 3)).to.deep.equal([ErrorCode.NONE, 3, 4]);
  });

  it('checks the current leader epoch and unknown partitions', async () => {
    bump('empty', 2);
    expect(await endOffset('empty', 0, 1)).to.deep.equal([ErrorCode.FENCED_LEADER_EPOCH, -1, -1]);
    expect(await endOffset('empty', 0, 3)).to.deep.equal([ErrorCode.UNKNOWN_LEADER_EPOCH, -1, -1]);
    expect(await endOffset('empty', 2, 2)).to.deep.equal([ErrorCode.NONE, 2, 0]);
    // Epoch 0 left no entry (nothing was written in it): it answers itself, ending where epoch 2 starts.
    expect(await endOffset('empty', 0, 2)).to.deep.equal([ErrorCode.NONE, 0, 0]);
    // Before v2 there is no current leader epoch to check.
    expect(await endOffset('empty', 2, -1, 1)).to.deep.equal([ErrorCode.NONE, 2, 0]);
    expect(await endOffset('no-such-topic', 0)).to.deep.equal([ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, -1, -1]);
    const res = await c.request<OffsetForLeaderEpochResponse>(ApiKey.OffsetForLeaderEpoch, 3, {
      replicaId: -1, topics: [{ topic: 'written', partitions: [{ partition: 1, currentLeaderEpoch: -1, leaderEpoch: 0 }, { partition: 0, currentLeaderEpoch: -1, leaderEpoch: 0 }] }],
    });
    expect(res.topics[0].partitions.map((p) => [p.partition, p.errorCode, Number(p.endOffset)])).to.deep.equal([
      [1, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, -1], [0, ErrorCode.NONE, 3],
    ]);
  });
});
