/**
 * The progress of a broker's long work (start-up recovery of its logs, cleanings of compacted logs):
 * each task counts what it has done of a known total, the tracker lists them (the console's
 * /api/progress) and the task logs its percent, rate and ETA every few seconds and at its end.
 *
 * A task's rate is its average since it started (a steady figure for an ETA, where the last
 * second's rate would jump with each large segment). Finished tasks stay listed for a while, the
 * most recent few only, so that a console opened after a restart still shows how recovery went.
 */
import type { Logger } from 'pino';

export type TaskKind = 'recovery' | 'cleaning';
export type TaskUnit = 'bytes' | 'partitions';

export interface TaskProgress {
  id: string;
  kind: TaskKind;
  title: string;
  startedAtMs: number;
  finishedAtMs: number | null;
  done: number;
  total: number;
  unit: TaskUnit;
  percent: number;
  ratePerSec: number;
  etaMs: number | null;
}

export interface TaskSpec {
  kind: TaskKind;
  title: string;
  total: number;
  unit: TaskUnit;
  /** Where the task logs its progress; none: it is only listed. */
  logger?: Logger;
}

export interface ProgressTrackerOptions {
  /** Least time between two progress lines of a task; a task shorter than this logs none. Default 5000. */
  logIntervalMs?: number;
  /** How long a finished task stays listed. Default 10 minutes. */
  keepFinishedMs?: number;
  /** The most finished tasks listed. Default 20. */
  maxFinished?: number;
  now?: () => number;
}

/** One task's counts, advanced by the work it tracks; finish() once it ends, done or not. */
export class ProgressTask {
  private doneSoFar = 0;
  private finishedAt: number | null = null;
  private lastLogAt: number;

  constructor(
    readonly id: string,
    private readonly spec: TaskSpec,
    private readonly startedAt: number,
    private readonly tracker: { now: () => number; logIntervalMs: number },
  ) {
    this.lastLogAt = startedAt;
  }

  get finished(): boolean {
    return this.finishedAt !== null;
  }

  /** `n` more units done (never past the total). */
  advance(n: number): void {
    if (this.finishedAt !== null) return;
    this.doneSoFar = Math.min(this.spec.total, this.doneSoFar + n);
    const now = this.tracker.now();
    if (now - this.lastLogAt >= this.tracker.logIntervalMs) {
      this.lastLogAt = now;
      this.log('progress');
    }
  }

  /**
   * The task ended: `completed` (the default) counts it all done; false leaves it where it
   * stopped (a cleaning aborted by a shutdown). Logged if it ran long enough to have logged.
   */
  finish(completed = true): void {
    if (this.finishedAt !== null) return;
    if (completed) this.doneSoFar = this.spec.total;
    this.finishedAt = this.tracker.now();
    if (this.finishedAt - this.startedAt >= this.tracker.logIntervalMs) this.log(completed ? 'finished' : 'stopped');
  }

  snapshot(): TaskProgress {
    const { kind, title, total, unit } = this.spec;
    const end = this.finishedAt ?? this.tracker.now();
    const seconds = (end - this.startedAt) / 1000;
    const ratePerSec = seconds > 0 ? this.doneSoFar / seconds : 0;
    const left = total - this.doneSoFar;
    let etaMs: number | null = null;
    if (this.finishedAt !== null || left === 0) etaMs = 0;
    else if (ratePerSec > 0) etaMs = Math.round((left / ratePerSec) * 1000);
    return {
      id: this.id, kind, title, startedAtMs: this.startedAt, finishedAtMs: this.finishedAt,
      done: this.doneSoFar, total, unit, percent: total > 0 ? (100 * this.doneSoFar) / total : 100, ratePerSec, etaMs,
    };
  }

  private log(what: 'progress' | 'finished' | 'stopped'): void {
    const logger = this.spec.logger;
    if (!logger) return;
    const p = this.snapshot();
    const rate = p.unit === 'bytes' ? { MBps: round(p.ratePerSec / 1048576, 1) } : { perSec: round(p.ratePerSec, 1) };
    logger.info({
      task: p.id, kind: p.kind, percent: round(p.percent, 1), done: p.done, total: p.total, unit: p.unit, ...rate,
      etaMs: p.etaMs, elapsedMs: (p.finishedAtMs ?? this.tracker.now()) - p.startedAtMs,
    }, `${p.title}: ${what === 'progress' ? `${round(p.percent, 1)}%` : what}`);
  }
}

const round = (x: number, digits: number): number => Number(x.toFixed(digits));

export class ProgressTracker {
  readonly logIntervalMs: number;
  readonly now: () => number;
  private readonly keepFinishedMs: number;
  private readonly maxFinished: number;
  /** In start order. */
  private tasks: ProgressTask[] = [];
  private nextId = 1;

  constructor(opts: ProgressTrackerOptions = {}) {
    this.logIntervalMs = opts.logIntervalMs ?? 5000;
    this.keepFinishedMs = opts.keepFinishedMs ?? 10 * 60_000;
    this.maxFinished = opts.maxFinished ?? 20;
    this.now = opts.now ?? Date.now;
  }

  start(spec: TaskSpec): ProgressTask {
    this.prune();
    const task = new ProgressTask(`${spec.kind}-${this.nextId++}`, spec, this.now(), this);
    this.tasks.push(task);
    return task;
  }

  /** The tasks running and those finished lately, oldest first. */
  list(): TaskProgress[] {
    this.prune();
    return this.tasks.map((t) => t.snapshot());
  }

  /** Drops finished tasks past keepFinishedMs, and the oldest finished ones beyond maxFinished. */
  private prune(): void {
    const now = this.now();
    let finished = this.tasks.filter((t) => t.finished).map((t) => t.snapshot());
    const expired = new Set(finished.filter((t) => now - t.finishedAtMs! > this.keepFinishedMs).map((t) => t.id));
    finished = finished.filter((t) => !expired.has(t.id));
    for (const t of finished.slice(0, Math.max(0, finished.length - this.maxFinished))) expired.add(t.id);
    if (expired.size > 0) this.tasks = this.tasks.filter((t) => !expired.has(t.id));
  }
}
