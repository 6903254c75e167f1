// The console's entry point: hash routes to views, each view rendered into <main> with a context
// whose polls and charts stop when the user leaves it.
import { api } from './api.js';
import { errorBox, h } from './dom.js';
import { renderOverview } from './overview.js';
import { renderTopics, renderTopic } from './topics.js';
import { renderGroups, renderGroup } from './groups.js';
import { renderBrokers, renderBroker } from './brokers.js';
import { renderProgress } from './progress.js';

export const POLL_MS = 2000;

const routes = [
  [/^\/?$/, 'overview', renderOverview],
  [/^\/topics$/, 'topics', renderTopics],
  [/^\/topics\/([^/]+)$/, 'topics', renderTopic],
  [/^\/groups$/, 'groups', renderGroups],
  [/^\/groups\/([^/]+)$/, 'groups', renderGroup],
  [/^\/brokers$/, 'brokers', renderBrokers],
  [/^\/brokers\/([^/]+)$/, 'brokers', renderBroker],
  [/^\/progress$/, 'progress', renderProgress],
];

/** What a view may use: the root to fill, /api/info, and polls/cleanups that end with the view. */
class ViewContext {
  constructor(root, info) {
    this.root = root;
    this.info = info;
    this.live = true;
    this.cleanups = [];
    this.timers = new Set();
  }

  /** Runs `fn` now and then every POLL_MS after it finished (no overlap), until the view is left; a failure shows in `errorSlot`. */
  poll(fn, errorSlot) {
    const tick = async () => {
      if (!this.live) return;
      try {
        await fn();
        errorSlot?.replaceChildren();
      } catch (e) {
        if (this.live) errorSlot?.replaceChildren(errorBox(e));
      }
      this.after(tick);
    };
    return tick();
  }

  /** Runs `fn` after POLL_MS unless the view is left by then. */
  after(fn) {
    if (!this.live) return;
    const t = setTimeout(() => {
      this.timers.delete(t);
      fn();
    }, POLL_MS);
    this.timers.add(t);
  }

  /** Runs `fn` when the view is left (at once if it already was, while the view awaited). */
  onLeave(fn) {
    if (this.live) this.cleanups.push(fn);
    else fn();
  }

  leave() {
    this.live = false;
    for (const t of this.timers) clearTimeout(t);
    for (const fn of this.cleanups) fn();
  }
}

let info;
let current;

async function route() {
  current?.leave();
  // A view of its own element: a view left while it still awaits fills a detached one.
  const root = h('div');
  document.getElementById('view').replaceChildren(root);
  const path = location.hash.replace(/^#/, '').split('?')[0];
  const found = routes.find(([re]) => re.test(path));
  for (const a of document.querySelectorAll('nav a')) a.classList.toggle('active', a.dataset.route === found?.[1]);
  if (!found) {
    root.append(h('h1', null, 'Not found'), h('p', null, `No view at ${path}`));
    return;
  }
  const [re, , render] = found;
  const params = re.exec(path).slice(1).map(decodeURIComponent);
  const ctx = new ViewContext(root, info);
  current = ctx;
  try {
    await render(ctx, ...params);
  } catch (e) {
    if (ctx.live) root.append(errorBox(e));
  }
}

async function start() {
  try {
    info = await api.info();
  } catch (e) {
    document.getElementById('view').append(errorBox(e));
    return;
  }
  const where = info.nodeId === null ? 'remote cluster' : `broker ${info.nodeId}`;
  document.querySelector('[data-testid=info]').textContent = `${where} · Fjord ${info.version}${info.writesEnabled ? ' · writes enabled' : ' · read-only'}`;
  // A remote cluster's console has no broker of its own: no long work to show.
  if (info.nodeId === null) document.querySelector('nav a[data-route=progress]').hidden = true;
  document.body.dataset.ready = 'true';
  window.addEventListener('hashchange', route);
  await route();
}

start();
