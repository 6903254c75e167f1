// The share groups' dead-letter queue writer (KIP-1191) over a real broker: archived records of a
// source partition land in the group's DLQ topic with Kafka's headers, copied or not, and a DLQ that
// Kafka would refuse is refused (logged, nothing written).
import { expect } from 'chai';
import { Writable } from 'node:stream';
import pino from 'pino';
import { UpgradeType } from '../../src/cluster/features';
import { ErrorCode } from '../../src/common/errors';
import { shareGroupSettings } from '../../src/config/group-config';
import type { Broker } from '../../src/broker';
import { startCluster, type RunningCluster } from '../../src/local-cluster';
import { RemoteDeadLetterProduce } from '../../src/net/dead-letter-producer';
import { ApiKey } from '../../src/protocol/generated';
import { buildBatchSync, Compression, decodeRecords, walkBatches, type DecodedRecord } from '../../src/records';
import { DLQ_HEADER, DeadLetterQueueWriter } from '../../src/share/dead-letter-queue';
import { createSharePartition } from '../../src/share/in-flight-records';
import { AcknowledgeType, type ArchivedRecords } from '../../src/share/share-partition';
import { withBroker } from '../helpers/broker';
import { eventually } from '../helpers/eventually';
import { MemoryPersister } from '../helpers/memory-persister';
import { RawClient } from '../helpers/raw-client';

const GROUP = 'dlq-group';

/** Produces one batch to topic's partition; its base offset. */
async function produceBatch(client: RawClient, topic: string, partition: number, records: { key: string; value: string }[],
  compression: number = Compression.NONE): Promise<number> {
  const batch = buildBatchSync({ records, compression, nowMs: Date.now() });
  const res = await client.request<{ responses: { partitionResponses: { errorCode: number; baseOffset: bigint }[] }[] }>(ApiKey.Produce, 9, {
    transactionalId: null, acks: -1, timeoutMs: 5000, topicData: [{ name: topic, partitionData: [{ index: partition, records: batch }] }],
  });
  const answer = res.responses[0].partitionResponses[0];
  expect(answer.errorCode).to.equal(ErrorCode.NONE);
  return Number(answer.baseOffset);
}

/** Every record of a partition the broker leads, read through the replica layer. */
async function readPartition(broker: Broker, topic: string, partition: number): Promise<DecodedRecord[]> {
  const [read] = await broker.replicas.fetchMessages(
    { maxWaitMs: 0, minBytes: 0, maxBytes: 1 << 20, isolation: 'high-watermark', allocate: (n) => Buffer.alloc(n) },
    [{ topic, partition, fetchOffset: 0, maxBytes: 1 << 20, currentLeaderEpoch: -1 }]);
  expect(read.errorCode).to.equal(ErrorCode.NONE);
  const out: DecodedRecord[] = [];
  for (const b of walkBatches(read.records).batches) out.push(...await decodeRecords(read.records.subarray(b.position, b.position + b.size)));
  return out;
}

const headers = (r: DecodedRecord): Record<string, string> =>
  Object.fromEntries(r.headers.map((h) => [h.key, h.value?.toString('utf8') ?? '<null>']));

function archived(topicName: string, topicId: string, partition: number, firstOffset: number, lastOffset: number,
  cause: ArchivedRecords['cause'], deliveryCount: number): ArchivedRecords {
  return { key: { groupId: GROUP, topicId, partition }, topicName, firstOffset: BigInt(firstOffset), lastOffset: BigInt(lastOffset), deliveryCount, cause };
}

