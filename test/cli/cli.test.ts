import { expect } from 'chai';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { ApiKey } from '../../src/protocol/generated';
import type { DescribeConfigsResponse } from '../../src/protocol/generated/DescribeConfigsResponse';
import { RawClient } from '../helpers/raw-client';

const FJORD = path.resolve(__dirname, '../../../bin/fjord');

describe('bin/fjord', function () {
  this.timeout(20000);
  let dir: string;
  before(async () => { dir = await mkdtemp(path.join(os.tmpdir(), 'fjord-cli-')); });
  after(async () => { await rm(dir, { recursive: true, force: true }); });

  it('prints its version', () => {
    const out = spawnSync(process.execPath, [FJORD, '--version'], { encoding: 'utf8' });
    expect(out.status).to.equal(0);
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    expect(out.stdout.trim()).to.equal(require('../../../package.json').version);
  });

  it('refuses a bad config value before starting, naming the key', () => {
    const out = spawnSync(process.execPath, [FJORD, 'start', '--data-dir', dir, '--port', '0', '--set', 'num.partitions=many'], { encoding: 'utf8' });
    expect(out.status).to.equal(2);
    expect(out.stderr).to.contain('num.partitions').and.contain('many');
  });

  it('fails to start, saying so, when the etcd in etcd.connect does not answer', () => {
    const out = spawnSync(process.execPath, [FJORD, 'start', '--data-dir', dir, '--port', '0', '--set', 'etcd.connect=127.0.0.1:1'], { encoding: 'utf8' });
    expect(out.status).to.equal(1);
    // The failure is logged (to stdout, as every log line).
    expect(out.stdout + out.stderr).to.contain('cannot join the cluster: etcd at 127.0.0.1:1 did not answer');
  });

  it('starts from a properties file plus --set, serves, and stops cleanly on SIGTERM', async () => {
    const props = path.join(dir, 'server.properties');
    await writeFile(props, '# test\nnum.partitions=4\nlog.segment.bytes=1048576\n');
    const child = spawn(process.execPath, [FJORD, 'start', '--data-dir', path.join(dir, 'data'), '--port', '0',
      '--config', props, '--set', 'num.partitions=5', '--set', 'http.listener=', '--log-format', 'json'], { stdio: ['ignore', 'pipe', 'pipe'] });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const port = await new Promise<number>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (d) => {
        out += d;
        const line = out.split('\n').find((l) => l.includes('"broker listening"'));
        if (line) resolve(JSON.parse(line).port);
      });
      child.on('exit', () => reject(new Error(`exited early: ${out}`)));
    });
    const c = await RawClient.connect(port);
    const res = await c.request<DescribeConfigsResponse>(ApiKey.DescribeConfigs, 4, {
      resources: [{ resourceType: 4, resourceName: '0', configurationKeys: ['num.partitions', 'log.segment.bytes'] }],
      includeSynonyms: false, includeDocumentation: false,
    });
    const values = Object.fromEntries(res.results[0].configs.map((e) => [e.name, e.value]));
    expect(values).to.deep.equal({ 'log.segment.bytes': '1048576', 'num.partitions': '5' });
    c.close();
    child.kill('SIGTERM');
    expect(await exited).to.equal(0);
  });
});
