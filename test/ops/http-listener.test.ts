// The broker's HTTP listener (http.listener): started and closed with the broker, /metrics in
// Prometheus's text format, the console's static files and nothing outside them, a port in use
// failing the start, and `fjord start` listening on 127.0.0.1:8080 unless told otherwise.
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import * as http from 'node:http';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { startBroker, type RunningBroker } from '../../src/broker';
import { ConfigError } from '../../src/config/broker-config';
import { ApiKey } from '../../src/protocol/generated';
import { withBroker } from '../helpers/broker';
import { RawClient } from '../helpers/raw-client';

const ROOT = path.resolve(__dirname, '../../..');
const FJORD = path.join(ROOT, 'bin/fjord');

/** A GET sent with its path exactly as given (fetch() would normalize `/../`). */
function rawGet(port: number, rawPath: string): Promise<{ status: number; type: string; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: rawPath, method: 'GET' }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode!, type: String(res.headers['content-type']), body }));
    });
    req.on('error', reject);
    req.end();
  });
}

function httpPort(b: RunningBroker): number {
  if (!b.http) throw new Error('no HTTP listener');
  return b.http.port;
}

/** Whether something listens on 127.0.0.1:port (ECONNREFUSED: nothing). */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port }, () => {
      socket.destroy();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
  });
}

