import { expect } from 'chai';
import { Timer, TimerTask } from '../../src/replica/delayed/timing-wheel';
import { DelayedOperation, DelayedOperationPurgatory } from '../../src/replica/delayed/purgatory';

/** A clock the test moves by hand. */
class FakeClock {
  ms = 1_000_000;
  now = (): number => this.ms;
}

class Recorder extends TimerTask {
  constructor(
    delayMs: number,
    private readonly log: Array<[string, number]>,
    private readonly clock: FakeClock,
    readonly label = String(delayMs),
  ) {
    super(delayMs);
  }
  run(): void {
    this.log.push([this.label, this.clock.ms]);
  }
}

/** Completes once `ready` is set; records what happened to it. */
class TestOperation extends DelayedOperation {
  ready = false;
  completions = 0;
  expirations = 0;
  tryComplete(): boolean {
    return this.ready ? this.forceComplete() : false;
  }
  onComplete(): void {
    this.completions++;
  }
  onExpiration(): void {
    this.expirations++;
  }
}

describe('replica/delayed: timing wheel', () => {
  let clock: FakeClock;
  let timer: Timer;
  beforeEach(() => {
    clock = new FakeClock();
    timer = new Timer(clock.now);
  });
  afterEach(() => timer.close());

  function advanceTo(ms: number): void {
    clock.ms = ms;
    timer.runExpired();
  }

  it('expires tasks on every wheel level at their time, not before', () => {
    const log: Array<[string, number]> = [];
    const start = clock.ms;
    // 1 ms: level 0; 25 ms: level 1 (20 ms ticks); 500 ms: level 2 (400 ms); 30 s: level 3 (8 s)
    for (const d of [30_000, 500, 1, 25]) timer.add(new Recorder(d, log, clock));
    expect(timer.size).to.equal(4);

    for (const [d, label] of [[1, '1'], [25, '25'], [500, '500'], [30_000, '30000']] as const) {
      advanceTo(start + d - 1);
      expect(log.map((e) => e[0])).to.not.include(label);
      advanceTo(start + d);
      expect(log[log.length - 1]).to.deep.equal([label, start + d]);
    }
    expect(log.map((e) => e[0])).to.deep.equal(['1', '25', '500', '30000']);
    expect(timer.size).to.equal(0);
  });

  it('runs everything in expiration order when the clock jumps past them all', () => {
    const log: Array<[string, number]> = [];
    const delays = [30_000, 7, 500, 1, 8_001, 25, 400, 19, 20, 21, 160_000];
    for (const d of delays) timer.add(new Recorder(d, log, clock));
    advanceTo(clock.ms + 1_000_000);
    expect(log.map((e) => Number(e[0]))).to.deep.equal([...delays].sort((a, b) => a - b));
  });

  it('a cancelled task never runs and leaves the count at once', () => {
    const log: Array<[string, number]> = [];
    const start = clock.ms;
    const a = new Recorder(10, log, clock, 'a');
    const b = new Recorder(10, log, clock, 'b');
    const c = new Recorder(5_000, log, clock, 'c');
    for (const t of [a, b, c]) timer.add(t);
    a.cancel();
    c.cancel();
    c.cancel(); // twice is harmless
    expect(timer.size).to.equal(1);
    advanceTo(start + 10_000);
    expect(log.map((e) => e[0])).to.deep.equal(['b']);
  });

  it('a task may cancel another due in the same bucket', () => {
    const log: Array<[string, number]> = [];
    const victim = new Recorder(3, log, clock, 'victim');
    class Killer extends TimerTask {
      run(): void {
        log.push(['killer', clock.ms]);
        victim.cancel();
      }
    }
    timer.add(new Killer(3));
    timer.add(victim);
    advanceTo(clock.ms + 3);
    expect(log.map((e) => e[0])).to.deep.equal(['killer']);
    expect(timer.size).to.equal(0);
  });

  it('a task already due waits for the timer callback instead of running inside add()', () => {
    const log: Array<[string, number]> = [];
    timer.add(new Recorder(0, log, clock, 'now'));
    expect(log).to.deep.equal([]);
    expect(timer.size).to.equal(1);
    timer.runExpired();
    expect(log.map((e) => e[0])).to.deep.equal(['now']);
  });

  it('re-adding a task reschedules it', () => {
    const log: Array<[string, number]> = [];
    const start = clock.ms;
    const t = new Recorder(10, log, clock);
    timer.add(t);
    advanceTo(start + 5);
    timer.add(t); // now due at start + 15
    expect(timer.size).to.equal(1);
    advanceTo(start + 14);
    expect(log).to.deep.equal([]);
    advanceTo(start + 15);
    expect(log).to.deep.equal([['10', start + 15]]);
  });

  it('catches up after a long quiet spell', () => {
    const log: Array<[string, number]> = [];
    timer.add(new Recorder(1, log, clock, 'early'));
    advanceTo(clock.ms + 1);
    advanceTo(clock.ms + 3_600_000); // an hour with nothing scheduled
    const start = clock.ms;
    timer.add(new Recorder(2, log, clock, 'late'));
    advanceTo(start + 1);
    expect(log.map((e) => e[0])).to.deep.equal(['early']);
    advanceTo(start + 2);
    expect(log.map((e) => e[0])).to.deep.equal(['early', 'late']);
  });

  it('an exception in one task does not stop the others', () => {
    const errors: unknown[] = [];
    timer.close();
    timer = new Timer(clock.now, (e) => errors.push(e));
    const log: Array<[string, number]> = [];
    class Boom extends TimerTask {
      run(): void {
        throw new Error('boom');
      }
    }
    timer.add(new Boom(1));
    timer.add(new Recorder(1, log, clock));
    advanceTo(clock.ms + 1);
    expect(errors).to.have.length(1);
    expect(log).to.have.length(1);
  });

  it('agrees with a naive model under random adds, cancels and clock moves', () => {
    let seed = 42;
    const random = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const pending = new Map<TimerTask, number>(); // task -> expiration
    const ran: TimerTask[] = [];
    let nextId = 0;
    class Probe extends TimerTask {
      readonly id = nextId++;
      run(): void {
        ran.push(this);
      }
    }
    for (let step = 0; step < 5_000; step++) {
      const r = random(10);
      if (r < 5) {
        const delay = [random(20), random(400), random(8_000), random(200_000)][random(4)];
        const t = new Probe(delay);
        timer.add(t);
        pending.set(t, clock.ms + delay);
      } else if (r < 7 && pending.size > 0) {
        const t = [...pending.keys()][random(pending.size)];
        t.cancel();
        pending.delete(t);
      } else {
        clock.ms += [1, random(50), random(3_000), random(100_000)][random(4)];
        ran.length = 0;
        timer.runExpired();
        const due = [...pending].filter(([, exp]) => exp <= clock.ms).map(([t]) => t);
        const ids = (ts: TimerTask[]): number[] => ts.map((t) => (t as Probe).id).sort((a, b) => a - b);
        expect(ids(ran), `at step ${step}`).to.deep.equal(ids(due));
        for (const t of due) pending.delete(t);
      }
      expect(timer.size).to.equal(pending.size);
    }
  });

  it('handles 100k tasks quickly, a third cancelled', () => {
    let ran = 0;
    class Count extends TimerTask {
      run(): void {
        ran++;
      }
    }
    const start = clock.ms;
    const tasks: TimerTask[] = [];
    for (let i = 0; i < 100_000; i++) {
      const t = new Count((i * 7919) % 30_000);
      tasks.push(t);
      timer.add(t);
    }
    for (let i = 0; i < tasks.length; i += 3) tasks[i].cancel();
    const cancelled = Math.ceil(tasks.length / 3);
    expect(timer.size).to.equal(100_000 - cancelled);
    for (let t = start; t <= start + 30_000; t += 250) advanceTo(t);
    expect(ran).to.equal(100_000 - cancelled);
    expect(timer.size).to.equal(0);
  });

  it('fires on the real clock through its own Node timer', async () => {
    timer.close();
    timer = new Timer();
    let fired = false;
    class Flag extends TimerTask {
      run(): void {
        fired = true;
      }
    }
    timer.add(new Flag(5));
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(fired).to.equal(true);
  });

  it('close() drops pending tasks', () => {
    const log: Array<[string, number]> = [];
    timer.add(new Recorder(5, log, clock));
    timer.close();
    expect(timer.size).to.equal(0);
    advanceTo(clock.ms + 10);
    timer.add(new Recorder(1, log, clock));
    advanceTo(clock.ms + 10);
    expect(log).to.deep.equal([]);
  });
});

