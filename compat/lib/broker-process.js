'use strict';
// A Fjord broker as a child process (`bin/fjord start`), for the run-once scenarios that kill or restart it
// (crash/crash-test.js, crash/offsets-restart.js).
//
// FJORD_CRASH_BROKER_CMD replaces the broker command with a shell command containing {port},
// {advertised_port} and {dir}; it must `exec` the broker so that its pid is the broker's, e.g.
// FJORD_CRASH_BROKER_CMD='exec kafka.sh {port} {advertised_port} {dir}' (used to check the tests themselves
// against Apache Kafka).
const { spawn } = require('child_process');
const fs = require('fs');
const net = require('net');
const path = require('path');

const ROOT = path.join(__dirname, '..', '..');

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

function waitForPort(port, ms = 30000) {
  const deadline = Date.now() + ms;
  return new Promise((resolve, reject) => {
    const attempt = () => {
      const sock = net.connect(port, '127.0.0.1');
      sock.on('connect', () => (sock.destroy(), resolve()));
      sock.on('error', () => (Date.now() > deadline ? reject(new Error(`broker not listening on ${port} after ${ms} ms`)) : setTimeout(attempt, 100)));
    };
    attempt();
  });
}

/** Is something accepting connections on 127.0.0.1:port? */
function listening(port) {
  return new Promise((resolve) => {
    const sock = net.connect(port, '127.0.0.1');
    sock.on('connect', () => (sock.destroy(), resolve(true)));
    sock.on('error', () => resolve(false));
  });
}

class Broker {
  /** extraArgs: more `bin/fjord start` arguments (e.g. ['--set', 'key=value']); not used with FJORD_CRASH_BROKER_CMD. */
  constructor(port, advertisedPort, dir, { extraArgs = [], log = () => {} } = {}) {
    this.port = port;
    this.advertisedPort = advertisedPort;
    this.dir = dir;
    this.extraArgs = extraArgs;
    this.log = log;
    this.logFile = path.join(dir, '..', `${path.basename(dir)}.log`);
  }

  async start() {
    // A broker still listening there (an earlier one that did not exit) would make a restart a no-op.
    if (await listening(this.port)) throw new Error(`port ${this.port} is in use before the broker starts (did an earlier broker not exit?)`);
    const out = fs.openSync(this.logFile, 'a');
    const custom = process.env.FJORD_CRASH_BROKER_CMD;
    const [cmd, args] = custom
      ? ['sh', ['-c', custom.replaceAll('{port}', String(this.port)).replaceAll('{advertised_port}', String(this.advertisedPort)).replaceAll('{dir}', this.dir)]]
      : [process.execPath, [path.join(ROOT, 'bin/fjord'), 'start', '--port', String(this.port), '--advertised-port', String(this.advertisedPort),
        '--data-dir', this.dir, '--log-level', 'info', '--set', 'http.listener=', ...this.extraArgs]];
    this.proc = spawn(cmd, args, { cwd: ROOT, stdio: ['ignore', out, out] });
    fs.closeSync(out);
    this.exited = new Promise((r) => this.proc.on('exit', (code, signal) => r({ code, signal })));
    await Promise.race([waitForPort(this.port), this.exited.then((e) => Promise.reject(new Error(`broker exited at start: ${JSON.stringify(e)}\n${this.tail()}`)))]);
    this.log(`broker pid ${this.proc.pid} listening on ${this.port}`);
  }

  async kill() {
    this.proc.kill('SIGKILL');
    await this.exited;
    this.log(`broker pid ${this.proc.pid} killed with SIGKILL`);
  }

  /** SIGTERM (a clean shutdown), SIGKILL after 10 s; resolves { code, signal }. */
  async stop() {
    if (this.proc.exitCode !== null || this.proc.signalCode !== null) return this.exited;
    this.proc.kill('SIGTERM');
    const timer = setTimeout(() => this.proc.kill('SIGKILL'), 10000);
    const r = await this.exited;
    clearTimeout(timer);
    return r;
  }

  tail() {
    try {
      return fs.readFileSync(this.logFile, 'utf8').trim().split('\n').slice(-15).map((l) => `    broker: ${l.slice(0, 400)}`).join('\n');
    } catch {
      return '';
    }
  }
}

module.exports = { Broker, freePort, waitForPort, ROOT };
