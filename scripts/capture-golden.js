#!/usr/bin/env node
'use strict';
/*
 * Captures golden protocol bytes from REAL Kafka clients (run by hand, not by the tests).
 *
 *   npx tsc -p tsconfig.json && node scripts/capture-golden.js [--only kcat,java] [--timeout 60]
 *
 * Starts a Fjord broker in-process (dist/, so build first) and a TCP proxy in front of it; the broker
 * advertises the proxy's address, so every connection a client opens (bootstrap and broker) goes
 * through the proxy. The proxy records each request frame and the response frame with the same
 * correlation id on the same connection, with the API key and version from the request header.
 * Then each real client runs a few operations through the proxy: kcat (-L), confluent-kafka and
 * kafka-python (list topics, create and delete a topic, describe configs of a topic and of the
 * broker), the Java client and franz-go (the compat scenarios connect and admin-topics) and kafkajs
 * (the same compat scenarios).
 *
 * Output, replacing whatever was there (with --only, just those clients' part):
 * test/protocol/golden/<client>/<Api>-v<N>[-<variant>]-request.hex and -response.hex (hex text of the
 * frame without its 4-byte size prefix; the first occurrence of each (client, API, version), plus the
 * variants below) and test/protocol/golden/index.json (clients with their versions, the fixtures, and
 * the parameters the inline scripts used, which test/protocol/golden.test.ts checks). Exits 1 if any
 * client run failed. Topic names of the compat scenarios carry a timestamp, so a re-capture changes
 * those fixtures' bytes; the test only checks their shape.
 */
const { spawn, execFileSync } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..');
const OUT = path.join(ROOT, 'test', 'protocol', 'golden');
const PY = path.join(ROOT, 'compat', 'python', '.venv', 'bin', 'python');
const JAVA_CP = `${path.join(ROOT, 'compat/java/target/classes')}:${path.join(ROOT, 'compat/java/target/lib')}/*`;
const GO_BIN = path.join(ROOT, 'compat', 'go', 'fjord-compat-go');

const { startBroker } = require(path.join(ROOT, 'dist/src/index.js'));
const { getApiSpec, requestHeaderVersion, decodeRequestHeader } = require(path.join(ROOT, 'dist/src/protocol/generated/index.js'));
const { Reader } = require(path.join(ROOT, 'dist/src/protocol/primitives.js'));

/*
 * Variants: besides the first occurrence of each (client, API, version), the first request of a few
 * telling shapes is kept too, when the first occurrence does not have that shape already (librdkafka's
 * and the Java client's first Metadata request is a brokers-only one, topics = []; the all-topics
 * request, topics = null, comes next). Classifying decodes with our codec, but only to choose which
 * frames to keep: the bytes written are always the client's.
 */
const VARIANTS = {
  3: { 'all-topics': (m) => m.topics === null },
  32: { broker: (m) => m.resources.some((r) => r.resourceType === 4) },
};

function variantsOf(apiKey, apiVersion, frame) {
  const preds = VARIANTS[apiKey];
  if (!preds) return [];
  try {
    const r = new Reader(frame);
    decodeRequestHeader(r, requestHeaderVersion(apiKey, apiVersion));
    const body = getApiSpec(apiKey).decodeRequest(r, apiVersion);
    return Object.keys(preds).filter((v) => preds[v](body));
  } catch {
    return []; // not decodable: the golden test will say why
  }
}

// Parameters of the inline scripts, recorded in index.json so that the test can check decoded values.
const PARAMS = {
  'confluent-kafka': { topic: 'golden-confluent', partitions: 3, replicationFactor: 1 },
  'kafka-python': { topic: 'golden-kafka-python', partitions: 2, replicationFactor: 1 },
};

