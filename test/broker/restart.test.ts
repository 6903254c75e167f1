import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { startBroker } from '../../src/broker';

describe('metadata across restarts', function () {
  this.timeout(20000);
  let dataDir: string;
  before(async () => { dataDir = await mkdtemp(path.join(os.tmpdir(), 'fjord-restart-')); });
  after(async () => { await rm(dataDir, { recursive: true, force: true }); });

  it('keeps the cluster id, topics, topic ids and configs', async () => {
    const first = await startBroker({ dataDir, logLevel: 'silent' });
    const kafka = (bootstrap: string) => new Kafka({ brokers: [bootstrap], logLevel: logLevel.NOTHING });
    let admin = kafka(first.bootstrap).admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: 'kept', numPartitions: 4, configEntries: [{ name: 'max.message.bytes', value: '2048' }] }] });
    const before = await admin.describeCluster();
    const idBefore = first.broker.controller.topic('kept')!.id;
    await admin.disconnect();
    await first.close();

    const second = await startBroker({ dataDir, logLevel: 'silent' });
    admin = kafka(second.bootstrap).admin();
    await admin.connect();
    const after = await admin.describeCluster();
    expect(after.clusterId).to.equal(before.clusterId);
    const meta = await admin.fetchTopicMetadata({ topics: ['kept'] });
    expect(meta.topics[0].partitions).to.have.length(4);
    expect(second.broker.controller.topic('kept')!.id).to.equal(idBefore);
    expect(second.broker.controller.topic('kept')!.configs).to.deep.equal({ 'max.message.bytes': '2048' });
    await admin.disconnect();
    await second.close();
  });
});