describe('HTTP listener', function () {
  this.timeout(30_000);

  describe('on a broker with http.listener=127.0.0.1:0', () => {
    const broker = withBroker({ config: { 'http.listener': '127.0.0.1:0' } });

    it('is in RunningBroker.http with the port it picked', () => {
      const { http: address } = broker.current();
      expect(address?.host).to.equal('127.0.0.1');
      expect(address?.port).to.be.greaterThan(0);
    });

    it('serves /metrics as Prometheus text', async () => {
      const res = await fetch(`http://127.0.0.1:${httpPort(broker.current())}/metrics`);
      expect(res.status).to.equal(200);
      expect(res.headers.get('content-type')).to.equal('text/plain; version=0.0.4; charset=utf-8');
      const text = await res.text();
      expect(text).to.match(/^# HELP kafka_\w+ /m);
      // Every line is a comment or `name{labels} value`.
      for (const line of text.split('\n').filter(Boolean)) expect(line).to.match(/^(#.*|[a-zA-Z_:][\w:]*(\{.*\})? \S+( \d+)?)$/);
    });

    it('serves the console at / and its files with their content types', async () => {
      const port = httpPort(broker.current());
      const index = await rawGet(port, '/');
      expect(index.status).to.equal(200);
      expect(index.type).to.equal('text/html; charset=utf-8');
      expect(index.body).to.equal(await readFile(path.join(ROOT, 'console/index.html'), 'utf8'));
      const readme = await rawGet(port, '/README.md');
      expect(readme.body).to.equal(await readFile(path.join(ROOT, 'console/README.md'), 'utf8'));
    });

    it('serves uPlot from node_modules under /vendor/, in either case', async () => {
      const port = httpPort(broker.current());
      const uplotDist = path.join(path.dirname(require.resolve('uplot/package.json')), 'dist');
      const js = await rawGet(port, '/vendor/uplot.esm.js');
      expect(js.status).to.equal(200);
      expect(js.type).to.equal('text/javascript; charset=utf-8');
      expect(js.body).to.equal(await readFile(path.join(uplotDist, 'uPlot.esm.js'), 'utf8'));
      const css = await rawGet(port, '/vendor/uPlot.min.css');
      expect(css.type).to.equal('text/css; charset=utf-8');
      expect(css.body).to.equal(await readFile(path.join(uplotDist, 'uPlot.min.css'), 'utf8'));
      expect((await rawGet(port, '/vendor/package.json')).status).to.equal(404);
    });

    it('serves nothing outside console/ and uPlot, however the path is spelled', async () => {
      const port = httpPort(broker.current());
      for (const p of ['/../package.json', '/%2e%2e/package.json', '/..%2fpackage.json', '/..%5cpackage.json', '/vendor/..%2f..%2fpackage.json',
        '/vendor/../../package.json', '/console/../package.json', '/%00', '/%zz', '/nope.html']) {
        const res = await rawGet(port, p);
        expect(res.status, p).to.equal(404);
        expect(res.body, p).not.to.contain('"dependencies"');
      }
    });

    it('answers 400 for a URL it cannot parse', async () => {
      expect((await rawGet(httpPort(broker.current()), '//[')).status).to.equal(400);
    });

    it('refuses other methods than GET outside /api/', async () => {
      const res = await fetch(`http://127.0.0.1:${httpPort(broker.current())}/metrics`, { method: 'POST', body: 'x' });
      expect(res.status).to.equal(405);
    });
  });

  it('is off unless http.listener is set (library API)', async () => {
    const b = await startBroker({ logLevel: 'silent' });
    try {
      expect(b.http).to.equal(null);
    } finally {
      await b.close();
    }
  });

  it('closes with the broker', async () => {
    const b = await startBroker({ logLevel: 'silent', config: { 'http.listener': '127.0.0.1:0' } });
    const port = httpPort(b);
    expect(await listening(port)).to.equal(true);
    // A kept-alive connection (as a browser's) does not hold the close up.
    const agent = new http.Agent({ keepAlive: true });
    await new Promise<void>((resolve, reject) => http.get({ host: '127.0.0.1', port, path: '/api/info', agent }, (res) => res.resume().on('end', resolve)).on('error', reject));
    await b.close();
    agent.destroy();
    expect(await listening(port)).to.equal(false);
  });

  it('fails the start when its port is in use, naming http.listener, and releases the Kafka port', async () => {
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const taken = (blocker.address() as net.AddressInfo).port;
    const kafkaPort = await new Promise<number>((resolve) => {
      const s = net.createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as net.AddressInfo).port;
        s.close(() => resolve(p));
      });
    });
    try {
      let failure: (Error & { code?: string }) | undefined;
      await startBroker({ logLevel: 'silent', port: kafkaPort, config: { 'http.listener': `127.0.0.1:${taken}` } }).then((b) => b.close(), (e: Error) => (failure = e));
      expect(failure?.message).to.contain(`http.listener=127.0.0.1:${taken}`).and.contain('EADDRINUSE');
      expect(failure?.code).to.equal('EADDRINUSE');
      expect(await listening(kafkaPort)).to.equal(false);
    } finally {
      blocker.close();
    }
  });

  it('refuses a malformed http.listener as a config error', async () => {
    for (const value of ['8080', 'localhost', 'host:99999', 'a:b']) {
      let failure: unknown;
      await startBroker({ logLevel: 'silent', config: { 'http.listener': value } }).then((b) => b.close(), (e: unknown) => (failure = e));
      expect(failure, value).to.be.instanceOf(ConfigError);
      expect((failure as Error).message).to.contain('http.listener');
    }
  });

  describe('fjord start', () => {
    let dir: string;
    before(async () => {
      dir = await mkdtemp(path.join(os.tmpdir(), 'fjord-http-cli-'));
    });
    after(async () => {
      await rm(dir, { recursive: true, force: true });
    });

    /** Starts `fjord start` with `args` and resolves with its log lines once the broker listens. */
    async function startFjord(args: string[]) {
      const child = spawn(process.execPath, [FJORD, 'start', '--data-dir', path.join(dir, `data-${Date.now()}`), '--port', '0', '--log-format', 'json', ...args],
        { stdio: ['ignore', 'pipe', 'pipe'] });
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      const lines = await new Promise<{ msg: string; port?: number }[]>((resolve, reject) => {
        let out = '';
        child.stdout.on('data', (d) => {
          out += d;
          const parsed = out.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { msg: string; port?: number });
          if (parsed.some((l) => l.msg === 'broker listening')) resolve(parsed);
        });
        child.on('exit', () => reject(new Error(`exited early: ${out}`)));
      });
      // The CLI handles signals once startBroker returned, just after that line: a request answered proves it did.
      const client = await RawClient.connect(lines.find((l) => l.msg === 'broker listening')!.port!);
      await client.request(ApiKey.ApiVersions, 3, { clientSoftwareName: 't', clientSoftwareVersion: '1' });
      client.close();
      const stop = async () => {
        child.kill('SIGTERM');
        return exited;
      };
      return { lines, stop };
    }

    it('listens on 127.0.0.1:8080 by default', async function () {
      if (await listening(8080)) this.skip(); // something else (another broker, another engineer's test) has 8080 on this machine
      const fjord = await startFjord([]);
      try {
        expect(fjord.lines.find((l) => l.msg.startsWith('HTTP listener open'))?.port).to.equal(8080);
        const info = await (await fetch('http://127.0.0.1:8080/api/info')).json() as { nodeId: number; metrics: boolean };
        expect(info).to.include({ nodeId: 0, metrics: true });
      } finally {
        expect(await fjord.stop()).to.equal(0);
      }
    });

    it('serves no HTTP with --set http.listener=', async () => {
      const fjord = await startFjord(['--set', 'http.listener=']);
      try {
        expect(fjord.lines.some((l) => l.msg.startsWith('HTTP listener open'))).to.equal(false);
      } finally {
        expect(await fjord.stop()).to.equal(0);
      }
    });

    it('takes http.listener from the config file over its default', async () => {
      const props = path.join(dir, 'http.properties');
      await writeFile(props, 'http.listener=127.0.0.1:0\n');
      const fjord = await startFjord(['--config', props]);
      try {
        const port = fjord.lines.find((l) => l.msg.startsWith('HTTP listener open'))?.port;
        expect(port).to.be.a('number').and.not.equal(8080);
        expect((await fetch(`http://127.0.0.1:${port}/metrics`)).status).to.equal(200);
      } finally {
        expect(await fjord.stop()).to.equal(0);
      }
    });
  });
});
