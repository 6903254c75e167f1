// A few helpers to build the DOM without a framework, and to format what the API returns.

/** h('a', { href, class, testid, onclick }, ...children): an element; null/false props and children are left out. */
export function h(tag, props, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(props ?? {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else if (k === 'testid') el.dataset.testid = v;
    else if (k === 'value') el.value = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat(Infinity)) {
    if (c !== null && c !== undefined && c !== false) el.append(c instanceof Node ? c : String(c));
  }
  return el;
}

/**
 * A table: columns are { label, cell: (row) => Node | string, num?: true (right-aligned) };
 * each row gets data-testid=`rowTestid(row)` when given, so a test can find it.
 */
export function table(testid, columns, rows, rowTestid) {
  return h('table', { testid },
    h('thead', null, h('tr', null, columns.map((c) => h('th', { class: c.num ? 'num' : null }, c.label)))),
    h('tbody', null,
      rows.length === 0
        ? h('tr', null, h('td', { class: 'empty', colspan: columns.length }, 'none'))
        : rows.map((r) => h('tr', { testid: rowTestid?.(r) }, columns.map((c) => h('td', { class: c.num ? 'num' : null }, c.cell(r) ?? '-'))))));
}

export function link(hash, text, testid) {
  return h('a', { href: hash, testid }, text);
}

export const topicHash = (name) => `#/topics/${encodeURIComponent(name)}`;
export const groupHash = (id) => `#/groups/${encodeURIComponent(id)}`;
export const brokerHash = (id) => `#/brokers/${id}`;

/** Counts and offsets: numbers, or strings when past 2^53 (the API keeps those exact). */
export function fmtCount(n) {
  if (n === null || n === undefined) return '-';
  return typeof n === 'number' ? n.toLocaleString('en-US') : String(n);
}

export function fmtBytes(n) {
  if (n === null || n === undefined) return '-';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = Number(n);
  let u = 0;
  while (Math.abs(v) >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${u === 0 ? v : v.toFixed(1)} ${units[u]}`;
}

/** A chart's value: whole above 100, else up to two decimals (a rate of 0.25/s, a lag of 3). */
export function fmtNumber(v) {
  return Math.abs(v) >= 100 ? v.toFixed(0) : String(Number(v.toFixed(2)));
}

export function fmtTime(ms) {
  if (ms === null || ms === undefined || Number(ms) < 0) return '-';
  return new Date(Number(ms)).toISOString().replace('T', ' ').replace('Z', '');
}

export function fmtDuration(ms) {
  if (ms === null || ms === undefined) return '-';
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
}

export function errorBox(e) {
  return h('div', { class: 'error', testid: 'error' }, e instanceof Error ? e.message : String(e));
}

/** A section with a heading, for a view's parts. */
export function section(title, testid, ...children) {
  return h('section', { testid }, h('h2', null, title), ...children);
}
