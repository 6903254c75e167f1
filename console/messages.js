// The message browser of a topic page: a partition's records from an offset or a timestamp, with
// keys, values and headers shown as text, JSON (pretty) or hex, switchable without fetching again.
import { api } from './api.js';
import { errorBox, fmtCount, fmtTime, h } from './dom.js';

const FORMATS = ['text', 'json', 'hex'];

/** Base64 (as the API sends bytes) → Uint8Array; null stays null. */
export function fromBase64(b64) {
  if (b64 === null || b64 === undefined) return null;
  const bin = atob(b64);
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  return bytes;
}

const utf8 = new TextDecoder('utf-8');

/** Bytes shown in a format: a Node (null shows as "null", dimmed). */
export function renderBytes(bytes, format) {
  if (bytes === null) return h('span', { class: 'muted' }, 'null');
  if (format === 'hex') {
    const lines = [];
    for (let i = 0; i < bytes.length; i += 16) lines.push([...bytes.subarray(i, i + 16)].map((b) => b.toString(16).padStart(2, '0')).join(' '));
    return h('pre', { class: 'hex' }, lines.join('\n'));
  }
  const text = utf8.decode(bytes);
  if (format === 'json') {
    try {
      return h('pre', { class: 'json' }, JSON.stringify(JSON.parse(text), null, 2));
    } catch {
      return h('span', null, h('span', { class: 'tag' }, 'not JSON'), ' ', text);
    }
  }
  return h('span', { class: 'text' }, text);
}

export function messageBrowser(topic) {
  const partition = h('select', { name: 'partition', testid: 'browse-partition' },
    topic.partitions.map((p) => h('option', { value: String(p.partition) }, String(p.partition))));
  const fromKind = h('select', { name: 'from', testid: 'browse-from' },
    h('option', { value: 'offset' }, 'offset'), h('option', { value: 'timestamp' }, 'timestamp'), h('option', { value: 'newest' }, 'newest'));
  const fromValue = h('input', { name: 'at', size: 24, testid: 'browse-at', placeholder: 'offset' });
  const limit = h('input', { name: 'limit', type: 'number', min: 1, max: 1000, value: '50', testid: 'browse-limit' });
  const format = h('select', { name: 'format', testid: 'browse-format' }, FORMATS.map((f) => h('option', { value: f }, f)));
  const results = h('div', { testid: 'browse-results' });
  let records = [];

  const partitionInfo = () => topic.partitions.find((p) => String(p.partition) === partition.value);
  const setDefault = () => {
    fromValue.placeholder = fromKind.value === 'timestamp' ? 'epoch ms or 2026-01-31T12:00:00Z' : 'offset';
    if (fromKind.value === 'offset') fromValue.value = String(partitionInfo()?.earliestOffset ?? 0);
    else fromValue.value = '';
    fromValue.disabled = fromKind.value === 'newest';
  };
  partition.addEventListener('change', setDefault);
  fromKind.addEventListener('change', setDefault);
  setDefault();

  const draw = () => {
    const f = format.value;
    results.replaceChildren(h('table', { testid: 'messages-table', class: 'messages' },
      h('thead', null, h('tr', null, ['Offset', 'Timestamp', 'Key', 'Value', 'Headers'].map((c) => h('th', null, c)))),
      h('tbody', null, records.length === 0
        ? h('tr', null, h('td', { class: 'empty', colspan: 5 }, 'no messages there'))
        : records.map((r) => h('tr', { testid: `message-${r.offset}` },
          h('td', { class: 'num' }, fmtCount(r.offset)),
          h('td', null, fmtTime(r.timestamp)),
          h('td', { testid: 'message-key' }, renderBytes(fromBase64(r.key), f)),
          h('td', { testid: 'message-value' }, renderBytes(fromBase64(r.value), f)),
          h('td', { testid: 'message-headers' }, r.headers.map((hd) => h('div', null, h('strong', null, hd.key), ': ', renderBytes(fromBase64(hd.value), f)))))))));
  };
  format.addEventListener('change', draw);

  const form = h('form', { class: 'browse', testid: 'browse-form' },
    'partition ', partition, ' from ', fromKind, ' ', fromValue, ' limit ', limit, ' ', h('button', { type: 'submit', testid: 'browse-submit' }, 'Browse'), '  show as ', format);
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    try {
      const n = Number(limit.value);
      const from = await resolveFrom(topic.name, Number(partition.value), fromKind.value, fromValue.value.trim(), n);
      records = await api.messages(topic.name, Number(partition.value), from, n);
      draw();
    } catch (e) {
      results.replaceChildren(errorBox(e));
    }
  });
  return h('div', null, form, results);
}

/** Where to read from: an offset, a timestamp (epoch ms or a date), or the newest `limit` records. */
async function resolveFrom(topicName, partition, kind, value, limit) {
  if (kind === 'newest') {
    // The partition's offsets now, not when the page was opened.
    const p = (await api.topic(topicName)).partitions.find((x) => x.partition === partition);
    const latest = BigInt(p.latestOffset);
    const earliest = BigInt(p.earliestOffset);
    const start = latest - BigInt(limit);
    return { offset: String(start > earliest ? start : earliest) };
  }
  if (kind === 'timestamp') {
    const ms = /^\d+$/.test(value) ? Number(value) : Date.parse(value);
    if (Number.isNaN(ms)) throw new Error(`"${value}" is neither epoch milliseconds nor a date`);
    return { timestamp: ms };
  }
  if (!/^\d+$/.test(value)) throw new Error(`offset "${value}" is not a non-negative integer`);
  return { offset: value };
}
