// Measuring clients against their quotas (Kafka's ClientQuotaManager, ClientRequestQuotaManager,
// QuotaFactory). One manager per quota key: what a request of (user, client-id) used is recorded in
// the measure of the pair its quota resolves to (client-quotas.ts resolveQuota: all of a user's
// clients share one when the quota is the user's), a rate over `quota.window.num` windows of
// `quota.window.size.seconds` (Kafka's Rate: common/windowed-rate.ts 'full'). Over the bound, the
// throttle time is Kafka's QuotaUtils.throttleTime: (rate - bound) / bound * the measured span,
// rounded; request_percentage caps it at one window, as ClientRequestQuotaManager does.
//
// Nothing is looked up while no entity has the key (`active` is a field, read on every request).
// Resolutions are cached per (user, client-id) until the quotas change; they apply to the next
// request (the windows so far are kept). A measure idle for the whole span measures zero, so it is
// dropped (swept at most once per span): memory follows the clients active in the last span.
import { WindowedRate } from '../common/windowed-rate';
import { TokenBucket } from '../common/token-bucket';
import { ErrorCode, errorMessage } from '../common/errors';
import {
  CONSUMER_BYTE_RATE, CONTROLLER_MUTATION_RATE, PRODUCER_BYTE_RATE, REQUEST_PERCENTAGE, resolveQuota, type QuotaTable,
} from './client-quotas';
import type { Outcome } from './metadata-backend';

export interface QuotaWindows {
  /** quota.window.num */
  samples: number;
  /** quota.window.size.seconds, in ms. */
  windowMs: number;
}

interface Resolved {
  bound: number;
  /** The measure shared by every (user, client-id) resolving to the same pair. */
  measureKey: string;
}

/** Resolutions kept before the cache starts over (a flood of client ids must not grow it forever). */
const MAX_CACHED_RESOLUTIONS = 10_000;

export class ClientQuotaManager {
  /** Whether any entity has a quota of this key: when not, nothing is recorded. */
  active = false;
  private readonly resolved = new Map<string, Resolved | null>();
  private readonly measures = new Map<string, WindowedRate>();
  private nextSweepMs = 0;

  constructor(
    readonly key: string,
    private readonly windows: QuotaWindows,
    private readonly table: () => QuotaTable,
    /** The longest throttle this quota answers (Infinity: none). */
    private readonly maxThrottleMs = Infinity,
    private readonly now: () => number = Date.now,
  ) {
    this.quotasChanged();
  }

  /** The quotas changed (AlterClientQuotas through any broker): resolve again from the next request. */
  quotasChanged(): void {
    this.resolved.clear();
    this.active = false;
    for (const values of this.table().values()) {
      if (values[this.key] !== undefined) this.active = true;
    }
  }

  /**
   * Records `value` for a request of (user, clientId) and answers how long it must be throttled
   * (0: within its quota, or none applies).
   */
  recordAndGetThrottleMs(user: string, clientId: string, value: number): number {
    const quota = this.resolve(user, clientId);
    if (!quota) return 0;
    const now = this.now();
    this.sweep(now);
    let rate = this.measures.get(quota.measureKey);
    if (!rate) this.measures.set(quota.measureKey, (rate = new WindowedRate({ ...this.windows, span: 'full' })));
    rate.record(value, now);
    const measured = rate.measure(now);
    if (measured <= quota.bound) return 0;
    return Math.min(Math.round(((measured - quota.bound) / quota.bound) * rate.spanMs(now)), this.maxThrottleMs);
  }

  /** Takes back what was recorded for a response that was not sent after all (a throttled fetch). */
  unrecord(user: string, clientId: string, value: number): void {
    const quota = this.resolve(user, clientId);
    if (quota) this.measures.get(quota.measureKey)?.record(-value, this.now());
  }

  /** The bound that applies to (user, clientId); undefined: unlimited. */
  bound(user: string, clientId: string): number | undefined {
    return this.resolve(user, clientId)?.bound;
  }

  protected resolve(user: string, clientId: string): Resolved | null {
    const pair = `${user}\u0000${clientId}`;
    let r = this.resolved.get(pair);
    if (r === undefined) {
      const found = resolveQuota(this.table(), this.key, user, clientId);
      r = found ? { bound: found.bound, measureKey: `${found.user}\u0000${found.clientId}` } : null;
      if (this.resolved.size >= MAX_CACHED_RESOLUTIONS) this.resolved.clear();
      this.resolved.set(pair, r);
    }
    return r;
  }

