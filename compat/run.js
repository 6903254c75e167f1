#!/usr/bin/env node
'use strict';
// Fjord compatibility harness: starts a broker, runs each scenario with each real Kafka client, prints a matrix.
//
//   node compat/run.js [--only kafkajs,java] [--scenario connect] [--bootstrap host:port]
//                      [--timeout 60] [--log-level warn] [--verbose]
//
// Each client is a program under compat/<client>/ taking BOOTSTRAP SCENARIO and exiting 0 on pass,
// 1 with a "FAIL: ..." line on failure, 2 on an unknown scenario or bad usage.
// Adding a scenario: a name in SCENARIOS below and one function in each client program.
// Adding a client: an entry in CLIENTS below (check, optional build, cmd) and its program.

const { spawn, spawnSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { finalizedLevel } = require('./lib/api-versions');

const DIR = __dirname;
const ROOT = path.dirname(DIR);
const CLUSTER_TEST = path.join(DIR, 'cluster/cluster-test.js');
const PARTITIONS_TEST = path.join(DIR, 'cluster/partitions-test.js');
const FJORD_CLI_ADMIN = path.join(DIR, 'cli/fjord-cli-admin.js');

// The group-*-consumer rows are the group rows with group.protocol=consumer (KIP-848), for the clients that have it.
// The txn rows run with the transaction version the broker finalizes (Kafka 4.4: 2); the *-tv1 rows are the same
// scenarios after the harness downgraded the broker to transaction.version 1 (UpdateFeatures, through Kafka's own
// kafka-features tool), run after every other per-client row; the harness restores the version afterwards.
const SCENARIOS = ['connect', 'admin-topics', 'produce-consume', 'compression', 'large-records', 'keyed-partitions', 'offsets-by-time', 'idempotent',
  'group-consume', 'group-rebalance', 'group-static', 'group-consume-consumer', 'group-rebalance-consumer', 'group-static-consumer',
  'txn-consume-transform-produce', 'txn-zombie-fenced', 'txn-consume-transform-produce-tv1', 'txn-zombie-fenced-tv1', 'compaction', 'retention',
  'share-queue', 'share-dlq'];
const TV1 = /-tv1$/; // the scenario with transaction.version 1: the client program runs the scenario without the suffix
const KAFKA_SH = path.join(DIR, 'lib/apache-kafka.sh');

// Scenarios run once, not per client: each starts its own broker process (bin/fjord start, so that it can be
// killed with SIGKILL and restarted) and uses one client, whose column shows the result. `--scenario crash`
// selects the crash rows, `--scenario group-offsets-restart` the offsets one (`--scenario group`: every group-*,
// `--scenario txn`: every txn-*, the transaction crash row `txn-crash` too).
const ONCE = [
  { name: 'crash: broker kill -9', select: 'crash', client: 'confluent-kafka', cmd: [process.execPath, [path.join(DIR, 'crash/crash-test.js'), 'broker-kill']] },
  { name: 'crash: producer kill -9', select: 'crash', client: 'confluent-kafka', cmd: [process.execPath, [path.join(DIR, 'crash/crash-test.js'), 'producer-kill']] },
  { name: 'crash: broker kill -9 mid-commit', select: 'txn-crash', client: 'confluent-kafka', cmd: [process.execPath, [path.join(DIR, 'crash/crash-test.js'), 'txn-commit-kill']] },
  { name: 'group-offsets-restart', select: 'group-offsets-restart', client: 'confluent-kafka', cmd: [process.execPath, [path.join(DIR, 'crash/offsets-restart.js')]] },
  { name: 'cluster-controller', select: 'cluster-controller', client: 'kafkajs', cmd: [process.execPath, [CLUSTER_TEST, 'cluster-controller']] },
  // Partition management (cluster/partitions-test.js) with Kafka's own tools; kafkajs is the harness's client (the load, the checks).
  ...[['cluster-reassign', 300], ['cluster-leader-election', 200], ['cluster-leader-rebalance', 200], ['cluster-unclean-election', 200]].map(([name, timeoutS]) =>
    ({ name, select: name, client: 'kafkajs', timeoutS, cmd: [process.execPath, [PARTITIONS_TEST, name]] })),
];

// Run-once rows on the harness's broker (as the per-client rows; their cmd takes its bootstrap), after the
// per-client rows: Kafka's own ClientCompatibilityTest (the Maven kafka-tools artifact), a Java group migrating
// from the classic protocol to the consumer protocol while it consumes, a Kafka Streams application of the
// streams rebalance protocol (KIP-1071), and fjord's own admin commands (the `fjord` column).
const ONCE_ON_BROKER = [
  { name: 'ClientCompatibilityTest', select: 'client-compatibility', client: 'java', cmd: (b) => [process.execPath, [path.join(DIR, 'lib/client-compatibility.js'), b]] },
  { name: 'group-migration', select: 'group-migration', client: 'java', cmd: (b) => javaCmd(b, 'group-migration') },
  { name: 'streams-wordcount', select: 'streams-wordcount', client: 'java', cmd: (b) => javaCmd(b, 'streams-wordcount') },
  // fjord's own admin commands (bin/fjord --json), compared with what they gave against Kafka 4.4 (cli/kafka-4.4.json).
  // A process per command (about 50, each loading the CLI: 0.5-1 s on an idle machine, several times that on a busy one).
  { name: 'fjord-cli-admin', select: 'fjord-cli-admin', client: 'fjord', timeoutS: 400, cmd: (b) => [process.execPath, [FJORD_CLI_ADMIN, b, '--compare', path.join(DIR, 'cli/kafka-4.4.json')]] },
];

// The cluster rows, per client (cluster/cluster-test.js): each cell starts its own 3-broker cluster (one etcd,
// a process per broker), runs the client program against it and SIGKILLs a broker mid-stream. `--scenario
// cluster` selects them and cluster-controller.
const CLUSTER_SCENARIOS = ['cluster-failover', 'cluster-group', 'cluster-txn', 'cluster-admin-partitions'];
const CLUSTER_RUNNER = { 'cluster-admin-partitions': PARTITIONS_TEST }; // else CLUSTER_TEST
const NO_REASSIGNMENT_API = (client) => `${client} has no partition reassignment API (AlterPartitionReassignments / ListPartitionReassignments)`;
const CLUSTER_TIMEOUT_S = 120;

// The security rows (security/rows.js): one broker per row with every listener, TLS, SASL, StandardAuthorizer
// (Fjord, or Kafka 4.4 with FJORD_SECURE_BROKER=kafka), the clients run one after another against it.
// `--scenario security` selects them.
const { SECURE_SCENARIOS, runSecureRow } = require('./security/rows');

/** Does `--scenario` select scenario or run-once selector `name`? ("group" selects every group-* scenario, "txn" every txn-*, "share" every share-*.) */
const PREFIXES = ['group', 'txn', 'cluster', 'share'];
const selected = (opts, name) => !opts.scenarios || opts.scenarios.includes(name) || PREFIXES.some((p) => opts.scenarios.includes(p) && name.startsWith(`${p}-`)) ||
  (opts.scenarios.includes('security') && SECURE_SCENARIOS.includes(name));
const ONCE_TIMEOUT_S = 150;

const VENV_PY = path.join(DIR, 'python/.venv/bin/python');
const PY = fs.existsSync(VENV_PY) ? VENV_PY : 'python3';
const JAVA_DIR = path.join(DIR, 'java');
const GO_DIR = path.join(DIR, 'go');
const GO_BIN = path.join(GO_DIR, 'fjord-compat-go');

/**
 * check(): null if the client's toolchain is there, else the reason (counts as FAIL in every cell).
 * build: a command run once per harness run before any scenario.
 * cmd(bootstrap, scenario): [program, args].
 * na: { scenario: reason } for scenarios that the client cannot express at all (cluster rows too).
 */
const KCAT_NO_TXN = 'kcat has no transactions: librdkafka needs init/begin/commit_transaction calls that kcat does not make';
const CONSUMER_PROTOCOL = ['group-consume-consumer', 'group-rebalance-consumer', 'group-static-consumer'];
const classicOnly = (why) => Object.fromEntries(CONSUMER_PROTOCOL.map((s) => [s, why]));
// Share groups (KIP-932): the clients with a share consumer are Java (KafkaShareConsumer), confluent-kafka (ShareConsumer,
// 2.16) and franz-go (kgo.ShareGroup, 1.22).
const NO_SHARE_CONSUMER = (client) => ({ 'share-queue': `${client} has no share consumer (KIP-932)`, 'share-dlq': `${client} has no share consumer (KIP-932)` });
const NO_QUOTA_CELL = { 'quota-throttle': 'not written: the quota row has a Java cell (its produce-throttle-time metrics) and a franz-go cell (its OnBrokerThrottle hook)' };
const CLIENTS = [
  {
    name: 'kafkajs',
    check: () => (requireResolves('kafkajs') ? null : 'kafkajs not installed (npm ci)'),
    cmd: (b, s) => [process.execPath, [path.join(DIR, 'kafkajs/client.js'), b, s]],
    na: {
      ...classicOnly('kafkajs has the classic group protocol only (JoinGroup / SyncGroup)'),
      'group-static': 'kafkajs has no static membership: it sends no group.instance.id',
      'cluster-txn': 'kafkajs does not retry AddPartitionsToTxn / EndTxn (its eosManager addPartitionsToTransaction, commit, abort have no retrier): a coordinator killed mid-request fails the transaction with KafkaJSConnectionClosedError',
      'cluster-admin-partitions': `${NO_REASSIGNMENT_API('kafkajs 2.2.4')}, ElectLeaders, DescribeLogDirs nor incremental config changes`,
      ...NO_QUOTA_CELL,
      ...NO_SHARE_CONSUMER('kafkajs 2.2.4'),
    },
  },
  {
    name: 'kcat',
    check: () => tool('kcat', ['-V'], 'kcat (apt-get install kcat)') || (requireResolves('kafkajs') ? null : 'kafkajs not installed (npm ci)'),
    cmd: (b, s) => [process.execPath, [path.join(DIR, 'kcat/client.js'), b, s]],
    na: {
      ...Object.fromEntries(['txn-consume-transform-produce', 'txn-zombie-fenced', 'txn-consume-transform-produce-tv1', 'txn-zombie-fenced-tv1', 'cluster-txn'].map((s) => [s, KCAT_NO_TXN])),
      ...classicOnly('kcat 1.7.1 (Debian) is built on librdkafka 2.0.2, which predates group.protocol=consumer'),
      'cluster-failover': 'kcat -P reports no offset per acknowledged record (confluent-kafka is librdkafka with delivery reports)',
      'cluster-group': 'not wired: the cluster harness drives JSON-lines group members, kcat -G members are parsed in kcat/client.js',
      'cluster-admin-partitions': 'kcat has no admin API',
      ...NO_QUOTA_CELL,
      ...NO_SHARE_CONSUMER('kcat 1.7.1 (librdkafka 2.0.2)'),
    },
  },
  {
    name: 'confluent-kafka',
    check: () => tool(PY, ['-c', 'import confluent_kafka'], 'Python confluent-kafka (pip install -r compat/python/requirements.txt)'),
    cmd: (b, s) => [PY, [path.join(DIR, 'python/confluent_client.py'), b, s]],
    na: NO_QUOTA_CELL,
  },
  {
    name: 'kafka-python',
    check: () => tool(PY, ['-c', 'import kafka'], 'Python kafka-python (pip install -r compat/python/requirements.txt)'),
    cmd: (b, s) => [PY, [path.join(DIR, 'python/kafka_python_client.py'), b, s]],
    na: {
      ...classicOnly('kafka-python has the classic group protocol only'),
      'cluster-txn': 'kafka-python hangs in send_offsets_to_transaction once the transaction coordinator is killed, against Apache Kafka 4.4 too (FJORD_CLUSTER=kafka: 2 of 2 runs)',
      ...NO_QUOTA_CELL,
      ...NO_SHARE_CONSUMER('kafka-python 2.3'),
    },
  },
  {
    name: 'java',
    check: () => tool('java', ['-version'], 'java (a JDK 17)') || tool('mvn', ['-v'], 'mvn (Maven)'),
    build: ['mvn', ['-q', '-B', '-f', path.join(JAVA_DIR, 'pom.xml'), 'package']],
    na: { 'cluster-group': 'Java runs its group members as threads of one JVM (Group.java): it has no group-member process mode for the harness to drive' },
    cmd: (b, s) => javaCmd(b, s),
  },
  {
    name: 'franz-go',
    check: () => tool('go', ['version'], 'go'),
    build: ['go', ['build', '-o', GO_BIN, '.'], { cwd: GO_DIR }],
    cmd: (b, s) => [GO_BIN, [b, s]],
    na: {
      'group-static-consumer': 'franz-go 1.22.3 sends a static member\'s leave (member epoch -2) without its instance id, which Kafka 4.4 refuses ' +
        '(INVALID_REQUEST "InstanceId can\'t be null."): the member stays until its session expires and its restarted instance is refused meanwhile',
    },
  },
  {
    // Fjord's own admin commands: not a client library, so no per-client cells (left blank), the fjord-cli-admin row only.
    name: 'fjord',
    onceOnly: true,
    check: () => (fs.existsSync(path.join(ROOT, 'dist/src/cli.js')) ? null : 'missing toolchain: dist/src/cli.js (npm run build)') || (requireResolves('kafkajs') ? null : 'kafkajs not installed (npm ci)'),
  },
];

function javaCmd(bootstrap, scenario) {
  return ['java', ['-XX:TieredStopAtLevel=1', '-XX:+UseSerialGC', '-cp', `${JAVA_DIR}/target/classes${path.delimiter}${JAVA_DIR}/target/lib/*`,
    'fjord.compat.Client', bootstrap, scenario]];
}

function requireResolves(name) {
  try {
    require.resolve(name, { paths: [ROOT] });
    return true;
  } catch {
    return false;
  }
}

/** null if `program args` runs and exits 0, else "missing toolchain: what". */
function tool(program, args, what) {
  const r = spawnSync(program, args, { stdio: 'ignore', timeout: 30000 });
  return r.status === 0 ? null : `missing toolchain: ${what}`;
}

/** Runs a program with a time limit; resolves { code, out, ms, timedOut }. Kills its whole process group on timeout. */
function run(program, args, { timeoutMs, cwd, env = {} } = {}) {
  return new Promise((resolve) => {
    const start = Date.now();
    let out = '';
    let timedOut = false;
    const child = spawn(program, args, {
      cwd: cwd || ROOT,
      detached: true, // own process group, so a timeout kills grandchildren (kcat, JVM threads) too
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, PYTHONUNBUFFERED: '1', ...env },
    });
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }, timeoutMs);
    child.on('error', (e) => (out += `${e.message}\n`));
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code: code === null ? -1 : code, out, ms: Date.now() - start, timedOut });
    });
  });
}

