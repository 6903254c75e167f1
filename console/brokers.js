// Brokers (#/brokers) and one broker's configs (#/brokers/ID).
import { api } from './api.js';
import { brokerHash, h, link, section, table } from './dom.js';
import { configsTable } from './configs.js';

export async function renderBrokers(ctx) {
  const cluster = await api.cluster();
  ctx.root.append(h('h1', null, 'Brokers'), table('brokers-table', [
    { label: 'Node', cell: (b) => link(brokerHash(b.nodeId), String(b.nodeId)) },
    { label: 'Host', cell: (b) => b.host },
    { label: 'Port', cell: (b) => String(b.port), num: true },
    { label: 'Rack', cell: (b) => b.rack ?? '-' },
    { label: 'Role', cell: (b) => (b.nodeId === cluster.controllerId ? 'controller' : '') },
  ], cluster.brokers, (b) => `broker-row-${b.nodeId}`));
}

export async function renderBroker(ctx, id) {
  const configs = await api.brokerConfigs(id);
  ctx.root.append(h('h1', null, h('a', { href: '#/brokers' }, 'Brokers'), ` / ${id}`), section('Configs', 'broker-configs', configsTable(configs, 'broker-configs-table')));
}