describe('replica/delayed: purgatory', () => {
  let clock: FakeClock;
  let timer: Timer;
  let purgatory: DelayedOperationPurgatory;
  beforeEach(() => {
    clock = new FakeClock();
    timer = new Timer(clock.now);
    purgatory = new DelayedOperationPurgatory('test', timer);
  });
  afterEach(() => purgatory.shutdown());

  function advance(ms: number): void {
    clock.ms += ms;
    timer.runExpired();
  }

  it('completes at once when it can, without watching', () => {
    const op = new TestOperation(100);
    op.ready = true;
    expect(purgatory.tryCompleteElseWatch(op, ['t-0'])).to.equal(true);
    expect(op.completions).to.equal(1);
    expect(purgatory.watched()).to.equal(0);
    expect(purgatory.numDelayed()).to.equal(0);
  });

  it('completes on checkAndComplete before expiring, then never expires', () => {
    const op = new TestOperation(100);
    expect(purgatory.tryCompleteElseWatch(op, ['t-0', 't-1'])).to.equal(false);
    expect(purgatory.watched()).to.equal(2);
    expect(purgatory.numDelayed()).to.equal(1);

    expect(purgatory.checkAndComplete('t-0')).to.equal(0); // not ready yet
    op.ready = true;
    expect(purgatory.checkAndComplete('t-1')).to.equal(1);
    expect(op.completions).to.equal(1);
    // off every key and off the timer at once
    expect(purgatory.watched()).to.equal(0);
    expect(purgatory.watchedKeys()).to.equal(0);
    expect(purgatory.numDelayed()).to.equal(0);

    advance(1_000);
    expect(purgatory.checkAndComplete('t-0')).to.equal(0);
    expect([op.completions, op.expirations]).to.deep.equal([1, 0]);
  });

  it('expires after its delay, then cannot complete again', () => {
    const op = new TestOperation(100);
    purgatory.tryCompleteElseWatch(op, ['t-0']);
    advance(99);
    expect(op.completions).to.equal(0);
    advance(1);
    expect([op.completions, op.expirations]).to.deep.equal([1, 1]);
    expect(purgatory.watched()).to.equal(0);

    op.ready = true;
    expect(purgatory.checkAndComplete('t-0')).to.equal(0);
    expect(op.forceComplete()).to.equal(false);
    expect(op.completions).to.equal(1);
  });

  it('completes exactly once when expiration and completion race', () => {
    // The completion happens inside another operation's expiration, in the same timer callback.
    const op = new TestOperation(50);
    class Trigger extends TestOperation {
      override onExpiration(): void {
        super.onExpiration();
        op.ready = true;
        purgatory.checkAndComplete('t-0');
      }
    }
    const trigger = new Trigger(50);
    purgatory.tryCompleteElseWatch(trigger, ['t-9']);
    purgatory.tryCompleteElseWatch(op, ['t-0']);
    advance(50);
    expect([op.completions, op.expirations]).to.deep.equal([1, 0]);
    expect(trigger.expirations).to.equal(1);
    expect(purgatory.watched()).to.equal(0);
    expect(purgatory.numDelayed()).to.equal(0);
  });

  it('counts only the operations that completed on a key', () => {
    const ops = Array.from({ length: 10 }, () => new TestOperation(1_000));
    for (const op of ops) purgatory.tryCompleteElseWatch(op, ['t-0']);
    for (let i = 0; i < ops.length; i += 2) ops[i].ready = true;
    expect(purgatory.checkAndComplete('t-0')).to.equal(5);
    expect(purgatory.watched()).to.equal(5);
    expect(purgatory.checkAndComplete('t-1')).to.equal(0);
  });

  it('leaks nothing: watch lists empty after many operations complete or expire', () => {
    const keys = ['a-0', 'a-1', 'b-0', 'b-1', 'c-0'];
    const ops: TestOperation[] = [];
    for (let i = 0; i < 3_000; i++) {
      const op = new TestOperation(10 + (i % 500));
      ops.push(op);
      purgatory.tryCompleteElseWatch(op, [keys[i % 5], keys[(i + 1) % 5], keys[i % 5]]);
    }
    expect(purgatory.watched()).to.equal(6_000); // duplicate keys are watched once
    for (let i = 0; i < ops.length; i += 2) ops[i].ready = true;
    for (const k of keys) purgatory.checkAndComplete(k);
    expect(purgatory.watched()).to.equal(3_000);
    advance(1_000);
    expect(purgatory.watched()).to.equal(0);
    expect(purgatory.watchedKeys()).to.equal(0);
    expect(purgatory.numDelayed()).to.equal(0);
    expect(ops.every((op) => op.completions === 1)).to.equal(true);
    expect(ops.filter((op) => op.expirations === 1)).to.have.length(1_500);
  });

  it('refuses an empty key list and watching the same operation twice', () => {
    expect(() => purgatory.tryCompleteElseWatch(new TestOperation(1), [])).to.throw(/empty/);
    const op = new TestOperation(1);
    purgatory.tryCompleteElseWatch(op, ['t-0']);
    expect(() => purgatory.tryCompleteElseWatch(op, ['t-1'])).to.throw(/already/);
  });

  it('shutdown drops waiting operations without completing them', () => {
    const op = new TestOperation(10);
    purgatory.tryCompleteElseWatch(op, ['t-0']);
    purgatory.shutdown();
    advance(100);
    expect(op.completions).to.equal(0);
    expect(purgatory.watched()).to.equal(0);
    expect(purgatory.numDelayed()).to.equal(0);
  });
});
