// What every connection's requests may hold at once, broker-wide: Kafka's request queue
// (queued.max.requests) and request memory pool (queued.max.request.bytes).
//
// - Requests: those decoded and waiting for their turn (behind earlier requests on their connection).
//   Kafka's queue holds requests waiting for a handler thread; a request whose handler runs, or waits
//   in a purgatory (a long-poll Fetch, a JoinGroup), is not in it, and counting those here would let
//   500 waiting consumers stop the broker from reading the requests that end their wait.
// - Bytes: every request frame from its size prefix until its response is ready, a frame still being
//   received counted at its full size (Kafka allocates it then). Reserved as Kafka's non-strict
//   SimpleMemoryPool does: granted while anything is left, so one request of socket.request.max.bytes
//   always fits (config validation keeps the budget at least that large).
// When either is exhausted every connection stops reading new frames until it frees up; a frame
// already started keeps its reservation and completes.
export class RequestBudget {
  private queued = 0;
  private bytesLeft: number;
  private readonly waiting = new Set<() => void>();

  /** maxQueuedBytes <= 0: no byte limit (Kafka's default, -1). */
  constructor(private readonly maxQueuedRequests: number, private readonly maxQueuedBytes: number) {
    this.bytesLeft = maxQueuedBytes > 0 ? maxQueuedBytes : Infinity;
  }

  /** True when no new frame may be read (either limit reached). */
  get exhausted(): boolean {
    return this.queued >= this.maxQueuedRequests || this.bytesLeft <= 0;
  }

  /** Bytes reserved by requests in the broker now (for tests and logs). */
  get bytesInUse(): number {
    return this.maxQueuedBytes > 0 ? this.maxQueuedBytes - this.bytesLeft : 0;
  }

  get queuedRequests(): number {
    return this.queued;
  }

  reserveBytes(n: number): void {
    this.bytesLeft -= n;
  }

  releaseBytes(n: number): void {
    this.bytesLeft += n;
    this.wake();
  }

  requestQueued(): void {
    this.queued++;
  }

  requestStarted(): void {
    this.queued--;
    this.wake();
  }

  /**
   * Calls `resume` once, the next time something is freed while the budget is no longer exhausted;
   * from inside another connection's call, so `resume` only schedules the read.
   */
  whenFree(resume: () => void): void {
    this.waiting.add(resume);
  }

  forget(resume: () => void): void {
    this.waiting.delete(resume);
  }

  private wake(): void {
    if (this.exhausted || this.waiting.size === 0) return;
    const resumes = [...this.waiting];
    this.waiting.clear();
    for (const r of resumes) r();
  }
}