  /** Drops the measures without an event over the whole span (they would measure zero). */
  private sweep(now: number): void {
    if (now < this.nextSweepMs) return;
    const spanMs = this.windows.samples * this.windows.windowMs;
    this.nextSweepMs = now + spanMs;
    for (const [key, rate] of this.measures) {
      if (now - (rate.lastEventMs ?? now) >= spanMs) this.measures.delete(key);
    }
  }
}

/**
 * What one CreateTopics, CreatePartitions or DeleteTopics request may mutate (Kafka's
 * ControllerMutationQuota): `charge` is called with the partitions of each topic that passed every
 * other check, before it is written. Strict (the versions that know THROTTLING_QUOTA_EXCEEDED): once
 * the bucket is in debt the topic is refused with it. Permissive (older versions): always allowed,
 * the debt only throttles. `throttleTimeMs`: the time for the bucket to be out of debt at the rate.
 */
export interface MutationQuota {
  charge(partitions: number): Outcome | null;
  readonly throttleTimeMs: number;
}

const UNBOUNDED: MutationQuota = { charge: () => null, throttleTimeMs: 0 };
const THROTTLED: Outcome = { errorCode: ErrorCode.THROTTLING_QUOTA_EXCEEDED, errorMessage: errorMessage(ErrorCode.THROTTLING_QUOTA_EXCEEDED) };

/** controller_mutation_rate: partitions created or deleted per second, over Kafka's token bucket. */
export class ControllerMutationQuotaManager extends ClientQuotaManager {
  private readonly buckets = new Map<string, TokenBucket>();

  constructor(private readonly mutationWindows: QuotaWindows, table: () => QuotaTable, private readonly clock: () => number = Date.now) {
    super(CONTROLLER_MUTATION_RATE, mutationWindows, table, Infinity, clock);
  }

  /** The quota of one request of (user, clientId); strict from the API version given on. */
  forRequest(user: string, clientId: string, strict: boolean): MutationQuota {
    const quota = this.active ? this.resolve(user, clientId) : null;
    if (!quota) return UNBOUNDED;
    let bucket = this.buckets.get(quota.measureKey);
    if (!bucket) {
      if (this.buckets.size >= MAX_CACHED_RESOLUTIONS) this.buckets.clear();
      this.buckets.set(quota.measureKey, (bucket = new TokenBucket(this.mutationWindows.samples * this.mutationWindows.windowMs / 1000)));
    }
    const tokens = bucket;
    let throttleTimeMs = 0;
    const debtMs = (left: number) => (left < 0 ? Math.round((-left / quota.bound) * 1000) : 0);
    return {
      charge: (partitions) => {
        const now = this.clock();
        if (strict) {
          throttleTimeMs = debtMs(tokens.measure(quota.bound, now));
          if (throttleTimeMs > 0) return THROTTLED;
          tokens.record(partitions, quota.bound, now);
        } else {
          tokens.record(partitions, quota.bound, now);
          throttleTimeMs = debtMs(tokens.measure(quota.bound, now));
        }
        return null;
      },
      get throttleTimeMs() {
        return throttleTimeMs;
      },
    };
  }
}

/** The managers of the quotas the connection enforces (Kafka's QuotaFactory.QuotaManagers). */
export class ClientQuotas {
  readonly produce: ClientQuotaManager;
  readonly fetch: ClientQuotaManager;
  readonly request: ClientQuotaManager;
  /** Charged by the topic handlers; its throttle reaches the connection through their throttle_time_ms. */
  readonly controllerMutation: ControllerMutationQuotaManager;
  /** Whether any of them has a quota: one field read per request when none is configured. */
  enabled = false;

  constructor(windows: QuotaWindows, mutationWindows: QuotaWindows, table: () => QuotaTable, now: () => number = Date.now) {
    this.produce = new ClientQuotaManager(PRODUCER_BYTE_RATE, windows, table, Infinity, now);
    this.fetch = new ClientQuotaManager(CONSUMER_BYTE_RATE, windows, table, Infinity, now);
    this.request = new ClientQuotaManager(REQUEST_PERCENTAGE, windows, table, windows.windowMs, now);
    this.controllerMutation = new ControllerMutationQuotaManager(mutationWindows, table, now);
    this.enabled = this.anyActive();
  }

  quotasChanged(): void {
    for (const m of [this.produce, this.fetch, this.request, this.controllerMutation]) m.quotasChanged();
    this.enabled = this.anyActive();
  }

  private anyActive(): boolean {
    return this.produce.active || this.fetch.active || this.request.active || this.controllerMutation.active;
  }
}
