// The leader side of replication in the ReplicaManager, without a network: a partition made leader
// of three replicas, its followers' fetches given to fetchMessages as a follower's Fetch would, and
// what that does to the high watermark, the ISR, consumers and acks=all produces; then the same
// partition made a follower.
import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { ErrorCode } from '../../src/common/errors';
import { createLogger } from '../../src/common/logger';
import { BrokerConfig } from '../../src/config/broker-config';
import type { TopicRecord } from '../../src/cluster/metadata-store';
import { buildBatchSync } from '../../src/records/records';
import type { FetchParams, FetchPartition } from '../../src/replica/fetch-reads';
import type { AlterPartitionResult } from '../../src/replica/partition-replicas';
import { NO_LEADER_EPOCH, ReplicaManager, type Partition } from '../../src/replica/replica-manager';
import type { FollowerFetchers } from '../../src/replica/replication';
import type { FollowerPartition } from '../../src/replica/replica-fetcher';

const TOPIC: TopicRecord = {
  name: 'replicated', id: 'a'.repeat(32), configs: { 'min.insync.replicas': '2' },
  partitions: [{ index: 0, replicas: [0, 1, 2], leader: 0, leaderEpoch: 0, isr: [0, 1, 2] }],
};

describe('ReplicaManager as a partition leader', function () {
  this.timeout(20000);
  let dir: string;
  let replicas: ReplicaManager;
  let proposals: { leaderEpoch: number; partitionEpoch: number; isr: number[] }[];
  let fetched: { leaderId: number; partitions: readonly FollowerPartition[] }[];
  let unfetched: string[];
  let partitionEpoch: number;

  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'fjord-leader-'));
    proposals = [];
    fetched = [];
    unfetched = [];
    partitionEpoch = 0;
    const config = BrokerConfig.load({ flags: { dataDir: dir, nodeId: 0, host: '127.0.0.1', port: 0 } });
    const fetchers: FollowerFetchers = {
      addPartitions: (leaderId, partitions) => fetched.push({ leaderId, partitions }),
      removePartitions: async (partitions) => void unfetched.push(...partitions.map((p) => `${p.topic}-${p.partition}`)),
      close: async () => undefined,
    };
    replicas = await ReplicaManager.open(config, { topic: (n) => (n === TOPIC.name ? TOPIC : undefined), topics: () => [TOPIC] },
      createLogger({ level: 'silent' }), {
        brokerId: 0, fetchers, replicaLagTimeMaxMs: 100_000,
        // The controller accepts every proposal, bumping the partition epoch.
        alterPartition: async (_topic, _partition, proposal): Promise<AlterPartitionResult> => {
          proposals.push(proposal);
          partitionEpoch = proposal.partitionEpoch + 1;
          return { state: { leader: 0, leaderEpoch: proposal.leaderEpoch, isr: proposal.isr, partitionEpoch } };
        },
      });
    await replicas.loaded;
  });

  afterEach(async () => {
    await replicas.close();
    await rm(dir, { recursive: true, force: true });
  });

  const lead = (leaderEpoch: number, isr = [0, 1, 2]) =>
    replicas.makeLeader(TOPIC, 0, { leader: 0, leaderEpoch, isr, partitionEpoch, replicas: [0, 1, 2] });
  const partition = (): Partition => replicas.partition(TOPIC.name, 0)!;

  /** Appends `count` one-record batches as a client would; the offset of the last. */
  async function produce(count: number): Promise<number> {
    let last = -1;
    for (let i = 0; i < count; i++) {
      const found = replicas.leaderPartition(TOPIC.name, 0, NO_LEADER_EPOCH);
      if ('errorCode' in found) throw new Error(`not leader: ${found.errorCode}`);
      const appended = await replicas.append(found.partition, buildBatchSync({ records: [{ value: `v${i}` }] }), found.leaderEpoch,
        { produceVersion: 9, nowMs: Date.now() });
      expect(appended.errorCode).to.equal(ErrorCode.NONE);
      await appended.done;
      last = appended.lastOffset;
    }
    return last;
  }

  const params = (over: Partial<FetchParams> = {}): FetchParams => ({
    maxWaitMs: 0, minBytes: 0, maxBytes: 1 << 20, isolation: 'high-watermark', allocate: (size) => Buffer.allocUnsafe(size), ...over,
  });
  const at = (over: Partial<FetchPartition> = {}): FetchPartition => ({
    topic: TOPIC.name, partition: 0, fetchOffset: 0, maxBytes: 1 << 20, currentLeaderEpoch: NO_LEADER_EPOCH, ...over,
  });
  /** A follower's Fetch: it has everything below fetchOffset. */
  const followerFetch = async (replicaId: number, fetchOffset: number, lastFetchedEpoch = -1) =>
    (await replicas.fetchMessages(params({ isolation: 'log-end', replicaId }), [at({ fetchOffset, lastFetchedEpoch })]))[0];

  it('moves the high watermark to the smallest log end of the ISR; consumers see only what is below it', async () => {
    await lead(1);
    const last = await produce(3);
    expect(partition().log.highWatermark).to.equal(0);
    const consumer = async () => (await replicas.fetchMessages(params(), [at()]))[0];
    expect((await consumer()).records.length).to.equal(0);

    const toFollower = await followerFetch(1, 0);
    expect(toFollower.records.length).to.be.greaterThan(0); // followers read past the high watermark
    await followerFetch(1, last + 1);
    expect(partition().log.highWatermark).to.equal(0); // replica 2 has nothing yet
    await followerFetch(2, 2);
    expect(partition().log.highWatermark).to.equal(2);
    expect((await consumer()).highWatermark).to.equal(2);
    await followerFetch(2, last + 1);
    expect(partition().log.highWatermark).to.equal(last + 1);
  });

  it('answers acks=all once every in-sync replica has the records, and NOT_ENOUGH_REPLICAS below min.insync.replicas', async () => {
    await lead(1);
    const last = await produce(1);
    let answer: number | undefined;
    const waiting = replicas.waitForInSyncReplicas(partition(), last, 10_000).then((code) => (answer = code));
    await followerFetch(1, last + 1);
    await new Promise((resolve) => setImmediate(resolve));
    expect(answer).to.equal(undefined);
    await followerFetch(2, last + 1);
    expect(await waiting).to.equal(ErrorCode.NONE);

    // The controller's newer state shrinks the ISR to the leader alone: below min.insync.replicas=2.
    await replicas.makeLeader(TOPIC, 0, { leader: 0, leaderEpoch: 1, isr: [0], partitionEpoch: partitionEpoch + 1, replicas: [0, 1, 2] });
    expect(replicas.checkEnoughReplicasForAppend(partition())).to.equal(ErrorCode.NOT_ENOUGH_REPLICAS);
  });

  it('times out an acks=all wait with REQUEST_TIMED_OUT, and proposes a follower back into the ISR once caught up', async () => {
    await lead(1, [0, 1]);
    const last = await produce(1);
    expect(await replicas.waitForInSyncReplicas(partition(), last, 50)).to.equal(ErrorCode.REQUEST_TIMED_OUT);
    await followerFetch(1, last + 1);
    await followerFetch(2, last + 1);
    const role = partition().role;
    if (role?.kind === 'leader') await role.replicas.isrChangeSettled();
    expect(proposals.map((p) => p.isr)).to.deep.equal([[0, 1, 2]]);
  });

  it('tells a follower with a divergent tail where its last epoch ends here (KIP-320)', async () => {
    await lead(1);
    await produce(2); // offsets 0-1 in epoch 1
    await lead(3);
    await produce(1); // offset 2 in epoch 3
    // The follower has epoch 2 up to offset 5, which this leader never had.
    const answer = await followerFetch(1, 5, 2);
    expect(answer.divergingEpoch).to.deep.equal({ epoch: 1, endOffset: 2 });
    expect(answer.records.length).to.equal(0);
    const inStep = await followerFetch(1, 2, 1);
    expect(inStep.divergingEpoch).to.equal(undefined);
  });

  it('as a follower refuses client writes, answers waiting acks=all produces NOT_LEADER_OR_FOLLOWER and fetches from the leader', async () => {
    await lead(1);
    const last = await produce(1);
    const waiting = replicas.waitForInSyncReplicas(partition(), last, 10_000);
    await replicas.makeFollower(TOPIC, 0, { leader: 2, leaderEpoch: 2, isr: [2, 1], partitionEpoch: partitionEpoch + 1, replicas: [0, 1, 2] });
    expect(await waiting).to.equal(ErrorCode.NOT_LEADER_OR_FOLLOWER);
    const found = replicas.leaderPartition(TOPIC.name, 0, NO_LEADER_EPOCH);
    expect(found).to.deep.equal({ errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER });
    expect(fetched.map((f) => [f.leaderId, f.partitions[0].leaderEpoch])).to.deep.equal([[2, 2]]);
    expect(replicas.leaderPartition(TOPIC.name, 0, 1)).to.deep.equal({ errorCode: ErrorCode.FENCED_LEADER_EPOCH });

    // Leading again: the same partition (its log, its state) stops being fetched first.
    const before = partition();
    await lead(3);
    expect(partition()).to.equal(before);
    expect(unfetched).to.deep.equal([`${TOPIC.name}-0`]);
    expect(replicas.leaderPartition(TOPIC.name, 0, 3)).to.include({ leaderEpoch: 3 });
  });
});
