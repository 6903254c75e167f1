// The overview (#/): the cluster, counts of what it holds, and the live charts.
import { api } from './api.js';
import { brokerHash, fmtCount, fmtNumber, h, link, section, table } from './dom.js';
import { LiveChart } from './charts.js';
import { liveMetricsCharts } from './live.js';
import { parsePrometheus, has, total } from './prometheus.js';

const OFFLINE = 'kafka_controller_kafkacontroller_offlinepartitionscount';
const LAG_SERIES = 8; // the groups with the most lag get a line each

export async function renderOverview(ctx) {
  const cluster = await api.cluster();
  const counts = h('dl', { class: 'stats', testid: 'overview-counts' });
  const countsError = h('div');
  ctx.root.append(
    h('h1', null, 'Overview'),
    section('Cluster', 'overview-cluster',
      h('dl', { class: 'stats' },
        stat('Cluster id', cluster.clusterId, 'cluster-id'),
        stat('Controller', cluster.controllerId, 'controller-id'),
        stat('Brokers', cluster.brokers.length, 'broker-count')),
      table('brokers-table', [
        { label: 'Node', cell: (b) => link(brokerHash(b.nodeId), String(b.nodeId)) },
        { label: 'Host', cell: (b) => `${b.host}:${b.port}` },
        { label: 'Rack', cell: (b) => b.rack ?? '-' },
        { label: 'Role', cell: (b) => (b.nodeId === cluster.controllerId ? 'controller' : '') },
      ], cluster.brokers)),
    section('Contents', 'overview-contents', countsError, counts),
  );
  const lagBox = h('div', { class: 'chart', testid: 'chart-lag' });
  const charts = section('Live', 'overview-charts');
  if (!ctx.info.metrics) charts.append(h('p', { class: 'muted' }, 'No /metrics here (a console of a remote cluster): only consumer lag is charted.'));
  ctx.root.append(charts);
  ctx.root.append(section('Features', 'overview-features', table('features-table', [
    { label: 'Feature', cell: (f) => f.name },
    { label: 'Supported', cell: (f) => `${f.minVersion}–${f.maxVersion}` },
    { label: 'Finalized level', cell: (f) => f.finalizedLevel ?? '-' },
  ], cluster.features)));

  const lag = new LiveChart(lagBox, { title: 'Consumer lag (messages)', unit: 'msgs', format: fmtNumber });
  ctx.onLeave(() => lag.destroy());

  // Counts and lag from the same poll; the charts of /metrics poll on their own.
  ctx.poll(async () => {
    const [topics, groups, metrics] = await Promise.all([api.topics(), api.groups(), ctx.info.metrics ? api.metrics().then(parsePrometheus) : null]);
    const partitions = topics.reduce((n, t) => n + t.partitions, 0);
    const underReplicated = topics.reduce((n, t) => n + t.underReplicatedPartitions, 0);
    counts.replaceChildren(
      stat('Topics', topics.filter((t) => !t.internal).length, 'topic-count'),
      stat('Internal topics', topics.filter((t) => t.internal).length, 'internal-topic-count'),
      stat('Partitions', partitions, 'partition-count'),
      stat('Under-replicated', underReplicated, 'under-replicated', underReplicated > 0),
      stat('Offline', metrics && has(metrics, OFFLINE) ? total(metrics, OFFLINE) : null, 'offline', metrics && total(metrics, OFFLINE) > 0),
      stat('Consumer groups', groups.length, 'group-count'),
    );
    const top = groups.filter((g) => g.totalLag !== null).sort((a, b) => Number(b.totalLag) - Number(a.totalLag)).slice(0, LAG_SERIES);
    lag.push(Date.now() / 1000, Object.fromEntries(top.map((g) => [g.groupId, Number(g.totalLag)])));
  }, countsError);
  if (ctx.info.metrics) liveMetricsCharts(ctx, charts);
  charts.append(h('div', { class: 'charts' }, lagBox));
}

function stat(label, value, testid, bad = false) {
  return h('div', { class: bad ? 'stat bad' : 'stat' }, h('dt', null, label), h('dd', { testid }, fmtCount(value)));
}
