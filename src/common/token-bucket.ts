// Kafka's TokenBucket (KIP-599, the controller mutation quota): credits refill at `rate` per second up
// to a burst of rate * samples * window seconds, starting full; a use takes credits and may leave the
// bucket below zero, which is how far over the quota the client went.
export class TokenBucket {
  private tokens = 0;
  private lastUpdateMs = 0;

  constructor(private readonly burstSeconds: number) {}

  /** The credits left at `now` (negative: in debt) for a bound of `rate` per second. */
  measure(rate: number, now: number): number {
    this.refill(rate, now);
    return this.tokens;
  }

  record(value: number, rate: number, now: number): void {
    this.refill(rate, now);
    this.tokens = Math.min(rate * this.burstSeconds, this.tokens - value);
  }

  private refill(rate: number, now: number): void {
    this.tokens = Math.min(rate * this.burstSeconds, this.tokens + (rate * (now - this.lastUpdateMs)) / 1000);
    this.lastUpdateMs = now;
  }
}
