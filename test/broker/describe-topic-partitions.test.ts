// DescribeTopicPartitions (key 75) on the wire: topics sorted and paged by partition count with a
// cursor, the broker's cap on a page, errors per topic and for a bad cursor.
import { expect } from 'chai';
import { ApiKey } from '../../src/protocol/generated';
import type { DescribeTopicPartitionsResponse } from '../../src/protocol/generated/DescribeTopicPartitionsResponse';
import { ErrorCode } from '../../src/common/errors';
import { ZERO_UUID } from '../../src/protocol/primitives';
import { RawClient } from '../helpers/raw-client';
import { withBroker } from '../helpers/broker';

/** The broker's cap on a page, below the request's default of 2000. */
const PAGE_CAP = 5;
const TOPICS = { 'dtp-b': 2, 'dtp-a': 3, 'dtp-c': 1 };

/** No authorizer: every operation a topic supports (READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE, DESCRIBE_CONFIGS, ALTER_CONFIGS). */
const ALL_TOPIC_OPERATIONS = (1 << 3) | (1 << 4) | (1 << 5) | (1 << 6) | (1 << 7) | (1 << 8) | (1 << 10) | (1 << 11);

describe('DescribeTopicPartitions', function () {
  this.timeout(20000);
  const broker = withBroker({ config: { 'max.request.partition.size.limit': String(PAGE_CAP) } });
  let c: RawClient;

  before(async () => {
    for (const [name, numPartitions] of Object.entries(TOPICS)) {
      const created = await broker.current().broker.controller.createTopic({ name, numPartitions, replicationFactor: 1, assignments: [], configs: {} }, false);
      expect(created.errorCode).to.equal(ErrorCode.NONE);
    }
    c = await RawClient.connect(broker.current().port);
  });
  after(() => c.close());

  const describe75 = (topics: string[], responsePartitionLimit: number, cursor: { topicName: string; partitionIndex: number } | null = null) =>
    c.request<DescribeTopicPartitionsResponse>(ApiKey.DescribeTopicPartitions, 0, { topics: topics.map((name) => ({ name })), responsePartitionLimit, cursor });
  /** Each topic as [name, error, partition indexes], and the next cursor. */
  const page = (res: DescribeTopicPartitionsResponse) => ({
    topics: res.topics.map((t) => [t.name, t.errorCode, t.partitions.map((p) => p.partitionIndex)]),
    next: res.nextCursor && [res.nextCursor.topicName, res.nextCursor.partitionIndex],
  });

  /** Where the test topics start among all topics (__consumer_offsets sorts before them). */
  const FROM_DTP = { topicName: 'dtp-a', partitionIndex: 0 };

  it('describes every topic when none is named, sorted by name, internal ones too', async () => {
    const res = await describe75([], 100);
    const offsets = broker.current().broker.controller.topic('__consumer_offsets')!;
    expect(offsets.partitions.length).to.be.greaterThan(PAGE_CAP);
    expect(page(res)).to.deep.equal({ topics: [['__consumer_offsets', 0, [0, 1, 2, 3, 4]]], next: ['__consumer_offsets', PAGE_CAP] });
    expect(res.topics[0]).to.deep.include({ topicId: offsets.id, isInternal: true });
  });

  it('describes each partition in full, from the cursor on', async () => {
    const res = await describe75([], 100, FROM_DTP);
    const nodeId = broker.current().broker.nodeId;
    // The broker's cap (5 partitions) ends the page with dtp-b, and dtp-c follows.
    expect(page(res)).to.deep.equal({ topics: [['dtp-a', 0, [0, 1, 2]], ['dtp-b', 0, [0, 1]]], next: ['dtp-c', 0] });
    const a = res.topics[0];
    expect(a).to.deep.include({ topicId: broker.current().broker.controller.topic('dtp-a')!.id, isInternal: false, topicAuthorizedOperations: ALL_TOPIC_OPERATIONS });
    expect(a.partitions[1]).to.deep.equal({
      errorCode: 0, partitionIndex: 1, leaderId: nodeId, leaderEpoch: 0, replicaNodes: [nodeId], isrNodes: [nodeId],
      eligibleLeaderReplicas: [], lastKnownElr: [], offlineReplicas: [],
    });
  });

  it('pages with the cursor: cut inside a topic, the cursor names its next partition; the last page has none', async () => {
    const first = await describe75([], 4, FROM_DTP);
    expect(page(first)).to.deep.equal({ topics: [['dtp-a', 0, [0, 1, 2]], ['dtp-b', 0, [0]]], next: ['dtp-b', 1] });
    const second = await describe75([], 4, first.nextCursor);
    expect(page(second)).to.deep.equal({ topics: [['dtp-b', 0, [1]], ['dtp-c', 0, [0]]], next: null });
  });

  it('takes at least one partition a page, and at most the broker\'s max.request.partition.size.limit', async () => {
    expect(page(await describe75(['dtp-a'], 0))).to.deep.equal({ topics: [['dtp-a', 0, [0]]], next: ['dtp-a', 1] });
    expect(page(await describe75([], 2000, FROM_DTP)).topics.flatMap((t) => t[2])).to.have.length(PAGE_CAP);
  });

  it('answers named topics once each, sorted, with an error for one that does not exist and for a name no topic may have', async () => {
    const res = await describe75(['dtp-c', 'missing', 'dtp-a', 'bad name!', 'dtp-c'], 100);
    expect(page(res)).to.deep.equal({
      topics: [['bad name!', ErrorCode.INVALID_TOPIC_EXCEPTION, []], ['dtp-a', 0, [0, 1, 2]], ['dtp-c', 0, [0]], ['missing', ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, []]],
      next: null,
    });
    expect(res.topics[3].topicId).to.equal(ZERO_UUID);
  });

  it('starts at the cursor\'s topic, leaving out names before it; a topic that fills the page leaves the cursor on the next one', async () => {
    expect(page(await describe75(['dtp-a', 'dtp-b', 'dtp-c'], 2, { topicName: 'dtp-b', partitionIndex: 0 }))).to.deep.equal({
      topics: [['dtp-b', 0, [0, 1]]], next: ['dtp-c', 0],
    });
  });

  it('refuses a cursor on a topic not named, or on a negative partition: INVALID_REQUEST for every named topic', async () => {
    for (const cursor of [{ topicName: 'dtp-b', partitionIndex: 0 }, { topicName: 'dtp-a', partitionIndex: -1 }]) {
      const res = await describe75(['dtp-a', 'dtp-c'], 100, cursor);
      expect(page(res), JSON.stringify(cursor)).to.deep.equal({
        topics: [['dtp-a', ErrorCode.INVALID_REQUEST, []], ['dtp-c', ErrorCode.INVALID_REQUEST, []]], next: null,
      });
    }
  });
});
