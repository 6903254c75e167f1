// A table of configs (a topic's or a broker's), as the API's ConfigEntry list: the ones set first
// shown alone, the defaults behind a checkbox (a broker has some 200).
import { h, table } from './dom.js';

export function configsTable(entries, testid) {
  const filter = h('input', { type: 'search', placeholder: 'filter by name', testid: `${testid}-filter` });
  const sorted = [...entries].sort((a, b) => a.name.localeCompare(b.name));
  const defaults = sorted.filter((c) => c.isDefault).length;
  const showDefaults = h('input', { type: 'checkbox', testid: `${testid}-show-defaults` });
  const slot = h('div');
  const draw = () => slot.replaceChildren(table(testid, [
    { label: 'Name', cell: (c) => c.name },
    { label: 'Value', cell: (c) => (c.sensitive ? h('span', { class: 'muted' }, '(sensitive)') : c.value === null ? h('span', { class: 'muted' }, 'null') : h('code', null, c.value)) },
    { label: 'Source', cell: (c) => c.source },
    { label: '', cell: (c) => [c.isDefault ? h('span', { class: 'tag' }, 'default') : null, c.readOnly ? h('span', { class: 'tag' }, 'read-only') : null] },
  ], sorted.filter((c) => (showDefaults.checked || !c.isDefault) && c.name.includes(filter.value.trim())), (c) => `config-${c.name}`));
  showDefaults.addEventListener('change', draw);
  filter.addEventListener('input', draw);
  draw();
  return h('div', null, h('div', { class: 'browse' }, filter, h('label', null, showDefaults, ` show the ${defaults} defaults`)), slot);
}