const CONFLUENT_SCRIPT = `
import sys
from confluent_kafka.admin import AdminClient, NewTopic, ConfigResource
boot, topic, parts, rf = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
a = AdminClient({"bootstrap.servers": boot, "client.id": "fjord-golden-confluent"})
md = a.list_topics(timeout=15)
a.create_topics([NewTopic(topic, num_partitions=parts, replication_factor=rf)], operation_timeout=15)[topic].result(timeout=30)
fs = a.describe_configs([ConfigResource("topic", topic)])
for f in fs.values(): f.result(timeout=30)
broker_id = str(list(md.brokers.keys())[0])
fs = a.describe_configs([ConfigResource("broker", broker_id)])
for f in fs.values(): f.result(timeout=30)
a.delete_topics([topic], operation_timeout=15)[topic].result(timeout=30)
print("ok")
`;

const KAFKA_PYTHON_SCRIPT = `
import sys
from kafka.admin import KafkaAdminClient, NewTopic, ConfigResource, ConfigResourceType
boot, topic, parts, rf = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
a = KafkaAdminClient(bootstrap_servers=boot, client_id="fjord-golden-kafka-python", request_timeout_ms=15000)
a.list_topics()
r = a.create_topics([NewTopic(topic, num_partitions=parts, replication_factor=rf)])
a.describe_configs([ConfigResource(ConfigResourceType.TOPIC, topic)])
a.describe_configs([ConfigResource(ConfigResourceType.BROKER, "0")])
a.delete_topics([topic])
a.close()
print("ok")
`;

/** The client runs, in order: [client, [[label, command, ...args]...]]. */
function clientRuns(boot) {
  const p = PARAMS;
  const py = (client, script) => [PY, '-c', script, boot, p[client].topic, String(p[client].partitions),
    String(p[client].replicationFactor)];
  return [
    ['kcat', [['-L', 'kcat', '-b', boot, '-L', '-m', '15']]],
    ['confluent-kafka', [['admin script', ...py('confluent-kafka', CONFLUENT_SCRIPT)]]],
    ['kafka-python', [['admin script', ...py('kafka-python', KAFKA_PYTHON_SCRIPT)]]],
    ['java', ['connect', 'admin-topics'].map((s) => [s, 'java', '-cp', JAVA_CP, 'fjord.compat.Client', boot, s])],
    ['franz-go', ['connect', 'admin-topics'].map((s) => [s, GO_BIN, boot, s])],
    ['kafkajs', ['connect', 'admin-topics'].map((s) =>
      [s, process.execPath, path.join(ROOT, 'compat/kafkajs/client.js'), boot, s])],
  ];
}