describe('share group dead-letter queue writer', function () {
  this.timeout(20_000);
  const started = withBroker({ config: { 'num.partitions': '2', 'errors.deadletterqueue.auto.create.topics.enable': 'false' } });
  const broker = () => started.current().broker;
  let client: RawClient;
  /** The writer's error lines. */
  let logged: string[];
  let writer: DeadLetterQueueWriter;
  let autoCreate: boolean;

  before(async () => {
    client = await RawClient.connect(started.current().port);
  });
  after(() => client.close());

  beforeEach(async () => {
    logged = [];
    autoCreate = false;
    const sink = new Writable({ write(chunk: Buffer, _enc, done) { logged.push(chunk.toString()); done(); } });
    const { config, controller, replicas, nodeId } = broker();
    writer = new DeadLetterQueueWriter({
      nodeId, controller, replicas, enabled: () => true, retryBackoffMs: 10, log: pino({ level: 'error' }, sink),
      // errors.deadletterqueue.auto.create.topics.enable per test; the rest as the broker has it.
      config: {
        getBool: (name) => (name === 'errors.deadletterqueue.auto.create.topics.enable' ? autoCreate : config.getBool(name)),
        getString: (name) => config.getString(name),
        getInt: (name) => config.getInt(name),
      },
    });
    await setGroupConfigs({});
  });

  async function createTopic(name: string, partitions: number, configs: Record<string, string> = {}): Promise<string> {
    const res = await broker().controller.createTopic({ name, numPartitions: partitions, replicationFactor: 1, assignments: [], configs }, false);
    expect(res.errorCode, res.errorMessage ?? '').to.equal(ErrorCode.NONE);
    return res.topic!.id;
  }

  async function setGroupConfigs(configs: Record<string, string>): Promise<void> {
    const res = await broker().controller.setGroupConfigs(GROUP, () => configs, false);
    expect(res.errorCode, res.errorMessage ?? '').to.equal(ErrorCode.NONE);
  }

  const produce = (topic: string, partition: number, records: { key: string; value: string }[], compression: number = Compression.NONE) =>
    produceBatch(client, topic, partition, records, compression);
  const readAll = (topic: string, partition: number) => readPartition(broker(), topic, partition);

  it('writes one record per archived offset with Kafka\'s headers, and no key or value unless copy is enabled', async () => {
    const sourceId = await createTopic('orders-a', 2);
    await createTopic('dlq.orders-a', 2, { 'errors.deadletterqueue.group.enable': 'true' });
    await setGroupConfigs({ 'errors.deadletterqueue.topic.name': 'dlq.orders-a' });
    await produce('orders-a', 1, [{ key: 'k0', value: 'v0' }, { key: 'k1', value: 'v1' }, { key: 'k2', value: 'v2' }]);

    // The promise the share-partition keeps the records ARCHIVING for settles once they are written.
    await writer.onArchived(archived('orders-a', sourceId, 1, 1, 2, 'rejected', 1));

    // The source partition 1 goes to the DLQ's partition 1 % 2.
    expect(await readAll('dlq.orders-a', 0)).to.deep.equal([]);
    const written = await readAll('dlq.orders-a', 1);
    expect(written.map(headers)).to.deep.equal([1, 2].map((offset) => ({
      [DLQ_HEADER.topic]: 'orders-a', [DLQ_HEADER.partition]: '1', [DLQ_HEADER.offset]: String(offset), [DLQ_HEADER.group]: GROUP,
      [DLQ_HEADER.deliveryCount]: '1', [DLQ_HEADER.message]: 'Offset rejected by client.',
    })));
    expect(written.map((r) => [r.key, r.value])).to.deep.equal([[null, null], [null, null]]);
    expect(logged).to.deep.equal([]);
  });

  it('copies the key and value with errors.deadletterqueue.copy.record.enable, in archive order and in one append', async () => {
    const sourceId = await createTopic('orders-b', 1);
    await createTopic('dlq.orders-b', 3, { 'errors.deadletterqueue.group.enable': 'true' });
    await setGroupConfigs({ 'errors.deadletterqueue.topic.name': 'dlq.orders-b', 'errors.deadletterqueue.copy.record.enable': 'true' });
    await produce('orders-b', 0, [0, 1, 2, 3, 4].map((i) => ({ key: `k${i}`, value: `v${i}` })));

    // Archived together: written together, offset 3 (over the limit) before 0-1 (rejected later).
    writer.onArchived(archived('orders-b', sourceId, 0, 3, 3, 'delivery-count-exceeded', 5));
    writer.onArchived(archived('orders-b', sourceId, 0, 0, 1, 'rejected', 2));
    await writer.idle();

    const written = await readAll('dlq.orders-b', 0);
    expect(written.map((r) => [r.key?.toString(), r.value?.toString(), headers(r)[DLQ_HEADER.offset],
      headers(r)[DLQ_HEADER.deliveryCount], headers(r)[DLQ_HEADER.message]])).to.deep.equal([
      ['k3', 'v3', '3', '5', 'Offset delivery count exceeded the threshold.'],
      ['k0', 'v0', '0', '2', 'Offset rejected by client.'],
      ['k1', 'v1', '1', '2', 'Offset rejected by client.'],
    ]);
    expect(new Set(written.map((r) => r.offset - r.offsetDelta)).size, 'one batch').to.equal(1);
  });

  it('splits what one append cannot take by the DLQ topic\'s max.message.bytes, keeping the order', async () => {
    const sourceId = await createTopic('orders-i', 1);
    await createTopic('dlq.orders-i', 1, { 'errors.deadletterqueue.group.enable': 'true', 'max.message.bytes': '1500' });
    await setGroupConfigs({ 'errors.deadletterqueue.topic.name': 'dlq.orders-i', 'errors.deadletterqueue.copy.record.enable': 'true' });
    await produce('orders-i', 0, [0, 1, 2, 3, 4, 5].map((i) => ({ key: `k${i}`, value: String(i).repeat(400) })));

    writer.onArchived(archived('orders-i', sourceId, 0, 0, 5, 'rejected', 1));
    await writer.idle();

    const written = await readAll('dlq.orders-i', 0);
    expect(written.map((r) => [r.key?.toString(), r.value?.length])).to.deep.equal([0, 1, 2, 3, 4, 5].map((i) => [`k${i}`, 400]));
    expect(new Set(written.map((r) => r.offset - r.offsetDelta)).size, 'batches').to.be.within(2, 6);
    expect(logged).to.deep.equal([]);
  });

  it('copies a record out of a compressed batch', async () => {
    const sourceId = await createTopic('orders-c', 1);
    await createTopic('dlq.orders-c', 1, { 'errors.deadletterqueue.group.enable': 'true' });
    await setGroupConfigs({ 'errors.deadletterqueue.topic.name': 'dlq.orders-c', 'errors.deadletterqueue.copy.record.enable': 'true' });
    await produce('orders-c', 0, [{ key: 'first', value: 'x' }]);
    const base = await produce('orders-c', 0, [{ key: 'a', value: 'alpha' }, { key: 'b', value: 'beta' }, { key: 'c', value: 'gamma' }], Compression.GZIP);

    writer.onArchived(archived('orders-c', sourceId, 0, base + 1, base + 1, 'rejected', 1));
    await writer.idle();

    const written = await readAll('dlq.orders-c', 0);
    expect(written.map((r) => [r.key?.toString(), r.value?.toString(), headers(r)[DLQ_HEADER.offset]])).to.deep.equal([['b', 'beta', String(base + 1)]]);
  });

  it('writes nothing without errors.deadletterqueue.topic.name', async () => {
    const sourceId = await createTopic('orders-d', 1);
    await createTopic('dlq.orders-d', 1, { 'errors.deadletterqueue.group.enable': 'true' });
    await produce('orders-d', 0, [{ key: 'k', value: 'v' }]);
    autoCreate = true;

    expect(writer.onArchived(archived('orders-d', sourceId, 0, 0, 0, 'rejected', 1)), 'nothing to wait for').to.equal(undefined);
    await writer.idle();

    expect(await readAll('dlq.orders-d', 0)).to.deep.equal([]);
    expect(logged).to.deep.equal([]);
  });

  it('refuses a topic without errors.deadletterqueue.group.enable, as Kafka does', async () => {
    const sourceId = await createTopic('orders-e', 1);
    await createTopic('dlq.orders-e', 1);
    await setGroupConfigs({ 'errors.deadletterqueue.topic.name': 'dlq.orders-e' });
    await produce('orders-e', 0, [{ key: 'k', value: 'v' }]);

    // Refused: the promise still settles (the records are archived regardless).
    await writer.onArchived(archived('orders-e', sourceId, 0, 0, 0, 'rejected', 1));

    expect(await readAll('dlq.orders-e', 0)).to.deep.equal([]);
    expect(logged).to.have.length(1);
    expect(logged[0]).to.include('Failed to write to DLQ, proceeding to ARCHIVED regardless.')
      .and.include(`DLQ is not enabled on configured DLQ topic for share group: ${GROUP}, topic: dlq.orders-e.`);
  });

  it('refuses a name without errors.deadletterqueue.topic.name.prefix, and a missing topic without auto-creation', async () => {
    const sourceId = await createTopic('orders-f', 1);
    await createTopic('orders-f-dlq', 1, { 'errors.deadletterqueue.group.enable': 'true' });
    await produce('orders-f', 0, [{ key: 'k', value: 'v' }]);

    await setGroupConfigs({ 'errors.deadletterqueue.topic.name': 'orders-f-dlq' });
    writer.onArchived(archived('orders-f', sourceId, 0, 0, 0, 'rejected', 1));
    await writer.idle();
    await setGroupConfigs({ 'errors.deadletterqueue.topic.name': 'dlq.orders-f-missing' });
    writer.onArchived(archived('orders-f', sourceId, 0, 0, 0, 'rejected', 1));
    await writer.idle();

    expect(await readAll('orders-f-dlq', 0)).to.deep.equal([]);
    expect(broker().controller.topic('dlq.orders-f-missing')).to.equal(undefined);
    expect(logged).to.have.length(2);
    expect(logged[0]).to.include(
      `Configured DLQ topic name does not comply with the DLQ topic prefix in share group: ${GROUP}, topic: orders-f-dlq, prefix: dlq..`);
    expect(logged[1]).to.include(`DLQ topic does not exist and auto create is disabled on cluster for share group: ${GROUP}, topic: dlq.orders-f-missing.`);
  });

  it('creates a missing DLQ topic as Kafka does with errors.deadletterqueue.auto.create.topics.enable', async () => {
    const sourceId = await createTopic('orders-g', 1);
    await setGroupConfigs({ 'errors.deadletterqueue.topic.name': 'dlq.orders-g', 'errors.deadletterqueue.copy.record.enable': 'true' });
    await produce('orders-g', 0, [{ key: 'k', value: 'v' }]);
    autoCreate = true;

    writer.onArchived(archived('orders-g', sourceId, 0, 0, 0, 'rejected', 1));
    await writer.idle();

    const created = broker().controller.topic('dlq.orders-g');
    // num.partitions (2 on this broker), the DLQ flag and CreateTime, as Kafka's CreateTopics of it.
    expect(created?.partitions).to.have.length(2);
    expect(created?.configs).to.deep.equal({ 'errors.deadletterqueue.group.enable': 'true', 'message.timestamp.type': 'CreateTime' });
    const written = await readAll('dlq.orders-g', 0);
    expect(written.map((r) => [r.key?.toString(), r.value?.toString()])).to.deep.equal([['k', 'v']]);
    expect(logged).to.deep.equal([]);
  });

  it('takes a share-partition\'s rejected records, which stay ARCHIVING until they are in the DLQ', async () => {
    const topicId = await createTopic('orders-j', 1);
    await createTopic('dlq.orders-j', 1, { 'errors.deadletterqueue.group.enable': 'true' });
    await setGroupConfigs({ 'errors.deadletterqueue.topic.name': 'dlq.orders-j', 'errors.deadletterqueue.copy.record.enable': 'true' });
    const base = await produce('orders-j', 0, [0, 1, 2, 3].map((i) => ({ key: `k${i}`, value: `v${i}` })));
    const sp = createSharePartition({
      key: { groupId: GROUP, topicId, partition: 0 }, topicName: 'orders-j', leaderEpoch: 0, persister: new MemoryPersister('uninitialized'),
      settings: () => shareGroupSettings(broker().config, broker().controller.groupConfigs(GROUP)),
      resetOffset: async () => BigInt(base), onArchived: writer.onArchived,
    });
    try {
      expect(await sp.load()).to.equal(ErrorCode.NONE);
      const bounds = { baseOffset: BigInt(base), lastOffset: BigInt(base + 3), isControl: false, isTransactional: false, producerId: -1n };
      expect(sp.acquire('member', [bounds], 10)).to.deep.equal([{ firstOffset: BigInt(base), lastOffset: BigInt(base + 3), deliveryCount: 1 }]);
      const types = [AcknowledgeType.REJECT, AcknowledgeType.ACCEPT, AcknowledgeType.REJECT, AcknowledgeType.ACCEPT];
      expect(await sp.acknowledge('member', [{ firstOffset: BigInt(base), lastOffset: BigInt(base + 3), acknowledgeTypes: types }])).to.equal(ErrorCode.NONE);
      // The write has not happened yet (it reads the log first): the first record, ARCHIVING, holds the start.
      expect(sp.startOffset()).to.equal(BigInt(base));
      await writer.idle();
      await eventually(() => sp.startOffset() === BigInt(base + 4), 'the start offset past the archived records', 5000);
    } finally {
      sp.close();
    }
    const written = await readAll('dlq.orders-j', 0);
    expect(written.map((r) => [r.key?.toString(), headers(r)[DLQ_HEADER.offset], headers(r)[DLQ_HEADER.message]])).to.deep.equal([
      ['k0', String(base), 'Offset rejected by client.'], ['k2', String(base + 2), 'Offset rejected by client.'],
    ]);
  });

  it('writes nothing while the share.version does not support it', async () => {
    const sourceId = await createTopic('orders-h', 1);
    await createTopic('dlq.orders-h', 1, { 'errors.deadletterqueue.group.enable': 'true' });
    await setGroupConfigs({ 'errors.deadletterqueue.topic.name': 'dlq.orders-h' });
    await produce('orders-h', 0, [{ key: 'k', value: 'v' }]);

    // The broker's own writer, with share.version at 1 (share groups without their dead-letter queue).
    const downgraded = await broker().features.update([{ feature: 'share.version', level: 1, upgradeType: UpgradeType.SAFE_DOWNGRADE }], false);
    expect(downgraded.errorCode, downgraded.errorMessage ?? '').to.equal(ErrorCode.NONE);
    broker().deadLetterQueue.onArchived(archived('orders-h', sourceId, 0, 0, 0, 'rejected', 1));
    await broker().deadLetterQueue.idle();

    expect(await readAll('dlq.orders-h', 0)).to.deep.equal([]);
  });
});

