// A Fjord broker as a process of its own for the load scripts (produce-load, hostile-frames):
// `bin/fjord start` on a free port and a temporary data dir; any checkout's bin/fjord, so that two
// commits can be compared.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

export interface FjordProcess {
  port: number;
  pid: number;
  /** Resident and peak resident memory now, MiB (/proc/PID/status VmRSS and VmHWM). */
  memoryMb(): { rss: number; hwm: number };
  /** SIGTERM, then removes the data dir. */
  stop(): Promise<void>;
}

/** The value of `--name` on the command line, else `fallback`. */
export function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : fallback;
}

/** Starts `bin` (default: this checkout's bin/fjord) with `--set` for each of `sets`; resolves once it listens. */
export function startFjord(bin = path.join(__dirname, '..', '..', 'bin', 'fjord'), sets: string[] = []): Promise<FjordProcess> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'fjord-bench-'));
  const child = spawn(process.execPath, [bin, 'start', '--port', '0', '--data-dir', dataDir, '--log-level', 'info', '--log-format', 'json', '--set', 'http.listener=',
    ...sets.flatMap((s) => ['--set', s])], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const pid = child.pid!;
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const line = out.split('\n').find((l) => l.includes('"broker listening"'));
      if (!line) return;
      out = '';
      resolve({
        port: JSON.parse(line).port,
        pid,
        memoryMb() {
          const status = readFileSync(`/proc/${pid}/status`, 'utf8');
          const mb = (field: string) => Math.round(Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)![1]) / 1024);
          return { rss: mb('VmRSS'), hwm: mb('VmHWM') };
        },
        async stop() {
          child.kill('SIGTERM');
          await exited;
          rmSync(dataDir, { recursive: true, force: true });
        },
      });
    });
    void exited.then(() => {
      rmSync(dataDir, { recursive: true, force: true });
      reject(new Error('fjord exited before listening'));
    });
  });
}
