// Replication as the brokers of a cluster count it: the leader's bytes in and replication bytes
// out, the follower's replication bytes in, the follower fetches and acks=all's remote time.
import { expect } from 'chai';
import { Kafka, logLevel } from 'kafkajs';
import { startCluster, type RunningCluster } from '../../src/local-cluster';
import { sample } from '../helpers/prometheus';

describe('broker metrics in a cluster', function () {
  this.timeout(60_000);
  let cluster: RunningCluster;

  before(async () => {
    cluster = await startCluster({ brokers: 2, logLevel: 'silent', config: { 'offsets.topic.replication.factor': '2' } });
  });

  after(async () => {
    await cluster?.close();
  });

  it('counts what the leader appended, what it sent its follower and what the follower appended', async () => {
    const topic = 'replicated-metrics';
    const kafka = new Kafka({ brokers: cluster.bootstrap.split(','), logLevel: logLevel.NOTHING, retry: { retries: 10, initialRetryTime: 100 } });
    const admin = kafka.admin();
    await admin.connect();
    const producer = kafka.producer();
    try {
      await admin.createTopics({ topics: [{ topic, numPartitions: 1, replicationFactor: 2 }], waitForLeaders: true });
      await producer.connect();
      for (let i = 0; i < 3; i++) await producer.send({ topic, acks: -1, messages: [{ value: `replicated ${i}` }, { value: 'x'.repeat(100) }] });
      const leaderId = (await admin.fetchTopicMetadata({ topics: [topic] })).topics[0].partitions[0].leader;
      const leader = cluster.brokers.find((b) => b.broker.nodeId === leaderId)!.broker.metrics;
      const follower = cluster.brokers.find((b) => b.broker.nodeId !== leaderId)!.broker.metrics;

      const leaderText = await leader.render();
      const bytesIn = sample(leaderText, 'kafka_server_brokertopicmetrics_bytesin_total', { topic })!;
      expect(bytesIn).to.be.greaterThan(0);
      expect(sample(leaderText, 'kafka_server_brokertopicmetrics_messagesin_total', { topic })).to.equal(6);
      // acks=all answered once the follower had the records: it fetched them, as a follower.
      expect(sample(leaderText, 'kafka_server_brokertopicmetrics_replicationbytesout_total', { topic })).to.equal(bytesIn);
      expect(sample(leaderText, 'kafka_server_brokertopicmetrics_bytesout_total', { topic })).to.equal(0);
      expect(sample(leaderText, 'kafka_network_requestmetrics_requests_total', { request: 'FetchFollower' })).to.be.greaterThan(0);
      expect(sample(leaderText, 'kafka_network_requestmetrics_remotetimems_count', { request: 'Produce' })).to.be.at.least(3);

      const followerText = await follower.render();
      expect(sample(followerText, 'kafka_server_brokertopicmetrics_replicationbytesin_total', { topic })).to.equal(bytesIn);
      // A follower's appends are not bytes in (Kafka counts those from clients only).
      expect(sample(followerText, 'kafka_server_brokertopicmetrics_bytesin_total', { topic })).to.equal(0);
    } finally {
      await producer.disconnect();
      await admin.disconnect();
    }
  });
});
