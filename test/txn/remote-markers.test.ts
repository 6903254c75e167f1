// Transaction markers sent to another broker, the partitions' leader, over WriteTxnMarkers: the remote
// channel against a real second broker (started with startBroker, the leader of its own partitions),
// the router's retries (a partition its leader does not have yet, a restarted leader), and a
// transaction that completes only once its remote markers are in. The coordinator's broker is
// played by a metadata stub naming that second broker as leader.
import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { startBroker, type RunningBroker } from '../../src/broker';
import type { BrokerEndpoint, Controller } from '../../src/cluster/controller';
import type { TopicRecord } from '../../src/cluster/metadata-store';
import { ErrorCode } from '../../src/common/errors';
import { RemoteTxnMarkerChannel } from '../../src/net/txn-marker-channel';
import { ApiKey } from '../../src/protocol/generated';
import type { ProduceResponse } from '../../src/protocol/generated/ProduceResponse';
import { buildBatchSync } from '../../src/records/records';
import { TransactionCoordinator } from '../../src/txn/coordinator';
import { LocalTxnMarkerChannel, TxnMarkerRouter, type TxnMarkerChannel } from '../../src/txn/markers';
import type { TopicPartition } from '../../src/txn/transaction-metadata';
import { RawClient } from '../helpers/raw-client';
import { CONFIG, FakeStore } from './coordinator-fakes';

const LEADER = 2;
const SELF = 1;

/** The coordinator broker's view: topics whose every partition is led by `leader`, and the leader's endpoint. */
class MetadataStub implements Pick<Controller, 'topic' | 'brokers'> {
  readonly topics = new Map<string, TopicRecord>();
  endpoint: BrokerEndpoint = { nodeId: LEADER, host: '127.0.0.1', port: 0, rack: null };

  add(name: string, numPartitions: number, leader = LEADER): void {
    const partitions = Array.from({ length: numPartitions }, (_, index) => ({ index, replicas: [LEADER], leader, leaderEpoch: 0, isr: [LEADER] }));
    this.topics.set(name, { name, id: '1'.repeat(32), partitions, configs: {} });
  }

  topic(name: string): TopicRecord | undefined {
    return this.topics.get(name);
  }

  brokers(): BrokerEndpoint[] {
    return [this.endpoint];
  }
}

/** This broker leads nothing in these tests: a local write is a bug. */
const NO_LOCAL: TxnMarkerChannel = { writeMarkers: () => Promise.reject(new Error('no partition is led locally')) };

