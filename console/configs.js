// A table of configs (a topic's or a broker's), as the API's ConfigEntry list.
import { h, table } from './dom.js';

export function configsTable(entries, testid) {
  const sorted = [...entries].sort((a, b) => a.name.localeCompare(b.name));
  return table(testid, [
    { label: 'Name', cell: (c) => c.name },
    { label: 'Value', cell: (c) => (c.sensitive ? h('span', { class: 'muted' }, '(sensitive)') : c.value === null ? h('span', { class: 'muted' }, 'null') : h('code', null, c.value)) },
    { label: 'Source', cell: (c) => c.source },
    { label: '', cell: (c) => [c.isDefault ? h('span', { class: 'tag' }, 'default') : null, c.readOnly ? h('span', { class: 'tag' }, 'read-only') : null] },
  ], sorted, (c) => `config-${c.name}`);
}