function tryExec(cmd, args) {
  try {
    return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (e) {
    return `${e.stdout || ''}${e.stderr || ''}`;
  }
}

function clientVersions() {
  const v = {};
  const kcat = tryExec('kcat', ['-V']);
  const m = /Version (\S+) .*librdkafka (\S+)/.exec(kcat);
  v.kcat = m ? `kcat ${m[1]} (librdkafka ${m[2]})` : 'unknown';
  const py = tryExec(PY, ['-c', 'import confluent_kafka, kafka; print(confluent_kafka.version(), confluent_kafka.libversion()[0], kafka.__version__)'])
    .trim().split(/\s+/);
  v['confluent-kafka'] = py.length === 3 ? `confluent-kafka ${py[0]} (librdkafka ${py[1]})` : 'unknown';
  v['kafka-python'] = py.length === 3 ? `kafka-python ${py[2]}` : 'unknown';
  const jar = fs.readdirSync(path.join(ROOT, 'compat/java/target/lib')).find((f) => /^kafka-clients-.*\.jar$/.test(f));
  v.java = jar ? `kafka-clients ${jar.replace(/^kafka-clients-|\.jar$/g, '')}` : 'unknown';
  const gomod = fs.readFileSync(path.join(ROOT, 'compat/go/go.mod'), 'utf8');
  const g = /github\.com\/twmb\/franz-go (v\S+)/.exec(gomod);
  const k = /github\.com\/twmb\/franz-go\/pkg\/kadm (v\S+)/.exec(gomod);
  v['franz-go'] = g ? `franz-go ${g[1]}${k ? ` (kadm ${k[1]})` : ''}` : 'unknown';
  v.kafkajs = `kafkajs ${require(path.join(ROOT, 'node_modules/kafkajs/package.json')).version}`;
  return v;
}

// ---------------------------------------------------------------------------
// Recording proxy
// ---------------------------------------------------------------------------

/** Splits size-prefixed frames out of a byte stream; calls onFrame(frameWithoutSize). */
function framer(onFrame) {
  let buf = Buffer.alloc(0);
  return (chunk) => {
    buf = buf.length === 0 ? chunk : Buffer.concat([buf, chunk]);
    while (buf.length >= 4) {
      const size = buf.readInt32BE(0);
      if (size <= 0 || buf.length < 4 + size) break;
      onFrame(Buffer.from(buf.subarray(4, 4 + size)));
      buf = buf.subarray(4 + size);
    }
  };
}

function startProxy(state) {
  const sockets = new Set();
  const server = net.createServer((down) => {
    const client = state.client;
    const pending = new Map(); // correlation id -> key of the fixture it opened, or null
    const up = net.connect(state.brokerPort, '127.0.0.1');
    sockets.add(down);
    sockets.add(up);
    const onRequest = framer((frame) => {
      if (frame.length < 8) return;
      const apiKey = frame.readInt16BE(0);
      const apiVersion = frame.readInt16BE(2);
      const correlationId = frame.readInt32BE(4);
      const key = `${client}\0${apiKey}\0${apiVersion}`;
      state.counts.set(key, (state.counts.get(key) || 0) + 1);
      const variants = variantsOf(apiKey, apiVersion, frame);
      const record = (k, variant) => {
        state.fixtures.set(k, { client, apiKey, apiVersion, variant, variants, request: frame, response: null });
        pending.set(correlationId, k);
      };
      if (!state.fixtures.has(key)) {
        record(key, null);
      } else {
        pending.set(correlationId, null);
        const base = state.fixtures.get(key);
        const v = variants.find((x) => !base.variants.includes(x) && !state.fixtures.has(`${key}\0${x}`));
        if (v) record(`${key}\0${v}`, v);
      }
    });
    const onResponse = framer((frame) => {
      if (frame.length < 4) return;
      const correlationId = frame.readInt32BE(0);
      const key = pending.get(correlationId);
      pending.delete(correlationId);
      if (key) state.fixtures.get(key).response = frame;
    });
    down.on('data', (d) => { onRequest(d); up.write(d); });
    up.on('data', (d) => { onResponse(d); down.write(d); });
    const close = () => { down.destroy(); up.destroy(); sockets.delete(down); sockets.delete(up); };
    down.on('close', close);
    up.on('close', close);
    down.on('error', close);
    up.on('error', close);
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => resolve({
      port: server.address().port,
      close: () => new Promise((r) => { for (const s of sockets) s.destroy(); server.close(() => r()); }),
    }));
  });
}

function run(cmd, args, timeoutSec) {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let out = '';
    child.stdout.on('data', (d) => { out += d; });
    child.stderr.on('data', (d) => { out += d; });
    const timer = setTimeout(() => {
      out += `\n(killed after ${timeoutSec}s)`;
      try { process.kill(-child.pid, 'SIGKILL'); } catch { /* gone */ }
    }, timeoutSec * 1000);
    child.on('error', (e) => { clearTimeout(timer); resolve({ code: -1, out: String(e) }); });
    child.on('close', (code) => { clearTimeout(timer); resolve({ code, out }); });
  });
}

