// Consumer groups (#/groups) and one group (#/groups/ID): members, assignments, committed offsets
// and lag per partition, lag over time, and (writes enabled) resetting its offsets.
import { api } from './api.js';
import { errorBox, fmtCount, fmtNumber, groupHash, h, link, section, table, topicHash } from './dom.js';
import { LiveChart } from './charts.js';

export async function renderGroups(ctx) {
  const list = h('div');
  const errorSlot = h('div');
  ctx.root.append(h('h1', null, 'Consumer groups'), errorSlot, list);
  await ctx.poll(async () => {
    const groups = await api.groups();
    list.replaceChildren(table('groups-table', [
      { label: 'Group', cell: (g) => link(groupHash(g.groupId), g.groupId) },
      { label: 'Type', cell: (g) => g.type },
      { label: 'State', cell: (g) => stateTag(g.state) },
      { label: 'Protocol type', cell: (g) => g.protocolType || '-' },
      { label: 'Lag', cell: (g) => h('span', { testid: 'group-lag' }, fmtCount(g.totalLag)), num: true },
    ], groups.sort((a, b) => a.groupId.localeCompare(b.groupId)), (g) => `group-row-${g.groupId}`));
  }, errorSlot);
}

function stateTag(state) {
  const cls = state === 'Stable' ? 'ok' : state === 'Dead' || state === 'Unknown' ? 'bad' : state === 'Empty' ? '' : 'warn';
  return h('span', { class: `state ${cls}`, testid: 'group-state' }, state);
}

export async function renderGroup(ctx, id) {
  const summary = h('dl', { class: 'stats' });
  const members = h('div');
  const offsets = h('div');
  const errorSlot = h('div');
  const lagBox = h('div', { class: 'chart', testid: 'chart-group-lag' });
  ctx.root.append(
    h('h1', null, h('a', { href: '#/groups' }, 'Consumer groups'), ' / ', h('span', { testid: 'group-id' }, id)),
    errorSlot, summary,
    section('Lag', 'group-lag-section', h('div', { class: 'charts' }, lagBox)),
    section('Members', 'group-members', members),
    section('Offsets', 'group-offsets', offsets),
  );
  if (ctx.info.writesEnabled) ctx.root.append(section('Reset offsets', 'group-reset', resetOffsetsForm(id)));
  const lag = new LiveChart(lagBox, { title: 'Lag (messages)', unit: 'msgs', format: fmtNumber });
  ctx.onLeave(() => lag.destroy());

  await ctx.poll(async () => {
    const g = await api.group(id);
    summary.replaceChildren(
      h('div', { class: 'stat' }, h('dt', null, 'State'), h('dd', null, stateTag(g.state))),
      h('div', { class: 'stat' }, h('dt', null, 'Type'), h('dd', null, g.type)),
      h('div', { class: 'stat' }, h('dt', null, 'Protocol'), h('dd', null, g.protocol || '-')),
      h('div', { class: 'stat' }, h('dt', null, 'Coordinator'), h('dd', null, String(g.coordinator))),
      h('div', { class: 'stat' }, h('dt', null, 'Total lag'), h('dd', { testid: 'group-total-lag' }, fmtCount(g.totalLag))),
    );
    members.replaceChildren(table('members-table', [
      { label: 'Member', cell: (m) => m.memberId },
      { label: 'Instance', cell: (m) => m.groupInstanceId ?? '-' },
      { label: 'Client', cell: (m) => m.clientId },
      { label: 'Host', cell: (m) => m.host },
      { label: 'Assignment', cell: (m) => m.assignment.map((a) => `${a.topic}: ${a.partitions.join(', ')}`).join('; ') || '-' },
    ], g.members));
    offsets.replaceChildren(table('offsets-table', [
      { label: 'Topic', cell: (o) => link(topicHash(o.topic), o.topic) },
      { label: 'Partition', cell: (o) => String(o.partition), num: true },
      { label: 'Committed', cell: (o) => fmtCount(o.committedOffset), num: true },
      { label: 'Latest', cell: (o) => fmtCount(o.latestOffset), num: true },
      { label: 'Lag', cell: (o) => h('span', { testid: 'partition-lag' }, fmtCount(o.lag)), num: true },
      { label: 'Member', cell: (o) => o.memberId ?? '-' },
    ], [...g.offsets].sort((a, b) => a.topic.localeCompare(b.topic) || a.partition - b.partition), (o) => `offset-row-${o.topic}-${o.partition}`));
    lag.push(Date.now() / 1000, { 'total lag': Number(g.totalLag) });
  }, errorSlot);
}

function resetOffsetsForm(groupId) {
  const topics = h('input', { name: 'topics', size: 40, placeholder: 'orders  payments:0,1', testid: 'reset-topics' });
  const to = h('select', { name: 'to', testid: 'reset-to' }, ['earliest', 'latest', 'offset', 'timestamp', 'shift'].map((t) => h('option', { value: t }, t)));
  const value = h('input', { name: 'value', size: 24, placeholder: '', testid: 'reset-value', disabled: true });
  const result = h('div', { testid: 'reset-result' });
  to.addEventListener('change', () => {
    value.disabled = to.value === 'earliest' || to.value === 'latest';
    value.placeholder = { offset: 'offset', timestamp: 'epoch ms or a date', shift: '-100 or 100' }[to.value] ?? '';
  });
  const submit = async (dryRun) => {
    result.replaceChildren();
    try {
      const plan = await api.resetOffsets(groupId, { topics: topics.value.split(/\s+/).filter(Boolean), target: resetTarget(to.value, value.value.trim()), dryRun });
      result.replaceChildren(h('p', null, dryRun ? 'Planned (nothing changed yet):' : 'Done:'), table('reset-plan', [
        { label: 'Topic', cell: (r) => r.topic },
        { label: 'Partition', cell: (r) => String(r.partition), num: true },
        { label: 'Current', cell: (r) => fmtCount(r.currentOffset), num: true },
        { label: 'New', cell: (r) => fmtCount(r.newOffset), num: true },
      ], plan));
    } catch (e) {
      result.replaceChildren(errorBox(e));
    }
  };
  const form = h('form', { class: 'write', testid: 'reset-form' },
    'topics ', topics, ' to ', to, ' ', value, ' ',
    h('button', { type: 'button', testid: 'reset-dry-run', onclick: () => submit(true) }, 'Dry run'),
    h('button', { type: 'submit', class: 'danger', testid: 'reset-apply' }, 'Reset'),
    h('p', { class: 'muted' }, 'The group must have no active members (as with kafka-consumer-groups --reset-offsets).'),
    result);
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    if (confirm(`Reset the offsets of group ${groupId}?`)) submit(false);
  });
  return form;
}

/** The ResetTarget of the API from the form; offsets and shifts go as decimal strings (exact past 2^53). */
function resetTarget(to, value) {
  const integer = (v, signed) => {
    if (!(signed ? /^[+-]?\d+$/ : /^\d+$/).test(v)) throw new Error(`"${v}" is not ${signed ? 'an integer' : 'a non-negative integer'}`);
    return v.replace(/^\+/, '');
  };
  switch (to) {
    case 'offset': return { to, offset: integer(value, false) };
    case 'shift': return { to, by: integer(value, true) };
    case 'timestamp': {
      const ms = /^\d+$/.test(value) ? Number(value) : Date.parse(value);
      if (Number.isNaN(ms)) throw new Error(`"${value}" is neither epoch milliseconds nor a date`);
      return { to, timestampMs: ms };
    }
    default: return { to };
  }
}
