// LogManager.start: the logs found at start-up load in the background; meanwhile they are known to
// be loading, getOrCreate waits for them (never opening a directory twice), and checkpoints keep
// the offsets of those not loaded yet.
import { expect } from 'chai';
import * as fs from 'fs';
import * as path from 'path';
import { LOG_START_OFFSET_CHECKPOINT_FILE, LogManager } from '../../src/storage/log-manager';
import type { PartitionLog } from '../../src/storage/partition-log';
import { makeBatch, silentLogger, tempDirs, topicConfig } from './helpers';

describe('LogManager.start (logs loading in the background)', () => {
  const dirs = tempDirs('fjord-log-manager-start-');

  it('reports logs as loading, hands out each log once, and checkpoints the offsets of logs not loaded yet', async () => {
    const dataDir = dirs.next();
    const defaults = topicConfig();
    const first = await LogManager.open({ dataDir, defaults, log: silentLogger });
    for (let p = 0; p < 6; p++) {
      const log = await first.getOrCreate('t', p);
      await log.append(makeBatch({ records: 3 })).done;
    }
    await first.get('t', 5)!.deleteRecordsBefore(2);
    await first.close();

    const loadedOnes: PartitionLog[] = [];
    const manager = await LogManager.start({ dataDir, defaults, log: silentLogger, onLogLoaded: (l) => loadedOnes.push(l) });
    try {
      expect(manager.isLoading('t', 5)).to.equal(true);
      expect(manager.get('t', 5)).to.equal(undefined);
      await manager.checkpointLogStartOffsets();
      expect(fs.readFileSync(path.join(dataDir, LOG_START_OFFSET_CHECKPOINT_FILE), 'utf8')).to.include('t 5 2\n');
      const waited = await manager.getOrCreate('t', 5);
      expect(waited.logStartOffset).to.equal(2);
      await manager.loaded;
      expect(manager.isLoading('t', 5)).to.equal(false);
      expect(manager.get('t', 5)).to.equal(waited);
      expect(loadedOnes.map((l) => l.partition).sort()).to.deep.equal([0, 1, 2, 3, 4, 5]);
      expect(loadedOnes).to.include(waited);
    } finally {
      await manager.close();
    }
  });
});
