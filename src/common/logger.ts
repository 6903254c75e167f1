/**
 * Logger factory. JSON lines (pino) by default; human-readable output when
 * stdout is a terminal or format 'pretty' is asked for. pino-pretty runs as
 * an in-process stream, not a worker-thread transport, so start-up stays fast.
 * Both write synchronously: log volume is low and ordering/exit-safety matter more.
 */
import pino from 'pino';
import type PinoPretty from 'pino-pretty';

export type LogFormat = 'json' | 'pretty';
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface LoggerOptions {
  level?: LogLevel | string;
  /** Undefined: pretty when stdout is a TTY, JSON otherwise. */
  format?: LogFormat;
  /** Where to write (default stdout). Mainly for tests. */
  destination?: NodeJS.WritableStream;
  /** Logger name (the `name` field). */
  name?: string;
}

export type Logger = pino.Logger;

export function createLogger(opts: LoggerOptions = {}): pino.Logger {
  const level = opts.level ?? 'info';
  if (!(LOG_LEVELS as readonly string[]).includes(level)) {
    throw new Error(`Unknown log level '${level}' (use one of ${LOG_LEVELS.join(', ')})`);
  }
  const out = opts.destination ?? process.stdout;
  const pretty = opts.format === 'pretty' || (opts.format === undefined && Boolean((out as NodeJS.WriteStream).isTTY));
  const base: pino.LoggerOptions = { level, name: opts.name, base: { pid: process.pid } };
  if (pretty) {
    // Loaded only when asked for: it costs ~30 ms of start-up that JSON logging does not need.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const pinoPretty = require('pino-pretty') as typeof PinoPretty;
    const stream = pinoPretty({
      colorize: Boolean((out as NodeJS.WriteStream).isTTY),
      translateTime: 'SYS:HH:MM:ss.l',
      ignore: 'pid,hostname',
      destination: opts.destination ?? 1,
      sync: true,
    });
    return pino(base, stream);
  }
  if (opts.destination) return pino(base, opts.destination as pino.DestinationStream);
  // Synchronous writes keep lines in order and complete on process.exit().
  return pino(base, pino.destination({ fd: 1, sync: true }));
}
