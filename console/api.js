// The console's JSON API (served by src/ops/ under /api/) and the broker's Prometheus text at /metrics.
// Paths are relative so the console also works behind a reverse proxy under a prefix.

async function request(method, path, body) {
  const res = await fetch(path, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let json;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = null;
  }
  // Errors come as { error: "NAME: message" }; anything else (a proxy's HTML page) as its status.
  if (!res.ok) throw new Error(json?.error ?? `HTTP ${res.status} ${res.statusText}`);
  return json;
}

const seg = encodeURIComponent;

export const api = {
  info: () => request('GET', 'api/info'),
  cluster: () => request('GET', 'api/cluster'),
  topics: () => request('GET', 'api/topics'),
  topic: (name) => request('GET', `api/topics/${seg(name)}`),
  /** `from` is { offset } or { timestamp } (ms). */
  messages: (name, partition, from, limit) => {
    const q = new URLSearchParams({ partition: String(partition), limit: String(limit) });
    if (from.timestamp !== undefined) q.set('timestamp', String(from.timestamp));
    else q.set('offset', String(from.offset));
    return request('GET', `api/topics/${seg(name)}/messages?${q}`);
  },
  createTopic: (spec) => request('POST', 'api/topics', spec),
  deleteTopic: (name) => request('DELETE', `api/topics/${seg(name)}`),
  groups: () => request('GET', 'api/groups'),
  group: (id) => request('GET', `api/groups/${seg(id)}`),
  resetOffsets: (id, body) => request('POST', `api/groups/${seg(id)}/reset-offsets`, body),
  brokerConfigs: (id) => request('GET', `api/brokers/${seg(id)}/configs`),
  progress: () => request('GET', 'api/progress'),
  metrics: async () => {
    const res = await fetch('metrics');
    if (!res.ok) throw new Error(`/metrics: HTTP ${res.status}`);
    return res.text();
  },
};
