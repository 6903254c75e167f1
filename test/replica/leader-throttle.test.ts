// Replication throttling on the leader (ReplicaManager.fetchMessages with a leader quota on a fake
// clock): which partitions a follower's fetch is refused records of while the quota is exceeded
// (throttled here by its topic's leader.replication.throttled.replicas, the follower out of the ISR),
// what is recorded, the long poll, and a topic config change applied at once.
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
import { NO_LEADER_EPOCH, ReplicaManager } from '../../src/replica/replica-manager';
import { ReplicationQuota } from '../../src/replica/replication-quota';
import type { FollowerFetchers } from '../../src/replica/replication';

const LEADER = 0;
const RATE = 1000;

const topicOf = (name: string, configs: Record<string, string>): TopicRecord => ({
  name, id: name.padEnd(32, '0'), configs,
  partitions: [{ index: 0, replicas: [0, 1, 2], leader: LEADER, leaderEpoch: 0, isr: [0] }],
});

describe('replica/leader-side replication throttling', function () {
  this.timeout(20000);
  let dir: string;
  let replicas: ReplicaManager;
  let now: number;
  let leaderQuota: ReplicationQuota;
  let topics: Map<string, TopicRecord>;
  const SLOW = 'slow';
  const FAST = 'fast';

  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'fjord-throttle-'));
    now = 1_000_000;
    const quota = () => new ReplicationQuota({ rate: () => RATE, windows: 11, windowMs: 1000, now: () => now });
    leaderQuota = quota();
    // The slow topic throttles its partition 0 on broker 0 (this leader), and names another broker's replica.
    topics = new Map([
      [SLOW, topicOf(SLOW, { 'leader.replication.throttled.replicas': '0:0,0:1' })],
      [FAST, topicOf(FAST, { 'leader.replication.throttled.replicas': '0:1' })],
    ]);
    const config = BrokerConfig.load({ flags: { dataDir: dir, nodeId: LEADER, host: '127.0.0.1', port: 0 } });
    const fetchers: FollowerFetchers = { addPartitions: () => undefined, removePartitions: async () => undefined, close: async () => undefined };
    let partitionEpoch = 0;
    replicas = await ReplicaManager.open(config, { topic: (n) => topics.get(n), topics: () => [...topics.values()] },
      createLogger({ level: 'silent' }), {
        brokerId: LEADER, fetchers, replicaLagTimeMaxMs: 100_000, quotas: { leader: leaderQuota, follower: quota() },
        alterPartition: async (_topic, _partition, proposal): Promise<AlterPartitionResult> => {
          partitionEpoch = proposal.partitionEpoch + 1;
          return { state: { leader: LEADER, leaderEpoch: proposal.leaderEpoch, isr: proposal.isr, partitionEpoch } };
        },
      });
    await replicas.loaded;
    for (const topic of topics.values()) {
      await replicas.makeLeader(topic, 0, { leader: LEADER, leaderEpoch: 1, isr: [0], partitionEpoch: 0, replicas: [0, 1, 2] });
    }
  });

  afterEach(async () => {
    await replicas.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** Appends `count` batches of 100-byte values to a topic; its log end. */
  async function produce(topic: string, count: number): Promise<number> {
    let end = 0;
    for (let i = 0; i < count; i++) {
      const found = replicas.leaderPartition(topic, 0, NO_LEADER_EPOCH);
      if ('errorCode' in found) throw new Error(`not leader: ${found.errorCode}`);
      const appended = await replicas.append(found.partition, buildBatchSync({ records: [{ value: 'x'.repeat(100) }] }), found.leaderEpoch,
        { produceVersion: 9, nowMs: Date.now() });
      await appended.done;
      end = appended.lastOffset + 1;
    }
    return end;
  }

  const params = (replicaId: number, over: Partial<FetchParams> = {}): FetchParams => ({
    maxWaitMs: 0, minBytes: 1, maxBytes: 1 << 20, isolation: 'log-end', replicaId, allocate: (size) => Buffer.allocUnsafe(size), ...over,
  });
  const at = (topic: string, fetchOffset: number, over: Partial<FetchPartition> = {}): FetchPartition => ({
    topic, partition: 0, fetchOffset, maxBytes: 1 << 20, currentLeaderEpoch: NO_LEADER_EPOCH, ...over,
  });

  it('answers a follower out of the ISR no records of a throttled partition while the quota is exceeded; others flow', async () => {
    const end = await produce(SLOW, 20);
    await produce(FAST, 20);
    // Under the quota: both partitions' records, the throttled ones recorded.
    const first = await replicas.fetchMessages(params(1), [at(SLOW, 0), at(FAST, 0)]);
    expect(first.map((r) => r.records.length > 0)).to.deep.equal([true, true]);
    expect(leaderQuota.measuredRate()).to.equal(first[0].records.length); // over the first 1 s window
    expect(leaderQuota.isQuotaExceeded()).to.equal(true);

    // Over it: the throttled partition answers NONE with its offsets and no records; the other is read.
    const [slow, fast] = await replicas.fetchMessages(params(1), [at(SLOW, 5), at(FAST, 5)]);
    expect(slow).to.deep.include({ errorCode: ErrorCode.NONE, highWatermark: end, logStartOffset: 0 });
    expect(slow.records.length).to.equal(0);
    expect(fast.records.length).to.be.greaterThan(0);
    expect(leaderQuota.measuredRate()).to.equal(first[0].records.length); // nothing more recorded

    // Once the rate has fallen under the bound, records flow again.
    now += 12_000;
    const [later] = await replicas.fetchMessages(params(1), [at(SLOW, 5)]);
    expect(later.records.length).to.be.greaterThan(0);
  });

  it('gives a throttled partition no budget or first-batch allowance (KIP-74) while held back', async () => {
    await produce(SLOW, 5);
    await produce(FAST, 5);
    leaderQuota.record(10 * RATE);
    // A budget of one byte: the first partition with data returns its first batch; that is the fast one.
    const [slow, fast] = await replicas.fetchMessages(params(2, { maxBytes: 1 }), [at(SLOW, 0), at(FAST, 0)]);
    expect(slow.records.length).to.equal(0);
    expect(fast.records.length).to.be.greaterThan(0);
  });

  it('never holds back a follower in the ISR, nor a partition this broker is not listed for', async () => {
    const end = await produce(SLOW, 5);
    // Replica 1 catches up: it joins the ISR.
    await replicas.fetchMessages(params(1), [at(SLOW, end)]);
    const role = replicas.partition(SLOW, 0)!.role;
    if (role?.kind !== 'leader') throw new Error('not leader');
    await role.replicas.isrChangeSettled();
    expect(role.replicas.isr).to.include(1);
    await produce(SLOW, 5);
    leaderQuota.record(10 * RATE);
    const [inSync] = await replicas.fetchMessages(params(1), [at(SLOW, end)]);
    expect(inSync.records.length).to.be.greaterThan(0);
    const [outOfSync] = await replicas.fetchMessages(params(2), [at(SLOW, 0)]);
    expect(outOfSync.records.length).to.equal(0);

    // FAST lists only broker 1's replica: not throttled on this leader.
    await produce(FAST, 2);
    const [fast] = await replicas.fetchMessages(params(2), [at(FAST, 0)]);
    expect(fast.records.length).to.be.greaterThan(0);
  });

  it('keeps a throttled follower\'s long poll waiting through appends and high watermark news', async () => {
    const end = await produce(SLOW, 5);
    leaderQuota.record(10 * RATE);
    const started = Date.now();
    const fetching = replicas.fetchMessages(params(2, { maxWaitMs: 300 }), [at(SLOW, 0, { replicaHighWatermark: 0 })]);
    await new Promise((resolve) => setTimeout(resolve, 50));
    await produce(SLOW, 3); // would end an unthrottled wait
    const [answer] = await fetching;
    expect(Date.now() - started).to.be.at.least(280);
    expect(answer.records.length).to.equal(0);
    expect(answer.highWatermark).to.equal(end + 3); // the leader is alone in the ISR

    // Unthrottled, the same fetch answers at once.
    now += 12_000;
    const quick = Date.now();
    const [data] = await replicas.fetchMessages(params(2, { maxWaitMs: 300 }), [at(SLOW, 0, { replicaHighWatermark: 0 })]);
    expect(Date.now() - quick).to.be.below(250);
    expect(data.records.length).to.be.greaterThan(0);
  });

  it('applies a change of the topic\'s throttled replicas at once (configsChanged)', async () => {
    await produce(SLOW, 5);
    await produce(FAST, 5);
    leaderQuota.record(10 * RATE);
    const slowAfter = topicOf(SLOW, {});
    const fastAfter = topicOf(FAST, { 'leader.replication.throttled.replicas': '*' });
    topics.set(SLOW, slowAfter);
    topics.set(FAST, fastAfter);
    replicas.configsChanged(slowAfter);
    replicas.configsChanged(fastAfter);
    const [slow, fast] = await replicas.fetchMessages(params(2), [at(SLOW, 0), at(FAST, 0)]);
    expect(slow.records.length).to.be.greaterThan(0);
    expect(fast.records.length).to.equal(0);
  });

  it('answers an out-of-range fetch offset of a held-back partition with OFFSET_OUT_OF_RANGE', async () => {
    const end = await produce(SLOW, 2);
    leaderQuota.record(10 * RATE);
    const [answer] = await replicas.fetchMessages(params(2), [at(SLOW, end + 10)]);
    expect(answer.errorCode).to.equal(ErrorCode.OFFSET_OUT_OF_RANGE);
  });
});
