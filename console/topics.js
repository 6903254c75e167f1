// Topics (#/topics) and one topic (#/topics/NAME): its partitions, configs, messages and throughput.
import { api } from './api.js';
import { errorBox, fmtBytes, fmtCount, h, link, section, table, topicHash } from './dom.js';
import { configsTable } from './configs.js';
import { liveMetricsCharts } from './live.js';
import { messageBrowser } from './messages.js';

export async function renderTopics(ctx) {
  const list = h('div');
  const errorSlot = h('div');
  const showInternal = h('input', { type: 'checkbox', testid: 'show-internal' });
  let topics = [];
  const draw = () => {
    const shown = topics.filter((t) => showInternal.checked || !t.internal);
    list.replaceChildren(table('topics-table', [
      { label: 'Topic', cell: (t) => h('span', null, link(topicHash(t.name), t.name), t.internal ? h('span', { class: 'tag' }, 'internal') : null) },
      { label: 'Partitions', cell: (t) => fmtCount(t.partitions), num: true },
      { label: 'Replication', cell: (t) => fmtCount(t.replicationFactor), num: true },
      { label: 'Under-replicated', cell: (t) => h('span', { class: t.underReplicatedPartitions > 0 ? 'bad' : null }, fmtCount(t.underReplicatedPartitions)), num: true },
      { label: 'Messages', cell: (t) => fmtCount(t.messages), num: true },
      { label: 'Size', cell: (t) => fmtBytes(t.sizeBytes), num: true },
    ], shown, (t) => `topic-row-${t.name}`));
  };
  showInternal.addEventListener('change', draw);
  ctx.root.append(
    h('h1', null, 'Topics'),
    h('label', { class: 'inline' }, showInternal, ' show internal topics'),
    ctx.info.writesEnabled ? createTopicForm() : null,
    errorSlot, list,
  );
  await ctx.poll(async () => {
    topics = await api.topics();
    draw();
  }, errorSlot);
}

function createTopicForm() {
  const name = h('input', { name: 'name', required: true, placeholder: 'name', testid: 'create-topic-name' });
  const partitions = h('input', { name: 'partitions', type: 'number', min: 1, value: '1', testid: 'create-topic-partitions' });
  const replication = h('input', { name: 'replicationFactor', type: 'number', min: 1, value: '1', testid: 'create-topic-replication' });
  const configs = h('input', { name: 'configs', placeholder: 'cleanup.policy=compact,retention.ms=60000', size: 40, testid: 'create-topic-configs' });
  const result = h('span', { class: 'result' });
  const form = h('form', { class: 'write', testid: 'create-topic' },
    h('strong', null, 'Create topic '), name, ' partitions ', partitions, ' replication factor ', replication, ' configs ', configs,
    h('button', { type: 'submit' }, 'Create'), result);
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    result.replaceChildren();
    try {
      const entries = configs.value.split(',').map((s) => s.trim()).filter(Boolean).map((kv) => {
        const eq = kv.indexOf('=');
        if (eq <= 0) throw new Error(`config "${kv}" is not NAME=VALUE`);
        return [kv.slice(0, eq), kv.slice(eq + 1)];
      });
      await api.createTopic({ name: name.value, partitions: Number(partitions.value), replicationFactor: Number(replication.value), configs: Object.fromEntries(entries) });
      location.hash = topicHash(name.value);
    } catch (e) {
      result.append(errorBox(e));
    }
  });
  return form;
}

export async function renderTopic(ctx, name) {
  const topic = await api.topic(name);
  const partitionsSlot = h('div');
  const errorSlot = h('div');
  ctx.root.append(
    h('h1', null, h('a', { href: '#/topics' }, 'Topics'), ' / ', h('span', { testid: 'topic-name' }, topic.name), topic.internal ? h('span', { class: 'tag' }, 'internal') : null),
    h('p', { class: 'muted' }, `id ${topic.topicId}`),
    ctx.info.writesEnabled ? deleteTopicButton(topic.name) : null,
    section('Partitions', 'topic-partitions', errorSlot, partitionsSlot),
  );
  const drawPartitions = (t) => partitionsSlot.replaceChildren(table('partitions-table', [
    { label: 'Partition', cell: (p) => String(p.partition), num: true },
    { label: 'Leader', cell: (p) => (p.leader < 0 ? h('span', { class: 'bad' }, 'none') : String(p.leader)), num: true },
    { label: 'Epoch', cell: (p) => String(p.leaderEpoch), num: true },
    { label: 'Replicas', cell: (p) => p.replicas.join(', ') },
    { label: 'ISR', cell: (p) => h('span', { class: p.underReplicated ? 'bad' : null }, p.isr.join(', ')) },
    { label: 'Offline', cell: (p) => p.offlineReplicas.join(', ') || '-' },
    { label: 'Earliest', cell: (p) => fmtCount(p.earliestOffset), num: true },
    { label: 'Latest', cell: (p) => fmtCount(p.latestOffset), num: true },
    { label: 'Size', cell: (p) => fmtBytes(p.sizeBytes), num: true },
  ], t.partitions, (p) => `partition-row-${p.partition}`));
  drawPartitions(topic);

  ctx.root.append(section('Messages', 'topic-messages', messageBrowser(topic)));
  if (ctx.info.metrics) {
    const live = section('Throughput', 'topic-charts');
    ctx.root.append(live);
    liveMetricsCharts(ctx, live, { topic: topic.name });
  }
  ctx.root.append(section('Configs', 'topic-configs', configsTable(topic.configs, 'topic-configs-table')));

  // Offsets and leaders move: keep the partitions fresh (the message browser keeps its own state).
  ctx.after(() => ctx.poll(async () => drawPartitions(await api.topic(name)), errorSlot));
}

function deleteTopicButton(name) {
  const result = h('span', { class: 'result' });
  return h('div', { class: 'write' },
    h('button', {
      class: 'danger',
      testid: 'delete-topic',
      onclick: async () => {
        if (!confirm(`Delete topic ${name} and all its messages?`)) return;
        try {
          await api.deleteTopic(name);
          location.hash = '#/topics';
        } catch (e) {
          result.replaceChildren(errorBox(e));
        }
      },
    }, 'Delete topic'), result);
}
