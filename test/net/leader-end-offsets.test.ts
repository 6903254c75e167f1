// LeaderEndOffsets (DescribeShareGroupOffsets' end offsets): read here for a partition this broker
// leads, asked of the leader with ListOffsets otherwise (a real broker here), and the errors of a
// partition with no leader to ask.
import { expect } from 'chai';
import { Kafka, logLevel } from 'kafkajs';
import type { BrokerEndpoint } from '../../src/cluster/controller';
import type { TopicRecord } from '../../src/cluster/metadata-store';
import { ErrorCode } from '../../src/common/errors';
import { LeaderEndOffsets } from '../../src/net/leader-end-offsets';
import { withBroker } from '../helpers/broker';

const SELF = 7;

describe('net: LeaderEndOffsets', function () {
  this.timeout(30_000);
  const leader = withBroker();
  let endOffsets: LeaderEndOffsets;
  let locallyAsked: string[];

  before(async () => {
    const kafka = new Kafka({ brokers: [leader.current().bootstrap], clientId: 'leader-end-offsets-test', logLevel: logLevel.NOTHING });
    const admin = kafka.admin();
    const producer = kafka.producer();
    await Promise.all([admin.connect(), producer.connect()]);
    await admin.createTopics({ topics: [{ topic: 'orders', numPartitions: 1 }] });
    await producer.send({ topic: 'orders', acks: -1, messages: Array.from({ length: 4 }, (_, i) => ({ value: `v${i}` })) });
    await Promise.all([admin.disconnect(), producer.disconnect()]);
    const running = leader.current();
    const leaderId = running.broker.nodeId;
    // The metadata as this broker (SELF) sees it: `orders` led by the running broker, `ghost` too (which
    // the leader does not have), `mine` led here, `orphan` by no one.
    const topic = (name: string, leaderOf: number) => ({ name, partitions: [{ index: 0, leader: leaderOf }] }) as unknown as TopicRecord;
    const topics = [topic('orders', leaderId), topic('ghost', leaderId), topic('mine', SELF), topic('orphan', -1)];
    const brokers: BrokerEndpoint[] = [{ nodeId: leaderId, host: running.host, port: running.port, rack: null }];
    locallyAsked = [];
    endOffsets = new LeaderEndOffsets(SELF, { topic: (name) => topics.find((t) => t.name === name), brokers: () => brokers }, {
      latestOffset: async (t, p) => {
        locallyAsked.push(`${t}-${p}`);
        return { errorCode: ErrorCode.NONE, offset: 42n };
      },
    }, { clientId: 'fjord-end-offsets-test', connectTimeoutMs: 5000, requestTimeoutMs: 5000 });
  });
  after(() => endOffsets.close());

  it('asks the leader (ListOffsets LATEST: the high watermark), reads here what this broker leads', async () => {
    expect(await endOffsets.latestOffset('orders', 0)).to.deep.equal({ errorCode: ErrorCode.NONE, offset: 4n });
    expect(await endOffsets.latestOffset('mine', 0)).to.deep.equal({ errorCode: ErrorCode.NONE, offset: 42n });
    expect(locallyAsked).to.deep.equal(['mine-0']);
  });

  it('answers the leader\'s error, UNKNOWN_TOPIC_OR_PARTITION outside the metadata, LEADER_NOT_AVAILABLE without a leader', async () => {
    expect((await endOffsets.latestOffset('ghost', 0)).errorCode).to.equal(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    expect((await endOffsets.latestOffset('orders', 1)).errorCode).to.equal(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    expect((await endOffsets.latestOffset('nope', 0)).errorCode).to.equal(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    expect((await endOffsets.latestOffset('orphan', 0)).errorCode).to.equal(ErrorCode.LEADER_NOT_AVAILABLE);
  });
});
