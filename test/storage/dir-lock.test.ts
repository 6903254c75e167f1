// One process per data dir (Kafka's `.lock`): a second broker on the same dir is refused, in this
// process or another; a lock left by a SIGKILLed process, or naming our own pid from an earlier
// life (pid 1 in a container), does not block the next start. Every log dir is locked.
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startBroker } from '../../src/broker';
import { DataDirLock, DataDirLockedError, LOCK_FILE } from '../../src/storage/dir-lock';

describe('the data dir lock', function () {
  this.timeout(20000);
  let root: string;
  let n = 0;
  const nextDir = () => path.join(root, `d${n++}`);
  before(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'fjord-lock-'));
  });
  after(() => fs.rmSync(root, { recursive: true, force: true }));

  it('refuses a second broker on the same data dir with a clear message, and lets one start once the first is closed', async () => {
    const dataDir = nextDir();
    const first = await startBroker({ dataDir, logLevel: 'silent' });
    let refused: unknown;
    try {
      await startBroker({ dataDir, logLevel: 'silent' });
    } catch (e) {
      refused = e;
    }
    expect(refused).to.be.instanceOf(DataDirLockedError);
    expect((refused as Error).message).to.include(`Failed to acquire lock on file ${LOCK_FILE} in ${dataDir}`);
    expect((refused as Error).message).to.include(`process ${process.pid}`);
    await first.close();
    expect(fs.existsSync(path.join(dataDir, LOCK_FILE))).to.equal(false);
    const second = await startBroker({ dataDir, logLevel: 'silent' });
    await second.close();
  });

  it('locks every log dir: a broker sharing its second log dir with a running one is refused, and leaves no lock behind', async () => {
    const [a, b, c] = [nextDir(), nextDir(), nextDir()];
    const first = await startBroker({ config: { 'log.dirs': `${a},${b}` }, logLevel: 'silent' });
    try {
      expect(fs.existsSync(path.join(b, LOCK_FILE))).to.equal(true);
      const refused = await startBroker({ config: { 'log.dirs': `${c},${b}` }, logLevel: 'silent' }).catch((e: Error) => e);
      expect(refused).to.be.instanceOf(DataDirLockedError);
      expect((refused as Error).message).to.include(`in ${b}`);
      expect(fs.existsSync(path.join(c, LOCK_FILE)), 'the locks taken before are released').to.equal(false);
    } finally {
      await first.close();
    }
    for (const d of [a, b]) expect(fs.existsSync(path.join(d, LOCK_FILE)), d).to.equal(false);
  });

  it('refuses while another live process holds the lock, and takes it once that process was SIGKILLed', async () => {
    const dataDir = nextDir();
    const lockModule = path.resolve(__dirname, '../../src/storage/dir-lock.js');
    const child = spawn(process.execPath, ['-e', `
      require(${JSON.stringify(lockModule)}).DataDirLock.acquire(${JSON.stringify(dataDir)})
        .then(() => { console.log('locked'); setInterval(() => undefined, 1000); });
    `], { stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise<void>((resolve) => child.stdout!.on('data', (d: Buffer) => { if (d.toString().includes('locked')) resolve(); }));
    try {
      let refused: unknown;
      await DataDirLock.acquire(dataDir).catch((e) => (refused = e));
      expect(refused).to.be.instanceOf(DataDirLockedError);
      expect((refused as Error).message).to.include(`process ${child.pid}`);
    } finally {
      child.kill('SIGKILL');
      await new Promise((resolve) => child.once('exit', resolve));
    }
    expect(fs.existsSync(path.join(dataDir, LOCK_FILE)), 'the killed process left its lock').to.equal(true);
    const broker = await startBroker({ dataDir, logLevel: 'silent' });
    await broker.close();
  });

  it('takes a lock naming our own pid that this process does not hold (a restarted container, pid 1 again)', async () => {
    const dataDir = nextDir();
    fs.mkdirSync(dataDir);
    fs.writeFileSync(path.join(dataDir, LOCK_FILE), JSON.stringify({ pid: process.pid, startTime: null, token: 'earlier-life' }));
    const lock = await DataDirLock.acquire(dataDir);
    expect(JSON.parse(fs.readFileSync(path.join(dataDir, LOCK_FILE), 'utf8')).token).to.not.equal('earlier-life');
    await lock.release();
    expect(fs.readdirSync(dataDir)).to.deep.equal([]);
  });
});
