// The live charts drawn from the broker's /metrics: throughput (rates of Kafka's BrokerTopicMetrics
// counters) and request latency (its RequestMetrics histogram), one point per poll.
import { api } from './api.js';
import { fmtBytes, fmtNumber, h } from './dom.js';
import { LiveChart } from './charts.js';
import { histogramWindow, parsePrometheus, rate } from './prometheus.js';

const BYTES_IN = 'kafka_server_brokertopicmetrics_bytesin_total';
const BYTES_OUT = 'kafka_server_brokertopicmetrics_bytesout_total';
const MESSAGES_IN = 'kafka_server_brokertopicmetrics_messagesin_total';
const REQUEST_TIME = 'kafka_network_requestmetrics_totaltimems';
/** The request-time histogram is in milliseconds, as Kafka's TotalTimeMs. */
const REQUEST_TIME_TO_MS = 1;
const LATENCY_REQUESTS = ['Produce', 'Fetch'];

/**
 * Adds the throughput and latency charts to `parent` and feeds them every poll; with `topic`, only
 * that topic's throughput (latency is per request type, not per topic, so it is left out then).
 */
export function liveMetricsCharts(ctx, parent, { topic } = {}) {
  const where = topic === undefined ? {} : { topic };
  const bytesBox = h('div', { class: 'chart', testid: 'chart-bytes' });
  const messagesBox = h('div', { class: 'chart', testid: 'chart-messages' });
  // Produce and Fetch apart: a long-poll fetch waits up to its max wait, a produce only for its append.
  const latencyBoxes = topic === undefined ? LATENCY_REQUESTS.map((r) => h('div', { class: 'chart', testid: `chart-latency-${r.toLowerCase()}` })) : [];
  const errorSlot = h('div');
  parent.append(errorSlot, h('div', { class: 'charts' }, bytesBox, messagesBox, latencyBoxes));

  const bytes = new LiveChart(bytesBox, { title: 'Bytes per second', unit: '/s', format: fmtBytes });
  const messages = new LiveChart(messagesBox, { title: 'Messages in per second', unit: '/s', format: fmtNumber });
  const latencies = latencyBoxes.map((box, i) => new LiveChart(box, { title: `${LATENCY_REQUESTS[i]} request time (ms)`, unit: 'ms', format: fmtNumber }));
  ctx.onLeave(() => [bytes, messages, ...latencies].forEach((c) => c.destroy()));

  let prev = null;
  return ctx.poll(async () => {
    const cur = { at: Date.now(), samples: parsePrometheus(await api.metrics()) };
    if (prev) {
      const secs = (cur.at - prev.at) / 1000;
      const t = cur.at / 1000;
      bytes.push(t, { in: rate(prev.samples, cur.samples, BYTES_IN, secs, where), out: rate(prev.samples, cur.samples, BYTES_OUT, secs, where) });
      messages.push(t, { in: rate(prev.samples, cur.samples, MESSAGES_IN, secs, where) });
      latencies.forEach((chart, i) => {
        const w = histogramWindow(prev.samples, cur.samples, REQUEST_TIME, { request: LATENCY_REQUESTS[i] });
        chart.push(t, { mean: w ? w.mean * REQUEST_TIME_TO_MS : null, p99: w && w.p99 !== null ? w.p99 * REQUEST_TIME_TO_MS : null });
      });
    }
    prev = cur;
  }, errorSlot);
}