describe('share group dead-letter queue writer in a cluster', function () {
  this.timeout(60_000);
  let cluster: RunningCluster;
  let remote: RemoteDeadLetterProduce;

  before(async () => {
    cluster = await startCluster({ brokers: 2, logLevel: 'silent' });
  });
  after(async () => {
    remote?.close();
    await cluster?.close();
  });

  it('produces to the DLQ partition\'s leader on another broker', async () => {
    const [here, there] = cluster.brokers.map((b) => b.broker);
    const create = async (name: string, leader: number, configs: Record<string, string>) => {
      const res = await here.controller.createTopic(
        { name, numPartitions: -1, replicationFactor: -1, assignments: [{ partitionIndex: 0, brokerIds: [leader] }], configs }, false);
      expect(res.errorCode, res.errorMessage ?? '').to.equal(ErrorCode.NONE);
      return res.topic!.id;
    };
    const sourceId = await create('orders', here.nodeId, {});
    await create('dlq.orders', there.nodeId, { 'errors.deadletterqueue.group.enable': 'true' });
    await eventually(() => here.replicas.partition('orders', 0)?.role?.kind === 'leader'
      && there.replicas.partition('dlq.orders', 0)?.role?.kind === 'leader', 'the partitions\' leaders', 20_000);
    const res = await here.controller.setGroupConfigs(GROUP,
      () => ({ 'errors.deadletterqueue.topic.name': 'dlq.orders', 'errors.deadletterqueue.copy.record.enable': 'true' }), false);
    expect(res.errorCode).to.equal(ErrorCode.NONE);
    const client = await RawClient.connect(cluster.brokers[0].port);
    try {
      await produceBatch(client, 'orders', 0, [{ key: 'k0', value: 'v0' }, { key: 'k1', value: 'v1' }], Compression.LZ4);
    } finally {
      client.close();
    }
    remote = new RemoteDeadLetterProduce(here.controller, { clientId: 'dlq-test', connectTimeoutMs: 5000, requestTimeoutMs: 10_000 });
    const writer = new DeadLetterQueueWriter({
      nodeId: here.nodeId, config: here.config, controller: here.controller, replicas: here.replicas, remote,
      enabled: () => true, retryBackoffMs: 10, log: pino({ level: 'silent' }),
    });

    writer.onArchived(archived('orders', sourceId, 0, 0, 1, 'delivery-count-exceeded', 3));
    await writer.idle();

    const written = await readPartition(there, 'dlq.orders', 0);
    expect(written.map((r) => [r.key?.toString(), r.value?.toString(), headers(r)[DLQ_HEADER.offset], headers(r)[DLQ_HEADER.deliveryCount]]))
      .to.deep.equal([['k0', 'v0', '0', '3'], ['k1', 'v1', '1', '3']]);
  });
});

