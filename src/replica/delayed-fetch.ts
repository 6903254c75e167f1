// A fetch waiting for data (Kafka's DelayedFetch): it sits in the fetch purgatory, watched on its
// partitions, until appends there bring the bytes it is missing or its wait ends; either way it
// then completes, and the fetch reads again.
import { DelayedOperation } from './delayed/purgatory';

export class DelayedFetch extends DelayedOperation {
  /**
   * @param readableBytesSince the bytes that became readable on the watched partitions since the
   *   wait began; undefined once one of them is gone or replaced, or has news for a follower (a
   *   high watermark past the one it reported), which answers at once.
   */
  constructor(
    delayMs: number,
    private readonly missingBytes: number,
    private readonly readableBytesSince: () => number | undefined,
    private readonly done: () => void,
  ) {
    super(delayMs);
  }

  tryComplete(): boolean {
    const added = this.readableBytesSince();
    return added === undefined || added >= this.missingBytes ? this.forceComplete() : false;
  }

  onComplete(): void {
    this.done();
  }

  onExpiration(): void {}
}
