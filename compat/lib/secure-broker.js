'use strict';
// A broker with security turned on the way a Kafka user turns it on, for the security rows (secure-produce-consume,
// acl-denials, quota-throttle): one server.properties with Kafka's names, the same lines for Fjord
// (`bin/fjord start --config`) and for the oracle (FJORD_SECURE_BROKER=kafka: `lib/apache-kafka.sh start`, the
// lines in FJORD_KAFKA_PROPS), certificates generated with openssl in the run's temporary directory.
//
// Listeners (all at once): PLAINTEXT (the harness's and the tools' way in, User:ANONYMOUS, a super user because
// Kafka's own controller listener connects as it), SSL (server authentication only, User:ANONYMOUS too), MTLS
// (an SSL listener with ssl.client.auth=required: the client certificate's CN is the principal, through
// ssl.principal.mapping.rules), SASL_SSL (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER with unsecured JWS) and
// SASL_PLAINTEXT (the same mechanisms without TLS: the ACL and quota rows). StandardAuthorizer,
// super.users=User:admin;User:ANONYMOUS.
// Users: admin, alice and bob, each with password NAME-secret (PLAIN from the JAAS line; SCRAM credentials created
// with Kafka's kafka-configs tool by the rows, which is AlterUserScramCredentials). The client certificate is alice's.
const { execFileSync, spawn } = require('child_process');
const fs = require('fs');
const path = require('path');
const { freePort, waitForPort, ROOT } = require('./broker-process');

const KAFKA_SH = path.join(__dirname, 'apache-kafka.sh');
const USERS = ['admin', 'alice', 'bob'];
const password = (user) => `${user}-secret`;
const MECHANISMS = ['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512', 'OAUTHBEARER'];

