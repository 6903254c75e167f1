/**
 * The process's figures: prom-client's default metrics (CPU, memory, heap spaces, GC, handles,
 * event-loop lag; their standard names, process_* and nodejs_*, clash with no kafka_* one) and a
 * histogram of event-loop delays (perf_hooks' monitorEventLoopDelay).
 *
 * One registry for the whole process, made at the first broker's start and shared by every broker
 * in it (tests, `fjord cluster`): these are the process's figures, the same whichever broker is
 * asked, and their collectors (a GC observer, event-loop timers) must not multiply with brokers.
 */
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { registerCollected, type SeriesValue } from './instruments';

/** Event-loop delay bounds, in seconds: 1 ms to 10 s. */
const DELAY_BUCKETS_S = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10];

/** The sampling period of the event-loop monitor, in ms (prom-client's default precision). */
const DELAY_RESOLUTION_MS = 10;

let processRegistry: Registry | undefined;

/** The process's registry, made on first use (a broker's start: the event-loop monitor runs from then). */
export function processMetrics(): Registry {
  if (processRegistry) return processRegistry;
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const delays = monitorEventLoopDelay({ resolution: DELAY_RESOLUTION_MS });
  delays.enable();
  registerCollected(registry, {
    name: 'fjord_eventloop_delay_seconds', type: 'histogram',
    help: `Event-loop delays sampled every ${DELAY_RESOLUTION_MS} ms since start (buckets from the monitor's percentiles)`,
    read: () => delayHistogram(delays),
  });
  processRegistry = registry;
  return registry;
}

/**
 * The monitor's delays as Prometheus buckets: the samples at or below a bound are the count times
 * the highest percentile whose delay is at or below it (the monitor keeps an HDR histogram, whose
 * percentiles are what it gives). Its samples are whole intervals between its timer's runs: the
 * delay is what exceeds the resolution.
 */
function delayHistogram(delays: IntervalHistogram): SeriesValue[] {
  const name = 'fjord_eventloop_delay_seconds';
  const count = delays.count;
  const resolutionS = DELAY_RESOLUTION_MS / 1e3;
  const percentiles = [...delays.percentiles].map(([p, ns]) => [p, Math.max(0, ns / 1e9 - resolutionS)] as const);
  const values: SeriesValue[] = DELAY_BUCKETS_S.map((le) => {
    let below = 0;
    for (const [p, s] of percentiles) if (s <= le && p > below) below = p;
    return { metricName: `${name}_bucket`, labels: { le: String(le) }, value: Math.round((count * below) / 100) };
  });
  values.push({ metricName: `${name}_bucket`, labels: { le: '+Inf' }, value: count });
  values.push({ metricName: `${name}_sum`, labels: {}, value: count > 0 ? Math.max(0, delays.mean / 1e9 - resolutionS) * count : 0 });
  values.push({ metricName: `${name}_count`, labels: {}, value: count });
  return values;
}
