import { expect } from 'chai';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { PRODUCER_IDS_FILE, ProducerIdManager } from '../../src/txn/producer-ids';

describe('txn/producer-ids', () => {
  let dir: string;
  beforeEach(() => {
    dir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'fjord-pids-')), 'data');
  });
  afterEach(() => fs.rmSync(path.dirname(dir), { recursive: true, force: true }));

  function persisted(): unknown {
    return JSON.parse(fs.readFileSync(path.join(dir, PRODUCER_IDS_FILE), 'utf8'));
  }

  it('hands out 0, 1, 2, ... and persists the block before the first id', async () => {
    const ids = await ProducerIdManager.open(dir);
    expect(fs.existsSync(path.join(dir, PRODUCER_IDS_FILE))).to.equal(false);
    expect(await ids.nextId()).to.equal(0);
    expect(persisted()).to.deep.equal({ version: 1, producerIdsEnd: 1000 });
    expect(await ids.nextId()).to.equal(1);
    expect(await ids.nextId()).to.equal(2);
  });

  it('reserves the next block only when the current one is used up', async () => {
    const ids = await ProducerIdManager.open(dir);
    for (let i = 0; i < 1000; i++) expect(await ids.nextId()).to.equal(i);
    expect(persisted()).to.deep.equal({ version: 1, producerIdsEnd: 1000 });
    expect(await ids.nextId()).to.equal(1000);
    expect(persisted()).to.deep.equal({ version: 1, producerIdsEnd: 2000 });
  });

  it('never gives two concurrent callers the same id, across block boundaries', async () => {
    const ids = await ProducerIdManager.open(dir);
    const got = await Promise.all(Array.from({ length: 2_500 }, () => ids.nextId()));
    expect(new Set(got).size).to.equal(2_500);
    expect(Math.min(...got)).to.equal(0);
    expect(Math.max(...got)).to.equal(2_499);
    expect(persisted()).to.deep.equal({ version: 1, producerIdsEnd: 3000 });
  });

  it('does not reuse ids after a restart, skipping the rest of the block', async () => {
    const first = await ProducerIdManager.open(dir);
    const before = [await first.nextId(), await first.nextId(), await first.nextId()];
    expect(before).to.deep.equal([0, 1, 2]);
    // "crash": the block [0, 1000) is on disk, 997 of its ids never used
    const second = await ProducerIdManager.open(dir);
    expect(await second.nextId()).to.equal(1000);
    const third = await ProducerIdManager.open(dir);
    expect(await third.nextId()).to.equal(2000);
  });

  it('a restart without any id handed out reuses nothing either', async () => {
    await ProducerIdManager.open(dir); // opened, never used: nothing written
    const ids = await ProducerIdManager.open(dir);
    expect(await ids.nextId()).to.equal(0);
  });

  it('ignores a temp file left by a crash in the middle of a write', async () => {
    const ids = await ProducerIdManager.open(dir);
    await ids.nextId();
    fs.writeFileSync(path.join(dir, PRODUCER_IDS_FILE + '.tmp'), '{"version":1,"produc');
    const reopened = await ProducerIdManager.open(dir);
    expect(await reopened.nextId()).to.equal(1000);
    expect(fs.existsSync(path.join(dir, PRODUCER_IDS_FILE + '.tmp'))).to.equal(false);
  });

  it('refuses a damaged file rather than guess', async () => {
    fs.mkdirSync(dir, { recursive: true });
    for (const bad of ['', '{', '{"version":1}', '{"version":2,"producerIdsEnd":5}', '{"version":1,"producerIdsEnd":-1}']) {
      fs.writeFileSync(path.join(dir, PRODUCER_IDS_FILE), bad);
      let error: Error | undefined;
      await ProducerIdManager.open(dir).catch((e: Error) => (error = e));
      expect(error?.message, bad).to.match(/refusing to guess/);
    }
  });

  it('a failed write hands out nothing and the next call retries', async () => {
    const ids = await ProducerIdManager.open(dir);
    fs.rmSync(dir, { recursive: true }); // the temp file cannot be created
    let error: Error | undefined;
    await ids.nextId().catch((e: Error) => (error = e));
    expect(error).to.be.instanceOf(Error);
    fs.mkdirSync(dir);
    expect(await ids.nextId()).to.equal(0);
  });
});
