// Replication throttling on the follower (the replica fetcher with a follower quota on a fake clock,
// fetching from fake-leader.ts): a throttled partition not in sync is left out of the requests while
// the quota is exceeded, the bytes received are recorded, an in-sync one is never held back, and the
// rate and the throttled list are read at each request.
import { expect } from 'chai';
import { ReplicaFetcherManager } from '../../src/replica/replica-fetcher-manager';
import { ReplicationQuota } from '../../src/replica/replication-quota';
import { partitionLogs, silentLogger } from '../storage/helpers';
import { leaderAppend } from '../storage/replication-helpers';
import { FakeLeader } from './fake-leader';

const TOPIC_ID = '0123456789abcdef0123456789abcdef';
const LONG_MAX = Number(9223372036854775807n);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(what: string, condition: () => boolean, timeoutMs = 8000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

describe('replica/follower-side replication throttling', function () {
  this.timeout(20000);
  const logs = partitionLogs('fjord-follower-throttle-', 1 << 20);
  let manager: ReplicaFetcherManager | undefined;
  let now: number;
  let rate: number;
  let quota: ReplicationQuota;

  beforeEach(() => {
    now = 1_000_000;
    rate = 100;
    quota = new ReplicationQuota({ rate: () => rate, windows: 11, windowMs: 1000, now: () => now });
    quota.markThrottled('t', '*');
  });

  afterEach(async () => {
    await manager?.close();
    manager = undefined;
  });

  async function setUp(batches: number) {
    const leaderLog = await logs.open();
    for (let i = 0; i < batches; i++) await leaderAppend(leaderLog, { records: 3, epoch: 0 }).done;
    const follower = await logs.open();
    const leader = new FakeLeader('t', TOPIC_ID, leaderLog, 0);
    manager = new ReplicaFetcherManager({
      brokerId: 2, connect: leader.connect, logger: silentLogger, quota,
      config: { numReplicaFetchers: 1, fetchWaitMaxMs: 20, fetchMinBytes: 1, fetchResponseMaxBytes: 1 << 20, fetchMaxBytes: 300, fetchBackoffMs: 20 },
      onHighWatermark: () => undefined,
    });
    manager.addPartitions(1, [{ topic: 't', partition: 0, topicId: TOPIC_ID, leaderEpoch: 0, log: follower }]);
    return { leaderLog, follower, leader };
  }

  it('leaves a throttled partition behind the leader out of its requests while the quota is exceeded', async () => {
    const { leaderLog, follower, leader } = await setUp(20);
    await until('a first answer', () => leader.fetchAnswers.length === 1 && follower.logEndOffset > 0);
    const received = leader.fetchAnswers[0].records!.length;
    expect(received).to.be.within(1, 300);
    expect(quota.measuredRate()).to.equal(received); // recorded, over the first 1 s window
    await sleep(200); // ten backoffs
    expect(leader.fetches()).to.have.length(1);
    expect(follower.logEndOffset).to.be.below(leaderLog.logEndOffset);

    // The measured rate falls below the bound: one more request, and it is over again.
    now += 12_000;
    await until('a second answer', () => leader.fetchAnswers.length === 2);
    await sleep(100);
    expect(leader.fetches()).to.have.length(2);

    // The bound is read at each request: raised, the follower catches up.
    rate = LONG_MAX;
    await until('the follower to catch up', () => follower.logEndOffset === leaderLog.logEndOffset);
  });

  it('never holds back a partition in sync, nor one its topic does not throttle', async () => {
    const { leaderLog, follower, leader } = await setUp(2); // one fetch takes all: in sync after it
    await until('the follower to catch up', () => follower.logEndOffset === leaderLog.logEndOffset);
    quota.record(100 * rate);
    expect(quota.isQuotaExceeded()).to.equal(true);
    const asked = leader.fetches().length;
    await sleep(100);
    expect(leader.fetches().length).to.be.greaterThan(asked); // still polling
    await leaderAppend(leaderLog, { records: 3, epoch: 0 }).done;
    await until('the new batch', () => follower.logEndOffset === leaderLog.logEndOffset);

    // Behind again (four answers' worth), but no longer throttled: it catches up over the quota.
    quota.removeThrottle('t');
    for (let i = 0; i < 12; i++) await leaderAppend(leaderLog, { records: 3, epoch: 0 }).done;
    await until('the follower to catch up', () => follower.logEndOffset === leaderLog.logEndOffset);
  });
});
