/**
 * How the admin commands print: a table for people, `--json` for scripts, errors as one line on
 * stderr with a non-zero exit code, and progress on a terminal only.
 */
import { toAdminError } from '../admin/errors';
import { jsonReplacer } from '../admin/json';

export interface OutputOptions {
  json?: boolean;
}

/** Prints rows as an aligned table (people) or as JSON (scripts: the `json` value, default the rows). */
export function printRows<T extends object>(rows: T[], columns: { header: string; value: (row: T) => unknown }[], options: OutputOptions, json: unknown = rows): void {
  if (options.json) {
    printJson(json);
    return;
  }
  const cells = rows.map((row) => columns.map((c) => cellText(c.value(row))));
  const widths = columns.map((c, i) => Math.max(c.header.length, ...cells.map((r) => r[i].length)));
  const line = (values: string[]) => values.map((v, i) => (i === values.length - 1 ? v : v.padEnd(widths[i]))).join('  ');
  process.stdout.write(`${line(columns.map((c) => c.header))}\n`);
  for (const r of cells) process.stdout.write(`${line(r)}\n`);
}

/** JSON with bigints as numbers when exact, else as strings (offsets past 2^53 stay exact). */
export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, jsonReplacer, 2)}\n`);
}

function cellText(v: unknown): string {
  if (v === null || v === undefined) return '-';
  if (Array.isArray(v)) return v.map(cellText).join(',');
  return String(v);
}

/** Runs a command body: a failure prints `fjord: NAME: message` to stderr and sets exit code 1. */
export async function runCommand(body: () => Promise<void>): Promise<void> {
  try {
    await body();
  } catch (e) {
    process.stderr.write(`fjord: ${toAdminError(e).message}\n`);
    process.exitCode = 1;
  }
}

/** Progress of a long operation, on stderr and only on a terminal: `label 40% (400/1000)`, rewritten in place. */
export class Progress {
  private readonly tty = process.stderr.isTTY === true;
  private lastDraw = 0;

  constructor(private readonly label: string, private readonly total?: number) {}

  update(done: number): void {
    const now = Date.now();
    if (!this.tty || now - this.lastDraw < 100) return;
    this.lastDraw = now;
    const of = this.total ? ` ${Math.floor((done / this.total) * 100)}% (${done}/${this.total})` : ` ${done}`;
    process.stderr.write(`\r${this.label}${of}\x1b[K`);
  }

  done(): void {
    if (this.tty && this.lastDraw) process.stderr.write('\r\x1b[K');
  }
}

/** Bytes for people: `512 B`, `1.5 KiB`, `3.2 GiB`; '-' when unknown. */
export function formatBytes(bytes: number | null): string {
  if (bytes === null) return '-';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${bytes} B` : `${value.toFixed(1)} ${units[unit]}`;
}
