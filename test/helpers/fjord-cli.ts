// Runs the real `bin/fjord` (the compiled CLI) as a child process, asynchronously: the broker it
// talks to usually runs in the test's own process, which must keep answering meanwhile.
import { execFile } from 'node:child_process';
import * as path from 'node:path';

const FJORD = path.resolve(__dirname, '../../../bin/fjord');

export interface FjordRun {
  status: number | null;
  stdout: string;
  stderr: string;
}

export function runFjord(...args: string[]): Promise<FjordRun> {
  return new Promise((resolve) => {
    execFile(process.execPath, [FJORD, ...args], { encoding: 'utf8', timeout: 120_000 }, (err, stdout, stderr) =>
      resolve({ status: err ? (typeof err.code === 'number' ? err.code : null) : 0, stdout, stderr }));
  });
}

/** The rows of a table the CLI printed: one array of cells per line, header first. */
export function tableRows(text: string): string[][] {
  return text.split('\n').filter((l) => l.trim() !== '').map((l) => l.trim().split(/\s{2,}/));
}
