// A rate measured over a ring of time windows, as Kafka's metrics measure quotas (org.apache.kafka.
// common.metrics: a SampledStat of `samples` windows of `windowMs`, plus one kept so the oldest live
// window is never recycled early). A window whose last event is older than the whole measured span
// starts over. The rate is the sum of the live windows over the time they span, which is where
// Kafka's two measures differ:
// - 'simple' (SimpleRate, the replication throttle): at least one window;
// - 'full' (Rate, client quotas): at least samples-1 full windows, so that the first requests of a
//   client (or the first after a long pause) are measured as if the windows before had been empty.

export type RateSpan = 'simple' | 'full';

export interface WindowedRateOptions {
  /** How many windows are measured (Kafka's MetricConfig.samples). */
  samples: number;
  /** One window's length (MetricConfig.timeWindowMs). */
  windowMs: number;
  span: RateSpan;
}

/** One window (Kafka's SampledStat.Sample). */
interface Sample {
  startMs: number;
  lastEventMs: number;
  value: number;
}

export class WindowedRate {
  private readonly samples: Sample[] = [];
  private current = 0;

  constructor(private readonly opts: WindowedRateOptions) {}

  record(value: number, now: number): void {
    let sample = this.currentSample(now);
    if (now - sample.startMs >= this.opts.windowMs) sample = this.advance(now);
    sample.value += value;
    sample.lastEventMs = now;
  }

  /** Value per second over the live windows. */
  measure(now: number): number {
    const span = this.spanMs(now);
    let total = 0;
    for (const s of this.samples) total += s.value;
    return total / (span / 1000);
  }

  /** The time the rate is measured over, in ms (Kafka's Rate.windowSize / SimpleRate.windowSize). */
  spanMs(now: number): number {
    this.purgeObsolete(now);
    let oldestStart = this.currentSample(now).startMs;
    for (const s of this.samples) oldestStart = Math.min(oldestStart, s.startMs);
    const elapsed = now - oldestStart;
    const { windowMs, samples } = this.opts;
    if (this.opts.span === 'simple') return Math.max(elapsed, windowMs);
    const fullWindows = Math.floor(elapsed / windowMs);
    return fullWindows < samples - 1 ? elapsed + (samples - 1 - fullWindows) * windowMs : elapsed;
  }

  /** The time of the last event recorded (undefined: none yet); an idle rate may be dropped. */
  get lastEventMs(): number | undefined {
    return this.samples.length === 0 ? undefined : this.samples[this.current].lastEventMs;
  }

  private currentSample(now: number): Sample {
    if (this.samples.length === 0) this.samples.push({ startMs: now, lastEventMs: now, value: 0 });
    return this.samples[this.current];
  }

  private advance(now: number): Sample {
    this.current = (this.current + 1) % (this.opts.samples + 1);
    const fresh = { startMs: now, lastEventMs: now, value: 0 };
    if (this.current >= this.samples.length) this.samples.push(fresh);
    else this.samples[this.current] = fresh;
    return fresh;
  }

  /** Windows without an event for the whole measured span start over from now. */
  private purgeObsolete(now: number): void {
    const expireAgeMs = this.opts.samples * this.opts.windowMs;
    for (const [i, s] of this.samples.entries()) {
      if (now - s.lastEventMs >= expireAgeMs) this.samples[i] = { startMs: now, lastEventMs: now, value: 0 };
    }
  }
}
