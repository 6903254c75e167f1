// A broker with two log dirs: AlterReplicaLogDirs moves a partition while a producer writes and a
// consumer reads; DescribeLogDirs shows every dir and the future replica; the error cases.
import { expect } from 'chai';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { Kafka, logLevel, type Consumer, type Producer } from 'kafkajs';
import { startBroker, type RunningBroker } from '../../src/broker';
import { ApiKey } from '../../src/protocol/generated';
import type { AlterReplicaLogDirsResponse } from '../../src/protocol/generated/AlterReplicaLogDirsResponse';
import type { DescribeLogDirsResponse } from '../../src/protocol/generated/DescribeLogDirsResponse';
import { ErrorCode } from '../../src/common/errors';
import { RawClient } from '../helpers/raw-client';
import { eventually } from '../helpers/eventually';

describe('AlterReplicaLogDirs and DescribeLogDirs over two log dirs', function () {
  this.timeout(60000);
  let root: string;
  let logDirs: string[];
  let running: RunningBroker | undefined;
  let c: RawClient | undefined;

  const start = async (extra: Record<string, string> = {}) => {
    running = await startBroker({
      logLevel: 'silent',
      config: { 'log.dirs': logDirs.join(','), 'offsets.topic.num.partitions': '2', ...extra },
    });
    c = await RawClient.connect(running.port);
  };
  const stop = async () => {
    c?.close();
    c = undefined;
    await running?.close();
    running = undefined;
  };

  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'fjord-alter-log-dirs-'));
    logDirs = [path.join(root, 'd0'), path.join(root, 'd1')];
  });
  afterEach(async () => {
    await stop();
    fs.rmSync(root, { recursive: true, force: true });
  });

  const alter = (dirs: Array<{ path: string; topics: Array<{ name: string; partitions: number[] }> }>, version = 2) =>
    c!.request<AlterReplicaLogDirsResponse>(ApiKey.AlterReplicaLogDirs, version, { dirs });
  const describeDirs = (topics: Array<{ topic: string; partitions: number[] }> | null) =>
    c!.request<DescribeLogDirsResponse>(ApiKey.DescribeLogDirs, 4, { topics });
  /** Per dir: [dir index, error, [topic, partition, isFuture]...] for the partitions asked. */
  const where = async (topic: string) => (await describeDirs([{ topic, partitions: [0] }])).results.map((r) => [
    logDirs.indexOf(r.logDir), r.errorCode, r.topics.flatMap((t) => t.partitions.map((p) => [t.name, p.partitionIndex, p.isFutureKey])),
  ]);
  const currentDir = (topic: string) => {
    const log = running!.broker.replicas.partition(topic, 0)!.log;
    return running!.broker.replicas.logs.logDirOf(log);
  };

  it('moves a partition between dirs while a producer writes and a consumer reads: nothing lost or duplicated, found there after a restart', async () => {
    await start();
    // Slow enough that the future replica can be seen (the copy reads no more than a second's worth
    // at a time), fast enough to catch up with the producer. A dynamic-only broker config, as in Kafka.
    const rate = { 'replica.alter.log.dirs.io.max.bytes.per.second': '20000' };
    expect(await running!.broker.controller.setBrokerConfigs('', (current) => ({ ...current, ...rate }), false)).to.include({ errorCode: ErrorCode.NONE });
    const kafka = new Kafka({ brokers: [running!.bootstrap], clientId: 'log-dirs-move', logLevel: logLevel.NOTHING });
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: 'moving', numPartitions: 1 }] });
    await admin.disconnect();
    const from = currentDir('moving');
    const to = logDirs.find((d) => d !== from)!;

    const producer: Producer = kafka.producer();
    await producer.connect();
    let sent = 0;
    const sendSome = async (n: number) => {
      for (let i = 0; i < n; i++) {
        await producer.send({ topic: 'moving', acks: -1, messages: [{ value: `message-${sent}-${'x'.repeat(200)}` }] });
        sent++;
      }
    };
    await sendSome(150);

    const seen: Array<{ offset: number; value: string }> = [];
    const consumer: Consumer = kafka.consumer({ groupId: 'log-dirs-reader', maxWaitTimeInMs: 50 });
    await consumer.connect();
    await consumer.subscribe({ topic: 'moving', fromBeginning: true });
    await consumer.run({ eachMessage: async ({ message }) => void seen.push({ offset: Number(message.offset), value: message.value!.toString() }) });

    const started = await alter([{ path: to, topics: [{ name: 'moving', partitions: [0] }] }]);
    expect(started.results).to.deep.equal([{ topicName: 'moving', partitions: [{ partitionIndex: 0, errorCode: ErrorCode.NONE }] }]);
    // Asked again while it moves: NONE, the same move goes on.
    expect((await alter([{ path: to, topics: [{ name: 'moving', partitions: [0] }] }])).results[0].partitions[0].errorCode).to.equal(ErrorCode.NONE);
    const during = await describeDirs([{ topic: 'moving', partitions: [0] }]);
    const fromResult = during.results.find((r) => r.logDir === from)!;
    const toResult = during.results.find((r) => r.logDir === to)!;
    expect(fromResult.topics[0].partitions[0]).to.include({ partitionIndex: 0, isFutureKey: false });
    expect(fromResult.topics[0].partitions[0].offsetLag).to.equal(0n);
    const future = toResult.topics[0].partitions[0];
    expect(future).to.include({ partitionIndex: 0, isFutureKey: true });
    expect(Number(future.offsetLag), 'the future replica is behind the current one').to.be.greaterThan(0);
    expect(Number(future.partitionSize)).to.be.below(Number(fromResult.topics[0].partitions[0].partitionSize));

    const producing = sendSome(150); // goes on during the move
    await eventually(() => currentDir('moving') === to, 'the partition to be in its new dir', 30000);
    await producing;
    await producer.disconnect();
    await eventually(() => seen.length >= sent, 'the consumer to read every message', 20000);
    await consumer.disconnect();
    expect(seen.map((m) => m.offset)).to.deep.equal([...Array(sent).keys()]);
    expect(seen.map((m) => m.value.split('-')[1])).to.deep.equal([...Array(sent).keys()].map(String));
    expect(await where('moving')).to.deep.equal([[logDirs.indexOf(from), 0, []], [logDirs.indexOf(to), 0, [['moving', 0, false]]]]);
    await running!.broker.replicas.logs.deletionsSettled();
    expect(fs.readdirSync(from).filter((f) => f.startsWith('moving-'))).to.deep.equal([]);
    const movedDir = running!.broker.replicas.partition('moving', 0)!.log.dir;
    expect(fs.readdirSync(movedDir).filter((f) => f.endsWith('.snapshot')), 'the producer state is snapshotted in the new dir').to.not.deep.equal([]);

    await stop();
    await start();
    expect(currentDir('moving')).to.equal(to);
    expect(fs.readdirSync(to)).to.include('moving-0');
    const log = running!.broker.replicas.partition('moving', 0)!.log;
    expect([log.logStartOffset, log.logEndOffset]).to.deep.equal([0, sent]);
  });

  it('answers LOG_DIR_NOT_FOUND, KAFKA_STORAGE_ERROR, UNKNOWN_TOPIC_OR_PARTITION and NONE as Kafka does', async () => {
    const offline = path.join(root, 'not-a-dir');
    fs.writeFileSync(offline, 'a file where a log dir should be');
    logDirs.push(offline);
    await start();
    const kafka = new Kafka({ brokers: [running!.bootstrap], clientId: 'log-dirs-errors', logLevel: logLevel.NOTHING });
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: 'stay', numPartitions: 1 }] });
    await admin.disconnect();
    const here = currentDir('stay');

    const res = await alter([
      { path: 'relative/d0', topics: [{ name: 'stay', partitions: [0] }] },
      { path: offline, topics: [{ name: 'other', partitions: [0] }] },
      { path: here, topics: [{ name: 'stay', partitions: [1] }, { name: 'missing', partitions: [0] }, { name: 'other', partitions: [0] }] },
    ], 1);
    const codes = Object.fromEntries(res.results.flatMap((t) => t.partitions.map((p) => [`${t.topicName}-${p.partitionIndex}`, p.errorCode])));
    expect(codes).to.deep.equal({
      'stay-0': ErrorCode.LOG_DIR_NOT_FOUND,
      'stay-1': ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
      'missing-0': ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
      // Named under two dirs: the last one counts.
      'other-0': ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
    });
    const toOffline = await alter([{ path: offline, topics: [{ name: 'stay', partitions: [0] }] }]);
    expect(toOffline.results[0].partitions[0].errorCode).to.equal(ErrorCode.KAFKA_STORAGE_ERROR);
    const already = await alter([{ path: here, topics: [{ name: 'stay', partitions: [0] }] }]);
    expect(already.results[0].partitions[0].errorCode).to.equal(ErrorCode.NONE);
    expect(running!.broker.replicas.logs.futureLogs()).to.deep.equal([]);

    // Every dir is described, the offline one with KAFKA_STORAGE_ERROR.
    const described = await describeDirs(null);
    expect(described.results.map((r) => [r.logDir, r.errorCode])).to.deep.equal([
      [logDirs[0], ErrorCode.NONE], [logDirs[1], ErrorCode.NONE], [offline, ErrorCode.KAFKA_STORAGE_ERROR],
    ]);
    expect(described.results[2]).to.include({ totalBytes: -1n, usableBytes: -1n });
    expect(described.results[2].topics).to.deep.equal([]);
    expect(await where('stay')).to.deep.equal([
      [0, 0, here === logDirs[0] ? [['stay', 0, false]] : []], [1, 0, here === logDirs[1] ? [['stay', 0, false]] : []], [2, ErrorCode.KAFKA_STORAGE_ERROR, []],
    ]);
  });
});
