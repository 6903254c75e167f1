// Client quotas without a broker: the windowed rate Kafka's quotas use (common/windowed-rate.ts) and
// the throttle time formula over a fake clock, the entity precedence, and Kafka's validation and
// describe-filter rules (src/cluster/client-quotas.ts, client-quota-manager.ts).
import { expect } from 'chai';
import { WindowedRate } from '../../src/common/windowed-rate';
import { ClientQuotaManager, ClientQuotas, ControllerMutationQuotaManager } from '../../src/cluster/client-quota-manager';
import { TokenBucket } from '../../src/common/token-bucket';
import {
  MatchType, describeQuotas, entityKey, parseEntityKey, planAlteration, resolveQuota, type QuotaEntity, type QuotaTable,
} from '../../src/cluster/client-quotas';

const table = (entries: [QuotaEntity, Record<string, number>][]): Map<string, Record<string, number>> =>
  new Map(entries.map(([e, v]) => [entityKey(e), v]));

describe('cluster/client quotas', () => {
  describe('the rate (Kafka Rate over a SampledStat)', () => {
    it('measures the first window as if the windows before it had been empty', () => {
      const rate = new WindowedRate({ samples: 11, windowMs: 1000, span: 'full' });
      rate.record(1000, 0);
      expect(rate.spanMs(0)).to.equal(10_000); // 0 ms elapsed + 10 missing full windows
      expect(rate.measure(0)).to.equal(100);
      expect(rate.spanMs(2500)).to.equal(2500 + 8 * 1000);
      expect(rate.measure(2500)).to.be.closeTo(1000 / 10.5, 1e-9);
    });

    it('rolls over to a new window each windowMs and forgets windows idle for the whole span', () => {
      const rate = new WindowedRate({ samples: 2, windowMs: 1000, span: 'full' });
      rate.record(100, 0);
      rate.record(100, 500); // the same window
      expect(rate.measure(500)).to.be.closeTo(200 / 1.5, 1e-9); // 500 ms + one missing window
      rate.record(100, 1000); // a second window
      expect(rate.measure(1000)).to.equal(300);
      expect(rate.measure(1999)).to.be.closeTo(300 / 1.999, 1e-9);
      // The first window's last event (500) is samples * windowMs old: it no longer counts.
      expect(rate.measure(2500)).to.be.closeTo(100 / 1.5, 1e-9);
      expect(rate.measure(3000)).to.equal(0);
    });
  });

  describe('the throttle time', () => {
    let now: number;
    let quotas: Map<string, Record<string, number>>;
    const manager = (key = 'producer_byte_rate', maxThrottleMs = Infinity) =>
      new ClientQuotaManager(key, { samples: 11, windowMs: 1000 }, () => quotas, maxThrottleMs, () => now);
    beforeEach(() => {
      now = 5_000_000;
      quotas = table([[{ 'client-id': 'c1' }, { producer_byte_rate: 1000, request_percentage: 50 }]]);
    });

    it('is (rate - bound) / bound * the measured span, as Kafka QuotaUtils.throttleTime', () => {
      const m = manager();
      expect(m.recordAndGetThrottleMs('ANONYMOUS', 'c1', 10_000)).to.equal(0); // 10000 B over 10 s: at the bound
      now += 500;
      // 12000 B over 10.5 s: (1142.857 - 1000) / 1000 * 10500 = 1500 ms
      expect(m.recordAndGetThrottleMs('ANONYMOUS', 'c1', 2000)).to.equal(1500);
      now += 4500;
      // A new window: 12100 B over the 5 s since the first began + 5 missing windows = 1210 B/s, 0.21 * 10000
      expect(m.recordAndGetThrottleMs('ANONYMOUS', 'c1', 100)).to.equal(2100);
    });

    it('applies only to clients with a quota, and a change to the next request', () => {
      const m = manager();
      expect(m.recordAndGetThrottleMs('ANONYMOUS', 'other', 1e9)).to.equal(0);
      expect(m.recordAndGetThrottleMs('ANONYMOUS', 'c1', 20_000)).to.equal(10_000); // 2000 B/s against 1000
      quotas = table([[{ 'client-id': 'c1' }, { producer_byte_rate: 4000 }]]);
      m.quotasChanged();
      expect(m.recordAndGetThrottleMs('ANONYMOUS', 'c1', 0)).to.equal(0); // the same windows, under the new bound
      quotas = new Map();
      m.quotasChanged();
      expect(m.active).to.equal(false);
    });

    it('caps request_percentage throttles at one window, and a measure is taken back by unrecord', () => {
      const request = manager('request_percentage', 1000);
      expect(request.recordAndGetThrottleMs('ANONYMOUS', 'c1', 5000)).to.equal(1000); // 500 % against 50 %
      const produce = manager();
      produce.recordAndGetThrottleMs('ANONYMOUS', 'c1', 30_000);
      produce.unrecord('ANONYMOUS', 'c1', 30_000);
      expect(produce.recordAndGetThrottleMs('ANONYMOUS', 'c1', 1000)).to.equal(0);
    });

    it('is enabled only while some quota the connection enforces is set', () => {
      quotas = new Map();
      const all = new ClientQuotas({ samples: 11, windowMs: 1000 }, { samples: 11, windowMs: 1000 }, () => quotas, () => now);
      expect(all.enabled).to.equal(false);
      quotas = table([[{ user: null }, { consumer_byte_rate: 10 }]]);
      all.quotasChanged();
      expect([all.enabled, all.fetch.active, all.produce.active]).to.deep.equal([true, true, false]);
    });
  });

  describe('the controller mutation quota (Kafka TokenBucket)', () => {
    it('starts full at rate * window span, refills at the rate, and goes into debt', () => {
      const bucket = new TokenBucket(11); // 11 windows of a second
      expect(bucket.measure(2, 1_000_000)).to.equal(22);
      bucket.record(30, 2, 1_000_000);
      expect(bucket.measure(2, 1_000_000)).to.equal(-8);
      expect(bucket.measure(2, 1_002_000)).to.equal(-4);
      expect(bucket.measure(2, 1_100_000)).to.equal(22);
    });

    it('refuses when in debt if strict, throttles for the debt at the rate, and only throttles if permissive', () => {
      let now = 1_000_000;
      const quotas = table([[{ 'client-id': 'c1' }, { controller_mutation_rate: 2 }]]);
      const m = new ControllerMutationQuotaManager({ samples: 11, windowMs: 1000 }, () => quotas, () => now);
      const strict = m.forRequest('ANONYMOUS', 'c1', true);
      expect(strict.charge(30)).to.equal(null); // 22 credits: allowed, 8 in debt
      expect(strict.throttleTimeMs).to.equal(0);
      expect(strict.charge(1)).to.deep.equal({ errorCode: 89, errorMessage: 'The throttling quota has been exceeded.' });
      expect(strict.throttleTimeMs).to.equal(4000); // 8 credits at 2 per second
      now += 1000;
      const permissive = m.forRequest('ANONYMOUS', 'c1', false);
      expect(permissive.charge(4)).to.equal(null);
      expect(permissive.throttleTimeMs).to.equal(5000); // 8 - 2 refilled + 4, at 2 per second
      expect(m.forRequest('ANONYMOUS', 'other', true).charge(1000)).to.equal(null); // no quota
    });
  });

  describe('entities', () => {
    it('round-trip through their stored keys, defaults and odd names included', () => {
      for (const e of [{ user: 'alice' }, { user: null }, { user: 'a/b', 'client-id': null }, { 'client-id': '<default>' }, { ip: '10.0.0.1' }] as QuotaEntity[]) {
        expect(parseEntityKey(entityKey(e))).to.deep.equal(e);
      }
      expect(entityKey({ user: null, 'client-id': 'c1' })).to.equal('users/<default>/clients/c1');
      expect(entityKey({ 'client-id': '<default>' })).to.not.equal(entityKey({ 'client-id': null }));
    });

    it('resolve in Kafka precedence order, sharing the measure as the entity found says', () => {
      const levels: [QuotaEntity, number][] = [
        [{ user: 'u', 'client-id': 'c' }, 1], [{ user: 'u', 'client-id': null }, 2], [{ user: 'u' }, 3],
        [{ user: null, 'client-id': 'c' }, 4], [{ user: null, 'client-id': null }, 5], [{ user: null }, 6],
        [{ 'client-id': 'c' }, 7], [{ 'client-id': null }, 8],
      ];
      const expectedShare = [['u', 'c'], ['u', 'c'], ['u', ''], ['u', 'c'], ['u', 'c'], ['u', ''], ['', 'c'], ['', 'c']];
      for (let i = 0; i < levels.length; i++) {
        const t: QuotaTable = table(levels.slice(i).map(([e, v]) => [e, { producer_byte_rate: v }]));
        expect(resolveQuota(t, 'producer_byte_rate', 'u', 'c')).to.deep.equal({ bound: i + 1, user: expectedShare[i][0], clientId: expectedShare[i][1] });
      }
      expect(resolveQuota(table([[{ user: 'x' }, { producer_byte_rate: 1 }]]), 'producer_byte_rate', 'u', 'c')).to.equal(undefined);
      // Each key resolves on its own: a user+client entity without the key falls through to the user's.
      const mixed = table([[{ user: 'u', 'client-id': 'c' }, { consumer_byte_rate: 9 }], [{ user: 'u' }, { producer_byte_rate: 3 }]]);
      expect(resolveQuota(mixed, 'producer_byte_rate', 'u', 'c')?.bound).to.equal(3);
    });

    it('are validated as Kafka ClientQuotaControlManager does, with its messages', () => {
      const refusal = (entity: Record<string, string | null>, ops: { key: string; value: number | null }[]) => {
        const r = planAlteration(entity, ops, undefined);
        return 'errorCode' in r ? [r.errorCode, r.errorMessage] : null;
      };
      expect(refusal({}, [])).to.deep.equal([42, 'Invalid empty client quota entity']);
      expect(refusal({ group: 'g' }, [])).to.deep.equal([42, 'Unhandled client quota entity type: group']);
      expect(refusal({ user: '' }, [])).to.deep.equal([42, 'Empty user not supported']);
      expect(refusal({ user: 'u', ip: null }, [])).to.deep.equal([42, 'Invalid quota entity combination, IP entity shouldnot be combined with User or ClientId']);
      expect(refusal({ ip: 'nope' }, [])).to.deep.equal([42, 'nope is not a valid IP or resolvable host.']);
      expect(refusal({ user: 'u' }, [{ key: 'bogus', value: 1 }])).to.deep.equal([42, 'Invalid configuration key bogus']);
      expect(refusal({ user: 'u' }, [{ key: 'producer_byte_rate', value: 0 }])).to.deep.equal([42, 'Quota producer_byte_rate must be greater than 0']);
      expect(refusal({ user: 'u' }, [{ key: 'consumer_byte_rate', value: 1.5 }])).to.deep.equal([42, 'consumer_byte_rate cannot be a fractional value.']);
      expect(refusal({ user: 'u' }, [{ key: 'producer_byte_rate', value: 1e19 }])).to.deep.equal([42, 'Proposed value for producer_byte_rate is too large for a LONG.']);
      expect(refusal({ ip: '10.0.0.1' }, [{ key: 'producer_byte_rate', value: 1 }])).to.deep.equal([42, 'Invalid configuration key producer_byte_rate']);
      expect(refusal({ user: 'u', 'client-id': null }, [{ key: 'request_percentage', value: 12.5 }, { key: 'controller_mutation_rate', value: 0.5 }])).to.equal(null);
      const planned = planAlteration({ user: 'u' }, [{ key: 'producer_byte_rate', value: null }, { key: 'consumer_byte_rate', value: 7 }], { producer_byte_rate: 1 });
      expect(planned).to.deep.equal({ key: 'users/u', entity: { user: 'u' }, values: { consumer_byte_rate: 7 } });
    });

    it('are described by Kafka filter rules: exact, default, specified, strict', () => {
      const t = table([
        [{ user: 'u' }, { producer_byte_rate: 1 }], [{ user: null }, { producer_byte_rate: 2 }],
        [{ user: 'u', 'client-id': 'c' }, { producer_byte_rate: 3 }], [{ 'client-id': 'c' }, { producer_byte_rate: 4 }],
      ]);
      const bounds = (components: { entityType: string; matchType: number; match: string | null }[], strict: boolean) => {
        const r = describeQuotas(t, components, strict);
        return 'errorCode' in r ? r : r.map((e) => e.values.producer_byte_rate).sort();
      };
      expect(bounds([], false)).to.deep.equal([1, 2, 3, 4]);
      expect(bounds([], true)).to.deep.equal([]);
      expect(bounds([{ entityType: 'user', matchType: MatchType.EXACT, match: 'u' }], false)).to.deep.equal([1, 3]);
      expect(bounds([{ entityType: 'user', matchType: MatchType.EXACT, match: 'u' }], true)).to.deep.equal([1]);
      expect(bounds([{ entityType: 'user', matchType: MatchType.DEFAULT, match: null }], true)).to.deep.equal([2]);
      expect(bounds([{ entityType: 'client-id', matchType: MatchType.SPECIFIED, match: null }], false)).to.deep.equal([3, 4]);
      expect(bounds([{ entityType: 'user', matchType: MatchType.EXACT, match: null }], false))
        .to.deep.equal({ errorCode: 42, errorMessage: 'Request specified MATCH_TYPE_EXACT, but set match string to null.' });
      expect(bounds([{ entityType: 'user', matchType: 2, match: null }, { entityType: 'user', matchType: 2, match: null }], false))
        .to.deep.equal({ errorCode: 42, errorMessage: 'Entity type user cannot appear more than once in the filter.' });
      expect(bounds([{ entityType: 'group', matchType: 2, match: null }], false)).to.deep.equal({ errorCode: 35, errorMessage: 'Unsupported entity type group' });
      expect(bounds([{ entityType: 'ip', matchType: 2, match: null }, { entityType: 'user', matchType: 2, match: null }], false)).to.deep.equal({
        errorCode: 42, errorMessage: 'Invalid entity filter component combination. IP filter component should not be used with user or clientId filter component.',
      });
    });
  });
});
