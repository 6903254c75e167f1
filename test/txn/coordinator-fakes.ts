// Fakes for the transaction coordinator's unit tests: an in-memory __transaction_state whose writes can
// be held back or fail and whose loads can be held, and a marker writer that records (and can refuse)
// markers.
import { expect } from 'chai';
import { coordinatorPartitionFor } from '../../src/cluster/coordinator-partition';
import { ErrorCode } from '../../src/common/errors';
import type { TxnMarkerRequest, TxnMarkerWriter } from '../../src/txn/coordinator';
import { TransactionState, type TopicPartition } from '../../src/txn/transaction-metadata';
import type { TransactionLogValue } from '../../src/txn/transaction-log-records';
import type { LoadedTransaction, TransactionStore } from '../../src/txn/transaction-state-log';

export class FakeStore implements TransactionStore {
  readonly numPartitions = 50;
  /** What is durable: the last value written per id. */
  readonly durable = new Map<string, TransactionLogValue>();
  readonly writes: Array<{ id: string; value: TransactionLogValue | null }> = [];
  /** While true, writes wait for release(). */
  hold = false;
  /** Writes answer this error (and change nothing durable). */
  failWith = 0;
  private held: (() => void)[] = [];

  write(partition: number, id: string, value: TransactionLogValue | null): Promise<number> {
    expect(partition).to.equal(coordinatorPartitionFor(id, this.numPartitions));
    this.writes.push({ id, value });
    const code = this.failWith;
    const apply = () => {
      if (code !== ErrorCode.NONE) return code;
      if (value) this.durable.set(id, structuredClone(value));
      else this.durable.delete(id);
      return code;
    };
    if (!this.hold) return Promise.resolve(apply());
    return new Promise((resolve) => this.held.push(() => resolve(apply())));
  }

  release(): void {
    this.hold = false;
    for (const r of this.held.splice(0)) r();
  }

  /** While set, partition loads wait for it. */
  loadGate: Promise<void> | undefined;

  async loadPartition(partition: number): Promise<LoadedTransaction[]> {
    await this.loadGate;
    return [...this.durable].filter(([id]) => coordinatorPartitionFor(id, this.numPartitions) === partition)
      .map(([transactionalId, value]) => ({ transactionalId, value: structuredClone(value) }));
  }

  states(id: string): TransactionState[] {
    return this.writes.filter((w) => w.id === id).map((w) => (w.value ? w.value.state : TransactionState.Dead));
  }
}

export class FakeMarkers implements TxnMarkerWriter {
  readonly written: TxnMarkerRequest[] = [];
  /** Partitions (topic:partition) whose next marker write fails. */
  readonly failOnce = new Set<string>();

  async write(m: TxnMarkerRequest): Promise<TopicPartition[]> {
    const failed = m.partitions.filter((tp) => this.failOnce.delete(`${tp.topic}:${tp.partition}`));
    const done = m.partitions.filter((tp) => !failed.includes(tp));
    if (done.length > 0) this.written.push({ ...m, partitions: done });
    return failed;
  }

  /** Every partition that got a marker, as "topic:partition commit|abort epoch". */
  summary(): string[] {
    return this.written.flatMap((m) => m.partitions.map((tp) => `${tp.topic}:${tp.partition} ${m.commit ? 'commit' : 'abort'} ${m.producerEpoch}`));
  }
}

/** Timers far beyond any test's length unless a test runs them itself. */
export const CONFIG = { maxTimeoutMs: 900_000, transactionalIdExpirationMs: 604_800_000, abortTimedOutIntervalMs: 3_600_000, removeExpiredIntervalMs: 3_600_000 };
