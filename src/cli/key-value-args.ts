/** `--flag key=value` options (repeatable) as a record; a malformed one is a one-line error naming the flag. */
import { AdminError } from '../admin/errors';

export function parseKeyValues(flag: string, args: readonly string[] | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const arg of args ?? []) {
    const eq = arg.indexOf('=');
    if (eq <= 0) throw new AdminError(`--${flag} ${arg}: expected key=value`);
    out[arg.slice(0, eq).trim()] = arg.slice(eq + 1);
  }
  return out;
}
