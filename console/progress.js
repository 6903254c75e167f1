// Long work of the broker (#/progress): start-up recovery and log cleaning, with percent, rate and ETA.
import { api } from './api.js';
import { fmtBytes, fmtCount, fmtDuration, fmtTime, h, section, table } from './dom.js';

export async function renderProgress(ctx) {
  const running = h('div');
  const finished = h('div');
  const errorSlot = h('div');
  ctx.root.append(h('h1', null, 'Progress'), errorSlot, section('Running', 'progress-running', running), section('Finished', 'progress-finished', finished));
  const amount = (t, n) => (t.unit === 'bytes' ? fmtBytes(n) : `${fmtCount(n)} ${t.unit}`);
  const columns = [
    { label: 'Work', cell: (t) => h('span', null, h('span', { class: 'tag' }, t.kind), ' ', t.title) },
    { label: 'Progress', cell: (t) => h('span', { class: 'progress' }, h('progress', { max: 100, value: t.percent }), ` ${t.percent.toFixed(1)}%`) },
    { label: 'Done', cell: (t) => `${amount(t, t.done)} of ${amount(t, t.total)}` },
    { label: 'Rate', cell: (t) => (t.unit === 'bytes' ? `${fmtBytes(t.ratePerSec)}/s` : `${t.ratePerSec.toFixed(1)}/s`) },
    { label: 'ETA', cell: (t) => (t.finishedAtMs === null ? fmtDuration(t.etaMs) : '-') },
    { label: 'Started', cell: (t) => fmtTime(t.startedAtMs) },
    { label: 'Took', cell: (t) => (t.finishedAtMs === null ? '-' : fmtDuration(t.finishedAtMs - t.startedAtMs)) },
  ];
  await ctx.poll(async () => {
    const tasks = await api.progress();
    running.replaceChildren(table('progress-running-table', columns, tasks.filter((t) => t.finishedAtMs === null), (t) => `task-${t.id}`));
    finished.replaceChildren(table('progress-finished-table', columns, tasks.filter((t) => t.finishedAtMs !== null).reverse(), (t) => `task-${t.id}`));
  }, errorSlot);
}