/** The lines a client printed after "FAIL:", else its output's tail. */
function failureText(out) {
  const lines = out.split('\n').map((l) => l.trimEnd()).filter(Boolean);
  const first = lines.findIndex((l) => l.startsWith('FAIL:'));
  const text = (first >= 0 ? lines.slice(first, first + 15) : lines.slice(-12)).join('\n');
  return text.length > 3000 ? `${text.slice(0, 3000)} ...` : text || '(no output)';
}

function parseArgs(argv) {
  const opts = { only: null, scenarios: null, bootstrap: null, timeout: 60, logLevel: 'warn', verbose: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) usage(`${a} needs a value`);
      return argv[++i];
    };
    if (a === '--only') opts.only = value().split(',').filter(Boolean);
    else if (a === '--scenario') opts.scenarios = value().split(',').filter(Boolean);
    else if (a === '--bootstrap') opts.bootstrap = value();
    else if (a === '--timeout') opts.timeout = Number(value());
    else if (a === '--log-level') opts.logLevel = value();
    else if (a === '--verbose') opts.verbose = true;
    else if (a === '-h' || a === '--help') usage();
    else usage(`unknown option ${a}`);
  }
  const names = CLIENTS.map((c) => c.name);
  for (const c of opts.only || []) if (!names.includes(c)) usage(`unknown client ${c}; clients: ${names.join(', ')}`);
  const selectors = [...new Set([...ONCE.map((o) => o.select), ...ONCE_ON_BROKER.map((o) => o.select), ...PREFIXES, 'security'])];
  for (const s of opts.scenarios || []) if (![...SCENARIOS, ...CLUSTER_SCENARIOS, ...SECURE_SCENARIOS].includes(s) && !selectors.includes(s)) usage(`unknown scenario ${s}; scenarios: ${[...SCENARIOS, ...CLUSTER_SCENARIOS, ...SECURE_SCENARIOS].join(', ')}, ${selectors.join(', ')}`);
  if (!(opts.timeout > 0)) usage('--timeout needs a number of seconds');
  return opts;
}

