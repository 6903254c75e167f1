// Every state file survives a full disk at any byte (write-temp, fsync, rename): a failed write
// leaves the old file and no temp file behind, and the next write after space returns succeeds.
// Uses the simulated disk of src/common/durable-file.ts: writes fail with ENOSPC after N bytes.
import { expect } from 'chai';
import * as fs from 'fs';
import * as path from 'path';
import { MetadataStore } from '../../src/cluster/metadata-store';
import { CheckpointFile, readCheckpoint } from '../../src/storage/checkpoint-file';
import { ProducerStateManager } from '../../src/storage/producer-state';
import { simulateFullDisk, writeFileAtomically, writeFully } from '../../src/common/durable-file';
import { tempDirs } from './helpers';

function expectNoTempFiles(dir: string): void {
  expect(fs.readdirSync(dir).filter((f) => f.endsWith('.tmp'))).to.deep.equal([]);
}

async function enospc(fn: () => Promise<unknown>): Promise<void> {
  let error: NodeJS.ErrnoException | undefined;
  await fn().catch((e: NodeJS.ErrnoException) => (error = e));
  expect(error?.code, 'the write did not fail with ENOSPC').to.equal('ENOSPC');
}

describe('durable writes on a full disk', () => {
  const dirs = tempDirs('fjord-durable-writes-');
  afterEach(() => simulateFullDisk(undefined));

  it('writeFully writes what fits, then throws ENOSPC: a short write is never taken for a whole one', async () => {
    const dir = dirs.next();
    fs.mkdirSync(dir);
    const file = path.join(dir, 'f');
    const fh = await fs.promises.open(file, 'w+');
    try {
      simulateFullDisk(5);
      await enospc(() => writeFully(fh, [Buffer.from('abc'), Buffer.from('defgh')], 0, file));
      simulateFullDisk(undefined);
      expect(fs.readFileSync(file, 'utf8')).to.equal('abcde');
      await writeFully(fh, [Buffer.from('xyz')], 5, file);
      expect(fs.readFileSync(file, 'utf8')).to.equal('abcdexyz');
    } finally {
      await fh.close();
    }
  });

  it('writeFileAtomically: cut at every byte, the old content stays and no temp file is left', async () => {
    const dir = dirs.next();
    fs.mkdirSync(dir);
    const file = path.join(dir, 'state');
    await writeFileAtomically(file, 'old content\n');
    const next = 'new content, a little longer than the old\n';
    for (let budget = 0; budget < next.length; budget++) {
      simulateFullDisk(budget);
      await enospc(() => writeFileAtomically(file, next));
      expect(fs.readFileSync(file, 'utf8')).to.equal('old content\n');
      expectNoTempFiles(dir);
    }
    simulateFullDisk(undefined);
    await writeFileAtomically(file, next);
    expect(fs.readFileSync(file, 'utf8')).to.equal(next);
  });

  it('checkpoints and producer-state snapshots keep their last good version', async () => {
    const dir = dirs.next();
    fs.mkdirSync(dir);
    const checkpoint = new CheckpointFile(path.join(dir, 'recovery-point-offset-checkpoint'));
    await checkpoint.write(() => [['t', 0, 10]]);
    simulateFullDisk(7);
    await enospc(() => checkpoint.write(() => [['t', 0, 20], ['t', 1, 5]]));
    expect(await readCheckpoint(checkpoint.file, 3)).to.deep.equal([['t', '0', '10']]);
    simulateFullDisk(undefined);
    await checkpoint.write(() => [['t', 0, 30]]);
    expect(await readCheckpoint(checkpoint.file, 3)).to.deep.equal([['t', '0', '30']]);

    const producers = new ProducerStateManager();
    producers.recordBatch({ producerId: 7, producerEpoch: 0, baseSequence: 0, lastSequence: 4, isTransactional: false }, 0, 4, 1000);
    await producers.writeSnapshot(dir, 5);
    producers.recordBatch({ producerId: 7, producerEpoch: 0, baseSequence: 5, lastSequence: 9, isTransactional: false }, 5, 9, 2000);
    simulateFullDisk(20);
    await enospc(() => producers.writeSnapshot(dir, 10));
    simulateFullDisk(undefined);
    expectNoTempFiles(dir);
    const loaded = ProducerStateManager.loadLatest(dir, 10)!;
    expect(loaded.offset).to.equal(5);
    expect(loaded.state.lastEntry(7)!.batches.map((b) => b.lastSeq)).to.deep.equal([4]);
  });

  it('the metadata store keeps its last durable state and refuses changes it could not write', async () => {
    const dir = dirs.next();
    const store = await MetadataStore.open(dir, 0);
    store.createTopic('kept', [[0]]);
    await store.persist();
    simulateFullDisk(10);
    store.createTopic('lost', [[0]]);
    let error: unknown;
    await store.persist().catch((e) => (error = e));
    expect(error).to.be.an('error');
    simulateFullDisk(undefined);
    expect(() => store.createTopic('later', [[0]])).to.throw(/Metadata store failed/);
    expectNoTempFiles(dir);
    const reopened = await MetadataStore.open(dir, 0);
    expect(reopened.topicNames()).to.deep.equal(['kept']);
    await reopened.close();
  });
});
