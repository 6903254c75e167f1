// The state gauges in a cluster of two brokers: partitions hosted and led split between them, one
// active controller, and under-replicated partitions on the leader once its follower is gone.
import { expect } from 'chai';
import { Kafka, logLevel } from 'kafkajs';
import { startCluster, type RunningCluster } from '../../src/local-cluster';
import { sample } from '../helpers/prometheus';

describe('metrics/state gauges in a cluster', function () {
  this.timeout(60_000);
  let cluster: RunningCluster;

  before(async () => {
    cluster = await startCluster({ brokers: 2, logLevel: 'silent', config: { 'replica.lag.time.max.ms': '1000' } });
  });

  after(async () => {
    await cluster?.close();
  });

  it('counts hosted and led partitions per broker, and a leader\'s partition as under-replicated once its follower stops', async () => {
    const topic = 'state-replicated';
    const kafka = new Kafka({ brokers: cluster.bootstrap.split(','), logLevel: logLevel.NOTHING, retry: { retries: 10, initialRetryTime: 100 } });
    const admin = kafka.admin();
    await admin.connect();
    let leaderId: number;
    try {
      await admin.createTopics({ topics: [{ topic, numPartitions: 2, replicationFactor: 2 }], waitForLeaders: true });
      leaderId = (await admin.fetchTopicMetadata({ topics: [topic] })).topics[0].partitions.find((p) => p.partitionId === 0)!.leader;
    } finally {
      await admin.disconnect();
    }
    const scrape = async (nodeId: number) => cluster.brokers.find((b) => b.broker.nodeId === nodeId)!.broker.metrics.render();
    const ids = cluster.brokers.map((b) => b.broker.nodeId);
    const texts = await Promise.all(ids.map(scrape));
    // Both brokers host both partitions of the topic; each partition is led by exactly one of them.
    for (const [i, text] of texts.entries()) {
      const local = [...cluster.brokers[i].broker.replicas.allPartitions()];
      expect(local.filter((p) => p.topic === topic)).to.have.length(2);
      expect(sample(text, 'kafka_server_replicamanager_partitioncount')).to.equal(local.length);
      expect(sample(text, 'kafka_server_replicamanager_underreplicatedpartitions')).to.equal(0);
      expect(sample(text, 'kafka_log_log_size', { topic, partition: '0' })).to.equal(0);
    }
    const leaders = texts.map((t) => sample(t, 'kafka_server_replicamanager_leadercount')!);
    const allPartitions = cluster.brokers[0].broker.controller.topics().reduce((n, t) => n + t.partitions.length, 0);
    expect(leaders[0] + leaders[1]).to.equal(allPartitions);
    expect(texts.map((t) => sample(t, 'kafka_controller_kafkacontroller_activecontrollercount')).sort()).to.deep.equal([0, 1]);

    // The follower of partition 0 stops: the leader's ISR for it shrinks to itself.
    const follower = cluster.brokers.find((b) => b.broker.nodeId !== leaderId)!;
    await follower.close();
    const leader = cluster.brokers.find((b) => b.broker.nodeId === leaderId)!.broker;
    // Every replicated partition led here (the follower's leaderships move here too), once their ISRs shrank.
    const replicatedLedHere = () => [...leader.replicas.allPartitions()]
      .filter((p) => p.role?.kind !== 'follower' && leader.controller.topic(p.topic)!.partitions[p.index].replicas.length > 1).length;
    let underReplicated: number | undefined;
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      underReplicated = sample(await scrape(leaderId), 'kafka_server_replicamanager_underreplicatedpartitions');
      if (underReplicated === replicatedLedHere()) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(underReplicated).to.equal(replicatedLedHere());
    expect(underReplicated).to.be.at.least(2); // the topic's two partitions at least
  });
});
