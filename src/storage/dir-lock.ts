/**
 * One process per data dir: Kafka's LogManager takes a FileLock on `<logDir>/.lock` and refuses
 * to start when another process holds it. Node has no flock() in core, and adding a native
 * package for it would be Fjord's only install-time native build; so the lock is a file naming
 * its holder, checked for liveness:
 *
 *   `.lock` holds {"pid", "startTime", "token"}: the holder's process id, its start time (field 22
 *   of /proc/<pid>/stat, Linux only; null elsewhere) and a random token. It is created whole with
 *   link(2) from a temp file, so it never exists half-written, and link fails if it exists.
 *
 * An existing lock blocks the start while its holder lives: another pid that signal 0 reaches
 * (EPERM counts as alive) and, where both are known, with the start time recorded (a recycled
 * pid is a different process); our own pid only while this process holds it (in a container the
 * broker is often pid 1 on every start, so our pid in a lock left by a SIGKILL is stale). A
 * stale lock is moved aside and taken. Limits: processes in other pid namespaces (two containers
 * sharing a volume) or on other hosts (NFS) cannot be checked and look dead; two processes taking
 * over the same stale lock at the same instant are caught only by re-reading what was moved
 * aside, not atomically.
 */
import { randomUUID } from 'crypto';
import * as fs from 'fs';
import * as path from 'path';

export const LOCK_FILE = '.lock';

interface Holder {
  pid: number;
  startTime: string | null;
  token: string;
}

/** Lock files this process holds, so that our own pid in a lock file is told apart from a stale one. */
const heldHere = new Set<string>();

export class DataDirLockedError extends Error {
  constructor(dir: string, holder: Holder) {
    super(`Failed to acquire lock on file ${LOCK_FILE} in ${dir}: process ${holder.pid} is using this directory ` +
      '(another broker). Stop it, or start this one with another data dir.');
    this.name = 'DataDirLockedError';
  }
}

/** A process's start time in clock ticks since boot (Linux), or null where /proc cannot tell. */
function processStartTime(pid: number): string | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) is in parentheses and may hold spaces: count fields after the last ')'.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

function isAlive(holder: Holder, lockFile: string): boolean {
  if (holder.pid === process.pid) return heldHere.has(lockFile);
  try {
    process.kill(holder.pid, 0);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const startTime = processStartTime(holder.pid);
  return holder.startTime === null || startTime === null || startTime === holder.startTime;
}

/** The holder a lock file names; a damaged one (not written by us) counts as held by nobody. */
async function readHolder(file: string): Promise<Holder | undefined> {
  let text: string;
  try {
    text = await fs.promises.readFile(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
  try {
    const h = JSON.parse(text) as Holder;
    if (Number.isSafeInteger(h.pid) && typeof h.token === 'string') return h;
  } catch {
    // fall through
  }
  return { pid: -1, startTime: null, token: text };
}

export class DataDirLock {
  private constructor(
    readonly file: string,
    private readonly token: string,
  ) {}

  /** Takes `<dir>/.lock`; throws DataDirLockedError while a live process holds it. */
  static async acquire(dir: string): Promise<DataDirLock> {
    await fs.promises.mkdir(dir, { recursive: true });
    const file = path.join(dir, LOCK_FILE);
    const self: Holder = { pid: process.pid, startTime: processStartTime(process.pid), token: randomUUID() };
    const tmp = `${file}.${self.token}.tmp`;
    await fs.promises.writeFile(tmp, JSON.stringify(self) + '\n');
    try {
      for (let attempt = 0; ; attempt++) {
        try {
          await fs.promises.link(tmp, file);
          heldHere.add(file);
          return new DataDirLock(file, self.token);
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code !== 'EEXIST' || attempt >= 3) throw e;
        }
        const holder = await readHolder(file);
        if (!holder) continue; // released meanwhile
        if (isAlive(holder, file)) throw new DataDirLockedError(dir, holder);
        // Stale (its process is gone): move it aside, and make sure what moved is what was judged.
        const aside = `${file}.${self.token}.stale`;
        try {
          await fs.promises.rename(file, aside);
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code === 'ENOENT') continue;
          throw e;
        }
        const moved = await readHolder(aside);
        if (moved && moved.token !== holder.token) {
          // Another process took the stale lock first: give it back.
          await fs.promises.link(aside, file).catch(() => undefined);
          await fs.promises.rm(aside, { force: true });
          throw new DataDirLockedError(dir, moved);
        }
        await fs.promises.rm(aside, { force: true });
      }
    } finally {
      await fs.promises.rm(tmp, { force: true });
    }
  }

  /** Removes the lock file if it is still ours. */
  async release(): Promise<void> {
    if (!heldHere.delete(this.file)) return;
    const holder = await readHolder(this.file);
    if (holder?.token === this.token) await fs.promises.rm(this.file, { force: true });
  }

  /**
   * The lock of every log dir, as Kafka's LogManager takes them. The first (the data dir) must be
   * taken; another dir that cannot even be written is left to the LogManager, which takes it
   * offline, but one held by another process refuses the start.
   */
  static async acquireAll(dirs: readonly string[]): Promise<{ release(): Promise<void> }> {
    const held: DataDirLock[] = [];
    const release = async () => {
      for (const lock of held.splice(0).reverse()) await lock.release();
    };
    try {
      for (const [i, dir] of dirs.entries()) {
        try {
          held.push(await DataDirLock.acquire(dir));
        } catch (e) {
          if (i === 0 || e instanceof DataDirLockedError) throw e;
        }
      }
    } catch (e) {
      await release();
      throw e;
    }
    return { release };
  }
}