function parseArgs(argv) {
  const o = { only: null, timeout: 60 };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--only') o.only = new Set(argv[++i].split(','));
    else if (argv[i] === '--timeout') o.timeout = Number(argv[++i]);
    else throw new Error(`unknown argument ${argv[i]}`);
  }
  return o;
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const state = { client: null, brokerPort: 0, fixtures: new Map(), counts: new Map() };
  const proxy = await startProxy(state);
  const broker = await startBroker({
    port: 0,
    config: { 'advertised.listeners': `PLAINTEXT://127.0.0.1:${proxy.port}` },
  });
  state.brokerPort = broker.port;
  const boot = `127.0.0.1:${proxy.port}`;
  console.log(`broker on ${broker.bootstrap}, proxy (advertised) on ${boot}`);

  const versions = clientVersions();
  const failures = [];
  try {
    for (const [client, commands] of clientRuns(boot)) {
      if (opts.only && !opts.only.has(client)) continue;
      state.client = client;
      for (const [what, cmd, ...args] of commands) {
        const r = await run(cmd, args, opts.timeout);
        const label = `${client}: ${what}`;
        console.log(`${r.code === 0 ? 'ok  ' : 'FAIL'} ${label}`);
        if (r.code !== 0) {
          failures.push(label);
          console.log(r.out.trim().split('\n').slice(-15).map((l) => `     ${l}`).join('\n'));
        }
      }
      // Give late responses on still-open connections a moment.
      await new Promise((r) => setTimeout(r, 200));
    }
  } finally {
    await proxy.close();
    await broker.close();
  }

  // Write the fixtures: a full run replaces the whole directory; --only replaces those clients' files
  // and their entries in index.json.
  if (!opts.only) fs.rmSync(OUT, { recursive: true, force: true });
  const clients = [...new Set([...state.fixtures.values()].map((f) => f.client))];
  const indexPath = path.join(OUT, 'index.json');
  let index = { clients: {}, params: {}, fixtures: [] };
  if (opts.only && fs.existsSync(indexPath)) index = JSON.parse(fs.readFileSync(indexPath, 'utf8'));
  index.fixtures = index.fixtures.filter((f) => !clients.includes(f.client));
  for (const client of clients) {
    fs.rmSync(path.join(OUT, client), { recursive: true, force: true });
    fs.mkdirSync(path.join(OUT, client), { recursive: true });
    index.clients[client] = versions[client];
    if (PARAMS[client]) index.params[client] = PARAMS[client];
  }
  for (const f of state.fixtures.values()) {
    const spec = getApiSpec(f.apiKey);
    const api = spec ? spec.name : `ApiKey${f.apiKey}`;
    const base = `${f.client}/${api}-v${f.apiVersion}${f.variant ? `-${f.variant}` : ''}`;
    fs.writeFileSync(path.join(OUT, `${base}-request.hex`), `${f.request.toString('hex')}\n`);
    const entry = {
      client: f.client, api, apiKey: f.apiKey, version: f.apiVersion, variant: f.variant,
      request: `${base}-request.hex`,
      response: null,
    };
    if (f.response) {
      fs.writeFileSync(path.join(OUT, `${base}-response.hex`), `${f.response.toString('hex')}\n`);
      entry.response = `${base}-response.hex`;
    }
    index.fixtures.push(entry);
  }
  const order = Object.keys(versions);
  index.fixtures.sort((a, b) => order.indexOf(a.client) - order.indexOf(b.client) || a.apiKey - b.apiKey || a.version - b.version ||
    (a.variant ?? '').localeCompare(b.variant ?? ''));
  fs.mkdirSync(OUT, { recursive: true });
  fs.writeFileSync(indexPath, `${JSON.stringify(index, null, 2)}\n`);

  for (const f of index.fixtures) {
    const seen = state.counts.get(`${f.client}\0${f.apiKey}\0${f.version}`);
    console.log(`  ${f.client.padEnd(16)} ${f.api.padEnd(18)} v${String(f.version).padEnd(3)} ${(f.variant ?? '').padEnd(10)} ${f.response ? 'req+resp' : 'req only'}${seen ? ` (seen ${seen}x)` : ''}`);
  }
  console.log(`${index.fixtures.length} fixtures in ${path.relative(ROOT, OUT)}; ${failures.length} client run(s) failed`);
  process.exitCode = failures.length ? 1 : 0;
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