describe('txn: markers to remote partition leaders (WriteTxnMarkers)', function () {
  let dataDir: string;
  let leader: RunningBroker;
  let metadata: MetadataStub;
  let channel: RemoteTxnMarkerChannel;
  /** WriteTxnMarkers requests the leader received. */
  let requests: number;

  async function startLeader(port = 0): Promise<void> {
    leader = await startBroker({ dataDir, port, nodeId: LEADER, config: { 'transaction.partition.verification.enable': 'false' }, logLevel: 'silent' });
    metadata.endpoint = { ...metadata.endpoint, port: leader.port };
    const router = leader.broker.router;
    const handler = router.handler.bind(router);
    router.handler = (apiKey) => {
      if (apiKey === ApiKey.WriteTxnMarkers) requests++;
      return handler(apiKey);
    };
  }

  /** Creates the topic on the leader and in the stub. */
  async function createTopic(name: string, numPartitions: number): Promise<void> {
    await leader.broker.controller.createTopic({ name, numPartitions, replicationFactor: 1, assignments: [], configs: {} }, false);
    metadata.add(name, numPartitions);
  }

  /** A transactional batch of producer `pid` (epoch 0) into the partition, on the leader. */
  async function produce(tp: TopicPartition, pid: number): Promise<void> {
    const c = await RawClient.connect(leader.port);
    const records = buildBatchSync({ producerId: pid, producerEpoch: 0, baseSequence: 0, isTransactional: true, records: [{ value: 'v' }] });
    const res = await c.request<ProduceResponse>(ApiKey.Produce, 9, {
      transactionalId: `txn-${pid}`, acks: -1, timeoutMs: 1000, topicData: [{ name: tp.topic, partitionData: [{ index: tp.partition, records }] }],
    });
    c.close();
    expect(res.responses[0].partitionResponses[0].errorCode).to.equal(ErrorCode.NONE);
  }

  /** [last stable offset, log end offset] of a partition on the leader. */
  function offsets(tp: TopicPartition): [number, number] {
    const log = leader.broker.replicas.partition(tp.topic, tp.partition)!.log;
    return [log.lastStableOffset, log.logEndOffset];
  }

  const marker = (producerId: number, commit = true) => ({ producerId, producerEpoch: 0, coordinatorEpoch: 3, commit });

  beforeEach(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'fjord-remote-markers-'));
    metadata = new MetadataStub();
    requests = 0;
    await startLeader();
    channel = new RemoteTxnMarkerChannel(metadata, { clientId: 'coordinator-1', connectTimeoutMs: 1000, requestTimeoutMs: 2000 });
  });
  afterEach(async () => {
    channel.close();
    await leader.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('writes the markers on the leader, the markers of one turn in one request, and the last stable offsets move', async () => {
    await createTopic('rm1', 2);
    const [p0, p1] = [{ topic: 'rm1', partition: 0 }, { topic: 'rm1', partition: 1 }];
    await produce(p0, 500);
    await produce(p0, 501);
    await produce(p1, 500);
    expect([offsets(p0), offsets(p1)]).to.deep.equal([[0, 2], [0, 1]]);

    const [first, second] = await Promise.all([channel.writeMarkers(marker(500), [p0, p1]), channel.writeMarkers(marker(501, false), [p0])]);
    expect([first, second]).to.deep.equal([[ErrorCode.NONE, ErrorCode.NONE], [ErrorCode.NONE]]);
    expect(requests).to.equal(1);
    expect([offsets(p0), offsets(p1)]).to.deep.equal([[4, 4], [2, 2]]);
    // The leader fences an older coordinator epoch, and the channel says so.
    await produce(p1, 502);
    expect(await channel.writeMarkers({ ...marker(502), coordinatorEpoch: 2 }, [p1])).to.deep.equal([ErrorCode.NONE]);
    expect(await channel.writeMarkers({ ...marker(502), coordinatorEpoch: 1 }, [p1])).to.deep.equal([ErrorCode.TRANSACTION_COORDINATOR_FENCED]);
  });

  it('retries a partition its leader does not have yet until it is created; drops one whose topic is gone; waits for a leader', async () => {
    const router = new TxnMarkerRouter(SELF, metadata, NO_LOCAL, channel);
    const tp = { topic: 'rm2', partition: 0 };
    metadata.add('rm2', 1); // known to the coordinator's metadata before the leader has it
    const request = { ...marker(600), transactionVersion: 0, partitions: [tp] };
    expect(await router.write(request)).to.deep.equal([tp]);
    expect(requests).to.equal(1);

    await leader.broker.controller.createTopic({ name: 'rm2', numPartitions: 1, replicationFactor: 1, assignments: [], configs: {} }, false);
    await produce(tp, 600);
    expect(await router.write(request)).to.deep.equal([]);
    expect(offsets(tp)).to.deep.equal([2, 2]);

    metadata.add('leaderless', 1, -1);
    const leaderless = { topic: 'leaderless', partition: 0 };
    expect(await router.write({ ...request, partitions: [leaderless, { topic: 'deleted', partition: 0 }] })).to.deep.equal([leaderless]);
    expect(requests).to.equal(2);
  });

  it('reconnects to a leader that restarted (a lost connection is retried)', async () => {
    await createTopic('rm3', 1);
    const tp = { topic: 'rm3', partition: 0 };
    await produce(tp, 700);
    expect(await channel.writeMarkers(marker(700), [tp])).to.deep.equal([ErrorCode.NONE]);

    const port = leader.port;
    await leader.close();
    expect(await channel.writeMarkers(marker(700), [tp])).to.deep.equal([ErrorCode.NETWORK_EXCEPTION]);
    await startLeader(port);
    await produce(tp, 701);
    expect(await channel.writeMarkers(marker(701), [tp])).to.deep.equal([ErrorCode.NONE]);
    expect(offsets(tp)).to.deep.equal([4, 4]);
  });

  it('a transaction completes only once the marker is in on the remote leader', async () => {
    const store = new FakeStore();
    const coordinator = new TransactionCoordinator(CONFIG, new TxnMarkerRouter(SELF, metadata, NO_LOCAL, channel), { nextId: async () => 800 }, store);
    try {
      coordinator.onElection(coordinator.partitionFor('remote'), 5);
      await coordinator.loadsSettled();
      const tp = { topic: 'rm4', partition: 0 };
      metadata.add('rm4', 1); // the leader does not have it yet
      const { producerId } = await coordinator.initProducerId('remote', 60_000, null);
      expect(await coordinator.addPartitions('remote', producerId, 0, [tp])).to.equal(ErrorCode.NONE);
      expect((await coordinator.endTransaction('remote', producerId, 0, true, 0)).errorCode).to.equal(ErrorCode.NONE);
      await new Promise((resolve) => setTimeout(resolve, 150));
      expect(coordinator.describe('remote').state).to.equal('PrepareCommit');

      await leader.broker.controller.createTopic({ name: 'rm4', numPartitions: 1, replicationFactor: 1, assignments: [], configs: {} }, false);
      await produce(tp, producerId);
      for (let i = 0; i < 100 && coordinator.describe('remote').state !== 'CompleteCommit'; i++) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(coordinator.describe('remote').state).to.equal('CompleteCommit');
      expect(offsets(tp)).to.deep.equal([2, 2]);
      // The marker carries the __transaction_state partition's leader epoch as its coordinator epoch.
      const states = leader.broker.replicas.partition('rm4', 0)!.log.producerState;
      expect(states.activeProducers().get(producerId)?.coordinatorEpoch).to.equal(5);
    } finally {
      await coordinator.close();
    }
  });

  it('the local channel (and so WriteTxnMarkers) refuses a partition this broker does not lead: NOT_LEADER_OR_FOLLOWER', async () => {
    await createTopic('rm5', 1);
    const tp = { topic: 'rm5', partition: 0 };
    await produce(tp, 900);
    const { replicas, groups } = leader.broker;
    const elsewhere = new MetadataStub();
    elsewhere.add('rm5', 1, 7);
    expect(await new LocalTxnMarkerChannel({ nodeId: LEADER, controller: elsewhere, replicas, groups }).writeMarkers(marker(900), [tp]))
      .to.deep.equal([ErrorCode.NOT_LEADER_OR_FOLLOWER]);
    expect(offsets(tp)).to.deep.equal([0, 1]);
    expect(await new LocalTxnMarkerChannel(leader.broker).writeMarkers(marker(900), [tp])).to.deep.equal([ErrorCode.NONE]);
    expect(offsets(tp)).to.deep.equal([2, 2]);
  });
});