/** openssl, throwing with its stderr. */
function openssl(args, cwd) {
  try {
    execFileSync('openssl', args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (e) {
    throw new Error(`openssl ${args.join(' ')}: ${(e.stderr || e.message).toString().trim()}`, { cause: e });
  }
}

/**
 * A CA, the broker's certificate (SAN IP 127.0.0.1 and localhost, so that clients verify the host) and alice's
 * client certificate (distinguished name CN=alice,O=fjord-compat as Kafka writes it, RFC 2253), PKCS#8 keys without a password; *-keystore.pem is a key and its certificate in one
 * file (a PEM keystore as Kafka reads it with ssl.keystore.type=PEM).
 */
function makeCerts(dir) {
  fs.mkdirSync(dir, { recursive: true });
  openssl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=fjord-compat-ca'], dir);
  const issue = (name, subject, ext) => {
    openssl(['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', subject], dir);
    fs.writeFileSync(path.join(dir, `${name}.ext`), ext);
    openssl(['x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', `${name}.pem`, '-days', '2', '-extfile', `${name}.ext`], dir);
    fs.writeFileSync(path.join(dir, `${name}-keystore.pem`), fs.readFileSync(path.join(dir, `${name}.key`), 'utf8') + fs.readFileSync(path.join(dir, `${name}.pem`), 'utf8'));
  };
  issue('broker', '/O=fjord-compat/CN=localhost', 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth,clientAuth\n');
  issue('alice', '/O=fjord-compat/CN=alice', 'extendedKeyUsage=clientAuth\n');
  const file = (f) => path.join(dir, f);
  return { ca: file('ca.pem'), brokerKeystore: file('broker-keystore.pem'), clientCert: file('alice.pem'), clientKey: file('alice.key'), clientKeystore: file('alice-keystore.pem') };
}

/** The security lines of server.properties (the listeners are the caller's). */
function securityProperties(certs) {
  const plainUsers = USERS.map((u) => `user_${u}="${password(u)}"`).join(' ');
  const jaas = [];
  for (const listener of ['sasl_ssl', 'sasl_plaintext']) {
    jaas.push(`listener.name.${listener}.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="${password('admin')}" ${plainUsers};`);
    for (const m of ['scram-sha-256', 'scram-sha-512']) jaas.push(`listener.name.${listener}.${m}.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;`);
    jaas.push(`listener.name.${listener}.oauthbearer.sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required unsecuredLoginStringClaim_sub="admin";`);
  }
  return [
    'ssl.keystore.type=PEM',
    `ssl.keystore.location=${certs.brokerKeystore}`,
    'ssl.truststore.type=PEM',
    `ssl.truststore.location=${certs.ca}`,
    'listener.name.mtls.ssl.client.auth=required',
    'ssl.principal.mapping.rules=RULE:^CN=([^,]*),.*$/$1/,DEFAULT',
    `sasl.enabled.mechanisms=${MECHANISMS.join(',')}`,
    ...jaas,
    'authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer',
    'super.users=User:admin;User:ANONYMOUS',
  ];
}

const LISTENERS = ['SASL_PLAINTEXT', 'PLAINTEXT', 'SSL', 'MTLS', 'SASL_SSL']; // SASL_PLAINTEXT first: see listenerLines
const PROTOCOL = { PLAINTEXT: 'PLAINTEXT', SSL: 'SSL', MTLS: 'SSL', SASL_SSL: 'SASL_SSL', SASL_PLAINTEXT: 'SASL_PLAINTEXT' };

/**
 * listeners / advertised.listeners / listener.security.protocol.map for the ports; `extra` ({ NAME: port }) adds
 * listeners that are not advertised (Kafka's CONTROLLER). The PLAINTEXT listener is not first on the line, so that
 * apache-kafka.sh's own `listeners=PLAINTEXT://...` line stays the one it reads its port from.
 */
function listenerLines(ports, extra = {}) {
  const endpoint = (name, port) => `${name}://127.0.0.1:${port}`;
  const all = { ...ports, ...extra };
  return [
    `listeners=${Object.entries(all).map(([n, p]) => endpoint(n, p)).join(',')}`,
    `advertised.listeners=${Object.entries(ports).map(([n, p]) => endpoint(n, p)).join(',')}`,
    `listener.security.protocol.map=${Object.keys(all).map((n) => `${n}:${PROTOCOL[n] || 'PLAINTEXT'}`).join(',')}`,
  ];
}

/**
 * Starts a broker (Fjord, or Kafka 4.4 when FJORD_SECURE_BROKER=kafka) with every listener on free ports, in dir,
 * and the row's own server.properties lines (`properties`).
 * Resolves { kind, bootstrap (PLAINTEXT), endpoints { NAME: host:port }, certs, env (FJORD_SEC_* for the client
 * programs), tool(mainClass, ...args) (a Kafka tool), tail(), stop() }.
 */
async function startSecureBroker(dir, { log = () => {}, properties = [] } = {}) {
  const kind = process.env.FJORD_SECURE_BROKER === 'kafka' ? 'kafka' : 'fjord';
  const certs = makeCerts(path.join(dir, 'certs'));
  const ports = {};
  for (const name of LISTENERS) ports[name] = await freePort();
  const endpoints = Object.fromEntries(Object.entries(ports).map(([n, p]) => [n, `127.0.0.1:${p}`]));
  const lines = [...securityProperties(certs), ...properties];
  let stop;
  let logFile;
  if (kind === 'kafka') {
    const kafkaDir = path.join(dir, 'kafka');
    const controller = await freePort();
    const props = [...listenerLines(ports, { CONTROLLER: controller }), `controller.quorum.voters=1@127.0.0.1:${controller}`, ...lines].join('\n');
    logFile = path.join(kafkaDir, 'kafka.log');
    log(`starting Kafka 4.4 in ${kafkaDir}`);
    execFileSync(KAFKA_SH, ['start', kafkaDir, String(ports.PLAINTEXT)], { env: { ...process.env, FJORD_KAFKA_PROPS: props }, stdio: ['ignore', 'pipe', 'inherit'], timeout: 180000 });
    stop = async () => execFileSync(KAFKA_SH, ['stop', kafkaDir], { stdio: 'inherit' });
  } else {
    const configFile = path.join(dir, 'server.properties');
    // group.initial.rebalance.delay.ms=0 as apache-kafka.sh gives Kafka (the rows start new groups)
    fs.writeFileSync(configFile, [...listenerLines(ports), ...lines, 'group.initial.rebalance.delay.ms=0', ''].join('\n'));
    logFile = path.join(dir, 'fjord.log');
    const out = fs.openSync(logFile, 'a');
    const proc = spawn(process.execPath, [path.join(ROOT, 'bin/fjord'), 'start', '--data-dir', path.join(dir, 'data'), '--config', configFile, '--log-level', 'info', '--set', 'http.listener='],
      { cwd: ROOT, stdio: ['ignore', out, out] });
    fs.closeSync(out);
    const exited = new Promise((r) => proc.on('exit', (code, signal) => r({ code, signal })));
    const tailNow = () => tail(logFile);
    await Promise.race([waitForPort(ports.SASL_SSL), exited.then((e) => Promise.reject(new Error(`Fjord exited at start: ${JSON.stringify(e)}\n${tailNow()}`)))]);
    stop = async () => {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      proc.kill('SIGTERM');
      const timer = setTimeout(() => proc.kill('SIGKILL'), 10000);
      await exited;
      clearTimeout(timer);
    };
  }
  const env = {
    FJORD_SEC_PLAINTEXT: endpoints.PLAINTEXT, FJORD_SEC_SSL: endpoints.SSL, FJORD_SEC_MTLS: endpoints.MTLS, FJORD_SEC_SASL_SSL: endpoints.SASL_SSL, FJORD_SEC_SASL_PLAINTEXT: endpoints.SASL_PLAINTEXT,
    FJORD_SEC_CA: certs.ca, FJORD_SEC_CLIENT_CERT: certs.clientCert, FJORD_SEC_CLIENT_KEY: certs.clientKey, FJORD_SEC_CLIENT_KEYSTORE: certs.clientKeystore,
  };
  return {
    kind, bootstrap: endpoints.PLAINTEXT, endpoints, certs, env,
    // over PLAINTEXT (User:ANONYMOUS, a super user), so that the rows' setup needs no SASL: a broker without it fails
    // the SASL cells only
    tool: (mainClass, ...args) => kafkaTool(mainClass, ['--bootstrap-server', endpoints.PLAINTEXT, ...args]),
    tail: () => tail(logFile),
    stop,
  };
}

/** Runs a kafka-tools main class (a JVM); resolves { code, out } (stdout and stderr, SLF4J's lines dropped). */
function kafkaTool(mainClass, args) {
  return new Promise((resolve) => {
    const child = spawn(KAFKA_SH, ['tool', mainClass, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 120000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out: out.split('\n').filter((l) => l.trim() && !l.startsWith('SLF4J')).join('\n') });
    });
  });
}

/** Runs a tool and throws with its output unless it exits 0; returns its output. */
async function mustTool(broker, mainClass, ...args) {
  const r = await broker.tool(mainClass, ...args);
  if (r.code !== 0) throw new Error(`${mainClass} ${args.join(' ')} exited ${r.code}:\n${r.out}`);
  return r.out;
}

function tail(file) {
  try {
    return fs.readFileSync(file, 'utf8').trim().split('\n').slice(-15).map((l) => `    broker: ${l.slice(0, 400)}`).join('\n');
  } catch {
    return '';
  }
}

const ACL_COMMAND = 'org.apache.kafka.tools.AclCommand'; // kafka-acls
const CONFIG_COMMAND = 'org.apache.kafka.tools.ConfigCommand'; // kafka-configs

/**
 * kafka-configs --alter --add-config 'SCRAM-SHA-256=[...]', then 'SCRAM-SHA-512=[...]', for each user
 * (AlterUserScramCredentials; Kafka refuses both mechanisms of one user in one request: DUPLICATE_RESOURCE).
 */
async function addScramUsers(broker, users) {
  for (const user of users) {
    for (const config of [`SCRAM-SHA-256=[iterations=4096,password=${password(user)}]`, `SCRAM-SHA-512=[password=${password(user)}]`]) {
      await mustTool(broker, CONFIG_COMMAND, '--alter', '--entity-type', 'users', '--entity-name', user, '--add-config', config);
    }
  }
}

module.exports = { startSecureBroker, mustTool, addScramUsers, password, ACL_COMMAND, CONFIG_COMMAND };
