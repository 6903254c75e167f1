/**
 * Kafka's checkpoint text files (CheckpointFile): a version line, a count
 * line, then one space-separated entry per line. Used for
 * `leader-epoch-checkpoint` ("epoch startOffset"), and per data dir for
 * `recovery-point-offset-checkpoint` and `log-start-offset-checkpoint`
 * ("topic partition offset").
 *
 * Writes are crash-safe as Kafka's are: write `<file>.tmp`, fsync, rename over
 * the file, fsync the directory; a crash leaves the old or the new file.
 */
import * as fs from 'fs';
import { fsyncDirectory, writeFileAtomically } from '../common/durable-file';

export { fsyncDirectory };

export const CHECKPOINT_VERSION = 0;

export class CorruptCheckpointError extends Error {
  constructor(file: string, detail: string) {
    super(`Malformed checkpoint file ${file}: ${detail}`);
    this.name = 'CorruptCheckpointError';
  }
}

export function formatCheckpoint(entries: ReadonlyArray<ReadonlyArray<string | number>>): string {
  let text = `${CHECKPOINT_VERSION}\n${entries.length}\n`;
  for (const e of entries) text += e.join(' ') + '\n';
  return text;
}

/** The entries, each split into `fields` columns; throws CorruptCheckpointError. */
export function parseCheckpoint(file: string, text: string, fields: number): string[][] {
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  if (lines.length < 2) throw new CorruptCheckpointError(file, 'missing version or count line');
  if (lines[0].trim() !== String(CHECKPOINT_VERSION)) throw new CorruptCheckpointError(file, `unknown version '${lines[0]}'`);
  const count = Number(lines[1].trim());
  if (!Number.isInteger(count) || count !== lines.length - 2) {
    throw new CorruptCheckpointError(file, `count line says ${lines[1]} but there are ${lines.length - 2} entries`);
  }
  return lines.slice(2).map((line) => {
    const parts = line.trim().split(/\s+/);
    if (parts.length !== fields) throw new CorruptCheckpointError(file, `malformed line '${line}'`);
    return parts;
  });
}

/** Parses a decimal integer field (offsets, epochs, partitions); throws CorruptCheckpointError. */
export function checkpointNumber(file: string, field: string): number {
  if (!/^-?\d+$/.test(field)) throw new CorruptCheckpointError(file, `'${field}' is not a number`);
  return Number(field);
}

/** The file's entries, or [] when it does not exist. */
export async function readCheckpoint(file: string, fields: number): Promise<string[][]> {
  let text: string;
  try {
    text = await fs.promises.readFile(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw e;
  }
  return parseCheckpoint(file, text, fields);
}

interface Waiter {
  upTo: number;
  resolve: () => void;
  reject: (e: unknown) => void;
}

/**
 * One checkpoint file with serialized, coalescing writes: `write(content)`
 * resolves once a snapshot taken after the call is durable. Calls made while
 * a write runs share the next write, whose content is taken when it starts,
 * so a burst of changes costs at most two writes.
 */
export class CheckpointFile {
  private content: () => ReadonlyArray<ReadonlyArray<string | number>> = () => [];
  private requested = 0;
  private written = 0;
  private running = false;
  private waiters: Waiter[] = [];

  constructor(readonly file: string) {}

  write(content: () => ReadonlyArray<ReadonlyArray<string | number>>): Promise<void> {
    this.content = content;
    const upTo = ++this.requested;
    const done = new Promise<void>((resolve, reject) => this.waiters.push({ upTo, resolve, reject }));
    if (!this.running) void this.run();
    return done;
  }

  private async run(): Promise<void> {
    this.running = true;
    while (this.written < this.requested) {
      const upTo = this.requested;
      let error: unknown;
      try {
        await writeFileAtomically(this.file, formatCheckpoint(this.content()));
      } catch (e) {
        error = e;
      }
      this.written = upTo;
      const settled = this.waiters.filter((w) => w.upTo <= upTo);
      this.waiters = this.waiters.filter((w) => w.upTo > upTo);
      for (const w of settled) {
        if (error === undefined) w.resolve();
        else w.reject(error);
      }
    }
    this.running = false;
  }
}
