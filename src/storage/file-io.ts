/** Small read helpers shared by the segment code (writes: src/common/durable-file.ts). */
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

export async function readOptionalFile(file: string): Promise<Buffer | undefined> {
  try {
    return await fs.promises.readFile(file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}

