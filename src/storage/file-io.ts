/** Small file helpers shared by the segment code. */
import * as fs from 'fs';

type FileHandle = fs.promises.FileHandle;

/** Reads until `length` bytes or the end of the file; returns the bytes read. */
export async function readFully(file: FileHandle, buf: Buffer, offset: number, length: number, position: number): Promise<number> {
  let done = 0;
  while (done < length) {
    const { bytesRead } = await file.read(buf, offset + done, length - done, position + done);
    if (bytesRead === 0) break;
    done += bytesRead;
  }
  return done;
}

export async function writeFully(file: FileHandle, chunks: readonly Buffer[], position: number): Promise<void> {
  let total = 0;
  for (const c of chunks) total += c.length;
  const { bytesWritten } = await file.writev(chunks as Buffer[], position);
  if (bytesWritten === total) return;
  // A short write (rare: a full disk, a signal): write the rest plainly; a real error throws.
  const all = Buffer.concat(chunks as Buffer[]);
  let done = bytesWritten;
  while (done < total) {
    const r = await file.write(all, done, total - done, position + done);
    done += r.bytesWritten;
  }
}

export async function readOptionalFile(file: string): Promise<Buffer | undefined> {
  try {
    return await fs.promises.readFile(file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}