describe('share group dead-letter queue end to end', function () {
  this.timeout(20_000);
  const started = withBroker(() => ({ sharePersister: new MemoryPersister('uninitialized') }));
  const broker = () => started.current().broker;
  const GROUP_E2E = 'dlq-e2e';
  let client: RawClient;
  before(async () => {
    client = await RawClient.connect(started.current().port);
  });
  after(() => client.close());

  async function shareFetch(epoch: number, topicId: string): Promise<{ firstOffset: bigint; lastOffset: bigint; deliveryCount: number }[]> {
    const res = await client.api(ApiKey.ShareFetch, 1, {
      groupId: GROUP_E2E, memberId: 'member-1', shareSessionEpoch: epoch, maxWaitMs: 0, minBytes: 1, maxBytes: 1 << 20, maxRecords: 500, batchSize: 500,
      topics: [{ topicId, partitions: [{ partitionIndex: 0, partitionMaxBytes: 0, acknowledgementBatches: [] }] }], forgottenTopicsData: [],
    });
    expect(res.errorCode).to.equal(ErrorCode.NONE);
    return res.responses.flatMap((t) => t.partitions.flatMap((p) => p.acquiredRecords));
  }

  async function acknowledge(epoch: number, topicId: string, batches: { firstOffset: bigint; lastOffset: bigint; acknowledgeTypes: number[] }[]): Promise<void> {
    const res = await client.api(ApiKey.ShareAcknowledge, 1, {
      groupId: GROUP_E2E, memberId: 'member-1', shareSessionEpoch: epoch, topics: [{ topicId, partitions: [{ partitionIndex: 0, acknowledgementBatches: batches }] }],
    });
    expect(res.errorCode).to.equal(ErrorCode.NONE);
    expect(res.responses[0].partitions[0].errorCode).to.equal(ErrorCode.NONE);
  }

  it('sends what a consumer rejects and what reaches the delivery count limit to the group\'s DLQ topic', async () => {
    const created = await broker().controller.createTopic({ name: 'jobs', numPartitions: 1, replicationFactor: 1, assignments: [], configs: {} }, false);
    const topicId = created.topic!.id;
    expect((await broker().controller.createTopic({ name: 'dlq.jobs', numPartitions: 1, replicationFactor: 1, assignments: [],
      configs: { 'errors.deadletterqueue.group.enable': 'true' } }, false)).errorCode).to.equal(ErrorCode.NONE);
    expect((await broker().controller.setGroupConfigs(GROUP_E2E, () => ({
      'errors.deadletterqueue.topic.name': 'dlq.jobs', 'errors.deadletterqueue.copy.record.enable': 'true',
      'share.delivery.count.limit': '2', 'share.auto.offset.reset': 'earliest',
    }), false)).errorCode).to.equal(ErrorCode.NONE);
    await produceBatch(client, 'jobs', 0, [0, 1, 2, 3].map((i) => ({ key: `job-${i}`, value: `payload-${i}` })));

    // Delivery 1: accept 0, reject 1, release 2-3; delivery 2 of 2-3: released again, over the limit.
    expect(await shareFetch(0, topicId)).to.deep.equal([{ firstOffset: 0n, lastOffset: 3n, deliveryCount: 1 }]);
    await acknowledge(1, topicId, [{ firstOffset: 0n, lastOffset: 3n, acknowledgeTypes: [AcknowledgeType.ACCEPT, AcknowledgeType.REJECT, AcknowledgeType.RELEASE, AcknowledgeType.RELEASE] }]);
    expect(await shareFetch(2, topicId)).to.deep.equal([{ firstOffset: 2n, lastOffset: 3n, deliveryCount: 2 }]);
    await acknowledge(3, topicId, [{ firstOffset: 2n, lastOffset: 3n, acknowledgeTypes: [AcknowledgeType.RELEASE] }]);
    await broker().deadLetterQueue.idle();

    const written = await readPartition(broker(), 'dlq.jobs', 0);
    expect(written.map((r) => [r.key?.toString(), r.value?.toString(), headers(r)])).to.deep.equal([
      ['job-1', 'payload-1', { [DLQ_HEADER.topic]: 'jobs', [DLQ_HEADER.partition]: '0', [DLQ_HEADER.offset]: '1', [DLQ_HEADER.group]: GROUP_E2E,
        [DLQ_HEADER.deliveryCount]: '1', [DLQ_HEADER.message]: 'Offset rejected by client.' }],
      ...[2, 3].map((offset) => [`job-${offset}`, `payload-${offset}`, { [DLQ_HEADER.topic]: 'jobs', [DLQ_HEADER.partition]: '0',
        [DLQ_HEADER.offset]: String(offset), [DLQ_HEADER.group]: GROUP_E2E, [DLQ_HEADER.deliveryCount]: '2',
        [DLQ_HEADER.message]: 'Offset delivery count exceeded the threshold.' }]),
    ]);
    // Nothing is left to deliver: the accepted, the rejected and the exhausted records are all done.
    expect(await shareFetch(4, topicId)).to.deep.equal([]);
  });
});
