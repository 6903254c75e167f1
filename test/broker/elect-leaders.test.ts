// ElectLeaders on a single broker: it is every partition's one replica and leads it, so no election
// is needed; unknown topics and partitions, a bad election type and the all-partitions form.
import { expect } from 'chai';
import { Kafka, logLevel } from 'kafkajs';
import { ApiKey } from '../../src/protocol/generated';
import type { ElectLeadersResponse } from '../../src/protocol/generated/ElectLeadersResponse';
import { ErrorCode } from '../../src/common/errors';
import { RawClient } from '../helpers/raw-client';
import { withBroker } from '../helpers/broker';

const NOT_NEEDED = { errorCode: ErrorCode.ELECTION_NOT_NEEDED, errorMessage: 'Leader election not needed for topic partition.' };

describe('ElectLeaders (single broker)', function () {
  this.timeout(20000);
  const broker = withBroker();
  let c: RawClient;

  before(async () => {
    const admin = new Kafka({ brokers: [broker.current().bootstrap], logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: 'alpha', numPartitions: 2 }, { topic: 'beta', numPartitions: 1 }] });
    await admin.disconnect();
    c = await RawClient.connect(broker.current().port);
  });
  after(() => c.close());

  const elect = (version: number, electionType: number, topicPartitions: { topic: string; partitions: number[] }[] | null) =>
    c.request<ElectLeadersResponse>(ApiKey.ElectLeaders, version, { electionType, topicPartitions, timeoutMs: 30000 });
  const results = (res: ElectLeadersResponse) =>
    res.replicaElectionResults.map((t) => [t.topic, t.partitionResult.map((p) => ({ partition: p.partitionId, errorCode: p.errorCode, errorMessage: p.errorMessage }))]);

  it('PREFERRED and UNCLEAN: ELECTION_NOT_NEEDED for every partition (the broker leads them all)', async () => {
    for (const [version, type] of [[0, 0], [1, 0], [2, 0], [1, 1], [2, 1]]) {
      const res = await elect(version, type, [{ topic: 'alpha', partitions: [1, 0] }, { topic: 'beta', partitions: [0] }]);
      if (version > 0) expect(res.errorCode, `v${version}`).to.equal(ErrorCode.NONE);
      expect(results(res), `v${version} type ${type}`).to.deep.equal([
        ['alpha', [{ partition: 1, ...NOT_NEEDED }, { partition: 0, ...NOT_NEEDED }]],
        ['beta', [{ partition: 0, ...NOT_NEEDED }]],
      ]);
    }
  });

  it('unknown topics and partitions: UNKNOWN_TOPIC_OR_PARTITION with Kafka\'s messages', async () => {
    const res = await elect(2, 0, [{ topic: 'nope', partitions: [0] }, { topic: 'alpha', partitions: [2, -1] }]);
    expect(results(res)).to.deep.equal([
      ['nope', [{ partition: 0, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: 'No such topic as nope' }]],
      ['alpha', [
        { partition: 2, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: 'No such partition as alpha-2' },
        { partition: -1, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: 'No such partition as alpha--1' },
      ]],
    ]);
  });

  it('a partition asked twice is answered twice', async () => {
    const res = await elect(2, 0, [{ topic: 'beta', partitions: [0, 0] }]);
    expect(results(res)).to.deep.equal([['beta', [{ partition: 0, ...NOT_NEEDED }, { partition: 0, ...NOT_NEEDED }]]]);
  });

  it('all partitions (null): every topic listed, none of its partitions (no election was needed)', async () => {
    const res = await elect(2, 0, null);
    expect(res.errorCode).to.equal(ErrorCode.NONE);
    const topics = broker.current().broker.controller.topics().map((t) => t.name);
    expect(results(res)).to.deep.equal(topics.map((t) => [t, []]));
    expect(topics).to.include.members(['alpha', 'beta']);
  });

  it('an unknown election type: INVALID_REQUEST at the top and for each partition asked', async () => {
    const res = await elect(2, 2, [{ topic: 'alpha', partitions: [0] }]);
    expect(res.errorCode).to.equal(ErrorCode.INVALID_REQUEST);
    expect(results(res)).to.deep.equal([['alpha', [{ partition: 0, errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'Unknown election type 2' }]]]);
    const all = await elect(1, -1, null);
    expect([all.errorCode, all.replicaElectionResults]).to.deep.equal([ErrorCode.INVALID_REQUEST, []]);
  });

  it('an empty list: nothing to do', async () => {
    const res = await elect(2, 1, []);
    expect([res.errorCode, res.replicaElectionResults]).to.deep.equal([ErrorCode.NONE, []]);
  });
});
