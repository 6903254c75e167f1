// Every write Fjord makes to its data dir goes through here: log appends and index tails
// (writeFully), and the crash-safe replacement of small state files (metadata snapshot,
// checkpoints, producer-state snapshots, producer id blocks: writeFileAtomically, which writes a
// temp file, fsyncs it, renames it over the target and fsyncs the directory, so a crash at any
// point leaves either the old or the new content).
//
// A write is done only once every byte is written: a short write is retried for the rest, an
// error (ENOSPC, EDQUOT, EIO) is thrown, and the caller decides what the bytes already written
// mean. simulateFullDisk() lets tests make these writes fail part-way, as a full disk does.
import * as fs from 'node:fs';
import * as path from 'node:path';

type FileHandle = fs.promises.FileHandle;

/** Bytes the simulated disk still takes (undefined: no simulation). */
let simulatedBytesLeft: number | undefined;

/**
 * Tests: after `bytesLeft` more bytes, every write through this module fails with ENOSPC, having
 * written what still fitted (a short write, as a real full disk gives); undefined lifts it.
 */
export function simulateFullDisk(bytesLeft: number | undefined): void {
  simulatedBytesLeft = bytesLeft;
}

function noSpace(file: string): NodeJS.ErrnoException {
  const e: NodeJS.ErrnoException = new Error(`ENOSPC: no space left on device, write '${file}'`);
  e.code = 'ENOSPC';
  e.errno = -28;
  e.syscall = 'write';
  return e;
}

/** True for the errors of a full disk or an exhausted quota, which end once space is freed. */
export function isOutOfSpace(e: unknown): boolean {
  const code = (e as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ENOSPC' || code === 'EDQUOT';
}

/** Writes all of `chunks` at `position` (one writev, then the rest of a short write); throws if any byte is not written. */
export async function writeFully(file: FileHandle, chunks: readonly Buffer[], position: number, name = 'file'): Promise<void> {
  let total = 0;
  for (const c of chunks) total += c.length;
  let allowed = total;
  if (simulatedBytesLeft !== undefined) {
    allowed = Math.min(total, simulatedBytesLeft);
    simulatedBytesLeft -= allowed;
  }
  let done = 0;
  if (allowed === total) {
    done = (await file.writev(chunks as Buffer[], position)).bytesWritten;
    if (done === total) return;
  }
  const all = Buffer.concat(chunks as Buffer[]);
  while (done < allowed) {
    const { bytesWritten } = await file.write(all, done, allowed - done, position + done);
    if (bytesWritten === 0) break;
    done += bytesWritten;
  }
  if (done < total) throw noSpace(name);
}

/** Makes a rename or a new file in `dir` durable; a no-op where directories cannot be fsynced. */
export async function fsyncDirectory(dir: string): Promise<void> {
  let fh: fs.promises.FileHandle | undefined;
  try {
    fh = await fs.promises.open(dir, 'r');
    await fh.sync();
  } catch {
    // Some platforms (Windows) cannot fsync a directory; the rename is still atomic.
  } finally {
    await fh?.close();
  }
}

export function fsyncDirectorySync(dir: string): void {
  let fd: number | undefined;
  try {
    fd = fs.openSync(dir, 'r');
    fs.fsyncSync(fd);
  } catch {
    // see fsyncDirectory
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/** A failed write (a full disk) removes its temp file and leaves `file` as it was. */
export async function writeFileAtomically(file: string, data: string | Buffer): Promise<void> {
  const tmp = file + '.tmp';
  const bytes = typeof data === 'string' ? Buffer.from(data) : data;
  try {
    const fh = await fs.promises.open(tmp, 'w', 0o644);
    try {
      await writeFully(fh, [bytes], 0, tmp);
      await fh.sync();
    } finally {
      await fh.close();
    }
    await fs.promises.rename(tmp, file);
  } catch (e) {
    await fs.promises.rm(tmp, { force: true }).catch(() => undefined);
    throw e;
  }
  await fsyncDirectory(path.dirname(file));
}

/** The synchronous form, for start-up (meta.properties); not subject to simulateFullDisk. */
export function writeFileAtomicallySync(file: string, data: string | Buffer): void {
  const tmp = file + '.tmp';
  try {
    const fd = fs.openSync(tmp, 'w', 0o644);
    try {
      fs.writeFileSync(fd, data);
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(tmp, file);
  } catch (e) {
    fs.rmSync(tmp, { force: true });
    throw e;
  }
  fsyncDirectorySync(path.dirname(file));
}
