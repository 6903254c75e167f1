// Reusable buffers for the bytes a Fetch reads from the log into its response.
//
// A fetch reads up to max.partition.fetch.bytes (1 MiB in the Java client and librdkafka) per
// partition into a buffer that lives until the response is on the socket. Allocated fresh each time,
// those buffers are external memory to V8, and their churn, not the JS heap, is what made it run a
// full mark-compact every few fetches (130 in a 500 MB consume of a 9 MB heap). Slabs taken from
// here go back once the connection has handed the response to the kernel, so steady consumption
// allocates nothing. What is not given back (a connection closed mid-write, a read thrown away for
// a second one) is simply left to the garbage collector.
export class BufferPool {
  private readonly idle: ArrayBuffer[] = [];
  /** The slabs this pool handed out, so that give() takes back nothing else. */
  private readonly ours = new WeakSet<ArrayBuffer>();

  /**
   * slabBytes: the size of every pooled buffer; larger requests are allocated outside the pool.
   * maxIdle: slabs kept for reuse at most (what the pool holds on to between bursts).
   */
  constructor(readonly slabBytes: number, private readonly maxIdle: number) {}

  /** A buffer of `size` bytes (contents undefined): the start of a slab when it fits in one. */
  take(size: number): Buffer {
    if (size > this.slabBytes) return Buffer.allocUnsafe(size);
    let slab = this.idle.pop();
    if (!slab) {
      slab = new ArrayBuffer(this.slabBytes);
      this.ours.add(slab);
    }
    return Buffer.from(slab, 0, size);
  }

  /** Returns a buffer from take() once nothing reads it any more; others are ignored. */
  give(buf: Buffer): void {
    const slab = buf.buffer;
    if (slab instanceof ArrayBuffer && this.ours.has(slab) && this.idle.length < this.maxIdle && !this.idle.includes(slab)) {
      this.idle.push(slab);
    }
  }

  /** Slabs waiting for reuse (for tests). */
  get idleCount(): number {
    return this.idle.length;
  }
}
