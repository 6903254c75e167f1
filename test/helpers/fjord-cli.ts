// Runs the real bin/fjord (the compiled CLI) as a child process against a broker of this process.
import { execFile } from 'node:child_process';
import * as path from 'node:path';

const FJORD = path.resolve(__dirname, '../../../bin/fjord');

export interface FjordRun {
  status: number | null;
  stdout: string;
  stderr: string;
}

/**
 * `fjord args...` with `input` on its stdin, asynchronously (the broker answers from this process):
 * its exit status, stdout and stderr.
 */
export function runFjord(args: string[], input = ''): Promise<FjordRun> {
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [FJORD, ...args], { encoding: 'utf8', timeout: 60_000 }, (err, stdout, stderr) => resolve({
      status: err ? (typeof err.code === 'number' ? err.code : null) : 0,
      stdout,
      stderr,
    }));
    child.stdin?.end(input);
  });
}

/** stdout of a run that must succeed, parsed as JSON. */
export function jsonOf(run: FjordRun): unknown {
  if (run.status !== 0) throw new Error(`fjord failed (${run.status}): ${run.stderr}`);
  return JSON.parse(run.stdout);
}