function usage(error) {
  if (error) console.error(`compat: ${error}`);
  console.error(
    'usage: node compat/run.js [--only client,...] [--scenario name,...] [--bootstrap host:port] [--timeout seconds] [--log-level level] [--verbose]\n' +
      `clients: ${CLIENTS.map((c) => c.name).join(', ')}\nscenarios: ${SCENARIOS.join(', ')}; cluster: ${CLUSTER_SCENARIOS.join(', ')}; security (one broker per row): ${SECURE_SCENARIOS.join(', ')}; run once: ${[...ONCE_ON_BROKER, ...ONCE].map((o) => `${o.name} (--scenario ${o.select})`).join(', ')}; group: every group-*; txn: every txn-*; cluster: every cluster-*; security: the security rows`,
  );
  process.exit(error ? 2 : 0);
}

async function startBroker(opts) {
  if (opts.bootstrap) return { bootstrap: opts.bootstrap, close: async () => {} };
  const entry = path.join(ROOT, 'dist/src/index.js');
  let startBroker;
  try {
    ({ startBroker } = require(entry));
  } catch (e) {
    throw new Error(`cannot load ${entry} (run npm run build): ${e.message}`, { cause: e });
  }
  if (typeof startBroker !== 'function') throw new Error(`${entry} exports no startBroker function`);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'fjord-compat-'));
  // No initial rebalance delay (Kafka's default is 3 s): the group scenarios start new groups, and each would
  // wait 3 s for more members before its first rebalance. The scenarios pass either way.
  // Retention checked every 500 ms and the cleaner's back-off 200 ms (Kafka: 5 min, 15 s), for the compaction and
  // retention scenarios.
  // Consumer-protocol groups (KIP-848) with a 6 s session and 0.5 s heartbeats (Kafka: 45 s and 5 s, its minimums
  // too), the classic rows' timings; compat/lib/apache-kafka.sh gives Kafka the same.
  const broker = await startBroker({ port: 0, dataDir, logLevel: opts.logLevel, config: {
    'group.initial.rebalance.delay.ms': '0', 'log.retention.check.interval.ms': '500', 'log.cleaner.backoff.ms': '200',
    'group.consumer.min.session.timeout.ms': '6000', 'group.consumer.session.timeout.ms': '6000',
    'group.consumer.min.heartbeat.interval.ms': '500', 'group.consumer.heartbeat.interval.ms': '500',
  } });
  return {
    bootstrap: broker.bootstrap,
    close: async () => {
      await broker.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Runs one cell's program; logs and returns its result ({ status, message }). */
async function runCell(key, program, args, timeoutS, opts, env = {}) {
  const r = await run(program, args, { timeoutMs: timeoutS * 1000, env });
  let result;
  if (r.timedOut) result = { status: 'FAIL', message: `timed out after ${timeoutS} s (killed)\n${failureText(r.out)}` };
  else if (r.code === 0) result = { status: 'pass' };
  else result = { status: 'FAIL', message: `exit ${r.code}: ${failureText(r.out)}` };
  console.log(`compat: ${key.padEnd(30)} ${result.status.padEnd(4)} ${(r.ms / 1000).toFixed(1)} s`);
  if (opts.verbose && r.out.trim()) console.log(r.out.replace(/^/gm, '    '));
  return result;
}

/**
 * Sets the broker's finalized transaction.version with Kafka's own kafka-features tool (FeatureCommand, from the
 * kafka-tools artifact: UpdateFeatures) and waits until ApiVersions shows it; null, or why it failed.
 */
async function setTransactionVersion(bootstrap, level) {
  const current = await finalizedLevel(bootstrap, 'transaction.version');
  if (current === level) return null;
  const how = level < current ? 'downgrade' : 'upgrade';
  const r = await run(KAFKA_SH, ['tool', 'org.apache.kafka.tools.FeatureCommand', '--bootstrap-server', bootstrap, how, '--feature', `transaction.version=${level}`], { timeoutMs: 120000 });
  if (r.code !== 0) return `kafka-features ${how} --feature transaction.version=${level} failed (exit ${r.code}):\n${failureText(r.out)}`;
  for (const deadline = Date.now() + 15000; Date.now() < deadline; await new Promise((ok) => setTimeout(ok, 200))) {
    if ((await finalizedLevel(bootstrap, 'transaction.version')) === level) {
      console.log(`compat: transaction.version ${current} -> ${level} (kafka-features ${how})`);
      return null;
    }
  }
  return `kafka-features ${how} to transaction.version=${level} succeeded, but ApiVersions still finalizes ${await finalizedLevel(bootstrap, 'transaction.version')} after 15 s`;
}

function printMatrix(scenarios, clients, results) {
  const rows = [['scenario', ...clients.map((c) => c.name)]];
  for (const s of scenarios) rows.push([s, ...clients.map((c) => (results.get(`${c.name}/${s}`) || { status: '' }).status)]);
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  const line = (r) => r.map((cell, i) => cell.padEnd(widths[i])).join(' | ').trimEnd();
  console.log(line(rows[0]));
  console.log(widths.map((w) => '-'.repeat(w)).join('-|-'));
  for (const r of rows.slice(1)) console.log(line(r));
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const clients = CLIENTS.filter((c) => !opts.only || opts.only.includes(c.name));
  const scenarios = SCENARIOS.filter((s) => selected(opts, s));
  const clusterScenarios = CLUSTER_SCENARIOS.filter((s) => selected(opts, s));
  const secureScenarios = SECURE_SCENARIOS.filter((s) => selected(opts, s));
  const once = ONCE.filter((o) => selected(opts, o.select) && clients.some((c) => c.name === o.client));
  const onceOnBroker = ONCE_ON_BROKER.filter((o) => selected(opts, o.select) && clients.some((c) => c.name === o.client));
  const results = new Map(); // "client/scenario" -> { status, message }
  const brokerErrors = [];

  // 1. Toolchains and builds, one at a time (builds are heavy on 2 cores).
  const unusable = new Map(); // client name -> reason
  for (const c of clients) {
    if (!scenarios.length && !clusterScenarios.length && !secureScenarios.length && ![...once, ...onceOnBroker].some((o) => o.client === c.name)) continue; // nothing to run with it
    let reason = c.check();
    if (!reason && c.build) {
      const [program, args, { cwd } = {}] = c.build;
      console.log(`compat: building ${c.name}: ${program} ${args.join(' ')}`);
      const r = await run(program, args, { cwd, timeoutMs: 15 * 60 * 1000 });
      if (r.code !== 0) reason = `build failed (${program} exited ${r.timedOut ? 'on timeout' : r.code}):\n${failureText(r.out)}`;
      else console.log(`compat: built ${c.name} in ${(r.ms / 1000).toFixed(1)} s`);
    }
    if (reason) unusable.set(c.name, reason);
  }

  // 2. The broker.
  process.on('uncaughtException', (e) => {
    brokerErrors.push(e);
    console.error('compat: uncaught exception in the broker process:', e);
  });
  const broker = scenarios.length || onceOnBroker.length ? await startBroker(opts) : null;
  if (broker) console.log(`compat: broker at ${broker.bootstrap}${opts.bootstrap ? ' (external)' : ''}`);

  // 3. Scenarios: every per-client row, the run-once rows on this broker, then the transaction version 1 rows.
  // The txn cells learn the finalized transaction.version (FJORD_COMPAT_TXN_VERSION): the Java and franz-go programs
  // check that the producer epochs show the transaction protocol it implies.
  let txnVersion = null;
  const cell = async (c, s) => {
    const key = `${c.name}/${s}`;
    let result;
    if (c.onceOnly) return;
    if (unusable.has(c.name)) result = { status: 'FAIL', message: unusable.get(c.name) };
    else if (c.na && c.na[s]) result = { status: 'n/a', message: c.na[s] };
    else {
      const [program, args] = c.cmd(broker.bootstrap, s.replace(TV1, ''));
      const env = s.startsWith('txn-') ? { FJORD_COMPAT_TXN_VERSION: String(txnVersion) } : {};
      result = await runCell(key, program, args, opts.timeout, opts, env);
    }
    results.set(key, result);
  };
  const [tv1Scenarios, firstScenarios] = [scenarios.filter((s) => TV1.test(s)), scenarios.filter((s) => !TV1.test(s))];
  if (scenarios.some((s) => s.startsWith('txn-'))) {
    txnVersion = await finalizedLevel(broker.bootstrap, 'transaction.version');
    console.log(`compat: the broker finalizes transaction.version ${txnVersion}`);
  }
  for (const c of clients) for (const s of firstScenarios) await cell(c, s);
  for (const o of onceOnBroker) {
    const key = `${o.client}/${o.name}`;
    const [program, args] = o.cmd(broker.bootstrap);
    results.set(key, unusable.has(o.client) ? { status: 'FAIL', message: unusable.get(o.client) } : await runCell(key, program, args, o.timeoutS || ONCE_TIMEOUT_S, opts));
  }
  if (tv1Scenarios.length) {
    const restore = await finalizedLevel(broker.bootstrap, 'transaction.version');
    const failed = await setTransactionVersion(broker.bootstrap, 1);
    txnVersion = 1;
    for (const c of clients) {
      for (const s of tv1Scenarios) {
        if (failed) results.set(`${c.name}/${s}`, { status: 'FAIL', message: failed });
        else await cell(c, s);
      }
    }
    if (!failed && restore !== 1) {
      const error = await setTransactionVersion(broker.bootstrap, restore);
      if (error) brokerErrors.push(new Error(error));
    }
  }

  if (broker) await broker.close();

  // 4. The cluster rows, each cell with its own cluster.
  for (const c of clients.filter((x) => !x.onceOnly)) {
    for (const s of clusterScenarios) {
      const key = `${c.name}/${s}`;
      let result;
      if (unusable.has(c.name)) result = { status: 'FAIL', message: unusable.get(c.name) };
      else if (c.na && c.na[s]) result = { status: 'n/a', message: c.na[s] };
      else {
        const r = await run(process.execPath, [CLUSTER_RUNNER[s] || CLUSTER_TEST, s, c.name, JSON.stringify(c.cmd('{bootstrap}', '{scenario}'))], { timeoutMs: CLUSTER_TIMEOUT_S * 1000 });
        if (r.timedOut) result = { status: 'FAIL', message: `timed out after ${CLUSTER_TIMEOUT_S} s (killed)\n${failureText(r.out)}` };
        else if (r.code === 0) result = { status: 'pass' };
        else result = { status: 'FAIL', message: `exit ${r.code}: ${failureText(r.out)}` };
        console.log(`compat: ${key.padEnd(30)} ${result.status.padEnd(4)} ${(r.ms / 1000).toFixed(1)} s`);
        if (opts.verbose && r.out.trim()) console.log(r.out.replace(/^/gm, '    '));
      }
      results.set(key, result);
    }
  }

  // 5. The security rows, each with its own broker.
  for (const s of secureScenarios) {
    const runnable = [];
    for (const c of clients.filter((x) => !x.onceOnly)) {
      if (unusable.has(c.name)) results.set(`${c.name}/${s}`, { status: 'FAIL', message: unusable.get(c.name) });
      else if (c.na && c.na[s]) results.set(`${c.name}/${s}`, { status: 'n/a', message: c.na[s] });
      else runnable.push(c);
    }
    if (!runnable.length) continue;
    const row = await runSecureRow(s, runnable, (c, env) => {
      const [program, args] = c.cmd(env.FJORD_SEC_PLAINTEXT, s);
      return runCell(`${c.name}/${s}`, program, args, opts.timeout, opts, env);
    }, (line) => console.log(`compat: ${line}`));
    for (const [name, result] of row) results.set(`${name}/${s}`, result);
  }

  // 6. The run-once scenarios, each with its own broker process.
  for (const o of once) {
    const key = `${o.client}/${o.name}`;
    let result;
    if (unusable.has(o.client)) result = { status: 'FAIL', message: unusable.get(o.client) };
    else result = await runCell(key, o.cmd[0], o.cmd[1], o.timeoutS || ONCE_TIMEOUT_S, opts);
    results.set(key, result);
  }

  // 7. Report.
  console.log('');
  printMatrix([...scenarios, ...clusterScenarios, ...secureScenarios, ...onceOnBroker.map((o) => o.name), ...once.map((o) => o.name)], clients, results);
  const failures = [...results].filter(([, r]) => r.status === 'FAIL');
  if (failures.length || brokerErrors.length) console.log('\nFailures:');
  for (const [key, r] of failures) console.log(`\n[${key}] ${r.message.replace(/\n/g, '\n    ')}`);
  for (const e of brokerErrors) console.log(`\n[broker] uncaught exception: ${e && e.stack ? e.stack : e}`);
  const count = (status) => [...results.values()].filter((r) => r.status === status).length;
  console.log(`\ncompat: ${count('pass')} passed, ${count('FAIL')} failed, ${count('n/a')} skipped`);
  process.exit(failures.length || brokerErrors.length ? 1 : 0);
}

main().catch((e) => {
  console.error(`compat: ${e && e.stack ? e.stack : e}`);
  process.exit(1);
});
