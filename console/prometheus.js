// The broker's /metrics (Prometheus text format) parsed in the browser, and rates between two scrapes.

const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

function unescape(v) {
  return v.replace(/\\(.)/g, (_m, c) => (c === 'n' ? '\n' : c));
}

function parseValue(s) {
  if (s === '+Inf') return Infinity;
  if (s === '-Inf') return -Infinity;
  return Number(s);
}

/** The samples of a scrape: Map of metric name → [{ labels, value }] (histograms as their _bucket, _sum, _count). */
export function parsePrometheus(text) {
  const samples = new Map();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const brace = line.indexOf('{');
    const space = line.indexOf(' ');
    let name;
    let labels = {};
    let rest;
    if (brace !== -1 && brace < space) {
      const close = line.lastIndexOf('}');
      name = line.slice(0, brace);
      for (const m of line.slice(brace + 1, close).matchAll(LABEL)) labels[m[1]] = unescape(m[2]);
      rest = line.slice(close + 1).trim();
    } else {
      name = line.slice(0, space);
      rest = line.slice(space + 1).trim();
    }
    const value = parseValue(rest.split(' ')[0]);
    if (!samples.has(name)) samples.set(name, []);
    samples.get(name).push({ labels, value });
  }
  return samples;
}

/** The sum of a metric's samples whose labels match `where` (a label → value or predicate). */
export function total(samples, name, where = {}) {
  let sum = 0;
  for (const s of samples.get(name) ?? []) {
    const match = Object.entries(where).every(([k, want]) => (typeof want === 'function' ? want(s.labels[k]) : s.labels[k] === want));
    if (match) sum += s.value;
  }
  return sum;
}

/** Whether the scrape has the metric at all (a broker without a part's metrics, or a remote cluster). */
export function has(samples, name) {
  return samples.has(name);
}

/**
 * A histogram's mean and 99th percentile over the interval between two scrapes, in the histogram's
 * unit, for the samples whose labels match `where`; null when nothing was observed in between.
 */
export function histogramWindow(prev, cur, name, where = {}) {
  const count = total(cur, `${name}_count`, where) - total(prev, `${name}_count`, where);
  if (!(count > 0)) return null;
  const sum = total(cur, `${name}_sum`, where) - total(prev, `${name}_sum`, where);
  const les = [...new Set((cur.get(`${name}_bucket`) ?? []).map((s) => s.labels.le))].map(parseValue).sort((a, b) => a - b);
  let p99 = null;
  for (const le of les) {
    const at = (scrape) => total(scrape, `${name}_bucket`, { ...where, le: (v) => parseValue(v) === le });
    if (at(cur) - at(prev) >= 0.99 * count) {
      // The +Inf bucket says only "above the last bound": show the last finite bound then.
      p99 = Number.isFinite(le) ? le : les[les.length - 2] ?? null;
      break;
    }
  }
  return { mean: sum / count, p99, count };
}

/** Per-second rate of a counter between two scrapes taken `seconds` apart (0 after a counter reset). */
export function rate(prev, cur, name, seconds, where = {}) {
  const d = total(cur, name, where) - total(prev, name, where);
  return d < 0 || seconds <= 0 ? 0 : d / seconds;
}
