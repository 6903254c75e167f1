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

/**
 * Adds the throughput and latency charts to `parent` and feeds them every poll; with `topic`, only
 * that topic's throughput (latency is per request type, not per topic, so it is left out then).
 */
export function liveMetricsCharts(ctx, parent, { topic } = {}) {
  const where = topic === undefined ? {} : { topic };
  const bytesBox = h('div', { class: 'chart', testid: 'chart-bytes' });
  const messagesBox = h('div', { class: 'chart', testid: 'chart-messages' });
  const latencyBox = topic === undefined ? h('div', { class: 'chart', testid: 'chart-latency' }) : null;
  const errorSlot = h('div');
  parent.append(errorSlot, h('div', { class: 'charts' }, bytesBox, messagesBox, latencyBox));

  const bytes = new LiveChart(bytesBox, { title: 'Bytes per second', unit: '/s', format: fmtBytes });
  const messages = new LiveChart(messagesBox, { title: 'Messages in per second', unit: '/s', format: fmtNumber });
  const latency = latencyBox && new LiveChart(latencyBox, { title: 'Request time (ms)', unit: 'ms', format: fmtNumber });
  ctx.onLeave(() => [bytes, messages, latency].forEach((c) => c?.destroy()));

  let prev = null;
  return ctx.poll(async () => {
    const cur = { at: Date.now(), samples: parsePrometheus(await api.metrics()) };
    if (prev) {
      const secs = (cur.at - prev.at) / 1000;
      const t = cur.at / 1000;
      bytes.push(t, { in: rate(prev.samples, cur.samples, BYTES_IN, secs, where), out: rate(prev.samples, cur.samples, BYTES_OUT, secs, where) });
      messages.push(t, { in: rate(prev.samples, cur.samples, MESSAGES_IN, secs, where) });
      if (latency) {
        const point = {};
        for (const request of ['Produce', 'Fetch']) {
          const w = histogramWindow(prev.samples, cur.samples, REQUEST_TIME, { request });
          point[`${request} mean`] = w ? w.mean * REQUEST_TIME_TO_MS : null;
          point[`${request} p99`] = w?.p99 === null || w?.p99 === undefined ? null : w.p99 * REQUEST_TIME_TO_MS;
        }
        latency.push(t, point);
      }
    }
    prev = cur;
  }, errorSlot);
}
