// A clock and timers a test moves by hand (for code that takes `now` and `setTimer` options, e.g.
// createSharePartition's lock timers): nothing fires until advance() passes its time.

export class ManualClock {
  private time: number;
  private readonly timers: Array<{ at: number; fire: () => void; id: number }> = [];
  private nextId = 0;

  constructor(start = 1_000_000) {
    this.time = start;
  }

  readonly now = (): number => this.time;

  readonly setTimer = (fire: () => void, delayMs: number): (() => void) => {
    const id = this.nextId++;
    this.timers.push({ at: this.time + delayMs, fire, id });
    return () => {
      const i = this.timers.findIndex((t) => t.id === id);
      if (i >= 0) this.timers.splice(i, 1);
    };
  };

  /** Moves time forward, firing each timer due on the way at its own time, in order. */
  advance(ms: number): void {
    const target = this.time + ms;
    for (;;) {
      const due = this.timers.filter((t) => t.at <= target).sort((a, b) => a.at - b.at || a.id - b.id)[0];
      if (!due) break;
      this.timers.splice(this.timers.indexOf(due), 1);
      this.time = Math.max(this.time, due.at);
      due.fire();
    }
    this.time = target;
  }

  get pending(): number {
    return this.timers.length;
  }
}
