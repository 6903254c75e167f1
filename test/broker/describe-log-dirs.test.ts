import { expect } from 'chai';
import { Kafka, logLevel } from 'kafkajs';
import { ApiKey } from '../../src/protocol/generated';
import type { DescribeLogDirsResponse } from '../../src/protocol/generated/DescribeLogDirsResponse';
import { ErrorCode } from '../../src/common/errors';
import { RawClient } from '../helpers/raw-client';
import { withBroker } from '../helpers/broker';

describe('DescribeLogDirs', function () {
  this.timeout(20000);
  const broker = withBroker();
  let c: RawClient;

  before(async () => {
    const kafka = new Kafka({ brokers: [broker.current().bootstrap], clientId: 'log-dirs-test', logLevel: logLevel.NOTHING });
    const admin = kafka.admin();
    const producer = kafka.producer();
    await Promise.all([admin.connect(), producer.connect()]);
    await admin.createTopics({ topics: [{ topic: 'alpha', numPartitions: 2 }, { topic: 'beta', numPartitions: 1 }] });
    await producer.send({ topic: 'alpha', acks: -1, messages: Array.from({ length: 10 }, (_, i) => ({ partition: 0, value: `value-${i}` })) });
    await Promise.all([admin.disconnect(), producer.disconnect()]);
    c = await RawClient.connect(broker.current().port);
  });
  after(() => c.close());

  const describeDirs = (version: number, topics: { topic: string; partitions: number[] }[] | null) =>
    c.request<DescribeLogDirsResponse>(ApiKey.DescribeLogDirs, version, { topics });
  // Only our topics: the broker may host internal ones (__consumer_offsets) too.
  const summary = (res: DescribeLogDirsResponse) =>
    res.results[0].topics.filter((t) => t.name === 'alpha' || t.name === 'beta').map((t) => [t.name, t.partitions.map((p) => [p.partitionIndex, Number(p.partitionSize), Number(p.offsetLag), p.isFutureKey])]);

  it('describes every partition of the data dir, with sizes and disk usage', async () => {
    const res = await describeDirs(4, null);
    expect(res.errorCode).to.equal(ErrorCode.NONE);
    expect(res.results).to.have.length(1);
    const dir = res.results[0];
    expect(dir.errorCode).to.equal(ErrorCode.NONE);
    expect(dir.logDir).to.equal(broker.current().broker.config.dataDir);
    const alpha0 = broker.current().broker.replicas.partition('alpha', 0)!.log.size;
    expect(alpha0).to.be.greaterThan(10 * 'value-0'.length);
    expect(summary(res)).to.deep.equal([
      ['alpha', [[0, alpha0, 0, false], [1, 0, 0, false]]],
      ['beta', [[0, 0, 0, false]]],
    ]);
    const hosted = [...new Set(broker.current().broker.replicas.logs.allLogs().map((l) => l.topic))].sort();
    expect(dir.topics.map((t) => t.name).sort()).to.deep.equal(hosted);
    expect(Number(dir.totalBytes)).to.be.greaterThan(0);
    expect(Number(dir.usableBytes)).to.be.greaterThan(0).and.at.most(Number(dir.totalBytes));
  });

  it('describes only the requested partitions we host', async () => {
    const res = await describeDirs(2, [{ topic: 'alpha', partitions: [0, 7] }, { topic: 'nope', partitions: [0] }, { topic: 'beta', partitions: [] }]);
    expect(summary(res)).to.deep.equal([['alpha', [[0, broker.current().broker.replicas.partition('alpha', 0)!.log.size, 0, false]]]]);
    expect(res.results[0].totalBytes, 'no disk usage before v4').to.equal(-1n);
  });

  it('answers at v0 and v3', async () => {
    for (const v of [0, 3]) {
      const res = await describeDirs(v, null);
      expect(res.results.map((r) => [r.errorCode, r.logDir])).to.deep.equal([[ErrorCode.NONE, broker.current().broker.config.dataDir]]);
      expect(summary(res)).to.deep.equal(summary(await describeDirs(4, null)));
    }
  });
});
