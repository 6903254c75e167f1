/**
 * Instruments for the hot paths, registered in a prom-client Registry like its own metrics.
 *
 * prom-client's counters and histograms hash their labels on every inc/observe (a child from
 * labels() does too); a broker counts per request and per partition append. These keep their
 * figures in plain numbers and arrays that the recording code holds a reference to, and turn them
 * into prom-client's series only when scraped: recording hashes nothing and allocates nothing.
 */
import type { Metric, Registry } from 'prom-client';

export type Labels = Readonly<Record<string, string>>;

/** One line of a metric as prom-client's Registry renders it. */
export interface SeriesValue {
  metricName?: string;
  labels: Labels;
  value: number;
}

/** Registers a metric whose series `read` gives at scrape time (what prom-client's Registry asks of a metric). */
export function registerCollected(registry: Registry, spec: {
  name: string;
  help: string;
  type: 'counter' | 'gauge' | 'histogram';
  read: () => SeriesValue[];
}): void {
  const { name, help, type, read } = spec;
  const metric = {
    name, help, type, aggregator: 'sum',
    get: () => Promise.resolve({ name, help, type, aggregator: 'sum', values: read() }),
    reset: () => undefined,
  };
  registry.registerMetric(metric as unknown as Metric);
}

/** One histogram series: counts per bucket (not cumulative; the last is +Inf), their sum and count. */
export class HistogramSeries {
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(readonly labels: Labels, private readonly bounds: readonly number[]) {
    this.counts = new Float64Array(bounds.length + 1);
  }

  observe(value: number): void {
    const bounds = this.bounds;
    let i = 0;
    while (i < bounds.length && value > bounds[i]) i++;
    this.counts[i]++;
    this.sum += value;
    this.count++;
  }
}

/**
 * A histogram of fixed buckets with labelled series. series() is called once per label set (the
 * caller keeps what it returns); remove() drops one (a deleted topic's).
 */
export class Histogram {
  private readonly all = new Set<HistogramSeries>();

  constructor(registry: Registry, readonly name: string, help: string, private readonly bounds: readonly number[]) {
    registerCollected(registry, { name, help, type: 'histogram', read: () => this.read() });
  }

  series(labels: Labels): HistogramSeries {
    const s = new HistogramSeries(labels, this.bounds);
    this.all.add(s);
    return s;
  }

  remove(series: HistogramSeries): void {
    this.all.delete(series);
  }

  private read(): SeriesValue[] {
    const out: SeriesValue[] = [];
    const bucket = `${this.name}_bucket`;
    for (const s of this.all) {
      let cumulative = 0;
      this.bounds.forEach((le, i) => {
        cumulative += s.counts[i];
        out.push({ metricName: bucket, labels: { ...s.labels, le: String(le) }, value: cumulative });
      });
      out.push({ metricName: bucket, labels: { ...s.labels, le: '+Inf' }, value: s.count });
      out.push({ metricName: `${this.name}_sum`, labels: s.labels, value: s.sum });
      out.push({ metricName: `${this.name}_count`, labels: s.labels, value: s.count });
    }
    return out;
  }
}

/** Bucket bounds in milliseconds for request times: 0.1 ms to 30 s. */
export const TIME_MS_BUCKETS: readonly number[] = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000];

/** Bucket bounds in bytes for request and response sizes: 64 B to 64 MiB, by 4. */
export const SIZE_BUCKETS: readonly number[] = [64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864];
