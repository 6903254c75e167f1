// Crash-safe file replacement, shared by every small state file (metadata snapshot, checkpoints,
// producer-state snapshots, producer id blocks): write a temp file, fsync it, rename it over the
// target, fsync the directory. A crash at any point leaves either the old or the new content.
import * as fs from 'node:fs';
import * as path from 'node:path';

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

export async function writeFileAtomically(file: string, data: string | Buffer): Promise<void> {
  const tmp = file + '.tmp';
  const fh = await fs.promises.open(tmp, 'w', 0o644);
  try {
    await fh.writeFile(data);
    await fh.sync();
  } finally {
    await fh.close();
  }
  await fs.promises.rename(tmp, file);
  await fsyncDirectory(path.dirname(file));
}

export function writeFileAtomicallySync(file: string, data: string | Buffer): void {
  const tmp = file + '.tmp';
  const fd = fs.openSync(tmp, 'w', 0o644);
  try {
    fs.writeFileSync(fd, data);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(tmp, file);
  fsyncDirectorySync(path.dirname(file));
}
