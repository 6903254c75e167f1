// The replication quota (src/replica/replication-quota.ts) over a fake clock: Kafka's windows and
// rate, a sender held to the bound, the bound read at each check, and the throttled-replica lists.
import { expect } from 'chai';
import { BrokerConfig } from '../../src/config/broker-config';
import { ReplicationQuota, replicationQuotasOf, throttledPartitionsOf } from '../../src/replica/replication-quota';

/** Long.MAX_VALUE as BrokerConfig.getLong gives it. */
const LONG_MAX = Number(9223372036854775807n);

describe('replica/replication quota', () => {
  let now: number;
  const quota = (rate: number | (() => number), windows = 11, windowMs = 1000) =>
    new ReplicationQuota({ rate: typeof rate === 'number' ? () => rate : rate, windows, windowMs, now: () => now });

  beforeEach(() => {
    now = 1_000_000;
  });

  it('measures over at least one window, then over the time since the oldest live window began', () => {
    const q = quota(LONG_MAX);
    expect(q.measuredRate()).to.equal(0);
    q.record(500);
    expect(q.measuredRate()).to.equal(500); // 500 bytes over the first (whole) second
    now += 400;
    expect(q.measuredRate()).to.equal(500);
    now += 4600;
    expect(q.measuredRate()).to.equal(100); // 500 bytes over 5 s
    q.record(1000); // a new window
    expect(q.measuredRate()).to.equal(300);
  });

  it('forgets windows without events for window.num windows', () => {
    const q = quota(LONG_MAX, 3, 1000);
    q.record(3000);
    now += 2999;
    expect(q.measuredRate()).to.be.closeTo(3000 / 2.999, 1e-6);
    now += 1;
    expect(q.measuredRate()).to.equal(0);
  });

  it('keeps window.num + 1 windows, recycling the oldest', () => {
    const q = quota(LONG_MAX, 2, 1000);
    for (let i = 0; i < 5; i++) {
      q.record(100); // at 0, 0.5, 1, 1.5 and 2 s: windows begin at 0, 1 and 2 s
      if (i < 4) now += 500;
    }
    now += 400;
    // All three live (the first had an event 1.9 s ago): 500 bytes over the 2.4 s since 0.
    expect(q.measuredRate()).to.be.closeTo(500 / 2.4, 1e-9);
    now += 600;
    q.record(100); // a fourth window recycles the first: 400 bytes over the 2 s since 1 s
    expect(q.measuredRate()).to.equal(200);
  });

  it('is exceeded only above the bound, read at every check', () => {
    let bound = 1000;
    const q = quota(() => bound);
    q.record(1000);
    expect(q.isQuotaExceeded()).to.equal(false);
    q.record(1);
    expect(q.isQuotaExceeded()).to.equal(true);
    bound = 2000;
    expect(q.isQuotaExceeded()).to.equal(false);
    bound = 0;
    expect(q.isQuotaExceeded()).to.equal(true);
  });

  it('is never exceeded at Long.MAX_VALUE (the default)', () => {
    const q = quota(LONG_MAX);
    for (let i = 0; i < 100; i++) {
      q.record(1 << 30);
      expect(q.isQuotaExceeded()).to.equal(false);
    }
  });

  it('holds a sender that sends whenever it is not exceeded to about the bound', () => {
    const rate = 1_000_000;
    const q = quota(rate);
    const chunk = 64 * 1024;
    let sent = 0;
    const start = now;
    const rates: number[] = [];
    while (now - start < 20_000) {
      if (!q.isQuotaExceeded()) {
        q.record(chunk);
        sent += chunk;
      }
      now += 5;
      if ((now - start) % 1000 === 0 && now - start >= 3000) rates.push(q.measuredRate());
    }
    expect(sent / 20).to.be.within(0.95 * rate, 1.1 * rate);
    for (const r of rates) expect(r).to.be.within(0.9 * rate, 1.1 * rate);
  });

  it('throttles the partitions a topic names, or all of them with *', () => {
    const q = quota(LONG_MAX);
    expect(q.isThrottled('t', 0)).to.equal(false);
    q.markThrottled('t', [0, 2]);
    expect([0, 1, 2].map((p) => q.isThrottled('t', p))).to.deep.equal([true, false, true]);
    expect(q.isThrottled('u', 0)).to.equal(false);
    q.markThrottled('t', '*');
    expect(q.isThrottled('t', 7)).to.equal(true);
    q.removeThrottle('t');
    expect(q.isThrottled('t', 0)).to.equal(false);
  });

  it('takes from a topic config the partitions listed with this broker\'s id (Kafka\'s parseThrottledPartitions)', () => {
    expect(throttledPartitionsOf(undefined, 1)).to.equal(undefined);
    expect(throttledPartitionsOf('', 1)).to.equal(undefined);
    expect(throttledPartitionsOf(' * ', 1)).to.equal('*');
    expect(throttledPartitionsOf('0:1,1:2,2:1', 1)).to.deep.equal([0, 2]);
    expect(throttledPartitionsOf('0:1, 3:1 ', 1)).to.deep.equal([0, 3]);
    expect(throttledPartitionsOf('0:1,1:2', 3)).to.deep.equal([]);
  });

  it('reads the broker\'s rates at use time and its windows at start', () => {
    const config = BrokerConfig.load({ sets: { 'replication.quota.window.num': '2', 'replication.quota.window.size.seconds': '2' } });
    config.setDynamicConfigs({ 'leader.replication.throttled.rate': '100' }, {});
    const { leader, follower } = replicationQuotasOf(config);
    expect(leader.bound).to.equal(100);
    expect(follower.bound).to.equal(LONG_MAX);
    leader.record(300);
    expect(leader.measuredRate()).to.equal(150); // the first window is 2 s
    expect(leader.isQuotaExceeded()).to.equal(true);
    expect(follower.isQuotaExceeded()).to.equal(false);
  });
});
