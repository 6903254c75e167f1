/**
 * One-off measurement, not a test: appends SIZE_GIB of 16 KiB batches to one
 * partition, then times LogManager.open after a clean shutdown and after a
 * crash that forces validating every byte (no clean-shutdown marker, no
 * recovery-point checkpoint).
 *
 *   npx tsc -p tsconfig.json && node dist/test/storage/recovery-bench.js [GiB] [--cold] [--batch=BYTES]
 *
 * --cold evicts the log from the page cache before recovering (needs python3;
 * posix_fadvise DONTNEED on the segment files), to include disk reads.
 */
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { CLEAN_SHUTDOWN_FILE, LogManager, RECOVERY_POINT_CHECKPOINT_FILE } from '../../src/storage/log-manager';
import { makeBatch, silentLogger, topicConfig } from './helpers';

const BATCH_BYTES = Number(process.argv.find((a) => a.startsWith('--batch='))?.slice(8) ?? 16 * 1024);
const IN_FLIGHT = 64;

function evictFromPageCache(dir: string): void {
  const script = `import os,sys
for root,_,files in os.walk(sys.argv[1]):
    for f in files:
        fd=os.open(os.path.join(root,f),os.O_RDONLY); os.fsync(fd); os.posix_fadvise(fd,0,0,os.POSIX_FADV_DONTNEED); os.close(fd)`;
  execFileSync('python3', ['-c', script, dir]);
}

async function timed<T>(what: string, fn: () => Promise<T>): Promise<T> {
  const start = process.hrtime.bigint();
  const out = await fn();
  console.log(`${what}: ${(Number(process.hrtime.bigint() - start) / 1e6).toFixed(0)} ms`);
  return out;
}

async function main(): Promise<void> {
  const gib = Number(process.argv[2]?.startsWith('--') ? 1 : (process.argv[2] ?? 1));
  const cold = process.argv.includes('--cold');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'fjord-recovery-bench-'));
  const config = topicConfig();
  try {
    const total = Math.floor(gib * 1024 ** 3);
    const batches = Math.floor(total / BATCH_BYTES);
    let manager = await LogManager.open({ dataDir, defaults: config, log: silentLogger });
    const log = await manager.getOrCreate('bench', 0);
    const template = makeBatch({ records: Math.max(1, Math.floor(BATCH_BYTES / 160)), payload: BATCH_BYTES - 61, timestamp: Date.now(), epoch: 0 });
    const slots = Array.from({ length: IN_FLIGHT }, () => ({ buf: Buffer.from(template), done: Promise.resolve() }));
    await timed(`append ${batches} batches of ${BATCH_BYTES} bytes (${(batches * BATCH_BYTES / 1024 ** 3).toFixed(2)} GiB)`, async () => {
      for (let i = 0; i < batches; i++) {
        const slot = slots[i % IN_FLIGHT];
        await slot.done; // the buffer is reused: its previous write must be done
        slot.done = log.append(slot.buf).done;
      }
      await Promise.all(slots.map((s) => s.done));
    });
    console.log(`segments: ${log.segmentInfo().map((s) => `${s.baseOffset}:${(s.size / 1024 ** 2).toFixed(0)}MiB`).join(' ')}`);
    await timed('clean close (fsync)', () => manager.close());

    manager = await timed('open after a clean shutdown', () => LogManager.open({ dataDir, defaults: config, log: silentLogger }));
    await manager.close();

    fs.rmSync(path.join(dataDir, CLEAN_SHUTDOWN_FILE));
    fs.rmSync(path.join(dataDir, RECOVERY_POINT_CHECKPOINT_FILE));
    if (cold) evictFromPageCache(dataDir);
    manager = await timed(`open after a crash, validating everything${cold ? ' (cold cache)' : ''}`, () =>
      LogManager.open({ dataDir, defaults: config, log: silentLogger }),
    );
    const recovered = manager.get('bench', 0)!;
    console.log(`recovered: log end offset ${recovered.logEndOffset}, ${(recovered.size / 1024 ** 3).toFixed(3)} GiB`);
    await manager.close();
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
